//! Each end's threads over a transfer, from samples of /proc every SAMPLE_EVERY: the
//! busiest one over the data phase, and the thread set (for --profile's split).

use std::collections::BTreeMap;
use std::time::Duration;

/// /proc's CPU times move in ticks (10 ms): sampling faster buys nothing.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(20);

/// Each thread of `pids`: (is the server's, name, CPU seconds).
pub type Sample = BTreeMap<i32, (bool, String, f64)>;

/// The threads of `pids`, all of one end (`server`).
pub fn sample(pids: &[i32], server: bool) -> Sample {
    let mut out = Sample::new();
    for pid in pids {
        if let Some(snap) = crate::workloads::e2e::cpu::snap_process(*pid) {
            for (tid, t) in snap.threads {
                out.insert(tid, (server, t.name.clone(), t.total()));
            }
        }
    }
    out
}

/// Every thread /proc showed for one end (`server`) over the transfer.
pub fn threads_of(samples: &[(f64, Sample)], server: bool) -> std::collections::BTreeSet<i32> {
    samples
        .iter()
        .flat_map(|(_, m)| m.iter().filter(|(_, v)| v.0 == server).map(|(t, _)| *t))
        .collect()
}

/// One end's busiest thread over [from, to] (seconds since its samples started): its CPU
/// between the last samples at or before each bound (from zero for a thread born later).
pub fn busiest(samples: &[(f64, Sample)], from: f64, to: f64, server: bool) -> (String, f64) {
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
}
