//! The per-call cost model of a path: t(n) = a + n / B, with a the fixed overhead of one
//! call (seconds) and B the streaming bandwidth (bytes/s). Fitted by weighted least
//! squares on the median time per call at each size, with bootstrap bounds over trials.

use super::bootstrap::{Alias, MedianDraw, Rng};
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
/// that a round only adds, without two divisions per size and round. Neighbouring sizes
/// are drawn together (`Joint`): one draw from the product of their medians'
/// distributions, whose sums are added up front, in place of one draw and one add per
/// size (the rounds were most of `report --format json`'s analysis at 100,000 records).
pub fn replicates(c: &Curve, seed: u64) -> Vec<Line> {
    if c.sizes.len() < 2 {
        return Vec::new();
    }
    let draws: Vec<MedianDraw> = c.samples.iter().map(|s| MedianDraw::new(s)).collect();
    let parts = Part::of(&draws, &c.sizes);
    let mut rng = Rng::new(seed);
    // Every round's sums first, then their lines: the divisions of a line no longer wait
    // in the middle of the draws, whose random numbers come one after another.
    let sums: Vec<[f64; 5]> = (0..BOOTSTRAP_ROUNDS)
        .map(|_| {
            let mut sums = [0.0; 5];
            for part in &parts {
                // Every part draws, whatever came before: the rounds after see the same
                // random numbers.
                let t = match part {
                    Part::Joint(j) => j.draw(&mut rng),
                    Part::Resampled(d, n) => term(*n, n / d.draw(&mut rng)).unwrap_or(NO_TERM),
                };
                add(&mut sums, &t);
            }
            sums
        })
        .collect();
    // A NaN weight marks a round with a size that had no measurement (weights are 1/t^2,
    // never NaN otherwise).
    sums.iter()
        .map(|s| if s[0].is_nan() { None } else { solve(s) })
        .collect()
}

/// The share of a size that gives no line: NaN, which every sum it enters keeps.
const NO_TERM: [f64; 5] = [f64::NAN; 5];

/// Sizes drawn together while their combinations number at most this: enough to join a
/// few sizes of a handful of trials each, few enough that building the table costs less
/// than the draws and adds it saves over BOOTSTRAP_ROUNDS rounds.
const JOINT_MAX: usize = 128;

/// What a bootstrap round draws: several sizes together, or one size too large for a
/// table, resampled (with its size).
enum Part<'a> {
    Joint(Joint),
    Resampled(&'a MedianDraw, f64),
}

/// Neighbouring sizes' medians drawn as one: every combination of them, with the product
/// of their probabilities and the sum of their shares of the fit (in size order).
struct Joint {
    alias: Alias,
    sums: Vec<[f64; 5]>,
}

impl Joint {
    fn draw(&self, rng: &mut Rng) -> [f64; 5] {
        // A Joint is built from at least one table, so it always has entries.
        self.alias.draw(rng).map_or(NO_TERM, |k| self.sums[k])
    }
}

impl<'a> Part<'a> {
    /// The sizes in order, neighbours with tables joined while they fit JOINT_MAX.
    fn of(draws: &'a [MedianDraw], sizes: &[f64]) -> Vec<Part<'a>> {
        let mut parts = Vec::new();
        // The combinations so far: their probabilities and sums.
        let mut weights: Vec<f64> = Vec::new();
        let mut sums: Vec<[f64; 5]> = Vec::new();
        let flush = |weights: &mut Vec<f64>, sums: &mut Vec<[f64; 5]>, parts: &mut Vec<Part>| {
            if !weights.is_empty() {
                let alias = Alias::new(weights);
                parts.push(Part::Joint(Joint {
                    alias,
                    sums: std::mem::take(sums),
                }));
                weights.clear();
            }
        };
        for (d, &n) in draws.iter().zip(sizes) {
            // Each median's share of the fit, with its probability.
            let medians: Vec<([f64; 5], f64)> = d
                .medians()
                .map(|(m, p)| (term(n, n / m).unwrap_or(NO_TERM), p))
                .collect();
            if medians.is_empty() {
                flush(&mut weights, &mut sums, &mut parts);
                parts.push(Part::Resampled(d, n));
                continue;
            }
            if weights.len() * medians.len() > JOINT_MAX {
                flush(&mut weights, &mut sums, &mut parts);
            }
            if weights.is_empty() {
                weights.push(1.0);
                sums.push([0.0; 5]);
            }
            let combinations = weights.len() * medians.len();
            let (mut w2, mut s2) = (
                Vec::with_capacity(combinations),
                Vec::with_capacity(combinations),
            );
            for (w, s) in weights.iter().zip(&sums) {
                for (t, p) in &medians {
                    let mut s = *s;
                    add(&mut s, t);
                    w2.push(w * p);
                    s2.push(s);
                }
            }
            (weights, sums) = (w2, s2);
        }
        flush(&mut weights, &mut sums, &mut parts);
        parts
    }
}

/// The 2.5 % and 97.5 % points of `xs`: the values at ranks round((len - 1) p), as
/// sorting by `f64::total_cmp` gives them, in linear time. None when empty.
pub fn bounds_95(xs: impl Iterator<Item = f64>) -> Option<[f64; 2]> {
    // Selected as integers in total_cmp's order: plain compares, not total_cmp's own
    // bit twiddling in every one (most of a fit's time beyond its bootstrap).
    // Sized up front: a bootstrap's lines come through `flatten`, whose lower bound is 0.
    let mut keys: Vec<i64> = Vec::with_capacity(xs.size_hint().1.unwrap_or(0));
    keys.extend(xs.map(total_key));
    let last = keys.len().checked_sub(1)? as f64;
    let (low, high) = (
        (last * 0.025).round() as usize,
        (last * 0.975).round() as usize,
    );
    if let Some([low_key, high_key]) = near_ends(&keys, low, high) {
        return Some([from_key(low_key), from_key(high_key)]);
    }
    let high_key = *keys.select_nth_unstable(high).1;
    // What ranks below `high` is now before it.
    let low_key = *keys[..=high].select_nth_unstable(low).1;
    Some([from_key(low_key), from_key(high_key)])
}

/// At most this many keys are kept from each end by `near_ends`.
const NEAR: usize = 16;

/// The keys at ranks `low` and `high` (of `keys` sorted), when each is within NEAR of its
/// end (a bootstrap's 400 lines: the 11th from each): the few smallest and largest are
/// kept sorted in one pass, where most keys cost two compares, against the two
/// selections' several passes. None when farther.
fn near_ends(keys: &[i64], low: usize, high: usize) -> Option<[i64; 2]> {
    let (a, b) = (low + 1, keys.len() - high);
    if a > NEAR || b > NEAR {
        return None;
    }
    // A key equal to a start value changes neither list's last entry.
    let (mut small, mut large) = ([i64::MAX; NEAR], [i64::MIN; NEAR]);
    let (small, large) = (&mut small[..a], &mut large[..b]);
    for &k in keys {
        if k < small[a - 1] {
            insert(small, k, |x, y| x < y);
        }
        if k > large[b - 1] {
            insert(large, k, |x, y| x > y);
        }
    }
    Some([small[a - 1], large[b - 1]])
}

/// Puts `k` into `list` (ordered by `before`), dropping its last entry.
fn insert(list: &mut [i64], k: i64, before: impl Fn(i64, i64) -> bool) {
    let mut i = list.len() - 1;
    while i > 0 && before(k, list[i - 1]) {
        list[i] = list[i - 1];
        i -= 1;
    }
    list[i] = k;
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

    /// `replicates` draws the plain bootstrap's lines: for 4 sizes of 5 trials (625
    /// combinations of medians, three sizes drawn jointly), every line is the fit of one
    /// combination, and the intercepts of 40,000 lines follow the exact distribution that
    /// enumerating the combinations gives (Kolmogorov-Smirnov distance under 0.0082, the
    /// 1 % critical value). A size with no trials gives no line in any round; sizes of
    /// more trials than a table holds are resampled, and still give lines.
    #[test]
    fn replicates_follow_the_exact_bootstrap_distribution() {
        let c = synthetic(2e-6, 1e9, &SIZES[..4], 5);
        for s in &c.samples {
            assert_eq!(s.len(), 11);
        }
        let c = Curve {
            sizes: c.sizes.clone(),
            samples: c.samples.iter().map(|s| s[..5].to_vec()).collect(),
        };
        // Every combination of the sizes' medians: its probability and its line.
        let draws: Vec<MedianDraw> = c.samples.iter().map(|s| MedianDraw::new(s)).collect();
        let mut exact: Vec<(f64, (f64, f64))> = vec![(1.0, (0.0, 0.0))];
        let mut chosen: Vec<Vec<f64>> = vec![Vec::new()];
        for d in &draws {
            let total: f64 = d.medians().map(|(_, p)| p).sum();
            let (mut e2, mut c2) = (Vec::new(), Vec::new());
            for ((p, _), ms) in exact.iter().zip(&chosen) {
                for (m, q) in d.medians() {
                    e2.push((p * q / total, (0.0, 0.0)));
                    c2.push([&ms[..], &[m]].concat());
                }
            }
            (exact, chosen) = (e2, c2);
        }
        assert_eq!(exact.len(), 625);
        for (e, ms) in exact.iter_mut().zip(&chosen) {
            let t: Vec<f64> = c.sizes.iter().zip(ms).map(|(n, m)| n / m).collect();
            e.1 = fit_line(&c.sizes, &t).unwrap();
        }
        let mut drawn: Vec<f64> = Vec::new();
        for seed in 1..=100u64 {
            for l in replicates(&c, seed) {
                let (a, b) = l.unwrap();
                assert!(
                    exact
                        .iter()
                        .any(|(_, (ea, eb))| (a - ea).abs() <= 1e-9 * ea.abs()
                            && (b - eb).abs() <= 1e-9 * eb.abs()),
                    "({a}, {b}) is the fit of no combination"
                );
                drawn.push(a);
            }
        }
        drawn.sort_by(f64::total_cmp);
        exact.sort_by(|x, y| x.1 .0.total_cmp(&y.1 .0));
        // Largest gap between the empirical and the exact distribution function of a.
        let (mut below, mut ks) = (0.0, 0.0f64);
        for (p, (a, _)) in &exact {
            let lo = drawn.partition_point(|x| *x < a - 1e-9 * a.abs());
            let hi = drawn.partition_point(|x| *x <= a + 1e-9 * a.abs());
            let n = drawn.len() as f64;
            ks = ks.max((lo as f64 / n - below).abs());
            below += p;
            ks = ks.max((hi as f64 / n - below).abs());
        }
        assert!(ks < 0.0082, "KS distance {ks}");

        let mut empty = c.clone();
        empty.samples[2].clear();
        assert!(replicates(&empty, 7).iter().all(Option::is_none));
        let many = synthetic(2e-6, 1e9, &SIZES, 3);
        let many = Curve {
            sizes: many.sizes.clone(),
            samples: many
                .samples
                .iter()
                .map(|s| s.iter().cycle().take(70).copied().collect())
                .collect(),
        };
        let lines = replicates(&many, 7);
        assert_eq!(lines.len(), BOOTSTRAP_ROUNDS);
        assert!(lines.iter().all(Option::is_some));
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
