//! Starting the processes a workload owns.

use crate::sys::guard::Guard;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

/// How a child is started, beyond what `Command` says.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options<'a> {
    /// In its own process group: a terminal's Ctrl-C then reaches only cryptobench,
    /// which stops everything in order.
    pub own_group: bool,
    /// Pinned to these CPUs.
    pub cpus: Option<&'a [usize]>,
}

/// Spawns `cmd`, owned by `guard`, told to die (SIGTERM) with us if we are killed
/// outright (PR_SET_PDEATHSIG), so that even SIGKILL leaves nothing behind.
pub fn spawn(
    guard: &Guard,
    cmd: &mut Command,
    name: &str,
    options: Options,
) -> anyhow::Result<Child> {
    let set = options.cpus.map(|cpus| {
        // SAFETY: building a cpu_set_t in memory we own.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &c in cpus {
                libc::CPU_SET(c, &mut set);
            }
            set
        }
    });
    let own_group = options.own_group;
    // SAFETY: the closure runs between fork and exec and calls only async-signal-safe
    // system calls on the child itself.
    unsafe {
        cmd.pre_exec(move || {
            if own_group {
                libc::setpgid(0, 0);
            }
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGTERM as libc::c_ulong,
                0,
                0,
                0,
            );
            if let Some(set) = &set {
                if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    guard.spawn(cmd, name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_child_in_its_own_group_pinned_to_one_cpu() {
        let guard = Guard::new();
        // The first CPU we may run on, e.g. "0-1" or "2,5".
        let me = std::fs::read_to_string("/proc/self/status").unwrap();
        let list = me
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap();
        let cpu: usize = list
            .trim()
            .split([',', '-'])
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let mut cmd = Command::new("sleep");
        cmd.arg("30");
        let mut child = spawn(
            &guard,
            &mut cmd,
            "sleep",
            Options {
                own_group: true,
                cpus: Some(&[cpu]),
            },
        )
        .unwrap();
        let pid = child.id() as i32;
        // SAFETY: getpgid on our own child.
        assert_eq!(unsafe { libc::getpgid(pid) }, pid);
        // The affinity is set between fork and exec: wait for the exec.
        let start = Instant::now();
        let mut allowed = String::new();
        while start.elapsed() < Duration::from_secs(5) {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
            if status.contains("Name:\tsleep") {
                allowed = status
                    .lines()
                    .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                    .unwrap_or_default()
                    .trim()
                    .to_string();
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(allowed, cpu.to_string());
        guard.release();
        // The guard stopped and reaped it.
        assert!(crate::sys::procfs::stat(pid).is_none());
        let _ = child.wait();
    }
}
