//! `cryptobench verify`: every selected path against the known answers, Project
//! Wycheproof and the cross-implementation round trip. Exit 0 when nothing failed, 1
//! when any vector failed (each named), 2 on bad input.

use super::paths::{self, PathArgs, Paths, Selection};
use crate::algorithms::Algorithm;
use crate::failure::Failure;
use crate::impls::Unavailable;
use crate::render::model::{Block, Column, Table};
use crate::render::{Format, Single};
use crate::verify::{self, wycheproof, PathCheck, Suite, Tally};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

#[derive(clap::Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub paths: PathArgs,
    /// Output format on stdout: table, json, markdown or csv.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    #[command(flatten)]
    pub dut: crate::dut::DutArgs,
}

/// The verdict of one path on one algorithm, as JSON.
#[derive(Serialize)]
struct PathResult<'a> {
    path: &'a str,
    #[serde(rename = "impl")]
    implementation: &'a str,
    version: String,
    variant: Option<String>,
    passed: usize,
    failed: usize,
    not_applicable: usize,
    #[serde(flatten)]
    check: &'a PathCheck,
}

#[derive(Serialize)]
struct NotOffered<'a> {
    path: &'a str,
    alg: Algorithm,
    reason: String,
}

#[derive(Serialize)]
struct VerifyReport<'a> {
    ok: bool,
    paths: Vec<PathResult<'a>>,
    not_offered: Vec<NotOffered<'a>>,
    unavailable: Vec<Unavailable>,
    /// Vectors no path can take (e.g. key sizes the catalogue lacks).
    uncovered: Vec<String>,
    seconds: f64,
}

const FORMATS: &[Format] = &[Format::Table, Format::Json, Format::Markdown, Format::Csv];

pub fn run(args: VerifyArgs) -> Result<i32, Failure> {
    args.format.offered_by("verify", FORMATS)?;
    if args.dut.named() {
        return crate::dut::passthrough(&args.dut, &args.paths.on_dut());
    }
    let Paths {
        found,
        missing,
        labels,
    } = paths::load(&args.paths)?;
    let Selection {
        impls: selected,
        absent,
        algs,
    } = paths::select(&args.paths, &found, &missing, "verify")?;

    let (checks, not_offered) = verify::check_paths(&found, &selected, &algs, Suite::ALL);
    let report = VerifyReport {
        // A run that checked nothing proves nothing: not ok.
        ok: !checks.is_empty() && checks.iter().all(|c| c.failures().next().is_none()),
        paths: checks
            .iter()
            .map(|c| {
                let imp = found[c.index].as_ref();
                PathResult {
                    path: &labels[c.index],
                    implementation: imp.name(),
                    version: imp.version(),
                    variant: imp.variant(),
                    passed: c.passed(),
                    failed: c.failures().count(),
                    not_applicable: c.not_applicable(),
                    check: c,
                }
            })
            .collect(),
        not_offered: not_offered
            .into_iter()
            .map(|(i, alg, reason)| NotOffered {
                path: &labels[i],
                alg,
                reason,
            })
            .collect(),
        unavailable: absent,
        uncovered: wycheproof::uncovered(&algs),
        // A fold from +0.0: an empty f64 sum is -0.0.
        seconds: checks.iter().fold(0.0, |t, c| t + c.seconds),
    };
    // The verdicts: one table (terminal, Markdown, CSV), or the report as JSON.
    let mut verdicts = Single {
        blocks: &|| vec![Block::Table(table(&report, &algs))],
        json: &|out| out.value(&report),
        html: None,
    };
    crate::shell::show::print(&mut verdicts, args.format)?;
    if report.ok {
        return Ok(0);
    }
    if checks.is_empty() {
        eprintln!(
            "cryptobench: verify: nothing was checked: no selected path offers the selected algorithms (see the notes above): choose others with --impl and --alg"
        );
        return Ok(1);
    }
    let failures: usize = report.paths.iter().map(|p| p.failed).sum();
    let broken: Vec<String> = report
        .paths
        .iter()
        .filter(|p| p.failed > 0)
        .map(|p| format!("{} {}", p.path, p.check.alg))
        .collect();
    eprintln!(
        "cryptobench: verify: {failures} vector(s) failed on {}",
        broken.join(", ")
    );
    Ok(1)
}

/// A count per path label.
type PerPath<'a> = Vec<(&'a str, usize)>;

/// "N on every path" when every path of `alg` counted N, else "N on path, ...".
fn on_paths(report: &VerifyReport, alg: Algorithm, per_path: &[(&str, usize)]) -> String {
    let on_all = report.paths.iter().filter(|p| p.check.alg == alg).count() == per_path.len();
    let first = per_path[0].1;
    if on_all && per_path.iter().all(|(_, n)| *n == first) {
        format!("{first} on every path")
    } else {
        per_path
            .iter()
            .map(|(path, n)| format!("{n} on {path}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// "passed/run" of one suite, "–" when it did not run.
fn cell(t: Option<&Tally>) -> String {
    match t {
        None => "–".into(),
        Some(t) => format!("{}/{}", t.passed, t.passed + t.failed.len()),
    }
}

/// Rows per path and algorithm, then failures, not-applicable reasons and what was not
/// verified, as notes.
fn table(report: &VerifyReport, algs: &[Algorithm]) -> Table {
    let mut table = Table::new(
        "Vectors passed/run per suite; n/a: vectors the path cannot take (reasons below).",
        vec![
            Column::text("path"),
            Column::text("alg"),
            Column::num("known answers"),
            Column::num("wycheproof"),
            Column::text("round trip"),
            Column::num("passed"),
            Column::num("failed"),
            Column::num("n/a"),
            Column::num("ms"),
        ],
    );
    table.group_by = Some(1);
    table.rows = report
        .paths
        .iter()
        .map(|p| {
            let c = p.check;
            let round_trip = match (&c.round_trip, &c.reference) {
                (Some(t), Some(r)) => format!("{} ({r})", cell(Some(t))),
                (t, _) => cell(t.as_ref()),
            };
            vec![
                p.path.to_string(),
                c.alg.labelled(),
                cell(Some(&c.known_answers)),
                cell(c.wycheproof.as_ref()),
                round_trip,
                p.passed.to_string(),
                p.failed.to_string(),
                p.not_applicable.to_string(),
                format!("{:.0}", c.seconds * 1e3),
            ]
        })
        .collect();
    let mut notes = Vec::new();
    for p in report.paths.iter().filter(|p| p.failed > 0) {
        for f in p.check.failures() {
            notes.push(format!("FAILED {} {}: {}", p.path, p.check.alg, f.line()));
        }
    }
    // Not applicable, per algorithm and reason: the same count on every path is one line.
    let mut na: BTreeMap<(Algorithm, &str), PerPath> = BTreeMap::new();
    // Acceptable vectors, per algorithm and outcome, with the flags of those vectors.
    let mut acceptable: BTreeMap<(Algorithm, &str), (PerPath, BTreeSet<&str>)> = BTreeMap::new();
    for p in &report.paths {
        for t in p.check.tallies() {
            for (reason, n) in &t.not_applicable {
                na.entry((p.check.alg, reason.as_str()))
                    .or_default()
                    .push((p.path, *n));
            }
            let mut outcomes: BTreeMap<&str, usize> = BTreeMap::new();
            for (what, n) in &t.acceptable {
                let (flags, outcome) = what.rsplit_once(": ").unwrap_or(("", what));
                *outcomes.entry(outcome).or_default() += n;
                let entry = acceptable.entry((p.check.alg, outcome)).or_default();
                entry.1.extend(flags.split(','));
            }
            for (outcome, n) in outcomes {
                let entry = acceptable.entry((p.check.alg, outcome)).or_default();
                entry.0.push((p.path, n));
            }
        }
    }
    for ((alg, reason), per_path) in na {
        notes.push(format!(
            "not applicable, {alg}: {reason}: {}",
            on_paths(report, alg, &per_path)
        ));
    }
    for ((alg, outcome), (per_path, flags)) in acceptable {
        notes.push(format!(
            "acceptable (either outcome passes), {alg}, {outcome}: {} (flags {})",
            on_paths(report, alg, &per_path),
            flags.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    let mut without: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for a in algs.iter().filter(|_| cfg!(feature = "wycheproof")) {
        if let Some(why) = wycheproof::none_because(*a) {
            without.entry(why).or_default().push(a.name());
        }
    }
    for (why, names) in without {
        notes.push(format!(
            "{}: known answers and round trip only ({why})",
            names.join(", ")
        ));
    }
    if algs.iter().any(|a| a.name().contains("-cbc")) {
        notes.push("aes-*-cbc: Wycheproof's PKCS#5 vectors run with the padding added by verify (the paths do unpadded CBC); its bad-padding vectors are not applicable".into());
    }
    notes.extend(report.uncovered.iter().cloned());
    for n in &report.not_offered {
        notes.push(format!("{} does not offer {}: {}", n.path, n.alg, n.reason));
    }
    for u in &report.unavailable {
        notes.push(format!("{}: not available: {}", u.name, u.reason));
    }
    notes.push(format!(
        "{} path(s) and algorithm(s), {:.2} s; {}",
        report.paths.len(),
        report.seconds,
        if report.ok {
            "nothing failed"
        } else if report.paths.is_empty() {
            "NOTHING CHECKED"
        } else {
            "FAILURES above"
        }
    ));
    table.notes = notes;
    table
}
