//! A new value judged against the history of its series, as bencher does: a robust
//! z-score on the median and the MAD below 30 runs, Student's t prediction interval from
//! 30 runs on. A change must be both significant and beyond the threshold. Pure.

use super::compare::Verdict;
use super::stats::median;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// Fewer runs than this make no judgement.
pub const MIN_HISTORY: usize = 5;
/// From this many runs the t-test is used.
pub const T_TEST_FROM: usize = 30;
/// The two-sided p-value a change must reach: the robust z-score's 3.5 (Iglewicz and
/// Hoaglin's outlier bound) and the t-test's bound are the same tail.
pub const MAX_PVALUE: f64 = 4.65e-4;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Test {
    RobustZ,
    TTest,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Judgement {
    pub runs: usize,
    pub history_median: f64,
    /// new / history median − 1.
    pub change: f64,
    pub test: Test,
    /// The robust z-score or the t statistic.
    pub score: f64,
    pub pvalue: f64,
    /// The share of the history below the new value, in percent.
    pub percentile: f64,
    pub verdict: Verdict,
}

/// `new` against `history` (one value per past run); None with fewer than MIN_HISTORY.
/// `threshold` is a fraction (0.05: a change under 5% is unchanged).
pub fn judge(history: &[f64], new: f64, threshold: f64) -> Option<Judgement> {
    let h: Vec<f64> = history.iter().copied().filter(|x| x.is_finite()).collect();
    let n = h.len();
    if n < MIN_HISTORY || !new.is_finite() {
        return None;
    }
    let m = median(&h);
    let (test, score, pvalue) = if n >= T_TEST_FROM {
        let nf = n as f64;
        let mean = h.iter().sum::<f64>() / nf;
        let sd = (h.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (nf - 1.0)).sqrt();
        // The spread of one new value around the history's mean (a prediction interval).
        let t = (new - mean) / (sd * (1.0 + 1.0 / nf).sqrt());
        let p = tail(t, StudentsT::new(0.0, 1.0, nf - 1.0).ok());
        (Test::TTest, t, p)
    } else {
        let deviations: Vec<f64> = h.iter().map(|x| (x - m).abs()).collect();
        // MAD scaled to a standard deviation for normal data.
        let mad = median(&deviations) * 1.4826;
        let z = if mad > 0.0 {
            (new - m) / mad
        } else if new == m {
            0.0
        } else {
            f64::INFINITY.copysign(new - m)
        };
        (Test::RobustZ, z, tail(z, Normal::new(0.0, 1.0).ok()))
    };
    let change = new / m - 1.0;
    let verdict = if pvalue > MAX_PVALUE || change.abs() <= threshold {
        Verdict::Unchanged
    } else if change > 0.0 {
        Verdict::Improved
    } else {
        Verdict::Regressed
    };
    let below = h.iter().filter(|x| **x < new).count() as f64;
    let equal = h.iter().filter(|x| **x == new).count() as f64;
    Some(Judgement {
        runs: n,
        history_median: m,
        change,
        test,
        score,
        pvalue,
        percentile: 100.0 * (below + equal / 2.0) / n as f64,
        verdict,
    })
}

/// The two-sided tail beyond `x`.
fn tail<D: ContinuousCDF<f64, f64>>(x: f64, d: Option<D>) -> f64 {
    match (x.is_finite(), d) {
        (false, _) if x.is_nan() => 1.0,
        (false, _) => 0.0,
        (true, Some(d)) => (2.0 * d.sf(x.abs())).min(1.0),
        (true, None) => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_little_history_makes_no_judgement() {
        assert_eq!(judge(&[1.0, 1.0, 1.0, 1.0], 0.5, 0.05), None);
    }

    #[test]
    fn a_value_inside_the_history_is_unchanged() {
        let h = [100.0, 102.0, 98.0, 101.0, 99.0, 100.5, 99.5];
        let j = judge(&h, 99.0, 0.05).unwrap();
        assert_eq!(j.verdict, Verdict::Unchanged);
        assert_eq!(j.test, Test::RobustZ);
        assert!((j.percentile - 21.4).abs() < 0.1, "{j:?}");
    }

    #[test]
    fn a_drop_far_outside_a_tight_history_regressed() {
        let h = [100.0, 102.0, 98.0, 101.0, 99.0, 100.5, 99.5];
        let j = judge(&h, 80.0, 0.05).unwrap();
        assert_eq!(j.verdict, Verdict::Regressed);
        assert_eq!(j.percentile, 0.0);
        // Significant, but under the threshold: unchanged.
        let j = judge(&h, 94.0, 0.10).unwrap();
        assert!(j.pvalue < MAX_PVALUE);
        assert_eq!(j.verdict, Verdict::Unchanged);
    }

    #[test]
    fn the_same_drop_in_a_noisy_history_is_not_called() {
        let h = [100.0, 120.0, 80.0, 110.0, 90.0, 115.0, 85.0];
        assert_eq!(judge(&h, 80.0, 0.05).unwrap().verdict, Verdict::Unchanged);
    }

    #[test]
    fn thirty_runs_use_the_t_test() {
        let h: Vec<f64> = (0..30).map(|i| 100.0 + (i % 5) as f64 - 2.0).collect();
        let up = judge(&h, 120.0, 0.05).unwrap();
        assert_eq!(up.test, Test::TTest);
        assert_eq!(up.verdict, Verdict::Improved);
        assert_eq!(up.percentile, 100.0);
        // t = 2.9 / (sd sqrt(1 + 1/30)) with sd = sqrt(60/29) = 1.98: p about 0.057.
        let near = judge(&h, 102.9, 0.0).unwrap();
        assert!((near.pvalue - 0.053).abs() < 0.01, "{near:?}");
        assert_eq!(near.verdict, Verdict::Unchanged);
    }
}
