//! Runs and points in a store: written point by point, listed, found by id, tag or
//! `last`, exported and imported as the exact JSON Lines text they were written as.

use super::sql::{in_transaction, Sql, Store, Val};
use crate::analyse::trend::PointRow;
use crate::record::read::{parse_line, AnyRecord, Line, Loaded, Run, SeenPoints};
use crate::record::{Environment, RunEnd};
use anyhow::anyhow;
use serde_json::Value;

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

fn to_text<T: serde::Serialize>(v: &T) -> anyhow::Result<String> {
    Ok(serde_json::to_string(v)?)
}

/// The machine of a run: its recorded id, else one made from what the environment says.
fn machine_of(env: &Environment) -> String {
    let model = env.cpu_model();
    if env.machine_id.is_empty() {
        super::machine_hash(&env.hostname, model)
    } else {
        env.machine_id.clone()
    }
}

/// Registers a run (once: a second call for the same id changes nothing).
pub fn begin_run(s: &mut dyn Store, env: &Environment, workload: &str) -> anyhow::Result<()> {
    let command_line: Vec<String> = env
        .command_line
        .iter()
        .map(|a| super::url::masked(a))
        .collect();
    s.execute(
        "INSERT INTO runs (run_id, machine_id, hostname, cpu_model, workload, started_unix, command_line, environment)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (run_id) DO NOTHING",
        &[
            Val::Text(env.run_id.clone()),
            Val::Text(machine_of(env)),
            Val::Text(env.hostname.clone()),
            Val::Text(env.cpu_model().into()),
            Val::Text(workload.into()),
            Val::Int(env.started_unix as i64),
            Val::Text(to_text(&command_line)?),
            Val::Text(to_text(env)?),
        ],
    )
    .map(|_| ())
}

/// Stores point `seq` of a run, in its own transaction; storing it again changes nothing.
pub fn add_point(s: &mut dyn Store, seq: usize, rec: &AnyRecord) -> anyhow::Result<()> {
    in_transaction(s, false, |s| write_point(s, seq, rec))
}

/// A record's searchable columns, as the store keeps them beside its text.
pub struct Columns {
    pub workload: String,
    pub implementation: String,
    pub impl_version: String,
    pub variant: Option<String>,
    pub label: String,
    pub subject: Option<String>,
    pub size: Option<i64>,
    pub direction: Option<String>,
    pub parallel: Option<i64>,
    pub throughput_bps: Option<f64>,
    pub ci: Option<[f64; 2]>,
    pub wall_s: f64,
    pub cpu_user_s: Option<f64>,
    pub cpu_sys_s: Option<f64>,
    pub cpu_s_per_gb: Option<f64>,
    pub others_cpu_pct: f64,
    pub disturbed: bool,
}

impl Columns {
    /// From a record's JSON: the subject is its algorithm, suite or tunnel, the size its
    /// message or file size, the parallelism its threads, concurrency or streams.
    pub fn of(v: &Value) -> Columns {
        let text = |keys: &[&str]| {
            keys.iter()
                .find_map(|k| v[*k].as_str())
                .map(|s| s.to_string())
        };
        let int = |keys: &[&str]| keys.iter().find_map(|k| v[*k].as_i64());
        let real = |k: &str| v[k].as_f64().filter(|x| x.is_finite());
        let ci = v["throughput_bps_ci"].as_array();
        let bound = |i: usize| ci.and_then(|c| c.get(i)).and_then(Value::as_f64);
        Columns {
            workload: text(&["workload"]).unwrap_or_default(),
            implementation: text(&["impl"]).unwrap_or_default(),
            impl_version: text(&["impl_version"]).unwrap_or_default(),
            variant: text(&["variant"]),
            label: text(&["label"]).unwrap_or_default(),
            subject: text(&["alg", "suite", "tunnel"]),
            size: int(&["size", "file_size"]),
            direction: text(&["direction"]),
            parallel: int(&["threads", "concurrency", "streams"]),
            throughput_bps: real("throughput_bps"),
            ci: bound(0).zip(bound(1)).map(|(a, b)| [a, b]),
            wall_s: v["wall_s"].as_f64().unwrap_or(0.0),
            cpu_user_s: real("cpu_user_s"),
            cpu_sys_s: real("cpu_sys_s"),
            cpu_s_per_gb: real("cpu_s_per_gb"),
            others_cpu_pct: v["others_cpu_pct"].as_f64().unwrap_or(0.0),
            disturbed: v["disturbed"].as_bool().unwrap_or(false),
        }
    }
}

/// A record of a run as `history trend` reads it from the store (for `report`, which
/// reads records, not the store). None where it has no throughput.
pub fn point_row(rec: &AnyRecord, env: &Environment, seq: usize) -> Option<PointRow> {
    let c = Columns::of(&rec.to_json());
    Some(PointRow {
        run_id: rec.run_id().to_string(),
        started_unix: env.started_unix as i64,
        machine_id: machine_of(env),
        hostname: env.hostname.clone(),
        workload: c.workload,
        implementation: c.implementation,
        impl_version: c.impl_version,
        variant: c.variant,
        label: c.label,
        subject: c.subject,
        size: c.size.map(|s| s as u64),
        direction: c.direction,
        parallel: c.parallel.map(|p| p as u64),
        median: c.throughput_bps?,
        ci: c.ci,
        disturbed: c.disturbed,
        others_cpu_pct: c.others_cpu_pct,
        seq: seq as i64,
    })
}

/// The point's statements, in a transaction the caller holds.
fn write_point(s: &mut dyn Store, seq: usize, rec: &AnyRecord) -> anyhow::Result<()> {
    let text = to_text(rec)?;
    let v: Value = serde_json::from_str(&text)?;
    let c = Columns::of(&v);
    let int = |x: Option<i64>| x.map_or(Val::Null, Val::Int);
    let params = vec![
        Val::Text(rec.run_id().into()),
        Val::Int(seq as i64),
        Val::Text(c.workload),
        Val::Text(c.implementation),
        Val::Text(c.impl_version),
        Val::opt_text(c.variant.as_deref()),
        Val::Text(c.label),
        Val::opt_text(c.subject.as_deref()),
        int(c.size),
        Val::opt_text(c.direction.as_deref()),
        int(c.parallel),
        Val::opt_real(c.throughput_bps),
        Val::opt_real(c.ci.map(|c| c[0])),
        Val::opt_real(c.ci.map(|c| c[1])),
        Val::Real(c.wall_s),
        Val::opt_real(c.cpu_user_s),
        Val::opt_real(c.cpu_sys_s),
        Val::opt_real(c.cpu_s_per_gb),
        Val::Real(c.others_cpu_pct),
        Val::Int(c.disturbed as i64),
        Val::Text(v["samples_bps"].to_string()),
        Val::Text(text),
    ];
    {
        s.execute(
            "INSERT INTO points (run_id, seq, workload, impl, impl_version, variant, label, subject, size, direction,
               parallel, throughput_bps, ci_low, ci_high, wall_s, cpu_user_s, cpu_sys_s, cpu_s_per_gb, others_cpu_pct,
               disturbed, samples_bps, record)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)
             ON CONFLICT (run_id, seq) DO NOTHING",
            &params,
        )?;
        s.execute(
            "UPDATE runs SET points = (SELECT COUNT(*) FROM points WHERE run_id = $1) WHERE run_id = $1",
            &params[..1],
        )?;
        Ok(())
    }
}

/// Closes a run with its end line; `ended` is when, where known.
pub fn end_run(s: &mut dyn Store, end: &RunEnd, ended: Option<i64>) -> anyhow::Result<()> {
    s.execute(
        "UPDATE runs SET ended_unix = $2, interrupted = $3, run_end = $4 WHERE run_id = $1",
        &[
            Val::Text(end.run_id.clone()),
            ended.map_or(Val::Null, Val::Int),
            Val::Int(end.interrupted as i64),
            Val::Text(to_text(end)?),
        ],
    )
    .map(|_| ())
}

/// Closes a run that ends now.
pub fn end_now(s: &mut dyn Store, end: &RunEnd) -> anyhow::Result<()> {
    end_run(s, end, Some(now()))
}

/// One line of `history`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RunRow {
    pub run_id: String,
    pub machine_id: String,
    pub hostname: String,
    pub cpu_model: String,
    pub workload: String,
    pub started_unix: i64,
    pub ended_unix: Option<i64>,
    pub interrupted: Option<bool>,
    pub points: i64,
    pub tags: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// A machine id (or its start), or a hostname.
    pub machine: Option<String>,
    pub workload: Option<String>,
    pub since_unix: Option<i64>,
    /// Runs started by then only.
    pub until_unix: Option<i64>,
    pub tag: Option<String>,
    /// 0: all.
    pub limit: usize,
}

/// Runs, newest first. Only the rows asked for are read (an index on the start time),
/// with every run of the oldest second among them: the runs of one second are ordered by
/// the millisecond in their ids, not by their ids as text (`newest_first`).
pub fn list(s: &mut dyn Store, f: &Filter) -> anyhow::Result<Vec<RunRow>> {
    let filtered = |select: &str| {
        let mut sql = Sql::new(select);
        let mut add = |cond: &str, vals: Vec<Val>| sql.add(cond, vals);
        if let Some(m) = &f.machine {
            add(
                " AND (machine_id LIKE # OR hostname = #)",
                vec![Val::Text(format!("{m}%")), Val::Text(m.clone())],
            );
        }
        if let Some(w) = &f.workload {
            add(" AND workload = #", vec![Val::Text(w.clone())]);
        }
        if let Some(t) = f.since_unix {
            add(" AND started_unix >= #", vec![Val::Int(t)]);
        }
        if let Some(t) = f.until_unix {
            add(" AND started_unix <= #", vec![Val::Int(t)]);
        }
        if let Some(t) = &f.tag {
            add(
                " AND run_id IN (SELECT run_id FROM tags WHERE name = #)",
                vec![Val::Text(t.clone())],
            );
        }
        sql
    };
    let mut sql = filtered(
        "SELECT run_id, machine_id, hostname, cpu_model, workload, started_unix, ended_unix, interrupted, points FROM runs WHERE 1 = 1",
    );
    if f.limit > 0 {
        let mut oldest = filtered("SELECT started_unix FROM runs WHERE 1 = 1");
        oldest.add(
            " ORDER BY started_unix DESC LIMIT 1 OFFSET #",
            vec![Val::Int(f.limit as i64 - 1)],
        );
        if let Some(t) = s
            .query(&oldest.text, &oldest.params)?
            .first()
            .and_then(|r| r[0].int())
        {
            sql.add(" AND started_unix >= #", vec![Val::Int(t)]);
        }
    }
    let rows = s.query(&sql.text, &sql.params)?;
    let tags = all_tags(s)?;
    let mut runs: Vec<RunRow> = rows
        .into_iter()
        .map(|r| {
            let text = |i: usize| r[i].text().unwrap_or("").to_string();
            let run_id = text(0);
            RunRow {
                tags: tags
                    .iter()
                    .filter(|(_, id)| *id == run_id)
                    .map(|(n, _)| n.clone())
                    .collect(),
                run_id,
                machine_id: text(1),
                hostname: text(2),
                cpu_model: text(3),
                workload: text(4),
                started_unix: r[5].int().unwrap_or(0),
                ended_unix: r[6].int(),
                interrupted: r[7].int().map(|i| i != 0),
                points: r[8].int().unwrap_or(0),
            }
        })
        .collect();
    runs.sort_by(|a, b| newest_first((a.started_unix, &a.run_id), (b.started_unix, &b.run_id)));
    if f.limit > 0 {
        runs.truncate(f.limit);
    }
    Ok(runs)
}

/// Newest run first: by start second, then by the millisecond in the id (pids sort as
/// text, "9998" after "10002", and wrap), then by the id.
fn newest_first(a: (i64, &str), b: (i64, &str)) -> std::cmp::Ordering {
    use crate::record::identity::start_ms;
    (b.0, start_ms(b.1), b.1).cmp(&(a.0, start_ms(a.1), a.1))
}

/// Every tag, as (name, run id).
fn all_tags(s: &mut dyn Store) -> anyhow::Result<Vec<(String, String)>> {
    Ok(s.query("SELECT name, run_id FROM tags ORDER BY name", &[])?
        .into_iter()
        .map(|r| {
            (
                r[0].text().unwrap_or("").into(),
                r[1].text().unwrap_or("").into(),
            )
        })
        .collect())
}

/// The run a name means: `last` (the newest run that started by now), a run id, or a tag. A run id comes
/// before a tag of the same name, so that a name never reaches another run than its own.
pub fn resolve(s: &mut dyn Store, name: &str) -> anyhow::Result<Option<String>> {
    let first = |rows: Vec<Vec<Val>>| rows.first().and_then(|r| r[0].text().map(str::to_string));
    if name == "last" {
        return newest(s, 1).map(|ids| ids.into_iter().next());
    }
    let by_id = s.query(
        "SELECT run_id FROM runs WHERE run_id = $1",
        &[Val::Text(name.into())],
    )?;
    if let Some(id) = first(by_id) {
        return Ok(Some(id));
    }
    s.query(
        "SELECT run_id FROM tags WHERE name = $1",
        &[Val::Text(name.into())],
    )
    .map(first)
}

/// A run that claims to start later than this after now is not among the newest: one
/// future-dated run (an import, a DUT with a wrong clock) would be `last` forever, and a
/// gate `compare baseline last` would judge it every time.
pub const CLOCK_SKEW_S: i64 = 300;

/// The ids of the newest `n` runs that started by now, newest first.
pub fn newest(s: &mut dyn Store, n: usize) -> anyhow::Result<Vec<String>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let f = Filter {
        until_unix: Some(now + CLOCK_SKEW_S),
        limit: n,
        ..Filter::default()
    };
    Ok(list(s, &f)?.into_iter().map(|r| r.run_id).collect())
}

/// The ids and tags closest to `name` (longest shared start, then nearest start time),
/// for "unknown run" messages.
pub fn nearest(s: &mut dyn Store, name: &str) -> anyhow::Result<Vec<String>> {
    let prefix: String = name.chars().take_while(|c| c.is_ascii_digit()).collect();
    let mut ids: Vec<String> = s
        .query(
            "SELECT run_id FROM runs ORDER BY started_unix DESC, run_id DESC LIMIT 1000",
            &[],
        )?
        .into_iter()
        .filter_map(|r| r[0].text().map(str::to_string))
        .collect();
    ids.extend(all_tags(s)?.into_iter().map(|(n, _)| n));
    let shared = |id: &str| {
        id.chars()
            .zip(name.chars())
            .take_while(|(a, b)| a == b)
            .count()
    };
    let target: i64 = prefix.parse().unwrap_or(0);
    let start = |id: &str| -> i64 {
        let n: String = id.chars().take_while(|c| c.is_ascii_digit()).collect();
        n.parse::<i64>().map_or(i64::MAX, |n| (n - target).abs())
    };
    ids.sort_by_key(|id| (std::cmp::Reverse(shared(id)), start(id)));
    ids.truncate(5);
    Ok(ids)
}

/// The stored lines of a run, in the order they were written: environment, records, end.
pub fn lines(s: &mut dyn Store, run_id: &str) -> anyhow::Result<Vec<String>> {
    let id = Val::Text(run_id.into());
    let head = s.query(
        "SELECT environment, run_end FROM runs WHERE run_id = $1",
        std::slice::from_ref(&id),
    )?;
    let Some(head) = head.first() else {
        return Ok(Vec::new());
    };
    let mut out = vec![head[0].text().unwrap_or("").to_string()];
    for r in s.query(
        "SELECT record FROM points WHERE run_id = $1 ORDER BY seq",
        &[id],
    )? {
        out.push(r[0].text().unwrap_or("").to_string());
    }
    if let Some(end) = head[1].text() {
        out.push(end.to_string());
    }
    Ok(out)
}

/// A run read back through the JSON Lines reader (the same checks as a file).
pub fn load(s: &mut dyn Store, run_id: &str) -> anyhow::Result<Option<Run>> {
    let lines = lines(s, run_id)?;
    if lines.is_empty() {
        return Ok(None);
    }
    let mut run = Run {
        run_id: run_id.into(),
        ..Run::default()
    };
    // A store written before imports were deduplicated may hold a point twice.
    let mut seen = SeenPoints::default();
    for (i, text) in lines.iter().enumerate() {
        match parse_line(text)
            .map_err(|e| anyhow!("store {}: run {run_id} line {}: {e}", s.name(), i + 1))?
        {
            Line::Environment(e) => run.environment = Some(*e),
            Line::Record(r) if !seen.first_time(&r) => {}
            Line::Record(r) => run.records.push(*r),
            Line::End(e) => run.end = Some(*e),
        }
    }
    Ok(Some(run))
}

/// Stores every run of `loaded` (read with the JSON Lines reader), each in one
/// transaction. A point the store holds already (the same run and point, in any order)
/// is kept, not doubled; new ones follow the run's stored points. Returns (runs, new
/// points).
pub fn import(s: &mut dyn Store, loaded: &Loaded) -> anyhow::Result<(usize, usize)> {
    let mut added = 0;
    let mut runs = 0;
    for run in &loaded.runs {
        let Some(env) = &run.environment else {
            return Err(anyhow!(
                "run {} has no environment line: import the file its run wrote with --output",
                run.run_id
            ));
        };
        let mut workloads: Vec<String> = Vec::new();
        for r in &run.records {
            let w = r.to_json()["workload"].as_str().unwrap_or("").to_string();
            if !workloads.contains(&w) {
                workloads.push(w);
            }
        }
        check_run_id(s, &run.run_id)?;
        in_transaction(s, false, |s| {
            let mut seen = SeenPoints::default();
            let stored = load(s, &run.run_id)?;
            if let Some(why) = stored
                .as_ref()
                .and_then(|st| conflict(st, env, &run.records))
            {
                return Err(Refused(format!(
                    "run {} conflicts with the stored run of that id ({why}): not imported; the same id is another run, not a duplicate",
                    crate::units::shown(&run.run_id)
                ))
                .into());
            }
            for r in stored.iter().flat_map(|st| &st.records) {
                seen.first_time(r);
            }
            let first_seq = next_seq(s, &run.run_id)?;
            begin_run(s, env, &workloads.join(","))?;
            let new = run.records.iter().filter(|r| seen.first_time(r));
            for (seq, rec) in (first_seq..).zip(new) {
                write_point(s, seq, rec)?;
                added += 1;
            }
            if let Some(end) = &run.end {
                end_run(s, end, None)?;
            }
            Ok(())
        })?;
        runs += 1;
    }
    Ok((runs, added))
}

/// Why a run to import is not the stored run of the same id: another machine or start,
/// or a point of the same identity with other values. None for a true duplicate.
fn conflict(stored: &Run, env: &Environment, records: &[AnyRecord]) -> Option<String> {
    if let Some(st) = &stored.environment {
        if machine_of(st) != machine_of(env) || st.hostname != env.hostname {
            return Some("another machine".into());
        }
        if st.started_unix != env.started_unix {
            return Some(format!(
                "started at {} there, {} here",
                env.started_unix, st.started_unix
            ));
        }
    }
    let by_key: std::collections::HashMap<u64, serde_json::Value> = stored
        .records
        .iter()
        .map(|r| (SeenPoints::key(r), r.to_json()))
        .collect();
    records.iter().find_map(|r| {
        let old = by_key.get(&SeenPoints::key(r))?;
        (*old != r.to_json()).then(|| format!("point {} has other values", r.label()))
    })
}

/// The longest run id accepted from a file.
pub const RUN_ID_MAX_CHARS: usize = 128;

/// Whether a name has the shape of the ids cryptobench makes: `<secs>-<pid>`, then an
/// optional random part (8 hex digits) and an optional counter.
pub fn looks_like_run_id(name: &str) -> bool {
    let parts: Vec<&str> = name.split('-').collect();
    let digits = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit());
    let hex8 = |p: &str| p.len() == 8 && p.chars().all(|c| c.is_ascii_hexdigit());
    match parts[..] {
        [a, b] => digits(a) && digits(b),
        [a, b, c] => digits(a) && digits(b) && (hex8(c) || digits(c)),
        [a, b, c, d] => digits(a) && digits(b) && hex8(c) && digits(d),
        _ => false,
    }
}

/// Refuses an imported run id that could not be named unambiguously where runs are
/// named (`last`, a tag, a list, a file), or shown on one line.
pub fn check_run_id(s: &mut dyn Store, id: &str) -> anyhow::Result<()> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    let why = if let Some(why) = unnameable(id, RUN_ID_MAX_CHARS) {
        Some(why)
    } else if !id.chars().all(allowed) || id.starts_with('.') {
        Some("only letters, digits, '-', '_' and '.' may name a run, not '.' first".into())
    } else if resolve(s, id)?.as_deref() != Some(id)
        && all_tags(s)?.iter().any(|(tag, _)| tag == id)
    {
        // A new run of a tag's name would take the tag's place; the stored run of that
        // id (made before the tag) is its own.
        Some("a tag has that name".into())
    } else {
        None
    };
    match why {
        Some(why) => Err(Refused(format!(
            "invalid run id '{}' in the file: {why}: not imported",
            crate::units::shown(id)
        ))
        .into()),
        None => Ok(()),
    }
}

/// Why `name` cannot name a run or a tag where runs are named (`last`, `last:N`, a list,
/// a file) or be shown on one line; None when it can.
fn unnameable(name: &str, max_chars: usize) -> Option<String> {
    if name.is_empty() {
        Some("it is empty".to_string())
    } else if name.chars().count() > max_chars {
        Some(format!("it is longer than {max_chars} characters"))
    } else if name == "last" || name.starts_with("last:") {
        Some("last and last:N name the newest runs".into())
    } else if name.contains(|c: char| c == ',' || c.is_whitespace() || c.is_control()) {
        Some("it holds a comma, a space or a control character".into())
    } else if name.starts_with('-') || name.contains('/') || name.ends_with(".jsonl") {
        Some("it would be read as a file or an option".into())
    } else {
        None
    }
}

/// A run that import refuses: bad input, not a failure of the store.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

/// The seq after a run's last stored point.
fn next_seq(s: &mut dyn Store, run_id: &str) -> anyhow::Result<usize> {
    Ok(s.query(
        "SELECT COALESCE(MAX(seq) + 1, 0) FROM points WHERE run_id = $1",
        &[Val::Text(run_id.into())],
    )?
    .first()
    .and_then(|r| r[0].int())
    .unwrap_or(0) as usize)
}

/// The longest tag accepted.
pub const TAG_MAX_CHARS: usize = 64;

/// Refuses a tag that could be taken for something else where runs are named (a run id,
/// `last`, `last:N`, a list, a file) or that cannot be shown on one line.
pub fn check_tag_name(s: &mut dyn Store, name: &str) -> anyhow::Result<()> {
    let why = if let Some(why) = unnameable(name, TAG_MAX_CHARS) {
        Some(why)
    } else if looks_like_run_id(name) {
        Some("it looks like a run id".into())
    } else if resolve(s, name)?.as_deref() == Some(name) {
        Some("it is the id of a run".into())
    } else {
        None
    };
    match why {
        Some(why) => Err(anyhow!(
            "invalid tag '{}': {why}: give a name such as baseline",
            crate::units::shown(name)
        )),
        None => Ok(()),
    }
}

/// The tags naming a run.
pub fn tags_of(s: &mut dyn Store, run_id: &str) -> anyhow::Result<Vec<String>> {
    Ok(all_tags(s)?
        .into_iter()
        .filter(|(_, id)| id == run_id)
        .map(|(n, _)| n)
        .collect())
}

/// Names a run; a tag names one run, so an existing tag moves.
pub fn tag(s: &mut dyn Store, run_id: &str, name: &str) -> anyhow::Result<()> {
    check_tag_name(s, name)?;
    in_transaction(s, false, |s| {
        s.execute(
            "DELETE FROM tags WHERE name = $1",
            &[Val::Text(name.into())],
        )?;
        s.execute(
            "INSERT INTO tags (name, run_id) VALUES ($1, $2)",
            &[Val::Text(name.into()), Val::Text(run_id.into())],
        )
        .map(|_| ())
    })
}

/// Deletes a run, its points and its tags.
pub fn remove(s: &mut dyn Store, run_id: &str) -> anyhow::Result<()> {
    let id = [Val::Text(run_id.into())];
    in_transaction(s, false, |s| {
        s.execute("DELETE FROM points WHERE run_id = $1", &id)?;
        s.execute("DELETE FROM tags WHERE run_id = $1", &id)?;
        s.execute("DELETE FROM runs WHERE run_id = $1", &id)
            .map(|_| ())
    })
}
