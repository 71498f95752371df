//! One report for any mix of runs and workloads: each run keeps its own environment and is
//! never merged with another; each workload present contributes its blocks (`View`).

use super::model::{self, Block, Table};
use super::plots::Figure;
use super::Format;
use crate::record::read::{Loaded, Run, RunSource, SkippedLine};
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
pub trait WorkloadView: Sync {
    fn workload(&self) -> &'static str;
    /// Adds this workload's blocks and analysis for one run.
    fn parts(&self, run: &Run, opts: &Options, format: Format, parts: &mut Parts);
    /// Writes this workload's CSV rows of one run, with the header line when `header`.
    /// False: the run has none of this workload's records (nothing written).
    fn csv_run(
        &self,
        run: &Run,
        header: bool,
        out: &mut dyn std::io::Write,
    ) -> std::io::Result<bool>;
    /// This workload's figures of one run; None when the run has none of its records.
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
    fn parts(&self, run: &Run, opts: &Options, format: Format, parts: &mut Parts) {
        parts_of::<V>(run, opts, format, parts)
    }
    fn csv_run(
        &self,
        run: &Run,
        header: bool,
        out: &mut dyn std::io::Write,
    ) -> std::io::Result<bool> {
        let Some(v) = view::<V>(run) else {
            return Ok(false);
        };
        model::csv_rows(&V::records_table(&v.records), header, out)?;
        Ok(true)
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

/// Everything each workload contributes for one run.
pub struct Parts {
    blocks: Vec<Block>,
    analysis: serde_json::Map<String, Value>,
}

/// Only what `format` shows is computed: the analysis (bootstrap fits) is most of the
/// work of a run, and the terminal needs none of it unless its blocks show it (CSV is
/// written by `write_csv`).
fn parts_of<V: View>(run: &Run, opts: &Options, format: Format, parts: &mut Parts) {
    if let Some(v) = view::<V>(run) {
        if matches!(format, Format::Table | Format::Markdown | Format::Html) {
            parts.blocks.extend(V::blocks(&v, opts));
        }
        if format == Format::Json {
            parts.analysis.insert(
                <V::Data as crate::record::Listed>::WORKLOAD.name().into(),
                V::analysis(&v, opts),
            );
        }
    }
}

fn parts(run: &Run, opts: &Options, format: Format) -> Parts {
    let mut p = Parts {
        blocks: Vec::new(),
        analysis: serde_json::Map::new(),
    };
    if let Some(note) = unfinished(run) {
        p.blocks.push(Block::Lines(vec![note]));
    }
    for v in opts.views {
        v.parts(run, opts, format, &mut p);
    }
    p
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

/// Renders every run. Several runs get a heading each and are never merged.
pub fn render(doc: &Loaded, format: Format, opts: &Options) -> String {
    let mut out = Vec::new();
    // Writing into memory cannot fail.
    let _ = write(doc, format, opts, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Renders every run into `out`.
pub fn write(
    doc: &Loaded,
    format: Format,
    opts: &Options,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    if matches!(format, Format::Html | Format::Openssl) {
        return out.write_all(whole(doc, format, opts).as_bytes());
    }
    write_runs(&mut doc.source(), format, opts, out).map_err(|e| match e.downcast() {
        Ok(io) => io,
        Err(other) => std::io::Error::other(other.to_string()),
    })
}

/// Whether `format` is written run by run (`write_runs`); HTML and `openssl speed`'s
/// layout need every run at once.
pub fn streams(format: Format) -> bool {
    !matches!(format, Format::Html | Format::Openssl)
}

/// Table, Markdown, CSV and JSON, written run by run as `src` hands them out, so that only
/// the run at hand is held. Err: a file could not be read, or `out` not written (an
/// `std::io::Error`).
pub fn write_runs<S: RunSource>(
    src: &mut S,
    format: Format,
    opts: &Options,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<()> {
    let mut w = std::io::BufWriter::with_capacity(1 << 16, out);
    match format {
        Format::Csv => write_csv(src, opts, &mut w)?,
        Format::Json => super::json::write(
            src,
            |run| {
                note_unfinished(run);
                parts(run, opts, Format::Json).analysis
            },
            &mut w,
        )?,
        _ => write_text(src, format, opts, &mut w)?,
    }
    std::io::Write::flush(&mut w)?;
    Ok(())
}

/// CSV and JSON have no room for a heading: a run without its end line is said on stderr
/// (JSON also has `finished`).
fn note_unfinished(run: &Run) {
    if let Some(note) = unfinished(run) {
        eprintln!("cryptobench: {note}");
    }
}

/// CSV: one table per workload, several runs' rows together (run_id tells them apart).
/// The registry's first workload is written as its runs come; the others' rows wait in
/// memory (rows, not records) until every run is read.
fn write_csv<S: RunSource>(
    src: &mut S,
    opts: &Options,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<()> {
    let n = opts.views.len();
    let mut later: Vec<Vec<u8>> = vec![Vec::new(); n];
    let mut started = vec![false; n];
    while let Some(run) = src.next_run()? {
        let run = std::borrow::Borrow::<Run>::borrow(&run);
        note_unfinished(run);
        for (k, v) in opts.views.iter().enumerate() {
            let sink: &mut dyn std::io::Write = if k == 0 { &mut *out } else { &mut later[k] };
            started[k] |= v.csv_run(run, !started[k], sink)?;
        }
    }
    let mut first = !started.first().copied().unwrap_or(false);
    for (rows, _) in later.iter().zip(&started).skip(1).filter(|(_, s)| **s) {
        if !first {
            out.write_all(b"\n")?;
        }
        out.write_all(rows)?;
        first = false;
    }
    Ok(())
}

/// Table and Markdown, run by run. The first run is held until a second one comes: runs
/// get headings only when there are several.
fn write_text<S: RunSource>(
    src: &mut S,
    format: Format,
    opts: &Options,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<()> {
    let mut wrote = false;
    let mut emit = |blocks: Vec<Block>, out: &mut dyn std::io::Write| -> std::io::Result<()> {
        for b in blocks {
            let one = std::slice::from_ref(&b);
            if format == Format::Markdown {
                out.write_all(model::markdown(one).as_bytes())?;
            } else {
                // terminal() puts an empty line between blocks.
                if wrote {
                    out.write_all(b"\n")?;
                }
                out.write_all(model::terminal(one).as_bytes())?;
            }
            wrote = true;
        }
        Ok(())
    };
    let mut first: Option<(String, Vec<Block>)> = None;
    let mut count = 0usize;
    while let Some(run) = src.next_run()? {
        let run = std::borrow::Borrow::<Run>::borrow(&run);
        let blocks = parts(run, opts, format).blocks;
        count += 1;
        if count == 1 {
            first = Some((run_heading(run), blocks));
            continue;
        }
        if let Some((heading, blocks)) = first.take() {
            emit(headed(heading, blocks), out)?;
        }
        emit(headed(run_heading(run), blocks), out)?;
    }
    if let Some((_, blocks)) = first {
        emit(blocks, out)?;
    }
    emit(skipped_block(src.skipped()).into_iter().collect(), out)?;
    Ok(())
}

fn headed(heading: String, blocks: Vec<Block>) -> Vec<Block> {
    std::iter::once(Block::Heading(heading))
        .chain(blocks)
        .collect()
}

/// The lines that were skipped (the first 20), as a block; None when there were none.
fn skipped_block(skipped: &[SkippedLine]) -> Option<Block> {
    if skipped.is_empty() {
        return None;
    }
    let mut lines = vec![format!(
        "Skipped {} unreadable line(s); every other line was kept:",
        skipped.len()
    )];
    for s in skipped.iter().take(20) {
        lines.push(format!(
            "  {} line {}: {}",
            crate::units::shown_path(&s.file),
            s.line,
            crate::units::shown(&s.reason)
        ));
    }
    Some(Block::Lines(lines))
}

/// HTML and `openssl speed`'s layout, which need every run at once, as one string.
fn whole(doc: &Loaded, format: Format, opts: &Options) -> String {
    let skipped = skipped_block(&doc.skipped);
    if format == Format::Openssl {
        let notes: String = doc
            .runs
            .iter()
            .filter_map(unfinished)
            .map(|n| n + "\n")
            .collect();
        return notes
            + &opts
                .views
                .iter()
                .find_map(|v| v.openssl(doc))
                .unwrap_or_default();
    }
    let all: Vec<(&Run, Parts)> = doc
        .runs
        .iter()
        .map(|r| (r, parts(r, opts, format)))
        .collect();
    let mut body = String::new();
    let series = trend_series(doc);
    if !series.is_empty() {
        body.push_str("<h2>Results over time</h2>\n");
        super::trend::html_section(&series, MAX_TREND_CHARTS, &mut body);
    }
    // A year of nightly runs would be thousands of figures (hundreds of MB): the last
    // runs are drawn, every run keeps its environment and tables.
    let drawn_from = all.len().saturating_sub(MAX_RUNS_DRAWN);
    if drawn_from > 0 {
        super::html::blocks(
            &[Block::Lines(vec![undrawn(drawn_from, all.len())])],
            &mut body,
        );
    }
    for (k, (run, p)) in all.into_iter().enumerate() {
        let drawn = k >= drawn_from;
        let (figures, blocks) = if drawn {
            (figures_of(run, opts), p.blocks)
        } else {
            let note = Block::Lines(vec![format!(
                "Figures not drawn for this run: {}",
                undrawn(drawn_from, doc.runs.len())
            )]);
            (Vec::new(), std::iter::once(note).chain(p.blocks).collect())
        };
        // Flame graphs count among the figures a long history leaves out.
        let mut flames = String::new();
        if drawn {
            super::flame::section(run, &mut flames);
        }
        super::html::run_section(
            run,
            &run_heading(run),
            &figures,
            &blocks,
            &flames,
            &mut body,
        );
    }
    if let Some(b) = skipped {
        super::html::blocks(&[b], &mut body);
    }
    super::html::page("cryptobench report", &body)
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
