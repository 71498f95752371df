//! Output. Workloads build blocks (`model`); the terminal, Markdown and CSV writers are in
//! `model`, the JSON document and multi-run layout in `document`, and the `openssl speed`
//! layout (speed only) in `openssl`. Records are never re-run here.

use anyhow::anyhow;
pub mod document;
pub mod flame;
pub mod html;
pub mod json;
pub mod man;
pub mod model;
pub mod plots;
pub mod trend;

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
