//! A Markdown table (MB/s per size) for reports and issues.

use super::{impl_label, mbps, rows, size_label, sizes, Exporter, Report};
use std::fmt::Write;

pub struct Markdown;

impl Exporter for Markdown {
    fn render(&self, report: &Report) -> String {
        let (byte_recs, ops_recs) = super::ops::split(&report.records);
        let recs = &byte_recs;
        let sizes = sizes(recs);
        let mut out = String::new();
        out.push_str(&super::ops::table(&ops_recs, &report.records, true));
        let _ = writeln!(
            out,
            "Throughput in MB/s (10^6 bytes/s), median of trials; ~ marks a noisy point.\n"
        );
        let _ = write!(out, "| impl | alg | dir | threads |");
        for s in &sizes {
            let _ = write!(out, " {} B |", size_label(*s));
        }
        out.push('\n');
        let _ = write!(out, "|---|---|---|---:|");
        for _ in &sizes {
            out.push_str("---:|");
        }
        out.push('\n');
        for row in rows(recs, &sizes) {
            let _ = write!(
                out,
                "| {} | {} | {} | {} |",
                row.label, row.alg, row.direction, row.threads
            );
            for c in &row.cells {
                let cell = match c {
                    Some(r) => format!(
                        "{}{}",
                        mbps(r.throughput_bps),
                        if r.noisy { "~" } else { "" }
                    ),
                    None => "–".into(),
                };
                let _ = write!(out, " {cell} |");
            }
            out.push('\n');
        }
        let mut seen = Vec::new();
        out.push('\n');
        for r in &report.records {
            let l = impl_label(r, &report.records);
            if !seen.contains(&l) {
                let _ = writeln!(out, "- **{l}**: {}", r.impl_version);
                seen.push(l);
            }
        }
        for e in &report.exclusions {
            if e.kind == crate::plan::ExclusionKind::Refused {
                let _ = writeln!(
                    out,
                    "- **refused** {} {}: {}",
                    e.implementation, e.alg, e.reason
                );
            }
        }
        out
    }
}
