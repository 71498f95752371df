//! Whether two sets of rounds differ: the one rule behind every study's "faster",
//! "slower", "the opposite of" and "unlike". A direction is called only when the interval
//! of NEW/BASE (compare's ratio_ci over the rounds, or one round's trials) excludes no
//! difference and the ratio is beyond the noise; one value a side has no interval, so it
//! cannot decide however large the difference. Pure: numbers in, a decision out.

use super::compare::{ratio_ci, verdict, Verdict};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decision {
    /// NEW is higher than BASE beyond the noise, and the interval excludes 1.
    Higher,
    /// NEW is lower than BASE beyond the noise, and the interval excludes 1.
    Lower,
    /// Intervals from several values that hold 1, or a difference within the noise.
    NoDifference,
    /// One value on each side: no interval, so no verdict either way.
    CannotDecide,
}

/// The ratio NEW/BASE of the medians, its interval when there is one, and the decision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Difference {
    pub ratio: f64,
    pub ci: Option<[f64; 2]>,
    pub decision: Decision,
}

/// Decides NEW against BASE; `noise` is a fraction (0.15 = 15 %). Each slice holds the
/// rounds (or one round's trials) of one side; non-finite or non-positive values are left
/// out. A zero-width interval from several values is exact: the threshold alone decides.
pub fn decide(base: &[f64], new: &[f64], noise: f64) -> Difference {
    let keep = |v: &[f64]| -> Vec<f64> {
        v.iter()
            .copied()
            .filter(|x| x.is_finite() && *x > 0.0)
            .collect()
    };
    let (base, new) = (keep(base), keep(new));
    if base.is_empty() || new.is_empty() {
        return Difference {
            ratio: f64::NAN,
            ci: None,
            decision: Decision::CannotDecide,
        };
    }
    let (ratio, ci) = ratio_ci(&base, &new);
    if base.len() < 2 && new.len() < 2 {
        return Difference {
            ratio,
            ci: None,
            decision: Decision::CannotDecide,
        };
    }
    let decision = match verdict(ratio, ci, noise) {
        Verdict::Improved => Decision::Higher,
        Verdict::Regressed => Decision::Lower,
        Verdict::Unchanged => Decision::NoDifference,
    };
    Difference {
        ratio,
        ci: Some(ci),
        decision,
    }
}

/// Decides from two intervals already known (each side's 95 % interval, e.g. a scaling
/// efficiency's): a direction only when they do not overlap; None a side: no interval.
pub fn apart(base: Option<[f64; 2]>, new: Option<[f64; 2]>) -> Decision {
    match (base, new) {
        (Some(b), Some(n)) if n[0] > b[1] => Decision::Higher,
        (Some(b), Some(n)) if n[1] < b[0] => Decision::Lower,
        (Some(_), Some(_)) => Decision::NoDifference,
        _ => Decision::CannotDecide,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_decide_only_when_apart() {
        // The Zen 4 quick round: 48% [41-97] against 49% [42-93] is no finding.
        assert_eq!(
            apart(Some([0.42, 0.93]), Some([0.41, 0.97])),
            Decision::NoDifference
        );
        assert_eq!(
            apart(Some([0.75, 0.85]), Some([0.40, 0.60])),
            Decision::Lower
        );
        assert_eq!(
            apart(Some([0.40, 0.60]), Some([0.75, 0.85])),
            Decision::Higher
        );
        assert_eq!(apart(None, Some([0.4, 0.6])), Decision::CannotDecide);
    }

    #[test]
    fn a_clear_difference_over_rounds_is_called() {
        let d = decide(
            &[100.0, 101.0, 99.0, 100.5],
            &[70.0, 71.0, 69.5, 70.2],
            0.15,
        );
        assert_eq!(d.decision, Decision::Lower);
        let ci = d.ci.unwrap();
        assert!(ci[1] < 1.0 && (d.ratio - 0.70).abs() < 0.01, "{d:?}");
        assert_eq!(
            decide(&[70.0, 71.0, 69.5], &[100.0, 101.0, 99.0], 0.15).decision,
            Decision::Higher
        );
    }

    #[test]
    fn overlapping_intervals_are_no_difference_even_past_the_noise() {
        // Medians 100 and 130 (+30 %), but each side spreads over the other.
        let d = decide(
            &[60.0, 100.0, 150.0, 80.0, 120.0],
            &[70.0, 130.0, 190.0, 90.0, 160.0],
            0.15,
        );
        assert_eq!(d.decision, Decision::NoDifference, "{d:?}");
        assert!(d.ci.unwrap()[0] < 1.0 && d.ci.unwrap()[1] > 1.0);
    }

    #[test]
    fn one_round_cannot_decide_however_large() {
        // The study 4 quick round: +42 % from one value a side.
        let d = decide(&[100.0], &[142.0], 0.15);
        assert_eq!(d.decision, Decision::CannotDecide);
        assert!((d.ratio - 1.42).abs() < 1e-9 && d.ci.is_none());
        assert_eq!(
            decide(&[100.0], &[100.0], 0.15).decision,
            Decision::CannotDecide
        );
        assert_eq!(
            decide(&[], &[1.0, 2.0], 0.15).decision,
            Decision::CannotDecide
        );
        assert_eq!(
            decide(&[f64::NAN], &[1.0], 0.15).decision,
            Decision::CannotDecide
        );
    }

    #[test]
    fn a_zero_width_interval_from_several_rounds_is_exact() {
        let d = decide(&[100.0, 100.0, 100.0], &[80.0, 80.0, 80.0], 0.15);
        assert_eq!(d.ci, Some([0.8, 0.8]));
        assert_eq!(d.decision, Decision::Lower);
        // Exact but within the noise.
        let d = decide(&[100.0, 100.0], &[90.0, 90.0], 0.15);
        assert_eq!(d.decision, Decision::NoDifference);
    }

    #[test]
    fn the_trials_of_one_round_against_one_value_give_an_interval() {
        let d = decide(&[100.0], &[60.0, 61.0, 59.0, 60.5, 60.2], 0.15);
        assert_eq!(d.decision, Decision::Lower, "{d:?}");
    }
}
