//! The comparison's ratio plot: NEW/BASE per point with its 95% interval, on a log axis
//! around 1, coloured by verdict.

use super::{svg, tick_label, Axis, Drawn, Figure, WIDTH};
use crate::analyse::compare::{Comparison, Verdict};
use plotters::prelude::*;

/// The strip right of the plot that holds the legend.
const LEGEND_WIDTH: u32 = 110;

pub fn ratio_plot(c: &Comparison) -> Figure {
    // Every ratio and bound, and 1 (no change), within labelled values.
    let y = Axis::log(
        c.pairs
            .iter()
            .flat_map(|p| [p.bounds()[0], p.ratio, p.bounds()[1]])
            .chain([1.0]),
    );
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
        // The legend gets its own strip on the right, where it covers no error bar.
        let (plot, legend) = root.split_horizontally(WIDTH - LEGEND_WIDTH);
        let mut chart = ChartBuilder::on(&plot)
            .caption("new / base per point (95% interval)", ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(30)
            .y_label_area_size(64)
            .build_cartesian_2d(-0.5f64..n as f64 - 0.5, y.clone())?;
        chart
            .configure_mesh()
            .x_desc("point (in the table's order)")
            .y_desc("ratio (log)")
            .x_label_formatter(&|x| format!("{}", x.round() as i64 + 1))
            .y_label_formatter(&|y| tick_label(*y))
            .draw()?;
        chart.draw_series(LineSeries::new(
            vec![(-0.5, 1.0), (n as f64 - 0.5, 1.0)],
            BLACK.stroke_width(1),
        ))?;
        let mut shown = 0;
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
            chart.draw_series(pts.iter().map(|(i, p)| {
                ErrorBar::new_vertical(
                    *i as f64,
                    p.bounds()[0],
                    p.ratio,
                    p.bounds()[1],
                    colour.filled(),
                    6,
                )
            }))?;
            let at = (12, 60 + 22 * shown);
            legend.draw(&Rectangle::new(
                [(at.0 - 4, at.1 - 4), (at.0 + 4, at.1 + 4)],
                colour.filled(),
            ))?;
            legend.draw_text(
                v.as_str(),
                &("sans-serif", 13).into_font().color(&BLACK),
                (at.0 + 10, at.1 - 7),
            )?;
            shown += 1;
        }
        Ok(())
    };
    Figure {
        id: "compare-ratio".into(),
        title: "NEW / BASE per point".into(),
        shows,
        svg: svg(draw),
    }
}
