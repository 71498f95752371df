//! One CSV row per record, every scalar field; lists are joined with ';'.

use super::{Exporter, Report};
use crate::record::Record;

pub struct Csv;

/// A byte rate, or an empty cell where there is none (public-key operations).
fn bytes(x: f64) -> String {
    if x.is_nan() {
        String::new()
    } else {
        format!("{x:.0}")
    }
}

const COLUMNS: &[&str] = &[
    "workload",
    "impl",
    "impl_version",
    "variant",
    "library",
    "access",
    "alg",
    "direction",
    "size",
    "threads",
    "throughput_bps",
    "throughput_bps_ci_low",
    "throughput_bps_ci_high",
    "ci_level",
    "per_thread_bps",
    "trials",
    "cpu_user_s",
    "cpu_sys_s",
    "wall_s",
    "bytes",
    "calls",
    "batch",
    "ops_per_s",
    "cpu_load_pct",
    "cpu_user_pct",
    "cpu_sys_pct",
    "cpu_s_per_gb",
    "tsc_cycles_per_byte",
    "scaling_efficiency",
    "spread_pct",
    "noisy",
    "disturbed_trials",
    "others_cpu_pct",
    "notes",
    "run_id",
];

/// A CSV field, quoted when it holds a comma, a quote or a newline.
pub fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(|x| x.to_string()).unwrap_or_default()
}

fn row(r: &Record) -> Vec<String> {
    let join = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.0}"))
            .collect::<Vec<_>>()
            .join(";")
    };
    vec![
        r.workload.clone(),
        r.implementation.clone(),
        r.impl_version.clone(),
        opt(&r.variant),
        opt(&r.library),
        r.access.clone(),
        r.alg.clone(),
        r.direction.clone(),
        r.size.to_string(),
        r.threads.to_string(),
        bytes(r.throughput_bps),
        bytes(r.throughput_bps_ci[0]),
        bytes(r.throughput_bps_ci[1]),
        format!("{:.4}", r.ci_level),
        join(&r.per_thread_bps),
        r.trials.to_string(),
        format!("{:.6}", r.cpu_user_s),
        format!("{:.6}", r.cpu_sys_s),
        format!("{:.6}", r.wall_s),
        r.bytes.to_string(),
        r.calls.to_string(),
        r.batch.to_string(),
        format!("{:.1}", r.ops_per_s),
        format!("{:.1}", r.cpu_load_pct),
        format!("{:.1}", r.cpu_user_pct),
        format!("{:.1}", r.cpu_sys_pct),
        format!("{:.4}", r.cpu_s_per_gb),
        r.tsc_cycles_per_byte
            .map(|c| format!("{c:.3}"))
            .unwrap_or_default(),
        r.scaling_efficiency
            .map(|e| format!("{e:.4}"))
            .unwrap_or_default(),
        format!("{:.2}", r.spread_pct),
        r.noisy.to_string(),
        r.disturbed_trials.to_string(),
        format!("{:.2}", r.others_cpu_pct),
        r.notes.join("; "),
        r.run_id.clone(),
    ]
}

impl Exporter for Csv {
    fn render(&self, report: &Report) -> String {
        let mut out = COLUMNS.join(",");
        out.push('\n');
        for r in &report.records {
            out.push_str(
                &row(r)
                    .iter()
                    .map(|c| quote(c))
                    .collect::<Vec<_>>()
                    .join(","),
            );
            out.push('\n');
        }
        out
    }
}
