//! The one output path. A command hands `emit` a `Document`: its parts as they are made
//! (one per run for a report, one for every other command). `emit` picks the format's
//! writer, one file per format here, which takes the parts as they come, so a report
//! holds only the run at hand. A part computes only what the writer asks of it.

use crate::failure::Failure;
use clap::ValueEnum;
use std::io::Write;

pub mod csv;
pub mod html;
pub mod json;
pub mod markdown;
pub mod openssl;
pub mod parts;
pub mod table;

pub use parts::{skipped_block, Document, Part, Single};

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
    /// `--format` parsed as clap does, accepting `offered` (listed in `--help`) and
    /// `hidden` (parsed, so that the command refuses it with a better message).
    pub fn parser(
        offered: &'static [Format],
        hidden: &'static [Format],
    ) -> impl clap::builder::TypedValueParser<Value = Format> {
        use clap::builder::{PossibleValuesParser, TypedValueParser};
        let values = offered
            .iter()
            .chain(hidden)
            .filter_map(|f| f.to_possible_value().map(|v| v.hide(hidden.contains(f))));
        PossibleValuesParser::new(values.collect::<Vec<_>>())
            .map(|s| Format::from_str(&s, false).unwrap_or(Format::Table))
    }

    /// A format `command` cannot write is refused (exit 2), never silently replaced by a
    /// table: each command asks before any work.
    pub fn offered_by(self, command: &str, offered: &[Format]) -> Result<(), Failure> {
        if offered.contains(&self) {
            return Ok(());
        }
        // As `--format` takes it.
        let name = |f: &Format| f.to_possible_value().map(|v| v.get_name().to_string());
        let names: Vec<String> = offered.iter().filter_map(name).collect();
        let this = name(&self).unwrap_or_default();
        Err(Failure::Input(format!(
            "--format {this}: {command} writes {}: use one of those",
            names.join(", ")
        )))
    }
}

/// A format's writer: takes the document's parts (`whole`: as one part), then says its
/// skipped lines where the format has room for them.
type Writer = fn(&mut dyn Document, bool, &mut dyn Write) -> anyhow::Result<()>;

/// Each format's writer, and whether it needs the whole document at once: a new format
/// is its file and one line here.
fn writer(format: Format) -> (Writer, bool) {
    match format {
        Format::Table => (table::write, false),
        Format::Markdown => (markdown::write, false),
        Format::Csv => (csv::write, false),
        Format::Json => (json::write, false),
        Format::Html => (html::write, true),
        Format::Openssl => (openssl::write, true),
    }
}

/// Whether `format` is written part by part (only the run at hand held).
pub fn streams(format: Format) -> bool {
    !writer(format).1
}

/// Writes `doc` in `format` into `out`. The command has refused, before any work, a
/// format it cannot give (`Format::offered_by`). Errors: an `std::io::Error` (`out` not
/// written), or what the document's parts could not read.
pub fn emit(doc: &mut dyn Document, format: Format, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    let (write, whole) = writer(format);
    write(doc, whole, &mut out)?;
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
