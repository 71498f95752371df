//! Points over time for `history trend` and `compare --against-history`: each stored
//! point's columns with its run's start and machine, and the few facts of each run's
//! environment that can explain a change. Only the rows asked for are read.

use super::sql::{Sql, Store, Val};
use crate::analyse::trend::{PointRef, PointRow, RunFacts};
use std::collections::HashMap;

/// Which points: every field narrows (empty lists: all).
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// A machine id (or its start), or a hostname.
    pub machine: Option<String>,
    pub workload: Option<String>,
    /// Implementations, by name (openssl) or label (openssl 3.5.5).
    pub impls: Vec<String>,
    /// Algorithms, suites or tunnels (the point's subject).
    pub subjects: Vec<String>,
    pub sizes: Vec<u64>,
    pub directions: Vec<String>,
    pub since_unix: Option<i64>,
    /// Only the points whose identity the tagged run measured.
    pub tag: Option<String>,
    /// Only these runs (none: all).
    pub runs: Option<Vec<String>>,
}

/// The WHERE clause over `runs r` of what a run says (machine, start), and its
/// parameters: read once per run, not joined to each point.
fn run_condition(f: &Selection) -> (String, Vec<Val>) {
    let mut runs = Sql::new(" WHERE 1 = 1");
    if let Some(m) = &f.machine {
        runs.add(
            " AND (r.machine_id LIKE # OR r.hostname = #)",
            vec![Val::Text(format!("{m}%")), Val::Text(m.clone())],
        );
    }
    if let Some(t) = f.since_unix {
        runs.add(" AND r.started_unix >= #", vec![Val::Int(t)]);
    }
    (runs.text, runs.params)
}

/// The WHERE clause over `points p` alone of what a point itself says, and its parameters.
fn point_condition(f: &Selection) -> (String, Vec<Val>) {
    let mut sql = Sql::new(" WHERE 1 = 1");
    let mut add = |cond: &str, vals: Vec<Val>| sql.add(cond, vals);
    let any_of = |column: &str, n: usize| {
        let marks = vec!["#"; n].join(", ");
        format!(" AND {column} IN ({marks})")
    };
    let texts = |xs: &[String]| xs.iter().map(|x| Val::Text(x.clone())).collect::<Vec<_>>();
    if let Some(w) = &f.workload {
        add(" AND p.workload = #", vec![Val::Text(w.clone())]);
    }
    if !f.impls.is_empty() {
        let n = f.impls.len();
        let mut vals = texts(&f.impls);
        vals.extend(texts(&f.impls));
        add(
            &format!(
                " AND (p.impl IN ({}) OR p.label IN ({}))",
                vec!["#"; n].join(", "),
                vec!["#"; n].join(", ")
            ),
            vals,
        );
    }
    if !f.subjects.is_empty() {
        add(&any_of("p.subject", f.subjects.len()), texts(&f.subjects));
    }
    if !f.sizes.is_empty() {
        add(
            &any_of("p.size", f.sizes.len()),
            f.sizes.iter().map(|s| Val::Int(*s as i64)).collect(),
        );
    }
    if !f.directions.is_empty() {
        add(
            &any_of("p.direction", f.directions.len()),
            texts(&f.directions),
        );
    }
    if let Some(t) = &f.tag {
        // The same identity columns as a point the tagged run holds (NULLs equal).
        add(
            " AND EXISTS (SELECT 1 FROM points q JOIN tags g ON g.run_id = q.run_id WHERE g.name = #
               AND q.workload = p.workload AND q.impl = p.impl AND q.subject IS NOT DISTINCT FROM p.subject
               AND q.size IS NOT DISTINCT FROM p.size AND q.direction IS NOT DISTINCT FROM p.direction
               AND q.parallel IS NOT DISTINCT FROM p.parallel AND q.variant IS NOT DISTINCT FROM p.variant)",
            vec![Val::Text(t.clone())],
        );
    }
    if let Some(runs) = &f.runs {
        if runs.is_empty() {
            add(" AND 1 = 0", vec![]);
        } else {
            add(&any_of("p.run_id", runs.len()), texts(runs));
        }
    }
    (sql.text, sql.params)
}

/// The selected points, oldest run first (then in the order each run wrote them).
pub fn points(s: &mut dyn Store, f: &Selection) -> anyhow::Result<Vec<PointRow>> {
    let mut out = Vec::new();
    for_each_point(s, f, |p| out.push(p.to_row()))?;
    out.sort_by(|a, b| (a.started_unix, &a.run_id, a.seq).cmp(&(b.started_unix, &b.run_id, b.seq)));
    Ok(out)
}

/// The selected points one at a time, in no particular order, their text borrowed from
/// the row: nothing is held or copied here, and the database sorts nothing (it scans the
/// points_trend index). Each run is read once, before its points (a join per point made
/// `history trend` over a million points 3-5 s).
pub fn for_each_point(
    s: &mut dyn Store,
    f: &Selection,
    mut each: impl FnMut(PointRef),
) -> anyhow::Result<()> {
    let ((runs_cond, runs_params), (cond, params)) = (run_condition(f), point_condition(f));
    // run_id -> (started_unix, machine_id, hostname), of the runs selected.
    let mut runs: HashMap<String, (i64, String, String)> = HashMap::new();
    s.query_each(
        &format!(
            "SELECT r.run_id, r.started_unix, r.machine_id, r.hostname FROM runs r{runs_cond}"
        ),
        &runs_params,
        &mut |r| {
            let text = |i: usize| r[i].text().unwrap_or("").to_string();
            runs.insert(text(0), (r[1].int().unwrap_or(0), text(2), text(3)));
            Ok(())
        },
    )?;
    let sql = format!(
        "SELECT p.run_id, p.workload, p.impl, p.impl_version, p.variant, p.label, p.subject, p.size,
           p.direction, p.parallel, p.throughput_bps, p.ci_low, p.ci_high, p.disturbed,
           p.others_cpu_pct, p.seq
         FROM points p{cond}"
    );
    s.query_each(&sql, &params, &mut |r| {
        let text = |i: usize| r[i].text().unwrap_or("");
        let Some(median) = r[10].real().filter(|x| x.is_finite()) else {
            return Ok(());
        };
        let Some((run_id, (started_unix, machine_id, hostname))) = runs.get_key_value(text(0))
        else {
            return Ok(());
        };
        each(PointRef {
            run_id,
            started_unix: *started_unix,
            machine_id,
            hostname,
            workload: text(1),
            implementation: text(2),
            impl_version: text(3),
            variant: r[4].text(),
            label: text(5),
            subject: r[6].text(),
            size: r[7].int().map(|i| i as u64),
            direction: r[8].text(),
            parallel: r[9].int().map(|i| i as u64),
            median,
            ci: r[11].real().zip(r[12].real()).map(|(a, b)| [a, b]),
            disturbed: r[13].int().unwrap_or(0) != 0,
            others_cpu_pct: r[14].real().unwrap_or(0.0),
            seq: r[15].int().unwrap_or(0),
        });
        Ok(())
    })
}

/// The environment facts of these runs that can explain a change. Only the head of each
/// environment line is read: the facts come before the kernel's crypto tables.
pub fn facts<'a>(
    s: &mut dyn Store,
    run_ids: impl Iterator<Item = &'a str>,
) -> anyhow::Result<HashMap<String, RunFacts>> {
    let ids: Vec<&str> = run_ids.collect();
    let mut out = HashMap::new();
    for chunk in ids.chunks(500) {
        let marks: Vec<String> = (1..=chunk.len()).map(|i| format!("${i}")).collect();
        let sql = format!(
            "SELECT run_id, substr(environment, 1, {}) FROM runs WHERE run_id IN ({})",
            RunFacts::HEAD,
            marks.join(", ")
        );
        let params: Vec<Val> = chunk.iter().map(|id| Val::Text(id.to_string())).collect();
        s.query_each(&sql, &params, &mut |r| {
            if let (Some(id), Some(head)) = (r[0].text(), r[1].text()) {
                out.insert(id.to_string(), RunFacts::from_head(head));
            }
            Ok(())
        })?;
    }
    Ok(out)
}
