//! Output. Workloads build blocks (`model`); the terminal, Markdown and CSV writers are in
//! `model`, the JSON document and multi-run layout in `document`, and the `openssl speed`
//! layout (speed only) in `openssl`. Records are never re-run here.

pub mod document;
pub mod flame;
pub mod html;
pub mod json;
pub mod man;
pub mod model;
pub mod plots;

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

pub use crate::analyse::paths::short_version;
