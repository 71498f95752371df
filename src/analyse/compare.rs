//! Two sets of records, point by point: the ratio NEW/BASE of the median throughput with a
//! 95 % interval from order statistics, a verdict, and the geometric mean per
//! implementation and workload. The unit is the run (its median) when a side has several
//! runs of a point, else the one run's trials. Pure: records in, numbers out.

use super::stats::median;
pub use crate::record::identity::{identity, label_of, Identity};
use crate::record::read::AnyRecord;
use serde::Serialize;
use std::collections::BTreeMap;

/// One point on one side: the values compared (each run's median when several runs
/// measured it, else the one run's trials) and how many trials they came from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trials {
    pub values: Vec<f64>,
    pub runs: usize,
    pub trials: usize,
}

/// A record's trials (its median when it kept none), finite ones only.
fn samples(rec: &AnyRecord) -> impl Iterator<Item = f64> + '_ {
    let samples = rec.samples_bps();
    let median = samples.is_empty().then(|| rec.throughput_bps());
    samples
        .iter()
        .copied()
        .chain(median)
        .filter(|x| x.is_finite())
}

/// One side's points: records picked by `label` (all when None), keyed by identity. With a
/// label, the identity carries `as_label` instead, so that two labels can meet. Records of
/// one run at one point pool their trials. (Commands read run by run into `Points`.)
#[cfg(test)]
pub fn points<'a>(
    records: impl Iterator<Item = &'a AnyRecord>,
    label: Option<&str>,
    as_label: Option<&str>,
) -> BTreeMap<Identity, Trials> {
    let mut by_run: BTreeMap<&'a str, Vec<&'a AnyRecord>> = BTreeMap::new();
    for rec in records {
        by_run.entry(rec.run_id()).or_default().push(rec);
    }
    let mut side = Points::new(label, as_label);
    for (run_id, recs) in by_run {
        side.add_run(run_id, recs.into_iter());
    }
    side.finish()
}

/// `points`, run by run: what a side of a year of runs holds is a few numbers per point
/// and run (each run's median once a point has two), not its records.
pub struct Points<'l> {
    label: Option<&'l str>,
    as_label: Option<&'l str>,
    run_ids: Vec<String>,
    by_id: BTreeMap<Identity, Pooled>,
}

/// One point's values so far: the one run's trials, or each run's median (with the run's
/// place in `run_ids`).
#[derive(Default)]
struct Pooled {
    first: (usize, Vec<f64>),
    medians: Vec<(usize, f64)>,
    trials: usize,
}

impl<'l> Points<'l> {
    pub fn new(label: Option<&'l str>, as_label: Option<&'l str>) -> Self {
        Points {
            label,
            as_label,
            run_ids: Vec::new(),
            by_id: BTreeMap::new(),
        }
    }

    /// Every record of one run (no run comes twice).
    pub fn add_run<'a>(&mut self, run_id: &str, records: impl Iterator<Item = &'a AnyRecord>) {
        let mut this: BTreeMap<Identity, Vec<f64>> = BTreeMap::new();
        for rec in records {
            if self.label.is_some_and(|l| l != label_of(rec)) {
                continue;
            }
            this.entry(identity(rec, self.as_label))
                .or_default()
                .extend(samples(rec));
        }
        let run = self.run_ids.len();
        self.run_ids.push(run_id.to_string());
        for (id, values) in this.into_iter().filter(|(_, v)| !v.is_empty()) {
            let p = self.by_id.entry(id).or_default();
            if p.trials == 0 {
                p.trials = values.len();
                p.first = (run, values);
                continue;
            }
            p.trials += values.len();
            if p.medians.is_empty() {
                let (at, first) = std::mem::take(&mut p.first);
                p.medians.push((at, median(&first)));
            }
            p.medians.push((run, median(&values)));
        }
    }

    /// Each point's values: its one run's trials, or its runs' medians in the order of
    /// their ids.
    pub fn finish(self) -> BTreeMap<Identity, Trials> {
        let run_ids = self.run_ids;
        self.by_id
            .into_iter()
            .map(|(id, mut p)| {
                let (values, runs) = if p.medians.is_empty() {
                    (p.first.1, 1)
                } else {
                    p.medians.sort_by(|a, b| run_ids[a.0].cmp(&run_ids[b.0]));
                    let n = p.medians.len();
                    (p.medians.into_iter().map(|(_, m)| m).collect(), n)
                };
                let trials = p.trials;
                (
                    id,
                    Trials {
                        values,
                        runs,
                        trials,
                    },
                )
            })
            .collect()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Improved,
    Regressed,
    Unchanged,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Regressed => "regressed",
            Verdict::Unchanged => "unchanged",
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Pair {
    #[serde(flatten)]
    pub identity: Identity,
    /// The new side's label when `--b` differs from `--a`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_impl: Option<String>,
    pub base_bps: f64,
    pub new_bps: f64,
    pub ratio: f64,
    /// null when neither side has an interval (one trial each): no interval is claimed.
    pub ratio_ci: Option<[f64; 2]>,
    pub base_trials: usize,
    pub new_trials: usize,
    /// Runs on each side: with several, each run's median is one value of the interval.
    pub base_runs: usize,
    pub new_runs: usize,
    pub verdict: Verdict,
}

impl Pair {
    /// The interval, or the ratio itself where there is none (for drawing).
    pub fn bounds(&self) -> [f64; 2] {
        self.ratio_ci.unwrap_or([self.ratio, self.ratio])
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    #[serde(rename = "impl")]
    pub label: String,
    pub workload: String,
    pub geomean_ratio: f64,
    pub points: usize,
    pub regressed: usize,
    pub improved: usize,
}

#[derive(Clone, Debug, Default)]
pub struct Comparison {
    pub pairs: Vec<Pair>,
    pub only_in_base: Vec<Identity>,
    pub only_in_new: Vec<Identity>,
    pub summary: Vec<Summary>,
}

/// NEW/BASE of the medians with a 95 % interval for it (Bonett and Price, 2020): each
/// side's standard error of the log median from the order statistics around its median,
/// the ratio's interval exp(ln ratio +- 1.96 sqrt(se_base^2 + se_new^2)). Linear in the
/// values (a sort each), unlike a bootstrap. A side of one value adds no error; one value
/// on both sides gives a zero-width interval: the threshold alone decides then.
pub fn ratio_ci(base: &[f64], new: &[f64]) -> (f64, [f64; 2]) {
    let ratio = median(new) / median(base);
    let se = log_median_se(base).hypot(log_median_se(new));
    if se == 0.0 || se.is_nan() {
        return (ratio, [ratio, ratio]);
    }
    let z = normal_quantile(0.975);
    let ln = ratio.ln();
    (ratio, [(ln - z * se).exp(), (ln + z * se).exp()])
}

/// Standard error of ln(median) from the values (Price and Bonett, 2001): the spread of
/// the order statistics a and n-a+1 (a = round(n/2 - sqrt n), at least 1) on the log
/// scale, divided by twice the normal quantile of their binomial coverage. 0 for one value.
pub fn log_median_se(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 2 {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let a = ((n as f64 / 2.0 - (n as f64).sqrt()).round() as usize).max(1);
    let below = statrs::distribution::Binomial::new(0.5, n as u64)
        .map(|b| statrs::distribution::DiscreteCDF::cdf(&b, a as u64 - 1))
        .unwrap_or(f64::NAN);
    (v[n - a].ln() - v[a - 1].ln()) / (2.0 * normal_quantile(1.0 - below))
}

fn normal_quantile(p: f64) -> f64 {
    use statrs::distribution::{ContinuousCDF, Normal};
    Normal::standard().inverse_cdf(p)
}

/// Improved or regressed only when the interval excludes 1 and the ratio is beyond the
/// threshold (a fraction: 0.05 = 5 %).
pub fn verdict(ratio: f64, ci: [f64; 2], threshold: f64) -> Verdict {
    if ci[0] > 1.0 && ratio > 1.0 + threshold {
        Verdict::Improved
    } else if ci[1] < 1.0 && ratio < 1.0 - threshold {
        Verdict::Regressed
    } else {
        Verdict::Unchanged
    }
}

pub fn geomean(xs: impl Iterator<Item = f64>) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for x in xs.filter(|x| x.is_finite() && *x > 0.0) {
        sum += x.ln();
        n += 1;
    }
    if n == 0 {
        f64::NAN
    } else {
        (sum / n as f64).exp()
    }
}

/// Pairs every identity present on both sides. `new_impl` names the new side's label when
/// it was renamed to meet the base's.
pub fn compare(
    base: &BTreeMap<Identity, Trials>,
    new: &BTreeMap<Identity, Trials>,
    threshold: f64,
    new_impl: Option<&str>,
) -> Comparison {
    let mut out = Comparison::default();
    for (id, b) in base {
        let Some(n) = new.get(id) else {
            out.only_in_base.push(id.clone());
            continue;
        };
        let (ratio, ci) = ratio_ci(&b.values, &n.values);
        out.pairs.push(Pair {
            identity: id.clone(),
            new_impl: new_impl.map(str::to_string),
            base_bps: median(&b.values),
            new_bps: median(&n.values),
            ratio,
            ratio_ci: (b.values.len() > 1 || n.values.len() > 1).then_some(ci),
            base_trials: b.trials,
            new_trials: n.trials,
            base_runs: b.runs,
            new_runs: n.runs,
            verdict: verdict(ratio, ci, threshold),
        });
    }
    out.only_in_new = new
        .keys()
        .filter(|k| !base.contains_key(k))
        .cloned()
        .collect();
    let mut groups: BTreeMap<(&str, &str), Vec<&Pair>> = BTreeMap::new();
    for p in &out.pairs {
        groups
            .entry((&p.identity.label, &p.identity.workload))
            .or_default()
            .push(p);
    }
    out.summary = groups
        .into_iter()
        .map(|((label, workload), ps)| Summary {
            label: label.into(),
            workload: workload.into(),
            geomean_ratio: geomean(ps.iter().map(|p| p.ratio)),
            points: ps.len(),
            regressed: ps
                .iter()
                .filter(|p| p.verdict == Verdict::Regressed)
                .count(),
            improved: ps.iter().filter(|p| p.verdict == Verdict::Improved).count(),
        })
        .collect();
    out
}

#[cfg(test)]
mod tests;
