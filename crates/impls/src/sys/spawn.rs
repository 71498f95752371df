//! Starting the processes a workload owns, and waiting for them within a bound.

use crate::sys::cpu::CpuTime;
use crate::sys::guard::Guard;
use anyhow::anyhow;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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

/// Spawns `cmd` owned by `guard`, in its own process group, dying with us, and pinned to
/// `cpus` when given.
pub fn start(
    guard: &Guard,
    cmd: &mut Command,
    name: &str,
    cpus: Option<&[usize]>,
) -> anyhow::Result<i32> {
    let options = Options {
        own_group: true,
        cpus,
    };
    let child = spawn(guard, cmd, name, options)?;
    Ok(child.id() as i32)
}

/// How a process ended.
#[derive(Clone, Copy, Debug)]
pub struct Exit {
    /// Exit code, or None when killed by a signal.
    pub code: Option<i32>,
    /// CPU of the whole process, read from /proc while it was a zombie.
    pub cpu: CpuTime,
}

/// If `pid` (our child) has exited, its exit status and CPU time, read before it is
/// reaped (so the PID cannot be reused meanwhile); then the guard reaps and forgets it.
pub fn try_exit(guard: &Guard, pid: i32) -> Option<Exit> {
    // SAFETY: waitid on our own child with WNOWAIT only reads its state.
    let info = unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let r = libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        if r != 0 || info.si_pid() == 0 {
            return None;
        }
        info
    };
    let cpu = crate::sys::cpu::of_pid(pid).unwrap_or_default();
    // SAFETY: reading the fields waitid filled in.
    let (code, status) = unsafe { (info.si_code, info.si_status()) };
    guard.stop_process(pid);
    Some(Exit {
        code: (code == libc::CLD_EXITED).then_some(status),
        cpu,
    })
}

/// Runs a short helper (openssl, nginx -V, ...) owned by the guard, bounded in time.
/// Returns (exit code, stdout, stderr).
pub fn run_bounded(
    guard: &Guard,
    dir: &Path,
    argv: &[&str],
    env: &[(&str, &Path)],
    limit: Duration,
) -> anyhow::Result<(Option<i32>, String, String)> {
    let (code, out, err) = run_bounded_bytes(guard, dir, argv, env, None, limit)?;
    Ok((code, String::from_utf8_lossy(&out).into_owned(), err))
}

/// `run_bounded` with stdin from a file and stdout as bytes (a response body).
pub fn run_bounded_bytes(
    guard: &Guard,
    dir: &Path,
    argv: &[&str],
    env: &[(&str, &Path)],
    stdin: Option<&Path>,
    limit: Duration,
) -> anyhow::Result<(Option<i32>, Vec<u8>, String)> {
    let tag = format!(
        "{}-{}",
        Path::new(argv[0])
            .file_name()
            .and_then(|s| s.to_str())
            .unwrap_or("cmd"),
        NEXT_TAG.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let out_path = dir.join(format!("{tag}.out"));
    let err_path = dir.join(format!("{tag}.err"));
    let out = std::fs::File::create(&out_path)?;
    let err = std::fs::File::create(&err_path)?;
    let mut cmd = Command::new(argv[0]);
    let input = match stdin {
        Some(p) => {
            Stdio::from(std::fs::File::open(p).map_err(|e| anyhow!("{}: {e}", p.display()))?)
        }
        None => Stdio::null(),
    };
    cmd.args(&argv[1..]).stdin(input).stdout(out).stderr(err);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let pid = start(guard, &mut cmd, argv[0], None)?;
    let start = Instant::now();
    let exit = loop {
        if let Some(e) = try_exit(guard, pid) {
            break e;
        }
        if start.elapsed() > limit {
            guard.stop_process(pid);
            return Err(anyhow!(
                "{} did not finish within {} s",
                argv.join(" "),
                limit.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let read = |p: &PathBuf| {
        let s = std::fs::read(p).unwrap_or_default();
        let _ = std::fs::remove_file(p);
        s
    };
    let (out, err) = (read(&out_path), read(&err_path));
    Ok((exit.code, out, String::from_utf8_lossy(&err).into_owned()))
}

// usize, not u64: 32-bit MIPS has no 64-bit atomics.
static NEXT_TAG: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[cfg(test)]
mod tests {
    use super::*;

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
