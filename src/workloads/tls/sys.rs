//! What `tls` needs from the operating system: /proc readings of processes it started,
//! CPU sets, pinned spawning through the guard, bounded waits and free loopback ports.

use crate::sys::cpu::CpuTime;
use crate::sys::guard::Guard;
use anyhow::anyhow;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub use crate::sys::cpu::{cpus_busy_s, of_pid as cpu};
pub use crate::sys::procfs::stat;
pub use crate::sys::program::find_program;

/// Direct children of `pid` (by scanning /proc), with their start times.
pub fn children(pid: i32) -> Vec<(i32, u64)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if let Some(s) = stat(p) {
            if s.ppid == pid {
                out.push((p, s.starttime));
            }
        }
    }
    out.sort_unstable();
    out
}

/// Whether the process `pid` that started at `starttime` still exists (and is not a zombie).
pub fn alive_since(pid: i32, starttime: u64) -> bool {
    matches!(stat(pid), Some(s) if s.starttime == starttime && s.state != 'Z' && s.state != 'X')
}

/// The CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity writes into the zeroed set we own.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            let n = std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1);
            return (0..n).collect();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Server and generator CPUs: disjoint halves when there are at least two (the server
/// gets the larger half), otherwise both share all of them.
pub fn split_cpus(cpus: &[usize]) -> (Vec<usize>, Vec<usize>, bool) {
    if cpus.len() < 2 {
        return (cpus.to_vec(), cpus.to_vec(), false);
    }
    let k = cpus.len().div_ceil(2);
    (cpus[..k].to_vec(), cpus[k..].to_vec(), true)
}

/// "0-3,6" style list for display.
pub fn cpu_list(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}-{}", cpus[i], cpus[j])
        } else {
            cpus[i].to_string()
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Spawns `cmd` owned by `guard`, in its own process group, dying with us, and pinned to
/// `cpus` when given.
pub fn spawn(
    guard: &Guard,
    cmd: &mut Command,
    name: &str,
    cpus: Option<&[usize]>,
) -> anyhow::Result<i32> {
    let options = crate::sys::spawn::Options {
        own_group: true,
        cpus,
    };
    let child = crate::sys::spawn::spawn(guard, cmd, name, options)?;
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
    let cpu = cpu(pid).unwrap_or_default();
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
    let pid = spawn(guard, &mut cmd, argv[0], None)?;
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

/// An address as a URL or nginx `listen` takes it: an IPv6 one in brackets.
pub fn url_host(addr: &str) -> String {
    if addr.contains(':') {
        format!("[{addr}]")
    } else {
        addr.to_string()
    }
}

/// `n` distinct free TCP ports on 127.0.0.1 (held together while chosen, then released
/// for nginx to bind).
pub fn free_ports(n: usize) -> anyhow::Result<Vec<u16>> {
    let listeners: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
        .collect::<Result<_, _>>()
        .map_err(|e| anyhow!("cannot find a free port on 127.0.0.1: {e}"))?;
    listeners
        .iter()
        .map(|l| {
            l.local_addr()
                .map(|a| a.port())
                .map_err(|e| anyhow!("cannot find a free port on 127.0.0.1: {e}"))
        })
        .collect()
}

/// Raises the soft open-file limit towards `want` (children inherit it). Returns the
/// soft limit now in force.
pub fn raise_nofile(want: u64) -> u64 {
    // SAFETY: getrlimit/setrlimit on our own process with a struct we own.
    unsafe {
        let mut rl: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) != 0 {
            return 1024;
        }
        // rlim_t is 32 bits on 32-bit ARM (the cast is needed there only).
        #[allow(clippy::unnecessary_cast)]
        let want = want.min(libc::rlim_t::MAX as u64) as libc::rlim_t;
        if rl.rlim_cur < want {
            let new = libc::rlimit {
                rlim_cur: want.min(rl.rlim_max),
                rlim_max: rl.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &new) == 0 {
                return new.rlim_cur as u64;
            }
        }
        rl.rlim_cur as u64
    }
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_own_stat_reads() {
        let me = std::process::id() as i32;
        let s = stat(me).unwrap();
        assert!(alive_since(me, s.starttime));
        assert!(!alive_since(me, s.starttime + 1));
    }

    #[test]
    fn busy_time_of_our_cpus_reads() {
        let cpus = allowed_cpus();
        assert!(!cpus.is_empty());
        assert!(cpus_busy_s(&cpus).unwrap() > 0.0);
    }

    #[test]
    fn cpus_split_into_disjoint_halves() {
        assert_eq!(split_cpus(&[0]), (vec![0], vec![0], false));
        assert_eq!(split_cpus(&[0, 1]), (vec![0], vec![1], true));
        assert_eq!(split_cpus(&[0, 1, 2]), (vec![0, 1], vec![2], true));
        assert_eq!(cpu_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
    }
}
