//! Thread scaling: how close N threads come to N times one thread.

use crate::analyse::stats;

/// A scaling efficiency from interleaved trials, with the CI of its median.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Efficiency {
    pub value: f64,
    pub ci: [f64; 2],
}

impl Efficiency {
    /// Above 100 % by more than its CI: N threads cannot do more than N times one
    /// thread's work, so the 1-thread trials were slowed by something else.
    pub fn beyond_perfect(&self) -> bool {
        self.ci[0] > 1.0
    }
}

/// Efficiency from trials run in rounds (the N-thread trial right after the 1-thread one,
/// so drift cancels): the median over rounds of aggregate / (N x single) of the same
/// round, and the distribution-free CI of that median. None without a shared round.
pub fn paired_efficiency(aggregate: &[f64], single: &[f64], threads: u32) -> Option<Efficiency> {
    let ratios: Vec<f64> = aggregate
        .iter()
        .zip(single)
        .filter_map(|(&a, &s)| efficiency(a, s, threads))
        .collect();
    if ratios.is_empty() {
        return None;
    }
    let (lo, hi, _) = stats::median_ci(&ratios);
    Some(Efficiency {
        value: stats::median(&ratios),
        ci: [lo, hi],
    })
}

/// throughput(N) / (N x throughput(1)).
pub fn efficiency(aggregate: f64, single: f64, threads: u32) -> Option<f64> {
    (single > 0.0 && threads > 0).then(|| aggregate / (threads as f64 * single))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perfect_and_half_scaling() {
        assert_eq!(efficiency(200.0, 100.0, 2), Some(1.0));
        assert_eq!(efficiency(200.0, 100.0, 4), Some(0.5));
        assert_eq!(efficiency(200.0, 0.0, 4), None);
    }

    #[test]
    fn paired_rounds_cancel_drift() {
        // The machine slows down over the rounds; each round's pair sees the same speed.
        let single = [100.0, 90.0, 80.0, 70.0, 60.0];
        let aggregate: Vec<f64> = single.iter().map(|s| 2.0 * s * 0.9).collect();
        let e = paired_efficiency(&aggregate, &single, 2).unwrap();
        assert!((e.value - 0.9).abs() < 1e-9);
        assert!((e.ci[0] - 0.9).abs() < 1e-9 && (e.ci[1] - 0.9).abs() < 1e-9);
        assert!(!e.beyond_perfect());
        // Medians alone would mix rounds: 2 x 0.9 x 80 / (2 x 80) happens to agree here,
        // but pairs with disturbed 1-thread rounds do not.
        assert_eq!(paired_efficiency(&[], &single, 2), None);
    }

    #[test]
    fn above_perfect_is_flagged_only_beyond_its_ci() {
        let single = [100.0; 7];
        // Around 100 %, within the CI: not flagged.
        let near = [196.0, 204.0, 198.0, 202.0, 200.0, 199.0, 203.0];
        let e = paired_efficiency(&near, &single, 2).unwrap();
        assert!(e.ci[0] <= 1.0 && e.ci[1] >= 1.0, "{e:?}");
        assert!(!e.beyond_perfect());
        // 1-thread rounds slowed by another tenant: every ratio above 1.
        let slow = [70.0, 80.0, 75.0, 72.0, 78.0, 74.0, 76.0];
        let e = paired_efficiency(&[200.0; 7], &slow, 2).unwrap();
        assert!(e.value > 1.2 && e.beyond_perfect(), "{e:?}");
    }
}
