//! `cryptobench compare history NEW [--against-history N]`: each point of the new run(s)
//! judged against the last N runs of the same point on the same machine (disturbed runs
//! left out), instead of one baseline run.

use crate::analyse::compare::Verdict;
use crate::analyse::history_gate::{self, Judgement};
use crate::analyse::trend::{PointRow, SeriesKey};
use crate::failure::{Failure, EXIT_REGRESSED};
use crate::render::model::{Block, Column, Table};
use crate::render::{Format, Single};
use crate::store::resolve::Resolver;
use crate::store::series::{self, Selection};
use crate::store::{Access, StoreUrl};
use std::collections::{BTreeMap, HashSet};

/// How many past runs by default.
pub const DEFAULT_RUNS: usize = 20;

pub struct Request<'a> {
    pub new: &'a str,
    pub runs: usize,
    pub threshold: f64,
    pub fail_on_regression: bool,
    pub format: Format,
    pub store: Option<&'a str>,
}

#[derive(serde::Serialize)]
struct Row {
    point: String,
    run_id: String,
    new: f64,
    judgement: Option<Judgement>,
}

const FORMATS: &[Format] = &[Format::Table, Format::Json, Format::Markdown];

pub fn run(r: Request) -> Result<i32, Failure> {
    r.format.offered_by("compare history", FORMATS)?;
    let url = StoreUrl::choose(r.store, false)
        .map_err(Failure::input)?
        .ok_or_else(|| {
            Failure::Input("compare history reads the store: give --store URL".into())
        })?;
    let mut resolver = Resolver::new(Some(url), Access::Read);
    let mut ids = Vec::new();
    for name in r.new.split(',').filter(|n| !n.is_empty()) {
        ids.push(resolver.run_id(name).map_err(Failure::input)?);
    }
    let store = resolver.store().map_err(Failure::input)?;
    let new_rows = series::points(
        store,
        &Selection {
            runs: Some(ids.clone()),
            ..Selection::default()
        },
    )
    .map_err(Failure::runtime)?;
    let Some(first) = new_rows.first() else {
        return Err(Failure::Input(format!(
            "run {} has no points to judge: give a run with measurements",
            ids.join(",")
        )));
    };
    let machine = first.machine_id.clone();
    let mut subjects: Vec<String> = new_rows.iter().filter_map(|p| p.subject.clone()).collect();
    subjects.sort();
    subjects.dedup();
    // The machine's earlier runs of the same subjects: one value per run and point.
    let past = series::points(
        store,
        &Selection {
            machine: Some(machine.clone()),
            subjects,
            ..Selection::default()
        },
    )
    .map_err(Failure::runtime)?;
    let new_ids: HashSet<&str> = ids.iter().map(String::as_str).collect();
    let mut history: BTreeMap<SeriesKey, Vec<(String, f64)>> = BTreeMap::new();
    // The runs before the first new one, in the store's order (start time, then id: runs
    // of one second are ordered too).
    let before = past
        .iter()
        .take_while(|p| !new_ids.contains(p.run_id.as_str()));
    for p in before.filter(|p| !p.disturbed && p.machine_id == machine) {
        let runs = history.entry(SeriesKey::of(&p.as_ref())).or_default();
        if runs.last().is_none_or(|(id, _)| *id != p.run_id) {
            runs.push((p.run_id.clone(), p.median));
        }
    }
    let rows: Vec<Row> = new_rows
        .iter()
        .map(|p: &PointRow| {
            let key = SeriesKey::of(&p.as_ref());
            let h = history.get(&key).map_or(&[][..], Vec::as_slice);
            let last: Vec<f64> = h[h.len().saturating_sub(r.runs)..]
                .iter()
                .map(|(_, v)| *v)
                .collect();
            Row {
                point: key.point(),
                run_id: p.run_id.clone(),
                new: p.median,
                judgement: history_gate::judge(&last, p.median, r.threshold / 100.0),
            }
        })
        .collect();
    // Each new point judged: a table, or as JSON.
    let mut judged = Single {
        blocks: &|| blocks(&rows, &r),
        json: &|out| {
            out.value(&serde_json::json!({
                "machine_id": machine,
                "against_runs": r.runs,
                "threshold_pct": r.threshold,
                "points": rows,
            }))
        },
        html: None,
    };
    crate::shell::show::print(&mut judged, r.format)?;
    let regressed = rows.iter().any(|row| {
        row.judgement
            .as_ref()
            .is_some_and(|j| j.verdict == Verdict::Regressed)
    });
    Ok(if r.fail_on_regression && regressed {
        EXIT_REGRESSED
    } else {
        0
    })
}

fn blocks(rows: &[Row], r: &Request) -> Vec<Block> {
    let mut t = Table::new(
        format!(
            "Each point against the last {} undisturbed runs of it on this machine (MB/s; robust z under {} runs, t-test from then; a change must reach p < {:.1e} and {}%)",
            r.runs,
            history_gate::T_TEST_FROM,
            history_gate::MAX_PVALUE,
            r.threshold
        ),
        vec![
            Column::text("point"),
            Column::num("runs"),
            Column::num("history median"),
            Column::num("new"),
            Column::num("change"),
            Column::num("score"),
            Column::num("p"),
            Column::num("percentile"),
            Column::text("verdict"),
        ],
    );
    let mb = crate::units::mbps;
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for row in rows {
        match &row.judgement {
            Some(j) => {
                *counts.entry(j.verdict.as_str()).or_default() += 1;
                t.push(vec![
                    row.point.clone(),
                    j.runs.to_string(),
                    mb(j.history_median),
                    mb(row.new),
                    format!("{:+.1}%", j.change * 100.0),
                    format!(
                        "{}{:.1}",
                        if j.test == history_gate::Test::TTest {
                            "t "
                        } else {
                            "z "
                        },
                        j.score
                    ),
                    format!("{:.1e}", j.pvalue),
                    format!("{:.0}", j.percentile),
                    j.verdict.as_str().into(),
                ]);
            }
            None => {
                *counts.entry("unjudged").or_default() += 1;
                t.push(vec![
                    row.point.clone(),
                    "-".into(),
                    "-".into(),
                    mb(row.new),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    "-".into(),
                    format!(
                        "unjudged: fewer than {} earlier runs",
                        history_gate::MIN_HISTORY
                    ),
                ]);
            }
        }
    }
    let summary = counts
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect::<Vec<_>>()
        .join(", ");
    vec![Block::Table(t), Block::Lines(vec![summary])]
}
