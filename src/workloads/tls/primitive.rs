//! The cost of each suite's record protection measured alone: the same system
//! libcrypto that nginx uses, one full 16 KiB TLS record per call, one thread, CPU time.
//! A bottom-up estimate beside the end-to-end share against the null suite.

use super::suites::Suite;
use crate::algorithms::{Algorithm, Direction};
use crate::impls::{openssl::OpenSsl, Implementation, Support};
use crate::measure::worker::Worker;
use serde::Serialize;
use std::time::{Duration, Instant};

/// Bytes per call: the largest TLS record, which bulk transfers fill.
pub const RECORD: usize = 16384;

#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct CipherAlone {
    pub suite: String,
    /// The primitives timed, e.g. ["aes-128-cbc", "hmac-sha256"].
    pub algs: Vec<String>,
    /// CPU seconds per 10^9 bytes of all of them together (seal/encrypt direction).
    pub cpu_s_per_gb: f64,
    pub implementation: String,
    pub note: Option<String>,
}

fn thread_cpu_s() -> f64 {
    // SAFETY: clock_gettime only writes into the timespec we own.
    let ts = unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts);
        ts
    };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// CPU seconds per GB of one algorithm at RECORD bytes per call, over about `budget`.
fn cost(imp: &dyn Implementation, alg: Algorithm, budget: Duration) -> Result<f64, String> {
    if let Support::No(why) = imp.support(alg) {
        return Err(why);
    }
    crate::kat::known_answers(imp, alg)?;
    let mut w = Worker::new(imp, alg, Direction::Enc, RECORD, 0)?;
    // Warm-up, then whole batches until the budget is spent.
    let t0 = Instant::now();
    while t0.elapsed() < budget / 5 {
        w.run_batch(8)?;
    }
    let (start, c0) = (Instant::now(), thread_cpu_s());
    let mut calls = 0u64;
    while start.elapsed() < budget {
        w.run_batch(16)?;
        calls += 16;
    }
    let cpu = thread_cpu_s() - c0;
    Ok(cpu / (calls as f64 * RECORD as f64 / 1e9))
}

/// For each TLS suite whose primitives the catalogue has, their summed cost alone.
pub fn measure(suites: &[&Suite], budget: Duration) -> (Vec<CipherAlone>, Vec<String>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let imp = match OpenSsl::load_system() {
        Ok(o) => o,
        Err(e) => {
            notes.push(format!("cipher cost alone not measured: {e}"));
            return (out, notes);
        }
    };
    let mut cache: Vec<(Algorithm, f64)> = Vec::new();
    for s in suites {
        if s.cipher.is_none() || crate::measure::stopped() {
            continue;
        }
        let Some(algs) = s.primitives() else {
            notes.push(format!(
                "cipher cost alone not measured for {}: its primitives ({}) are not in the catalogue",
                s.name, s.enc
            ));
            continue;
        };
        let mut total = 0.0;
        let mut failed = None;
        for &a in &algs {
            if let Some((_, c)) = cache.iter().find(|(x, _)| *x == a) {
                total += c;
                continue;
            }
            match cost(&imp, a, budget) {
                Ok(c) => {
                    cache.push((a, c));
                    total += c;
                }
                Err(e) => failed = Some(format!("{a}: {e}")),
            }
        }
        if let Some(e) = failed {
            notes.push(format!(
                "cipher cost alone not measured for {}: {e}",
                s.name
            ));
            continue;
        }
        let note = if s.null {
            Some("HMAC-SHA1 timed as SHA-1 over the record (HMAC adds two blocks)".to_string())
        } else if algs.iter().any(|a| a.name() == "hmac-sha256") {
            Some("CBC and HMAC timed apart and added (TLS 1.2 MAC-then-encrypt)".to_string())
        } else {
            None
        };
        out.push(CipherAlone {
            suite: s.name.clone(),
            algs: algs.iter().map(|a| a.name().to_string()).collect(),
            cpu_s_per_gb: total,
            implementation: format!("openssl {}", imp.version()),
            note,
        });
    }
    (out, notes)
}
