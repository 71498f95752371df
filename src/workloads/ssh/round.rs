//! One transfer through a fresh SSH connection, and its CPU window.
//!
//! - The data phase is timed here, not in the client: up, from when the client first
//!   reads its stdin (it does once the session channel is open), a sparse in-memory file
//!   of the payload's size whose offset we watch (/proc/PID/fdinfo/0), to its exit (the
//!   server's `wc -c` has then counted every byte); down, from the first byte the
//!   server's `head -c` sends reaching us to the last. The bytes before that first moment
//!   are left out of the rate. A file, not a pipe we feed: on a busy machine a feeder
//!   that waits for a CPU would hold the client back, and `ssh < file` is what a user
//!   times.
//! - Each end's CPU covers the whole connection: the client's from its exit status, the
//!   server's from the listener's own and reaped children's times (every connection's
//!   processes are its descendants, each waited for by its parent).
//! - The busiest thread of each end, over the data phase, from samples of /proc every
//!   SAMPLE_EVERY (coarse for a data phase of a few ticks: the record says so).
//! - Every wait is bounded: no byte moved for STALL_S, or the transfer past --time, stops
//!   the client and excludes the point with the reason.

use super::server::{self, Keys, Programs, Server};
use crate::sys::guard::Guard;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A transfer that moves no byte for this long is stalled.
pub const STALL_S: u64 = 15;
/// /proc's CPU times move in ticks (10 ms): sampling faster buys nothing.
const SAMPLE_EVERY: Duration = Duration::from_millis(20);
/// How long the server may take to reap a finished connection's processes.
const REAP_LIMIT: Duration = Duration::from_secs(5);

/// What one transfer is.
pub struct Spec<'a> {
    pub server: &'a Server,
    pub progs: &'a Programs,
    pub keys: &'a Keys,
    pub client_ns: &'a str,
    pub cipher: &'a str,
    pub mac: Option<&'a str>,
    pub down: bool,
    pub bytes: u64,
    pub limit: Duration,
    /// --profile: each end sampled by perf over this transfer, under this label.
    pub sampling: Option<(&'a crate::profile::Sampler, &'a str)>,
}

/// Each end's profile of a sampled transfer.
#[derive(Clone, Debug)]
pub struct Profiles {
    pub server: crate::profile::ProfileField,
    pub client: crate::profile::ProfileField,
}

/// What one transfer measured.
#[derive(Clone, Debug)]
pub struct Round {
    pub bytes_per_s: f64,
    pub transfer_s: f64,
    pub connect_s: f64,
    /// ssh -v's own count of the session's seconds.
    pub client_session_s: Option<f64>,
    pub client_cpu_s: f64,
    pub server_cpu_s: f64,
    /// Each end's busiest thread over the data phase: name, percent of one core.
    pub client_busiest: (String, f64),
    pub server_busiest: (String, f64),
    /// cryptobench's own CPU (the data source or sink), percent of one core.
    pub own_pct: f64,
    pub busiest_softirq: Option<(usize, f64)>,
    /// Busy share of all CPUs, and other processes' share of them, over the round.
    pub busy_pct: f64,
    pub others_pct: f64,
    pub cpus: usize,
    /// The two kex lines, and whether the server's log gave them (else the client's).
    pub negotiated: Vec<String>,
    pub from_server_log: bool,
    /// With Spec::sampling: where each end's CPU went.
    pub profiles: Option<Box<Profiles>>,
}

pub enum Outcome {
    Done(Round),
    /// Measured, but not what was asked (another cipher or MAC negotiated).
    Refused(String),
    /// Could not be measured: stalled, too slow, failed.
    Failed(String),
    /// SIGINT or SIGTERM: the client was stopped.
    Stopped,
}

/// CPU seconds of a process with its reaped children.
fn tree_cpu_s(pid: i32) -> Option<f64> {
    let s = crate::sys::procfs::stat(pid)?;
    let ticks = s.utime + s.stime + s.cutime + s.cstime;
    Some(ticks as f64 / crate::sys::procfs::ticks_per_s())
}

/// Each thread of `pids`: (is the server's, name, CPU seconds).
type Sample = BTreeMap<i32, (bool, String, f64)>;

fn sample(server_pids: &[i32], client: i32) -> Sample {
    let mut out = Sample::new();
    let ends = server_pids.iter().map(|p| (true, *p)).chain([(false, client)]);
    for (is_server, pid) in ends {
        if let Some(snap) = crate::workloads::e2e::cpu::snap_process(pid) {
            for (tid, t) in snap.threads {
                out.insert(tid, (is_server, t.name.clone(), t.total()));
            }
        }
    }
    out
}

/// Every thread /proc showed for one end (`server`) over the transfer.
fn threads_of(samples: &[(f64, Sample)], server: bool) -> std::collections::BTreeSet<i32> {
    samples
        .iter()
        .flat_map(|(_, m)| m.iter().filter(|(_, v)| v.0 == server).map(|(t, _)| *t))
        .collect()
}

/// Each end's busiest thread over [from, to] (seconds since the client started): its CPU
/// between the last samples at or before each bound (from zero for a thread born later).
fn busiest(samples: &[(f64, Sample)], from: f64, to: f64, server: bool) -> (String, f64) {
    let mut best = (String::from("-"), 0.0);
    let at = |t: f64, tid: i32| {
        samples
            .iter()
            .rev()
            .filter(|(s, _)| *s <= t)
            .find_map(|(s, m)| m.get(&tid).map(|v| (*s, v.2)))
    };
    for tid in threads_of(samples, server) {
        let Some((t_end, cpu_end)) = at(to, tid) else {
            continue;
        };
        let (t_start, cpu_start) = at(from, tid).unwrap_or((from, 0.0));
        if t_end - t_start < SAMPLE_EVERY.as_secs_f64() {
            continue;
        }
        let pct = (cpu_end - cpu_start).max(0.0) / (t_end - t_start) * 100.0;
        if pct > best.1 {
            let name = samples
                .iter()
                .rev()
                .find_map(|(_, m)| m.get(&tid).map(|v| v.1.clone()))
                .unwrap_or_default();
            best = (name, pct);
        }
    }
    best
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

fn log_from(path: &Path, offset: u64) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    String::from_utf8_lossy(text.get(offset as usize..).unwrap_or_default()).into_owned()
}

/// One transfer, owned by `guard`.
pub fn run(guard: &Guard, s: &Spec) -> anyhow::Result<Outcome> {
    let srv = s.server;
    let log_start = std::fs::metadata(&srv.log).map_or(0, |m| m.len());
    let client_log = s.keys.dir.join("client.log");
    let client_out = s.keys.dir.join("client.out");
    let mut argv: Vec<String> = ["ip", "netns", "exec", s.client_ns]
        .map(String::from)
        .to_vec();
    argv.extend(srv.client_argv(s.progs, s.keys, "-v"));
    argv.extend(["-c".into(), s.cipher.to_string()]);
    if let Some(m) = s.mac {
        argv.extend(["-m".into(), m.to_string()]);
    }
    argv.push(format!("root@{}", srv.addr));
    argv.push(match s.down {
        true => format!("head -c {} /dev/zero", s.bytes),
        false => "wc -c".into(),
    });
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .stderr(Stdio::from(std::fs::File::create(&client_log)?));
    if s.down {
        cmd.stdin(Stdio::null()).stdout(Stdio::piped());
    } else {
        cmd.stdin(Stdio::from(payload(s.bytes)?))
            .stdout(Stdio::from(std::fs::File::create(&client_out)?));
    }
    let own0 = crate::sys::cpu::process_cpu();
    let sys0 = crate::workloads::e2e::cpu::snap_system(None);
    let soft0 = crate::workloads::e2e::cpu::softirq_ticks(None);
    let Some(srv_cpu0) = tree_cpu_s(srv.pid) else {
        anyhow::bail!("{} (pid {}) is gone", srv.kind.name(), srv.pid);
    };
    let t0 = Instant::now();
    let options = crate::sys::spawn::Options {
        own_group: true,
        cpus: None,
    };
    let mut child = crate::sys::spawn::spawn(guard, &mut cmd, "ssh", options)?;
    let pid = child.id() as i32;
    // Every CPU, from before the first payload byte: perf -p on the listener does not
    // follow the connection's processes, which it forks later. Each end's samples are
    // picked out afterwards by the threads /proc showed for it.
    let window = s.sampling.map(|(perf, _)| {
        perf.start(guard, &crate::profile::Target::SystemWide)
            .and_then(|mut w| w.enable().map(|_| w))
    });
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
        let (done, listener) = (done.clone(), srv.pid);
        std::thread::spawn(move || {
            let mut samples = Vec::new();
            while !done.load(Ordering::Relaxed) {
                let m = sample(&crate::sys::procfs::descendants(listener), pid);
                samples.push((t0.elapsed().as_secs_f64(), m));
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
        let why = if crate::measure::stopped() {
            Some(Outcome::Stopped)
        } else if seen_at.elapsed() > Duration::from_secs(STALL_S) {
            Some(Outcome::Failed(format!(
                "stalled: no byte moved for {STALL_S} s after {moved} of {} bytes; the client was stopped ({})",
                s.bytes,
                server::last_lines(&client_log, 1)
            )))
        } else if t0.elapsed() > s.limit {
            Some(Outcome::Failed(format!(
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
    // The connection's processes, reaped by the listener: its children's times are in.
    let reaped = Instant::now();
    while !crate::sys::procfs::descendants(srv.pid).is_empty() && reaped.elapsed() < REAP_LIMIT {
        std::thread::sleep(Duration::from_millis(5));
    }
    let srv_cpu1 = tree_cpu_s(srv.pid).unwrap_or(srv_cpu0);
    let sys1 = crate::workloads::e2e::cpu::snap_system(None);
    let soft1 = crate::workloads::e2e::cpu::softirq_ticks(None);
    let own = crate::sys::cpu::process_cpu().since(own0).total();
    let profiles = window.zip(s.sampling).map(|(w, (perf, label))| -> Box<Profiles> {
        let w = match w {
            Ok(w) => w,
            Err(why) => {
                let none = crate::profile::ProfileField::Unavailable {
                    unavailable: why.to_string(),
                };
                return Box::new(Profiles {
                    server: none.clone(),
                    client: none,
                });
            }
        };
        let parts = [true, false].map(|server| {
            let end = if server { "server" } else { "client" };
            (format!("{label} ({end})"), threads_of(&samples, server))
        });
        let mut fields = perf.finish_split(w, &parts).into_iter();
        let mut next = || {
            fields.next().unwrap_or(crate::profile::ProfileField::Unavailable {
                unavailable: "not profiled".into(),
            })
        };
        Box::new(Profiles {
            server: next(),
            client: next(),
        })
    });

    if exit.code != Some(0) {
        return Ok(Outcome::Failed(format!(
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
        return Ok(Outcome::Failed(format!(
            "{received} of {} bytes arrived",
            s.bytes
        )));
    }
    let (from_server_log, log) = match srv.kind {
        super::Kind::OpenSsh => (true, log_from(&srv.log, log_start)),
        super::Kind::Dropbear => (false, std::fs::read_to_string(&client_log)?),
    };
    let lines = server::kex_lines(&log);
    if let Err(why) = server::proves(&lines, s.cipher, s.mac) {
        return Ok(Outcome::Refused(format!(
            "{} log: {why}",
            if from_server_log { "the server's" } else { "the client's" }
        )));
    }
    let Some((t_first, moved_first)) = *progress.first.lock().unwrap_or_else(|e| e.into_inner())
    else {
        return Ok(Outcome::Failed("no payload byte was seen to move".into()));
    };
    let t_last = match s.down {
        true => progress
            .last
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .unwrap_or(t_exit),
        false => t_exit,
    };
    let transfer_s = t_last.duration_since(t_first).as_secs_f64();
    let counted = s.bytes.saturating_sub(moved_first);
    if transfer_s <= 0.0 || counted == 0 {
        return Ok(Outcome::Failed(format!(
            "the data phase was too short to time ({transfer_s:.4} s): give more --bytes"
        )));
    }
    let (from, to) = (
        t_first.duration_since(t0).as_secs_f64(),
        t_last.duration_since(t0).as_secs_f64(),
    );
    let wall = t_exit.duration_since(t0).as_secs_f64().max(1e-6);
    let (busy, total) = (sys1.busy - sys0.busy, (sys1.total - sys0.total).max(1e-9));
    let client_cpu_s = exit.cpu.total();
    let server_cpu_s = (srv_cpu1 - srv_cpu0).max(0.0);
    let others = (busy - client_cpu_s - server_cpu_s - own).max(0.0);
    Ok(Outcome::Done(Round {
        bytes_per_s: counted as f64 / transfer_s,
        transfer_s,
        connect_s: from,
        client_session_s: session_s(&std::fs::read_to_string(&client_log).unwrap_or_default()),
        client_cpu_s,
        server_cpu_s,
        client_busiest: busiest(&samples, from, to, false),
        server_busiest: busiest(&samples, from, to, true),
        own_pct: own / wall * 100.0,
        busiest_softirq: crate::workloads::e2e::cpu::busiest_softirq(&soft0, &soft1),
        busy_pct: (busy / total * 100.0).clamp(0.0, 100.0),
        others_pct: (others / total * 100.0).clamp(0.0, 100.0),
        cpus: crate::sys::cpu::machine_cpus(),
        negotiated: server::first_pair(&lines),
        from_server_log,
        profiles,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busiest_thread_over_the_data_phase() {
        let m = |v: &[(i32, bool, &str, f64)]| -> Sample {
            v.iter()
                .map(|(t, s, n, c)| (*t, (*s, n.to_string(), *c)))
                .collect()
        };
        let samples = vec![
            (0.0, m(&[(1, false, "ssh", 0.0)])),
            (0.5, m(&[(1, false, "ssh", 0.1), (2, true, "sshd", 0.05)])),
            (1.5, m(&[(1, false, "ssh", 0.6), (2, true, "sshd", 0.95)])),
        ];
        let (name, pct) = busiest(&samples, 0.5, 1.5, true);
        assert_eq!(name, "sshd");
        assert!((pct - 90.0).abs() < 1e-6, "{pct}");
        let (name, pct) = busiest(&samples, 0.5, 1.5, false);
        assert_eq!(name, "ssh");
        assert!((pct - 50.0).abs() < 1e-6, "{pct}");
        // A thread born after the start counts from zero at the start.
        let (_, pct) = busiest(&samples[1..], 0.2, 1.5, true);
        assert!((pct - 95.0 / 1.3).abs() < 1e-6, "{pct}");
    }

    #[test]
    fn the_clients_own_count() {
        let log = "debug1: x\nTransferred: sent 1074400536, received 323804 bytes, in 3.3 seconds\nBytes per second: sent 3.2\n";
        assert_eq!(session_s(log), Some(3.3));
        assert_eq!(session_s("debug1: x"), None);
    }

    #[test]
    fn a_process_and_its_reaped_children() {
        let me = std::process::id() as i32;
        assert!(tree_cpu_s(me).is_some());
        assert!(tree_cpu_s(-1).is_none());
    }
}
