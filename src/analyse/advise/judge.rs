//! How `advise` judges a path: a point over its repeats (`Candidate`), two of them
//! compared into a verdict with its interval, one alone, the limit of a point in words,
//! and the figures as they are quoted.

use super::advice::{Figure, Verdict, THRESHOLD};
use crate::analyse::compare::{log_median_se, ratio_ci, verdict, Verdict as Direction};
use crate::analyse::stats::median;
use crate::record::window::Limit;
use crate::record::Record;
use std::collections::BTreeSet;

/// One point of one path, over its repeats: the values compared and the runs.
#[derive(Clone, Debug)]
pub(super) struct Candidate<'a, R> {
    pub(super) path: String,
    pub(super) name: String,
    pub(super) values: Vec<f64>,
    pub(super) records: Vec<&'a R>,
}

impl<'a, R> Candidate<'a, R> {
    pub(super) fn median(&self) -> f64 {
        median(&self.values)
    }
    pub(super) fn runs(&self) -> BTreeSet<String>
    where
        R: RunId,
    {
        self.records.iter().map(|r| r.id().to_string()).collect()
    }
}

pub(super) trait RunId {
    fn id(&self) -> &str;
}
impl<D> RunId for Record<D> {
    fn id(&self) -> &str {
        &self.run_id
    }
}

/// Two paths compared: the faster named with its ratio and interval when the interval
/// excludes no difference; "no difference beyond the noise" when it does not; "cannot
/// decide" when a side has one value (no interval exists).
pub(super) fn compared<R: RunId>(
    question: &str,
    (a_name, a): (&str, &Candidate<R>),
    (b_name, b): (&str, &Candidate<R>),
    unit: fn(f64) -> String,
) -> Verdict {
    let (ma, mb) = (a.median(), b.median());
    // The faster side on top, so that the ratio reads "faster by".
    let ((fast_name, fast), (slow_name, slow)) = if ma >= mb {
        ((a_name, a), (b_name, b))
    } else {
        ((b_name, b), (a_name, a))
    };
    let (ratio, ci) = ratio_ci(&slow.values, &fast.values);
    let evidence = format!(
        "{fast_name}: {} ({} values); {slow_name}: {} ({} values)",
        unit(fast.median()),
        fast.values.len(),
        unit(slow.median()),
        slow.values.len()
    );
    let runs: Vec<String> = fast.runs().union(&slow.runs()).cloned().collect();
    if fast.values.len() < 2 || slow.values.len() < 2 {
        return Verdict {
            question: question.into(),
            answer: format!(
                "one round cannot decide: {fast_name} measured {} of {slow_name}, with no interval (give more rounds)",
                times(ratio)
            ),
            ratio: Some(ratio),
            ci: None,
            evidence,
            runs,
        };
    }
    let answer = match verdict(ratio, ci, THRESHOLD) {
        Direction::Improved => format!(
            "{fast_name} is faster than {slow_name} by {} [{}, {}]",
            times(ratio),
            times(ci[0]),
            times(ci[1])
        ),
        _ => format!(
            "no difference beyond the noise between {fast_name} and {slow_name}: {} [{}, {}]",
            times(ratio),
            times(ci[0]),
            times(ci[1])
        ),
    };
    Verdict {
        question: question.into(),
        answer,
        ratio: Some(ratio),
        ci: Some(ci),
        evidence,
        runs,
    }
}

/// The only path of its kind that ran: nothing to compare.
pub(super) fn alone<R: RunId>(
    question: &str,
    name: &str,
    c: &Candidate<R>,
    unit: fn(f64) -> String,
) -> Verdict {
    Verdict {
        question: question.into(),
        answer: format!("cannot decide: only {name} ran here, nothing to compare it with"),
        ratio: None,
        ci: None,
        evidence: format!("{name}: {} ({} values)", unit(c.median()), c.values.len()),
        runs: c.runs().into_iter().collect(),
    }
}

/// The limit of a point (its median repeat's), in words, with the record's evidence.
pub(super) fn limit_verdict<R: RunId>(
    question: &str,
    name: &str,
    c: &Candidate<R>,
    limit: impl Fn(&R) -> Option<&Limit>,
) -> Verdict {
    let mid = middle(c);
    let (answer, evidence) = match limit(mid) {
        Some(l) => (
            format!("{name}: {}", limit_words(&l.kind)),
            l.evidence.clone(),
        ),
        None => (
            format!("{name}: not recorded"),
            "the record names no limit (an older record, or the CPU window was not read)".into(),
        ),
    };
    Verdict {
        question: question.into(),
        answer,
        ratio: None,
        ci: None,
        evidence,
        runs: vec![mid.id().to_string()],
    }
}

/// The repeat whose value is nearest the median.
pub(super) fn middle<'a, R>(c: &Candidate<'a, R>) -> &'a R {
    let m = c.median();
    let i = (0..c.records.len().min(c.values.len()))
        .min_by(|&i, &j| (c.values[i] - m).abs().total_cmp(&(c.values[j] - m).abs()))
        .unwrap_or(0);
    c.records[i.min(c.records.len() - 1)]
}

/// What a limit kind means for the user: only "thread" and "softirq" point at the work
/// of the tunnel itself (its crypto among it); the others are not the crypto.
pub fn limit_words(kind: &str) -> String {
    match kind {
        "thread" => "one core: the busiest thread was saturated, more cores cannot help it; the tunnel's own work (its crypto among it) is the limit",
        "softirq" => "one CPU's softirq: the kernel's packet work, not the crypto alone",
        "server" => "the server (nginx's workers) used the CPUs it had",
        "generator" => "the load generator, not the path measured: the figure is a floor",
        "cpus" => "every CPU was busy: tunnel, load and kernel shared them, not the crypto alone",
        "rate_cap" => "a rate cap: repeats agree to 4 digits while no CPU was saturated, not the crypto",
        "none" => "nothing seen saturated: not the CPU, so not the crypto",
        other => return format!("{other} (see the evidence)"),
    }
    .into()
}

/// A point's median with the 95 % interval of the median over its values (none for one).
pub fn median_interval(values: &[f64]) -> (f64, Option<[f64; 2]>) {
    let m = median(values);
    let se = log_median_se(values);
    if values.len() < 2 || se == 0.0 || !se.is_finite() {
        return (m, None);
    }
    let z = 1.959_963_984_540_054;
    (m, Some([(m.ln() - z * se).exp(), (m.ln() + z * se).exp()]))
}

pub(super) fn figure<R: RunId>(
    what: &str,
    c: &Candidate<R>,
    limit: impl Fn(&R) -> Option<&Limit>,
) -> Figure {
    let (value, ci) = median_interval(&c.values);
    Figure {
        what: what.into(),
        path: format!("{} {}", c.path, c.name),
        value: value * 8.0 / 1e6,
        unit: "Mbit/s".into(),
        ci: ci.map(|[l, h]| [l * 8.0 / 1e6, h * 8.0 / 1e6]),
        limit: limit(middle(c)).map(|l| l.kind.clone()),
    }
}

pub(super) trait CpuPerGb {
    fn cpu(&self) -> Option<f64>;
}
impl<D> CpuPerGb for Record<D> {
    fn cpu(&self) -> Option<f64> {
        self.cpu_s_per_gb
    }
}

/// Bytes per second as Mbit/s.
pub fn mbit(bps: f64) -> String {
    format!("{:.0} Mbit/s", bps * 8.0 / 1e6)
}

pub fn times(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}x")
    } else {
        "n/a".into()
    }
}
