//! One reader for every results file: environments and records of any workload, from one
//! or more files and runs, schema 1 (issues 2-5) upgraded on the fly. A bad line is
//! reported by number and skipped; every good line is kept.

use super::{Environment, RunEnd, Workload, SCHEMA};
use anyhow::anyhow;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

pub use super::AnyRecord;

/// One run found in the files: its environment (if its line was there) and its records,
/// in file order. Runs are never merged with each other.
#[derive(Clone, Debug, Default)]
pub struct Run {
    pub run_id: String,
    pub environment: Option<Environment>,
    pub records: Vec<AnyRecord>,
    /// The run's last line; None when it never wrote one (killed) or predates schema 2.
    pub end: Option<RunEnd>,
    /// The files it came from.
    pub sources: Vec<PathBuf>,
}

/// A line that could not be used, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct SkippedLine {
    pub file: PathBuf,
    pub line: usize,
    pub reason: String,
}

#[derive(Debug, Default)]
pub struct Loaded {
    /// In order of first appearance.
    pub runs: Vec<Run>,
    pub skipped: Vec<SkippedLine>,
    /// Distinct `kernel_crypto` values seen: runs on one machine share one copy, so that
    /// memory grows with machines, not with runs.
    pub shared_kernel_crypto: Vec<std::sync::Arc<crate::kernel::KernelFacts>>,
}

/// The points of each run seen so far. A record repeating one (a run's lines read twice:
/// a file concatenated to itself, the same run imported twice) is the same measurement,
/// and must be counted once.
#[derive(Default)]
pub struct SeenPoints(std::collections::HashSet<(String, PointIdentity)>);

/// What tells two records of one run apart: compare's identity, the record's own label
/// (unique within a run) and, for vpn, the round (one record per point and round).
type PointIdentity = (super::identity::Identity, String, u32);

impl SeenPoints {
    /// True the first time a run's point is seen.
    pub fn first_time(&mut self, rec: &AnyRecord) -> bool {
        let (label, round) = rec.point_key();
        let identity = super::identity::identity(rec, None);
        self.0
            .insert((rec.run_id().to_string(), (identity, label, round)))
    }
}

impl Loaded {
    pub fn record_count(&self) -> usize {
        self.runs.iter().map(|r| r.records.len()).sum()
    }
}

/// Reads every file in order. An unreadable file is an error; a bad line is skipped and
/// reported.
pub fn read_files(paths: &[PathBuf]) -> anyhow::Result<Loaded> {
    let mut loaded = Loaded::default();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    let mut seen = SeenPoints::default();
    for path in paths {
        let file = open_regular(path)?;
        read_into(path, file, &mut loaded, &mut index, &mut seen)?;
    }
    Ok(loaded)
}

/// Opens a results file for reading, refusing anything but a regular file (a FIFO would
/// block forever) — except standard input, given as `-`.
fn open_regular(path: &Path) -> anyhow::Result<Box<dyn Read>> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(std::io::stdin()));
    }
    let shown = crate::units::shown_path(path);
    let meta = std::fs::metadata(path).map_err(|e| {
        anyhow!("cannot read {shown}: {e}: give a results file written with --output")
    })?;
    if !meta.is_file() {
        return Err(anyhow!(
            "cannot read {shown}: not a regular file: give a results file written with --output"
        ));
    }
    std::fs::File::open(path)
        .map(|f| Box::new(f) as Box<dyn Read>)
        .map_err(|e| anyhow!("cannot read {shown}: {e}"))
}

fn read_into(
    path: &Path,
    file: Box<dyn Read>,
    loaded: &mut Loaded,
    index: &mut BTreeMap<String, usize>,
    seen: &mut SeenPoints,
) -> anyhow::Result<()> {
    let shown = crate::units::shown_path(path);
    for (i, line) in BufReader::new(file).split(b'\n').enumerate() {
        let line = line.map_err(|e| anyhow!("cannot read {shown}: {e}"))?;
        let skip = |reason: String| SkippedLine {
            file: path.to_path_buf(),
            line: i + 1,
            reason,
        };
        let Ok(text) = std::str::from_utf8(&line) else {
            loaded.skipped.push(skip("not UTF-8".into()));
            continue;
        };
        if text.trim().is_empty() {
            continue;
        }
        match parse_line(text) {
            Ok(Line::Environment(mut env)) => {
                match loaded
                    .shared_kernel_crypto
                    .iter()
                    .find(|k| ***k == *env.kernel_crypto)
                {
                    Some(k) => env.kernel_crypto = k.clone(),
                    None => loaded.shared_kernel_crypto.push(env.kernel_crypto.clone()),
                }
                let run = run_mut(loaded, index, &env.run_id, path);
                if run.environment.is_none() {
                    run.environment = Some(*env);
                } else {
                    loaded
                        .skipped
                        .push(skip("a second environment line for the same run".into()));
                }
            }
            Ok(Line::End(end)) => {
                let id = end.run_id.clone();
                run_mut(loaded, index, &id, path).end = Some(*end);
            }
            Ok(Line::Record(rec)) if !seen.first_time(&rec) => loaded.skipped.push(skip(
                "duplicate of an earlier line (same run and point)".into(),
            )),
            Ok(Line::Record(rec)) => {
                let run_id = rec.run_id().to_string();
                run_mut(loaded, index, &run_id, path).records.push(*rec);
            }
            Err(reason) => loaded.skipped.push(skip(reason.to_string())),
        }
    }
    Ok(())
}

fn run_mut<'a>(
    loaded: &'a mut Loaded,
    index: &mut BTreeMap<String, usize>,
    run_id: &str,
    path: &Path,
) -> &'a mut Run {
    // Nearly every line belongs to a run seen already: look it up without a new String.
    let i = match index.get(run_id) {
        Some(&i) => i,
        None => {
            loaded.runs.push(Run {
                run_id: run_id.to_string(),
                ..Run::default()
            });
            index.insert(run_id.to_string(), loaded.runs.len() - 1);
            loaded.runs.len() - 1
        }
    };
    let run = &mut loaded.runs[i];
    if !run.sources.iter().any(|s| s == path) {
        run.sources.push(path.to_path_buf());
    }
    run
}

pub enum Line {
    Environment(Box<Environment>),
    End(Box<RunEnd>),
    Record(Box<AnyRecord>),
}

/// One JSON Lines line: an environment or a record of a known workload, any schema up to
/// ours. Records are checked for values no measurement can produce.
pub fn parse_line(text: &str) -> anyhow::Result<Line> {
    // A schema-2 record as this version writes it (nearly every line of a big file) goes
    // straight from text to its type: a serde_json::Value first made reading the main
    // cost of `report`. The guess from the line's start is checked by the typed parse and
    // the workload it finds; anything else takes the general path.
    if let Some(rec) = typed_record(text) {
        check(&rec)?;
        return Ok(Line::Record(Box::new(rec)));
    }
    let mut v: Value = serde_json::from_str(text).map_err(|e| anyhow!("not JSON: {e}"))?;
    let schema = v.get("schema").and_then(Value::as_u64).unwrap_or(1);
    if schema > SCHEMA as u64 {
        return Err(anyhow!(
            "schema {schema} is newer than this cryptobench reads ({SCHEMA}): upgrade cryptobench"
        ));
    }
    match v.get("kind").and_then(Value::as_str) {
        Some("environment") => serde_json::from_value(v)
            .map(|e| Line::Environment(Box::new(e)))
            .map_err(|e| anyhow!("environment: {e}")),
        Some("end") => serde_json::from_value(v)
            .map(|e| Line::End(Box::new(e)))
            .map_err(|e| anyhow!("end of run: {e}")),
        Some("record") => {
            if schema < 2 {
                upgrade_v1(&mut v)?;
            }
            let workload = v.get("workload").and_then(Value::as_str).unwrap_or("");
            let Some(workload) = Workload::ALL.iter().find(|w| w.name() == workload) else {
                return Err(anyhow!("unknown workload {workload:?}"));
            };
            let rec = AnyRecord::from_value(*workload, v).map_err(|e| anyhow!("record: {e}"))?;
            check(&rec)?;
            Ok(Line::Record(Box::new(rec)))
        }
        _ => Err(anyhow!("neither an environment nor a record")),
    }
}

fn typed_record(text: &str) -> Option<AnyRecord> {
    let head = text.strip_prefix("{\"kind\":\"record\",\"schema\":2,")?;
    let head = head.get(..head.len().min(200)).unwrap_or(head);
    let name = &head[head.find("\"workload\":\"")? + "\"workload\":\"".len()..];
    let name = &name[..name.find('"')?];
    let workload = Workload::ALL.iter().find(|w| w.name() == name)?;
    let rec = AnyRecord::from_text(*workload, text).ok()?;
    (rec.workload() == *workload).then_some(rec)
}

/// Values that no run can produce: a record holding them is damaged or hand-made.
fn check(rec: &AnyRecord) -> anyhow::Result<()> {
    rec.check()?;
    let (bps, ci, others) = (
        rec.throughput_bps(),
        rec.throughput_bps_ci(),
        rec.others_cpu_pct(),
    );
    if bps < 0.0 || ci.is_some_and(|[lo, hi]| lo < 0.0 || hi < lo) {
        return Err(anyhow!(
            "invalid record: negative throughput or an inverted interval"
        ));
    }
    if !(0.0..=100.0 + 1e-9).contains(&others) {
        return Err(anyhow!("invalid record: others_cpu_pct outside 0-100"));
    }
    Ok(())
}

/// Schema 1 (issues 2-5) to schema 2: the shared envelope's fields, with the workloads'
/// old names mapped onto them. Nothing measured is invented: a value schema 1 did not
/// have becomes null, or is derived from fields it did have.
fn upgrade_v1(v: &mut Value) -> anyhow::Result<()> {
    let o = v
        .as_object_mut()
        .ok_or_else(|| anyhow!("a record must be a JSON object"))?;
    o.insert("schema".into(), json!(SCHEMA));
    let workload = o
        .get("workload")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let num = |o: &Map<String, Value>, k: &str| o.get(k).and_then(Value::as_f64);
    // Schema 1 could compute others_cpu_pct over 100 (a bug): keep the record, say so.
    if let Some(others) = num(o, "others_cpu_pct").filter(|x| *x > 100.0) {
        o.insert("others_cpu_pct".into(), json!(100.0));
        if let Some(Value::Array(notes)) = o.get_mut("notes") {
            notes.push(json!(format!(
                "others_cpu_pct was {others:.0} in this schema-1 record (over 100%, a bug of that version): shown as 100"
            )));
        }
    }
    match workload.as_str() {
        "speed" => {
            let label = match o.get("variant").and_then(Value::as_str) {
                Some(var) => format!("{} [{var}]", str_of(o, "impl")),
                None => str_of(o, "impl"),
            };
            o.entry("label").or_insert(json!(label));
            let disturbed = o
                .get("disturbed_trials")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                > 0;
            o.entry("disturbed").or_insert(json!(disturbed));
        }
        "tls" => {
            o.insert("impl".into(), json!("nginx"));
            o.entry("impl_version").or_insert(json!(""));
            o.entry("variant").or_insert(Value::Null);
            let label = str_of(o, "suite");
            o.insert("label".into(), json!(label));
            rename(o, "server_cpu_user_s", "cpu_user_s");
            rename(o, "server_cpu_sys_s", "cpu_sys_s");
            let bps = num(o, "throughput_bps");
            o.insert(
                "samples_bps".into(),
                json!(bps.into_iter().collect::<Vec<_>>()),
            );
            o.insert("throughput_bps_ci".into(), Value::Null);
        }
        "vpn" => {
            rename(o, "implementation", "impl_version");
            let tunnel = str_of(o, "tunnel");
            o.insert("impl".into(), json!(tunnel));
            o.entry("variant").or_insert(Value::Null);
            let label = crate::record::vpn::label(
                &tunnel,
                &str_of(o, "cipher"),
                o.get("auth").and_then(Value::as_str),
            );
            o.insert("label".into(), json!(label));
            rename(o, "tunnel_cpu_user_s", "cpu_user_s");
            rename(o, "tunnel_cpu_sys_s", "cpu_sys_s");
            rename(o, "tunnel_cpu_s_per_gb", "cpu_s_per_gb");
            let bps = num(o, "throughput_bps");
            o.insert(
                "samples_bps".into(),
                json!(bps.into_iter().collect::<Vec<_>>()),
            );
            o.insert("throughput_bps_ci".into(), Value::Null);
            let disturbed =
                num(o, "others_cpu_pct").unwrap_or(0.0) >= crate::record::vpn::DISTURBED_PCT;
            o.entry("disturbed").or_insert(json!(disturbed));
            let wall = num(o, "transfer_s").unwrap_or(0.0);
            o.entry("wall_s").or_insert(json!(wall));
        }
        other => return Err(anyhow!("unknown workload {other:?}")),
    }
    Ok(())
}

fn str_of(o: &Map<String, Value>, k: &str) -> String {
    o.get(k).and_then(Value::as_str).unwrap_or("").to_string()
}

fn rename(o: &mut Map<String, Value>, from: &str, to: &str) {
    if let Some(v) = o.remove(from) {
        o.insert(to.into(), v);
    }
}

#[cfg(test)]
mod tests;

/// A schema-1 record (as issues 2-5 wrote it) upgraded to its workload's record type:
/// how the unit tests build records, so that they also exercise the upgrade.
#[cfg(test)]
pub fn from_v1<D: serde::de::DeserializeOwned>(mut v: Value) -> super::Record<D> {
    upgrade_v1(&mut v).expect("a schema-1 record");
    serde_json::from_value(v).expect("an upgraded record")
}
