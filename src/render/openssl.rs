//! The exact `openssl speed` layout, so that scripts written for it read ours.

use super::{impl_label, rows, sizes, Exporter, Report};
use crate::algorithms::Algorithm;
use crate::record::Record;
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
        let (byte_recs, ops_recs) = super::ops::split(&report.records);
        let mut out = String::new();
        preamble(report, &mut out);
        if !byte_recs.is_empty() {
            bytes_table(&byte_recs, &mut out);
        }
        pkey_blocks(&ops_recs, &report.records, &mut out);
        out
    }
}

/// The public-key blocks of `openssl speed`, in its order (RSA, ECDSA, ECDH, EdDSA),
/// each under its own header, with its printf formats. With more than one
/// implementation (or thread count) each line starts with the implementation's label.
fn pkey_blocks(ops: &[&Record], all: &[Record], out: &mut String) {
    let find = |alg: &str, dir: &str, label: &str, threads: u32| {
        ops.iter()
            .find(|r| {
                r.alg == alg
                    && r.direction == dir
                    && impl_label(r, all) == label
                    && r.threads == threads
            })
            .map(|r| r.ops_per_s)
    };
    let mut lines: Vec<(String, String, u32)> = Vec::new(); // (label, alg, threads)
    for r in ops {
        let key = (impl_label(r, all), r.alg.clone(), r.threads);
        if !lines.contains(&key) {
            lines.push(key);
        }
    }
    let labels: std::collections::BTreeSet<(&str, u32)> =
        lines.iter().map(|(l, _, t)| (l.as_str(), *t)).collect();
    let prefix = |label: &str, threads: u32| match (labels.len() > 1, threads > 1) {
        (false, _) => String::new(),
        (true, false) => format!("{label} "),
        (true, true) => format!("{label} x{threads} "),
    };
    for block in [
        Block::Rsa,
        Block::Ecdsa,
        Block::Ecdh,
        Block::Eddsa,
        Block::Kem,
    ] {
        let mut header = false;
        for alg in Algorithm::ALL.into_iter().filter(|a| block.holds(*a)) {
            for (label, _, threads) in lines.iter().filter(|(_, a, _)| a == alg.name()) {
                if !header {
                    let _ = writeln!(out, "{}", block.header());
                    header = true;
                }
                let p = prefix(label, *threads);
                let (a, b) = block.directions();
                let x = find(alg.name(), a, label, *threads).unwrap_or(0.0);
                let name = alg.openssl_speed_name();
                let pss = if alg.name().ends_with("-pss") {
                    " pss"
                } else {
                    ""
                };
                let t = |r: f64| if r > 0.0 { 1.0 / r } else { 0.0 };
                let _ = match b {
                    None => writeln!(
                        out,
                        "{p}{name:>w$} {:8.4}s {x:8.1}",
                        t(x),
                        w = name.len() + 1
                    ),
                    Some(b) => {
                        let y = find(alg.name(), b, label, *threads).unwrap_or(0.0);
                        if block == Block::Rsa {
                            writeln!(
                                out,
                                "{p}{name}{pss} {:8.6}s {:8.6}s {x:8.1} {y:8.1}",
                                t(x),
                                t(y)
                            )
                        } else {
                            writeln!(
                                out,
                                "{p} {name} {:8.4}s {:8.4}s {x:8.1} {y:8.1}",
                                t(x),
                                t(y)
                            )
                        }
                    }
                };
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    Rsa,
    Ecdsa,
    Ecdh,
    Eddsa,
    /// Not in `openssl speed` 3.0; laid out like its later KEM block.
    Kem,
}

impl Block {
    fn holds(self, alg: Algorithm) -> bool {
        let n = alg.name();
        match self {
            Block::Rsa => n.starts_with("rsa"),
            Block::Ecdsa => n.starts_with("ecdsa"),
            Block::Ecdh => matches!(alg, Algorithm::X25519 | Algorithm::EcdhP256),
            Block::Eddsa => alg == Algorithm::Ed25519,
            Block::Kem => alg == Algorithm::MlKem768,
        }
    }
    fn header(self) -> String {
        match self {
            Block::Rsa => format!("{:18}sign    verify    sign/s verify/s", ""),
            Block::Ecdsa | Block::Eddsa => format!("{:30}sign    verify    sign/s verify/s", ""),
            Block::Ecdh => format!("{:30}op      op/s", ""),
            Block::Kem => format!("{:30}encaps  decaps    encaps/s decaps/s", ""),
        }
    }
    fn directions(self) -> (&'static str, Option<&'static str>) {
        match self {
            Block::Ecdh => ("derive", None),
            Block::Kem => ("encaps", Some("decaps")),
            _ => ("sign", Some("verify")),
        }
    }
}

/// The symmetric table: 1000s of bytes per second per size.
fn bytes_table(recs: &[Record], out: &mut String) {
    let sizes = sizes(recs);
    {
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
    }
}
