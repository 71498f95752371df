//! When a point has had enough trials: the stopping rule and the run's shared savings.
//!
//! Every point has a budget of `time_per_point` seconds of trials. It stops as soon as its
//! median's CI half-width reaches the target (after `min_trials` trials spanning
//! `min_window_s`), and the part of its
//! budget it did not use goes into the run's savings. A point still noisy when its own
//! budget is spent keeps going on those savings, up to `max_time_per_point`. So the run
//! never takes longer than every point's budget together, and the time goes where the
//! variance is.

use crate::stats;

/// A point's budget and stopping rule.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Budget per point, in seconds of trials (warm-up comes on top, about 10 %).
    pub time_per_point: f64,
    /// The most a noisy point may take, drawing on what stable points saved.
    pub max_time_per_point: f64,
    pub min_trials: u32,
    /// Trials the budget is split into: one trial lasts `time_per_point` / this.
    pub trials_per_budget: u32,
    /// A point stops once its median's CI half-width is within this many percent
    /// (0: never early, every point takes its whole budget).
    pub target_ci_pct: f64,
    /// ... and only once its trials span this many seconds of wall time, from its first
    /// trial's start, the group's interleaved trials included.
    pub min_window_s: f64,
}

/// Length of one trial unless asked otherwise. Short trials are what make the median
/// robust on a shared machine: a burst of interference (another tenant, the hypervisor)
/// spoils a few of many samples instead of most of a few, and the median steps over them
/// (bench/noise: `--trial-time` 3, 5, 7.5 and 15 ms side by side).
pub const DEFAULT_TRIAL_S: f64 = 0.003;
/// A point's budget is split into at least this many trials.
const MIN_TRIALS_PER_BUDGET: u32 = 10;
/// The least time a point's trials span before it may stop at its target: short trials
/// in a short window could all fall inside one slow spell and agree on the wrong figure.
/// The span is wall time from the point's first trial, so the trials of the other points
/// interleaved with it count: five trials spread over 75 ms watch longer than fifteen
/// back to back over 45 ms.
const MIN_WINDOW_S: f64 = 0.045;
/// The least number of trials before a point may stop at its target.
const MIN_TRIALS: u32 = 5;

impl Settings {
    /// Settings whose budget is split into trials of about `trial_s` (at least
    /// [`MIN_TRIALS_PER_BUDGET`] of them), a point stopping early only after
    /// [`MIN_TRIALS`] trials spanning [`MIN_WINDOW_S`] (or its whole budget, if shorter).
    pub fn with_trial(time_per_point: f64, max_time: f64, trial_s: f64, target_ci: f64) -> Self {
        let trials_per_budget =
            ((time_per_point / trial_s).round() as u32).max(MIN_TRIALS_PER_BUDGET);
        Settings {
            time_per_point,
            max_time_per_point: max_time,
            min_trials: MIN_TRIALS.min(trials_per_budget),
            trials_per_budget,
            target_ci_pct: target_ci,
            min_window_s: MIN_WINDOW_S.min(time_per_point),
        }
    }

    pub fn trial_s(&self) -> f64 {
        self.time_per_point / self.trials_per_budget as f64
    }
}

/// Why a point took no more trials (a speed record's `stop_reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Its median's CI half-width reached `--target-ci`.
    TargetCi,
    /// It reached `--max-time` still short of the target.
    MaxTime,
    /// Its own budget (`--time`) was spent and the run had no savings left to lend it.
    Budget,
    /// The run was interrupted (SIGINT/SIGTERM) before it stopped by itself.
    Interrupted,
}

/// Seconds of trials that points stopping early left unused, for noisy points to spend.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Savings {
    pub seconds: f64,
}

/// Half-width of the median's CI in percent of the median; infinite below the minimum
/// number of samples or when the interval covers less than 90 %.
pub fn ci_half_width_pct(samples: &[f64]) -> f64 {
    let (lo, hi, cov) = stats::median_ci(samples);
    if cov < 0.9 {
        return f64::INFINITY;
    }
    stats::ci_half_width_pct(lo, hi, stats::median(samples))
}

/// The state of one point that the rule needs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Progress {
    /// Trials run so far.
    pub trials: usize,
    /// Seconds of trials so far.
    pub used_s: f64,
    /// Seconds beyond its own budget already charged to the savings.
    pub borrowed_s: f64,
    /// Wall seconds from its first trial's start to its last trial's end.
    pub span_s: f64,
}

/// Called after each trial of a point: whether it stops now, and why. Charges the
/// savings for time used beyond the point's budget, and credits them with the budget a
/// point stopping at its target leaves.
pub fn decide(
    samples: &[f64],
    p: &mut Progress,
    trial_s: f64,
    s: &Settings,
    savings: &mut Savings,
) -> Option<StopReason> {
    let over = (p.used_s - s.time_per_point).max(0.0);
    savings.seconds -= over - p.borrowed_s;
    p.borrowed_s = over;
    if p.trials < s.min_trials as usize {
        return None;
    }
    let watched = p.span_s >= s.min_window_s;
    if watched && s.target_ci_pct > 0.0 && ci_half_width_pct(samples) <= s.target_ci_pct {
        savings.seconds += (s.time_per_point - p.used_s).max(0.0);
        return Some(StopReason::TargetCi);
    }
    // A trial stops at its first clock read past the deadline: count one that would end
    // within half a trial of a limit as reaching it.
    let next = p.used_s + trial_s / 2.0;
    if next >= s.max_time_per_point {
        return Some(StopReason::MaxTime);
    }
    if next >= s.time_per_point && savings.seconds < trial_s {
        return Some(StopReason::Budget);
    }
    None
}
