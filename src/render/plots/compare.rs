//! The comparison's ratio plot: NEW/BASE per point with its 95% interval, on a log axis
//! around 1, coloured by verdict.

use super::{svg, Drawn, Figure};
use crate::analyse::compare::{Comparison, Verdict};
use plotters::prelude::*;

pub fn ratio_plot(c: &Comparison) -> Figure {
    let lo = c
        .pairs
        .iter()
        .map(|p| p.bounds()[0].min(p.ratio))
        .filter(|x| x.is_finite() && *x > 0.0)
        .fold(0.8f64, f64::min)
        / 1.2;
    let hi = c
        .pairs
        .iter()
        .map(|p| p.bounds()[1].max(p.ratio))
        .filter(|x| x.is_finite())
        .fold(1.25f64, f64::max)
        * 1.2;
    let n = c.pairs.len();
    let count = |v: Verdict| c.pairs.iter().filter(|p| p.verdict == v).count();
    let worst = c.pairs.iter().min_by(|a, b| a.ratio.total_cmp(&b.ratio));
    let shows = format!(
        "{} of {n} points regressed, {} improved, {} unchanged{}",
        count(Verdict::Regressed),
        count(Verdict::Improved),
        count(Verdict::Unchanged),
        worst
            .map(|w| format!(
                "; the largest drop: {} {} at {:.2}x",
                w.identity.label,
                w.identity.point(),
                w.ratio
            ))
            .unwrap_or_default()
    );
    let draw = |root: DrawingArea<SVGBackend, plotters::coord::Shift>| -> Drawn {
        let mut chart = ChartBuilder::on(&root)
            .caption("new / base per point (95% interval)", ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(30)
            .y_label_area_size(64)
            .build_cartesian_2d(-0.5f64..n as f64 - 0.5, (lo..hi).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("point (in the table's order)")
            .y_desc("ratio (log)")
            .x_label_formatter(&|x| format!("{}", x.round() as i64 + 1))
            .draw()?;
        chart.draw_series(LineSeries::new(
            vec![(-0.5, 1.0), (n as f64 - 0.5, 1.0)],
            BLACK.stroke_width(1),
        ))?;
        for (v, colour) in [
            (Verdict::Unchanged, RGBColor(120, 120, 120)),
            (Verdict::Improved, RGBColor(0, 158, 115)),
            (Verdict::Regressed, RGBColor(213, 94, 0)),
        ] {
            let pts: Vec<_> = c
                .pairs
                .iter()
                .enumerate()
                .filter(|(_, p)| p.verdict == v)
                .collect();
            if pts.is_empty() {
                continue;
            }
            chart
                .draw_series(pts.iter().map(|(i, p)| {
                    ErrorBar::new_vertical(
                        *i as f64,
                        p.bounds()[0],
                        p.ratio,
                        p.bounds()[1],
                        colour.filled(),
                        6,
                    )
                }))?
                .label(v.as_str())
                .legend(move |(x, y)| Circle::new((x + 6, y), 4, colour.filled()));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
        Ok(())
    };
    Figure {
        id: "compare-ratio".into(),
        title: "NEW / BASE per point".into(),
        shows,
        svg: svg(draw),
    }
}
