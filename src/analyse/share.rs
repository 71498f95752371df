//! The crypto share, from sample counts (Wilson 95% intervals) or against a null-cipher
//! ceiling, and the one Amdahl: what speeding that share up can give the whole.

use crate::record::profile::ProfileField;
pub use crate::record::profile::Share;

/// z for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// Wilson score interval for `k` successes in `n` trials (sound near 0 and 1, where the
/// normal approximation gives negative shares).
fn wilson(k: u64, n: u64) -> (f64, f64) {
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

impl Share {
    /// The share of `k` samples in `n`, with its Wilson interval.
    pub fn of(k: u64, n: u64) -> Share {
        let (lo, hi) = wilson(k, n);
        Share {
            share: if n == 0 { 0.0 } else { k as f64 / n as f64 },
            ci: [lo, hi],
            samples: k,
        }
    }
}

/// The share of `cost` that a null-cipher ceiling does not pay, (cost - null) / cost:
/// negative where the ceiling cost more; 0 without a cost.
pub fn against_null(cost: f64, null: f64) -> f64 {
    if cost > 0.0 {
        (cost - null) / cost
    } else {
        0.0
    }
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

/// The crypto share over several points' profiles: their samples pooled.
pub fn pooled_crypto<'a>(fields: impl Iterator<Item = &'a ProfileField>) -> Option<Share> {
    let (mut k, mut n) = (0, 0);
    for f in fields {
        if let ProfileField::Measured(p) = f {
            k += p.crypto.samples;
            n += p.samples;
        }
    }
    (n > 0).then(|| Share::of(k, n))
}

/// Why these points have no profile, as perf said (None: none was asked for).
pub fn unavailable<'a>(mut fields: impl Iterator<Item = &'a ProfileField>) -> Option<String> {
    fields.find_map(|f| match f {
        ProfileField::Unavailable { unavailable } => Some(unavailable.clone()),
        _ => None,
    })
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
}
