//! Points over time for `history trend` and `compare --against-history`: each stored
//! point's columns with its run's start and machine, and the few facts of each run's
//! environment that can explain a change. Only the rows asked for are read.

use super::{Store, Val};
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

/// The WHERE clause over `points p JOIN runs r`, and its parameters.
fn condition(f: &Selection) -> (String, Vec<Val>) {
    let mut sql = super::Sql::new(" WHERE 1 = 1");
    let mut add = |cond: &str, vals: Vec<Val>| sql.add(cond, vals);
    let any_of = |column: &str, n: usize| {
        let marks = vec!["#"; n].join(", ");
        format!(" AND {column} IN ({marks})")
    };
    let texts = |xs: &[String]| xs.iter().map(|x| Val::Text(x.clone())).collect::<Vec<_>>();
    if let Some(m) = &f.machine {
        add(
            " AND (r.machine_id LIKE # OR r.hostname = #)",
            vec![Val::Text(format!("{m}%")), Val::Text(m.clone())],
        );
    }
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
    if let Some(t) = f.since_unix {
        add(" AND r.started_unix >= #", vec![Val::Int(t)]);
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
/// points_trend index).
pub fn for_each_point(
    s: &mut dyn Store,
    f: &Selection,
    mut each: impl FnMut(PointRef),
) -> anyhow::Result<()> {
    let (cond, params) = condition(f);
    let sql = format!(
        "SELECT p.run_id, r.started_unix, r.machine_id, r.hostname, p.workload, p.impl, p.impl_version,
           p.variant, p.label, p.subject, p.size, p.direction, p.parallel, p.throughput_bps, p.ci_low,
           p.ci_high, p.disturbed, p.others_cpu_pct, p.seq
         FROM points p JOIN runs r ON r.run_id = p.run_id{cond}"
    );
    s.query_each(&sql, &params, &mut |r| {
        let text = |i: usize| r[i].text().unwrap_or("");
        let Some(median) = r[13].real().filter(|x| x.is_finite()) else {
            return Ok(());
        };
        each(PointRef {
            run_id: text(0),
            started_unix: r[1].int().unwrap_or(0),
            machine_id: text(2),
            hostname: text(3),
            workload: text(4),
            implementation: text(5),
            impl_version: text(6),
            variant: r[7].text(),
            label: text(8),
            subject: r[9].text(),
            size: r[10].int().map(|i| i as u64),
            direction: r[11].text(),
            parallel: r[12].int().map(|i| i as u64),
            median,
            ci: r[14].real().zip(r[15].real()).map(|(a, b)| [a, b]),
            disturbed: r[16].int().unwrap_or(0) != 0,
            others_cpu_pct: r[17].real().unwrap_or(0.0),
            seq: r[18].int().unwrap_or(0),
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
