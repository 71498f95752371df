//! Where one path overtakes another: the size n at which a1 + n/B1 = a2 + n/B2.

use super::model::{bounds_95, Curve, Fitted, Line};
use serde::Serialize;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Crossover {
    /// Size in bytes where the two cost lines cross; None when one path is faster at
    /// every size (then `faster` names it).
    pub size_bytes: Option<f64>,
    /// 95 % bootstrap bounds; a None bound means some replicates did not cross.
    pub bounds: [Option<f64>; 2],
    /// Which path is faster below the crossover (or everywhere measured, without one): "a"
    /// or "b". The caller names the path in its own output.
    #[serde(skip)]
    pub faster_below: &'static str,
    /// The smallest and the largest size both paths were measured at.
    pub measured: [f64; 2],
    /// Where the fitted lines would cross when that is outside `measured`: not claimed
    /// (`size_bytes` and `bounds` are null), since no measurement reaches it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub beyond_measured: Option<f64>,
}

/// Fewer distinct sizes than this fit a line exactly: no interval is claimed from them.
pub const MIN_SIZES_FOR_BOUNDS: usize = 3;

/// The crossing of two lines t = a + b n, for n > 0.
pub fn cross(a1: f64, b1: f64, a2: f64, b2: f64) -> Option<f64> {
    let n = (a2 - a1) / (b1 - b2);
    (n.is_finite() && n > 0.0).then_some(n)
}

/// Crossover between path `a` and path `b`, with bounds from their bootstrap lines
/// (paired round by round). Both curves must share their sizes' meaning (same algorithm
/// and direction); they need not share sizes.
pub fn crossover(a: &Fitted, b: &Fitted) -> Option<Crossover> {
    let ((a1, b1), (a2, b2)) = (a.line?, b.line?);
    let span = |c: &Curve| {
        let lo = c.sizes.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = c.sizes.iter().copied().fold(0.0, f64::max);
        (lo, hi)
    };
    let ((alo, ahi), (blo, bhi)) = (span(a.curve), span(b.curve));
    let measured = [alo.max(blo), ahi.min(bhi)];
    let crossing = cross(a1, b1, a2, b2);
    let inside = |x: f64| x >= measured[0] && x <= measured[1];
    let n = crossing.filter(|&x| inside(x));
    let beyond_measured = crossing.filter(|&x| !inside(x));
    // Below the crossing the smaller overhead wins; without one inside the measured
    // sizes, the faster is the one at their middle.
    let probe = n
        .map(|x| x / 2.0)
        .unwrap_or_else(|| (measured[0] * measured[1]).sqrt().max(1.0));
    let faster_below = if a1 + b1 * probe <= a2 + b2 * probe {
        "a"
    } else {
        "b"
    };
    let distinct = |c: &Curve| {
        let mut s = c.sizes.clone();
        s.sort_by(f64::total_cmp);
        s.dedup();
        s.len()
    };
    // Two sizes fit a line exactly, and a crossing the data do not reach is no finding.
    let bounds = if n.is_some() && distinct(a.curve).min(distinct(b.curve)) >= MIN_SIZES_FOR_BOUNDS
    {
        bounds(&a.lines, &b.lines)
    } else {
        [None, None]
    };
    Some(Crossover {
        size_bytes: n,
        bounds,
        faster_below,
        measured,
        beyond_measured,
    })
}

/// 95 % bounds of the crossing from the paired bootstrap lines. Replicates without a
/// crossing count as "beyond any size" on the high side.
fn bounds(a_lines: &[Line], b_lines: &[Line]) -> [Option<f64>; 2] {
    let crossings = a_lines.iter().zip(b_lines).filter_map(|pair| match pair {
        (Some((a1, b1)), Some((a2, b2))) => {
            Some(cross(*a1, *b1, *a2, *b2).unwrap_or(f64::INFINITY))
        }
        _ => None,
    });
    let bounds = bounds_95(crossings).unwrap_or([f64::INFINITY; 2]);
    bounds.map(|x| x.is_finite().then_some(x))
}

#[cfg(test)]
mod tests {
    use super::super::model::tests::synthetic;
    use super::*;

    fn crossover_of(a: &Curve, b: &Curve, seed: u64) -> Option<Crossover> {
        crossover(&Fitted::new(a, seed), &Fitted::new(b, seed + 1))
    }

    const SIZES: [f64; 7] = [16.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0];

    #[test]
    fn lines_cross_where_expected() {
        // 1 us + n / 100 MB/s against 20 us + n / 1 GB/s: n = 19e-6 / (1e-8 - 1e-9) = 2111 B.
        let n = cross(1e-6, 1.0 / 100e6, 20e-6, 1.0 / 1e9).unwrap();
        assert!((n - 2111.1).abs() < 0.1, "{n}");
        assert_eq!(cross(1e-6, 1e-9, 2e-6, 2e-9), None);
    }

    #[test]
    fn crossover_of_noisy_curves_within_2_percent() {
        // Software: 0.2 us/call, 160 MB/s. Offload: 25 us/call, 400 MB/s (study 1).
        let sw = synthetic(0.2e-6, 160e6, &SIZES, 11);
        let hw = synthetic(25e-6, 400e6, &SIZES, 12);
        let expected = cross(0.2e-6, 1.0 / 160e6, 25e-6, 1.0 / 400e6).unwrap();
        let c = crossover_of(&sw, &hw, 5).unwrap();
        let got = c.size_bytes.unwrap();
        assert!(
            (got - expected).abs() / expected < 0.02,
            "{got} vs {expected}"
        );
        assert_eq!(c.faster_below, "a");
        let (lo, hi) = (c.bounds[0].unwrap(), c.bounds[1].unwrap());
        assert!(lo <= got && got <= hi, "{c:?}");
    }

    #[test]
    fn a_crossing_outside_the_measured_sizes_is_not_claimed() {
        // The study-1 pair measured only up to 1 KiB: their lines cross at about 6.6 KiB.
        let small = [16.0, 64.0, 256.0, 1024.0];
        let sw = synthetic(0.2e-6, 160e6, &small, 11);
        let hw = synthetic(25e-6, 400e6, &small, 12);
        let c = crossover_of(&sw, &hw, 5).unwrap();
        assert_eq!(c.size_bytes, None, "{c:?}");
        assert_eq!(c.bounds, [None, None]);
        let beyond = c.beyond_measured.unwrap();
        assert!(beyond > 1024.0 * 4.0, "{c:?}");
        assert_eq!(c.measured, [16.0, 1024.0]);
        // Software is faster everywhere measured.
        assert_eq!(c.faster_below, "a");
    }

    #[test]
    fn two_sizes_claim_no_bounds() {
        let two = [16.0, 262144.0];
        let sw = synthetic(0.2e-6, 160e6, &two, 11);
        let hw = synthetic(25e-6, 400e6, &two, 12);
        let c = crossover_of(&sw, &hw, 5).unwrap();
        assert!(c.size_bytes.is_some(), "{c:?}");
        assert_eq!(c.bounds, [None, None]);
    }

    #[test]
    fn dominated_path_never_crosses() {
        let fast = synthetic(0.1e-6, 5e9, &SIZES, 1);
        let slow = synthetic(10e-6, 400e6, &SIZES, 2);
        let c = crossover_of(&slow, &fast, 3).unwrap();
        assert_eq!(c.size_bytes, None);
        assert_eq!(c.faster_below, "b");
    }
}
