//! What held an end-to-end point (tunnel, server, ssh transfer) back, from the CPU it saw: one thread at its core's
//! limit, one CPU's softirq, the server, every CPU, the load generator, a rate cap, or
//! nothing seen.
//! Pure: the workloads measure the window, this names the limit and its evidence.

pub use crate::record::window::{Limit, SATURATED_PCT};

/// Repeats of a point whose throughputs agree to this relative difference (4 significant
/// digits) while no CPU was saturated: a rate cap, not the crypto.
pub const RATE_CAP_AGREEMENT: f64 = 5e-4;

/// The CPU a point saw, as the limit rules read it (percentages of one core, except
/// `busy_pct`, of all the CPUs counted).
#[derive(Clone, Debug, Default)]
pub struct Seen {
    /// The busiest thread doing the tunnel's (or server's) work, and its name.
    pub busiest_thread: Option<(String, f64)>,
    /// The CPU with the most softirq time, and that time's share of it.
    pub busiest_softirq: Option<(usize, f64)>,
    /// A server's processes (nginx) and their share of the CPUs they may use.
    pub server: Option<(String, f64)>,
    /// Busy share of every CPU counted, and how many there are.
    pub busy_pct: f64,
    pub cpus: usize,
    /// The load generator's CPU (iperf3, wrk) and its name.
    pub generator: Option<(String, f64)>,
}

/// Every CPU counted was busy: the "cpus" limit's rule, and the one a point's note about
/// a busy machine uses, so that a point named "none" never carries that note (a run once
/// printed both: the note had its own threshold, 95%).
pub fn every_cpu_busy(busy_pct: f64) -> bool {
    busy_pct >= SATURATED_PCT
}

/// The limit of a point: the first saturated resource, in the order that explains the
/// most (a single thread first: more cores cannot help it), else none seen (`rate_cap`
/// looks further once repeats are known).
pub fn limit(s: &Seen) -> Limit {
    let of = |kind: &str, evidence: String| Limit {
        kind: kind.into(),
        evidence,
    };
    if let Some((name, pct)) = &s.busiest_thread {
        if *pct >= SATURATED_PCT {
            return of(
                "thread",
                format!(
                    "thread {name} used {pct:.0}% of one core: the work bound to it cannot use another"
                ),
            );
        }
    }
    if let Some((cpu, pct)) = s.busiest_softirq {
        if pct >= SATURATED_PCT {
            return of(
                "softirq",
                format!(
                    "CPU {cpu} spent {pct:.0}% in softirq: the kernel's packet work is bound to it"
                ),
            );
        }
    }
    if let Some((name, pct)) = &s.server {
        if *pct >= SATURATED_PCT {
            return of(
                "server",
                format!("{name} used {pct:.0}% of its CPUs: the server was the limit"),
            );
        }
    }
    if let Some((name, pct)) = &s.generator {
        if *pct >= SATURATED_PCT {
            return of(
                "generator",
                format!("the load generator {name} used {pct:.0}% of one core: the load, not what it measured, was the limit"),
            );
        }
    }
    if every_cpu_busy(s.busy_pct) {
        return of(
            "cpus",
            format!(
                "all {} CPU(s) were {:.0}% busy: the measured path, the load and the kernel shared them",
                s.cpus, s.busy_pct
            ),
        );
    }
    of(
        "none",
        format!(
            "none seen: no thread, softirq, server or generator at {SATURATED_PCT:.0}% of a core, the CPUs {:.0}% busy",
            s.busy_pct
        ),
    )
}

/// A point with no saturated resource whose throughput its earlier repeats match to 4
/// significant digits: a machine's noise cannot do that, a link or shaper's cap can.
pub fn rate_cap(seen: Limit, rate: f64, repeats: &[f64]) -> Limit {
    let agree = seen.kind == "none"
        && !repeats.is_empty()
        && rate > 0.0
        && repeats
            .iter()
            .all(|r| ((r - rate) / rate).abs() <= RATE_CAP_AGREEMENT);
    if !agree {
        return seen;
    }
    Limit {
        kind: "rate_cap".into(),
        evidence: format!(
            "{} repeats agree to 4 significant digits while no CPU was saturated: a rate cap (link or shaper), not the crypto",
            repeats.len() + 1
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calm() -> Seen {
        Seen {
            busiest_thread: Some(("openvpn".into(), 40.0)),
            busiest_softirq: Some((0, 20.0)),
            busy_pct: 45.0,
            cpus: 2,
            generator: Some(("iperf3".into(), 30.0)),
            server: None,
        }
    }

    #[test]
    fn each_saturated_resource_is_named() {
        let mut s = calm();
        s.busiest_thread = Some(("openvpn".into(), 97.0));
        assert_eq!(limit(&s).kind, "thread");
        assert!(limit(&s).evidence.contains("97%"), "{:?}", limit(&s));
        let mut s = calm();
        s.busiest_softirq = Some((1, 93.0));
        assert_eq!(limit(&s).kind, "softirq");
        assert!(limit(&s).evidence.contains("CPU 1"));
        let mut s = calm();
        s.generator = Some(("iperf3".into(), 99.0));
        assert_eq!(limit(&s).kind, "generator");
        let mut s = calm();
        s.server = Some(("nginx".into(), 95.0));
        assert_eq!(limit(&s).kind, "server");
        assert!(limit(&s).evidence.contains("nginx used 95%"));
        let mut s = calm();
        s.busy_pct = 96.0;
        assert_eq!(limit(&s).kind, "cpus");
        assert_eq!(limit(&calm()).kind, "none");
        // The busy-machine note and the limit draw one line: 92% is both, 89% neither.
        for (busy, kind) in [(92.0, "cpus"), (89.0, "none")] {
            s.busy_pct = busy;
            assert_eq!(limit(&s).kind, kind);
            assert_eq!(every_cpu_busy(busy), kind == "cpus");
        }
    }

    #[test]
    fn a_thread_outranks_the_busy_machine_it_is_part_of() {
        let mut s = calm();
        s.busiest_thread = Some(("openvpn".into(), 99.0));
        s.busy_pct = 98.0;
        s.generator = Some(("iperf3".into(), 95.0));
        assert_eq!(limit(&s).kind, "thread");
    }

    #[test]
    fn repeats_that_agree_too_well_are_a_rate_cap() {
        let none = limit(&calm());
        let agree = [1.0e8 * (1.0 + 1e-4), 1.0e8 * (1.0 - 2e-4)];
        assert_eq!(rate_cap(none.clone(), 1.0e8, &agree).kind, "rate_cap");
        // A machine's noise (1%) is no cap, nor is a first round alone.
        assert_eq!(rate_cap(none.clone(), 1.0e8, &[1.01e8]).kind, "none");
        assert_eq!(rate_cap(none, 1.0e8, &[]).kind, "none");
        // Nor is agreement while a thread is saturated: that is the thread.
        let mut s = calm();
        s.busiest_thread = Some(("openvpn".into(), 95.0));
        assert_eq!(rate_cap(limit(&s), 1.0e8, &agree).kind, "thread");
    }
}
