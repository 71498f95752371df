//! One side of `compare`, read run by run: what the comparison needs of it is kept (each
//! run's id and the facts of its environment that compare shows, its labels, and its
//! points as `compare::Points` pools them: a few numbers per point and run), never its
//! records. 100,000 records held took 231 MB.

use crate::analyse::compare::{self, Identity, Points, Trials};
use crate::failure::Failure;
use crate::record::read::{Reader, Run};
use crate::record::Environment;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One run of a side: its id and what compare shows of its environment.
#[derive(Clone)]
pub struct SideRun {
    pub run_id: String,
    pub facts: Option<ComparedEnvironment>,
}

/// What compare shows and compares of a run's environment (`analyse::trend::RunFacts` is
/// trend's, with the clock): a few hundred bytes, where the whole environment of each of
/// 5,556 runs of 18 records held 100 MB.
#[derive(Clone)]
pub struct ComparedEnvironment {
    pub hostname: String,
    pub cpu: Option<String>,
    pub arch: String,
    pub logical_cpus: u64,
    pub kernel: String,
    pub cryptobench_version: String,
    /// Each library's (label, shown name, version).
    pub libraries: Vec<(Option<String>, String, String)>,
}

impl ComparedEnvironment {
    fn of(e: &Environment) -> ComparedEnvironment {
        ComparedEnvironment {
            hostname: e.hostname.clone(),
            cpu: e.cpu.model.clone(),
            arch: e.cpu.arch.clone(),
            logical_cpus: e.cpu.logical_cpus,
            kernel: e.kernel.clone(),
            cryptobench_version: e.cryptobench_version.clone(),
            libraries: e
                .libraries
                .iter()
                .map(|l| {
                    let shown = l.label.as_deref().unwrap_or(&l.implementation);
                    (l.label.clone(), shown.to_string(), l.version.clone())
                })
                .collect(),
        }
    }
}

pub struct Side {
    pub file: PathBuf,
    pub label: Option<String>,
    pub runs: Vec<SideRun>,
    pub records: usize,
    pub labels: BTreeSet<String>,
    /// "workload label" of the first records, for a message when no point is common.
    pub kinds: BTreeSet<String>,
    pub schemas: BTreeSet<u32>,
    pub points: BTreeMap<Identity, Trials>,
}

/// Records whose kinds a side lists when no point is common.
const KINDS_OF: usize = 1000;

impl Side {
    pub fn name(&self) -> String {
        crate::units::shown_path(&self.file)
    }

    fn new(file: &Path, label: Option<String>) -> Side {
        Side {
            file: file.to_path_buf(),
            label,
            runs: Vec::new(),
            records: 0,
            labels: BTreeSet::new(),
            kinds: BTreeSet::new(),
            schemas: BTreeSet::new(),
            points: BTreeMap::new(),
        }
    }

    fn add(&mut self, run: &Run) {
        for rec in &run.records {
            if self.records < KINDS_OF {
                let workload = rec.workload().name();
                self.kinds
                    .insert(format!("{workload} {}", compare::label_of(rec)));
            }
            self.records += 1;
            if !self.labels.contains(compare::label_of(rec)) {
                self.labels.insert(compare::label_of(rec).to_string());
            }
        }
        self.schemas
            .extend(run.environment.as_ref().map(|e| e.schema));
        self.runs.push(SideRun {
            run_id: run.run_id.clone(),
            facts: run.environment.as_ref().map(ComparedEnvironment::of),
        });
    }
}

/// BASE (records labelled `a`) and NEW (labelled `b`, paired as `a`), each file read once
/// (the same file, once for both).
pub fn read_sides(
    (base, a): (PathBuf, Option<String>),
    (new, b): (PathBuf, Option<String>),
    store: Option<&str>,
) -> Result<(Side, Side), Failure> {
    let (mut sb, mut sn) = (Side::new(&base, a.clone()), Side::new(&new, b.clone()));
    let mut pb = Points::new(a.as_deref(), a.as_deref());
    let mut pn = Points::new(b.as_deref(), a.as_deref());
    if same_file(&base, &new) {
        each_run(&base, store, &mut |run| {
            sb.add(run);
            pb.add_run(&run.run_id, run.records.iter());
            pn.add_run(&run.run_id, run.records.iter());
        })?;
        (sn.runs, sn.records) = (sb.runs.clone(), sb.records);
        (sn.labels, sn.kinds, sn.schemas) =
            (sb.labels.clone(), sb.kinds.clone(), sb.schemas.clone());
    } else {
        each_run(&base, store, &mut |run| {
            sb.add(run);
            pb.add_run(&run.run_id, run.records.iter());
        })?;
        check(&sb, "BASE")?;
        each_run(&new, store, &mut |run| {
            sn.add(run);
            pn.add_run(&run.run_id, run.records.iter());
        })?;
    }
    (sb.points, sn.points) = (pb.finish(), pn.finish());
    for (side, which) in [(&sb, "BASE"), (&sn, "NEW")] {
        check(side, which)?;
    }
    Ok((sb, sn))
}

/// Each run of `file` (a results file, read one run at a time, or runs of the store).
fn each_run(file: &Path, store: Option<&str>, each: &mut dyn FnMut(&Run)) -> Result<(), Failure> {
    let files = vec![file.to_path_buf()];
    if crate::store::resolve::all_files(&files) {
        let mut reader = Reader::open(&files).map_err(Failure::input)?;
        while let Some(run) = reader.next_run().map_err(Failure::input)? {
            each(&run);
        }
        return Ok(());
    }
    let loaded = crate::store::resolve::load_args(&files, store).map_err(Failure::input)?;
    loaded.runs.iter().for_each(each);
    Ok(())
}

fn check(side: &Side, which: &str) -> Result<(), Failure> {
    if side.records == 0 {
        return Err(Failure::Input(format!(
            "no records in {which} {}: give a file written with `cryptobench {} --output FILE`",
            side.name(),
            crate::workloads::table::names("|")
        )));
    }
    if let Some(l) = &side.label {
        if !side.labels.contains(l.as_str()) {
            let flag = if which == "BASE" { "--a" } else { "--b" };
            return Err(Failure::Input(format!(
                "{flag} {:?}: no such label in {}; its labels are: {}",
                crate::units::shown(l),
                side.name(),
                side.labels.iter().cloned().collect::<Vec<_>>().join(", ")
            )));
        }
    }
    Ok(())
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}
