//! The exact `openssl speed` layout, so that scripts written for it read ours.

use crate::algorithms::Algorithm;
use crate::record::read::{AnyRecord, Loaded};
use crate::record::Environment;
use crate::workloads::speed::view::{rows, sizes};
use std::fmt::Write;

/// The header lines `openssl speed` prints before its table, taken from the first
/// OpenSSL build in the environment.
fn preamble(env: &Environment, out: &mut String) {
    let lib = env
        .libraries
        .iter()
        .find(|l| l.get("impl").and_then(|v| v.as_str()) == Some("openssl"));
    let Some(lib) = lib else {
        let _ = writeln!(out, "version: cryptobench {}", env.cryptobench_version);
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

/// Speed records of every run, in the `openssl speed` layout (one block per run).
pub fn render_runs(doc: &Loaded) -> String {
    let mut out = String::new();
    for run in &doc.runs {
        let recs: Vec<_> = run
            .records
            .iter()
            .filter_map(|r| match r {
                AnyRecord::Speed(s) => Some(s),
                _ => None,
            })
            .collect();
        if let Some(env) = &run.environment {
            preamble(env, &mut out);
        }
        render_records(&recs, &mut out);
    }
    out
}

fn render_records(recs: &[&crate::workloads::speed::record::SpeedRecord], out: &mut String) {
    {
        let sizes = sizes(recs);
        let _ = writeln!(
            out,
            "The 'numbers' are in 1000s of bytes per second processed."
        );
        let mut names = Vec::new();
        for row in rows(recs, &sizes) {
            let alg = Algorithm::parse(&row.alg)
                .map(|a| a.openssl_speed_name())
                .unwrap_or("?");
            let first = row.cells.iter().flatten().next().copied();
            let label = match first {
                Some(r) => r.label.clone(),
                None => row.label.clone(),
            };
            let mut name = format!("{label} {alg}");
            if Algorithm::parse(&row.alg).is_some_and(|a| a.directions().len() > 1) {
                name = format!("{name} {}", row.direction);
            }
            if row.threads > 1 {
                name = format!("{name} x{}", row.threads);
            }
            names.push((name, row));
        }
        // Wide enough for the longest label, so the columns stay aligned.
        let w = names
            .iter()
            .map(|(n, _)| n.chars().count())
            .max()
            .unwrap_or(0)
            .max(12)
            + 1;
        let _ = write!(out, "{:<1$}", "type", w - 1);
        for s in &sizes {
            let _ = write!(out, "{s:7} bytes");
        }
        out.push('\n');
        let mut noisy = Vec::new();
        for (name, row) in names {
            let _ = write!(out, "{:<w$}", crate::render::model::clean(&name));
            for c in &row.cells {
                // openssl speed prints 0.00 for a size it did not run; ~ marks a noisy point.
                let v = c.map(|r| r.throughput_bps).unwrap_or(0.0);
                if v > 10000.0 {
                    let _ = write!(out, " {:11.2}k", v / 1e3);
                } else {
                    let _ = write!(out, " {v:11.2} ");
                }
                if let Some(r) = c.filter(|r| r.noisy) {
                    noisy.push(format!("{} at {} bytes", name.trim_end(), r.size));
                }
            }
            out.push('\n');
        }
        // openssl's columns have no room for a mark: the noisy points are listed below.
        if !noisy.is_empty() {
            let _ = writeln!(out, "~ noisy (compare with care): {}", noisy.join("; "));
        }
    }
}
