//! `cryptobench vpn --cleanup`: finds what a crashed run left behind, by our name prefix,
//! and removes it. A run that is still going (its PID, which every name carries, is a
//! live cryptobench) is left alone.

use crate::sys::guard::{run_alive, PREFIX};
use crate::workloads::e2e::lab::{self, owner_of_long_name, run};
use std::fs;
use std::path::PathBuf;

/// The run PID in "cbench<pid><v|w|o|p><s|c>" (interface names, wireguard-go sockets).
pub fn owner_of_if_name(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(PREFIX)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let tail = &rest[digits.len()..];
    let mut t = tail.chars();
    match (t.next(), t.next(), t.next()) {
        (Some('v' | 'w' | 'o' | 'p'), Some('s' | 'c'), None) if !digits.is_empty() => {
            digits.parse().ok()
        }
        _ => None,
    }
}

/// Does one argument of a command line name something of a dead run?
fn references_dead_run(arg: &str) -> bool {
    let long = arg.find(&format!("{PREFIX}-vpn-")).and_then(|i| {
        owner_of_long_name(
            arg[i..]
                .split(|c: char| c == '/' || c.is_whitespace())
                .next()
                .unwrap_or(""),
        )
    });
    let short = arg
        .rsplit('/')
        .next()
        .map(|a| a.trim_end_matches(".sock"))
        .and_then(owner_of_if_name);
    long.or(short).is_some_and(|pid| !run_alive(pid))
}

/// The programs a run starts: only these are stopped for naming a dead run on their
/// command line (anything inside a dead run's namespace is stopped whatever its name).
const DAEMONS: &[&str] = &["openvpn", "wireguard-go", "iperf3", "ip", "wg"];

/// Removes every leftover and says what it did, one line each.
pub fn run_cleanup() -> Vec<String> {
    let mut report = Vec::new();
    let mut kept = Vec::new();

    // The lab's namespaces, with whatever still runs in them.
    lab::remove_orphans(&mut report, &mut kept);

    // Daemons elsewhere whose command line names a dead run (e.g. wireguard-go cbench123ws).
    if let Ok(dir) = fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            if pid as u32 == std::process::id() {
                continue;
            }
            let Ok(raw) = fs::read(format!("/proc/{pid}/cmdline")) else {
                continue;
            };
            let args: Vec<String> = raw
                .split(|b| *b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            let c = lab::comm(pid);
            if DAEMONS.contains(&c.as_str()) && args.iter().any(|a| references_dead_run(a)) {
                crate::sys::guard::stop_pid(pid);
                report.push(format!(
                    "stopped process {pid} ({c}): {}",
                    args.join(" ").trim()
                ));
            }
        }
    }

    // Links in the root namespace (ours are made inside our namespaces, but be thorough).
    let links = run(&["ip", "-j", "link", "show"]).unwrap_or_default();
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&links) {
        for l in v.as_array().into_iter().flatten() {
            let Some(name) = l["ifname"].as_str() else {
                continue;
            };
            match owner_of_if_name(name) {
                Some(owner) if run_alive(owner) => {
                    kept.push(format!("link {name} (run {owner} is still going)"))
                }
                Some(_) => match run(&["ip", "link", "del", name]) {
                    Ok(_) => report.push(format!("removed link {name}")),
                    Err(e) => report.push(format!("could not remove link {name}: {e}")),
                },
                None => {}
            }
        }
    }

    // wireguard-go sockets.
    let mut files: Vec<PathBuf> = Vec::new();
    if let Ok(dir) = fs::read_dir("/var/run/wireguard") {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if let Some(owner) = owner_of_if_name(name.trim_end_matches(".sock")) {
                if run_alive(owner) {
                    kept.push(format!("socket {name} (run {owner} is still going)"));
                } else {
                    files.push(e.path());
                }
            }
        }
    }
    for p in files {
        let res = if p.is_dir() {
            fs::remove_dir_all(&p)
        } else {
            fs::remove_file(&p)
        };
        match res {
            Ok(()) => report.push(format!("removed {}", p.display())),
            Err(e) => report.push(format!("could not remove {}: {e}", p.display())),
        }
    }

    // Temp dirs: the one rule every workload's leftovers go by.
    report.extend(crate::sys::guard::remove_orphan_temp_dirs());
    if report.is_empty() {
        report.push("no leftovers of cryptobench vpn found".into());
    }
    for k in kept {
        report.push(format!("left alone: {k}"));
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_from_names() {
        assert_eq!(owner_of_long_name("cbench-vpn-1234-srv"), Some(1234));
        assert_eq!(owner_of_long_name("cbench-vpn-77-0"), Some(77));
        assert_eq!(owner_of_long_name("cbench-tls-1234-0"), None);
        assert_eq!(owner_of_long_name("cbench-vpn-x-0"), None);
        assert_eq!(owner_of_if_name("cbench1234ws"), Some(1234));
        assert_eq!(owner_of_if_name("cbench1234vc"), Some(1234));
        assert_eq!(owner_of_if_name("cbench1234"), None);
        assert_eq!(owner_of_if_name("cbench1234wsx"), None);
        assert_eq!(owner_of_if_name("eth0"), None);
    }

    #[test]
    fn command_lines_of_dead_runs() {
        // PID 0 is never a running cryptobench.
        assert!(references_dead_run("cbench0ws"));
        assert!(references_dead_run("/tmp/cbench-vpn-0-0/ca.crt"));
        assert!(references_dead_run("/var/run/wireguard/cbench0wc.sock"));
        assert!(!references_dead_run("--dev"));
        let me = std::process::id();
        assert!(!references_dead_run(&format!("cbench{me}os")));
    }
}
