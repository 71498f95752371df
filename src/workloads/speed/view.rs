//! How speed records are shown: the MB/s grid per size, then what a reader must know
//! beneath it (glance, CPU load, cost model and crossovers, scaling, what was not
//! measured, noise, notes). Pure functions of the records, used by `speed` and `report`.

use super::grid::{alg_order, is_ops, rows, sizes};
use crate::algorithms::Direction;
use crate::analyse::crossover::MIN_SIZES_FOR_BOUNDS;
use crate::analyse::paths::analyse;
use crate::analyse::precision;
use crate::record::read::Loaded;
use crate::record::speed::{SpeedData, SpeedRecord as Record};
use crate::record::ExclusionKind;
use crate::render::document::{Options, RunView, View};
use crate::render::model::{Block, Column, Table};
use crate::render::plots::Figure;
use crate::units::{mbps, size_label};
use serde_json::Value;
use std::collections::BTreeMap;

pub struct SpeedView;

impl View for SpeedView {
    type Data = SpeedData;

    fn blocks(run: &RunView<SpeedData>, opts: &Options) -> Vec<Block> {
        blocks(run, opts)
    }

    fn records_table(records: &[&Record]) -> Table {
        let mut t = Table::new("", COLUMNS.iter().map(|c| Column::text(c)).collect());
        for r in records {
            t.push(row(r));
        }
        t
    }

    fn analysis(run: &RunView<SpeedData>, opts: &Options) -> Value {
        let mut v = serde_json::to_value(analysis_of(run, opts)).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut v {
            let p = precision::precision(&run.records);
            m.insert(
                "precision".into(),
                serde_json::to_value(p).unwrap_or(Value::Null),
            );
        }
        v
    }

    fn figures(run: &RunView<SpeedData>, opts: &Options) -> Vec<Figure> {
        let pair = opts
            .crossover
            .as_ref()
            .map(|(a, b)| (a.as_str(), b.as_str()));
        let analysis = analyse(&run.records, pair);
        super::plots::figures(&run.records, &analysis, &run.run.run_id)
    }

    fn openssl(doc: &Loaded) -> Option<String> {
        Some(super::openssl::render_runs(doc))
    }
}

fn analysis_of(run: &RunView<SpeedData>, opts: &Options) -> crate::analyse::paths::Analysis {
    let recs: Vec<&Record> = run.records.iter().copied().filter(|r| !is_ops(r)).collect();
    analyse(
        &recs,
        opts.crossover
            .as_ref()
            .map(|(a, b)| (a.as_str(), b.as_str())),
    )
}

/// A grid with one column per size, `cell` filling each measured point.
fn size_grid(title: &str, recs: &[&Record], cell: impl Fn(&Record) -> String) -> Table {
    let sizes = sizes(recs);
    let mut cols = vec![
        Column::text("impl"),
        Column::text("alg"),
        Column::text("dir"),
        Column::num("thr"),
    ];
    cols.extend(sizes.iter().map(|s| Column::num(&size_label(*s))));
    let mut t = Table::new(title, cols);
    t.group_by = Some(1);
    for row in rows(recs, &sizes) {
        let mut cells = vec![
            row.label.clone(),
            row.alg.labelled(),
            row.direction.to_string(),
            row.threads.to_string(),
        ];
        cells.extend(row.cells.iter().map(|c| match c {
            Some(r) => cell(r),
            None => "-".into(),
        }));
        t.push(cells);
    }
    t
}

/// Operations/s with a precision that suits the magnitude.
fn ops(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// Public-key operations: one line per path, algorithm, operation and thread count, with
/// the CI, the time per operation and the fastest of each operation marked.
fn ops_table(recs: &[&Record]) -> Option<Block> {
    if recs.is_empty() {
        return None;
    }
    let mut recs = recs.to_vec();
    recs.sort_by_key(|r| (alg_order(r.alg), r.direction.name(), r.threads));
    let mut t = Table::new(
        "Public-key operations per second (median of trials, all threads together; * = fastest for the operation; ~ = noisy):",
        vec![
            Column::text("impl"),
            Column::text("alg"),
            Column::text("op"),
            Column::num("thr"),
            Column::num("ops/s"),
            Column::num("95% CI"),
            Column::num("us/op/thr"),
            Column::num("CPU%"),
        ],
    );
    t.group_by = Some(1);
    for r in &recs {
        let peers: Vec<f64> = recs
            .iter()
            .filter(|o| o.alg == r.alg && o.direction == r.direction && o.threads == r.threads)
            .map(|o| o.ops_per_s)
            .collect();
        let best = peers.len() > 1 && peers.iter().all(|&x| x <= r.ops_per_s);
        let [lo, hi] = r.ops_per_s_ci.unwrap_or([f64::NAN; 2]);
        t.push(vec![
            r.label.clone(),
            r.alg.to_string(),
            r.direction.to_string(),
            r.threads.to_string(),
            format!(
                "{}{}{}",
                ops(r.ops_per_s),
                if best { "*" } else { "" },
                if r.noisy { "~" } else { "" }
            ),
            format!("[{}, {}]", ops(lo), ops(hi)),
            format!("{:.1}", r.threads as f64 * 1e6 / r.ops_per_s),
            format!("{:.0}", r.cpu_load_pct),
        ]);
    }
    Some(Block::Table(t))
}

fn blocks(run: &RunView<SpeedData>, opts: &Options) -> Vec<Block> {
    // Public-key operations have their own table (ops/s, no sizes).
    let (recs, ops_recs): (Vec<&Record>, Vec<&Record>) =
        run.records.iter().partition(|r| !is_ops(r));
    let recs = &recs;
    let mut out = Vec::new();
    let mut libs = Table::new(
        "Libraries:",
        vec![Column::text("path"), Column::text("version")],
    );
    let mut seen: Vec<&str> = Vec::new();
    for r in &run.records {
        if !seen.contains(&r.label.as_str()) {
            let lib = r
                .library
                .as_deref()
                .map(|p| format!(" ({p})"))
                .unwrap_or_default();
            libs.push(vec![r.label.clone(), format!("{}{lib}", r.impl_version)]);
            seen.push(&r.label);
        }
    }
    if !libs.rows.is_empty() {
        out.push(Block::Table(libs));
    }
    if !recs.is_empty() {
        out.push(Block::Table(size_grid(
            "Throughput in MB/s (10^6 bytes/s), median of trials; ~ marks a noisy point. Columns are bytes per call.",
            recs,
            |r| format!("{}{}", mbps(r.throughput_bps), if r.noisy { "~" } else { "" }),
        )));
        out.extend(glance(recs));
        let any_sys = recs.iter().any(|r| r.cpu_sys_pct >= 0.5);
        out.push(Block::Table(size_grid(
            &format!(
                "CPU load % of the measuring threads{} (100 = busy all the time):",
                if any_sys { ", user+sys" } else { "" }
            ),
            recs,
            |r| {
                if any_sys {
                    format!("{:.0}+{:.0}", r.cpu_user_pct, r.cpu_sys_pct)
                } else {
                    format!("{:.0}", r.cpu_load_pct)
                }
            },
        )));
        out.push(Block::Table(size_grid(
            "CPU seconds per GB (user+sys):",
            recs,
            |r| {
                r.cpu_s_per_gb
                    .map(|c| format!("{c:.3}"))
                    .unwrap_or_else(|| "-".into())
            },
        )));
        let kinds: std::collections::BTreeSet<&str> =
            recs.iter().map(|r| r.access.name()).collect();
        let show_analysis =
            opts.crossover.is_some() || kinds.len() > 1 || recs.iter().any(|r| r.variant.is_some());
        if show_analysis {
            out.extend(analysis_block(
                &analysis_of(run, opts),
                opts.crossover.is_some(),
            ));
        }
        out.extend(scaling(run));
    }
    out.extend(ops_table(&ops_recs));
    let mut tail = absent(run);
    tail.extend(noise(&run.records));
    tail.extend(notes(&run.records));
    if run.interrupted() {
        let unreached = run
            .exclusions
            .iter()
            .filter(|e| e.kind == ExclusionKind::NotReached)
            .count();
        tail.push(format!(
            "Interrupted: {} finished points are shown and were kept; {unreached} group(s) of points were never reached (listed in the end line's exclusions).",
            run.records.len()
        ));
    }
    // Last, where a reader's eye lands when the run ends.
    tail.extend(precision::line(
        &precision::precision(&run.records),
        target_ci(run),
    ));
    if !tail.is_empty() {
        out.push(Block::Lines(tail));
    }
    out
}

/// Fastest against slowest implementation per algorithm and direction, at the largest
/// size measured: the finding a reader should see first.
fn glance(recs: &[&Record]) -> Option<Block> {
    let mut by: BTreeMap<(usize, bool, u32), Vec<&Record>> = BTreeMap::new();
    let max_size = recs.iter().map(|r| r.size).max().unwrap_or(0);
    for r in recs.iter().copied().filter(|r| r.size == max_size) {
        by.entry((alg_order(r.alg), r.direction != Direction::Enc, r.threads))
            .or_default()
            .push(r);
    }
    let mut lines = Vec::new();
    for ((_, _, thr), rs) in &by {
        if rs.len() < 2 {
            continue;
        }
        let dir = &rs[0].direction;
        let best = rs
            .iter()
            .max_by(|a, b| a.throughput_bps.total_cmp(&b.throughput_bps))
            .expect("non-empty");
        let worst = rs
            .iter()
            .min_by(|a, b| a.throughput_bps.total_cmp(&b.throughput_bps))
            .expect("non-empty");
        let ratio = best.throughput_bps / worst.throughput_bps;
        // Overlapping intervals mean the order is not established.
        let separated = best.ci()[0] > worst.ci()[1];
        let thr = if *thr > 1 {
            format!(", {thr} threads")
        } else {
            String::new()
        };
        lines.push(format!(
            "  {} {dir}{thr}: {} {} MB/s is {ratio:.2}x {} {} MB/s{}",
            best.alg,
            best.label,
            mbps(best.throughput_bps),
            worst.label,
            mbps(worst.throughput_bps),
            if separated {
                ""
            } else {
                " (intervals overlap: not a clear difference)"
            }
        ));
    }
    if lines.is_empty() {
        return None;
    }
    lines.insert(
        0,
        format!("At a glance ({max_size} bytes per call), fastest against slowest:"),
    );
    Some(Block::Lines(lines))
}

/// Human bytes for crossover sizes.
fn bytes(n: f64) -> String {
    if n >= 1048576.0 {
        format!("{:.1} MiB", n / 1048576.0)
    } else if n >= 1024.0 {
        format!("{:.1} KiB", n / 1024.0)
    } else {
        format!("{n:.0} B")
    }
}

/// Per-call overhead and streaming bandwidth of each path, and where paths cross.
fn analysis_block(a: &crate::analyse::paths::Analysis, asked: bool) -> Option<Block> {
    if a.fits.is_empty() {
        // Asked for a crossover and got nothing: say why rather than print nothing.
        return asked.then(|| {
            Block::Lines(vec![
                "No cost model and no crossover: each path needs 2 or more sizes at 1 thread (give --sizes with several values)".into(),
            ])
        });
    }
    let mut out: Vec<String> = Vec::new();
    out.push(
        "Cost per call, t(n) = a + n/B, fitted over sizes (95% bootstrap bounds):".to_string(),
    );
    for f in &a.fits {
        let fit = &f.fit;
        // Two parameters through two sizes always fit exactly: no quality to claim.
        let quality = if fit.points >= 3 {
            format!(
                "model within {:.0}% at every size",
                fit.max_rel_error * 100.0
            )
        } else {
            format!(
                "from {} sizes: measure 3 or more to test the model",
                fit.points
            )
        };
        out.push(format!(
            "  {} {} {}: a = {:.3} us [{:.3}, {:.3}], B = {} MB/s [{}, {}], {quality}",
            f.path,
            f.alg,
            f.direction,
            fit.overhead_s * 1e6,
            fit.overhead_s_bounds[0] * 1e6,
            fit.overhead_s_bounds[1] * 1e6,
            mbps(fit.bandwidth_bps),
            mbps(fit.bandwidth_bps_bounds[0]),
            mbps(fit.bandwidth_bps_bounds[1]),
        ));
    }
    if !a.crossovers.is_empty() {
        out.push("Crossovers (where the path slower on small messages overtakes):".to_string());
    }
    for c in &a.crossovers {
        let other = c.other();
        let x = &c.crossover;
        let line = match (x.size_bytes, x.bounds) {
            (Some(n), [None, None]) => format!(
                "{other} overtakes {} at {} (no interval: fewer than {MIN_SIZES_FOR_BOUNDS} sizes)",
                c.faster_below,
                bytes(n),
            ),
            (Some(n), [lo, hi]) => format!(
                "{other} overtakes {} at {} [{}, {}]",
                c.faster_below,
                bytes(n),
                lo.map(bytes).unwrap_or_else(|| "?".into()),
                hi.map(bytes).unwrap_or_else(|| "never".into()),
            ),
            (None, _) => match x.beyond_measured {
                Some(n) => format!(
                    "never: {} ({} to {}); their fitted lines would cross at {}, outside them, which is not a finding",
                    c.faster(),
                    bytes(x.measured[0]),
                    bytes(x.measured[1]),
                    bytes(n)
                ),
                None => format!("never: {}", c.faster()),
            },
        };
        out.push(format!(
            "  {} {} {} vs {}: {line}",
            c.alg, c.direction, c.a, c.b
        ));
    }
    Some(Block::Lines(out))
}

fn scaling(run: &RunView<SpeedData>) -> Option<Block> {
    let recs = &run.records;
    let multi: Vec<&Record> = recs
        .iter()
        .copied()
        .filter(|r| r.threads > 1 && !is_ops(r))
        .collect();
    if multi.is_empty() {
        return None;
    }
    let mut out: Vec<String> = Vec::new();
    out.push("Thread scaling (aggregate against threads x one thread):".to_string());
    for r in multi {
        let per: Vec<String> = r.per_thread_bps.iter().map(|b| mbps(*b)).collect();
        let eff = match (r.scaling_efficiency, r.scaling_efficiency_ci) {
            (Some(e), Some([lo, hi])) => format!(
                "{:.0}% efficiency (CI {:.0}-{:.0}%){}",
                e * 100.0,
                lo * 100.0,
                hi * 100.0,
                if lo > 1.0 {
                    " ~ above 100%: disturbed"
                } else {
                    ""
                }
            ),
            (Some(e), None) => format!("{:.0}% efficiency", e * 100.0),
            (None, _) => "no 1-thread point to compare".into(),
        };
        out.push(format!(
            "  {} {} {} {} B x{}: {} MB/s total, per thread [{}] MB/s, {eff}",
            r.label,
            r.alg,
            r.direction,
            r.size,
            r.threads,
            mbps(r.throughput_bps),
            per.join(", ")
        ));
    }
    // The machine the records came from, not the one rendering them.
    let cores = run
        .environment()
        .map(|e| e.cpu.logical_cpus)
        .unwrap_or(u64::MAX);
    if recs.iter().any(|r| r.threads as u64 > cores) {
        out.push(format!(
            "  note: more threads than the {cores} logical CPUs here: they share cores"
        ));
    }
    Some(Block::Lines(out))
}

fn absent(run: &RunView<SpeedData>) -> Vec<String> {
    let mut out = Vec::new();
    for u in run.unavailable {
        out.push(format!("Not available: {}: {}", u.name, u.reason));
    }
    let mut not_offered: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for e in run
        .exclusions
        .iter()
        .filter(|e| e.kind == ExclusionKind::NotOffered)
    {
        not_offered
            .entry(&e.implementation)
            .or_default()
            .push(format!("{} ({})", alg_of(e), e.reason));
    }
    for (imp, algs) in not_offered {
        out.push(format!("Not offered by {imp}: {}", algs.join("; ")));
    }
    for e in run
        .exclusions
        .iter()
        .filter(|e| e.kind == ExclusionKind::Refused)
    {
        out.push(format!(
            "REFUSED, not timed: {} {}: {}",
            e.implementation,
            alg_of(e),
            e.reason
        ));
    }
    let mut sizes: BTreeMap<(String, u64), Vec<String>> = BTreeMap::new();
    for e in run
        .exclusions
        .iter()
        .filter(|e| e.kind == ExclusionKind::SizeUnsupported)
    {
        sizes
            .entry((
                alg_of(e).to_string(),
                e.point.get("size").and_then(|s| s.as_u64()).unwrap_or(0),
            ))
            .or_default()
            .push(e.reason.clone());
    }
    for ((alg, size), reasons) in sizes {
        out.push(format!("Skipped {alg} at {size} bytes: {}", reasons[0]));
    }
    out
}

/// The run's --target-ci, from its environment.
fn target_ci(run: &RunView<SpeedData>) -> Option<f64> {
    match &run.environment()?.settings.workload {
        crate::record::WorkloadSettings::Speed(s) => Some(s.target_ci_pct),
        _ => None,
    }
}

fn noise(recs: &[&Record]) -> Vec<String> {
    let mut out = Vec::new();
    let noisy = recs.iter().filter(|r| r.noisy).count();
    let disturbed: u32 = recs.iter().map(|r| r.disturbed_trials).sum();
    let trials: u32 = recs.iter().map(|r| r.trials).sum();
    if noisy > 0 {
        out.push(format!("Warning: {noisy} of {} points are noisy (CI of the median over ±5%, the middle 80% of trials spread over 50%, or a third of trials disturbed); compare them with care, or raise --time.",
            recs.len()
        ));
    }
    if disturbed > 0 {
        out.push(format!("Warning: other processes used at least half a core during {disturbed} of {trials} trials."
        ));
    }
    out
}

fn notes(recs: &[&Record]) -> Vec<String> {
    let mut out = Vec::new();
    let mut seen: Vec<(String, String)> = Vec::new();
    for r in recs {
        for n in &r.notes {
            let key = (r.implementation.clone(), n.clone());
            if !seen.contains(&key) {
                seen.push(key);
            }
        }
    }
    for (imp, n) in seen {
        out.push(format!("Note ({imp}): {n}"));
    }
    out
}

fn alg_of(e: &crate::record::Exclusion) -> &str {
    e.point.get("alg").and_then(|a| a.as_str()).unwrap_or("?")
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

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(|x| x.to_string()).unwrap_or_default()
}

/// A byte rate, or an empty cell where there is none (public-key operations).
fn bytes_cell(x: f64) -> String {
    if x.is_nan() {
        String::new()
    } else {
        format!("{x:.0}")
    }
}

fn row(r: &Record) -> Vec<String> {
    let join = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.0}"))
            .collect::<Vec<_>>()
            .join(";")
    };
    vec![
        r.workload.to_string(),
        r.implementation.clone(),
        r.impl_version.clone(),
        opt(&r.variant),
        opt(&r.library),
        r.access.name().to_string(),
        r.alg.to_string(),
        r.direction.to_string(),
        r.size.to_string(),
        r.threads.to_string(),
        bytes_cell(r.throughput_bps),
        bytes_cell(r.ci()[0]),
        bytes_cell(r.ci()[1]),
        format!("{:.4}", r.ci_level),
        join(&r.per_thread_bps),
        r.trials.to_string(),
        opt(&r.cpu_user_s),
        opt(&r.cpu_sys_s),
        format!("{:.6}", r.wall_s),
        r.bytes.to_string(),
        r.calls.to_string(),
        r.batch.to_string(),
        format!("{:.1}", r.ops_per_s),
        format!("{:.1}", r.cpu_load_pct),
        format!("{:.1}", r.cpu_user_pct),
        format!("{:.1}", r.cpu_sys_pct),
        opt(&r.cpu_s_per_gb),
        r.tsc_cycles_per_byte
            .map(|c| format!("{c:.3}"))
            .unwrap_or_default(),
        r.scaling_efficiency
            .map(|e| format!("{e:.4}"))
            .unwrap_or_default(),
        format!("{:.2}", r.spread_pct),
        r.noisy.to_string(),
        r.disturbed_trials.to_string(),
        r.others_cpu_pct.map_or_else(String::new, |x| format!("{x:.2}")),
        r.notes.join("; "),
        r.run_id.clone(),
    ]
}
