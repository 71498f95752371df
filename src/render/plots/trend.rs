//! A series over time: each run's median with its 95% interval as a band, disturbed runs
//! hollow, each change point as a dashed line with the medians before and after drawn
//! over their runs, and a marker where the environment changed.

use super::{slug, svg, tick_label, Axis, Drawn, Figure};
use crate::analyse::trend::Series;
use plotters::prelude::*;

const BLUE: RGBColor = RGBColor(0, 114, 178);
const ORANGE: RGBColor = RGBColor(213, 94, 0);
const GREY: RGBColor = RGBColor(150, 150, 150);
const GREEN: RGBColor = RGBColor(0, 158, 115);

pub fn trend_plot(s: &Series, date: impl Fn(i64) -> String) -> Figure {
    let mb = |v: f64| v / 1e6;
    let n = s.points.len();
    let y = Axis::linear(
        s.points
            .iter()
            .flat_map(|p| [mb(p.median), p.ci.map_or(0.0, |c| mb(c[1]))]),
        1.0,
    );
    let index_of = |run: &str| s.points.iter().position(|p| p.run_id == run);
    let shows = match s.changes.last() {
        Some(c) => format!(
            "{} change point(s); the last on {}: {} to {} MB/s ({:+.1}%){}",
            s.changes.len(),
            date(c.started_unix),
            crate::units::magnitude(mb(c.median_before)),
            crate::units::magnitude(mb(c.median_after)),
            c.change * 100.0,
            c.causes
                .first()
                .map(|w| format!(", with {w}"))
                .unwrap_or_default()
        ),
        None => format!("{n} runs, no change point"),
    };
    // The legend where the latest runs are not: above them when they are low.
    let low = s
        .points
        .last()
        .is_some_and(|p| mb(p.median) < (y.range.start + y.range.end) / 2.0);
    let legend_at = if low {
        SeriesLabelPosition::UpperRight
    } else {
        SeriesLabelPosition::LowerRight
    };
    let draw = |root: DrawingArea<SVGBackend, plotters::coord::Shift>| -> Drawn {
        let x_max = (n as f64 - 0.5).max(0.5);
        let mut chart = ChartBuilder::on(&root)
            .caption(s.key.point(), ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(34)
            .y_label_area_size(64)
            .build_cartesian_2d(-0.5f64..x_max, y.clone())?;
        let every = n.div_ceil(6).max(1);
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .x_desc("run (oldest first)")
            .y_desc("median MB/s")
            .x_labels(n.min(7))
            .x_label_formatter(&|x| {
                let i = x.round();
                if i < 0.0 || i as usize >= n || !(i as usize).is_multiple_of(every) {
                    String::new()
                } else {
                    date(s.points[i as usize].started_unix)
                }
            })
            .y_label_formatter(&|v| tick_label(*v))
            .draw()?;
        // The 95% interval of each run as a band.
        let band: Vec<(f64, [f64; 2])> = s
            .points
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.ci.map(|c| (i as f64, [mb(c[0]), mb(c[1])])))
            .collect();
        if band.len() >= 2 {
            let outline: Vec<(f64, f64)> = band
                .iter()
                .map(|(x, c)| (*x, c[1]))
                .chain(band.iter().rev().map(|(x, c)| (*x, c[0])))
                .collect();
            chart.draw_series(std::iter::once(Polygon::new(
                outline,
                BLUE.mix(0.15).filled(),
            )))?;
        }
        chart
            .draw_series(LineSeries::new(
                s.points
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (i as f64, mb(p.median))),
                BLUE.stroke_width(1),
            ))?
            .label("median per run (band: 95% interval)")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], BLUE.stroke_width(2)));
        chart.draw_series(s.points.iter().enumerate().map(|(i, p)| {
            let style = if p.disturbed {
                GREY.stroke_width(1)
            } else {
                BLUE.filled()
            };
            Circle::new((i as f64, mb(p.median)), 3, style)
        }))?;
        if s.points.iter().any(|p| p.disturbed) {
            chart
                .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
                .label("disturbed run (not used for change points)")
                .legend(|(x, y)| Circle::new((x + 7, y), 3, GREY.stroke_width(1)));
        }
        // Each change point: a dashed line, and the medians before and after over their
        // runs.
        let mut bounds = vec![0usize];
        bounds.extend(s.changes.iter().filter_map(|c| index_of(&c.run_id)));
        bounds.push(n);
        for (k, c) in s.changes.iter().enumerate() {
            let Some(at) = index_of(&c.run_id) else {
                continue;
            };
            let x = at as f64 - 0.5;
            let (lo, hi) = (y.range.start, y.range.end);
            let dashes = (0..20).map(|d| {
                let a = lo + (hi - lo) * d as f64 / 20.0;
                PathElement::new(
                    vec![(x, a), (x, a + (hi - lo) / 40.0)],
                    ORANGE.stroke_width(2),
                )
            });
            chart.draw_series(dashes)?;
            let (from, to) = (bounds[k], bounds[k + 2]);
            for (a, b, v) in [(from, at, c.median_before), (at, to, c.median_after)] {
                chart.draw_series(LineSeries::new(
                    [(a as f64 - 0.4, mb(v)), (b as f64 - 0.6, mb(v))],
                    ORANGE.stroke_width(2),
                ))?;
            }
            // Between the two levels, right of the line: clear of the legend's corner.
            let mid = (mb(c.median_before) + mb(c.median_after)) / 2.0;
            chart.draw_series(std::iter::once(Text::new(
                format!("{:+.1}%", c.change * 100.0),
                (x + 0.15, mid),
                ("sans-serif", 13).into_font().color(&ORANGE),
            )))?;
        }
        if !s.changes.is_empty() {
            chart
                .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())?
                .label("change point, medians before and after")
                .legend(|(x, y)| {
                    PathElement::new(vec![(x, y), (x + 14, y)], ORANGE.stroke_width(2))
                });
        }
        // Where the environment changed: a triangle on the axis.
        let marks: Vec<f64> = s
            .env_changes
            .iter()
            .filter_map(|e| index_of(&e.run_id))
            .map(|i| i as f64 - 0.5)
            .collect();
        if !marks.is_empty() {
            let base = y.range.start + (y.range.end - y.range.start) * 0.02;
            chart
                .draw_series(
                    marks
                        .iter()
                        .map(|x| TriangleMarker::new((*x, base), 6, GREEN.filled())),
                )?
                .label("environment changed (library, kernel, CPU...)")
                .legend(|(x, y)| TriangleMarker::new((x + 7, y), 5, GREEN.filled()));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(legend_at)
            .draw()?;
        Ok(())
    };
    Figure {
        id: format!("trend-{}", slug(&[&s.hostname, &s.key.point()])),
        title: format!(
            "{} on {}: median per run over time",
            s.key.point(),
            s.hostname
        ),
        shows,
        svg: svg(draw),
    }
}
