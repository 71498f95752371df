//! The bootstrap distribution of a sample's median, exactly: resampling n trials with
//! replacement and taking the median gives (x_i + x_j) / 2 of the sorted trials with a
//! probability that binomial counts determine. Drawing a replicate's median is then one
//! uniform number and a binary search, not n draws and a sort: the same distribution, at a
//! cost that no longer grows with the trials.

/// A small deterministic generator (xorshift64*): analysis stays pure and repeatable.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545F4914F6CDD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() >> 33) as usize % n.max(1)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Beyond this many trials the table (n^2 pairs) costs more than resampling.
const MAX_TABLE: usize = 64;

/// A table this short is counted through rather than searched.
const SHORT_TABLE: usize = 16;

/// The medians a resample can have and their cumulative probabilities.
#[derive(Clone, Debug)]
pub struct MedianDraw {
    sorted: Vec<f64>,
    /// (median, P(replicate median <= this entry)), in table order; empty above MAX_TABLE.
    table: Vec<(f64, f64)>,
}

impl MedianDraw {
    pub fn new(samples: &[f64]) -> MedianDraw {
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let table = if sorted.len() <= MAX_TABLE {
            cumulative(&sorted)
        } else {
            Vec::new()
        };
        MedianDraw { sorted, table }
    }

    /// The median of one resample with replacement.
    pub fn draw(&self, rng: &mut Rng) -> f64 {
        if let Some(k) = self.draw_index(rng) {
            return self.table[k].0;
        }
        let n = self.sorted.len();
        if n == 0 {
            return f64::NAN;
        }
        let r: Vec<f64> = (0..n).map(|_| self.sorted[rng.below(n)]).collect();
        super::stats::median(&r)
    }

    /// `draw` as the place of its median in `medians`; None (and no random number used)
    /// without a table: then `draw` resamples.
    pub fn draw_index(&self, rng: &mut Rng) -> Option<usize> {
        let last = self.table.last()?;
        let u = rng.unit() * last.1;
        // The entries at or below u: where a binary search lands (the cumulative column
        // only grows), without its unpredictable branches in a short table.
        let k = if self.table.len() <= SHORT_TABLE {
            self.table.iter().filter(|e| e.1 <= u).count()
        } else {
            self.table.partition_point(|e| e.1 <= u)
        };
        Some(k.min(self.table.len() - 1))
    }

    /// The medians a draw can give, in the table's order (none without a table).
    pub fn medians(&self) -> impl Iterator<Item = f64> + '_ {
        self.table.iter().map(|e| e.0)
    }
}

/// P(a Binomial(n, k/n) count >= m): that at least m of n draws fall on the first k
/// sorted trials. Summed term by term (n is at most MAX_TABLE).
fn at_least(n: usize, k: usize, m: usize) -> f64 {
    if m == 0 || k == n {
        return 1.0;
    }
    if k == 0 {
        return 0.0;
    }
    let p = k as f64 / n as f64;
    let (mut term, mut sum) = ((1.0 - p).powi(n as i32), 0.0);
    for j in 0..=n {
        if j >= m {
            sum += term;
        }
        // C(n, j+1) p^(j+1) q^(n-j-1) from C(n, j) p^j q^(n-j).
        term *= (n - j) as f64 / (j + 1) as f64 * p / (1.0 - p);
    }
    sum.min(1.0)
}

/// Every (median, cumulative probability) of a resample of `x` (sorted). Positions are
/// 1-based: N(k) counts draws on positions <= k.
fn cumulative(x: &[f64]) -> Vec<(f64, f64)> {
    let n = x.len();
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut total = 0.0;
    let mut push = |v: f64, p: f64| {
        if p > 0.0 {
            total += p;
            out.push((v, total));
        }
    };
    if n % 2 == 1 {
        // The median is the (m)th smallest draw: P(at position <= k) = P(N(k) >= m).
        let m = n / 2 + 1;
        for k in 1..=n {
            push(x[k - 1], at_least(n, k, m) - at_least(n, k - 1, m));
        }
        return out;
    }
    // Even n = 2m: the mean of the m-th (position I) and (m+1)-th (J) smallest draws.
    // G(i, j) = P(I <= i, J >= j) for i < j = C(n, m) (i/n)^m ((n-j+1)/n)^m: exactly m
    // draws on positions <= i and m on positions >= j.
    let m = n / 2;
    let choose = (1..=m).fold(1.0, |c, i| c * (m + i) as f64 / i as f64);
    let low: Vec<f64> = (0..=n + 1)
        .map(|i| (i.min(n) as f64 / n as f64).powi(m as i32))
        .collect();
    let high: Vec<f64> = (0..=n + 1)
        .map(|j| ((n + 1).saturating_sub(j) as f64 / n as f64).powi(m as i32))
        .collect();
    let g = |i: usize, j: usize| choose * low[i] * high[j];
    for i in 1..=n {
        // I = J = i: P(I = i) less P(I = i, J > i).
        let lower = at_least(n, i, m) - at_least(n, i - 1, m);
        let split = if i < n {
            g(i, i + 1) - g(i - 1, i + 1)
        } else {
            0.0
        };
        push(x[i - 1], lower - split);
        for j in i + 1..=n {
            let p = g(i, j) - g(i - 1, j) - g(i, j + 1) + g(i - 1, j + 1);
            push((x[i - 1] + x[j - 1]) / 2.0, p);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Every resample of `x`, enumerated: the exact distribution of its median.
    fn enumerated(x: &[f64]) -> BTreeMap<u64, f64> {
        let n = x.len();
        let mut out = BTreeMap::new();
        let total = n.pow(n as u32);
        for code in 0..total {
            let mut c = code;
            let r: Vec<f64> = (0..n)
                .map(|_| {
                    let v = x[c % n];
                    c /= n;
                    v
                })
                .collect();
            *out.entry(super::super::stats::median(&r).to_bits())
                .or_insert(0.0) += 1.0 / total as f64;
        }
        out
    }

    fn tabled(x: &[f64]) -> BTreeMap<u64, f64> {
        let mut out = BTreeMap::new();
        let mut before = 0.0;
        for (v, c) in cumulative(x) {
            *out.entry(v.to_bits()).or_insert(0.0) += c - before;
            before = c;
        }
        out
    }

    #[test]
    fn the_table_is_the_enumerated_bootstrap() {
        for x in [
            &[3.0][..],
            &[1.0, 4.0],
            &[1.0, 2.0, 7.0],
            &[1.0, 2.0, 4.0, 8.0],
            &[1.0, 3.0, 9.0, 27.0, 81.0],
            &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0],
            &[1.0, 2.0, 2.0, 5.0, 11.0, 13.0, 17.0],
        ] {
            let (want, got) = (enumerated(x), tabled(x));
            assert_eq!(
                want.keys().collect::<Vec<_>>(),
                got.keys().collect::<Vec<_>>(),
                "{x:?}"
            );
            for (k, p) in &want {
                assert!(
                    (got[k] - p).abs() < 1e-9,
                    "{x:?}: {} {p} {}",
                    f64::from_bits(*k),
                    got[k]
                );
            }
        }
    }

    /// A short table is counted through, a long one searched: both land where a binary
    /// search of the same random number does.
    #[test]
    fn a_draw_lands_where_a_search_does() {
        for x in [
            &[1.0, 2.0, 4.0, 8.0, 16.0][..],
            &[1.0, 2.0, 2.0, 5.0, 11.0, 13.0],
        ] {
            let d = MedianDraw::new(x);
            let (mut a, mut b) = (Rng::new(3), Rng::new(3));
            for _ in 0..10_000 {
                let u = b.unit() * d.table.last().unwrap().1;
                let searched = d.table.partition_point(|e| e.1 <= u).min(d.table.len() - 1);
                assert_eq!(d.draw_index(&mut a), Some(searched), "{x:?} at {u}");
            }
        }
    }

    #[test]
    fn draws_follow_the_table_and_large_samples_resample() {
        let x = [1.0, 2.0, 4.0, 8.0, 16.0];
        let d = MedianDraw::new(&x);
        let mut rng = Rng::new(7);
        let n = 20000;
        let at_4 = (0..n).filter(|_| d.draw(&mut rng) == 4.0).count() as f64 / n as f64;
        assert!((at_4 - tabled(&x)[&4f64.to_bits()]).abs() < 0.02, "{at_4}");
        let many: Vec<f64> = (0..100).map(f64::from).collect();
        let d = MedianDraw::new(&many);
        assert!(d.table.is_empty());
        let v = d.draw(&mut rng);
        assert!((0.0..=99.0).contains(&v));
    }
}
