//! The size-by-column grid every speed table shares, the terminal's and the `openssl speed`
//! layout's: the sizes present, and one row per path, algorithm, direction and threads.

use crate::algorithms::{Algorithm, Direction};
use crate::record::speed::SpeedRecord as Record;

/// A row of the size-by-column tables: one path, algorithm, direction and thread count.
pub struct Row<'a> {
    pub label: String,
    pub alg: Algorithm,
    pub direction: Direction,
    pub threads: u32,
    /// Record per column size, if measured.
    pub cells: Vec<Option<&'a Record>>,
}

/// Catalogue order.
pub fn alg_order(alg: Algorithm) -> usize {
    Algorithm::ALL
        .iter()
        .position(|&a| a == alg)
        .unwrap_or(usize::MAX)
}

/// Sizes present in the records, ascending.
pub fn sizes(records: &[&Record]) -> Vec<u64> {
    let mut s: Vec<u64> = records.iter().map(|r| r.size).collect();
    s.sort_unstable();
    s.dedup();
    s
}

/// Rows in catalogue order: algorithm, direction, threads, then path in the order measured.
pub fn rows<'a>(records: &[&'a Record], sizes: &[u64]) -> Vec<Row<'a>> {
    let mut rows: Vec<Row<'a>> = Vec::new();
    for &r in records {
        let Some(col) = sizes.iter().position(|&s| s == r.size) else {
            continue;
        };
        match rows.iter_mut().find(|x| {
            x.label == r.label
                && x.alg == r.alg
                && x.direction == r.direction
                && x.threads == r.threads
        }) {
            Some(row) => row.cells[col] = Some(r),
            None => {
                let mut cells = vec![None; sizes.len()];
                cells[col] = Some(r);
                rows.push(Row {
                    label: r.label.clone(),
                    alg: r.alg,
                    direction: r.direction,
                    threads: r.threads,
                    cells,
                });
            }
        }
    }
    // Stable sort keeps the measured order of implementations within an algorithm.
    rows.sort_by_key(|r| (alg_order(r.alg), r.direction != Direction::Enc, r.threads));
    rows
}

/// Whether a record counts operations (a public-key algorithm) rather than bytes.
pub fn is_ops(r: &Record) -> bool {
    r.alg.kind().is_public_key()
}
