//! The exact `openssl speed` layout, so that scripts written for it read ours.

use super::{impl_label, rows, sizes, Exporter, Report};
use crate::algorithms::Algorithm;
use std::fmt::Write;

pub struct OpensslSpeed;

/// The header lines `openssl speed` prints before its table, taken from the first
/// OpenSSL build in the environment.
fn preamble(report: &Report, out: &mut String) {
    let lib = report
        .environment
        .libraries
        .iter()
        .find(|l| l.get("impl").and_then(|v| v.as_str()) == Some("openssl"));
    let Some(lib) = lib else {
        let _ = writeln!(
            out,
            "version: cryptobench {}",
            report.environment.cryptobench_version
        );
        return;
    };
    let version = lib.get("version").and_then(|v| v.as_str()).unwrap_or("");
    let _ = writeln!(out, "version: {}", super::short_version(version));
    let d = lib.get("details");
    let field = |k: &str| {
        d.and_then(|d| d.get(k))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    for (key, prefix) in [
        ("built_on", "built on: "),
        ("bn_options", "options: "),
        ("cflags", "compiler: "),
        ("cpu_info", "CPUINFO: "),
    ] {
        if let Some(v) = field(key) {
            if v.starts_with(prefix.trim_end()) {
                let _ = writeln!(out, "{v}");
            } else {
                let _ = writeln!(out, "{prefix}{v}");
            }
        }
    }
}

impl Exporter for OpensslSpeed {
    fn render(&self, report: &Report) -> String {
        let recs = &report.records;
        let sizes = sizes(recs);
        let mut out = String::new();
        preamble(report, &mut out);
        let _ = writeln!(
            out,
            "The 'numbers' are in 1000s of bytes per second processed."
        );
        let _ = write!(out, "type        ");
        for s in &sizes {
            let _ = write!(out, "{s:7} bytes");
        }
        out.push('\n');
        for row in rows(recs, &sizes) {
            let alg = Algorithm::parse(&row.alg)
                .map(|a| a.openssl_speed_name())
                .unwrap_or("?");
            let first = row.cells.iter().flatten().next().copied();
            let label = match first {
                Some(r) => impl_label(r, recs),
                None => row.label.clone(),
            };
            let mut name = format!("{label} {alg}");
            if Algorithm::parse(&row.alg).is_some_and(|a| a.directions().len() > 1) {
                name = format!("{name} {}", row.direction);
            }
            if row.threads > 1 {
                name = format!("{name} x{}", row.threads);
            }
            let _ = write!(out, "{name:<13}");
            for c in &row.cells {
                // openssl speed prints 0.00 for a size it did not run.
                let v = c.map(|r| r.throughput_bps).unwrap_or(0.0);
                if v > 10000.0 {
                    let _ = write!(out, " {:11.2}k", v / 1e3);
                } else {
                    let _ = write!(out, " {v:11.2} ");
                }
            }
            out.push('\n');
        }
        out
    }
}
