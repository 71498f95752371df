//! Series over time: each point identity on each machine, run against median, with its
//! change points and, for each, what the environment recorded as different on either side
//! (the library, the kernel, cryptobench, the CPU, the governor), or the other processes'
//! CPU where nothing else changed. Pure: rows in, series out.

use super::changepoint::{self, ChangePoint, Kind, Settings};
use super::compare::ratio_ci;
use super::stats::median;
use crate::record::identity::start_ms;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// One stored point, as the store gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct PointRow {
    pub run_id: String,
    pub started_unix: i64,
    pub machine_id: String,
    pub hostname: String,
    pub workload: String,
    pub implementation: String,
    pub impl_version: String,
    pub variant: Option<String>,
    pub label: String,
    pub subject: Option<String>,
    pub size: Option<u64>,
    pub direction: Option<String>,
    pub parallel: Option<u64>,
    /// The point's median throughput (bytes/s, or the workload's unit).
    pub median: f64,
    pub ci: Option<[f64; 2]>,
    pub disturbed: bool,
    pub others_cpu_pct: f64,
    /// Its place in its run.
    pub seq: i64,
}

/// A stored point with its text borrowed (as the store hands rows out).
#[derive(Clone, Copy, Debug)]
pub struct PointRef<'a> {
    pub run_id: &'a str,
    pub started_unix: i64,
    pub machine_id: &'a str,
    pub hostname: &'a str,
    pub workload: &'a str,
    pub implementation: &'a str,
    pub impl_version: &'a str,
    pub variant: Option<&'a str>,
    pub label: &'a str,
    pub subject: Option<&'a str>,
    pub size: Option<u64>,
    pub direction: Option<&'a str>,
    pub parallel: Option<u64>,
    pub median: f64,
    pub ci: Option<[f64; 2]>,
    pub disturbed: bool,
    pub others_cpu_pct: f64,
    pub seq: i64,
}

impl PointRef<'_> {
    pub fn to_row(self) -> PointRow {
        let own = |s: Option<&str>| s.map(str::to_string);
        PointRow {
            run_id: self.run_id.into(),
            started_unix: self.started_unix,
            machine_id: self.machine_id.into(),
            hostname: self.hostname.into(),
            workload: self.workload.into(),
            implementation: self.implementation.into(),
            impl_version: self.impl_version.into(),
            variant: own(self.variant),
            label: self.label.into(),
            subject: own(self.subject),
            size: self.size,
            direction: own(self.direction),
            parallel: self.parallel,
            median: self.median,
            ci: self.ci,
            disturbed: self.disturbed,
            others_cpu_pct: self.others_cpu_pct,
            seq: self.seq,
        }
    }
}

impl PointRow {
    pub fn as_ref(&self) -> PointRef<'_> {
        PointRef {
            run_id: &self.run_id,
            started_unix: self.started_unix,
            machine_id: &self.machine_id,
            hostname: &self.hostname,
            workload: &self.workload,
            implementation: &self.implementation,
            impl_version: &self.impl_version,
            variant: self.variant.as_deref(),
            label: &self.label,
            subject: self.subject.as_deref(),
            size: self.size,
            direction: self.direction.as_deref(),
            parallel: self.parallel,
            median: self.median,
            ci: self.ci,
            disturbed: self.disturbed,
            others_cpu_pct: self.others_cpu_pct,
            seq: self.seq,
        }
    }
}

/// The environment facts of a run that can explain a change (read from its environment
/// line: only these fields are parsed).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct RunFacts {
    pub cryptobench_version: String,
    pub kernel: String,
    pub cpu: CpuFacts,
    pub frequency: FrequencyFacts,
}

impl From<&crate::record::Environment> for RunFacts {
    fn from(e: &crate::record::Environment) -> RunFacts {
        RunFacts {
            cryptobench_version: e.cryptobench_version.clone(),
            kernel: e.kernel.clone(),
            cpu: CpuFacts {
                model: e.cpu.model.clone(),
            },
            frequency: FrequencyFacts {
                governor: e.frequency.governor.clone(),
            },
        }
    }
}

impl RunFacts {
    /// How much of an environment line `from_head` needs: the facts come first.
    pub const HEAD: usize = 8192;

    /// The facts from the head of an environment line (cut anywhere: each field is read
    /// where its key is, and missing ones stay empty). The line's field order puts them
    /// before the CPU's feature lists and the kernel's crypto tables.
    pub fn from_head(head: &str) -> RunFacts {
        fn field<T: serde::de::DeserializeOwned>(head: &str, key: &str) -> Option<T> {
            let at = head.find(&format!("\"{key}\":"))? + key.len() + 3;
            let mut de = serde_json::Deserializer::from_str(&head[at..]);
            T::deserialize(&mut de).ok()
        }
        RunFacts {
            cryptobench_version: field(head, "cryptobench_version").unwrap_or_default(),
            kernel: field(head, "kernel").unwrap_or_default(),
            cpu: CpuFacts {
                model: field(head, "model").flatten(),
            },
            frequency: FrequencyFacts {
                governor: field(head, "governor").flatten(),
            },
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct CpuFacts {
    pub model: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct FrequencyFacts {
    pub governor: Option<String>,
}

/// What makes points one series: the machine and the point's identity. The label is kept
/// without versions and library paths, so that a library update stays in its series
/// (that is the change to find), while a differently built library (no-asm) or another
/// VPN cipher is its own.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct SeriesKey {
    pub machine_id: String,
    pub workload: String,
    #[serde(rename = "impl")]
    pub implementation: String,
    pub label: String,
    pub variant: Option<String>,
    pub subject: Option<String>,
    pub direction: Option<String>,
    pub size: Option<u64>,
    pub parallel: Option<u64>,
}

impl SeriesKey {
    pub fn of(p: &PointRef) -> SeriesKey {
        let own = |s: Option<&str>| s.map(str::to_string);
        SeriesKey {
            machine_id: p.machine_id.into(),
            workload: p.workload.into(),
            implementation: p.implementation.into(),
            label: stable_label(p.label),
            variant: own(p.variant),
            subject: own(p.subject),
            direction: own(p.direction),
            size: p.size,
            parallel: p.parallel,
        }
    }

    /// "openssl aes-128-gcm enc 16k x1" for a table.
    pub fn point(&self) -> String {
        let mut parts = vec![self.label.clone()];
        // A VPN's label names its tunnel already.
        parts.extend(
            self.subject
                .clone()
                .filter(|s| !self.label.split(' ').any(|w| w == s)),
        );
        parts.extend(self.direction.clone());
        parts.extend(self.size.map(crate::units::size_label));
        parts.extend(self.parallel.map(|n| format!("x{n}")));
        parts.join(" ")
    }
}

/// The hash of `SeriesKey::of(p)`, field by field as the key holds them.
fn key_hash(p: &PointRef) -> u64 {
    use std::hash::{Hash, Hasher};
    // Not keyed: the keys are the user's own data, and this runs once per stored point.
    let mut h = rustc_hash::FxHasher::default();
    p.machine_id.hash(&mut h);
    p.workload.hash(&mut h);
    p.implementation.hash(&mut h);
    for w in stable_words(p.label) {
        w.hash(&mut h);
    }
    p.variant.hash(&mut h);
    p.subject.hash(&mut h);
    p.direction.hash(&mut h);
    p.size.hash(&mut h);
    p.parallel.hash(&mut h);
    h.finish()
}

/// The words `stable_label` keeps.
fn stable_words(label: &str) -> impl Iterator<Item = &str> {
    let label = match label.split_once('@') {
        Some((name, _)) => name,
        None => label,
    };
    label
        .split(' ')
        .filter(|w| !w.chars().next().is_some_and(|c| c.is_ascii_digit()))
}

/// A label without its version words and library path: "openssl 3.5.5 no-asm
/// [isa=no-aesni]" is "openssl no-asm [isa=no-aesni]", "openssl@/x/libcrypto.so" is
/// "openssl".
pub fn stable_label(label: &str) -> String {
    stable_words(label).collect::<Vec<_>>().join(" ")
}

/// One run's value in a series.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TrendPoint {
    pub run_id: String,
    pub started_unix: i64,
    pub median: f64,
    pub ci: Option<[f64; 2]>,
    pub disturbed: bool,
    pub others_cpu_pct: f64,
    /// The library as the point recorded it.
    pub impl_version: String,
}

/// A change point as the user reads it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    /// The first run after the change.
    pub run_id: String,
    pub started_unix: i64,
    pub kind: Kind,
    /// The medians of the runs on either side (to the neighbouring change points).
    pub median_before: f64,
    pub median_after: f64,
    /// after / before − 1, with its 95% interval.
    pub change: f64,
    pub change_ci: [f64; 2],
    pub pvalue: f64,
    /// What the environment recorded as different between the last run before and the
    /// first run after ("library: OpenSSL 3.0.17 → OpenSSL 3.0.18"); empty: nothing.
    pub causes: Vec<String>,
}

/// Where the environment changed between two consecutive runs of a series.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EnvChange {
    pub run_id: String,
    pub started_unix: i64,
    pub what: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Series {
    pub key: SeriesKey,
    pub hostname: String,
    pub points: Vec<TrendPoint>,
    pub changes: Vec<Change>,
    pub env_changes: Vec<EnvChange>,
}

impl Series {
    pub fn latest(&self) -> Option<&TrendPoint> {
        self.points.last()
    }
}

/// The rows grouped into series, each with its change points.
#[cfg(test)]
pub fn series(rows: Vec<PointRow>, facts: &HashMap<String, RunFacts>, s: &Settings) -> Vec<Series> {
    let mut c = Collector::default();
    rows.iter().for_each(|r| c.add(r.as_ref()));
    c.finish(facts, s)
}

/// Points gathered into series as they come, in any order.
#[derive(Default)]
pub struct Collector {
    /// Series by the hash of their key (computed without building the key: a million
    /// points are a million lookups).
    by_key: HashMap<u64, usize>,
    series: Vec<Gathered>,
}

/// A series being gathered: its key, host, and points with their place in their run.
type Gathered = (SeriesKey, String, Vec<(i64, TrendPoint)>);

impl Collector {
    pub fn add(&mut self, r: PointRef) {
        let hash = key_hash(&r);
        let i = match self.by_key.get(&hash) {
            Some(i) => *i,
            None => {
                self.series
                    .push((SeriesKey::of(&r), String::new(), Vec::new()));
                self.by_key.insert(hash, self.series.len() - 1);
                self.series.len() - 1
            }
        };
        let (_, host, points) = &mut self.series[i];
        if host != r.hostname {
            *host = r.hostname.to_string();
        }
        // A run's points of one series usually come together: only its first is kept
        // (`finish` takes care of the others).
        if let Some((seq, last)) = points.last_mut() {
            if last.run_id == r.run_id {
                if r.seq < *seq {
                    *seq = r.seq;
                    last.median = r.median;
                    last.ci = r.ci;
                    last.disturbed = r.disturbed;
                    last.others_cpu_pct = r.others_cpu_pct;
                    last.impl_version = r.impl_version.to_string();
                }
                return;
            }
        }
        points.push((
            r.seq,
            TrendPoint {
                run_id: r.run_id.to_string(),
                started_unix: r.started_unix,
                median: r.median,
                ci: r.ci,
                disturbed: r.disturbed,
                others_cpu_pct: r.others_cpu_pct,
                impl_version: r.impl_version.to_string(),
            },
        ));
    }

    /// Every run a point came from, once.
    pub fn run_ids(&self) -> std::collections::BTreeSet<&str> {
        self.series
            .iter()
            .flat_map(|(_, _, ps)| ps.iter().map(|(_, p)| p.run_id.as_str()))
            .collect()
    }

    /// The series in key order, each oldest run first with one point per run (the first
    /// its run wrote, where a run measured a series twice), and its change points.
    pub fn finish(self, facts: &HashMap<String, RunFacts>, s: &Settings) -> Vec<Series> {
        let mut all: Vec<Series> = self
            .series
            .into_iter()
            .map(|(key, host, mut points)| {
                points.sort_by(|(sa, a), (sb, b)| {
                    let key = |p: &'_ TrendPoint| (p.started_unix, start_ms(&p.run_id));
                    (key(a), &a.run_id, sa).cmp(&(key(b), &b.run_id, sb))
                });
                points.dedup_by(|(_, b), (_, a)| a.run_id == b.run_id);
                let points = points.into_iter().map(|(_, p)| p).collect();
                analyse(key, host, points, facts, s)
            })
            .collect();
        all.sort_by(|a, b| a.key.cmp(&b.key));
        all
    }
}

/// A series' change points (found among its undisturbed runs) and environment changes.
pub fn analyse(
    key: SeriesKey,
    hostname: String,
    points: Vec<TrendPoint>,
    facts: &HashMap<String, RunFacts>,
    s: &Settings,
) -> Series {
    let steady: Vec<&TrendPoint> = points.iter().filter(|p| !p.disturbed).collect();
    let values: Vec<f64> = steady.iter().map(|p| p.median).collect();
    let found = changepoint::detect(&values, s).change_points;
    let changes = found
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let from = if k == 0 { 0 } else { found[k - 1].index };
            let to = found.get(k + 1).map_or(values.len(), |n| n.index);
            change(
                c,
                &values[from..c.index],
                &values[c.index..to],
                &steady,
                facts,
            )
        })
        .collect();
    let env_changes = points
        .windows(2)
        .filter_map(|w| {
            let what = differences(&w[0], &w[1], facts);
            (!what.is_empty()).then(|| EnvChange {
                run_id: w[1].run_id.clone(),
                started_unix: w[1].started_unix,
                what,
            })
        })
        .collect();
    Series {
        key,
        hostname,
        points,
        changes,
        env_changes,
    }
}

fn change(
    c: &ChangePoint,
    before: &[f64],
    after: &[f64],
    steady: &[&TrendPoint],
    facts: &HashMap<String, RunFacts>,
) -> Change {
    let (ratio, ci) = ratio_ci(before, after);
    let (last, first) = (steady[c.index - 1], steady[c.index]);
    let mut causes = differences(last, first, facts);
    if causes.is_empty() {
        causes = noisy(
            before.len(),
            &steady[c.index - before.len()..c.index + after.len()],
        );
    }
    Change {
        run_id: first.run_id.clone(),
        started_unix: first.started_unix,
        kind: c.kind,
        median_before: median(before),
        median_after: median(after),
        change: ratio - 1.0,
        change_ci: [ci[0] - 1.0, ci[1] - 1.0],
        pvalue: c.pvalue,
        causes,
    }
}

/// Where nothing in the environment changed: the other processes' CPU on the two sides,
/// when it differs enough to be the likelier cause.
fn noisy(before: usize, around: &[&TrendPoint]) -> Vec<String> {
    let (b, a) = around.split_at(before.min(around.len()));
    let others =
        |ps: &[&TrendPoint]| median(&ps.iter().map(|p| p.others_cpu_pct).collect::<Vec<_>>());
    let (ob, oa) = (others(b), others(a));
    if (oa - ob).abs() >= 10.0 {
        vec![format!(
            "others' CPU went from {ob:.0}% to {oa:.0}% (median per run): a busier or quieter machine, not a change in what was measured"
        )]
    } else {
        Vec::new()
    }
}

/// What differs between two runs' environments, as "what: before → after".
pub fn differences(
    a: &TrendPoint,
    b: &TrendPoint,
    facts: &HashMap<String, RunFacts>,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut differ = |what: &str, x: &str, y: &str| {
        if x != y && !x.is_empty() && !y.is_empty() {
            out.push(format!("{what}: {x} → {y}"));
        }
    };
    differ("library", &a.impl_version, &b.impl_version);
    if let (Some(fa), Some(fb)) = (facts.get(&a.run_id), facts.get(&b.run_id)) {
        differ("kernel", &fa.kernel, &fb.kernel);
        differ(
            "cryptobench",
            &fa.cryptobench_version,
            &fb.cryptobench_version,
        );
        let opt = |o: &Option<String>| o.clone().unwrap_or_default();
        differ("CPU", &opt(&fa.cpu.model), &opt(&fb.cpu.model));
        differ(
            "governor",
            &opt(&fa.frequency.governor),
            &opt(&fb.frequency.governor),
        );
    }
    out
}

#[cfg(test)]
mod tests;
