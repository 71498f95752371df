//! The per-call cost model of a path: t(n) = a + n / B, with a the fixed overhead of one
//! call (seconds) and B the streaming bandwidth (bytes/s). Fitted by weighted least
//! squares on the median time per call at each size, with bootstrap bounds over trials.

use super::bootstrap::{MedianDraw, Rng};
use serde::Serialize;

/// One size of one path: its trials, as bytes/s.
#[derive(Clone, Debug)]
pub struct Curve {
    pub sizes: Vec<f64>,
    /// samples[i] = bytes/s of every trial at sizes[i].
    pub samples: Vec<Vec<f64>>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Fit {
    /// Fixed cost per call, seconds.
    pub overhead_s: f64,
    pub overhead_s_bounds: [f64; 2],
    /// Streaming bandwidth, bytes/s (infinite when the per-byte cost is not measurable).
    pub bandwidth_bps: f64,
    pub bandwidth_bps_bounds: [f64; 2],
    /// Largest relative error of the model against the medians.
    pub max_rel_error: f64,
    /// Sizes the fit used.
    pub points: usize,
}

/// Weighted least squares of t = a + b n with weights 1/t^2, so every size counts by its
/// relative error (times span four orders of magnitude). Returns (a, b).
pub fn fit_line(n: &[f64], t: &[f64]) -> Option<(f64, f64)> {
    if n.len() < 2 || n.len() != t.len() {
        return None;
    }
    let mut sums = [0.0; 5];
    for (&x, &y) in n.iter().zip(t) {
        add(&mut sums, &term(x, y)?);
    }
    solve(&sums)
}

/// One size's share of `fit_line`'s sums: w, w x, w y, w x^2, w x y with w = 1/y^2; None
/// for a time that is no measurement.
fn term(x: f64, y: f64) -> Option<[f64; 5]> {
    if y.is_nan() || y <= 0.0 {
        return None;
    }
    let w = 1.0 / (y * y);
    Some([w, w * x, w * y, w * x * x, w * x * y])
}

fn add(sums: &mut [f64; 5], t: &[f64; 5]) {
    for (s, t) in sums.iter_mut().zip(t) {
        *s += t;
    }
}

/// The line through `fit_line`'s sums.
fn solve(&[sw, sx, sy, sxx, sxy]: &[f64; 5]) -> Option<(f64, f64)> {
    let det = sw * sxx - sx * sx;
    if det.abs() < f64::MIN_POSITIVE {
        return None;
    }
    let b = (sw * sxy - sx * sy) / det;
    let a = (sy - b * sx) / sw;
    Some((a, b))
}

fn median(xs: &[f64]) -> f64 {
    super::stats::median(xs)
}

/// A line t = a + b n fitted to one bootstrap replicate; None when it could not be.
pub type Line = Option<(f64, f64)>;

pub const BOOTSTRAP_ROUNDS: usize = 400;

/// A curve's bootstrap: BOOTSTRAP_ROUNDS lines, each fitted to every size's median of its
/// trials resampled with replacement. Computed once per curve, shared by its fit and by
/// every crossover it is part of. Empty for a curve of fewer than two sizes.
///
/// Each median a size's table can draw has its share of the fit's sums computed once, so
/// that a round only adds: the same sums in the same order as `fit_line`, hence the same
/// lines, without two divisions per size and round (most of `report --format json`'s
/// analysis at 100,000 records).
pub fn replicates(c: &Curve, seed: u64) -> Vec<Line> {
    if c.sizes.len() < 2 {
        return Vec::new();
    }
    let draws: Vec<MedianDraw> = c.samples.iter().map(|s| MedianDraw::new(s)).collect();
    let terms: Vec<Vec<Option<[f64; 5]>>> = draws
        .iter()
        .zip(&c.sizes)
        .map(|(d, &n)| d.medians().map(|m| term(n, n / m)).collect())
        .collect();
    let mut rng = Rng::new(seed);
    // Every round's sums first, then their lines: the divisions of a line no longer wait
    // in the middle of the draws, whose random numbers come one after another.
    let sums: Vec<Option<[f64; 5]>> = (0..BOOTSTRAP_ROUNDS)
        .map(|_| {
            // Plain sums and a flag, not an Option the compiler keeps in memory.
            let (mut sums, mut measured) = ([0.0; 5], true);
            for ((d, &n), terms) in draws.iter().zip(&c.sizes).zip(&terms) {
                // Every size draws, whatever came before: the rounds after see the same
                // random numbers.
                let t = match d.draw_index(&mut rng) {
                    Some(k) => terms[k],
                    None => term(n, n / d.draw(&mut rng)),
                };
                match t {
                    Some(t) => add(&mut sums, &t),
                    None => measured = false,
                }
            }
            measured.then_some(sums)
        })
        .collect();
    sums.iter().map(|s| s.as_ref().and_then(solve)).collect()
}

/// The 2.5 % and 97.5 % points of `xs`: the values at ranks round((len - 1) p), as
/// sorting by `f64::total_cmp` gives them, in linear time. None when empty.
pub fn bounds_95(xs: impl Iterator<Item = f64>) -> Option<[f64; 2]> {
    // Selected as integers in total_cmp's order: plain compares, not total_cmp's own
    // bit twiddling in every one (most of a fit's time beyond its bootstrap).
    let mut keys: Vec<i64> = xs.map(total_key).collect();
    let last = keys.len().checked_sub(1)? as f64;
    let (low, high) = (
        (last * 0.025).round() as usize,
        (last * 0.975).round() as usize,
    );
    let high_key = *keys.select_nth_unstable(high).1;
    // What ranks below `high` is now before it.
    let low_key = *keys[..=high].select_nth_unstable(low).1;
    Some([from_key(low_key), from_key(high_key)])
}

/// `f64::total_cmp`'s order as an integer's: a negative value's bits other than the sign
/// flipped. Flipping them again (`from_key`) gives the value back.
fn total_key(x: f64) -> i64 {
    flip(x.to_bits() as i64)
}

fn from_key(key: i64) -> f64 {
    f64::from_bits(flip(key) as u64)
}

fn flip(bits: i64) -> i64 {
    bits ^ (((bits >> 63) as u64) >> 1) as i64
}

fn bandwidth(b: f64) -> f64 {
    if b > 0.0 {
        1.0 / b
    } else {
        f64::INFINITY
    }
}

/// A curve with what its fit and every crossover it is part of share, computed once:
/// its median time per call at each size, the line through them and its bootstrap.
pub struct Fitted<'a> {
    pub curve: &'a Curve,
    /// Seconds per call at each size: the size over its median trial's bytes/s.
    pub times: Vec<f64>,
    /// t = a + b n through `times`; None when no line fits them.
    pub line: Option<(f64, f64)>,
    /// `replicates` of the curve.
    pub lines: Vec<Line>,
}

impl<'a> Fitted<'a> {
    pub fn new(curve: &'a Curve, seed: u64) -> Fitted<'a> {
        let times: Vec<f64> = curve
            .sizes
            .iter()
            .zip(&curve.samples)
            .map(|(n, s)| n / median(s))
            .collect();
        Fitted {
            line: fit_line(&curve.sizes, &times),
            times,
            curve,
            lines: replicates(curve, seed),
        }
    }

    /// The model, with 95 % bounds from the bootstrap.
    pub fn fit(&self) -> Option<Fit> {
        let (a, b) = self.line?;
        let sizes = &self.curve.sizes;
        let max_rel_error = sizes
            .iter()
            .zip(&self.times)
            .map(|(&n, &y)| ((a + b * n) - y).abs() / y)
            .fold(0.0, f64::max);
        let fitted = self.lines.iter().flatten();
        let nan = [f64::NAN; 2];
        Some(Fit {
            overhead_s: a,
            overhead_s_bounds: bounds_95(fitted.clone().map(|l| l.0)).unwrap_or(nan),
            bandwidth_bps: bandwidth(b),
            bandwidth_bps_bounds: bounds_95(fitted.map(|l| bandwidth(l.1))).unwrap_or(nan),
            max_rel_error,
            points: sizes.len(),
        })
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A curve from a known model with ±3 % deterministic noise per trial.
    pub fn synthetic(a: f64, bw: f64, sizes: &[f64], seed: u64) -> Curve {
        let mut rng = Rng::new(seed);
        Curve {
            sizes: sizes.to_vec(),
            samples: sizes
                .iter()
                .map(|&n| {
                    (0..11)
                        .map(|_| {
                            let noise = 1.0 + (rng.below(601) as f64 - 300.0) / 10000.0;
                            n / (a + n / bw) * noise
                        })
                        .collect()
                })
                .collect(),
        }
    }

    const SIZES: [f64; 6] = [16.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0];

    #[test]
    fn exact_line_is_recovered() {
        let n = [16.0, 1024.0, 65536.0];
        let t: Vec<f64> = n.iter().map(|x| 2e-6 + x / 1e9).collect();
        let (a, b) = fit_line(&n, &t).unwrap();
        assert!((a - 2e-6).abs() / 2e-6 < 1e-9);
        assert!((1.0 / b - 1e9).abs() / 1e9 < 1e-9);
    }

    #[test]
    fn noisy_curve_recovers_overhead_and_bandwidth_within_2_percent() {
        // An offload path: 20 us per call, 400 MB/s (study 1's hardware).
        let c = synthetic(20e-6, 400e6, &SIZES, 7);
        let f = Fitted::new(&c, 1).fit().unwrap();
        assert!((f.overhead_s - 20e-6).abs() / 20e-6 < 0.02, "{f:?}");
        assert!((f.bandwidth_bps - 400e6).abs() / 400e6 < 0.02, "{f:?}");
        assert!(f.overhead_s_bounds[0] <= f.overhead_s && f.overhead_s <= f.overhead_s_bounds[1]);
        assert!(
            f.bandwidth_bps_bounds[0] <= f.bandwidth_bps
                && f.bandwidth_bps <= f.bandwidth_bps_bounds[1]
        );
        // A software path: 50 ns per call, 5 GB/s.
        let f = Fitted::new(&synthetic(50e-9, 5e9, &SIZES, 9), 1)
            .fit()
            .unwrap();
        assert!((f.overhead_s - 50e-9).abs() / 50e-9 < 0.02, "{f:?}");
        assert!((f.bandwidth_bps - 5e9).abs() / 5e9 < 0.02, "{f:?}");
    }

    /// `replicates` adds each size's share of the fit computed once per median a draw can
    /// give: its lines must be bit for bit those of drawing each median and fitting, for
    /// odd and even trial counts (short and long tables), trials beyond a table
    /// (resampled), and a size with no trials.
    #[test]
    fn replicates_are_the_plain_bootstrap_bit_for_bit() {
        let mut curves: Vec<Curve> = [5, 6, 9, 70]
            .iter()
            .map(|&trials| {
                let mut c = synthetic(2e-6, 1e9, &SIZES, trials as u64);
                for s in &mut c.samples {
                    s.resize(trials, s[0] * 1.01);
                }
                c
            })
            .collect();
        curves[0].samples[2].clear();
        for (i, c) in curves.iter().enumerate() {
            let draws: Vec<MedianDraw> = c.samples.iter().map(|s| MedianDraw::new(s)).collect();
            let mut rng = Rng::new(7 + i as u64);
            let plain: Vec<Line> = (0..BOOTSTRAP_ROUNDS)
                .map(|_| {
                    let t: Vec<f64> = draws
                        .iter()
                        .zip(&c.sizes)
                        .map(|(d, n)| n / d.draw(&mut rng))
                        .collect();
                    fit_line(&c.sizes, &t)
                })
                .collect();
            let bits = |ls: &[Line]| -> Vec<Option<(u64, u64)>> {
                ls.iter()
                    .map(|l| l.map(|(a, b)| (a.to_bits(), b.to_bits())))
                    .collect()
            };
            let fast = replicates(c, 7 + i as u64);
            assert_eq!(bits(&fast), bits(&plain), "curve {i}");
            assert_eq!(fast.iter().all(Option::is_none), i == 0, "curve {i}");
        }
    }

    /// The bounds are the values sorting puts at the two ranks, bit for bit:
    /// any length (none, one, the bootstrap's 400), ties, infinities and NaN.
    #[test]
    fn bounds_95_are_what_sorting_gives() {
        let mut rng = Rng::new(3);
        for n in [0, 1, 2, 3, 39, 40, 41, 399, 400, 1000] {
            for ties in [false, true] {
                let mut xs: Vec<f64> = (0..n)
                    .map(|_| rng.below(if ties { 5 } else { 1 << 30 }) as f64)
                    .collect();
                if n > 3 {
                    xs[1] = f64::INFINITY;
                    xs[2] = f64::NAN;
                }
                let mut sorted = xs.clone();
                sorted.sort_by(f64::total_cmp);
                let at = |p: f64| sorted[((n - 1) as f64 * p).round() as usize].to_bits();
                let got = bounds_95(xs.iter().copied()).map(|b| b.map(f64::to_bits));
                let want = (n > 0).then(|| [at(0.025), at(0.975)]);
                assert_eq!(got, want, "{n} values, ties {ties}");
            }
        }
    }

    #[test]
    fn too_few_points_give_no_fit() {
        let c = synthetic(1e-6, 1e9, &[16.0], 3);
        assert!(Fitted::new(&c, 1).fit().is_none());
    }
}
