//! The one output path. A command hands `emit` a `Document`: its parts as they are made
//! (one per run for a report, one for every other command). `emit` picks the format's
//! `Writer`, one file per format here, and the writer takes the parts as they come, so a
//! report holds only the run at hand. A part computes only what the writer asks of it.

use super::model::{Block, Table};
use crate::record::read::SkippedLine;
use anyhow::anyhow;
use std::io::Write;

pub mod csv;
pub mod html;
pub mod json;
pub mod markdown;
pub mod openssl;
pub mod table;

/// One output format for every subcommand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    /// The `openssl speed` layout (speed only).
    Openssl,
    Json,
    Csv,
    Markdown,
    /// One self-contained page with the figures (inline SVG, no script).
    Html,
}

impl Format {
    /// As `--format` takes it.
    fn name(self) -> String {
        let value = clap::ValueEnum::to_possible_value(&self);
        value.map_or_else(String::new, |v| v.get_name().to_string())
    }

    /// `--format` parsed as clap does, accepting `offered` (listed in `--help`) and
    /// `hidden` (parsed, so that the command refuses it with a better message).
    pub fn parser(
        offered: &'static [Format],
        hidden: &'static [Format],
    ) -> impl clap::builder::TypedValueParser<Value = Format> {
        use clap::builder::{PossibleValuesParser, TypedValueParser};
        use clap::ValueEnum;
        let values = offered
            .iter()
            .chain(hidden)
            .filter_map(|f| f.to_possible_value().map(|v| v.hide(hidden.contains(f))));
        PossibleValuesParser::new(values.collect::<Vec<_>>())
            .map(|s| Format::from_str(&s, false).unwrap_or(Format::Table))
    }

    /// A format `command` cannot write is refused, never silently replaced by a table.
    pub fn offered_by(self, command: &str, offered: &[Format]) -> anyhow::Result<Format> {
        if offered.contains(&self) {
            return Ok(self);
        }
        let names: Vec<String> = offered.iter().map(|f| f.name()).collect();
        Err(anyhow!(
            "--format {}: {command} writes {}: use one of those",
            self.name(),
            names.join(", ")
        ))
    }
}

/// What a command shows, in every format it offers.
pub trait Document {
    /// The command, as a refused format names it.
    fn command(&self) -> &str;
    /// The formats it can be written in: a writer needs what the document holds (html
    /// needs a page, csv tables, openssl the speed view's layout).
    fn formats(&self) -> &'static [Format];
    /// Hands each part to `each` as it is made. `whole`: the writer needs everything at
    /// once (one part for the whole document).
    fn parts(
        &mut self,
        whole: bool,
        each: &mut dyn FnMut(&dyn Part) -> anyhow::Result<()>,
    ) -> anyhow::Result<()>;
    /// Input lines that were skipped, said after the last part.
    fn skipped(&self) -> &[SkippedLine] {
        &[]
    }
}

/// One part of a document, as each writer reads it. Only what a format shows is
/// computed (a run's analysis is most of the work, and only JSON shows all of it).
pub trait Part {
    /// Headings, tables and lines: the terminal and Markdown.
    fn blocks(&self) -> Vec<Block> {
        Vec::new()
    }
    /// Shown above the part's blocks when the document has several parts.
    fn heading(&self) -> Option<String> {
        None
    }
    /// CSV tables by slot: one slot's rows across parts make one table.
    fn csv(&self) -> Vec<Option<Table>> {
        Vec::new()
    }
    /// Puts the part's JSON: one value, or a run of the report's layout.
    fn json(&self, _out: &mut json::Json) -> anyhow::Result<()> {
        Ok(())
    }
    /// The HTML page's title and body.
    fn html(&self, _body: &mut String) -> String {
        String::new()
    }
    /// The `openssl speed` layout.
    fn openssl(&self) -> String {
        String::new()
    }
}

/// One output format: takes a document's parts as they come.
pub trait Writer {
    /// Needs the whole document at once (it gets one part).
    fn whole(&self) -> bool {
        false
    }
    fn part(&mut self, part: &dyn Part) -> anyhow::Result<()>;
    /// After the last part.
    fn finish(self: Box<Self>, doc: &dyn Document) -> anyhow::Result<()>;
}

/// The writer of each format: a new format is its file and one line here.
fn writer<'a>(format: Format, out: &'a mut dyn Write) -> Box<dyn Writer + 'a> {
    match format {
        Format::Table => Box::new(table::writer(out)),
        Format::Markdown => Box::new(markdown::writer(out)),
        Format::Csv => Box::new(csv::Csv::new(out)),
        Format::Json => Box::new(json::Json::new(out)),
        Format::Html => Box::new(html::Html::new(out)),
        Format::Openssl => Box::new(openssl::Openssl(out)),
    }
}

/// Whether `format` is written part by part (only the run at hand held).
pub fn streams(format: Format) -> bool {
    !writer(format, &mut std::io::sink()).whole()
}

/// Writes `doc` in `format` into `out`. A format the document cannot give is refused
/// (a `Failure::Input`). Other errors: an `std::io::Error` (`out` not written), or what
/// the document's parts could not read.
pub fn emit(doc: &mut dyn Document, format: Format, out: &mut dyn Write) -> anyhow::Result<()> {
    format
        .offered_by(doc.command(), doc.formats())
        .map_err(|e| crate::failure::Failure::Input(e.to_string()))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    let mut w = writer(format, &mut out);
    let whole = w.whole();
    doc.parts(whole, &mut |p| w.part(p))?;
    w.finish(doc)?;
    out.flush()?;
    Ok(())
}

/// `emit` into a string, for tests.
#[cfg(test)]
pub fn string(doc: &mut dyn Document, format: Format) -> anyhow::Result<String> {
    let mut out = Vec::new();
    emit(doc, format, &mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// A document of one part: what most commands show.
pub struct One<'a>(pub &'a str, pub &'static [Format], pub &'a dyn Part);

impl Document for One<'_> {
    fn command(&self) -> &str {
        self.0
    }
    fn formats(&self) -> &'static [Format] {
        self.1
    }
    fn parts(
        &mut self,
        _whole: bool,
        each: &mut dyn FnMut(&dyn Part) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        each(self.2)
    }
}

/// The terminal and Markdown: blocks as the parts come. Parts get their headings only
/// when there are several, so the first part waits for a second.
pub struct Blocks<'a> {
    out: &'a mut dyn Write,
    show: fn(&[Block]) -> String,
    /// Written between two blocks (the terminal's empty line).
    gap: &'static [u8],
    first: Option<(Option<String>, Vec<Block>)>,
    parts: usize,
    wrote: bool,
}

impl<'a> Blocks<'a> {
    fn new(out: &'a mut dyn Write, show: fn(&[Block]) -> String, gap: &'static [u8]) -> Self {
        Blocks {
            out,
            show,
            gap,
            first: None,
            parts: 0,
            wrote: false,
        }
    }

    fn put(&mut self, heading: Option<String>, blocks: Vec<Block>) -> std::io::Result<()> {
        for b in heading.map(Block::Heading).into_iter().chain(blocks) {
            if self.wrote {
                self.out.write_all(self.gap)?;
            }
            self.out
                .write_all((self.show)(std::slice::from_ref(&b)).as_bytes())?;
            self.wrote = true;
        }
        Ok(())
    }
}

impl Writer for Blocks<'_> {
    fn part(&mut self, part: &dyn Part) -> anyhow::Result<()> {
        let blocks = part.blocks();
        self.parts += 1;
        if self.parts == 1 {
            self.first = Some((part.heading(), blocks));
            return Ok(());
        }
        if let Some((heading, blocks)) = self.first.take() {
            self.put(heading, blocks)?;
        }
        self.put(part.heading(), blocks)?;
        Ok(())
    }

    fn finish(mut self: Box<Self>, doc: &dyn Document) -> anyhow::Result<()> {
        if let Some((_, blocks)) = self.first.take() {
            self.put(None, blocks)?;
        }
        self.put(None, skipped_block(doc.skipped()).into_iter().collect())?;
        Ok(())
    }
}

/// The lines that were skipped (the first 20), as a block; None when there were none.
pub fn skipped_block(skipped: &[SkippedLine]) -> Option<Block> {
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
