//! One operation timed alone, in process, on one thread, after the known-answer gate:
//! what an end-to-end point's crypto is set beside (tls's record protection and
//! handshake operations, ssh's cipher and MAC).

use crate::algorithms::{Algorithm, Direction};
use crate::impls::{Implementation, Support};
use crate::measure::worker::Worker;
use std::time::{Duration, Instant};

/// CPU seconds per call of one operation (`size` bytes per call for the symmetric
/// ones), over about `budget`.
pub fn cpu_per_call(
    imp: &dyn Implementation,
    alg: Algorithm,
    direction: Direction,
    size: usize,
    budget: Duration,
) -> anyhow::Result<f64> {
    if let Support::No(why) = imp.support(alg) {
        return Err(anyhow::Error::msg(why));
    }
    crate::kat::known_answers(imp, alg)?;
    let mut w = Worker::new(imp, alg, direction, size, 0)?;
    // Warm-up, then whole batches until the budget is spent.
    let t0 = Instant::now();
    while t0.elapsed() < budget / 5 {
        w.run_batch(8)?;
    }
    let (start, c0) = (Instant::now(), crate::sys::cpu::thread_cpu());
    let mut calls = 0u64;
    while start.elapsed() < budget {
        w.run_batch(16)?;
        calls += 16;
    }
    let cpu = crate::sys::cpu::thread_cpu().since(c0).total();
    Ok(cpu / calls as f64)
}

/// CPU seconds per 10^9 bytes of a symmetric algorithm sealing (encrypting) `size`
/// bytes per call.
pub fn cpu_s_per_gb(
    imp: &dyn Implementation,
    alg: Algorithm,
    size: usize,
    budget: Duration,
) -> anyhow::Result<f64> {
    Ok(cpu_per_call(imp, alg, Direction::Enc, size, budget)? / (size as f64 / 1e9))
}
