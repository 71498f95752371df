//! Output. Every command hands `emit` a document (`write::Document`): its parts made of
//! blocks (`model`), a JSON value, and figures or CSV tables where it has them. `emit`
//! writes it with the format's writer, one file per format in `write/`. The report over
//! any runs is `document`. Records are never re-run here.

use anyhow::anyhow;
pub mod document;
pub mod flame;
pub mod man;
pub mod model;
pub mod plots;
pub mod trend;
pub mod write;

pub use write::{emit, Document, One, Part};

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
    pub fn name(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Openssl => "openssl",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Markdown => "markdown",
            Format::Html => "html",
        }
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
        let names: Vec<&str> = offered.iter().map(|f| f.name()).collect();
        Err(anyhow!(
            "--format {}: {command} writes {}: use one of those",
            self.name(),
            names.join(", ")
        ))
    }
}

pub use crate::analyse::paths::short_version;
