//! The default terminal table: MB/s per size, then what a reader must know beneath it.

use super::{impl_label, mbps, rows, size_label, sizes, Exporter, Report};
use crate::plan::ExclusionKind;
use crate::record::Record;
use std::collections::BTreeMap;
use std::fmt::Write;

pub struct Table;

const CELL: usize = 10;

fn header(out: &mut String, label_w: usize, sizes: &[u64]) {
    let _ = write!(
        out,
        "{:<label_w$} {:<18} {:<3} {:>3}",
        "impl", "alg", "dir", "thr"
    );
    for s in sizes {
        let _ = write!(out, " {:>CELL$}", size_label(*s));
    }
    out.push('\n');
}

impl Exporter for Table {
    fn render(&self, report: &Report) -> String {
        let mut out = String::new();
        // Public-key operations have their own table (ops/s, no sizes).
        let (byte_recs, ops_recs) = super::ops::split(&report.records);
        let recs = &byte_recs;
        let sizes = sizes(recs);
        let rows = rows(recs, &sizes);
        let label_w = report
            .records
            .iter()
            .map(|r| impl_label(r, &report.records).len())
            .max()
            .unwrap_or(4)
            .max(4);

        let _ = writeln!(out, "Libraries:");
        let mut seen = Vec::new();
        for r in &report.records {
            let l = impl_label(r, &report.records);
            if !seen.contains(&l) {
                let lib = r
                    .library
                    .as_deref()
                    .map(|p| format!(" ({p})"))
                    .unwrap_or_default();
                let _ = writeln!(out, "  {l:<label_w$}  {}{lib}", r.impl_version);
                seen.push(l);
            }
        }
        out.push('\n');
        if !rows.is_empty() {
            let _ = writeln!(
                out,
                "Throughput in MB/s (10^6 bytes/s), median of trials; ~ marks a noisy point. Columns are bytes per call."
            );
            header(&mut out, label_w, &sizes);
            let mut last_alg = String::new();
            for row in &rows {
                if !last_alg.is_empty() && last_alg != row.alg {
                    out.push('\n');
                }
                last_alg = row.alg.clone();
                let _ = write!(
                    out,
                    "{:<label_w$} {:<18} {:<3} {:>3}",
                    row.label, row.alg, row.direction, row.threads
                );
                for c in &row.cells {
                    let cell = match c {
                        Some(r) => format!(
                            "{}{}",
                            mbps(r.throughput_bps),
                            if r.noisy { "~" } else { "" }
                        ),
                        None => "-".into(),
                    };
                    let _ = write!(out, " {cell:>CELL$}");
                }
                out.push('\n');
            }
            out.push('\n');
            glance(&mut out, recs);
            cpu_table(&mut out, recs, label_w, &sizes);
            if report.show_analysis {
                analysis(&mut out, report);
            }
            scaling(&mut out, report, recs);
        }
        out.push_str(&super::ops::table(&ops_recs, &report.records, false));
        absent(&mut out, report);
        noise(&mut out, &report.records);
        notes(&mut out, &report.records);
        if report.interrupted {
            let _ = writeln!(
                out,
                "Interrupted: {} finished points are shown and were kept.",
                report.records.len()
            );
        }
        out
    }
}

/// Fastest against slowest implementation per algorithm and direction, at the largest
/// size measured: the finding a reader should see first.
fn glance(out: &mut String, recs: &[Record]) {
    let mut by: BTreeMap<(usize, bool, u32), Vec<&Record>> = BTreeMap::new();
    let max_size = recs.iter().map(|r| r.size).max().unwrap_or(0);
    for r in recs.iter().filter(|r| r.size == max_size) {
        let order = crate::algorithms::Algorithm::ALL
            .iter()
            .position(|a| a.name() == r.alg)
            .unwrap_or(99);
        by.entry((order, r.direction != "enc", r.threads))
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
        let separated = best.throughput_bps_ci[0] > worst.throughput_bps_ci[1];
        let thr = if *thr > 1 {
            format!(", {thr} threads")
        } else {
            String::new()
        };
        lines.push(format!(
            "  {} {dir}{thr}: {} {} MB/s is {ratio:.2}x {} {} MB/s{}",
            best.alg,
            impl_label(best, recs),
            mbps(best.throughput_bps),
            impl_label(worst, recs),
            mbps(worst.throughput_bps),
            if separated {
                ""
            } else {
                " (intervals overlap: not a clear difference)"
            }
        ));
    }
    if !lines.is_empty() {
        let _ = writeln!(
            out,
            "At a glance ({} bytes per call), fastest against slowest:",
            max_size
        );
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
        out.push('\n');
    }
}

/// Study 1's table, measured instead of read off `top`: CPU load per size (user + sys
/// of the measuring threads against their wall time), then CPU seconds per GB.
fn cpu_table(out: &mut String, recs: &[Record], label_w: usize, sizes: &[u64]) {
    let any_sys = recs.iter().any(|r| r.cpu_sys_pct >= 0.5);
    let _ = writeln!(
        out,
        "CPU load % of the measuring threads{} (100 = busy all the time):",
        if any_sys { ", user+sys" } else { "" }
    );
    header(out, label_w, sizes);
    let rows = rows(recs, sizes);
    for row in &rows {
        let _ = write!(
            out,
            "{:<label_w$} {:<18} {:<3} {:>3}",
            row.label, row.alg, row.direction, row.threads
        );
        for c in &row.cells {
            let cell = match c {
                Some(r) if any_sys => format!("{:.0}+{:.0}", r.cpu_user_pct, r.cpu_sys_pct),
                Some(r) => format!("{:.0}", r.cpu_load_pct),
                None => "-".into(),
            };
            let _ = write!(out, " {cell:>CELL$}");
        }
        out.push('\n');
    }
    out.push('\n');
    let _ = writeln!(out, "CPU seconds per GB (user+sys):");
    header(out, label_w, sizes);
    for row in &rows {
        let _ = write!(
            out,
            "{:<label_w$} {:<18} {:<3} {:>3}",
            row.label, row.alg, row.direction, row.threads
        );
        for c in &row.cells {
            let cell = match c {
                Some(r) => format!("{:.3}", r.cpu_s_per_gb),
                None => "-".into(),
            };
            let _ = write!(out, " {cell:>CELL$}");
        }
        out.push('\n');
    }
    out.push('\n');
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
fn analysis(out: &mut String, report: &Report) {
    let a = &report.analysis;
    if a.fits.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "Cost per call, t(n) = a + n/B, fitted over sizes (95% bootstrap bounds):"
    );
    for f in &a.fits {
        let fit = &f.fit;
        let _ = writeln!(
            out,
            "  {} {} {}: a = {:.3} us [{:.3}, {:.3}], B = {} MB/s [{}, {}], model within {:.0}% at every size",
            f.path,
            f.alg,
            f.direction,
            fit.overhead_s * 1e6,
            fit.overhead_s_bounds[0] * 1e6,
            fit.overhead_s_bounds[1] * 1e6,
            mbps(fit.bandwidth_bps),
            mbps(fit.bandwidth_bps_bounds[0]),
            mbps(fit.bandwidth_bps_bounds[1]),
            fit.max_rel_error * 100.0
        );
    }
    if !a.crossovers.is_empty() {
        let _ = writeln!(
            out,
            "Crossovers (where the path slower on small messages overtakes):"
        );
    }
    for c in &a.crossovers {
        let other = if c.faster_below == c.a { &c.b } else { &c.a };
        let line = match c.crossover.size_bytes {
            Some(n) => format!(
                "{other} overtakes {} at {} [{}, {}]",
                c.faster_below,
                bytes(n),
                c.crossover.bounds[0]
                    .map(bytes)
                    .unwrap_or_else(|| "?".into()),
                c.crossover.bounds[1]
                    .map(bytes)
                    .unwrap_or_else(|| "never".into()),
            ),
            None => format!("never: {} is faster at every size", c.faster_below),
        };
        let _ = writeln!(
            out,
            "  {} {} {} vs {}: {line}",
            c.alg, c.direction, c.a, c.b
        );
    }
    out.push('\n');
}

fn scaling(out: &mut String, report: &Report, recs: &[Record]) {
    let multi: Vec<&Record> = recs.iter().filter(|r| r.threads > 1).collect();
    if multi.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "Thread scaling (aggregate against threads x one thread):"
    );
    for r in multi {
        let per: Vec<String> = r.per_thread_bps.iter().map(|b| mbps(*b)).collect();
        let eff = r
            .scaling_efficiency
            .map(|e| format!("{:.0}% efficiency", e * 100.0))
            .unwrap_or_else(|| "no 1-thread point to compare".into());
        let _ = writeln!(
            out,
            "  {} {} {} {} B x{}: {} MB/s total, per thread [{}] MB/s, {eff}",
            impl_label(r, recs),
            r.alg,
            r.direction,
            r.size,
            r.threads,
            mbps(r.throughput_bps),
            per.join(", ")
        );
    }
    // The machine the records came from, not the one rendering them.
    let cores = report.environment.cpu["logical_cpus"]
        .as_u64()
        .unwrap_or(u64::MAX);
    if recs.iter().any(|r| r.threads as u64 > cores) {
        let _ = writeln!(
            out,
            "  note: more threads than the {cores} logical CPUs here: they share cores"
        );
    }
    out.push('\n');
}

fn absent(out: &mut String, report: &Report) {
    for u in &report.unavailable {
        let _ = writeln!(out, "Not available: {}: {}", u.name, u.reason);
    }
    let mut not_offered: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for e in report
        .exclusions
        .iter()
        .filter(|e| e.kind == ExclusionKind::NotOffered)
    {
        not_offered
            .entry(&e.implementation)
            .or_default()
            .push(format!("{} ({})", e.alg, e.reason));
    }
    for (imp, algs) in not_offered {
        let _ = writeln!(out, "Not offered by {imp}: {}", algs.join("; "));
    }
    for e in report
        .exclusions
        .iter()
        .filter(|e| e.kind == ExclusionKind::Refused)
    {
        let _ = writeln!(
            out,
            "REFUSED, not timed: {} {}: {}",
            e.implementation, e.alg, e.reason
        );
    }
    let mut sizes: BTreeMap<(String, u64), Vec<String>> = BTreeMap::new();
    for e in report
        .exclusions
        .iter()
        .filter(|e| e.kind == ExclusionKind::SizeUnsupported)
    {
        sizes
            .entry((e.alg.to_string(), e.size.unwrap_or(0) as u64))
            .or_default()
            .push(e.reason.clone());
    }
    for ((alg, size), reasons) in sizes {
        let _ = writeln!(out, "Skipped {alg} at {size} bytes: {}", reasons[0]);
    }
}

fn noise(out: &mut String, recs: &[Record]) {
    let noisy = recs.iter().filter(|r| r.noisy).count();
    let disturbed: u32 = recs.iter().map(|r| r.disturbed_trials).sum();
    let trials: u32 = recs.iter().map(|r| r.trials).sum();
    if noisy > 0 {
        let _ = writeln!(
            out,
            "Warning: {noisy} of {} points are noisy (CI of the median over ±5%, spread over 50%, or a third of trials disturbed); compare them with care, or raise --time.",
            recs.len()
        );
    }
    if disturbed > 0 {
        let _ = writeln!(
            out,
            "Warning: other processes used at least half a core during {disturbed} of {trials} trials."
        );
    }
}

fn notes(out: &mut String, recs: &[Record]) {
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
        let _ = writeln!(out, "Note ({imp}): {n}");
    }
}
