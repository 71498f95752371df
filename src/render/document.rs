//! One report for any mix of runs and workloads: each run keeps its own environment and is
//! never merged with another; each workload present contributes its blocks (`View`).

use super::model::{self, Block, Table};
use super::plots::Figure;
use super::Format;
use crate::record::read::{Loaded, Run};
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
    /// Writes this workload's CSV table over every run (nothing when it has no records).
    fn csv(
        &self,
        doc: &Loaded,
        first: &mut bool,
        out: &mut dyn std::io::Write,
    ) -> std::io::Result<()>;
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
    fn csv(
        &self,
        doc: &Loaded,
        first: &mut bool,
        out: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        let mut header = true;
        for run in &doc.runs {
            let Some(v) = view::<V>(run) else { continue };
            if header && !*first {
                out.write_all(b"\n")?;
            }
            model::csv_rows(&V::records_table(&v.records), header, out)?;
            (header, *first) = (false, false);
        }
        Ok(())
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

/// Renders every run into `out`; JSON is written as it is serialized.
pub fn write(
    doc: &Loaded,
    format: Format,
    opts: &Options,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    if matches!(format, Format::Csv | Format::Json) {
        // No room for a heading in these: said on stderr (JSON also has `finished`).
        for note in doc.runs.iter().filter_map(unfinished) {
            eprintln!("cryptobench: {note}");
        }
    }
    if format == Format::Csv {
        return write_csv(doc, opts, out);
    }
    let all: Vec<(&Run, Parts)> = doc
        .runs
        .iter()
        .map(|r| (r, parts(r, opts, format)))
        .collect();
    if format == Format::Json {
        let runs: Vec<(&Run, serde_json::Map<String, Value>)> =
            all.into_iter().map(|(r, p)| (r, p.analysis)).collect();
        return super::json::write(doc, &runs, out);
    }
    out.write_all(text(doc, format, opts, all).as_bytes())
}

/// CSV: one table per workload, several runs' rows together (run_id tells them apart),
/// written run by run so that only one run's rows are ever held.
fn write_csv(doc: &Loaded, opts: &Options, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::with_capacity(1 << 16, out);
    let first = &mut true;
    for v in opts.views {
        v.csv(doc, first, &mut w)?;
    }
    std::io::Write::flush(&mut w)
}

/// Every format but JSON and CSV, as one string.
fn text(doc: &Loaded, format: Format, opts: &Options, all: Vec<(&Run, Parts)>) -> String {
    let several = doc.runs.len() > 1;
    let mut skipped_lines = Vec::new();
    if !doc.skipped.is_empty() {
        skipped_lines.push(format!(
            "Skipped {} unreadable line(s); every other line was kept:",
            doc.skipped.len()
        ));
        for s in doc.skipped.iter().take(20) {
            skipped_lines.push(format!(
                "  {} line {}: {}",
                crate::units::shown_path(&s.file),
                s.line,
                crate::units::shown(&s.reason)
            ));
        }
    }
    match format {
        Format::Openssl => {
            let notes: String = doc
                .runs
                .iter()
                .filter_map(unfinished)
                .map(|n| n + "\n")
                .collect();
            notes
                + &opts
                    .views
                    .iter()
                    .find_map(|v| v.openssl(doc))
                    .unwrap_or_default()
        }
        Format::Html => {
            let mut body = String::new();
            // A year of nightly runs would be thousands of figures (hundreds of MB): the
            // last runs are drawn, every run keeps its environment and tables.
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
                super::html::run_section(
                    run,
                    &run_heading(run),
                    &figures,
                    &blocks,
                    drawn,
                    &mut body,
                );
            }
            if !skipped_lines.is_empty() {
                super::html::blocks(&[Block::Lines(skipped_lines)], &mut body);
            }
            super::html::page("cryptobench report", &body)
        }
        Format::Json | Format::Csv | Format::Table | Format::Markdown => {
            let mut blocks = Vec::new();
            for (run, p) in all {
                if several {
                    blocks.push(Block::Heading(run_heading(run)));
                }
                blocks.extend(p.blocks);
            }
            if !skipped_lines.is_empty() {
                blocks.push(Block::Lines(skipped_lines));
            }
            if format == Format::Markdown {
                model::markdown(&blocks)
            } else {
                model::terminal(&blocks)
            }
        }
    }
}

#[cfg(test)]
mod tests;
