//! Pure functions over numbers and records: no I/O, no clocks.

#[cfg(feature = "advise")]
pub mod advise;
pub mod bootstrap;
pub mod changepoint;
pub mod compare;
pub mod crossover;
pub mod decide;
pub mod history_gate;
pub mod limit;
pub mod model;
pub mod paths;
pub mod precision;
pub mod scaling;
pub mod share;
// A leaf of its own (src/stats.rs), so that measure's stopping rule can use it too.
pub(crate) use crate::stats;
pub mod tls;
pub mod tls_point;
pub mod tls_threads;
pub mod trend;
pub mod vpn;
