//! Robust summaries of repeated trials. A leaf (it imports nothing of ours): measure's
//! stopping rule uses it, and analyse re-exports it as `analyse::stats`.

/// Median of a non-empty sample.
pub fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// P(X <= k) for X ~ Bin(n, 1/2), for k = 0, 1, 2, ...: each term from the one before, in
/// log space to stay finite for large n. A search over k costs O(k), not O(k²): the stopping
/// rule asks for the interval after every trial, and at O(k²) it took 40% of a profiled
/// 16-byte AF_ALG point under qemu.
fn binom_half_cdfs(n: usize) -> impl Iterator<Item = f64> {
    let ln_2n = n as f64 * std::f64::consts::LN_2;
    let mut log_c = 0.0f64; // ln C(n, i)
    let mut total = 0.0;
    (0..=n).map(move |i| {
        if i > 0 {
            log_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        total += (log_c - ln_2n).exp();
        f64::min(total, 1.0)
    })
}

/// Distribution-free confidence interval for the median from order statistics.
/// Returns (low, high, coverage). With too few samples for 95 % it returns min and max
/// with their actual (lower) coverage.
pub fn median_ci(xs: &[f64]) -> (f64, f64, f64) {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return (f64::NAN, f64::NAN, 0.0);
    }
    if n == 1 {
        return (v[0], v[0], 0.0);
    }
    // Largest j (1-based) with P(X <= j-1) <= 0.025: then [x_(j), x_(n-j+1)] covers >= 95 %.
    let mut cdfs = binom_half_cdfs(n);
    let mut at_j = cdfs.next().unwrap_or(1.0); // P(X <= j)
    let mut below_j = at_j; // P(X <= j-1) once j > 0
    let mut j = 0;
    while j < n / 2 && at_j <= 0.025 {
        below_j = at_j;
        at_j = cdfs.next().unwrap_or(1.0);
        j += 1;
    }
    // j == 0: min and max, which cover 1 - 2 P(X <= 0).
    let coverage = 1.0 - 2.0 * below_j;
    if j == 0 {
        return (v[0], v[n - 1], coverage);
    }
    (v[j - 1], v[n - j], coverage)
}

/// (max - min) / median, in percent.
pub fn spread_pct(xs: &[f64]) -> f64 {
    let m = median(xs);
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    if m > 0.0 {
        (hi - lo) / m * 100.0
    } else {
        0.0
    }
}

/// Half-width of the CI relative to the median, in percent.
/// (90th - 10th percentile) / median of the samples, in percent: the spread of the bulk
/// of the trials, which a few spoiled ones among many do not widen.
pub fn central_spread_pct(xs: &[f64]) -> f64 {
    let m = median(xs);
    if xs.is_empty() || m <= 0.0 {
        return 0.0;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let at = |q: f64| {
        let k = (v.len() - 1) as f64 * q;
        let (lo, hi) = (k.floor() as usize, k.ceil() as usize);
        v[lo] + (v[hi] - v[lo]) * (k - lo as f64)
    };
    (at(0.9) - at(0.1)) / m * 100.0
}

/// The widest bulk spread (see [`central_spread_pct`]) a point may have before it is
/// noisy, in percent of its median.
pub const NOISY_SPREAD_PCT: f64 = 50.0;

/// Whether the bulk of a point's trials spreads too wide to trust its median: one rule
/// for every record that carries `noisy`.
pub fn bulk_too_spread(xs: &[f64]) -> bool {
    xs.len() > 1 && central_spread_pct(xs) > NOISY_SPREAD_PCT
}

pub fn ci_half_width_pct(lo: f64, hi: f64, median: f64) -> f64 {
    if median > 0.0 {
        (hi - lo) / 2.0 / median * 100.0
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[test]
    fn ci_uses_min_max_for_five_samples() {
        let (lo, hi, cov) = median_ci(&[5.0, 1.0, 3.0, 2.0, 4.0]);
        assert_eq!((lo, hi), (1.0, 5.0));
        assert!((cov - 0.9375).abs() < 1e-9);
    }

    #[test]
    fn ci_reaches_95_percent_with_enough_samples() {
        let xs: Vec<f64> = (1..=20).map(f64::from).collect();
        let (lo, hi, cov) = median_ci(&xs);
        assert!(cov >= 0.95, "coverage {cov}");
        // The textbook interval for n = 20 is [x_(6), x_(15)].
        assert_eq!((lo, hi), (6.0, 15.0));
    }

    #[test]
    fn ci_matches_the_order_statistics_summed_term_by_term() {
        // The textbook rule, each P(X <= k) summed from scratch: the interval and coverage
        // the incremental search gives must be the same for every n.
        let cdf = |n: usize, k: usize| -> f64 {
            (0..=k)
                .map(|i| {
                    let ln_c: f64 = (0..i).map(|t| ((n - t) as f64 / (t + 1) as f64).ln()).sum();
                    (ln_c - n as f64 * std::f64::consts::LN_2).exp()
                })
                .sum()
        };
        for n in 2..300 {
            let xs: Vec<f64> = (0..n).map(|i| ((i * 7919) % n) as f64).collect();
            let mut j = 0;
            while j < n / 2 && cdf(n, j) <= 0.025 {
                j += 1;
            }
            let (lo, hi, cov) = median_ci(&xs);
            let want_cov = 1.0 - 2.0 * cdf(n, j.saturating_sub(1));
            let (want_lo, want_hi) = if j == 0 { (0, n - 1) } else { (j - 1, n - j) };
            assert_eq!((lo, hi), (want_lo as f64, want_hi as f64), "n = {n}");
            assert!(
                (cov - want_cov).abs() < 1e-9,
                "n = {n}: {cov} vs {want_cov}"
            );
        }
    }

    #[test]
    fn spread_is_relative_range() {
        assert!((spread_pct(&[90.0, 100.0, 110.0]) - 20.0).abs() < 1e-9);
    }

    #[test]
    fn central_spread_ignores_a_few_spoiled_trials_among_many() {
        // 40 trials at 100 and one at 40: the range is 60%, the bulk agrees exactly.
        let mut xs = vec![100.0; 40];
        xs.push(40.0);
        assert!((spread_pct(&xs) - 60.0).abs() < 1e-9);
        assert_eq!(central_spread_pct(&xs), 0.0);
        // Half the trials at half speed is not a few: the bulk spread shows it.
        let halves: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 50.0 } else { 100.0 })
            .collect();
        assert!(central_spread_pct(&halves) > 50.0);
    }
}
