//! Category shares from sample counts, with Wilson 95% intervals, and the Amdahl ceiling.

use super::classify::Category;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// z for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// Wilson score interval for `k` successes in `n` trials (sound near 0 and 1, where the
/// normal approximation gives negative shares).
pub fn wilson(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let z2 = Z95 * Z95;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z95 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    // Exact ends at 0 and n (rounding would leave 1e-18).
    let lo = if k == 0.0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let hi = if k == n {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    (lo, hi)
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Share {
    pub share: f64,
    pub ci: [f64; 2],
    pub samples: u64,
}

impl Share {
    pub fn of(k: u64, n: u64) -> Share {
        let (lo, hi) = wilson(k, n);
        Share {
            share: if n == 0 { 0.0 } else { k as f64 / n as f64 },
            ci: [lo, hi],
            samples: k,
        }
    }
}

/// Shares of every category seen, keyed by category name.
pub fn shares(counts: &BTreeMap<Category, u64>) -> (u64, BTreeMap<String, Share>) {
    let n: u64 = counts.values().sum();
    let map = counts
        .iter()
        .filter(|(_, &k)| k > 0)
        .map(|(c, &k)| (c.name().to_string(), Share::of(k, n)))
        .collect();
    (n, map)
}

/// The crypto share (all cipher, MAC and hash categories together) with its interval.
pub fn crypto(counts: &BTreeMap<Category, u64>) -> Share {
    let n: u64 = counts.values().sum();
    let k: u64 = counts
        .iter()
        .filter(|(c, _)| c.is_crypto())
        .map(|(_, k)| k)
        .sum();
    Share::of(k, n)
}

/// Amdahl: the most that making crypto free could speed the whole up, 1 / (1 - share).
pub fn amdahl_ceiling(crypto_share: f64) -> f64 {
    if crypto_share >= 1.0 {
        f64::INFINITY
    } else {
        1.0 / (1.0 - crypto_share)
    }
}

/// Amdahl: the whole's speed ratio when the `crypto_share` of its time runs `factor`
/// times as fast (factor < 1: slower) and the rest is unchanged, 1 / (1 - s + s / k).
pub fn amdahl(crypto_share: f64, factor: f64) -> f64 {
    1.0 / (1.0 - crypto_share + crypto_share / factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amdahl_of_a_faster_and_a_slower_part() {
        // Half the time in crypto made twice as fast: 1 / (0.5 + 0.25) = 1.333x.
        assert!((amdahl(0.5, 2.0) - 4.0 / 3.0).abs() < 1e-12);
        // A fifth in crypto made 2.5x slower: 1 / (0.8 + 0.5) = 0.769x.
        assert!((amdahl(0.2, 0.4) - 1.0 / 1.3).abs() < 1e-12);
        // No crypto: nothing changes; all crypto: the part's own factor.
        assert_eq!(amdahl(0.0, 3.0), 1.0);
        assert!((amdahl(1.0, 3.0) - 3.0).abs() < 1e-12);
        // Free crypto is the ceiling.
        assert_eq!(amdahl(0.25, f64::INFINITY), amdahl_ceiling(0.25));
    }

    #[test]
    fn wilson_matches_the_textbook_values() {
        // 81 of 263 (Wilson 1927 style check): 0.2553 .. 0.3662.
        let (lo, hi) = wilson(81, 263);
        assert!((lo - 0.2553).abs() < 5e-4, "{lo}");
        assert!((hi - 0.3662).abs() < 5e-4, "{hi}");
        // Zero successes still has a positive upper bound, never a negative lower one.
        let (lo, hi) = wilson(0, 100);
        assert_eq!(lo, 0.0);
        assert!(hi > 0.03 && hi < 0.04, "{hi}");
    }

    #[test]
    fn shares_sum_to_one_and_crypto_groups_the_primitives() {
        let counts = BTreeMap::from([
            (Category::Aes, 30),
            (Category::Ghash, 10),
            (Category::KernelNet, 50),
            (Category::Unknown, 10),
        ]);
        let (n, s) = shares(&counts);
        assert_eq!(n, 100);
        let total: f64 = s.values().map(|x| x.share).sum();
        assert!((total - 1.0).abs() < 1e-12);
        let c = crypto(&counts);
        assert_eq!(c.samples, 40);
        assert!(c.ci[0] < 0.4 && c.ci[1] > 0.4);
        assert!((amdahl_ceiling(0.2) - 1.25).abs() < 1e-12);
    }
}
