//! Figures drawn from records with plotters' SVG backend: each workload's in its own file,
//! the comparison's ratio plot, and PNG rendering of the same SVG (`png`). Every figure
//! carries a "what this shows" line computed from the data it draws.

pub mod compare;
pub mod png;
pub mod trend;

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

/// An axis that ends on labelled values: its lowest label is at or below every point and
/// its highest at or above, so no point sits beyond the last label.
/// It is itself the plotters coordinate of that axis, with its ticks as the key points
/// (plotters' own put labels on a log axis only at powers of ten, with float noise).
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub range: std::ops::Range<f64>,
    /// Where the labels go, each the f64 nearest a short decimal.
    pub ticks: Vec<f64>,
    pub log: bool,
}

impl Ranged for Axis {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let at = |v: f64| if self.log { v.ln() } else { v };
        let (lo, hi) = (at(self.range.start), at(self.range.end));
        let fraction = if hi > lo {
            (at(*value) - lo) / (hi - lo)
        } else {
            0.5
        };
        limit.0 + (fraction * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: plotters::coord::ranged1d::KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // No light mesh lines between the labels.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.clone()
    }
}

/// `m` times ten to the `e`, as the f64 nearest that decimal (3 x 0.1 would print as
/// 0.30000000000000004).
fn decimal(m: i64, e: i32) -> f64 {
    format!("{m}e{e}").parse().unwrap_or(f64::NAN)
}

impl Axis {
    /// From zero to the first round value (1, 2 or 5 steps) above the largest of `values`
    /// (at least `floor`), with about five labels.
    pub fn linear(values: impl Iterator<Item = f64>, floor: f64) -> Axis {
        let max = values.filter(|v| v.is_finite()).fold(floor, f64::max);
        let e = (max / 5.0).log10().floor() as i32;
        let m = max / 5.0 / 10f64.powi(e);
        let step = [1, 2, 5, 10]
            .into_iter()
            .find(|s| m <= *s as f64)
            .unwrap_or(10);
        // One step of headroom above the largest point, for its label or error bar.
        let n = (max / decimal(step, e) * (1.0 + 1e-9)).floor() as i64 + 1;
        let ticks: Vec<f64> = (0..=n).map(|k| decimal(k * step, e)).collect();
        Axis {
            range: 0.0..ticks[ticks.len() - 1],
            ticks,
            log: false,
        }
    }

    /// A log axis from the round value at or below the smallest positive value to the one
    /// at or above the largest: 1-2-5 steps, finer within a decade, only powers of ten
    /// across more than three decades.
    pub fn log(values: impl Iterator<Item = f64>) -> Axis {
        let (lo, hi) = values
            .filter(|v| v.is_finite() && *v > 0.0)
            .fold((f64::INFINITY, 0f64), |(l, h), v| (l.min(v), h.max(v)));
        let (lo, hi) = if lo <= hi { (lo, hi) } else { (1.0, 1.0) };
        let (e0, e1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
        // In tenths: finer steps where the axis spans a decade or less.
        let decades = (hi / lo).log10();
        let mantissas: &[i64] = if decades <= 1.0 {
            &[10, 15, 20, 30, 50, 70]
        } else if decades <= 3.0 {
            &[10, 20, 50]
        } else {
            &[10]
        };
        let all: Vec<f64> = (e0..=e1)
            .flat_map(|e| mantissas.iter().map(move |m| decimal(*m, e - 1)))
            .collect();
        // The last value at or below lo, the first at or above hi; never a zero-width axis.
        let first = all.iter().rposition(|t| *t <= lo).unwrap_or(0);
        let last = all.iter().position(|t| *t >= hi).unwrap_or(all.len() - 1);
        let last = if last == first { last + 1 } else { last };
        let ticks: Vec<f64> = all[first..=last.min(all.len() - 1)].to_vec();
        let ticks = if ticks.len() < 2 {
            vec![ticks[0], ticks[0] * 10.0]
        } else {
            ticks
        };
        Axis {
            range: ticks[0]..ticks[ticks.len() - 1],
            ticks,
            log: true,
        }
    }

    /// A log axis of message sizes labelled at the sizes measured (at most eight, always
    /// the smallest and the largest), with room on either side for the marks.
    pub fn sizes(sizes: impl Iterator<Item = u64>) -> Axis {
        let mut all: Vec<u64> = sizes.collect();
        all.sort_unstable();
        all.dedup();
        let (lo, hi) = match (all.first(), all.last()) {
            (Some(l), Some(h)) => (*l as f64, *h as f64),
            _ => (1.0, 1.0),
        };
        let every = all.len().div_ceil(8).max(1);
        let ticks = all
            .iter()
            .enumerate()
            .filter(|(i, _)| i % every == 0 || *i == all.len() - 1)
            .map(|(_, s)| *s as f64)
            .collect();
        Axis {
            range: lo / 1.5..hi * 1.5,
            ticks,
            log: true,
        }
    }
}

/// A tick label: at most four significant digits, no float noise ("0.3", "2000").
pub fn tick_label(v: f64) -> String {
    let rounded: f64 = format!("{v:.3e}").parse().unwrap_or(v);
    format!("{rounded}")
}

/// A number above a bar: as many decimals as its magnitude needs.
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
    /// A 95% interval per value, drawn as an error bar (same shape; empty for none).
    pub intervals: Vec<Vec<Option<[f64; 2]>>>,
    /// Horizontal reference lines with their names.
    pub references: Vec<(String, f64)>,
    pub y_label: &'a str,
    pub caption: &'a str,
}

impl Bars<'_> {
    pub fn draw(&self, root: DrawingArea<SVGBackend, plotters::coord::Shift>) -> Drawn {
        let n = self.categories.len().max(1);
        let y = Axis::linear(
            self.values
                .iter()
                .flatten()
                .flatten()
                .copied()
                .chain(self.intervals.iter().flatten().flatten().map(|i| i[1]))
                .chain(self.references.iter().map(|r| r.1)),
            1e-9,
        );
        let mut chart = ChartBuilder::on(&root)
            .caption(self.caption, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..n as f64, y)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_label_formatter(&|y| tick_label(*y))
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
            let centre = |ci: usize| ci as f64 + 0.1 + (s as f64 + 0.45) * width;
            // (centre, value, interval) of each measured bar of this series.
            let measured: Vec<(f64, f64, Option<[f64; 2]>)> = self
                .values
                .iter()
                .enumerate()
                .filter_map(|(ci, row)| {
                    let v = row.get(s).copied().flatten()?;
                    let interval = self
                        .intervals
                        .get(ci)
                        .and_then(|r| r.get(s).copied().flatten());
                    Some((centre(ci), v, interval))
                })
                .collect();
            chart
                .draw_series(measured.iter().map(|(x, v, _)| {
                    let x0 = x - 0.45 * width;
                    Rectangle::new([(x0, 0.0), (x0 + width * 0.9, *v)], c.filled())
                }))?
                .label(name.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
            chart.draw_series(measured.iter().filter_map(|(x, v, interval)| {
                let [lo, hi] = (*interval)?;
                Some(ErrorBar::new_vertical(*x, lo, *v, hi, BLACK.filled(), 8))
            }))?;
            // The value above each bar, and above its error bar.
            chart.draw_series(measured.iter().map(|(x, v, interval)| {
                let top = interval.map_or(*v, |[_, hi]| hi.max(*v));
                Text::new(
                    axis_number(*v),
                    (*x, top),
                    ("sans-serif", 11)
                        .into_font()
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Center, VPos::Bottom)),
                )
            }))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The labels of an axis over `values`, checked to span them.
    fn spanning(axis: &Axis, values: &[f64]) -> Vec<String> {
        let (lo, hi) = values
            .iter()
            .fold((f64::INFINITY, 0f64), |(l, h), v| (l.min(*v), h.max(*v)));
        let (first, last) = (axis.ticks[0], axis.ticks[axis.ticks.len() - 1]);
        assert!(
            first <= lo && last >= hi,
            "{axis:?} does not span {values:?}"
        );
        assert_eq!(axis.range, first..last, "the axis ends on its labels");
        axis.ticks.iter().map(|t| tick_label(*t)).collect()
    }

    #[test]
    fn a_log_axis_of_cpu_seconds_is_labelled_where_its_points_are() {
        // Points at 0.2-0.5 s/GB once sat below an axis labelled only from 1 to 10.
        let cpu = [0.21, 0.33, 0.48];
        assert_eq!(
            spanning(&Axis::log(cpu.into_iter()), &cpu),
            ["0.2", "0.3", "0.5"]
        );
        let wide = [0.004, 0.2, 3.5];
        assert_eq!(
            spanning(&Axis::log(wide.into_iter()), &wide),
            ["0.002", "0.005", "0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5"]
        );
        let ratios = [0.97, 1.0, 1.03];
        assert_eq!(
            spanning(&Axis::log(ratios.into_iter()), &ratios),
            ["0.7", "1", "1.5"]
        );
        let one = [2.0];
        assert_eq!(spanning(&Axis::log(one.into_iter()), &one), ["2", "3"]);
    }

    #[test]
    fn a_linear_axis_ends_on_a_round_label_above_its_largest_point() {
        for (max, labels) in [
            (1563.0, vec!["0", "500", "1000", "1500", "2000"]),
            (1450.0, vec!["0", "500", "1000", "1500"]),
            (0.3, vec!["0", "0.1", "0.2", "0.3", "0.4"]),
            (7.0, vec!["0", "2", "4", "6", "8"]),
        ] {
            let values = [max / 3.0, max];
            assert_eq!(
                spanning(&Axis::linear(values.into_iter(), 1e-9), &values),
                labels
            );
        }
    }

    #[test]
    fn sizes_are_labelled_where_they_were_measured() {
        let sizes = [16u64, 64, 256, 1024, 8192, 16384];
        let axis = Axis::sizes(sizes.into_iter());
        assert_eq!(
            axis.ticks,
            sizes.iter().map(|s| *s as f64).collect::<Vec<_>>()
        );
        assert!(axis.range.start < 16.0 && axis.range.end > 16384.0);
        let many = Axis::sizes((0..20).map(|i| 16u64 << i));
        assert!(many.ticks.len() <= 9, "{:?}", many.ticks);
        assert_eq!(many.ticks[0], 16.0);
        assert_eq!(many.ticks[many.ticks.len() - 1], (16u64 << 19) as f64);
    }

    #[test]
    fn tick_labels_have_no_float_noise() {
        assert_eq!(tick_label(0.1 + 0.2), "0.3");
        assert_eq!(tick_label(1500.0), "1500");
        assert_eq!(tick_label(0.000_123_456_789), "0.0001235");
    }
}
