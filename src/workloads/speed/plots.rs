//! Speed figures of one run: throughput against size per path with CI error bars and the
//! fitted a + n/B curves with the crossover marked (one panel per algorithm and
//! direction), CPU seconds per GB against size, and thread scaling against the ideal.

use crate::algorithms::{Algorithm, Direction, Kind};
use crate::analyse::paths::Analysis;
use crate::record::speed::SpeedRecord as Record;
use crate::render::plots::{colour, legend_line, slug, svg, top, Drawn, Figure};
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

fn size_range(recs: &[&Record]) -> (f64, f64) {
    let lo = recs.iter().map(|r| r.size).min().unwrap_or(1) as f64;
    let hi = recs.iter().map(|r| r.size).max().unwrap_or(1) as f64;
    if hi > lo {
        (lo / 1.5, hi * 1.5)
    } else {
        (lo / 2.0, lo * 2.0)
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
    let at: Vec<(&str, f64)> = ps
        .iter()
        .filter_map(|(l, v)| {
            v.iter()
                .find(|r| r.size == largest)
                .map(|r| (l.as_str(), r.throughput_bps))
        })
        .collect();
    let mut s = match (
        at.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)),
        at.iter().copied().min_by(|a, b| a.1.total_cmp(&b.1)),
    ) {
        (Some(f), Some(w)) if at.len() > 1 && w.1 > 0.0 => format!(
            "{} {} {alg} {:.1}x faster than {} at {} ({} against {} MB/s)",
            f.0,
            verb(alg, dir),
            f.1 / w.1,
            w.0,
            size_label(largest),
            mbps(f.1),
            mbps(w.1)
        ),
        (Some(f), _) => format!(
            "{} {} {alg} at {} MB/s at {}",
            f.0,
            verb(alg, dir),
            mbps(f.1),
            size_label(largest)
        ),
        _ => format!("no single-thread {alg} points"),
    };
    for c in analysis
        .crossovers
        .iter()
        .filter(|c| c.alg == alg && c.direction == dir)
    {
        match c.crossover.size_bytes {
            Some(n) => s.push_str(&format!(
                "; {} is faster below {} bytes and {} above (95% bounds {}-{})",
                c.faster_below,
                n.round(),
                if c.faster_below == c.a { &c.b } else { &c.a },
                bound(c.crossover.bounds[0]),
                bound(c.crossover.bounds[1])
            )),
            None => s.push_str(&format!(
                "; {} is faster at every size measured (no crossover within them)",
                c.faster_below
            )),
        }
    }
    s
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
    let (lo, hi) = size_range(&all);
    let ymax = top(all.iter().map(|r| r.ci()[1] / 1e6), 1.0);
    let caption = format!("{alg} {dir}: throughput against size (1 thread)");
    let draw = |root: DrawingArea<SVGBackend, plotters::coord::Shift>| -> Drawn {
        let mut chart = ChartBuilder::on(&root)
            .caption(&caption, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d((lo..hi).log_scale(), 0f64..ymax)?;
        chart
            .configure_mesh()
            .x_desc("bytes per call (log)")
            .y_desc("MB/s (median, 95% CI)")
            .y_label_formatter(&|y| crate::render::plots::axis_number(*y))
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
        id: slug(&[run, "speed", alg.name(), dir.name(), "throughput"]),
        title: format!(
            "{caption}; dashed: the fitted a + n/B model; a ring marks a noisy or disturbed point"
        ),
        shows: throughput_finding(alg, dir, ps, analysis),
        svg: svg(draw),
    }
}

fn cpu_per_gb(alg: Algorithm, dir: Direction, ps: &[(String, Vec<&Record>)], run: &str) -> Figure {
    let all: Vec<&Record> = ps.iter().flat_map(|(_, v)| v.iter().copied()).collect();
    let (lo, hi) = size_range(&all);
    let vals = || {
        all.iter()
            .filter_map(|r| r.cpu_s_per_gb)
            .filter(|c| *c > 0.0)
    };
    let ymin = vals().fold(f64::INFINITY, f64::min).min(1.0) / 1.5;
    let ymax = top(vals(), ymin * 2.0);
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
    let draw = |root: DrawingArea<SVGBackend, plotters::coord::Shift>| -> Drawn {
        let mut chart = ChartBuilder::on(&root)
            .caption(&caption, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d((lo..hi).log_scale(), (ymin..ymax).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("bytes per call (log)")
            .y_desc("CPU s per GB (log)")
            .x_label_formatter(&|x| size_label(x.round() as u64))
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
        id: slug(&[run, "speed", alg.name(), dir.name(), "cpu"]),
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
    let ymax = top(
        lines.iter().flat_map(|(_, v)| {
            let one = single(v).unwrap_or(0.0);
            v.iter()
                .map(move |r| r.throughput_bps.max(one * r.threads as f64) / 1e6)
        }),
        1.0,
    );
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
            .build_cartesian_2d(0.5f64..tmax + 0.5, 0f64..ymax)?;
        chart
            .configure_mesh()
            .x_desc("threads")
            .y_desc("aggregate MB/s")
            .y_label_formatter(&|y| crate::render::plots::axis_number(*y))
            .x_labels(tmax as usize + 1)
            .x_label_formatter(&|x| {
                if (x - x.round()).abs() < 1e-6 {
                    format!("{x:.0}")
                } else {
                    String::new()
                }
            })
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
