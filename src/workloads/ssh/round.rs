//! One transfer through a fresh SSH connection, and its CPU window: the client's side is
//! client.rs's (here, or on the controller for a DUT), the server's is here.
//!
//! - Each end's CPU covers the whole connection: the client's from its exit status, the
//!   server's from the listener's own and reaped children's times (every connection's
//!   processes are its descendants, each waited for by its parent).
//! - The busiest thread of each end, over the data phase, from samples of /proc every
//!   SAMPLE_EVERY (coarse for a data phase of a few ticks: the record says so). The
//!   server's samples are lined up with the client's data phase by the client side's
//!   length, counted back from its end (off by the answer's way back on a DUT).
//! - The negotiation is proven from the server's log (sshd), else the client's (Dropbear
//!   does not log it).

use super::client::{self, End};
use super::threads::{busiest, sample, threads_of, SAMPLE_EVERY};
use super::server::{self, Keys, Programs, Server};
use crate::sys::guard::Guard;
use crate::workloads::e2e::window::{CpuWindow, Watched};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the server may take to reap a finished connection's processes.
const REAP_LIMIT: Duration = Duration::from_secs(5);

/// Where the client runs.
#[derive(Clone, Copy)]
pub enum Client<'a> {
    /// In the lab's client namespace, with the run's key.
    Here {
        progs: &'a Programs,
        keys: &'a Keys,
        ns: &'a str,
    },
    /// On the controller, asked by this DUT's agent.
    Controller,
}

/// What one transfer is.
pub struct Spec<'a> {
    pub server: &'a Server,
    pub client: Client<'a>,
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
    /// cryptobench's own CPU where the client runs (the data source or sink), percent of
    /// one core.
    pub own_pct: f64,
    /// A DUT's agent: its own CPU over the round, percent of one core.
    pub agent_pct: Option<f64>,
    pub busiest_softirq: Option<(usize, f64)>,
    /// Busy share of all CPUs, and other processes' share of them, over the round: the
    /// server's machine's.
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
    Done(Box<Round>),
    /// Measured, but not what was asked (another cipher or MAC negotiated).
    Refused(String),
    /// Could not be measured: stalled, too slow, failed.
    Failed(String),
    /// SIGINT or SIGTERM: the client was stopped.
    Stopped,
}

fn log_from(path: &Path, offset: u64) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    String::from_utf8_lossy(text.get(offset as usize..).unwrap_or_default()).into_owned()
}

/// The client's side of one transfer, where `s.client` runs; `started` once it runs.
fn client_side(guard: &Guard, s: &Spec, started: impl FnOnce()) -> anyhow::Result<End> {
    let srv = s.server;
    match s.client {
        Client::Here { progs, keys, ns } => {
            let mut argv: Vec<String> = ["ip", "netns", "exec", ns].map(String::from).to_vec();
            let base = srv.client_argv(progs, keys, "-v");
            argv.extend(client::transfer_argv(base, s.cipher, s.mac, &srv.addr, s.down, s.bytes));
            let spec = client::Spec {
                argv,
                dir: &keys.dir,
                down: s.down,
                bytes: s.bytes,
                limit: s.limit,
                abandoned: None,
            };
            client::run(guard, &spec, started)
        }
        Client::Controller => {
            super::remote::transfer(srv, s.cipher, s.mac, s.down, s.bytes, s.limit)
        }
    }
}

/// One transfer, owned by `guard`.
pub fn run(guard: &Guard, s: &Spec) -> anyhow::Result<Outcome> {
    let srv = s.server;
    let log_start = std::fs::metadata(&srv.log).map_or(0, |m| m.len());
    // The listener with the connection processes it forks and reaps, and every CPU.
    let cpu_window = CpuWindow::start(Watched {
        trees: vec![("server".into(), srv.pid)],
        ..Watched::default()
    });
    if crate::sys::procfs::stat(srv.pid).is_none() {
        anyhow::bail!("{} (pid {}) is gone", srv.kind.name(), srv.pid);
    }
    let t0 = Instant::now();
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (done, listener) = (done.clone(), srv.pid);
        std::thread::spawn(move || {
            let mut samples = Vec::new();
            while !done.load(Ordering::Relaxed) {
                let m = sample(&crate::sys::procfs::descendants(listener), true);
                samples.push((t0.elapsed().as_secs_f64(), m));
                std::thread::sleep(SAMPLE_EVERY);
            }
            samples
        })
    };
    // Every CPU, from before the first payload byte: perf -p on the listener does not
    // follow the connection's processes, which it forks later. Each end's samples are
    // picked out afterwards by the threads /proc showed for it.
    let mut window = None;
    let end = client_side(guard, s, || {
        window = s.sampling.map(|(perf, _)| {
            perf.start(guard, &crate::profile::Target::SystemWide)
                .and_then(|mut w| w.enable().map(|_| w))
        });
    });
    let ended_at = t0.elapsed().as_secs_f64();
    done.store(true, Ordering::Relaxed);
    let samples = sampler.join().unwrap_or_default();
    let side = match end? {
        End::Done(side) => side,
        End::Failed(why) => return Ok(Outcome::Failed(why)),
        End::Stopped => return Ok(Outcome::Stopped),
    };
    // The connection's processes, reaped by the listener: its children's times are in.
    let reaped = Instant::now();
    while !crate::sys::procfs::descendants(srv.pid).is_empty() && reaped.elapsed() < REAP_LIMIT {
        std::thread::sleep(Duration::from_millis(5));
    }
    let seen = cpu_window.finish(None);
    let own = seen.own_s;
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
        let parts = [
            (format!("{label} (server)"), threads_of(&samples, true)),
            (format!("{label} (client)"), side.tids.clone()),
        ];
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
    let (from_server_log, lines) = match srv.kind {
        super::args::Kind::OpenSsh => (true, server::kex_lines(&log_from(&srv.log, log_start))),
        super::args::Kind::Dropbear => (false, side.kex.clone()),
    };
    if let Err(why) = server::proves(&lines, s.cipher, s.mac) {
        return Ok(Outcome::Refused(format!(
            "{} log: {why}",
            if from_server_log { "the server's" } else { "the client's" }
        )));
    }
    let transfer_s = side.to_s - side.from_s;
    if transfer_s <= 0.0 || side.counted == 0 {
        return Ok(Outcome::Failed(format!(
            "the data phase was too short to time ({transfer_s:.4} s): give more --bytes"
        )));
    }
    // The client's data phase on the server's samples' clock.
    let shift = (ended_at - side.total_s).max(0.0);
    let wall = side.exit_s.max(1e-6);
    let (busy, total) = (seen.busy_s, seen.total_s.max(1e-9));
    let server_cpu_s = seen.cpu_of(Some("server")).total();
    let here = matches!(s.client, Client::Here { .. });
    // This machine's CPU: the client's too when it runs here.
    let client_here = if here { side.cpu_s } else { 0.0 };
    Ok(Outcome::Done(Box::new(Round {
        bytes_per_s: side.counted as f64 / transfer_s,
        transfer_s,
        connect_s: side.from_s,
        client_session_s: side.session_s,
        client_cpu_s: side.cpu_s,
        server_cpu_s,
        client_busiest: side.busiest.clone(),
        server_busiest: busiest(&samples, side.from_s + shift, side.to_s + shift, true),
        own_pct: if here { own } else { side.own_cpu_s } / wall * 100.0,
        agent_pct: (!here).then(|| own / ended_at.max(1e-6) * 100.0),
        busiest_softirq: seen.softirq_busiest,
        busy_pct: (busy / total * 100.0).clamp(0.0, 100.0),
        others_pct: seen.others_pct(client_here + server_cpu_s + own),
        cpus: crate::sys::cpu::machine_cpus(),
        negotiated: server::first_pair(&lines),
        from_server_log,
        profiles,
    })))
}
