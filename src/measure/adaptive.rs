//! When a point has had enough trials: the stopping rule and the run's shared savings.
//!
//! Every point has a budget of `time_per_point` seconds of trials. It stops as soon as its
//! median's CI half-width reaches the target (after `min_trials` trials spanning
//! `min_window_s`), and the part of its
//! budget it did not use goes into the run's savings. A point still noisy when its own
//! budget is spent keeps going on those savings, up to `max_time_per_point`. So the run
//! never takes longer than every point's budget together, and the time goes where the
//! variance is.

use super::Settings;
use crate::stats;

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
