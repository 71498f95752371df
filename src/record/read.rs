//! One reader for every results file: environments and records of any workload, from one
//! or more files and runs, schema 1 (issues 2-5) upgraded on the fly. A bad line is
//! reported by number and skipped; every good line is kept.

use super::end::RunEnd;
use super::environment::Environment;
use anyhow::anyhow;
use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::path::{Path, PathBuf};

pub use super::any::AnyRecord;
pub use line::{parse_line, Line};

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

mod line;
mod parsed;
mod strict;
#[cfg(test)]
mod tests;

/// A schema-1 record (as issues 2-5 wrote it) upgraded to its workload's record type:
/// how the unit tests build records, so that they also exercise the upgrade.
#[cfg(test)]
pub fn from_v1<D: serde::de::DeserializeOwned>(mut v: serde_json::Value) -> super::Record<D> {
    line::upgrade_v1(&mut v).expect("a schema-1 record");
    serde_json::from_value(v).expect("an upgraded record")
}
