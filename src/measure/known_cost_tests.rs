//! The measuring loop against an Operation whose cost is known: each call spins until its
//! thread has used a fixed amount of CPU time. On a machine shared with others a call's
//! wall time varies, its CPU time does not, so the checks are in CPU terms where the
//! machine's load would otherwise decide the answer.

use super::*;
use crate::algorithms::{Algorithm, Direction};
use crate::impls::{Implementation, Io, Operation, Support};

/// CPU time of the calling thread.
fn thread_cpu_ns() -> u128 {
    // SAFETY: clock_gettime only writes into the timespec we own.
    let ts = unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts);
        ts
    };
    ts.tv_sec as u128 * 1_000_000_000 + ts.tv_nsec as u128
}

/// A hash-shaped operation that costs `cost` of CPU per call.
struct Spin {
    cost: Duration,
}

impl Operation for Spin {
    fn process(&mut self, _nonce: &[u8], _aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        let until = thread_cpu_ns() + self.cost.as_nanos();
        while thread_cpu_ns() < until {
            std::hint::spin_loop();
        }
        let (_, out) = io.digest_room(32)?;
        out.fill(0);
        Ok(32)
    }
}

struct SpinImpl {
    cost: Duration,
}

impl Implementation for SpinImpl {
    fn name(&self) -> &str {
        "spin"
    }
    fn version(&self) -> String {
        "test".into()
    }
    fn support(&self, _alg: Algorithm) -> Support {
        Support::Yes
    }
}

impl crate::impls::Symmetric for SpinImpl {
    fn prepare(&self, _: Algorithm, _: Direction, _: &[u8]) -> anyhow::Result<Box<dyn Operation>> {
        Ok(Box::new(Spin { cost: self.cost }))
    }
}

const COST: Duration = Duration::from_micros(50);
const SIZE: usize = 1000;

/// Bytes per CPU second of one call: what a correct loop must report per core.
fn known_rate() -> f64 {
    SIZE as f64 / COST.as_secs_f64()
}

fn workers(threads: usize) -> Vec<Worker> {
    let imp = SpinImpl { cost: COST };
    (0..threads)
        .map(|t| Worker::new(&imp, Algorithm::Sha256, Direction::Enc, SIZE, t).unwrap())
        .collect()
}

fn measure(threads: usize, time_per_point: f64) -> Measured {
    let settings = Settings {
        time_per_point,
        ..Settings::with_trial(0.15, 0.6, adaptive::DEFAULT_TRIAL_S, 1.0)
    };
    let mut ws = vec![workers(threads)];
    let mut trials = 0;
    let mut savings = adaptive::Savings::default();
    let r = run_group(SIZE, &mut ws, &settings, &mut savings, &mut |_, _| {
        trials += 1
    });
    let m = r.into_iter().next().unwrap().unwrap();
    assert_eq!(trials, m.samples_bps.len(), "one progress call per trial");
    assert!(m.samples_bps.len() >= settings.min_trials as usize);
    assert_eq!(m.bytes, m.calls * SIZE as u64);
    m
}

#[test]
fn calibration_reaches_its_batch_target() {
    let mut ws = workers(1);
    let target_s = 0.002;
    // A call takes at least its 50 us of CPU, so a 2 ms batch has at most 40 calls (fewer
    // when other processes slow the calls down).
    let most = (target_s / COST.as_secs_f64()).ceil() as u64;
    // Batches of the size found last the target on average, timed over a window as long
    // as the calibration's own (so that both see the same share of a loaded machine's
    // CPU). The load can change between the two, so up to three attempts are made.
    let mut seen = Vec::new();
    for _ in 0..3 {
        let batch = calibrate(&mut ws, Duration::from_millis(40), target_s).unwrap();
        assert!(batch >= 1 && batch <= most, "batch {batch}, at most {most}");
        let start = Instant::now();
        let mut batches = 0u32;
        while start.elapsed() < Duration::from_millis(20) {
            ws[0].run_batch(batch).unwrap();
            batches += 1;
        }
        let mean = start.elapsed().as_secs_f64() / f64::from(batches);
        if mean >= 0.6 * target_s && mean <= 1.6 * target_s {
            return;
        }
        seen.push((batch, mean));
    }
    panic!("batches (size, seconds) {seen:?} missed the {target_s} s target three times");
}

#[test]
fn an_operation_of_known_cost_comes_out_at_its_known_rate() {
    let m = measure(1, 0.2);
    let cpu = m.cpu.total();
    // Per CPU second, the rate is the operation's own: 50 us per 1000 bytes.
    let per_cpu = m.bytes as f64 / cpu / known_rate();
    assert!(
        per_cpu > 0.8 && per_cpu < 1.02,
        "bytes per CPU second at {per_cpu} x"
    );
    // In wall time a call can only be slower (preempted), never faster.
    for s in &m.samples_bps {
        assert!(
            *s <= known_rate() * 1.02,
            "a trial at {s} B/s beats the cost"
        );
    }
    // The median trial agrees with the whole point's bytes over its wall time.
    let overall = m.bytes as f64 / m.wall_s;
    let ratio = m.median_bps() / overall;
    assert!(
        ratio > 0.5 && ratio < 2.0,
        "median {ratio} x the overall rate"
    );
    assert!(
        cpu <= m.wall_s * 1.05,
        "cpu {cpu} s in {} s of wall",
        m.wall_s
    );
}

#[test]
fn each_thread_of_a_point_is_counted_once() {
    let m = measure(2, 0.1);
    assert_eq!(m.per_thread_samples.len(), 2);
    // Both threads' CPU, and both threads' bytes: the rate per CPU second is one call's.
    let per_cpu = m.bytes as f64 / m.cpu.total() / known_rate();
    assert!(
        per_cpu > 0.8 && per_cpu < 1.02,
        "bytes per CPU second at {per_cpu} x"
    );
    for (t, s) in m.per_thread_samples.iter().enumerate() {
        assert_eq!(s.len(), m.samples_bps.len());
        assert!(
            s.iter().all(|x| *x <= known_rate() * 1.02),
            "thread {t} beats the cost: {s:?}"
        );
    }
    // The point is the threads together: at most two calls' worth at once.
    assert!(m.median_bps() <= 2.0 * known_rate() * 1.02);
    let sum: f64 = m.per_thread_samples.iter().map(|s| stats::median(s)).sum();
    let ratio = m.median_bps() / sum;
    // In wall terms only a double count (2x) is certain to show: a thread stalled by other
    // load pulls the point below its threads' sum (0.47 seen at load average 10 on 2
    // cores). A thread's bytes left out is caught in CPU terms above.
    assert!(
        ratio > 0.25 && ratio < 2.0,
        "point {ratio} x the sum of its threads"
    );
}
