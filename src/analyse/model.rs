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
    let (mut sw, mut sx, mut sy, mut sxx, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (&x, &y) in n.iter().zip(t) {
        if y.is_nan() || y <= 0.0 {
            return None;
        }
        let w = 1.0 / (y * y);
        sw += w;
        sx += w * x;
        sy += w * y;
        sxx += w * x * x;
        sxy += w * x * y;
    }
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
pub fn replicates(c: &Curve, seed: u64) -> Vec<Line> {
    if c.sizes.len() < 2 {
        return Vec::new();
    }
    let draws: Vec<MedianDraw> = c.samples.iter().map(|s| MedianDraw::new(s)).collect();
    let mut rng = Rng::new(seed);
    let mut t = vec![0.0; c.sizes.len()];
    (0..BOOTSTRAP_ROUNDS)
        .map(|_| {
            for ((ti, d), n) in t.iter_mut().zip(&draws).zip(&c.sizes) {
                *ti = n / d.draw(&mut rng);
            }
            fit_line(&c.sizes, &t)
        })
        .collect()
}

/// The value at rank round((len - 1) p) of `xs` (reordered): what sorting and indexing
/// gives, in linear time.
fn percentile(xs: &mut [f64], p: f64) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let i = ((xs.len() - 1) as f64 * p).round() as usize;
    Some(*xs.select_nth_unstable_by(i, f64::total_cmp).1)
}

fn bandwidth(b: f64) -> f64 {
    if b > 0.0 {
        1.0 / b
    } else {
        f64::INFINITY
    }
}

/// Fits the model to a curve with 95 % bootstrap bounds from a fresh bootstrap.
#[cfg(test)]
pub fn fit(c: &Curve, seed: u64) -> Option<Fit> {
    fit_from(c, &replicates(c, seed))
}

/// Fits the model to a curve, with 95 % bounds from its bootstrap `lines`.
pub fn fit_from(c: &Curve, lines: &[Line]) -> Option<Fit> {
    let t: Vec<f64> = c
        .sizes
        .iter()
        .zip(&c.samples)
        .map(|(n, s)| n / median(s))
        .collect();
    let (a, b) = fit_line(&c.sizes, &t)?;
    let max_rel_error = c
        .sizes
        .iter()
        .zip(&t)
        .map(|(&n, &y)| ((a + b * n) - y).abs() / y)
        .fold(0.0, f64::max);
    let (mut overheads, mut bandwidths): (Vec<f64>, Vec<f64>) = lines
        .iter()
        .flatten()
        .map(|&(ra, rb)| (ra, bandwidth(rb)))
        .unzip();
    let at = |xs: &mut [f64], p: f64| percentile(xs, p).unwrap_or(f64::NAN);
    Some(Fit {
        overhead_s: a,
        overhead_s_bounds: [at(&mut overheads, 0.025), at(&mut overheads, 0.975)],
        bandwidth_bps: bandwidth(b),
        bandwidth_bps_bounds: [at(&mut bandwidths, 0.025), at(&mut bandwidths, 0.975)],
        max_rel_error,
        points: c.sizes.len(),
    })
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
        let f = fit(&c, 1).unwrap();
        assert!((f.overhead_s - 20e-6).abs() / 20e-6 < 0.02, "{f:?}");
        assert!((f.bandwidth_bps - 400e6).abs() / 400e6 < 0.02, "{f:?}");
        assert!(f.overhead_s_bounds[0] <= f.overhead_s && f.overhead_s <= f.overhead_s_bounds[1]);
        assert!(
            f.bandwidth_bps_bounds[0] <= f.bandwidth_bps
                && f.bandwidth_bps <= f.bandwidth_bps_bounds[1]
        );
        // A software path: 50 ns per call, 5 GB/s.
        let f = fit(&synthetic(50e-9, 5e9, &SIZES, 9), 1).unwrap();
        assert!((f.overhead_s - 50e-9).abs() / 50e-9 < 0.02, "{f:?}");
        assert!((f.bandwidth_bps - 5e9).abs() / 5e9 < 0.02, "{f:?}");
    }

    #[test]
    fn too_few_points_give_no_fit() {
        let c = synthetic(1e-6, 1e9, &[16.0], 3);
        assert!(fit(&c, 1).is_none());
    }
}
