//! A point's measured window: what the generators and the server did in it, and what
//! their CPU time says about the point (which side limited it, whether others disturbed it).

use super::bench::Bench;
use super::load;
use crate::analyse::limit::{self, Limit, Seen};
use crate::profile::ProfileField;
use crate::record::window::{DISTURBED_PCT, SATURATED_PCT as GENERATOR_BOUND_PCT};
use crate::sys::cpu::CpuTime;

/// What the generators and the server did during the measured window.
pub(super) struct Window {
    pub(super) outcomes: Vec<load::Outcome>,
    pub(super) seconds: f64,
    pub(super) threads: u32,
    /// The server's name: "nginx", "haproxy".
    pub(super) server: &'static str,
    pub(super) server_cpu: CpuTime,
    pub(super) workers_seen: usize,
    /// Busy CPU seconds of the server and generator CPUs, and of the generator's alone.
    pub(super) busy: Option<f64>,
    pub(super) gen_busy: Option<f64>,
    pub(super) used_cpus: usize,
    /// Where the workers' CPU went, when this is the sampled rerun (--profile).
    pub(super) profile: Option<ProfileField>,
    /// A DUT's agent: its own CPU during the window, in percent of one core.
    pub(super) agent_cpu_pct: Option<f64>,
}

/// The CPU picture of a window: who used what, and what that means for the point.
pub(super) struct Cpu {
    pub(super) client: CpuTime,
    pub(super) client_pct: f64,
    pub(super) generator_bound: bool,
    pub(super) others_pct: f64,
    /// What held the point back, with its evidence (analyse/limit.rs).
    pub(super) limit: Limit,
    pub(super) notes: Vec<String>,
}

pub(super) fn cpu(b: &Bench, w: &Window) -> Cpu {
    let client = w.outcomes.iter().fold(CpuTime::default(), |a, o| CpuTime {
        user: a.user + o.cpu.user,
        sys: a.sys + o.cpu.sys,
    });
    let server = w.server_cpu.total();
    let window = w.seconds;
    let server_cpus = b.server_cpus.len().max(1) as f64;
    let usable_gen = w.threads.min(b.gen_cpus.len().max(1) as u32) as f64;
    let client_pct = client.total() / (window * usable_gen) * 100.0;
    let mut notes = Vec::new();
    // Near 100% of its cores; and, on a busy machine, whether it used nearly all that
    // other processes left on its CPUs.
    let others_on_gen = w.gen_busy.map_or(0.0, |x| (x - client.total()).max(0.0));
    let starved = b.pinned
        && client_pct < GENERATOR_BOUND_PCT
        && others_on_gen > 0.1 * window * usable_gen
        && client.total() >= GENERATOR_BOUND_PCT / 100.0 * (window * usable_gen - others_on_gen);
    let generator_bound = if b.pinned {
        client_pct >= GENERATOR_BOUND_PCT
    } else {
        // Sharing the CPUs: bound when the generator took nearly all the server left.
        client.total() >= 0.9 * (window * server_cpus - server)
    };
    if starved {
        notes.push(format!(
            "{} used nearly all the CPU that other processes left on its CPUs ({client_pct:.0}%)",
            b.generator.name(),
        ));
    }
    if generator_bound {
        notes.push(format!(
            "generator-bound: {} used {client_pct:.0}% of its CPU{}",
            b.generator.name(),
            if server / (window * server_cpus) * 100.0 >= GENERATOR_BOUND_PCT {
                " (the server was saturated too)"
            } else {
                ", so the server was not the limit"
            }
        ));
    }
    if !b.pinned {
        notes.push("server and generator shared one CPU".into());
    }
    let client_here = if b.remote { 0.0 } else { client.total() };
    let others_pct = w.busy.map_or(0.0, |busy| {
        ((busy - server - client_here).max(0.0) / (window * w.used_cpus.max(1) as f64) * 100.0)
            .clamp(0.0, 100.0)
    });
    let server_pct = server / (window * server_cpus) * 100.0;
    let limit = if starved {
        Limit {
            kind: "generator".into(),
            evidence: format!(
                "the load generator {} used {client_pct:.0}% of its CPUs, nearly all that other processes left it",
                b.generator.name()
            ),
        }
    } else {
        limit::limit(&Seen {
            server: Some((w.server.into(), server_pct)),
            generator: Some((b.generator.name().into(), client_pct)),
            busy_pct: w.busy.map_or(0.0, |busy| {
                busy / (window * w.used_cpus.max(1) as f64) * 100.0
            }),
            cpus: w.used_cpus,
            ..Seen::default()
        })
    };
    if b.remote {
        notes.push(format!(
            "limit: {} ({} used {server_pct:.0}% of the DUT's {} CPU(s), {} {client_pct:.0}% of the controller's {})",
            limit.kind,
            w.server,
            b.server_cpus.len(),
            b.generator.name(),
            b.gen_cpus.len()
        ));
    }
    if others_pct >= DISTURBED_PCT {
        notes.push(format!(
            "disturbed: other processes used {others_pct:.0}% of the server and generator CPUs"
        ));
    }
    Cpu {
        client,
        client_pct,
        generator_bound,
        others_pct,
        limit,
        notes,
    }
}

pub(super) fn sum_cpu(before: &[(i32, CpuTime)], after: &[(i32, CpuTime)]) -> CpuTime {
    let mut t = CpuTime::default();
    for (pid, a) in after {
        let b = before
            .iter()
            .find(|(p, _)| p == pid)
            .map(|(_, c)| *c)
            .unwrap_or_default();
        let d = a.minus(b);
        t.user += d.user;
        t.sys += d.sys;
    }
    t
}
