//! The TLS thread sweep (`tls --threads LIST`): each server and library at N threads
//! against its own 1-thread point, per round, as `speed --threads` pairs its trials.

use super::scaling::paired_efficiency;
use crate::record::tls::TlsRecord;
use crate::stats::median;
use serde::Serialize;

/// One thread count of one server, library and point.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ThreadScaling {
    pub server: String,
    /// The library the server ran on ("system", "aws-lc", ...).
    pub tls_lib: String,
    pub suite: String,
    pub content: String,
    pub file_size: u64,
    pub concurrency: u32,
    /// A new connection and full handshake per request: the rate is handshakes/s.
    pub handshake: bool,
    pub threads: u32,
    /// Requests (handshakes, with `handshake`) per second: the median over rounds.
    pub requests_per_s: f64,
    /// `requests_per_s` / threads.
    pub per_thread: f64,
    /// rate(N) / (N x rate(1)) of the same round, the median over the rounds; absent for
    /// the 1-thread row and where no claim is drawn (`oversubscribed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub efficiency: Option<f64>,
    /// The distribution-free interval of that median: from 2 paired rounds on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub efficiency_ci: Option<[f64; 2]>,
    /// Rounds measured at this thread count.
    pub rounds: usize,
    /// More threads than the server's CPUs: they share them, so no scaling claim.
    pub oversubscribed: bool,
}

/// A point apart from its thread count and round.
type Key = (String, String, String, String, u64, u32, bool);

fn key(r: &TlsRecord) -> Option<(Key, u32)> {
    let s = r.server.as_ref()?;
    let lib = r.tls_lib.as_ref().map_or("system", |l| l.name.as_str());
    let suite = match &r.group {
        Some(g) => format!("{} {g}", r.suite),
        None => r.suite.clone(),
    };
    Some((
        (
            s.name.clone(),
            lib.to_string(),
            suite,
            r.content.clone(),
            r.file_size,
            r.concurrency,
            r.handshake,
        ),
        s.threads,
    ))
}

/// Every point measured at 1 thread and at least one other count: one row per count,
/// in the records' order. Mixed points are left out (their parts share the threads).
pub fn sweep(records: &[TlsRecord]) -> Vec<ThreadScaling> {
    let mut points: Vec<(Key, u32, Vec<&TlsRecord>)> = Vec::new();
    for r in records.iter().filter(|r| r.mix.is_none() && r.errors == 0) {
        let Some((k, threads)) = key(r) else { continue };
        match points
            .iter_mut()
            .find(|(pk, t, _)| *pk == k && *t == threads)
        {
            Some((_, _, rs)) => rs.push(r),
            None => points.push((k, threads, vec![r])),
        }
    }
    let mut out = Vec::new();
    for (k, threads, rs) in &points {
        let Some((_, _, single)) = points.iter().find(|(pk, t, _)| pk == k && *t == 1) else {
            continue;
        };
        if !points.iter().any(|(pk, t, _)| pk == k && *t != 1) {
            continue;
        }
        let rates: Vec<f64> = rs.iter().map(|r| r.requests_per_s).collect();
        let cpus = rs
            .iter()
            .map(|r| r.server_cpus.len().max(1))
            .min()
            .unwrap_or(1);
        let oversubscribed = *threads as usize > cpus;
        // The same round on both sides, so that a drift between rounds cancels.
        let (aggregate, base): (Vec<f64>, Vec<f64>) = rs
            .iter()
            .filter_map(|r| {
                let one = single.iter().find(|s| s.round == r.round)?;
                Some((r.requests_per_s, one.requests_per_s))
            })
            .unzip();
        let e = (*threads != 1 && !oversubscribed)
            .then(|| paired_efficiency(&aggregate, &base, *threads))
            .flatten();
        let requests_per_s = median(&rates);
        out.push(ThreadScaling {
            server: k.0.clone(),
            tls_lib: k.1.clone(),
            suite: k.2.clone(),
            content: k.3.clone(),
            file_size: k.4,
            concurrency: k.5,
            handshake: k.6,
            threads: *threads,
            requests_per_s,
            per_thread: requests_per_s / *threads as f64,
            efficiency: e.map(|e| e.value),
            efficiency_ci: e.filter(|_| aggregate.len() >= 2).map(|e| e.ci),
            rounds: rs.len(),
            oversubscribed,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::tls::ServerInfo;

    fn point(threads: u32, round: u32, rps: f64, cpus: usize) -> TlsRecord {
        let mut r =
            crate::analyse::tls::tests::rec("TLS_AES_128_GCM_SHA256", 4096, 10, 1.0, 1, rps);
        r.data.server = Some(ServerInfo {
            name: "haproxy".into(),
            version: "2.6.12".into(),
            threads,
        });
        r.data.handshake = true;
        r.data.round = round;
        r.server_cpus = (0..cpus).collect();
        r
    }

    #[test]
    fn rounds_pair_and_the_interval_comes_from_them() {
        // The machine slows over the rounds; each round's 2-thread point is 1.8x its own
        // 1-thread point, so the efficiency is 0.9 in every round.
        let mut rs = Vec::new();
        for (round, one) in [(1, 400.0), (2, 300.0), (3, 200.0)] {
            rs.push(point(1, round, one, 2));
            rs.push(point(2, round, 1.8 * one, 2));
        }
        let s = sweep(&rs);
        assert_eq!(s.len(), 2, "{s:?}");
        assert_eq!((s[0].threads, s[0].efficiency), (1, None));
        let two = &s[1];
        assert_eq!((two.threads, two.rounds, two.oversubscribed), (2, 3, false));
        assert!((two.efficiency.unwrap() - 0.9).abs() < 1e-9, "{two:?}");
        let ci = two.efficiency_ci.unwrap();
        assert!(
            (ci[0] - 0.9).abs() < 1e-9 && (ci[1] - 0.9).abs() < 1e-9,
            "{ci:?}"
        );
        assert!((two.per_thread - 540.0 / 2.0).abs() < 1e-9, "{two:?}");
    }

    #[test]
    fn no_claim_past_the_cpus_and_no_interval_from_one_round() {
        let one_cpu = [point(1, 1, 400.0, 1), point(2, 1, 420.0, 1)];
        let s = sweep(&one_cpu);
        assert!(s[1].oversubscribed && s[1].efficiency.is_none(), "{s:?}");
        let two_cpus = [point(1, 1, 400.0, 2), point(2, 1, 700.0, 2)];
        let s = sweep(&two_cpus);
        assert_eq!(s[1].efficiency, Some(700.0 / 800.0));
        assert_eq!(s[1].efficiency_ci, None, "one round gives no interval");
        // Without a 1-thread point there is nothing to scale against.
        assert!(sweep(&[point(2, 1, 700.0, 2)]).is_empty());
    }
}
