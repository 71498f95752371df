//! Output. Workloads build blocks (`model`); the terminal, Markdown and CSV writers are in
//! `model`, the JSON document and multi-run layout in `document`, and the `openssl speed`
//! layout (speed only) in `openssl`. Records are never re-run here.

pub mod document;
pub mod flame;
pub mod html;
pub mod json;
pub mod model;
pub mod openssl;
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

/// MB/s with a precision that suits the magnitude.
pub fn mbps(bps: f64) -> String {
    magnitude(bps / 1e6)
}

/// A figure with as many decimals as its magnitude deserves: 0 from 100, 1 from 10, else 2.
pub fn magnitude(m: f64) -> String {
    if m >= 100.0 {
        format!("{m:.0}")
    } else if m >= 10.0 {
        format!("{m:.1}")
    } else {
        format!("{m:.2}")
    }
}
/// Human size: 16, 1350, 1k, 16k, 1m, 1g.
pub fn size_label(n: u64) -> String {
    if n >= 1 << 30 && n.is_multiple_of(1 << 30) {
        format!("{}g", n >> 30)
    } else if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{}m", n >> 20)
    } else if n >= 1024 && n.is_multiple_of(1024) {
        format!("{}k", n >> 10)
    } else {
        n.to_string()
    }
}
