//! `cryptobench compare BASE NEW`: two results files (or two labels of one file) point by
//! point, with a verdict per point, the geometric mean per implementation, the points on
//! one side only and how the environments differ. Never re-runs anything.

use crate::analyse::compare::{self, Comparison, Verdict};
use crate::failure::{Failure, EXIT_MISSING, EXIT_REGRESSED};
use crate::render::model::{Block, Column, Table};
use crate::render::write::html;
use crate::render::{Format, Single};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::PathBuf;

pub mod against_history;
mod side;
use side::Side;

#[derive(clap::Args)]
pub struct CompareArgs {
    /// The baseline: a results file (JSON Lines written with --output), or runs of the
    /// store: an id, a tag (e.g. baseline), `last`, `last:N` (the newest N), or several
    /// joined by commas. A side of several runs takes one median per run, which on a shared
    /// machine is the honest interval.
    #[arg(value_name = "BASE")]
    pub base: PathBuf,
    /// The results file or runs to judge against it (may be BASE again, with --a and --b).
    /// With BASE `history`: runs of the store, judged against their own past.
    #[arg(value_name = "NEW")]
    pub new: Option<PathBuf>,
    /// Judge NEW against the last N runs of each point on the same machine in the store
    /// (disturbed runs left out), not against one baseline: `compare history last` (N:
    /// 20), or `compare --against-history N last`.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(5..=100000))]
    pub against_history: Option<u64>,
    /// Compare only BASE's records with this label (e.g. openssl).
    #[arg(long, value_name = "LABEL")]
    pub a: Option<String>,
    /// Compare only NEW's records with this label (e.g. 'openssl [isa=no-aesni]').
    #[arg(long, value_name = "LABEL")]
    pub b: Option<String>,
    /// A change under this many percent is "unchanged" even when significant.
    #[arg(long, value_name = "PCT", default_value_t = 5.0, value_parser = threshold)]
    pub threshold: f64,
    /// Exit 3 when any point regressed beyond the threshold, and 4 when points of BASE are
    /// missing from NEW (for CI).
    #[arg(long)]
    pub fail_on_regression: bool,
    /// With --fail-on-regression: points of BASE that NEW lacks do not fail the gate.
    #[arg(long, requires = "fail_on_regression")]
    pub allow_missing: bool,
    /// table, markdown, json or html (with a ratio plot).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// The store BASE and NEW are looked up in when they are run ids, tags or `last`
    /// [default: $CRYPTOBENCH_STORE, else the local one].
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
}

fn threshold(s: &str) -> anyhow::Result<f64> {
    (s.trim()
        .trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && (0.0..100.0).contains(v))
        .ok_or_else(|| {
            format!(
                "'{}' is not a percentage from 0 to 100",
                crate::units::shown(s)
            )
        }))
    .map_err(anyhow::Error::msg)
}

pub fn run(args: CompareArgs) -> Result<i32, Failure> {
    // BASE `history` (where no file has that name) judges NEW against the store's past.
    let history = args.base.as_os_str() == "history" && !args.base.exists();
    if history || args.against_history.is_some() {
        let new = match (&args.new, history) {
            (Some(n), true) => n,
            (None, false) => &args.base,
            (Some(_), false) => {
                return Err(Failure::Input(
                    "--against-history judges runs against the store's past, not against BASE: give `compare history NEW --against-history N`".into(),
                ))
            }
            (None, true) => {
                return Err(Failure::Input(
                    "compare history: give NEW, the run(s) to judge (an id, a tag or last)".into(),
                ))
            }
        };
        if args.a.is_some() || args.b.is_some() {
            return Err(Failure::Input(
                "compare history: --a and --b pick labels of two sides; the history is one point's own past: drop them".into(),
            ));
        }
        return against_history::run(against_history::Request {
            new: &new.to_string_lossy(),
            runs: args
                .against_history
                .map_or(against_history::DEFAULT_RUNS, |n| n as usize),
            threshold: args.threshold,
            fail_on_regression: args.fail_on_regression,
            format: args.format,
            store: args.store.as_deref(),
        });
    }
    args.format.offered_by("compare", FORMATS)?;
    let new = args.new.ok_or_else(|| {
        Failure::Input(
            "compare: give BASE and NEW (files or runs of the store), or `compare history NEW`"
                .into(),
        )
    })?;
    // Each flag picks its own side's records only.
    let (a, b) = (args.a, args.b);
    let renamed = (a != b).then_some(b.clone()).flatten();
    let (base, new) = side::read_sides((args.base, a), (new, b), args.store.as_deref())?;
    let (sb, sn) = (&base.schemas, &new.schemas);
    if !sb.is_empty() && !sn.is_empty() && sb != sn {
        return Err(Failure::Input(format!(
            "{} was written with record schema {:?} and {} with {:?}: measurements changed between schemas; compare files of one schema (re-run the older)",
            base.name(),
            sb,
            new.name(),
            sn
        )));
    }
    let result = compare::compare(
        &base.points,
        &new.points,
        args.threshold / 100.0,
        renamed.as_deref(),
    );
    if result.pairs.is_empty() {
        let what = |s: &Side| {
            s.kinds
                .iter()
                .take(6)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(Failure::Input(format!(
            "no common point: {} has {} and {} has {}; compare runs of the same workload, implementation and sizes (or pick labels with --a and --b)",
            base.name(),
            what(&base),
            new.name(),
            what(&new)
        )));
    }
    let differences = environment_differences(&base, &new);
    let tables = || blocks(&base, &new, &result, &differences, args.threshold);
    // The comparison: its tables, as JSON, or a page with the ratio plot over the tables.
    let mut compared = Single {
        blocks: &tables,
        json: &|out| out.value(&json_document(&base, &new, &result, &differences)),
        html: Some(&|body| {
            html::figure(&crate::render::plots::compare::ratio_plot(&result), body);
            html::blocks(&tables(), body);
            format!("cryptobench compare: {}", base_title(&base, &new))
        }),
    };
    crate::shell::show::print(&mut compared, args.format)?;
    let regressed = result.pairs.iter().any(|p| p.verdict == Verdict::Regressed);
    if args.fail_on_regression && regressed {
        return Ok(EXIT_REGRESSED);
    }
    let missing = result.only_in_base.len();
    if args.fail_on_regression && !args.allow_missing && missing > 0 {
        eprintln!(
            "cryptobench: compare: {missing} point(s) of the base are missing from the new side (listed under \"Only in base\"): measure them, or pass --allow-missing"
        );
        return Ok(EXIT_MISSING);
    }
    Ok(0)
}

const FORMATS: &[Format] = &[Format::Table, Format::Json, Format::Markdown, Format::Html];

fn base_title(base: &Side, new: &Side) -> String {
    format!("{} against {}", side_name(new), side_name(base))
}

fn side_name(s: &Side) -> String {
    match &s.label {
        Some(l) => format!("{l} ({})", s.name()),
        None => s.name(),
    }
}

/// Facts of each side's environments that differ between the sides: "field: base values
/// | new values". Several runs on a side list every distinct value.
pub fn environment_differences(base: &Side, new: &Side) -> Vec<String> {
    type Get = fn(&side::ComparedEnvironment) -> Vec<String>;
    let fields: [(&str, Get); 6] = [
        ("CPU", |e| vec![e.cpu.clone().unwrap_or_else(|| "?".into())]),
        ("architecture", |e| vec![e.arch.clone()]),
        ("logical CPUs", |e| vec![e.logical_cpus.to_string()]),
        ("kernel", |e| vec![e.kernel.clone()]),
        ("host", |e| vec![e.hostname.clone()]),
        ("libraries", |e| {
            e.libraries
                .iter()
                .map(|(_, shown, version)| format!("{shown} {version}"))
                .collect()
        }),
    ];
    let values = |s: &Side, get: Get| -> BTreeSet<String> {
        s.runs
            .iter()
            .filter_map(|r| r.facts.as_ref())
            .flat_map(get)
            .collect()
    };
    let mut out = Vec::new();
    for (name, get) in fields {
        let (b, n) = (values(base, get), values(new, get));
        if b.is_empty() || n.is_empty() || b == n {
            continue;
        }
        if name == "libraries" {
            let only_b: Vec<&String> = b.difference(&n).collect();
            let only_n: Vec<&String> = n.difference(&b).collect();
            out.push(format!(
                "libraries: base has {} | new has {}",
                list(&only_b),
                list(&only_n)
            ));
        } else {
            out.push(format!(
                "{name}: {} | {}",
                list(&b.iter().collect::<Vec<_>>()),
                list(&n.iter().collect::<Vec<_>>())
            ));
        }
    }
    out
}

fn list(xs: &[&String]) -> String {
    if xs.is_empty() {
        "nothing else".into()
    } else {
        xs.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
    }
}

fn side_json(s: &Side) -> Value {
    let runs: Vec<Value> = s
        .runs
        .iter()
        .map(|r| {
            let e = r.facts.as_ref();
            json!({
                "run_id": r.run_id,
                "hostname": e.map(|e| &e.hostname),
                "cpu": e.map(|e| &e.cpu),
                "arch": e.map(|e| &e.arch),
                "kernel": e.map(|e| &e.kernel),
                "cryptobench_version": e.map(|e| &e.cryptobench_version),
                "libraries": e.map(|e| e.libraries.iter().map(|(label, _, version)| json!({
                    "label": label, "version": version})).collect::<Vec<_>>()),
            })
        })
        .collect();
    json!({
        "file": s.file.to_string_lossy(),
        "label": s.label,
        "run_ids": s.runs.iter().map(|r| &r.run_id).collect::<Vec<_>>(),
        "environment": runs,
    })
}

fn json_document(base: &Side, new: &Side, c: &Comparison, differences: &[String]) -> Value {
    json!({
        "schema": crate::record::SCHEMA,
        "base": side_json(base),
        "new": side_json(new),
        "environment_differences": differences,
        "pairs": c.pairs,
        "only_in_base": c.only_in_base,
        "only_in_new": c.only_in_new,
        "summary": c.summary,
    })
}

fn pct(r: f64) -> String {
    format!("{:+.1}%", (r - 1.0) * 100.0)
}

fn blocks(
    base: &Side,
    new: &Side,
    c: &Comparison,
    differences: &[String],
    threshold: f64,
) -> Vec<Block> {
    let mut out = vec![Block::Heading(format!(
        "Compare: {}",
        base_title(base, new)
    ))];
    let mut head = vec![
        format!("base: {} (runs {})", side_name(base), run_ids(base)),
        format!("new:  {} (runs {})", side_name(new), run_ids(new)),
        format!(
            "ratio = new/base of the median throughput, with a 95% interval from order statistics (Bonett-Price) over each side's runs (one median per run), or over the trials of a side with one run; improved or regressed only when the interval excludes 1 and the change exceeds {threshold}%"
        ),
    ];
    if differences.is_empty() {
        head.push("environments: the same CPU, kernel, host and libraries".into());
    } else {
        head.push("environments differ (base | new):".into());
        head.extend(differences.iter().map(|d| format!("  {d}")));
    }
    out.push(Block::Lines(head));
    let mut t = Table::new(
        "Per point (MB/s)",
        vec![
            Column::text("workload"),
            Column::text("impl"),
            Column::text("point"),
            Column::num("base"),
            Column::num("new"),
            Column::num("ratio"),
            Column::num("95% interval"),
            Column::num("change"),
            Column::text("verdict"),
        ],
    );
    t.group_by = Some(1);
    for p in &c.pairs {
        let label = match &p.new_impl {
            Some(n) => format!("{} -> {n}", p.identity.label),
            None => p.identity.label.clone(),
        };
        t.push(vec![
            p.identity.workload.clone(),
            label,
            p.identity.point(),
            crate::units::mbps(p.base_bps),
            crate::units::mbps(p.new_bps),
            format!("{:.3}", p.ratio),
            p.ratio_ci
                .map_or_else(|| "-".into(), |[lo, hi]| format!("{lo:.3}-{hi:.3}")),
            pct(p.ratio),
            p.verdict.as_str().into(),
        ]);
    }
    if c.pairs
        .iter()
        .any(|p| p.base_trials < 2 && p.new_trials < 2)
    {
        t.notes.push(
            "points with one trial on each side have no interval: the threshold alone decides"
                .into(),
        );
    }
    out.push(Block::Table(t));
    let mut s = Table::new(
        "Geometric mean of the ratios",
        vec![
            Column::text("workload"),
            Column::text("impl"),
            Column::num("points"),
            Column::num("geomean"),
            Column::num("change"),
            Column::num("regressed"),
            Column::num("improved"),
        ],
    );
    for x in &c.summary {
        s.push(vec![
            x.workload.clone(),
            x.label.clone(),
            x.points.to_string(),
            format!("{:.3}", x.geomean_ratio),
            pct(x.geomean_ratio),
            x.regressed.to_string(),
            x.improved.to_string(),
        ]);
    }
    out.push(Block::Table(s));
    for (name, ids) in [("base", &c.only_in_base), ("new", &c.only_in_new)] {
        if !ids.is_empty() {
            let mut lines = vec![format!("Only in {name} ({} points):", ids.len())];
            lines.extend(
                ids.iter()
                    .map(|i| format!("  {} {} {}", i.workload, i.label, i.point())),
            );
            out.push(Block::Lines(lines));
        }
    }
    out
}

fn run_ids(s: &Side) -> String {
    let ids: Vec<&str> = s.runs.iter().map(|r| r.run_id.as_str()).collect();
    if ids.len() > 3 {
        format!("{}, ... {} in all", ids[..3].join(", "), ids.len())
    } else {
        ids.join(", ")
    }
}
