//! Two sets of records, point by point: the ratio NEW/BASE of the median throughput with a
//! 95 % bootstrap interval over the trials, a verdict, and the geometric mean per
//! implementation and workload. Pure: records in, numbers out.

use super::model::Rng;
use super::stats::median;
use crate::record::read::AnyRecord;
use serde::Serialize;
use std::collections::BTreeMap;

/// What makes two records the same point: the workload, the implementation label and the
/// workload's own coordinates, in a fixed order (speed: alg, direction, size, threads;
/// tls: suite, content, file size, concurrency, handshake; vpn: tunnel, cipher, protocol,
/// direction, streams).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Identity {
    pub workload: String,
    #[serde(rename = "impl")]
    pub label: String,
    #[serde(flatten)]
    pub keys: BTreeMap<&'static str, KeyValue>,
}

/// A coordinate: numbers sort as numbers (16 before 1024).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(untagged)]
pub enum KeyValue {
    Num(u64),
    Text(String),
}

impl std::fmt::Display for KeyValue {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            KeyValue::Num(n) => write!(f, "{n}"),
            KeyValue::Text(s) => f.write_str(s),
        }
    }
}

impl Identity {
    /// The coordinates as "aes-128-gcm enc 16k x1" for a table.
    pub fn point(&self) -> String {
        let mut parts = Vec::new();
        for (k, v) in &self.keys {
            parts.push(match (*k, v) {
                ("size" | "file_size", KeyValue::Num(n)) => crate::render::size_label(*n),
                ("threads" | "streams", KeyValue::Num(n)) => format!("x{n}"),
                ("concurrency", KeyValue::Num(n)) => format!("c{n}"),
                ("handshake", KeyValue::Text(t)) => {
                    if t == "true" {
                        "handshake".into()
                    } else {
                        continue;
                    }
                }
                _ => v.to_string(),
            });
        }
        parts.join(" ")
    }
}

/// The identity of a record. `label` replaces the record's own label (to match two
/// different labels with `--a`/`--b`).
pub fn identity(rec: &AnyRecord, label: Option<&str>) -> Identity {
    let text = |s: &str| KeyValue::Text(s.to_string());
    let (workload, own, keys): (&str, &str, Vec<(&'static str, KeyValue)>) = match rec {
        AnyRecord::Speed(r) => (
            "speed",
            &r.label,
            vec![
                ("alg", text(&r.alg)),
                ("direction", text(&r.direction)),
                ("size", KeyValue::Num(r.size)),
                ("threads", KeyValue::Num(r.threads as u64)),
            ],
        ),
        AnyRecord::Tls(r) => (
            "tls",
            &r.implementation,
            vec![
                ("suite", text(&r.suite)),
                ("content", text(&r.content)),
                ("file_size", KeyValue::Num(r.file_size)),
                ("concurrency", KeyValue::Num(r.concurrency as u64)),
                ("handshake", text(&r.handshake.to_string())),
            ],
        ),
        AnyRecord::Vpn(r) => (
            "vpn",
            &r.implementation,
            vec![
                ("tunnel", text(&r.tunnel)),
                ("cipher", text(&r.cipher)),
                ("protocol", text(&r.protocol)),
                ("direction", text(&r.direction)),
                ("streams", KeyValue::Num(r.streams as u64)),
            ],
        ),
    };
    Identity {
        workload: workload.into(),
        label: label.unwrap_or(own).to_string(),
        keys: keys.into_iter().collect(),
    }
}

/// The label a record is selected by with `--a`/`--b`.
pub fn label_of(rec: &AnyRecord) -> &str {
    match rec {
        AnyRecord::Speed(r) => &r.label,
        AnyRecord::Tls(r) => &r.implementation,
        AnyRecord::Vpn(r) => &r.implementation,
    }
}

/// Every trial of one point on one side (several runs' trials pooled).
#[derive(Clone, Debug, Default)]
pub struct Trials {
    pub samples: Vec<f64>,
}

impl Trials {
    fn add(&mut self, rec: &AnyRecord) {
        let (samples, median) = match rec {
            AnyRecord::Speed(r) => (&r.samples_bps, r.throughput_bps),
            AnyRecord::Tls(r) => (&r.samples_bps, r.throughput_bps),
            AnyRecord::Vpn(r) => (&r.samples_bps, r.throughput_bps),
        };
        if samples.is_empty() {
            if median.is_finite() {
                self.samples.push(median);
            }
        } else {
            self.samples
                .extend(samples.iter().copied().filter(|x| x.is_finite()));
        }
    }
}

/// One side's points: records picked by `label` (all when None), keyed by identity. With a
/// label, the identity carries `as_label` instead, so that two labels can meet.
pub fn points<'a>(
    records: impl Iterator<Item = &'a AnyRecord>,
    label: Option<&str>,
    as_label: Option<&str>,
) -> BTreeMap<Identity, Trials> {
    let mut out: BTreeMap<Identity, Trials> = BTreeMap::new();
    for rec in records {
        if label.is_some_and(|l| l != label_of(rec)) {
            continue;
        }
        out.entry(identity(rec, as_label)).or_default().add(rec);
    }
    out.retain(|_, t| !t.samples.is_empty());
    out
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
    pub ratio_ci: [f64; 2],
    pub base_trials: usize,
    pub new_trials: usize,
    pub verdict: Verdict,
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

#[derive(Clone, Debug, Default, Serialize)]
pub struct Comparison {
    pub pairs: Vec<Pair>,
    pub only_in_base: Vec<Identity>,
    pub only_in_new: Vec<Identity>,
    pub summary: Vec<Summary>,
}

pub const BOOTSTRAP_ROUNDS: usize = 2000;

/// NEW/BASE of the medians, and the 2.5 and 97.5 percentiles of the same ratio over
/// bootstrap replicates (each side's trials resampled with replacement). One trial on
/// both sides gives a zero-width interval: the threshold alone decides then.
pub fn ratio_ci(base: &[f64], new: &[f64], seed: u64) -> (f64, [f64; 2]) {
    let ratio = median(new) / median(base);
    if base.len() < 2 && new.len() < 2 {
        return (ratio, [ratio, ratio]);
    }
    let mut rng = Rng::new(seed);
    let mut draw = |xs: &[f64], buf: &mut Vec<f64>| {
        buf.clear();
        buf.extend((0..xs.len()).map(|_| xs[rng.below(xs.len())]));
        median(buf)
    };
    let (mut b, mut n) = (Vec::new(), Vec::new());
    let mut ratios: Vec<f64> = (0..BOOTSTRAP_ROUNDS)
        .map(|_| draw(new, &mut n) / draw(base, &mut b))
        .collect();
    ratios.sort_by(f64::total_cmp);
    let at = |p: f64| ratios[((ratios.len() - 1) as f64 * p).round() as usize];
    (ratio, [at(0.025), at(0.975)])
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
    for (i, (id, b)) in base.iter().enumerate() {
        let Some(n) = new.get(id) else {
            out.only_in_base.push(id.clone());
            continue;
        };
        let (ratio, ci) = ratio_ci(&b.samples, &n.samples, i as u64 + 1);
        out.pairs.push(Pair {
            identity: id.clone(),
            new_impl: new_impl.map(str::to_string),
            base_bps: median(&b.samples),
            new_bps: median(&n.samples),
            ratio,
            ratio_ci: ci,
            base_trials: b.samples.len(),
            new_trials: n.samples.len(),
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
