//! The client's end of one transfer, where the client runs: here (the lab's client
//! namespace), or on the controller for a DUT's agent (`remote.rs`).
//!
//! - The data phase is timed here, not in the client: up, from when the client first
//!   reads its stdin (it does once the session channel is open), a sparse in-memory file
//!   of the payload's size whose offset we watch (/proc/PID/fdinfo/0), to its exit (the
//!   server's `wc -c` has then counted every byte); down, from the first byte the
//!   server's `head -c` sends reaching us to the last. The bytes before that first moment
//!   are left out of the rate. A file, not a pipe we feed: on a busy machine a feeder
//!   that waits for a CPU would hold the client back, and `ssh < file` is what a user
//!   times.
//! - The client's CPU from its exit status; its busiest thread over the data phase from
//!   samples of /proc (round.rs's).
//! - Every wait is bounded: no byte moved for STALL_S, or the transfer past --time, stops
//!   the client with the reason.

use super::threads::{busiest, sample, threads_of, SAMPLE_EVERY};
use super::server;
use crate::sys::guard::Guard;
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A transfer that moves no byte for this long is stalled.
pub const STALL_S: u64 = 15;

/// One transfer as the client's side sees it.
pub struct Spec<'a> {
    /// The whole command line: `[ip netns exec NS] ssh ... root@ADDR COMMAND`.
    pub argv: Vec<String>,
    /// Where the client's log and output go.
    pub dir: &'a Path,
    pub down: bool,
    pub bytes: u64,
    pub limit: Duration,
    /// Set when the client is no longer wanted (the controller closing): stopped as on
    /// SIGINT.
    pub abandoned: Option<&'a AtomicBool>,
}

/// `argv` completed for one transfer: the cipher, the MAC, the server and its command.
pub fn transfer_argv(
    mut argv: Vec<String>,
    cipher: &str,
    mac: Option<&str>,
    addr: &str,
    down: bool,
    bytes: u64,
) -> Vec<String> {
    argv.extend(["-c".into(), cipher.to_string()]);
    if let Some(m) = mac {
        argv.extend(["-m".into(), m.to_string()]);
    }
    argv.push(format!("root@{addr}"));
    argv.push(match down {
        true => format!("head -c {bytes} /dev/zero"),
        false => "wc -c".into(),
    });
    argv
}

/// The client's side of a finished transfer; times in seconds since the client started.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Side {
    /// From the client's start to the end of this side's work (the server's side lines
    /// its own samples up with this).
    pub total_s: f64,
    /// The data phase.
    pub from_s: f64,
    pub to_s: f64,
    pub exit_s: f64,
    /// Bytes counted in the data phase.
    pub counted: u64,
    pub cpu_s: f64,
    pub busiest: (String, f64),
    /// This cryptobench's own CPU seconds over the transfer (the data's sink or source,
    /// its samplers).
    pub own_cpu_s: f64,
    /// ssh -v's own count of the session's seconds.
    pub session_s: Option<f64>,
    /// The kex lines of the client's log (`ssh -v`).
    pub kex: Vec<String>,
    /// The client's threads /proc showed (for --profile's split).
    #[serde(skip)]
    pub tids: std::collections::BTreeSet<i32>,
}

/// How the client's side ended.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum End {
    Done(Box<Side>),
    /// Could not be measured: stalled, too slow, failed.
    Failed(String),
    /// SIGINT or SIGTERM: the client was stopped.
    Stopped,
}

/// The data moved so far and when it started to move.
#[derive(Default)]
struct Progress {
    /// A lock, not an AtomicU64: 32-bit MIPS, a router's CPU, has no 64-bit atomics.
    moved: Mutex<u64>,
    /// (when, bytes moved by then) at the data phase's start, and its end (down).
    first: Mutex<Option<(Instant, u64)>>,
    last: Mutex<Option<Instant>>,
}

impl Progress {
    fn moved(&self) -> u64 {
        *self.moved.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts `n` more bytes; the total after them.
    fn add(&self, n: u64) -> u64 {
        let mut moved = self.moved.lock().unwrap_or_else(|e| e.into_inner());
        *moved += n;
        *moved
    }
}

/// The payload to send up: a sparse in-memory file of `bytes` (holes read as zeros,
/// nothing written anywhere), gone with its last descriptor.
fn payload(bytes: u64) -> anyhow::Result<std::fs::File> {
    use std::os::fd::FromRawFd;
    // SAFETY: memfd_create with a valid C string; the descriptor is ours from here on.
    let fd = unsafe { libc::memfd_create(c"cbench-ssh-payload".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        anyhow::bail!("memfd_create: {}", std::io::Error::last_os_error());
    }
    // SAFETY: a new descriptor no one else owns.
    let f = unsafe { std::fs::File::from_raw_fd(fd) };
    f.set_len(bytes)?;
    Ok(f)
}

/// How far a process has read its stdin (the offset of its fd 0), where it is a file.
fn stdin_offset(pid: i32) -> Option<u64> {
    let info = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/0")).ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix("pos:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Reads the client's stdout to its end, counting: the first read is the start.
fn drain(mut from: std::process::ChildStdout, p: &Progress) {
    use std::os::fd::AsRawFd;
    // A pipe of 1 MiB (Linux's default most), so that the client seldom waits on us.
    // SAFETY: F_SETPIPE_SZ on a pipe we own; on failure the default size stays.
    unsafe { libc::fcntl(from.as_raw_fd(), libc::F_SETPIPE_SZ, 1 << 20) };
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let moved = p.add(n as u64);
                let mut first = p.first.lock().unwrap_or_else(|e| e.into_inner());
                if first.is_none() {
                    *first = Some((Instant::now(), moved));
                }
            }
        }
    }
    *p.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
}

/// "Transferred: sent N, received M bytes, in X seconds" (ssh -v at its end): X.
fn session_s(client_log: &str) -> Option<f64> {
    let line = client_log.lines().rfind(|l| l.starts_with("Transferred: "))?;
    let (_, rest) = line.split_once(" in ")?;
    rest.strip_suffix(" seconds")?.trim().parse().ok()
}

/// One transfer's client, owned by `guard`; `started` is called once it runs (the
/// caller's perf window).
pub fn run(guard: &Guard, s: &Spec, started: impl FnOnce()) -> anyhow::Result<End> {
    let client_log = s.dir.join("client.log");
    let client_out = s.dir.join("client.out");
    let mut cmd = Command::new(&s.argv[0]);
    cmd.args(&s.argv[1..])
        .stderr(Stdio::from(std::fs::File::create(&client_log)?));
    if s.down {
        cmd.stdin(Stdio::null()).stdout(Stdio::piped());
    } else {
        cmd.stdin(Stdio::from(payload(s.bytes)?))
            .stdout(Stdio::from(std::fs::File::create(&client_out)?));
    }
    let own0 = crate::sys::cpu::process_cpu();
    let t0 = Instant::now();
    let options = crate::sys::spawn::Options {
        own_group: true,
        cpus: None,
    };
    let mut child = crate::sys::spawn::spawn(guard, &mut cmd, "ssh", options)?;
    let pid = child.id() as i32;
    started();
    let progress = Arc::new(Progress::default());
    // The payload file is the child's alone now: its offset is the client's progress.
    drop(cmd);
    let io = {
        let p = progress.clone();
        let stdout = child.stdout.take();
        std::thread::spawn(move || {
            if let Some(o) = stdout {
                drain(o, &p)
            }
        })
    };
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut samples = Vec::new();
            while !done.load(Ordering::Relaxed) {
                samples.push((t0.elapsed().as_secs_f64(), sample(&[pid], false)));
                std::thread::sleep(SAMPLE_EVERY);
            }
            samples
        })
    };
    // The client's end, bounded by progress and by --time.
    let (mut seen, mut seen_at) = (0u64, Instant::now());
    let stop = loop {
        if let Some(exit) = crate::sys::spawn::try_exit(guard, pid) {
            break Ok(exit);
        }
        if !s.down {
            // Up: the client's reading of its stdin file.
            if let Some(pos) = stdin_offset(pid).filter(|p| *p > 0) {
                *progress.moved.lock().unwrap_or_else(|e| e.into_inner()) = pos;
                let mut first = progress.first.lock().unwrap_or_else(|e| e.into_inner());
                if first.is_none() {
                    *first = Some((Instant::now(), pos));
                }
            }
        }
        let moved = progress.moved();
        if moved != seen {
            (seen, seen_at) = (moved, Instant::now());
        }
        let abandoned = s.abandoned.is_some_and(|a| a.load(Ordering::Relaxed));
        let why = if crate::measure::stopped() || abandoned {
            Some(End::Stopped)
        } else if seen_at.elapsed() > Duration::from_secs(STALL_S) {
            Some(End::Failed(format!(
                "stalled: no byte moved for {STALL_S} s after {moved} of {} bytes; the client was stopped ({})",
                s.bytes,
                server::last_lines(&client_log, 1)
            )))
        } else if t0.elapsed() > s.limit {
            Some(End::Failed(format!(
                "the transfer did not finish within --time {} s ({moved} of {} bytes moved); the client was stopped",
                s.limit.as_secs_f64(),
                s.bytes
            )))
        } else {
            None
        };
        if let Some(w) = why {
            break Err(w);
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let t_exit = Instant::now();
    let exit = match stop {
        Ok(exit) => exit,
        Err(why) => {
            guard.stop_process(pid);
            let _ = child.wait();
            done.store(true, Ordering::Relaxed);
            let _ = io.join();
            let _ = sampler.join();
            return Ok(why);
        }
    };
    let _ = io.join();
    done.store(true, Ordering::Relaxed);
    let samples = sampler.join().unwrap_or_default();
    let own_cpu_s = crate::sys::cpu::process_cpu().since(own0).total();
    if exit.code != Some(0) {
        return Ok(End::Failed(format!(
            "ssh exited with {}: {}",
            exit.code
                .map_or("a signal".to_string(), |c| format!("code {c}")),
            server::last_lines(&client_log, 2)
        )));
    }
    let moved = progress.moved();
    let received = match s.down {
        true => moved,
        false => std::fs::read_to_string(&client_out)
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
            .unwrap_or(0),
    };
    if received != s.bytes {
        return Ok(End::Failed(format!(
            "{received} of {} bytes arrived",
            s.bytes
        )));
    }
    let Some((t_first, moved_first)) = *progress.first.lock().unwrap_or_else(|e| e.into_inner())
    else {
        return Ok(End::Failed("no payload byte was seen to move".into()));
    };
    let t_last = match s.down {
        true => progress
            .last
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .unwrap_or(t_exit),
        false => t_exit,
    };
    let (from_s, to_s) = (
        t_first.duration_since(t0).as_secs_f64(),
        t_last.duration_since(t0).as_secs_f64(),
    );
    let log = std::fs::read_to_string(&client_log).unwrap_or_default();
    Ok(End::Done(Box::new(Side {
        from_s,
        to_s,
        exit_s: t_exit.duration_since(t0).as_secs_f64(),
        counted: s.bytes.saturating_sub(moved_first),
        cpu_s: exit.cpu.total(),
        busiest: busiest(&samples, from_s, to_s, false),
        own_cpu_s,
        session_s: session_s(&log),
        kex: server::kex_lines(&log),
        tids: threads_of(&samples, false),
        total_s: t0.elapsed().as_secs_f64(),
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clients_own_count() {
        let log = "debug1: x\nTransferred: sent 1074400536, received 323804 bytes, in 3.3 seconds\nBytes per second: sent 3.2\n";
        assert_eq!(session_s(log), Some(3.3));
        assert_eq!(session_s("debug1: x"), None);
    }

    #[test]
    fn a_transfers_command_line() {
        let a = transfer_argv(vec!["ssh".into()], "aes128-ctr", Some("hmac-sha2-256"), "10.0.0.1", true, 5);
        assert_eq!(
            a,
            ["ssh", "-c", "aes128-ctr", "-m", "hmac-sha2-256", "root@10.0.0.1", "head -c 5 /dev/zero"]
        );
    }
}
