//! Pure functions over numbers and records: no I/O, no clocks.

pub mod scaling;
pub mod stats;
