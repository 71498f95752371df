//! Runs one group of measurement points: every implementation and thread count of one
//! algorithm, direction and size, with trials interleaved across the points so that slow
//! drift of a shared machine hits them all alike. How many trials each point gets is
//! decided in [`adaptive`].

pub mod adaptive;
pub mod alone;
use crate::sys::cpu;
pub mod others;
pub mod pkey;
pub mod worker;

use crate::stats;
use adaptive::{Progress, Savings, StopReason};
pub use adaptive::{Settings, DEFAULT_TRIAL_S};
use cpu::CpuTime;
use others::OthersCpu;
use std::sync::Barrier;
use std::time::{Duration, Instant};
use worker::Worker;

pub use crate::sys::signal::stopped;

/// The shortest warm-up, and all a point gets after its group's first (calibration).
const MIN_WARMUP_S: f64 = 0.005;

/// One trial of one thread.
#[derive(Clone, Copy, Debug)]
struct ThreadTrial {
    start: Instant,
    end: Instant,
    calls: u64,
    cpu: CpuTime,
}

/// Everything measured for one point (an implementation at a thread count).
#[derive(Clone, Debug)]
pub struct Measured {
    /// Bytes/s over wall-clock time (operations/s for public-key algorithms), one per
    /// trial, in the order run.
    pub samples_bps: Vec<f64>,
    /// Aggregate bytes/s (or operations/s) per CPU-second: the sum over threads of each
    /// thread's bytes over its own CPU time in the trial (time it was descheduled does
    /// not count).
    pub cpu_samples_bps: Vec<f64>,
    /// per_thread_samples[t] = bytes/s (or operations/s) of thread t in each trial.
    pub per_thread_samples: Vec<Vec<f64>>,
    pub cpu: CpuTime,
    pub wall_s: f64,
    pub bytes: u64,
    pub calls: u64,
    pub batch: u64,
    /// CPU other processes used while the trials ran (over every CPU /proc/stat counts,
    /// whatever our affinity), and the trials they disturbed.
    pub others: OthersCpu,
    pub progress: Progress,
    /// Set once the point takes no more trials.
    pub stop: Option<StopReason>,
    /// The clock of each trial, where this machine has a source (`sys::clock`).
    pub clocks: Vec<crate::sys::clock::ClockReading>,
    /// When the first trial started: the start of the span the stopping rule watches.
    first_start: Option<Instant>,
}

impl Measured {
    fn new(batch: u64, threads: usize, others: OthersCpu) -> Measured {
        Measured {
            samples_bps: Vec::new(),
            cpu_samples_bps: Vec::new(),
            per_thread_samples: vec![Vec::new(); threads],
            cpu: CpuTime::default(),
            wall_s: 0.0,
            bytes: 0,
            calls: 0,
            batch,
            others,
            progress: Progress::default(),
            stop: None,
            clocks: Vec::new(),
            first_start: None,
        }
    }

    pub fn median_bps(&self) -> f64 {
        stats::median(&self.samples_bps)
    }

    /// How far the wall-clock median falls below the per-CPU-second one, in percent: the
    /// share of the trials the measuring threads spent waiting for a CPU.
    pub fn off_cpu_pct(&self) -> f64 {
        let cpu = stats::median(&self.cpu_samples_bps);
        if cpu > 0.0 {
            ((1.0 - self.median_bps() / cpu) * 100.0).max(0.0)
        } else {
            0.0
        }
    }

    /// CPU other processes used during the trials, in percent of all the machine's CPUs.
    pub fn others_cpu_pct(&self) -> f64 {
        self.others.pct()
    }

    /// Trials that ran while other processes took at least half a CPU.
    pub fn disturbed_trials(&self) -> u32 {
        self.others.disturbed_trials()
    }

    /// Adds one trial's threads.
    /// `size` bytes per call; `per_call` what a call adds to a sample (`size`, or 1 for
    /// public-key operations).
    fn add_trial(&mut self, t: &[ThreadTrial], size: u64, per_call: u64) {
        let start = t
            .iter()
            .map(|x| x.start)
            .min()
            .expect("at least one thread");
        let end = t.iter().map(|x| x.end).max().expect("at least one thread");
        let wall = (end - start).as_secs_f64();
        let calls: u64 = t.iter().map(|x| x.calls).sum();
        self.samples_bps.push(calls as f64 * per_call as f64 / wall);
        let mut per_cpu_s = 0.0;
        for (k, x) in t.iter().enumerate() {
            // From the trial's start, not the thread's: a thread scheduled late (more
            // threads than cores) must not look fast for having run briefly alone.
            let secs = (x.end - start).as_secs_f64();
            let units = x.calls as f64 * per_call as f64;
            self.per_thread_samples[k].push(units / secs);
            per_cpu_s += units / x.cpu.total().max(1e-9);
            self.cpu.user += x.cpu.user;
            self.cpu.sys += x.cpu.sys;
        }
        self.cpu_samples_bps.push(per_cpu_s);
        self.wall_s += wall;
        self.calls += calls;
        self.bytes += calls * size;
        self.progress.trials += 1;
        self.progress.used_s = self.wall_s;
        let first = *self.first_start.get_or_insert(start);
        self.progress.span_s = (end - first).as_secs_f64();
    }
}

/// Runs one trial: all threads start behind a barrier and run whole batches until a
/// shared deadline `dur` after the first of them started. Even one thread is spawned per
/// trial: on a busy machine the wake that starts it begins a fresh scheduler slice, and
/// a trial run on the calling thread instead was cut by preemption (one point at load
/// 5.5 on 2 CPUs: CI ±5.8-49% against ±0.6-1.6% spawned, 3 rounds).
fn trial(workers: &mut [Worker], batch: u64, dur: Duration) -> anyhow::Result<Vec<ThreadTrial>> {
    let barrier = Barrier::new(workers.len());
    // One deadline for all threads, set by the first past the barrier: a thread that is
    // scheduled late runs for less time instead of stretching the trial.
    let deadline = std::sync::OnceLock::new();
    std::thread::scope(|s| {
        let handles: Vec<_> = workers
            .iter_mut()
            .map(|w| {
                let (barrier, deadline) = (&barrier, &deadline);
                s.spawn(move || {
                    barrier.wait();
                    thread_trial(w, batch, dur, deadline)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| "a worker thread panicked".to_string())
                    .map_err(anyhow::Error::msg)?
            })
            .collect()
    })
}

/// One thread's part of a trial: whole batches until the shared deadline, which the first
/// thread to start sets.
fn thread_trial(
    w: &mut Worker,
    batch: u64,
    dur: Duration,
    deadline: &std::sync::OnceLock<Instant>,
) -> anyhow::Result<ThreadTrial> {
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
    Ok(ThreadTrial {
        start,
        end,
        calls,
        cpu: cpu::thread_cpu().since(cpu0),
    })
}

/// Warm-up and calibration: returns the batch size (calls between clock reads) that
/// makes one batch last about `batch_s`.
fn calibrate(workers: &mut [Worker], warmup: Duration, batch_s: f64) -> anyhow::Result<u64> {
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

/// Measures one group's points (each a set of workers, one per thread), interleaving
/// their trials until each has stopped by the rule in [`adaptive`]. Returns one result
/// per point (Err for one that failed, with the reason). `on_trial(point, median bytes/s,
/// stopped)` is called after every trial.
pub fn run_group(
    size: usize,
    points: &mut [Vec<Worker>],
    settings: &Settings,
    savings: &mut Savings,
    on_trial: &mut dyn FnMut(usize, &Measured),
) -> Vec<anyhow::Result<Measured>> {
    let trial_s = settings.trial_s();
    let trial_dur = Duration::from_secs_f64(trial_s);
    let warmup = Duration::from_secs_f64((settings.time_per_point * 0.1).clamp(MIN_WARMUP_S, 0.5));
    // A batch is at most 1/20 of a trial (the overshoot past the deadline) and 2 ms.
    let batch_s = (trial_s / 20.0).min(0.002);
    let size = size as u64;
    // What a sample counts per call: bytes, or one operation for public-key algorithms.
    let per_call = points
        .first()
        .and_then(|ws| ws.first())
        .map_or(size, Worker::units_per_call);
    let cpus = cpu::machine_cpus();
    let ticks_per_s = crate::sys::procfs::ticks_per_s();

    // The group's first point brings the cores to speed, and so does the first at each
    // higher thread count; the points after it run on cores already busy, and only
    // calibrate.
    let mut warmed = 0;
    let mut results: Vec<anyhow::Result<Measured>> = points
        .iter_mut()
        .map(|ws| {
            let warm = if ws.len() > warmed {
                warmed = ws.len();
                warmup
            } else {
                Duration::from_secs_f64(MIN_WARMUP_S)
            };
            Ok(Measured::new(
                calibrate(ws, warm, batch_s)?,
                ws.len(),
                OthersCpu::new(cpus, ticks_per_s),
            ))
        })
        .collect();

    loop {
        let mut active = 0;
        for (i, ws) in points.iter_mut().enumerate() {
            let Ok(m) = &mut results[i] else { continue };
            if m.stop.is_some() {
                continue;
            }
            if stopped() {
                m.stop = Some(StopReason::Interrupted);
                continue;
            }
            active += 1;
            let window0 = Instant::now();
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
            let busy1 = cpu::machine_busy_s();
            let window = window0.elapsed().as_secs_f64();
            m.add_trial(&t, size, per_call);
            if let (Some(b0), Some(b1)) = (busy0, busy1) {
                m.others.add(b1 - b0, own, window);
            }
            m.stop = adaptive::decide(&m.samples_bps, &mut m.progress, trial_s, settings, savings);
            on_trial(i, m);
        }
        if active == 0 {
            break;
        }
    }
    results
}

#[cfg(test)]
mod known_cost_tests;
#[cfg(test)]
mod tests;
