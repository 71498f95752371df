//! Output formats. Each reads only the finished Report: records are never re-run here.

pub mod csv;
pub mod json;
pub mod markdown;
pub mod openssl;
pub mod ops;
pub mod table;

use crate::algorithms::Algorithm;
use crate::analyse::paths::Analysis;
use crate::impls::Unavailable;
use crate::plan::Exclusion;
use crate::record::{Environment, Record};
use serde::Serialize;

/// Everything a run produced, in the order the renderers need it.
#[derive(Serialize)]
pub struct Report {
    pub schema: u32,
    pub environment: Environment,
    pub records: Vec<Record>,
    /// What was not measured, and why (not offered, failed correctness, size).
    pub exclusions: Vec<Exclusion>,
    pub unavailable: Vec<Unavailable>,
    pub interrupted: bool,
    /// Per-path cost models and crossovers (pure functions of the records).
    pub analysis: Analysis,
    /// Whether the table should print the analysis: several paths of different kinds,
    /// variants, or an explicit --crossover.
    #[serde(skip)]
    pub show_analysis: bool,
}

/// One output format.
pub trait Exporter {
    fn render(&self, report: &Report) -> String;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Openssl,
    Json,
    Csv,
    Markdown,
}

pub fn exporter(format: Format) -> Box<dyn Exporter> {
    match format {
        Format::Table => Box::new(table::Table),
        Format::Openssl => Box::new(openssl::OpensslSpeed),
        Format::Json => Box::new(json::Json),
        Format::Csv => Box::new(csv::Csv),
        Format::Markdown => Box::new(markdown::Markdown),
    }
}

/// A row of the size-by-column tables: one implementation (and variant), algorithm,
/// direction and thread count.
pub struct Row<'a> {
    pub label: String,
    pub alg: String,
    pub direction: String,
    pub threads: u32,
    /// Record per column size, if measured.
    pub cells: Vec<Option<&'a Record>>,
}

pub use crate::analyse::paths::{path_label as impl_label, short_version};

fn alg_order(name: &str) -> usize {
    Algorithm::ALL
        .iter()
        .position(|a| a.name() == name)
        .unwrap_or(usize::MAX)
}

/// Sizes present in the records, ascending.
pub fn sizes(records: &[Record]) -> Vec<u64> {
    let mut s: Vec<u64> = records.iter().map(|r| r.size).collect();
    s.sort_unstable();
    s.dedup();
    s
}

/// Rows in catalogue order: algorithm, direction, threads, then implementation in the
/// order measured.
pub fn rows<'a>(records: &'a [Record], sizes: &[u64]) -> Vec<Row<'a>> {
    let mut rows: Vec<Row<'a>> = Vec::new();
    for r in records {
        let label = impl_label(r, records);
        let col = sizes
            .iter()
            .position(|&s| s == r.size)
            .expect("size column exists");
        match rows.iter_mut().find(|x| {
            x.label == label
                && x.alg == r.alg
                && x.direction == r.direction
                && x.threads == r.threads
        }) {
            Some(row) => row.cells[col] = Some(r),
            None => {
                let mut cells = vec![None; sizes.len()];
                cells[col] = Some(r);
                rows.push(Row {
                    label,
                    alg: r.alg.clone(),
                    direction: r.direction.clone(),
                    threads: r.threads,
                    cells,
                });
            }
        }
    }
    // Stable sort keeps the measured order of implementations within an algorithm.
    rows.sort_by_key(|r| (alg_order(&r.alg), r.direction != "enc", r.threads));
    rows
}

/// MB/s with a precision that suits the magnitude.
pub fn mbps(bps: f64) -> String {
    let m = bps / 1e6;
    if m >= 100.0 {
        format!("{m:.0}")
    } else if m >= 10.0 {
        format!("{m:.1}")
    } else {
        format!("{m:.2}")
    }
}

/// Human size: 16, 1350, 1k, 16k, 1m.
pub fn size_label(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{}m", n >> 20)
    } else if n >= 1024 && n.is_multiple_of(1024) {
        format!("{}k", n >> 10)
    } else {
        n.to_string()
    }
}
