//! `cryptobench disk --cleanup` (and `cryptobench cleanup` as root): what a crashed disk
//! run left behind, found by the run's PID in its names: dm-crypt mappings
//! "cbench-disk-<pid>-<n>", loop devices over /dev/shm/cbench-disk-<pid>-*, and the brd
//! module its marker says it loaded. A run that is still going is left alone.

use super::mapping::{brd_marker, run};
use crate::sys::guard::run_alive;
use crate::sys::guard::{Guard, PREFIX};
use std::path::Path;

/// The run PID in "cbench-disk-<pid>-..." (mappings, temp dirs, backing files).
fn owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(&format!("{PREFIX}-disk-"))?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    if digits.is_empty() || !rest[digits.len()..].starts_with('-') {
        return None;
    }
    digits.parse().ok()
}

/// Removes every leftover of a dead run and says what it did, one line each.
pub fn run_cleanup() -> Vec<String> {
    let mut report = Vec::new();
    let guard = Guard::new();
    let Ok(dir) = guard.temp_dir("disk-cleanup") else {
        return vec!["disk cleanup: cannot make a temp dir".into()];
    };
    let dead = |name: &str| owner(name).is_some_and(|pid| !run_alive(pid));
    // Mappings first: they hold the loop devices and the RAM disk.
    let maps = run(&guard, &dir, &["dmsetup", "ls"]).unwrap_or_default();
    for name in maps.lines().filter_map(|l| l.split_whitespace().next()) {
        if !dead(name) {
            continue;
        }
        match run(&guard, &dir, &["dmsetup", "remove", "--retry", name]) {
            Ok(_) => report.push(format!("removed dm-crypt mapping {name}")),
            Err(e) => report.push(format!("could not remove mapping {name}: {e}")),
        }
    }
    // Loop devices over a dead run's file ("/dev/loop0: [..]:.. (/dev/shm/cbench-disk-..)").
    let loops = run(&guard, &dir, &["losetup", "-a"]).unwrap_or_default();
    for line in loops.lines() {
        let Some((dev, rest)) = line.split_once(':') else {
            continue;
        };
        let ours = rest
            .split(['(', ')', ' '])
            .filter_map(|p| p.strip_prefix("/dev/shm/"))
            .any(|p| dead(p.split('/').next().unwrap_or("")));
        if ours {
            match run(&guard, &dir, &["losetup", "-d", dev]) {
                Ok(_) => report.push(format!("detached loop device {dev}")),
                Err(e) => report.push(format!("could not detach {dev}: {e}")),
            }
        }
    }
    // The files under those loop devices.
    if let Ok(entries) = std::fs::read_dir("/dev/shm") {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if dead(&name) && std::fs::remove_dir_all(e.path()).is_ok() {
                report.push(format!("removed /dev/shm/{name}"));
            }
        }
    }
    // brd, where a dead run's marker says it loaded it.
    if let Ok(entries) = std::fs::read_dir("/run") {
        let prefix = format!("{PREFIX}-disk-brd-");
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            let Some(pid) = name
                .strip_prefix(&prefix)
                .and_then(|p| p.parse::<u32>().ok())
            else {
                continue;
            };
            if run_alive(pid) {
                continue;
            }
            if Path::new("/sys/module/brd").exists() {
                match run(&guard, &dir, &["modprobe", "-r", "brd"]) {
                    Ok(_) => report.push(format!("unloaded brd (loaded by run {pid})")),
                    Err(e) => report.push(format!("could not unload brd: {e}")),
                }
            }
            let _ = std::fs::remove_file(brd_marker(pid));
        }
    }
    report.extend(crate::sys::guard::remove_orphan_temp_dirs());
    report
}

#[cfg(test)]
mod tests {
    #[test]
    fn owners_come_from_names() {
        assert_eq!(super::owner("cbench-disk-123-0"), Some(123));
        assert_eq!(super::owner("cbench-disk-x-0"), None);
        assert_eq!(super::owner("cbench-vpn-123-0"), None);
    }
}
