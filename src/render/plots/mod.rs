//! Figures drawn from records with plotters' SVG backend: each workload's in its own file,
//! the comparison's ratio plot, and PNG rendering of the same SVG (`png`). Every figure
//! carries a "what this shows" line computed from the data it draws.

pub mod compare;
pub mod png;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::RGBColor;

/// One figure: an SVG document and the sentence that says what it shows.
#[derive(Clone, Debug)]
pub struct Figure {
    /// File stem for `--plots DIR`: lower case, digits and dashes.
    pub id: String,
    pub title: String,
    /// "aws-lc seals AES-128-GCM 1.4x faster than ring at 16k": from the data.
    pub shows: String,
    pub svg: String,
}

pub type Drawn = Result<(), Box<dyn std::error::Error>>;

pub const WIDTH: u32 = 760;
pub const HEIGHT: u32 = 420;

/// Draws into a fresh SVG string of the standard size.
pub fn svg(draw: impl FnOnce(DrawingArea<SVGBackend, plotters::coord::Shift>) -> Drawn) -> String {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
        if let Err(e) = root
            .fill(&WHITE)
            .map_err(|e| e.into())
            .and_then(|_| draw(root.clone()))
        {
            // Never silently empty: the error is drawn where the figure would be.
            let _ = root.draw_text(
                &format!("figure could not be drawn: {e}"),
                &("sans-serif", 14).into_font().color(&RED),
                (10, 20),
            );
        }
        let _ = root.present();
    }
    out
}

/// Colour-blind-safe series colours (Okabe-Ito), then repeats.
/// A legend entry for a line series: a short stroke in the series' style.
pub fn legend_line(style: ShapeStyle) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], style)
}

/// The distinct values of `keys`, in first-seen order (the loads or series of a figure).
pub fn distinct<T: PartialEq>(keys: impl Iterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for k in keys {
        if !out.contains(&k) {
            out.push(k);
        }
    }
    out
}

pub fn colour(i: usize) -> RGBColor {
    const P: [RGBColor; 8] = [
        RGBColor(0, 114, 178),
        RGBColor(213, 94, 0),
        RGBColor(0, 158, 115),
        RGBColor(204, 121, 167),
        RGBColor(230, 159, 0),
        RGBColor(86, 180, 233),
        RGBColor(120, 120, 120),
        RGBColor(0, 0, 0),
    ];
    P[i % P.len()]
}

/// A file stem from free text.
pub fn slug(parts: &[&str]) -> String {
    let mut s = String::new();
    for c in parts.join("-").chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') {
            s.push('-');
        }
    }
    s.trim_matches('-').to_string()
}

/// The largest finite value, for an axis (at least `floor`).
pub fn top(values: impl Iterator<Item = f64>, floor: f64) -> f64 {
    values.filter(|v| v.is_finite()).fold(floor, f64::max) * 1.1
}

/// A number for an axis or a bar: as many decimals as its magnitude needs.
pub fn axis_number(y: f64) -> String {
    let a = y.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{y:.0}")
    } else if a >= 10.0 {
        format!("{y:.1}")
    } else {
        format!("{y:.2}")
    }
}

/// Bars by name: each (category, series, value, optional reference lines) drawn as
/// grouped rectangles on an index axis. Used by tls and vpn.
pub struct Bars<'a> {
    pub categories: Vec<String>,
    pub series: Vec<String>,
    /// values[category][series]; None where not measured.
    pub values: Vec<Vec<Option<f64>>>,
    /// Horizontal reference lines with their names.
    pub references: Vec<(String, f64)>,
    pub y_label: &'a str,
    pub caption: &'a str,
}

impl Bars<'_> {
    pub fn draw(&self, root: DrawingArea<SVGBackend, plotters::coord::Shift>) -> Drawn {
        let n = self.categories.len().max(1);
        let max = top(
            self.values
                .iter()
                .flatten()
                .flatten()
                .copied()
                .chain(self.references.iter().map(|r| r.1)),
            1e-9,
        );
        let mut chart = ChartBuilder::on(&root)
            .caption(self.caption, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..n as f64, 0f64..max)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_label_formatter(&|y| axis_number(*y))
            .y_desc(self.y_label)
            .draw()?;
        // Category names under the axis, centred on their group (plotters' own labels
        // fall on round numbers, not on categories).
        for (i, name) in self.categories.iter().enumerate() {
            let (px, py) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
            root.draw_text(
                name,
                &("sans-serif", 12)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Center, VPos::Top)),
                (px, py + 6),
            )?;
        }
        let k = self.series.len().max(1) as f64;
        let width = 0.8 / k;
        for (s, name) in self.series.iter().enumerate() {
            let c = colour(s);
            let bars: Vec<Rectangle<(f64, f64)>> = self
                .values
                .iter()
                .enumerate()
                .filter_map(|(ci, row)| {
                    let v = row.get(s).copied().flatten()?;
                    let x0 = ci as f64 + 0.1 + s as f64 * width;
                    Some(Rectangle::new(
                        [(x0, 0.0), (x0 + width * 0.9, v)],
                        c.filled(),
                    ))
                })
                .collect();
            // The value above each bar.
            let values: Vec<(f64, f64)> = self
                .values
                .iter()
                .enumerate()
                .filter_map(|(ci, row)| {
                    row.get(s)
                        .copied()
                        .flatten()
                        .map(|v| (ci as f64 + 0.1 + (s as f64 + 0.45) * width, v))
                })
                .collect();
            chart.draw_series(values.into_iter().map(|(x, v)| {
                Text::new(
                    axis_number(v),
                    (x, v),
                    ("sans-serif", 11)
                        .into_font()
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Center, VPos::Bottom)),
                )
            }))?;
            chart
                .draw_series(bars)?
                .label(name.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
        }
        for (i, (name, y)) in self.references.iter().enumerate() {
            let style = colour(6 + i).stroke_width(2);
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(0.0, *y), (n as f64, *y)],
                    8,
                    5,
                    style,
                ))?
                .label(name.as_str())
                .legend(legend_line(style));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()?;
        root.present()?;
        Ok(())
    }
}
