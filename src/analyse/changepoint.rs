//! Change points in a series of run medians: E-Divisive Means (Matteson and James, 2014)
//! with the refinements of Apache Otava (Fleming et al., ICPE 2023), as MongoDB's CI runs
//! it. Each candidate is the split that maximises the energy statistic Q̂; a Student
//! t-test between the two sides decides whether it is significant (deterministic, unlike
//! the original permutation test). The series is cut into sliding windows, weak change
//! points are collected at a relaxed p-value, then merged away bottom-up until every one
//! left meets the strict p-value (shared among the windows searched: Bonferroni) and the
//! minimum magnitude. Beyond Otava, a change in spread alone (a bimodal or noisier series
//! at the same mean) is caught too: a Brown-Forsythe test on the deviations from each
//! side's median runs beside the t-test, the smaller p-value doubled (Bonferroni). Pure:
//! numbers in, indices out.

use statrs::distribution::{ContinuousCDF, StudentsT};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// Points per sliding window (Otava's default: 50).
    pub window: usize,
    /// The p-value a change point must reach (Otava's default: 0.001).
    pub max_pvalue: f64,
    /// The smallest relative change kept, as a fraction (0.05 = 5%).
    pub min_magnitude: f64,
    /// Also test the spread (false: Otava's t-test alone).
    pub spread: bool,
    /// Share `max_pvalue` among the windows searched (false: Otava's, each window's own).
    pub shared: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            window: 50,
            max_pvalue: 0.001,
            min_magnitude: 0.0,
            spread: true,
            shared: true,
        }
    }
}

impl Settings {
    /// The p-value a change point must reach in `len` runs: `max_pvalue` shared among the
    /// sliding windows searched (Bonferroni). Each window picks its best split, so a long
    /// flat series otherwise yields some by chance: 2 in 10,000 runs of noise at 0.001.
    pub fn bar(&self, len: usize) -> f64 {
        let window = self.window.max(2);
        let windows = len.saturating_sub(window).div_ceil((window / 2).max(1)) + 1;
        match self.shared {
            true => self.max_pvalue / windows as f64,
            false => self.max_pvalue,
        }
    }

    /// The first pass's relaxed p-value, as Otava takes it: ten times the strict one.
    fn weak_pvalue(&self) -> f64 {
        let p = self.max_pvalue;
        if p < 0.05 {
            p * 10.0
        } else if p < 0.5 {
            p * 2.0
        } else {
            p
        }
    }
}

/// What moved at a change point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Mean,
    Spread,
}

/// A change point: `index` is the first point after the change.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChangePoint {
    pub index: usize,
    pub kind: Kind,
    /// The segments' means and standard deviations on either side (to the neighbouring
    /// change points), and the t-test's two-sided p-value between them.
    pub mean_before: f64,
    pub mean_after: f64,
    pub std_before: f64,
    pub std_after: f64,
    pub pvalue: f64,
}

impl ChangePoint {
    /// The larger of the relative changes either way (a halving and a doubling weigh the
    /// same), of the mean, or of the standard deviation where the spread changed.
    pub fn magnitude(&self) -> f64 {
        let (before, after) = match self.kind {
            Kind::Mean => (self.mean_before, self.mean_after),
            Kind::Spread => (self.std_before, self.std_after),
        };
        let rel = |a: f64, b: f64| if b == 0.0 { 0.0 } else { (a / b - 1.0).abs() };
        rel(after, before).max(rel(before, after))
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Detection {
    /// The change points that pass, in index order.
    pub change_points: Vec<ChangePoint>,
}

/// The change points of `series`.
pub fn detect(series: &[f64], s: &Settings) -> Detection {
    let weak = split(series, s);
    let change_points = merge(weak, series, s);
    Detection { change_points }
}

/// The split step: E-Divisive in each sliding window at the weak p-value, the union of
/// what the windows found, each point's statistics taken to its neighbours.
fn split(series: &[f64], s: &Settings) -> Vec<ChangePoint> {
    let window = s.window.max(2);
    let step = (window / 2).max(1);
    let mut indices: Vec<usize> = Vec::new();
    let mut start = 0;
    let pvalue = s.weak_pvalue();
    while start < series.len() {
        let end = (start + window).min(series.len());
        let found = divisive(&series[start..end], pvalue, s.spread);
        let last = found.last().map_or(0, |i| i + start);
        for i in found {
            if !indices.contains(&(i + start)) {
                indices.push(i + start);
            }
        }
        start = last.max(start + step);
    }
    indices.sort_unstable();
    with_stats(&indices, series, s.spread)
}

/// The merge step at Otava's `max_pvalue`, then again at the series' bar: what holds at
/// the bar among Otava's points is kept (one pass at the bar from the weak points drops
/// a point whose neighbours are still close, and its final neighbours never meet).
fn merge(cps: Vec<ChangePoint>, series: &[f64], s: &Settings) -> Vec<ChangePoint> {
    let cps = merge_at(cps, series, s, s.max_pvalue);
    merge_at(cps, series, s, s.bar(series.len()))
}

/// Drops the weakest point (the highest p-value above `bar`, else the smallest change at
/// or under the minimum magnitude) and recomputes its neighbours, until every point left
/// passes.
fn merge_at(mut cps: Vec<ChangePoint>, series: &[f64], s: &Settings, bar: f64) -> Vec<ChangePoint> {
    while !cps.is_empty() {
        // Of equal p-values (two neighbours with a side of one run each: both 1), the
        // smaller change goes: an outlier beside a step, not the step.
        let by_p = (0..cps.len())
            .max_by(|&a, &b| {
                (cps[a].pvalue.total_cmp(&cps[b].pvalue))
                    .then(cps[b].magnitude().total_cmp(&cps[a].magnitude()))
            })
            .unwrap_or(0);
        let weakest = if cps[by_p].pvalue < bar {
            let by_size = (0..cps.len())
                .min_by(|&a, &b| cps[a].magnitude().total_cmp(&cps[b].magnitude()))
                .unwrap_or(0);
            if cps[by_size].magnitude() > s.min_magnitude {
                return cps;
            }
            by_size
        } else {
            by_p
        };
        cps.remove(weakest);
        let indices: Vec<usize> = cps.iter().map(|c| c.index).collect();
        // The removed point's two neighbours now reach further. (Otava 0.8 recomputes the
        // right neighbour and the one after it, leaving the left one stale.)
        for k in [weakest.wrapping_sub(1), weakest] {
            if k < cps.len() {
                cps[k] = stats_at(&indices, k, series, s.spread);
            }
        }
    }
    cps
}

/// Every point of `indices` (sorted) with its statistics.
fn with_stats(indices: &[usize], series: &[f64], spread: bool) -> Vec<ChangePoint> {
    (0..indices.len())
        .map(|k| stats_at(indices, k, series, spread))
        .collect()
}

/// Point `k` of `indices`, its sides running to the neighbouring points.
/// A side of one run is an outlier, not a level: such a point gets p = 1, so the merge
/// drops it (Otava would keep 1, 1 | 5 at p = 0).
fn stats_at(indices: &[usize], k: usize, series: &[f64], spread: bool) -> ChangePoint {
    let from = if k == 0 { 0 } else { indices[k - 1] };
    let to = indices.get(k + 1).copied().unwrap_or(series.len());
    let at = indices[k];
    let mut c = significance(at, &series[from..at], &series[at..to], spread);
    if at - from < 2 || to - at < 2 {
        c.pvalue = 1.0;
    }
    c
}

/// The change point at `index` between `left` and `right`: the t-test on the values, and
/// with `spread` (and three values a side at least) the same test on each value's
/// distance from its side's median (Brown-Forsythe), whichever is stronger, its p-value
/// doubled.
fn significance(index: usize, left: &[f64], right: &[f64], spread: bool) -> ChangePoint {
    let (m1, s1) = mean_std(left);
    let (m2, s2) = mean_std(right);
    let p_mean = t_test(left, right);
    let mut kind = Kind::Mean;
    let mut pvalue = p_mean;
    // Two values a side lie at the same distance from their median: no evidence of spread.
    if spread && left.len() >= 3 && right.len() >= 3 {
        let deviations = |xs: &[f64]| {
            let m = super::stats::median(xs);
            xs.iter().map(|x| (x - m).abs()).collect::<Vec<f64>>()
        };
        let p_spread = t_test(&deviations(left), &deviations(right));
        if p_spread < p_mean {
            kind = Kind::Spread;
        }
        pvalue = (2.0 * p_mean.min(p_spread)).min(1.0);
    }
    ChangePoint {
        index,
        kind,
        mean_before: m1,
        mean_after: m2,
        std_before: s1,
        std_after: s2,
        pvalue,
    }
}

/// Student's two-sample t-test (pooled variance), two-sided p-value, with each side's
/// standard deviation taken over n (as Otava does).
fn t_test(left: &[f64], right: &[f64]) -> f64 {
    let (m1, s1) = mean_std(left);
    let (m2, s2) = mean_std(right);
    let (n1, n2) = (left.len() as f64, right.len() as f64);
    if left.len() + right.len() <= 2 || left.is_empty() || right.is_empty() {
        1.0
    } else {
        let df = n1 + n2 - 2.0;
        let pooled = ((n1 - 1.0) * s1 * s1 + (n2 - 1.0) * s2 * s2) / df;
        let t = (m1 - m2) / (pooled * (1.0 / n1 + 1.0 / n2)).sqrt();
        if t.is_nan() {
            // Two constant sides with the same value: no evidence of a change.
            1.0
        } else if t.is_infinite() {
            0.0
        } else {
            StudentsT::new(0.0, 1.0, df)
                .map(|d| 2.0 * d.sf(t.abs()))
                .unwrap_or(1.0)
        }
    }
}

fn mean_std(xs: &[f64]) -> (f64, f64) {
    if xs.is_empty() {
        return (f64::NAN, 0.0);
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    (mean, if xs.len() >= 2 { var.sqrt() } else { 0.0 })
}

/// E-Divisive within one window: the best candidate over every segment between the
/// points found so far, kept while the t-test calls it significant. Indices are the
/// window's.
fn divisive(w: &[f64], pvalue: f64, spread: bool) -> Vec<usize> {
    let prefix = ColumnPrefix::new(w);
    let mut found: Vec<usize> = Vec::new();
    loop {
        let mut bounds = vec![0];
        bounds.extend(&found);
        bounds.push(w.len());
        let best = bounds
            .windows(2)
            .filter(|b| b[1] - b[0] > 1)
            .filter_map(|b| prefix.candidate(b[0], b[1]))
            .fold(None, |best: Option<(usize, f64)>, c| match best {
                Some(b) if b.1 >= c.1 => Some(b),
                _ => Some(c),
            });
        let Some((tau, _)) = best else { break };
        let k = found.partition_point(|&i| i < tau);
        let from = if k == 0 { 0 } else { found[k - 1] };
        let to = found.get(k).copied().unwrap_or(w.len());
        if significance(tau, &w[from..tau], &w[tau..to], spread).pvalue <= pvalue {
            found.insert(k, tau);
        } else {
            break;
        }
    }
    found
}

/// Column sums of the window's distance matrix |w_i − w_j|, by prefix of rows: the sum of
/// column c over rows [a, b) is `at(b, c) − at(a, c)`. Every Q̂ then costs O(1).
struct ColumnPrefix {
    n: usize,
    sums: Vec<f64>,
}

impl ColumnPrefix {
    fn new(w: &[f64]) -> ColumnPrefix {
        let n = w.len();
        let mut sums = vec![0.0; (n + 1) * n];
        for r in 0..n {
            for c in 0..n {
                sums[(r + 1) * n + c] = sums[r * n + c] + (w[r] - w[c]).abs();
            }
        }
        ColumnPrefix { n, sums }
    }

    fn at(&self, rows: usize, col: usize) -> f64 {
        self.sums[rows * self.n + col]
    }

    /// The split τ of [a, b) maximising Q̂(w[a..τ], w[τ..κ]) over a < τ < κ ≤ b, with Q̂:
    /// 2/(m+n) Σ|x−y| − 2m/((m+n)(n−1)) Σ|x−x'| − 2n/((m+n)(m−1)) Σ|y−y'| for the n
    /// values x before τ and the m values y from τ to κ.
    fn candidate(&self, a: usize, b: usize) -> Option<(usize, f64)> {
        let mut best: Option<(usize, f64)> = None;
        let mut within_x = 0.0;
        for tau in a + 1..b {
            within_x += self.at(tau - 1, tau - 1) - self.at(a, tau - 1);
            let n = (tau - a) as f64;
            let (mut cross, mut within_y) = (0.0, 0.0);
            for kappa in tau + 1..=b {
                let j = kappa - 1;
                cross += self.at(tau, j) - self.at(a, j);
                within_y += self.at(j, j) - self.at(tau, j);
                let m = (kappa - tau) as f64;
                let mut q = 2.0 / (m + n) * cross;
                if n > 1.0 {
                    q -= 2.0 * m / ((m + n) * (n - 1.0)) * within_x;
                }
                if m > 1.0 {
                    q -= 2.0 * n / ((m + n) * (m - 1.0)) * within_y;
                }
                if best.is_none_or(|(_, v)| q > v) {
                    best = Some((tau, q));
                }
            }
        }
        best
    }
}

#[cfg(test)]
pub(crate) mod tests;
