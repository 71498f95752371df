//! One reader for every results file: environments and records of any workload, from one
//! or more files and runs, schema 1 (issues 2-5) upgraded on the fly. A bad line is
//! reported by number and skipped; every good line is kept.

use super::{Environment, RunEnd, Workload, SCHEMA};
use anyhow::anyhow;
use serde_json::{json, Map, Value};
use std::collections::{HashMap, VecDeque};
use std::io::Read;
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

/// Skipped lines: all counted, the first `KEPT` kept with their reasons (6.7 million
/// damaged lines, each kept and printed, took 895 MB).
#[derive(Clone, Debug, Default)]
pub struct Skipped {
    first: Vec<SkippedLine>,
    total: usize,
}

/// None skipped: what a document that read no file has.
pub static NONE_SKIPPED: Skipped = Skipped {
    first: Vec::new(),
    total: 0,
};

impl Skipped {
    pub const KEPT: usize = 20;

    pub fn push(&mut self, s: SkippedLine) {
        self.total += 1;
        if self.first.len() < Self::KEPT {
            self.first.push(s);
        }
    }

    /// Every skipped line, the ones not kept included.
    pub fn total(&self) -> usize {
        self.total
    }

    /// Another reading's skipped lines after these.
    pub fn extend(&mut self, other: Skipped) {
        let not_kept = other.total - other.first.len();
        for s in other.first {
            self.push(s);
        }
        self.total += not_kept;
    }
}

/// The kept lines.
impl std::ops::Deref for Skipped {
    type Target = [SkippedLine];
    fn deref(&self) -> &[SkippedLine] {
        &self.first
    }
}

#[derive(Debug, Default)]
pub struct Loaded {
    /// In order of first appearance.
    pub runs: Vec<Run>,
    pub skipped: Skipped,
}

/// The points of each run seen so far. A record repeating one (a run's lines read twice:
/// a file concatenated to itself, the same run imported twice) is the same measurement,
/// and must be counted once; one of the same point with other figures is another
/// measurement under a colliding id. Kept as 64-bit hashes (the point's, its figures'):
/// a million points hold about 32 MB, not the identities themselves.
#[derive(Default)]
pub struct SeenPoints(HashMap<u64, u64>);

/// A record against the points seen before it.
#[derive(Debug, PartialEq)]
pub enum Seen {
    First,
    /// The same point with the same figures: the same line read again.
    Again,
    /// The same point with other figures.
    Conflict,
}

impl SeenPoints {
    /// True the first time a run's point is seen.
    pub fn first_time(&mut self, rec: &AnyRecord) -> bool {
        self.see(rec) == Seen::First
    }

    pub fn see(&mut self, rec: &AnyRecord) -> Seen {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        let bits = |x: f64| x.to_bits();
        (
            bits(rec.throughput_bps()),
            rec.throughput_bps_ci().map(|c| c.map(bits)),
            rec.samples_bps()
                .iter()
                .map(|&x| bits(x))
                .collect::<Vec<_>>(),
        )
            .hash(&mut h);
        let figures = h.finish();
        match self.0.entry(Self::key(rec)) {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(figures);
                Seen::First
            }
            std::collections::hash_map::Entry::Occupied(o) if *o.get() == figures => Seen::Again,
            std::collections::hash_map::Entry::Occupied(_) => Seen::Conflict,
        }
    }

    /// The point a record is of, within its run, hashed.
    pub fn key(rec: &AnyRecord) -> u64 {
        use std::hash::{Hash, Hasher};
        // What tells two records of one run apart: compare's identity, the record's own
        // label (unique within a run) and, for vpn, the round.
        let (label, round) = rec.point_key();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (
            rec.run_id(),
            super::identity::identity(rec, None),
            label,
            round,
        )
            .hash(&mut h);
        h.finish()
    }
}

impl Loaded {
    pub fn record_count(&self) -> usize {
        self.runs.iter().map(|r| r.records.len()).sum()
    }

    /// Its runs as a source for the renderers.
    pub fn source(&self) -> InMemory<'_> {
        InMemory {
            runs: self.runs.iter(),
            skipped: &self.skipped,
        }
    }
}

/// Where a document's runs come from: the reader, one whole run at a time, or runs
/// already in memory.
pub trait RunSource {
    type Item: std::borrow::Borrow<Run>;
    /// The next run; None when there are no more. Err: a file could not be read.
    fn next_run(&mut self) -> anyhow::Result<Option<Self::Item>>;
    /// The lines skipped so far: all of them once `next_run` has returned None.
    fn skipped(&self) -> &Skipped;
}

/// The runs of a `Loaded`, in order.
pub struct InMemory<'a> {
    runs: std::slice::Iter<'a, Run>,
    skipped: &'a Skipped,
}

impl<'a> RunSource for InMemory<'a> {
    type Item = &'a Run;
    fn next_run(&mut self) -> anyhow::Result<Option<&'a Run>> {
        Ok(self.runs.next())
    }
    fn skipped(&self) -> &Skipped {
        self.skipped
    }
}

impl RunSource for Reader {
    type Item = Run;
    fn next_run(&mut self) -> anyhow::Result<Option<Run>> {
        Reader::next_run(self)
    }
    fn skipped(&self) -> &Skipped {
        &self.skipped
    }
}

/// Reads every file in order. An unreadable file is an error; a bad line is skipped and
/// reported.
pub fn read_files(paths: &[PathBuf]) -> anyhow::Result<Loaded> {
    let mut reader = Reader::open(paths)?;
    let mut runs = Vec::new();
    while let Some(run) = reader.next_run()? {
        runs.push(run);
    }
    Ok(Loaded {
        runs,
        skipped: reader.skipped,
    })
}

/// The files' runs one at a time: each is handed out once it is whole, when its end line
/// has been read, or at the end of the last file for a run that never wrote one (killed,
/// or schema 1). Runs come out in the order they first appeared: one that ends while a
/// run begun before it is still open waits for it. Only open runs are held, so memory
/// follows the runs written at the same time, not the size of the files.
pub struct Reader {
    paths: Vec<PathBuf>,
    lines: parsed::Lines,
    /// Open runs, in order of first appearance; `index` maps a run id to its place
    /// counted from the first run ever opened (`handed_out` of them are gone).
    open: VecDeque<(Run, bool)>,
    index: HashMap<String, usize>,
    handed_out: usize,
    /// Whole runs read ahead by `has_records`.
    ahead: VecDeque<Run>,
    seen: SeenPoints,
    skipped: Skipped,
}

impl Reader {
    /// Opens every file first, so that a missing one is refused before anything is read.
    pub fn open(paths: &[PathBuf]) -> anyhow::Result<Reader> {
        let files = paths
            .iter()
            .map(|p| Ok((crate::units::shown_path(p), open_regular(p)?)))
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok(Reader {
            paths: paths.to_vec(),
            lines: parsed::Lines::start(files),
            open: VecDeque::new(),
            index: HashMap::new(),
            handed_out: 0,
            ahead: VecDeque::new(),
            seen: SeenPoints::default(),
            skipped: Skipped::default(),
        })
    }

    /// Whether the files hold any record: reads on until a run with one, holding the runs
    /// before it, so that a file of no records is refused before anything is written.
    pub fn has_records(&mut self) -> anyhow::Result<bool> {
        loop {
            if self.ahead.iter().any(|r| !r.records.is_empty()) {
                return Ok(true);
            }
            match self.read_run()? {
                Some(run) => self.ahead.push_back(run),
                None => return Ok(false),
            }
        }
    }

    /// The next whole run; None when the files are done. Err: a file could not be read.
    pub fn next_run(&mut self) -> anyhow::Result<Option<Run>> {
        match self.ahead.pop_front() {
            Some(run) => Ok(Some(run)),
            None => self.read_run(),
        }
    }

    fn read_run(&mut self) -> anyhow::Result<Option<Run>> {
        loop {
            // Whole once its end line came and every record it counts: a file sorted by
            // line ("end" first) or with the end line moved up still reads whole.
            let whole = |(run, ended): &(Run, bool)| {
                *ended && run.records.len() >= run.end.as_ref().map_or(0, |e| e.points)
            };
            if self.open.front().is_some_and(whole) {
                return Ok(self.pop());
            }
            // Every file read: what is still open never wrote its end line.
            let Some(line) = self.lines.next_line().map_err(anyhow::Error::msg)? else {
                return Ok(self.pop());
            };
            if let Err(reason) = line.parsed.and_then(|l| self.take_line(line.file, l)) {
                self.skipped.push(SkippedLine {
                    file: self.paths[line.file].clone(),
                    line: line.line,
                    reason,
                });
            }
        }
    }

    fn pop(&mut self) -> Option<Run> {
        let (run, _) = self.open.pop_front()?;
        self.handed_out += 1;
        // Kept (without its place) so that a late line of a run handed out is told apart.
        self.index.insert(run.run_id.clone(), usize::MAX);
        Some(run)
    }

    /// Files one line of file `file` into its run. Err: why the line is skipped.
    fn take_line(&mut self, file: usize, line: Line) -> Result<(), String> {
        match line {
            Line::Environment(env) => {
                let (run, _) = self.run_mut(&env.run_id, file)?;
                if run.environment.is_some() {
                    return Err("a second environment line for the same run".into());
                }
                run.environment = Some(*env);
            }
            Line::End(end) => {
                let (run, ended) = self.run_mut(&end.run_id, file)?;
                if *ended {
                    return Err("a second end line for the same run".into());
                }
                run.end = Some(*end);
                *ended = true;
            }
            Line::Record(rec) => {
                match self.seen.see(&rec) {
                    Seen::First => {}
                    Seen::Again => {
                        return Err("duplicate of an earlier line (same run and point)".into())
                    }
                    // Another run under the same id (or an edited line), not a duplicate.
                    Seen::Conflict => {
                        return Err(
                            "conflict: an earlier line has this point with other figures".into(),
                        )
                    }
                }
                let (run, _) = self.run_mut(rec.run_id(), file)?;
                run.records.push(*rec);
            }
        }
        Ok(())
    }

    /// The open run `run_id` (opened now if new), with whether its end line came.
    /// Err: the run was handed out already, its end line read before this line.
    fn run_mut(&mut self, run_id: &str, file: usize) -> Result<&mut (Run, bool), String> {
        let path = &self.paths[file];
        // Nearly every line belongs to a run seen already: look it up without a new String.
        let place = match self.index.get(run_id) {
            Some(&usize::MAX) => {
                return Err(format!(
                "run {run_id} ended on an earlier line (its end line): a line after it is not read"
            ))
            }
            Some(&place) => place,
            None => {
                let place = self.handed_out + self.open.len();
                self.open.push_back((
                    Run {
                        run_id: run_id.to_string(),
                        ..Run::default()
                    },
                    false,
                ));
                self.index.insert(run_id.to_string(), place);
                place
            }
        };
        let slot = &mut self.open[place - self.handed_out];
        if !slot.0.sources.iter().any(|s| s == path) {
            slot.0.sources.push(path.to_path_buf());
        }
        Ok(slot)
    }
}

/// Opens a results file for reading, refusing anything but a regular file (a FIFO would
/// block forever) — except standard input, given as `-`.
fn open_regular(path: &Path) -> anyhow::Result<Box<dyn Read + Send>> {
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
        .map(|f| Box::new(f) as Box<dyn Read + Send>)
        .map_err(|e| anyhow!("cannot read {shown}: {e}"))
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
    // A line with an over-long string takes the general path, which cuts it.
    let long = has_long_string(text);
    if let Some(rec) = typed_record(text).filter(|_| !long) {
        check(&rec)?;
        return Ok(Line::Record(Box::new(rec)));
    }
    // An environment (about 11 KB, most of it the kernel's crypto list) too: through a
    // Value it was a third of reading a file of many short runs.
    if !long && text.starts_with("{\"kind\":\"environment\"") {
        if let Ok(env) = serde_json::from_str::<Environment>(text) {
            if env.schema <= SCHEMA {
                return Ok(Line::Environment(Box::new(env)));
            }
        }
    }
    let mut v = strict::from_str(text).map_err(|e| anyhow!("not JSON: {e}"))?;
    if long {
        cut_long_strings(&mut v);
    }
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

/// The longest string a record keeps, in characters: a run writes evidence lines and
/// notes of a few hundred; a longer one (a hand-made or damaged record) is cut, so that
/// no view prints 100,000 characters in one cell.
pub const STRING_MAX: usize = 4096;

/// Whether a JSON text holds a string (or key) of more than STRING_MAX bytes: one pass
/// over the bytes, escapes skipped, so that the typed fast path need not look inside.
fn has_long_string(text: &str) -> bool {
    if text.len() <= STRING_MAX {
        return false;
    }
    let (mut start, mut escaped) = (None::<usize>, false);
    for (i, b) in text.bytes().enumerate() {
        match start {
            None if b == b'"' => start = Some(i),
            None => {}
            Some(_) if escaped => escaped = false,
            Some(_) if b == b'\\' => escaped = true,
            Some(s) if b == b'"' => {
                if i - s - 1 > STRING_MAX {
                    return true;
                }
                start = None;
            }
            Some(_) => {}
        }
    }
    false
}

/// Cuts every string value over STRING_MAX characters, saying how long it was.
fn cut_long_strings(v: &mut Value) {
    match v {
        Value::String(s) if s.chars().count() > STRING_MAX => {
            let head: String = s.chars().take(STRING_MAX).collect();
            *s = format!("{head}... (cut on read: {} bytes)", s.len());
        }
        Value::Array(items) => items.iter_mut().for_each(cut_long_strings),
        Value::Object(fields) => fields.values_mut().for_each(cut_long_strings),
        _ => {}
    }
}

/// Values that no run can produce: a record holding them is damaged or hand-made.
fn check(rec: &AnyRecord) -> anyhow::Result<()> {
    rec.check()?;
    let (bps, ci, others) = (
        rec.throughput_bps(),
        rec.throughput_bps_ci(),
        rec.others_cpu_pct(),
    );
    // 100 TB/s: beyond any machine's memory bandwidth.
    let rate = |x: f64| x > 0.0 && x < 1e14;
    // Null (NaN) where bytes do not apply: public-key operations, checked by speed.
    if bps.is_nan() && rec.workload() != Workload::Speed || !bps.is_nan() && !rate(bps) {
        return Err(anyhow!(
            "invalid record: throughput_bps not in (0, 1e14) bytes/s"
        ));
    }
    if let Some([lo, hi]) = ci {
        if !(lo >= 0.0 && lo <= hi && hi.is_finite()) {
            return Err(anyhow!("invalid record: an inverted or negative interval"));
        }
        let slack = 1e-9 * hi;
        if bps < lo - slack || bps > hi + slack {
            return Err(anyhow!(
                "invalid record: throughput_bps outside its interval"
            ));
        }
    }
    if rec.samples_bps().iter().any(|&x| !(0.0..1e14).contains(&x)) {
        return Err(anyhow!(
            "invalid record: a samples_bps value not in [0, 1e14)"
        ));
    }
    let time = |x: f64| x.is_finite() && x >= 0.0;
    if !time(rec.wall_s()) || !rec.cpu_s().iter().flatten().all(|&x| time(x)) {
        return Err(anyhow!(
            "invalid record: a negative or infinite wall or CPU time"
        ));
    }
    if !super::PERCENT.contains(&others) {
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
                num(o, "others_cpu_pct").unwrap_or(0.0) >= crate::record::window::DISTURBED_PCT;
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

mod parsed;
mod strict;
#[cfg(test)]
mod tests;

/// A schema-1 record (as issues 2-5 wrote it) upgraded to its workload's record type:
/// how the unit tests build records, so that they also exercise the upgrade.
#[cfg(test)]
pub fn from_v1<D: serde::de::DeserializeOwned>(mut v: Value) -> super::Record<D> {
    upgrade_v1(&mut v).expect("a schema-1 record");
    serde_json::from_value(v).expect("an upgraded record")
}
