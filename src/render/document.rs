//! One report for any mix of runs and workloads: each run keeps its own environment and is
//! never merged with another; each workload present contributes its blocks (`View`).

use super::model::{Block, Table};
use super::plots::Figure;
use super::write::{html, json::Json, skipped_block, Document, Part};
use crate::record::read::{Loaded, Run, RunSource};
use crate::record::{Environment, Exclusion, Record};
use serde_json::Value;

/// Choices that change what is shown, not what was measured, and the workloads' views.
#[derive(Clone)]
pub struct Options {
    /// `--crossover A,B`: the pair of paths whose crossover to report.
    pub crossover: Option<(String, String)>,
    /// Every workload's view, handed over by the workload registry: the document itself
    /// names no workload.
    pub views: &'static [&'static dyn WorkloadView],
}

/// One run's records of one workload, with what the run says about itself.
pub struct RunView<'a, D> {
    pub run: &'a Run,
    pub records: Vec<&'a Record<D>>,
    pub exclusions: Vec<&'a Exclusion>,
    pub unavailable: &'a [crate::record::Unavailable],
}

impl<D> RunView<'_, D> {
    pub fn environment(&self) -> Option<&Environment> {
        self.run.environment.as_ref()
    }
    pub fn interrupted(&self) -> bool {
        self.run.end.as_ref().is_some_and(|e| e.interrupted)
    }
}

/// How a workload shows its records: pure functions of them.
pub trait View {
    type Data: crate::record::RecordData;
    /// Headings, tables and lines for the terminal and Markdown.
    fn blocks(run: &RunView<Self::Data>, opts: &Options) -> Vec<Block>;
    /// One row per record with raw values, for CSV.
    fn records_table(records: &[&Record<Self::Data>]) -> Table;
    /// The computed analysis, for JSON.
    fn analysis(run: &RunView<Self::Data>, opts: &Options) -> Value;
    /// Figures for the HTML report and `--plots`, each saying what it shows.
    fn figures(_run: &RunView<Self::Data>, _opts: &Options) -> Vec<Figure> {
        Vec::new()
    }
    /// The whole document in `openssl speed`'s layout, where the workload has one.
    fn openssl(_doc: &Loaded) -> Option<String> {
        None
    }
}

/// A workload's `View` as the document calls it: one entry per workload in the registry.
/// Each is None (or empty) when the run has none of this workload's records.
pub trait WorkloadView: Sync {
    fn workload(&self) -> &'static str;
    fn blocks(&self, run: &Run, opts: &Options) -> Vec<Block>;
    fn analysis(&self, run: &Run, opts: &Options) -> Option<Value>;
    fn csv(&self, run: &Run) -> Option<Table>;
    fn figures(&self, run: &Run, opts: &Options) -> Option<Vec<Figure>>;
    fn openssl(&self, doc: &Loaded) -> Option<String>;
}

/// The registry's entry for a `View`.
pub struct Registered<V>(std::marker::PhantomData<fn() -> V>);

impl<V> Registered<V> {
    pub const fn new() -> Self {
        Registered(std::marker::PhantomData)
    }
}

impl<V: View> WorkloadView for Registered<V> {
    fn workload(&self) -> &'static str {
        <V::Data as crate::record::Listed>::WORKLOAD.name()
    }
    fn blocks(&self, run: &Run, opts: &Options) -> Vec<Block> {
        view::<V>(run).map_or_else(Vec::new, |v| V::blocks(&v, opts))
    }
    fn analysis(&self, run: &Run, opts: &Options) -> Option<Value> {
        view::<V>(run).map(|v| V::analysis(&v, opts))
    }
    fn csv(&self, run: &Run) -> Option<Table> {
        view::<V>(run).map(|v| V::records_table(&v.records))
    }
    fn figures(&self, run: &Run, opts: &Options) -> Option<Vec<Figure>> {
        view::<V>(run)
            .filter(|v| !v.records.is_empty())
            .map(|v| V::figures(&v, opts))
    }
    fn openssl(&self, doc: &Loaded) -> Option<String> {
        V::openssl(doc)
    }
}

/// Every figure of one run, by workload, in the order the report shows them.
pub fn figures_of(run: &Run, opts: &Options) -> Vec<(String, Vec<Figure>)> {
    opts.views
        .iter()
        .filter_map(|v| Some((v.workload().to_string(), v.figures(run, opts)?)))
        .collect()
}

fn view<'a, V: View>(run: &'a Run) -> Option<RunView<'a, V::Data>> {
    let records: Vec<&Record<V::Data>> = run
        .records
        .iter()
        .filter_map(<V::Data as crate::record::Listed>::pick)
        .collect();
    let exclusions: Vec<&Exclusion> = run
        .end
        .iter()
        .flat_map(|e| &e.exclusions)
        .filter(|e| e.workload == <V::Data as crate::record::Listed>::WORKLOAD)
        .collect();
    if records.is_empty() && exclusions.is_empty() {
        return None;
    }
    Some(RunView {
        run,
        records,
        exclusions,
        unavailable: run
            .end
            .as_ref()
            .map(|e| e.unavailable.as_slice())
            .unwrap_or(&[]),
    })
}

/// The report over any runs: run by run from `src`, each run one part, so that only the
/// run at hand is held; a format that needs every run at once (HTML, `openssl speed`'s
/// layout) gets `loaded` as one part.
pub struct Report<'a, S> {
    src: S,
    loaded: Option<&'a Loaded>,
    opts: &'a Options,
}

impl<'a> Report<'a, crate::record::read::InMemory<'a>> {
    pub fn of(loaded: &'a Loaded, opts: &'a Options) -> Self {
        Report {
            src: loaded.source(),
            loaded: Some(loaded),
            opts,
        }
    }
}

impl<'a, S: RunSource> Report<'a, S> {
    /// Read as it is written: the formats written run by run only.
    pub fn streamed(src: S, opts: &'a Options) -> Self {
        Report {
            src,
            loaded: None,
            opts,
        }
    }
}

impl<S: RunSource> Document for Report<'_, S> {
    fn parts(
        &mut self,
        whole: bool,
        each: &mut dyn FnMut(&dyn Part) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        if whole {
            let doc = self
                .loaded
                .ok_or_else(|| anyhow::anyhow!("this format needs every run at once"))?;
            return each(&Whole {
                doc,
                opts: self.opts,
            });
        }
        while let Some(run) = self.src.next_run()? {
            let run = std::borrow::Borrow::<Run>::borrow(&run);
            each(&RunPart {
                run,
                opts: self.opts,
            })?;
        }
        Ok(())
    }
    fn skipped(&self) -> &crate::record::read::Skipped {
        self.src.skipped()
    }
}

/// One run of a report.
struct RunPart<'a> {
    run: &'a Run,
    opts: &'a Options,
}

impl Part for RunPart<'_> {
    /// A run without its end line says so first.
    fn blocks(&self) -> Vec<Block> {
        let views = self.opts.views.iter();
        let note = unfinished(self.run).map(|n| Block::Lines(vec![n]));
        let blocks = views.flat_map(|v| v.blocks(self.run, self.opts));
        note.into_iter().chain(blocks).collect()
    }
    fn heading(&self) -> Option<String> {
        Some(run_heading(self.run))
    }
    /// One table per workload, in the registry's order.
    fn csv(&self) -> Vec<Option<Table>> {
        note_unfinished(self.run);
        self.opts.views.iter().map(|v| v.csv(self.run)).collect()
    }
    fn json(&self, out: &mut Json) -> anyhow::Result<()> {
        note_unfinished(self.run);
        let views = self.opts.views.iter();
        let analysis =
            views.filter_map(|v| Some((v.workload().into(), v.analysis(self.run, self.opts)?)));
        out.run(self.run, analysis.collect())
    }
}

/// Every run at once: the HTML page and `openssl speed`'s layout, which only the
/// writers of those formats ask for.
struct Whole<'a> {
    doc: &'a Loaded,
    opts: &'a Options,
}

impl Part for Whole<'_> {
    fn html(&self, body: &mut String) -> String {
        html_body(self.doc, self.opts, body);
        "cryptobench report".into()
    }
    fn openssl(&self) -> String {
        let notes = self
            .doc
            .runs
            .iter()
            .filter_map(unfinished)
            .map(|n| n + "\n");
        let layout = self.opts.views.iter().find_map(|v| v.openssl(self.doc));
        notes.chain(layout).collect()
    }
}

/// A run that wrote its environment (schema 2 and later write an end line) but no end
/// line was killed, or is still running: said first in every format, not only in JSON's
/// `finished`.
fn unfinished(run: &Run) -> Option<String> {
    let env = run.environment.as_ref()?;
    (run.end.is_none() && env.schema >= 2).then(|| {
        format!(
            "UNFINISHED: run {} has no end line (killed, or still running): {} point(s) were kept; which were never reached is unknown",
            run.run_id,
            run.records.len()
        )
    })
}

fn run_heading(run: &Run) -> String {
    match &run.environment {
        Some(e) => format!(
            "Run {} on {} ({}), {}{}",
            run.run_id,
            e.hostname,
            e.cpu.model.as_deref().unwrap_or("unknown CPU"),
            e.command_line.get(1).map(String::as_str).unwrap_or(""),
            match &run.end {
                Some(end) if end.interrupted => ", interrupted",
                Some(_) => "",
                None => ", unfinished (no end line: killed, or written before schema 2)",
            }
        ),
        None => format!("Run {} (its environment line is missing)", run.run_id),
    }
}

/// The HTML report draws the figures of at most this many runs (the last in the files).
pub const MAX_RUNS_DRAWN: usize = 20;

fn undrawn(undrawn: usize, runs: usize) -> String {
    format!(
        "figures are drawn for the last {} of these {runs} runs; the first {undrawn} show their environment and tables (report a run alone, e.g. `cryptobench report RUN_ID`, for its figures)",
        runs - undrawn
    )
}

/// CSV and JSON have no room for a heading: a run without its end line is said on stderr
/// (JSON also has `finished`).
fn note_unfinished(run: &Run) {
    if let Some(note) = unfinished(run) {
        eprintln!("cryptobench: {note}");
    }
}

/// The HTML page's body: the runs over time where they make series, then each run's
/// environment, figures and tables.
fn html_body(doc: &Loaded, opts: &Options, body: &mut String) {
    let skipped = skipped_block(&doc.skipped);
    let series = trend_series(doc);
    if !series.is_empty() {
        body.push_str("<h2>Results over time</h2>\n");
        super::trend::html_section(&series, MAX_TREND_CHARTS, body);
    }
    // A year of nightly runs would be thousands of figures (hundreds of MB): the last
    // runs are drawn, every run keeps its environment and tables.
    let runs = doc.runs.len();
    let drawn_from = runs.saturating_sub(MAX_RUNS_DRAWN);
    if drawn_from > 0 {
        html::blocks(&[Block::Lines(vec![undrawn(drawn_from, runs)])], body);
    }
    for (k, run) in doc.runs.iter().enumerate() {
        let part = RunPart { run, opts };
        let drawn = k >= drawn_from;
        let (figures, blocks) = if drawn {
            (figures_of(run, opts), part.blocks())
        } else {
            let note = Block::Lines(vec![format!(
                "Figures not drawn for this run: {}",
                undrawn(drawn_from, runs)
            )]);
            (
                Vec::new(),
                std::iter::once(note).chain(part.blocks()).collect(),
            )
        };
        // Flame graphs count among the figures a long history leaves out.
        let mut flames = String::new();
        if drawn {
            super::flame::section(run, &mut flames);
        }
        html::run_section(run, &run_heading(run), &figures, &blocks, &flames, body);
    }
    if let Some(b) = skipped {
        html::blocks(&[b], body);
    }
}

/// Runs a series needs for the HTML report to draw it over time.
pub const TREND_FROM_RUNS: usize = 5;
/// Trend charts in one report.
const MAX_TREND_CHARTS: usize = 24;

/// The series of these runs (points and machines as `history trend` makes them) that
/// have TREND_FROM_RUNS runs or more.
fn trend_series(doc: &Loaded) -> Vec<crate::analyse::trend::Series> {
    use crate::analyse::trend::{Collector, RunFacts};
    let mut collector = Collector::default();
    let mut facts = std::collections::HashMap::new();
    for run in &doc.runs {
        let Some(env) = &run.environment else {
            continue;
        };
        facts.insert(run.run_id.clone(), RunFacts::from(env));
        for (seq, rec) in run.records.iter().enumerate() {
            if let Some(p) = crate::store::runs::point_row(rec, env, seq) {
                collector.add(p.as_ref());
            }
        }
    }
    if facts.len() < TREND_FROM_RUNS {
        return Vec::new();
    }
    let mut all = collector.finish(&facts, &Default::default());
    all.retain(|s| s.points.len() >= TREND_FROM_RUNS);
    all
}

#[cfg(test)]
mod tests;
