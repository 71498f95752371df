//! `history trend`'s output, shared with `report --format html`, which gets the same
//! section where its runs hold a series long enough: the series' table, the change
//! points' table and one chart per series.

use super::model::{Block, Column, Table};
use super::plots::trend::trend_plot;
use crate::analyse::trend::{self, Series};

/// A run's date and time (UTC), "2026-11-26 09:20".
pub fn utc(t: i64) -> String {
    let (days, secs) = (t.div_euclid(86400), t.rem_euclid(86400));
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        secs / 3600,
        secs % 3600 / 60
    )
}

/// The date of a run, for axes and tables.
pub fn day(t: i64) -> String {
    utc(t)[..10].to_string()
}

/// A run's date on a chart's axis, or its time of day where the series spans one day.
pub fn axis_date(s: &Series) -> fn(i64) -> String {
    let first = s.points.first().map(|p| day(p.started_unix));
    let last = s.points.last().map(|p| day(p.started_unix));
    if first == last {
        // One day: the time, to the second (runs a minute apart are told apart).
        |t| {
            let s = t.rem_euclid(86400);
            format!("{:02}:{:02}:{:02}", s / 3600, s % 3600 / 60, s % 60)
        }
    } else {
        day
    }
}

fn mb(v: f64) -> String {
    crate::units::mbps(v)
}

fn pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

/// The summary table and the change points' table.
pub fn blocks(all: &[Series]) -> Vec<Block> {
    let mut t = Table::new(
        "Each series: run medians in MB/s (disturbed runs included), and its change points",
        vec![
            Column::text("host"),
            Column::text("series"),
            Column::num("runs"),
            Column::num("latest"),
            Column::num("min"),
            Column::num("max"),
            Column::num("change points"),
        ],
    );
    for s in all {
        let values = s.points.iter().map(|p| p.median);
        let min = values.clone().fold(f64::INFINITY, f64::min);
        let max = values.fold(f64::NEG_INFINITY, f64::max);
        let latest = s.latest().map_or("-".into(), |p| {
            format!(
                "{}{}",
                mb(p.median),
                if p.disturbed { " (disturbed)" } else { "" }
            )
        });
        t.push(vec![
            s.hostname.clone(),
            s.key.point(),
            s.points.len().to_string(),
            latest,
            mb(min),
            mb(max),
            s.changes.len().to_string(),
        ]);
    }
    let mut blocks = vec![Block::Table(t)];
    let mut c = Table::new(
        "Change points: the first run after each, the medians of the runs on either side (MB/s), the change with its 95% interval, and what the environment recorded as different",
        vec![
            Column::text("host"),
            Column::text("series"),
            Column::text("date"),
            Column::text("run"),
            Column::num("before"),
            Column::num("after"),
            Column::num("change"),
            Column::text("95% interval"),
            Column::num("p"),
            Column::text("likely cause"),
        ],
    );
    for s in all {
        for ch in &s.changes {
            c.push(vec![
                s.hostname.clone(),
                s.key.point(),
                day(ch.started_unix),
                ch.run_id.clone(),
                mb(ch.median_before),
                mb(ch.median_after),
                pct(ch.change),
                format!("{} to {}", pct(ch.change_ci[0]), pct(ch.change_ci[1])),
                format!("{:.1e}", ch.pvalue),
                cause(ch),
            ]);
        }
    }
    if c.rows.is_empty() {
        blocks.push(Block::Lines(vec![
            "No change point in any series: every series is level at this p-value.".into(),
        ]));
    } else {
        blocks.push(Block::Table(c));
    }
    blocks
}

fn cause(ch: &trend::Change) -> String {
    let kind = match ch.kind {
        crate::analyse::changepoint::Kind::Spread => "the spread changed; ",
        crate::analyse::changepoint::Kind::Mean => "",
    };
    if ch.causes.is_empty() {
        format!("{kind}nothing recorded changed (a code or system change cryptobench does not see)")
    } else {
        format!("{kind}{}", ch.causes.join("; "))
    }
}

/// The tables and one chart per series (those with change points first, at most
/// `max_charts`), into a page's body.
pub fn html_section(all: &[Series], max_charts: usize, body: &mut String) {
    use super::write::html;
    html::blocks(&blocks(all), body);
    let mut drawn: Vec<&Series> = all.iter().filter(|s| !s.changes.is_empty()).collect();
    drawn.extend(all.iter().filter(|s| s.changes.is_empty()));
    if drawn.len() > max_charts {
        html::blocks(
            &[Block::Lines(vec![format!(
                "{} of {} series drawn (those with change points first): `cryptobench history trend` with filters draws the others",
                max_charts,
                drawn.len()
            )])],
            body,
        );
        drawn.truncate(max_charts);
    }
    for s in drawn {
        body.push_str(&format!(
            "<h2>{}</h2>\n",
            super::model::esc(&format!("{} on {}", s.key.point(), s.hostname))
        ));
        html::figure(&trend_plot(s, axis_date(s)), body);
    }
}
