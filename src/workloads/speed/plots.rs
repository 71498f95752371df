//! Speed figures of one run: throughput against size per path with CI error bars and the
//! fitted a + n/B curves with the crossover marked (one panel per algorithm and
//! direction), CPU seconds per GB against size, and thread scaling against the ideal.

use crate::algorithms::{Algorithm, Direction, Kind};
use crate::analyse::paths::Analysis;
use crate::record::speed::SpeedRecord as Record;
use crate::render::plots::{colour, legend_line, slug, svg, tick_label, Axis, Bars, Drawn, Figure};
use crate::units::{mbps, size_label};
use plotters::prelude::*;

/// Records grouped by (algorithm, direction), in first-seen order.
fn panels<'a>(recs: &[&'a Record]) -> Vec<((Algorithm, Direction), Vec<&'a Record>)> {
    let mut out: Vec<((Algorithm, Direction), Vec<&Record>)> = Vec::new();
    for r in recs {
        let key = (r.alg, r.direction);
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(r),
            None => out.push((key, vec![r])),
        }
    }
    out
}

/// Single-thread points per path label, sorted by size.
fn paths<'a>(recs: &[&'a Record]) -> Vec<(String, Vec<&'a Record>)> {
    let mut out: Vec<(String, Vec<&Record>)> = Vec::new();
    for r in recs.iter().filter(|r| r.threads == 1) {
        match out.iter_mut().find(|(l, _)| *l == r.label) {
            Some((_, v)) => v.push(r),
            None => out.push((r.label.clone(), vec![r])),
        }
    }
    for (_, v) in &mut out {
        v.sort_by_key(|r| r.size);
    }
    out
}

/// What a path does to a message: a digest hashes, an AEAD seals and opens.
fn verb(alg: Algorithm, direction: Direction) -> &'static str {
    match (alg.kind(), direction) {
        (Kind::Hash, _) => "hashes",
        (Kind::Mac, _) => "authenticates",
        (Kind::Aead, Direction::Enc) => "seals",
        (Kind::Aead, _) => "opens",
        (_, Direction::Dec) => "decrypts",
        _ => "encrypts",
    }
}

/// The one size all these points were measured at, if there is only one: then a log axis
/// of size would hold a column of lone dots, and bars per path say it.
fn one_size(recs: &[&Record]) -> Option<u64> {
    let first = recs.first()?.size;
    recs.iter().all(|r| r.size == first).then_some(first)
}

/// Bars of one value per path, for a run at one size, with its 95% interval if any.
fn bars(
    id: String,
    title: String,
    shows: String,
    caption: &str,
    unit: &str,
    ps: &[(String, Vec<&Record>)],
    value: impl Fn(&Record) -> (Option<f64>, Option<[f64; 2]>),
) -> Figure {
    let at: Vec<(Option<f64>, Option<[f64; 2]>)> = ps
        .iter()
        .map(|(_, v)| v.first().map_or((None, None), |r| value(r)))
        .collect();
    let b = Bars {
        categories: ps.iter().map(|(l, _)| l.clone()).collect(),
        series: vec![unit.to_string()],
        values: at.iter().map(|(v, _)| vec![*v]).collect(),
        intervals: at.iter().map(|(_, i)| vec![*i]).collect(),
        references: Vec::new(),
        y_label: unit,
        caption,
    };
    Figure {
        id,
        title,
        shows,
        svg: svg(|root| b.draw(root)),
    }
}

pub fn figures(recs: &[&Record], analysis: &Analysis, run: &str) -> Vec<Figure> {
    let mut out = Vec::new();
    for ((alg, dir), group) in panels(recs) {
        let ps = paths(&group);
        if !ps.is_empty() {
            out.push(throughput(alg, dir, &ps, analysis, run));
            if group.iter().any(|r| r.cpu_s_per_gb.is_some()) {
                out.push(cpu_per_gb(alg, dir, &ps, run));
            }
        }
        if group.iter().any(|r| r.threads > 1) {
            out.push(scaling(alg, dir, &group, run));
        }
    }
    out
}

/// What the throughput panel shows: fastest against slowest at the largest common size,
/// and the crossover when there is one.
fn throughput_finding(
    alg: Algorithm,
    dir: Direction,
    ps: &[(String, Vec<&Record>)],
    analysis: &Analysis,
) -> String {
    let largest = ps
        .iter()
        .filter_map(|(_, v)| v.last().map(|r| r.size))
        .min()
        .unwrap_or(0);
    let at: Vec<Path> = ps
        .iter()
        .filter_map(|(l, v)| {
            v.iter().find(|r| r.size == largest).map(|r| Path {
                label: l,
                bps: r.throughput_bps,
                ci: r.throughput_bps_ci,
            })
        })
        .collect();
    let mut s = match (
        at.iter().max_by(|a, b| a.bps.total_cmp(&b.bps)),
        at.iter().min_by(|a, b| a.bps.total_cmp(&b.bps)),
    ) {
        (Some(f), Some(w)) if at.len() > 1 && w.bps > 0.0 => {
            versus(f, w, verb(alg, dir), alg.name(), &size_label(largest))
        }
        (Some(f), _) => format!(
            "{} {} {alg} at {} MB/s at {}",
            f.label,
            verb(alg, dir),
            mbps(f.bps),
            size_label(largest)
        ),
        _ => format!("no single-thread {alg} points"),
    };
    for c in analysis
        .crossovers
        .iter()
        .filter(|c| c.alg == alg && c.direction == dir)
    {
        let why = match c.crossover.size_bytes {
            Some(_) => format!(
                "95% bounds {}-{}",
                bound(c.crossover.bounds[0]),
                bound(c.crossover.bounds[1])
            ),
            None => "no crossover within them".into(),
        };
        s.push_str(&format!("; {} ({why})", c.faster()));
    }
    s
}

/// One path's median throughput at a size and its 95% interval (none from one trial).
struct Path<'a> {
    label: &'a str,
    bps: f64,
    ci: Option<[f64; 2]>,
}

/// The fastest path against the slowest: a ratio only where their 95% intervals are
/// apart, else that there is no difference beyond noise.
fn versus(fast: &Path, slow: &Path, verb: &str, alg: &str, size: &str) -> String {
    let (f, w) = (fast.label, slow.label);
    let (a, b) = (mbps(fast.bps), mbps(slow.bps));
    match (fast.ci, slow.ci) {
        (Some(fc), Some(sc)) if fc[0] > sc[1] => {
            let ratio = fast.bps / slow.bps;
            // 1.0x would read as no difference: two decimals below 1.1x.
            let ratio = if ratio < 1.1 {
                format!("{ratio:.2}")
            } else {
                format!("{ratio:.1}")
            };
            format!(
                "{f} {verb} {alg} {ratio}x faster than {w} at {size} ({a} against {b} MB/s; the 95% intervals are apart)"
            )
        }
        (Some(_), Some(_)) => format!(
            "{f} {verb} {alg} at {a} MB/s and {w} at {b} at {size}: no difference beyond noise (the 95% intervals overlap)"
        ),
        _ => format!(
            "{f} {verb} {alg} at {a} MB/s and {w} at {b} at {size}: one trial has no interval, so no difference is claimed"
        ),
    }
}

fn bound(b: Option<f64>) -> String {
    b.map(|x| format!("{}", x.round()))
        .unwrap_or_else(|| "none".into())
}

fn throughput(
    alg: Algorithm,
    dir: Direction,
    ps: &[(String, Vec<&Record>)],
    analysis: &Analysis,
    run: &str,
) -> Figure {
    let all: Vec<&Record> = ps.iter().flat_map(|(_, v)| v.iter().copied()).collect();
    let id = slug(&[run, "speed", alg.name(), dir.name(), "throughput"]);
    let shows = throughput_finding(alg, dir, ps, analysis);
    if let Some(size) = one_size(&all) {
        let caption = format!("{alg} {dir}: throughput at {} (1 thread)", size_label(size));
        let title = format!("{caption}: median per path with its 95% interval");
        return bars(id, title, shows, &caption, "MB/s", ps, |r| {
            let ci = r.throughput_bps_ci.map(|[l, h]| [l / 1e6, h / 1e6]);
            (Some(r.throughput_bps / 1e6), ci)
        });
    }
    let x = Axis::sizes(all.iter().map(|r| r.size));
    let (lo, hi) = (x.range.start, x.range.end);
    let y = Axis::linear(all.iter().map(|r| r.ci()[1] / 1e6), 1.0);
    let ymax = y.range.end;
    let caption = format!("{alg} {dir}: throughput against size (1 thread)");
    let draw = |root: DrawingArea<SVGBackend, plotters::coord::Shift>| -> Drawn {
        let mut chart = ChartBuilder::on(&root)
            .caption(&caption, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(x.clone(), y.clone())?;
        chart
            .configure_mesh()
            .x_desc("bytes per call (log)")
            .y_desc("MB/s (median, 95% CI)")
            .y_label_formatter(&|y| tick_label(*y))
            .x_label_formatter(&|x| size_label(x.round() as u64))
            .draw()?;
        for (i, (label, v)) in ps.iter().enumerate() {
            let c = colour(i);
            let pts: Vec<(f64, f64)> = v
                .iter()
                .map(|r| (r.size as f64, r.throughput_bps / 1e6))
                .collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))?
                .label(label.as_str())
                .legend(legend_line(c.stroke_width(2)));
            chart.draw_series(v.iter().map(|r| {
                let [l, h] = r.ci();
                ErrorBar::new_vertical(
                    r.size as f64,
                    l / 1e6,
                    r.throughput_bps / 1e6,
                    h / 1e6,
                    c.filled(),
                    6,
                )
            }))?;
            // Noisy points get a hollow ring: the mark the tables show as "~".
            chart.draw_series(v.iter().filter(|r| r.noisy || r.disturbed).map(|r| {
                Circle::new(
                    (r.size as f64, r.throughput_bps / 1e6),
                    6,
                    c.stroke_width(1),
                )
            }))?;
            if let Some(f) = analysis
                .fits
                .iter()
                .find(|f| f.path == *label && f.alg == alg && f.direction == dir)
            {
                let (a, b) = (f.fit.overhead_s, f.fit.bandwidth_bps);
                let curve: Vec<(f64, f64)> = (0..=60)
                    .map(|k| lo * (hi / lo).powf(k as f64 / 60.0))
                    .map(|n| (n, n / (a + n / b) / 1e6))
                    .filter(|(_, y)| y.is_finite() && *y >= 0.0 && *y <= ymax)
                    .collect();
                chart.draw_series(DashedLineSeries::new(curve, 4, 4, c.stroke_width(1)))?;
            }
        }
        for c in analysis
            .crossovers
            .iter()
            .filter(|c| c.alg == alg && c.direction == dir)
        {
            let Some(n) = c.crossover.size_bytes.filter(|n| *n > lo && *n < hi) else {
                continue;
            };
            // The 95% bounds shaded only where both exist (a replicate that never crosses
            // leaves the interval open: the label says "none").
            if let [Some(bl), Some(bh)] = c.crossover.bounds {
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(bl.max(lo), 0.0), (bh.min(hi), ymax)],
                    BLACK.mix(0.06).filled(),
                )))?;
            }
            chart
                .draw_series(LineSeries::new(
                    vec![(n, 0.0), (n, ymax)],
                    BLACK.stroke_width(1),
                ))?
                .label(format!(
                    "{} / {} cross at {} B (95%: {}-{})",
                    c.a,
                    c.b,
                    n.round(),
                    bound(c.crossover.bounds[0]),
                    bound(c.crossover.bounds[1])
                ))
                .legend(legend_line(BLACK.into()));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()?;
        Ok(())
    };
    Figure {
        id,
        title: format!(
            "{caption}; dashed: the fitted a + n/B model; a ring marks a noisy or disturbed point"
        ),
        shows,
        svg: svg(draw),
    }
}

fn cpu_per_gb(alg: Algorithm, dir: Direction, ps: &[(String, Vec<&Record>)], run: &str) -> Figure {
    let all: Vec<&Record> = ps.iter().flat_map(|(_, v)| v.iter().copied()).collect();
    let x = Axis::sizes(all.iter().map(|r| r.size));
    let y = Axis::log(all.iter().filter_map(|r| r.cpu_s_per_gb));
    let caption = format!("{alg} {dir}: CPU seconds per GB against size");
    let mut cheapest: Vec<(String, f64, u64)> = ps
        .iter()
        .filter_map(|(l, v)| {
            v.last()
                .and_then(|r| r.cpu_s_per_gb.map(|c| (l.clone(), c, r.size)))
        })
        .collect();
    cheapest.sort_by(|a, b| a.1.total_cmp(&b.1));
    let shows = match (cheapest.first(), cheapest.last()) {
        (Some(a), Some(b)) if cheapest.len() > 1 => format!(
            "{} needs {:.3} CPU s/GB at {}, {} needs {:.3} ({:.1}x)",
            a.0,
            a.1,
            size_label(a.2),
            b.0,
            b.1,
            b.1 / a.1
        ),
        (Some(a), _) => {
            let small = ps[0]
                .1
                .first()
                .and_then(|r| r.cpu_s_per_gb.map(|c| (c, r.size)));
            match small {
                Some((c, n)) => format!(
                    "{} needs {:.3} CPU s/GB at {} and {:.3} at {}",
                    a.0,
                    c,
                    size_label(n),
                    a.1,
                    size_label(a.2)
                ),
                None => format!("{} needs {:.3} CPU s/GB at {}", a.0, a.1, size_label(a.2)),
            }
        }
        _ => "no CPU accounting in these records".into(),
    };
    let id = slug(&[run, "speed", alg.name(), dir.name(), "cpu"]);
    if let Some(size) = one_size(&all) {
        let caption = format!("{alg} {dir}: CPU seconds per GB at {}", size_label(size));
        return bars(
            id,
            caption.clone(),
            shows,
            &caption,
            "CPU s per GB",
            ps,
            |r| (r.cpu_s_per_gb, None),
        );
    }
    let draw = |root: DrawingArea<SVGBackend, plotters::coord::Shift>| -> Drawn {
        let mut chart = ChartBuilder::on(&root)
            .caption(&caption, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(x.clone(), y.clone())?;
        chart
            .configure_mesh()
            .x_desc("bytes per call (log)")
            .y_desc("CPU s per GB (log)")
            .x_label_formatter(&|x| size_label(x.round() as u64))
            .y_label_formatter(&|y| tick_label(*y))
            .draw()?;
        for (i, (label, v)) in ps.iter().enumerate() {
            let c = colour(i);
            let pts: Vec<(f64, f64)> = v
                .iter()
                .filter_map(|r| {
                    r.cpu_s_per_gb
                        .filter(|c| *c > 0.0)
                        .map(|g| (r.size as f64, g))
                })
                .collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))?
                .label(label.as_str())
                .legend(legend_line(c.stroke_width(2)));
            chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, c.filled())))?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()?;
        Ok(())
    };
    Figure {
        id,
        title: caption.clone(),
        shows,
        svg: svg(draw),
    }
}

fn scaling(alg: Algorithm, dir: Direction, group: &[&Record], run: &str) -> Figure {
    // The largest size measured with more than one thread.
    let size = group
        .iter()
        .filter(|r| r.threads > 1)
        .map(|r| r.size)
        .max()
        .unwrap_or(0);
    let mut lines: Vec<(String, Vec<&Record>)> = Vec::new();
    for r in group.iter().filter(|r| r.size == size) {
        match lines.iter_mut().find(|(l, _)| *l == r.label) {
            Some((_, v)) => v.push(r),
            None => lines.push((r.label.clone(), vec![r])),
        }
    }
    for (_, v) in &mut lines {
        v.sort_by_key(|r| r.threads);
    }
    let tmax = group.iter().map(|r| r.threads).max().unwrap_or(1) as f64;
    let single = |v: &[&Record]| v.iter().find(|r| r.threads == 1).map(|r| r.throughput_bps);
    let y = Axis::linear(
        lines.iter().flat_map(|(_, v)| {
            let one = single(v).unwrap_or(0.0);
            v.iter()
                .map(move |r| r.throughput_bps.max(one * r.threads as f64) / 1e6)
        }),
        1.0,
    );
    // A label at each thread count measured.
    let mut threads: Vec<f64> = crate::render::plots::distinct(group.iter().map(|r| r.threads))
        .into_iter()
        .map(f64::from)
        .collect();
    threads.sort_by(f64::total_cmp);
    let x = Axis {
        range: 0.5..tmax + 0.5,
        ticks: threads,
        log: false,
    };
    let caption = format!("{alg} {dir}: thread scaling at {}", size_label(size));
    let shows = lines
        .iter()
        .filter_map(|(l, v)| {
            let best = v
                .iter()
                .filter(|r| r.threads > 1)
                .max_by_key(|r| r.threads)?;
            Some(match best.scaling_efficiency {
                Some(e) => format!(
                    "{l} reaches {:.1}x one thread with {} threads ({:.0}% efficiency)",
                    e * best.threads as f64,
                    best.threads,
                    e * 100.0
                ),
                None => format!(
                    "{l}: {} MB/s with {} threads (no 1-thread point)",
                    mbps(best.throughput_bps),
                    best.threads
                ),
            })
        })
        .collect::<Vec<_>>()
        .join("; ");
    let draw = |root: DrawingArea<SVGBackend, plotters::coord::Shift>| -> Drawn {
        let mut chart = ChartBuilder::on(&root)
            .caption(&caption, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(x.clone(), y.clone())?;
        chart
            .configure_mesh()
            .x_desc("threads")
            .y_desc("aggregate MB/s")
            .y_label_formatter(&|y| tick_label(*y))
            .x_label_formatter(&|x| format!("{x:.0}"))
            .draw()?;
        for (i, (label, v)) in lines.iter().enumerate() {
            let c = colour(i);
            let pts: Vec<(f64, f64)> = v
                .iter()
                .map(|r| (r.threads as f64, r.throughput_bps / 1e6))
                .collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))?
                .label(label.as_str())
                .legend(legend_line(c.stroke_width(2)));
            chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, c.filled())))?;
            if let Some(one) = single(v) {
                chart.draw_series(DashedLineSeries::new(
                    vec![(1.0, one / 1e6), (tmax, tmax * one / 1e6)],
                    6,
                    4,
                    c.mix(0.6).stroke_width(1),
                ))?;
            }
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()?;
        Ok(())
    };
    Figure {
        id: slug(&[run, "speed", alg.name(), dir.name(), "threads"]),
        title: format!("{caption} (dashed: ideal, threads x one thread)"),
        shows: if shows.is_empty() {
            "no multi-thread points".into()
        } else {
            shows
        },
        svg: svg(draw),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(label: &str, mbps: f64, ci: Option<[f64; 2]>) -> Path<'_> {
        Path {
            label,
            bps: mbps * 1e6,
            ci: ci.map(|[l, h]| [l * 1e6, h * 1e6]),
        }
    }

    #[test]
    fn a_ratio_is_claimed_only_where_the_intervals_are_apart() {
        // A headline once read "1.0x faster" for 1563 against 1561 MB/s, inside the noise.
        let ring = path("ring", 1563.0, Some([1540.0, 1580.0]));
        let openssl = path("openssl", 1561.0, Some([1545.0, 1575.0]));
        let s = versus(&ring, &openssl, "hashes", "sha256", "16k");
        assert!(s.contains("no difference beyond noise"), "{s}");
        assert!(!s.contains("faster"), "{s}");

        let fast = path("aws-lc", 4200.0, Some([4150.0, 4250.0]));
        let s = versus(&fast, &openssl, "seals", "aes-128-gcm", "16k");
        assert!(
            s.starts_with("aws-lc seals aes-128-gcm 2.7x faster than openssl at 16k"),
            "{s}"
        );
        let close = path("aws-lc", 1600.0, Some([1590.0, 1610.0]));
        let s = versus(&close, &openssl, "opens", "aes-128-gcm", "16k");
        assert!(s.contains(" 1.02x faster"), "{s}");

        let one_trial = path("ring", 2000.0, None);
        let s = versus(&one_trial, &openssl, "hashes", "sha256", "16k");
        assert!(
            s.contains("no difference is claimed") && !s.contains("faster"),
            "{s}"
        );
    }
}
