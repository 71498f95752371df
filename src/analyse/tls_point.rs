//! What a tls point's CPU window says about it: which side limited it (the server, the
//! load generator, or neither), and whether other processes disturbed it.

use super::limit::{self, Limit, Seen};
use crate::record::window::{disturbed, SATURATED_PCT as GENERATOR_BOUND_PCT};
use crate::sys::cpu::CpuTime;

/// The figures of one point's window.
pub struct Window<'a> {
    /// The server's name ("nginx", "haproxy") and the generator's ("wrk", "h2load").
    pub server: &'a str,
    pub generator: &'a str,
    /// The server and the generator each on CPUs of its own; the generator on a
    /// controller (`tls --dut`).
    pub pinned: bool,
    pub remote: bool,
    pub server_cpus: usize,
    pub gen_cpus: usize,
    /// The generator's threads, its CPU time, and the server workers'.
    pub threads: u32,
    pub client: CpuTime,
    pub server_cpu: f64,
    pub seconds: f64,
    /// The server and generator CPUs (this host's of them with `tls --dut`): how many,
    /// their busy share, and other processes' share (e2e's window).
    pub used_cpus: usize,
    pub busy_pct: f64,
    pub others_pct: f64,
    /// Busy CPU seconds of the generator's CPUs.
    pub gen_busy: Option<f64>,
}

/// The CPU picture of a window: the generator's share, and what it means for the point.
pub struct Cpu {
    pub client_pct: f64,
    pub generator_bound: bool,
    pub others_pct: f64,
    /// What held the point back, with its evidence (analyse/limit.rs).
    pub limit: Limit,
    pub notes: Vec<String>,
}

pub fn cpu(w: &Window) -> Cpu {
    let client = w.client;
    let server = w.server_cpu;
    let window = w.seconds;
    let server_cpus = w.server_cpus.max(1) as f64;
    let usable_gen = w.threads.min(w.gen_cpus.max(1) as u32) as f64;
    let client_pct = client.total() / (window * usable_gen) * 100.0;
    let mut notes = Vec::new();
    // Near 100% of its cores; and, on a busy machine, whether it used nearly all that
    // other processes left on its CPUs.
    let others_on_gen = w.gen_busy.map_or(0.0, |x| (x - client.total()).max(0.0));
    let starved = w.pinned
        && client_pct < GENERATOR_BOUND_PCT
        && others_on_gen > 0.1 * window * usable_gen
        && client.total() >= GENERATOR_BOUND_PCT / 100.0 * (window * usable_gen - others_on_gen);
    let generator_bound = if w.pinned {
        client_pct >= GENERATOR_BOUND_PCT
    } else {
        // Sharing the CPUs: bound when the generator took nearly all the server left.
        client.total() >= 0.9 * (window * server_cpus - server)
    };
    if starved {
        notes.push(format!(
            "{} used nearly all the CPU that other processes left on its CPUs ({client_pct:.0}%)",
            w.generator,
        ));
    }
    if generator_bound {
        notes.push(format!(
            "generator-bound: {} used {client_pct:.0}% of its CPU{}",
            w.generator,
            if server / (window * server_cpus) * 100.0 >= GENERATOR_BOUND_PCT {
                " (the server was saturated too)"
            } else {
                ", so the server was not the limit"
            }
        ));
    }
    if !w.pinned {
        notes.push("server and generator shared one CPU".into());
    }
    let others_pct = w.others_pct;
    let server_pct = server / (window * server_cpus) * 100.0;
    let limit = if starved {
        Limit {
            kind: "generator".into(),
            evidence: format!(
                "the load generator {} used {client_pct:.0}% of its CPUs, nearly all that other processes left it",
                w.generator
            ),
        }
    } else {
        limit::limit(&Seen {
            server: Some((w.server.into(), server_pct)),
            generator: Some((w.generator.into(), client_pct)),
            busy_pct: w.busy_pct,
            cpus: w.used_cpus,
            ..Seen::default()
        })
    };
    if w.remote {
        notes.push(format!(
            "limit: {} ({} used {server_pct:.0}% of the DUT's {} CPU(s), {} {client_pct:.0}% of the controller's {})",
            limit.kind, w.server, w.server_cpus, w.generator, w.gen_cpus
        ));
    }
    if disturbed(others_pct) {
        notes.push(format!(
            "disturbed: other processes used {others_pct:.0}% of the server and generator CPUs"
        ));
    }
    Cpu {
        client_pct,
        generator_bound,
        others_pct,
        limit,
        notes,
    }
}
