//! The exact `openssl speed` layout, so that scripts written for it read ours.

use super::grid::{is_ops, rows, sizes};
use crate::algorithms::Algorithm;
use crate::record::read::Loaded;
use crate::record::Environment;
use std::fmt::Write;

/// The header lines `openssl speed` prints before its table, for each OpenSSL build whose
/// rows follow (by version, in the rows' order; the first build listed when no row is
/// OpenSSL's), so that a 3.5 build's rows are never headed by the system's 3.0.
fn preamble(env: &Environment, recs: &[&Rec], out: &mut String) {
    let openssl = |l: &&crate::record::environment::Library| l.implementation == "openssl";
    let mut builds: Vec<&crate::record::environment::Library> = Vec::new();
    for r in recs.iter().filter(|r| r.implementation == "openssl") {
        let lib = env
            .libraries
            .iter()
            .filter(openssl)
            .find(|l| l.version == r.impl_version);
        if let Some(lib) = lib.filter(|l| !builds.iter().any(|b| b.version == l.version)) {
            builds.push(lib);
        }
    }
    if builds.is_empty() {
        builds.extend(env.libraries.iter().find(openssl));
    }
    if builds.is_empty() {
        let _ = writeln!(out, "version: cryptobench {}", env.cryptobench_version);
    }
    for lib in builds {
        let _ = writeln!(
            out,
            "version: {}",
            crate::render::short_version(&lib.version)
        );
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
            preamble(env, &recs, &mut out);
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

/// The public-key blocks of `openssl speed`, in its order (RSA, DSA, ECDSA, ECDH, EdDSA,
/// and 3.5's KEM and signature blocks), each under its own header, with its printf formats. With more than one path (or
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
    for block in PkeyBlock::ALL {
        let mut header = false;
        for alg in Algorithm::ALL.into_iter().filter(|a| block.holds(*a)) {
            for (label, _, threads) in lines.iter().filter(|(_, a, _)| *a == alg) {
                if !header {
                    let _ = writeln!(out, "{}", block.header());
                    header = true;
                }
                let p = prefix(label, *threads);
                // An operation never measured is "-", never a rate of 0.
                let x: Vec<Option<f64>> = block
                    .directions()
                    .iter()
                    .map(|d| find(alg, d, label, *threads))
                    .collect();
                let (prec, width) = block.widths();
                let times: Vec<String> = x
                    .iter()
                    .map(|r| {
                        r.map_or_else(
                            || format!("{:>9}", "-"),
                            |r| format!("{:8.prec$}s", per_op(r)),
                        )
                    })
                    .collect();
                let rates: Vec<String> = x
                    .iter()
                    .map(|r| {
                        r.map_or_else(|| format!("{:>width$}", "-"), |r| format!("{r:width$.1}"))
                    })
                    .collect();
                let name = alg.openssl_speed_name();
                let head = match block {
                    PkeyBlock::Rsa | PkeyBlock::Dsa if alg.name().ends_with("-pss") => {
                        format!("{name} pss")
                    }
                    PkeyBlock::Rsa | PkeyBlock::Dsa => name.to_string(),
                    PkeyBlock::Ecdsa | PkeyBlock::Eddsa | PkeyBlock::Ecdh => format!(" {name}"),
                    // `%27s %8.6fs %8.6fs %8.6fs %9.1f %9.1f %9.1f`
                    PkeyBlock::Kem | PkeyBlock::Sig => format!("{name:>27}"),
                };
                let _ = writeln!(out, "{p}{head} {} {}", times.join(" "), rates.join(" "));
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
    /// OpenSSL 3.5's KEM block: keygen, encaps, decaps.
    Kem,
    /// OpenSSL 3.5's block for the signatures its providers add (ML-DSA): keygen, sign,
    /// verify (cryptobench does not time ML-DSA key generation: "-").
    Sig,
}

impl PkeyBlock {
    const ALL: [PkeyBlock; 7] = [
        PkeyBlock::Rsa,
        PkeyBlock::Dsa,
        PkeyBlock::Ecdsa,
        PkeyBlock::Ecdh,
        PkeyBlock::Eddsa,
        PkeyBlock::Kem,
        PkeyBlock::Sig,
    ];
    fn holds(self, alg: Algorithm) -> bool {
        match self {
            PkeyBlock::Rsa => alg.name().starts_with("rsa"),
            PkeyBlock::Dsa => matches!(alg, Algorithm::Dsa2048 | Algorithm::Dsa3072),
            PkeyBlock::Ecdsa => alg.name().starts_with("ecdsa"),
            PkeyBlock::Ecdh => matches!(alg, Algorithm::X25519 | Algorithm::EcdhP256),
            PkeyBlock::Eddsa => matches!(alg, Algorithm::Ed25519),
            PkeyBlock::Kem => matches!(alg, Algorithm::MlKem768 | Algorithm::X25519MlKem768),
            PkeyBlock::Sig => matches!(alg, Algorithm::MlDsa65),
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
            PkeyBlock::Kem => format!(
                "{:31}keygen    encaps    decaps keygens/s  encaps/s  decaps/s",
                ""
            ),
            PkeyBlock::Sig => format!(
                "{:31}keygen     signs    verify keygens/s    sign/s  verify/s",
                ""
            ),
        }
    }
    /// `openssl speed`'s decimals of the seconds per operation, and the rates' width.
    fn widths(self) -> (usize, usize) {
        match self {
            PkeyBlock::Rsa | PkeyBlock::Dsa => (6, 8),
            PkeyBlock::Ecdsa | PkeyBlock::Eddsa | PkeyBlock::Ecdh => (4, 8),
            PkeyBlock::Kem | PkeyBlock::Sig => (6, 9),
        }
    }
    /// The operations of a row, in its columns' order.
    fn directions(self) -> &'static [&'static str] {
        match self {
            PkeyBlock::Ecdh => &["derive"],
            PkeyBlock::Kem => &["keygen", "encaps", "decaps"],
            PkeyBlock::Sig => &["keygen", "sign", "verify"],
            _ => &["sign", "verify"],
        }
    }
}
