//! Public-key operations: one figure per point (operations/s), no size axis.

use super::impl_label;
use crate::algorithms::Algorithm;
use crate::record::Record;
use std::fmt::Write;

/// Whether a record counts operations (a public-key algorithm) rather than bytes.
pub fn is_ops(r: &Record) -> bool {
    Algorithm::parse(&r.alg).is_some_and(|a| a.kind().is_public_key())
}

/// (byte-rate records, public-key records), each in the order given.
pub fn split(records: &[Record]) -> (Vec<Record>, Vec<&Record>) {
    let bytes = records.iter().filter(|r| !is_ops(r)).cloned().collect();
    let ops = records.iter().filter(|r| is_ops(r)).collect();
    (bytes, ops)
}

fn alg_order(r: &Record) -> usize {
    Algorithm::ALL
        .iter()
        .position(|a| a.name() == r.alg)
        .unwrap_or(usize::MAX)
}

/// Operations/s with a precision that suits the magnitude.
pub fn ops(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// The public-key table: one line per implementation, algorithm, operation and thread
/// count, with the CI, the time per operation and the fastest of each operation marked.
/// `markdown` switches to a Markdown table.
pub fn table(ops_recs: &[&Record], all: &[Record], markdown: bool) -> String {
    let mut out = String::new();
    if ops_recs.is_empty() {
        return out;
    }
    let mut recs: Vec<&Record> = ops_recs.to_vec();
    recs.sort_by_key(|r| (alg_order(r), r.direction.clone(), r.threads));
    let label_w = recs
        .iter()
        .map(|r| impl_label(r, all).len())
        .max()
        .unwrap_or(4)
        .max(4);
    let _ = writeln!(
        out,
        "Public-key operations per second (median of trials, all threads together; * = fastest for the operation; ~ = noisy):"
    );
    if markdown {
        let _ = writeln!(out, "\n| impl | alg | op | threads | ops/s | 95% CI | µs/op per thread | CPU % |\n|---|---|---|---:|---:|---:|---:|---:|");
    } else {
        let _ = writeln!(
            out,
            "{:<label_w$} {:<14} {:<6} {:>3} {:>12} {:>21} {:>12} {:>6}",
            "impl", "alg", "op", "thr", "ops/s", "95% CI", "us/op/thr", "CPU%"
        );
    }
    for r in &recs {
        let best = recs
            .iter()
            .filter(|o| o.alg == r.alg && o.direction == r.direction && o.threads == r.threads)
            .map(|o| o.ops_per_s)
            .fold(f64::MIN, f64::max);
        let peers = recs
            .iter()
            .filter(|o| o.alg == r.alg && o.direction == r.direction && o.threads == r.threads)
            .count();
        let mark = format!(
            "{}{}",
            if peers > 1 && r.ops_per_s == best {
                "*"
            } else {
                ""
            },
            if r.noisy { "~" } else { "" }
        );
        let [lo, hi] = r.ops_per_s_ci.unwrap_or([f64::NAN; 2]);
        let us = r.threads as f64 * 1e6 / r.ops_per_s;
        let label = impl_label(r, all);
        if markdown {
            let _ = writeln!(
                out,
                "| {label} | {} | {} | {} | {}{mark} | {} – {} | {us:.1} | {:.0} |",
                r.alg,
                r.direction,
                r.threads,
                ops(r.ops_per_s),
                ops(lo),
                ops(hi),
                r.cpu_load_pct
            );
        } else {
            let _ = writeln!(
                out,
                "{label:<label_w$} {:<14} {:<6} {:>3} {:>12} {:>21} {us:>12.1} {:>6.0}",
                r.alg,
                r.direction,
                r.threads,
                format!("{}{mark}", ops(r.ops_per_s)),
                format!("[{}, {}]", ops(lo), ops(hi)),
                r.cpu_load_pct
            );
        }
    }
    out.push('\n');
    out
}
