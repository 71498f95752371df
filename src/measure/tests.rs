//! The stopping rule on made-up samples, and run_group on a synthetic operation of known
//! cost. No assertion depends on how fast this machine is.

use super::adaptive::{decide, Progress, Savings, StopReason};
use super::worker::Worker;
use super::*;
use crate::algorithms::{Algorithm, Direction};
use crate::impls::{Implementation, Io, Operation, Support};
use anyhow::anyhow;

/// A fixed amount of work per call: `spins` rounds of a multiply-add nothing can skip.
struct Spin {
    spins: u32,
}

struct SpinOp {
    spins: u32,
    acc: u64,
}

impl Operation for SpinOp {
    fn process(&mut self, _nonce: &[u8], _aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        for _ in 0..self.spins {
            self.acc = std::hint::black_box(self.acc.wrapping_mul(6364136223846793005) + 1);
        }
        Ok(io.input_len())
    }
}

impl Implementation for Spin {
    fn name(&self) -> &str {
        "spin"
    }
    fn version(&self) -> String {
        "1".into()
    }
    fn support(&self, _alg: Algorithm) -> Support {
        Support::Yes
    }
}

impl crate::impls::Symmetric for Spin {
    fn prepare(&self, _: Algorithm, _: Direction, _: &[u8]) -> anyhow::Result<Box<dyn Operation>> {
        Ok(Box::new(SpinOp {
            spins: self.spins,
            acc: 1,
        }))
    }
}

fn points(n: usize, threads: usize) -> Vec<Vec<Worker>> {
    (0..n)
        .map(|_| {
            (0..threads)
                .map(|t| {
                    Worker::new(
                        &Spin { spins: 200 },
                        Algorithm::Sha256,
                        Direction::Enc,
                        64,
                        t,
                    )
                    .unwrap()
                })
                .collect()
        })
        .collect()
}

fn settings(target_ci_pct: f64) -> Settings {
    Settings {
        time_per_point: 0.02,
        max_time_per_point: 0.05,
        min_trials: 5,
        trials_per_budget: 10,
        target_ci_pct,
        min_window_s: 0.0,
    }
}

/// Feeds `samples` one trial at a time, each `trial_s` long, until the rule stops.
fn feed(
    samples: &[f64],
    trial_s: f64,
    s: &Settings,
    savings: &mut Savings,
) -> (usize, StopReason, Progress) {
    let mut p = Progress::default();
    for n in 1..=samples.len() {
        p.trials = n;
        p.used_s = n as f64 * trial_s;
        p.span_s = p.used_s;
        if let Some(r) = decide(&samples[..n], &mut p, trial_s, s, savings) {
            return (n, r, p);
        }
    }
    panic!("the rule never stopped over {} samples", samples.len());
}

const STABLE: [f64; 40] = [100.0; 40];

/// ±20 % around 100, never settling.
fn noisy() -> Vec<f64> {
    (0..100)
        .map(|i| [80.0, 120.0, 95.0, 110.0, 85.0][i % 5])
        .collect()
}

#[test]
fn a_stable_point_stops_after_the_minimum_and_saves_the_rest() {
    let s = settings(1.0);
    let mut savings = Savings::default();
    let (n, why, p) = feed(&STABLE, s.trial_s(), &s, &mut savings);
    assert_eq!((n, why), (5, StopReason::TargetCi));
    assert!((savings.seconds - (s.time_per_point - p.used_s)).abs() < 1e-12);
    assert!(savings.seconds > 0.0);
}

#[test]
fn a_noisy_point_without_savings_stops_at_its_budget() {
    let s = settings(1.0);
    let mut savings = Savings::default();
    let (n, why, _) = feed(&noisy(), s.trial_s(), &s, &mut savings);
    assert_eq!((n, why), (s.trials_per_budget as usize, StopReason::Budget));
    assert_eq!(savings.seconds, 0.0);
}

#[test]
fn a_noisy_point_spends_the_savings_up_to_the_cap() {
    let s = settings(1.0);
    // Plenty saved: it runs to max_time, and pays for every second beyond its budget.
    let mut savings = Savings { seconds: 10.0 };
    let (n, why, p) = feed(&noisy(), s.trial_s(), &s, &mut savings);
    assert_eq!(why, StopReason::MaxTime);
    assert_eq!(n, (s.max_time_per_point / s.trial_s()).round() as usize);
    assert!((p.borrowed_s - (p.used_s - s.time_per_point)).abs() < 1e-12);
    assert!((savings.seconds - (10.0 - p.borrowed_s)).abs() < 1e-12);
    // Saved just enough for three more trials: it takes them, then stops on the budget.
    let mut savings = Savings {
        seconds: 3.0 * s.trial_s(),
    };
    let (n, why, _) = feed(&noisy(), s.trial_s(), &s, &mut savings);
    assert_eq!(
        (n, why),
        (s.trials_per_budget as usize + 3, StopReason::Budget)
    );
    assert!(savings.seconds.abs() < 1e-12);
}

#[test]
fn savings_from_stable_points_let_a_later_noisy_point_go_on() {
    let s = settings(1.0);
    let mut savings = Savings::default();
    for _ in 0..4 {
        feed(&STABLE, s.trial_s(), &s, &mut savings);
    }
    // Four points of 5 trials saved 4 x 5 trials; the noisy one borrows them all but the
    // remainder smaller than one trial, within its cap of 25 trials.
    let (n, why, _) = feed(&noisy(), s.trial_s(), &s, &mut savings);
    assert_eq!(why, StopReason::MaxTime);
    assert_eq!(n, 25);
    assert!((savings.seconds - 5.0 * s.trial_s()).abs() < 1e-9);
}

#[test]
fn target_zero_is_the_fixed_budget() {
    let s = settings(0.0);
    let mut savings = Savings { seconds: 0.0 };
    let (n, why, _) = feed(&STABLE, s.trial_s(), &s, &mut savings);
    assert_eq!((n, why), (10, StopReason::Budget));
}

#[test]
fn the_minimum_holds_however_tight_the_first_trials() {
    let s = Settings {
        min_trials: 7,
        ..settings(50.0)
    };
    let (n, why, _) = feed(&STABLE, s.trial_s(), &s, &mut Savings::default());
    assert_eq!((n, why), (7, StopReason::TargetCi));
}

#[test]
fn run_group_interleaves_points_and_stops_each_by_the_rule() {
    // A target nothing can miss, however busy the machine: every point stops at the
    // minimum, interleaved.
    let s = settings(f64::MAX);
    let mut ws = points(3, 1);
    let mut order = Vec::new();
    let mut savings = Savings::default();
    let res = run_group(64, &mut ws, &s, &mut savings, &mut |i, _| order.push(i));
    let expected: Vec<usize> = (0..5).flat_map(|_| 0..3).collect();
    assert_eq!(order, expected);
    for m in res.iter().map(|r| r.as_ref().unwrap()) {
        assert_eq!(m.stop, Some(StopReason::TargetCi));
        assert_eq!(m.samples_bps.len(), 5);
        assert_eq!(m.cpu_samples_bps.len(), 5);
        assert_eq!(m.bytes, m.calls * 64);
        assert!(m.calls % m.batch == 0);
        assert!(m.others_cpu_pct() <= 100.0);
    }
    // Each saved what it did not use of its budget (a busy machine can stretch five
    // trials past it: that is a debt).
    let saved: f64 = res
        .iter()
        .map(|r| s.time_per_point - r.as_ref().unwrap().wall_s)
        .sum();
    assert!((savings.seconds - saved).abs() < 1e-9);
}

#[test]
fn run_group_lends_savings_to_a_point_short_of_its_target() {
    // A target no real measurement reaches, and savings to spend: the point goes on past
    // its budget, to the cap, and the savings pay exactly for the time beyond.
    let s = Settings {
        target_ci_pct: 1e-9,
        ..settings(1.0)
    };
    let mut ws = points(1, 2);
    let mut savings = Savings { seconds: 1.0 };
    let res = run_group(64, &mut ws, &s, &mut savings, &mut |_, _| {});
    let m = res[0].as_ref().unwrap();
    assert_eq!(m.stop, Some(StopReason::MaxTime));
    assert!(m.wall_s + s.trial_s() / 2.0 >= s.max_time_per_point);
    assert!((savings.seconds - (1.0 - (m.wall_s - s.time_per_point))).abs() < 1e-9);
    assert_eq!(m.per_thread_samples.len(), 2);
    // Without savings the same point stops on its own budget (a cap far away, so that
    // no trial stretched by a busy machine reaches it).
    let far = Settings {
        max_time_per_point: 1e6,
        ..s
    };
    let mut none = Savings::default();
    let res = run_group(64, &mut ws, &far, &mut none, &mut |_, _| {});
    let m = res[0].as_ref().unwrap();
    assert_eq!(m.stop, Some(StopReason::Budget));
    assert!(m.wall_s + far.trial_s() / 2.0 >= far.time_per_point);
    // A last trial that ran past the budget is a debt on later savings.
    assert!((none.seconds + (m.wall_s - far.time_per_point).max(0.0)).abs() < 1e-9);
}

/// A worker's buffer and nonce after some calls.
type BufAndNonce = (Vec<u8>, Vec<u8>);

/// Runs `calls` messages through `process_batch` (in two batches) and through `process`
/// one by one, from the same start, and returns both buffers and nonces.
fn both_loops(
    imp: &dyn Implementation,
    alg: Algorithm,
    dir: Direction,
    size: usize,
) -> anyhow::Result<[BufAndNonce; 2]> {
    use crate::impls::Batch;
    use crate::kat::{pattern, SLACK};
    let key = pattern(alg.key_len(), 0x5a);
    let aad = if alg.kind() == crate::algorithms::Kind::Aead {
        pattern(crate::algorithms::TIMED_AAD_LEN, 0x21)
    } else {
        Vec::new()
    };
    let nonce0 = pattern(alg.nonce_len(), 0x33);
    let mut sealed = Vec::new();
    if dir == Direction::Dec {
        let mut buf = pattern(size, 0x77);
        buf.resize(size + SLACK, 0);
        let n = imp.prepare(alg, Direction::Enc, &key)?.process(
            &nonce0,
            &aad,
            Io::InPlace {
                buf: &mut buf,
                len: size,
            },
        )?;
        buf.truncate(n);
        sealed = buf;
    }
    let start = || {
        let mut buf = pattern(size, 0x77);
        buf.resize(alg.input_len(dir, size) + SLACK, 0);
        (buf, nonce0.clone(), 0u64)
    };
    let (mut buf_a, mut nonce_a, mut counter_a) = start();
    let mut a = imp.prepare(alg, dir, &key)?;
    for calls in [3, 2] {
        let mut b = Batch {
            direction: dir,
            size,
            buf: &mut buf_a,
            sealed: &sealed,
            nonce: &mut nonce_a,
            counter: &mut counter_a,
            aad: &aad,
        };
        a.process_batch(&mut b, calls)?;
    }
    let (mut buf_b, mut nonce_b, mut counter_b) = start();
    let mut one = imp.prepare(alg, dir, &key)?;
    for _ in 0..5 {
        let io = match dir {
            Direction::Enc => {
                Batch {
                    direction: dir,
                    size,
                    buf: &mut buf_b,
                    sealed: &sealed,
                    nonce: &mut nonce_b,
                    counter: &mut counter_b,
                    aad: &aad,
                }
                .next_nonce();
                Io::InPlace {
                    buf: &mut buf_b,
                    len: size,
                }
            }
            Direction::Dec => Io::Separate {
                input: &sealed,
                output: &mut buf_b,
            },
            _ => return Err(anyhow!("{dir} is not a symmetric direction")),
        };
        one.process(&nonce_b, &aad, io)?;
    }
    Ok([(buf_a, nonce_a), (buf_b, nonce_b)])
}

#[test]
fn every_batch_loop_computes_what_process_does_message_by_message() {
    // process() is what the correctness gate checks; the timed loop must give the same
    // bytes, including implementations that override process_batch (speed-loop's CBC).
    let reg = crate::impls::registry(&[], &["speed-loop".to_string()]).unwrap();
    let mut checked = 0;
    for imp in reg
        .found
        .iter()
        .filter(|i| i.access() == crate::impls::Access::InProcess)
    {
        for alg in Algorithm::ALL {
            // Public-key operations keep the default loop and have no bytes to compare.
            if imp.support(alg) != Support::Yes || alg.kind().is_public_key() {
                continue;
            }
            for &dir in alg.directions() {
                for size in [16, 64] {
                    let label = format!("{} {:?} {alg} {dir} {size}", imp.name(), imp.variant());
                    let [a, b] = both_loops(imp.as_ref(), alg, dir, size)
                        .unwrap_or_else(|e| panic!("{label}: {e}"));
                    assert_eq!(a, b, "{label}: the batch loop differs from process()");
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 20, "only {checked} combinations checked");
}

#[test]
fn short_trials_stop_early_only_after_a_window_and_the_budget_holds_at_least_ten() {
    let s = Settings::with_trial(0.15, 0.6, 0.003, 1.0);
    assert_eq!(s.trials_per_budget, 50);
    // Back to back, 15 trials of 3 ms span the 45 ms a point must be watched before it
    // may stop.
    assert_eq!((s.min_trials, s.min_window_s), (5, 0.045));
    let (n, why, _) = feed(&STABLE, s.trial_s(), &s, &mut Savings::default());
    assert_eq!((n, why), (15, StopReason::TargetCi));
    // Long trials: the minimum of 5 trials; a tiny budget: at least 10 trials, and the
    // window never longer than the budget.
    let long = Settings::with_trial(0.15, 0.6, 0.015, 1.0);
    assert_eq!(
        feed(&STABLE, long.trial_s(), &long, &mut Savings::default()).0,
        5
    );
    let tiny = Settings::with_trial(0.01, 0.04, 0.001, 1.0);
    assert_eq!(tiny.trials_per_budget, 10);
    assert_eq!(
        feed(&STABLE, tiny.trial_s(), &tiny, &mut Savings::default()).0,
        10
    );
}

#[test]
fn interleaved_trials_span_the_window_sooner() {
    // Three points interleaved: each 3 ms trial of this one spans 9 ms of wall time, so
    // its fifth trial ends 39 ms after its first began, its sixth 48 ms: past the window.
    let s = Settings::with_trial(0.15, 0.6, 0.003, 1.0);
    let mut p = Progress::default();
    let mut stopped = None;
    for n in 1..=STABLE.len() {
        p.trials = n;
        p.used_s = n as f64 * s.trial_s();
        p.span_s = (n - 1) as f64 * 3.0 * s.trial_s() + s.trial_s();
        if let Some(r) = decide(
            &STABLE[..n],
            &mut p,
            s.trial_s(),
            &s,
            &mut Savings::default(),
        ) {
            stopped = Some((n, r));
            break;
        }
    }
    assert_eq!(stopped, Some((6, StopReason::TargetCi)));
}
