//! Runs one group of measurement points: every implementation of one algorithm,
//! direction, size and thread count, with trials interleaved across implementations so
//! that slow drift of a shared machine hits them all alike.

pub use crate::sys::cpu;
pub mod worker;

use crate::analyse::stats;
use crate::plan::Group;
use cpu::CpuTime;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};
use worker::Worker;

/// Set by the signal handler: finish the current trial, then stop.
pub static STOP: AtomicBool = AtomicBool::new(false);

pub fn stopped() -> bool {
    STOP.load(Ordering::Relaxed)
}

#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Time budget per point, in seconds of trials (warm-up comes on top, about 10 %).
    pub time_per_point: f64,
    pub min_trials: u32,
    /// Trials a point aims at; the budget is split into this many.
    pub target_trials: u32,
    /// Stop early once the median's CI half-width is under this many percent.
    pub target_ci_pct: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            time_per_point: 0.15,
            min_trials: 5,
            target_trials: 10,
            target_ci_pct: 0.5,
        }
    }
}

/// One trial of one thread.
#[derive(Clone, Copy, Debug)]
struct ThreadTrial {
    start: Instant,
    end: Instant,
    calls: u64,
    cpu: CpuTime,
}

/// Everything measured for one implementation in a group.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    pub samples_bps: Vec<f64>,
    /// per_thread_samples[t] = bytes/s of thread t in each trial.
    pub per_thread_samples: Vec<Vec<f64>>,
    pub cpu: CpuTime,
    pub wall_s: f64,
    pub bytes: u64,
    pub calls: u64,
    pub batch: u64,
    pub disturbed_trials: u32,
    pub others_cpu_s: f64,
    /// The clock of each trial, where this machine has a source (`sys::clock`).
    pub clocks: Vec<crate::sys::clock::ClockReading>,
}

impl Measured {
    pub fn median_bps(&self) -> f64 {
        stats::median(&self.samples_bps)
    }
}

/// Runs one trial: all threads start behind a barrier and run whole batches until a
/// shared deadline `dur` after the first of them started.
fn trial(workers: &mut [Worker], batch: u64, dur: Duration) -> Result<Vec<ThreadTrial>, String> {
    let barrier = Barrier::new(workers.len());
    // One deadline for all threads, set by the first past the barrier: a thread that is
    // scheduled late runs for less time instead of stretching the trial.
    let deadline = std::sync::OnceLock::new();
    std::thread::scope(|s| {
        let handles: Vec<_> = workers
            .iter_mut()
            .map(|w| {
                let (barrier, deadline) = (&barrier, &deadline);
                s.spawn(move || -> Result<ThreadTrial, String> {
                    barrier.wait();
                    let cpu0 = cpu::thread_cpu();
                    let start = Instant::now();
                    let deadline = *deadline.get_or_init(|| start + dur);
                    let mut calls = 0;
                    let end = loop {
                        w.run_batch(batch)?;
                        calls += batch;
                        let now = Instant::now();
                        if now >= deadline {
                            break now;
                        }
                    };
                    let cpu = cpu::thread_cpu().since(cpu0);
                    Ok(ThreadTrial {
                        start,
                        end,
                        calls,
                        cpu,
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| "a worker thread panicked".to_string())?
            })
            .collect()
    })
}

/// Warm-up and calibration: returns the batch size (calls between clock reads) that
/// makes one batch last about `batch_s`.
fn calibrate(workers: &mut [Worker], warmup: Duration, batch_s: f64) -> Result<u64, String> {
    let w0 = &mut workers[0];
    let start = Instant::now();
    let mut calls = 0u64;
    let mut n = 1u64;
    while start.elapsed() < warmup / 2 {
        w0.run_batch(n)?;
        calls += n;
        n = (n * 2).min(1 << 20);
    }
    let per_call = start.elapsed().as_secs_f64() / calls.max(1) as f64;
    let batch = ((batch_s / per_call).ceil() as u64).max(1);
    // The rest of the warm-up runs every thread, so that all cores are at speed.
    trial(workers, batch, warmup / 2)?;
    Ok(batch)
}

/// Measures each implementation's workers for one group, interleaving trials.
/// Returns one result per implementation (None for one that failed, with the reason).
pub fn run_group(
    group: &Group,
    workers: &mut [Vec<Worker>],
    settings: &Settings,
    on_trial: &mut dyn FnMut(usize, f64),
) -> Vec<Result<Measured, String>> {
    let trial_s = settings.time_per_point / settings.target_trials as f64;
    let trial_dur = Duration::from_secs_f64(trial_s);
    let warmup = Duration::from_secs_f64((settings.time_per_point * 0.1).clamp(0.005, 0.5));
    // A batch is at most 1/20 of a trial (the overshoot past the deadline) and 2 ms.
    let batch_s = (trial_s / 20.0).min(0.002);
    let size = group.size as u64;

    let mut results: Vec<Result<Measured, String>> = workers
        .iter_mut()
        .map(|ws| {
            let batch = calibrate(ws, warmup, batch_s)?;
            Ok(Measured {
                batch,
                per_thread_samples: vec![Vec::new(); ws.len()],
                ..Default::default()
            })
        })
        .collect();

    let max_rounds = (settings.target_trials * 3).max(settings.min_trials);
    for round in 0..max_rounds {
        if stopped() {
            break;
        }
        for (i, ws) in workers.iter_mut().enumerate() {
            let Ok(m) = &mut results[i] else { continue };
            let busy0 = cpu::machine_busy_s();
            let self0 = cpu::process_cpu();
            let clock = crate::sys::clock::Sampler::start();
            let t = match trial(ws, m.batch, trial_dur) {
                Ok(t) => t,
                Err(e) => {
                    results[i] = Err(e);
                    continue;
                }
            };
            m.clocks.extend(clock.and_then(|c| c.stop()));
            let own = cpu::process_cpu().since(self0).total();
            let start = t
                .iter()
                .map(|x| x.start)
                .min()
                .expect("at least one thread");
            let end = t.iter().map(|x| x.end).max().expect("at least one thread");
            let wall = (end - start).as_secs_f64();
            let calls: u64 = t.iter().map(|x| x.calls).sum();
            m.samples_bps.push(calls as f64 * size as f64 / wall);
            for (k, x) in t.iter().enumerate() {
                // From the trial's start, not the thread's: a thread scheduled late (more
                // threads than cores) must not look fast for having run briefly alone.
                let secs = (x.end - start).as_secs_f64();
                m.per_thread_samples[k].push(x.calls as f64 * size as f64 / secs);
                m.cpu.user += x.cpu.user;
                m.cpu.sys += x.cpu.sys;
            }
            m.wall_s += wall;
            m.calls += calls;
            m.bytes += calls * size;
            if let (Some(b0), Some(b1)) = (busy0, cpu::machine_busy_s()) {
                let others = (b1 - b0 - own).max(0.0);
                m.others_cpu_s += others;
                // Jiffies are 10 ms: only a clear disturbance counts.
                if others >= 0.5 * wall.max(0.02) {
                    m.disturbed_trials += 1;
                }
            }
            on_trial(i, m.median_bps());
        }
        let done = round + 1 >= settings.min_trials;
        let all_spent = results.iter().all(|r| match r {
            Ok(m) => m.wall_s >= settings.time_per_point,
            Err(_) => true,
        });
        let all_tight = results.iter().all(|r| match r {
            Ok(m) => {
                let (lo, hi, cov) = stats::median_ci(&m.samples_bps);
                cov >= 0.9
                    && stats::ci_half_width_pct(lo, hi, m.median_bps()) < settings.target_ci_pct
            }
            Err(_) => true,
        });
        if done && (all_spent || all_tight) {
            break;
        }
    }
    results
}
