//! The exact `openssl speed` layout, so that scripts written for it read ours.

use crate::algorithms::Algorithm;
use crate::record::read::Loaded;
use crate::record::Environment;
use crate::workloads::speed::view::{is_ops, rows, sizes};
use std::fmt::Write;

/// The header lines `openssl speed` prints before its table, taken from the first
/// OpenSSL build in the environment.
fn preamble(env: &Environment, out: &mut String) {
    let lib = env.libraries.iter().find(|l| l.implementation == "openssl");
    let Some(lib) = lib else {
        let _ = writeln!(out, "version: cryptobench {}", env.cryptobench_version);
        return;
    };
    let version = lib.version.as_str();
    let _ = writeln!(out, "version: {}", crate::render::short_version(version));
    let d = &lib.details;
    for (field, prefix) in [
        (&d.built_on, "built on: "),
        (&d.bn_options, "options: "),
        (&d.cflags, "compiler: "),
        (&d.cpu_info, "CPUINFO: "),
    ] {
        if let Some(v) = field {
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
            .filter_map(crate::record::Listed::pick)
            .collect();
        if let Some(env) = &run.environment {
            preamble(env, &mut out);
        }
        render_records(&recs, &mut out);
    }
    out
}

type Rec = crate::record::speed::SpeedRecord;

fn render_records(all: &[&Rec], out: &mut String) {
    let (recs, ops): (Vec<&Rec>, Vec<&Rec>) = all.iter().partition(|r| !is_ops(r));
    if !recs.is_empty() {
        let recs = &recs;
        let sizes = sizes(recs);
        let _ = writeln!(
            out,
            "The 'numbers' are in 1000s of bytes per second processed."
        );
        let mut names = Vec::new();
        for row in rows(recs, &sizes) {
            let alg = row.alg.openssl_speed_name();
            let first = row.cells.iter().flatten().next().copied();
            let label = match first {
                Some(r) => r.label.clone(),
                None => row.label.clone(),
            };
            let mut name = format!("{label} {alg}");
            if row.alg.directions().len() > 1 {
                name = format!("{name} {}", row.direction);
            }
            if row.threads > 1 {
                name = format!("{name} x{}", row.threads);
            }
            if row.alg.is_legacy() {
                name.push_str(" (legacy)");
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
                // openssl speed prints 0.00 for a size it did not run, which reads as a
                // measured zero: a point never measured is "-", as in the table format.
                let Some(v) = c.map(|r| r.throughput_bps) else {
                    let _ = write!(out, " {:>11}  ", "-");
                    continue;
                };
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
    pkey_blocks(&ops, out);
}

/// The public-key blocks of `openssl speed`, in its order (RSA, DSA, ECDSA, ECDH, EdDSA),
/// each under its own header, with its printf formats. With more than one path (or
/// thread count) each line starts with the path's label.
fn pkey_blocks(ops: &[&Rec], out: &mut String) {
    let find = |alg: Algorithm, dir: &str, label: &str, threads: u32| {
        ops.iter()
            .find(|r| {
                r.alg == alg
                    && r.direction.name() == dir
                    && r.label == label
                    && r.threads == threads
            })
            .map(|r| r.ops_per_s)
    };
    let mut lines: Vec<(String, Algorithm, u32)> = Vec::new(); // (label, alg, threads)
    for r in ops {
        let key = (r.label.clone(), r.alg, r.threads);
        if !lines.contains(&key) {
            lines.push(key);
        }
    }
    let paths: std::collections::BTreeSet<(&str, u32)> =
        lines.iter().map(|(l, _, t)| (l.as_str(), *t)).collect();
    let prefix = |label: &str, threads: u32| match (paths.len() > 1, threads > 1) {
        (false, _) => String::new(),
        (true, false) => format!("{label} "),
        (true, true) => format!("{label} x{threads} "),
    };
    let per_op = |r: f64| if r > 0.0 { 1.0 / r } else { 0.0 };
    for block in [
        PkeyBlock::Rsa,
        PkeyBlock::Dsa,
        PkeyBlock::Ecdsa,
        PkeyBlock::Ecdh,
        PkeyBlock::Eddsa,
        PkeyBlock::Kem,
    ] {
        let mut header = false;
        for alg in Algorithm::ALL.into_iter().filter(|a| block.holds(*a)) {
            for (label, _, threads) in lines.iter().filter(|(_, a, _)| *a == alg) {
                if !header {
                    let _ = writeln!(out, "{}", block.header());
                    header = true;
                }
                let p = prefix(label, *threads);
                let (a, b) = block.directions();
                // An operation never measured is "-", never a rate of 0.
                let x = find(alg, a, label, *threads);
                let time = |r: Option<f64>, prec: usize| {
                    r.map_or_else(
                        || format!("{:>9}", "-"),
                        |r| format!("{:8.prec$}s", per_op(r)),
                    )
                };
                let rate = |r: Option<f64>| {
                    r.map_or_else(|| format!("{:>8}", "-"), |r| format!("{r:8.1}"))
                };
                let name = alg.openssl_speed_name();
                let _ = match b {
                    None => writeln!(out, "{p} {name} {} {}", time(x, 4), rate(x)),
                    Some(b) => {
                        let y = find(alg, b, label, *threads);
                        if matches!(block, PkeyBlock::Rsa | PkeyBlock::Dsa) {
                            let pss = if alg.name().ends_with("-pss") {
                                " pss"
                            } else {
                                ""
                            };
                            writeln!(
                                out,
                                "{p}{name}{pss} {} {} {} {}",
                                time(x, 6),
                                time(y, 6),
                                rate(x),
                                rate(y)
                            )
                        } else {
                            writeln!(
                                out,
                                "{p} {name} {} {} {} {}",
                                time(x, 4),
                                time(y, 4),
                                rate(x),
                                rate(y)
                            )
                        }
                    }
                };
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PkeyBlock {
    Rsa,
    /// Same layout as RSA's (`dsa %4u bits %8.6fs %8.6fs %8.1f %8.1f`).
    Dsa,
    Ecdsa,
    Ecdh,
    Eddsa,
    /// Not in `openssl speed` 3.0; laid out like its later KEM block.
    Kem,
}

impl PkeyBlock {
    fn holds(self, alg: Algorithm) -> bool {
        match self {
            PkeyBlock::Rsa => alg.name().starts_with("rsa"),
            PkeyBlock::Dsa => matches!(alg, Algorithm::Dsa2048 | Algorithm::Dsa3072),
            PkeyBlock::Ecdsa => alg.name().starts_with("ecdsa"),
            PkeyBlock::Ecdh => matches!(alg, Algorithm::X25519 | Algorithm::EcdhP256),
            // ML-DSA has no block in `openssl speed` 3.0: laid out like EdDSA's.
            PkeyBlock::Eddsa => matches!(alg, Algorithm::Ed25519 | Algorithm::MlDsa65),
            PkeyBlock::Kem => matches!(alg, Algorithm::MlKem768 | Algorithm::X25519MlKem768),
        }
    }
    fn header(self) -> String {
        match self {
            PkeyBlock::Rsa | PkeyBlock::Dsa => {
                format!("{:18}sign    verify    sign/s verify/s", "")
            }
            PkeyBlock::Ecdsa | PkeyBlock::Eddsa => {
                format!("{:30}sign    verify    sign/s verify/s", "")
            }
            PkeyBlock::Ecdh => format!("{:30}op      op/s", ""),
            PkeyBlock::Kem => format!("{:30}encaps  decaps    encaps/s decaps/s", ""),
        }
    }
    fn directions(self) -> (&'static str, Option<&'static str>) {
        match self {
            PkeyBlock::Ecdh => ("derive", None),
            PkeyBlock::Kem => ("encaps", Some("decaps")),
            _ => ("sign", Some("verify")),
        }
    }
}
