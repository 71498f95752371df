//! The bootstrap distribution of a sample's median, exactly: resampling n trials with
//! replacement and taking the median gives (x_i + x_j) / 2 of the sorted trials with a
//! probability that binomial counts determine. Drawing a replicate's median is then one
//! random number and a look-up in an alias table, not n draws and a sort: the same
//! distribution, at a cost that no longer grows with the trials.

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
    #[cfg(test)]
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Beyond this many trials the table (n^2 pairs) costs more than resampling.
const MAX_TABLE: usize = 64;

/// The medians a resample can have and their cumulative probabilities.
#[derive(Clone, Debug)]
pub struct MedianDraw {
    sorted: Vec<f64>,
    /// (median, P(replicate median <= this entry)), in table order; empty above MAX_TABLE.
    table: Vec<(f64, f64)>,
    /// Walker's alias table over `table`'s entries (Vose's construction): slot k keeps
    /// its own entry for a share `keep / 2^64` of the draws landing on it, the rest go to
    /// entry `alias`. One multiplication draws, where a search's branches cost more than
    /// all the rest of a bootstrap round (most of `report --format json` at scale).
    alias: Vec<Slot>,
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    keep: u64,
    alias: usize,
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
        let alias = alias(&table);
        MedianDraw {
            sorted,
            table,
            alias,
        }
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
    #[inline]
    pub fn draw_index(&self, rng: &mut Rng) -> Option<usize> {
        if self.alias.is_empty() {
            return None;
        }
        // The high word picks a slot uniformly, the low word (uniform within it) whether
        // the slot keeps its entry.
        let x = u128::from(rng.next()) * self.alias.len() as u128;
        let k = (x >> 64) as usize;
        let slot = self.alias[k];
        // A coin no predictor learns: a branch on it would cost more than the draw.
        Some(std::hint::select_unpredictable(
            (x as u64) < slot.keep,
            k,
            slot.alias,
        ))
    }

    /// The medians a draw can give, in the table's order (none without a table).
    pub fn medians(&self) -> impl Iterator<Item = f64> + '_ {
        self.table.iter().map(|e| e.0)
    }
}

/// The alias table of `table`'s entries, each with its share of the last cumulative
/// probability (Vose: slots below their fair share are topped up from one above it).
fn alias(table: &[(f64, f64)]) -> Vec<Slot> {
    let Some(&(_, total)) = table.last() else {
        return Vec::new();
    };
    let m = table.len();
    let mut before = 0.0;
    // Each entry's probability times m: 1 is a slot's fair share.
    let mut share: Vec<f64> = table
        .iter()
        .map(|&(_, c)| {
            let p = (c - before) / total;
            before = c;
            p * m as f64
        })
        .collect();
    let mut slots: Vec<Slot> = (0..m)
        .map(|k| Slot {
            keep: u64::MAX,
            alias: k,
        })
        .collect();
    let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..m).partition(|&k| share[k] < 1.0);
    while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
        small.pop();
        // 2^64 times the share, which is below 1.
        slots[s] = Slot {
            keep: (share[s] * 18_446_744_073_709_551_616.0) as u64,
            alias: l,
        };
        share[l] -= 1.0 - share[s];
        if share[l] < 1.0 {
            large.pop();
            small.push(l);
        }
    }
    // What is left holds a fair share up to rounding: it keeps its entry.
    slots
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

    /// The alias table gives every entry of the table its probability: summed over the
    /// slots (each drawn 1/m of the time, keeping its entry for keep/2^64 of those), to
    /// 1e-12, for odd and even trials, ties, and the longest table.
    #[test]
    fn the_alias_table_draws_each_median_with_its_probability() {
        let long: Vec<f64> = (0..MAX_TABLE).map(|i| (i * i % 17) as f64).collect();
        for x in [
            &[3.0][..],
            &[1.0, 2.0, 4.0, 8.0, 16.0],
            &[1.0, 2.0, 2.0, 5.0, 11.0, 13.0],
            &[7.0; 9],
            &long,
        ] {
            let mut sorted = x.to_vec();
            sorted.sort_by(f64::total_cmp);
            let d = MedianDraw::new(&sorted);
            let m = d.alias.len() as f64;
            assert_eq!(d.alias.len(), d.table.len());
            let mut drawn = vec![0.0; d.table.len()];
            for (k, slot) in d.alias.iter().enumerate() {
                let keep = slot.keep as f64 / 18_446_744_073_709_551_616.0;
                drawn[k] += keep / m;
                drawn[slot.alias] += (1.0 - keep) / m;
            }
            let total = d.table.last().unwrap().1;
            let mut before = 0.0;
            for (k, &(_, c)) in d.table.iter().enumerate() {
                let p = (c - before) / total;
                before = c;
                assert!(
                    (drawn[k] - p).abs() < 1e-12,
                    "{x:?}: entry {k}: {} against {p}",
                    drawn[k]
                );
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
