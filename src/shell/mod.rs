//! What every command stands on: the common flags, the `Measuring` type of a workload and
//! the one shell around it, and how runs are shown. The list of workloads is
//! `measuring!` in workloads/mod.rs.

pub mod args;
pub mod measuring;
pub mod show;
