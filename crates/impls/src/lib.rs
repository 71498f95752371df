//! cryptobench's providers: the algorithm catalogue, the libraries and kernel paths that
//! implement it, and the known-answer checks every one of them passes before it is timed.
//! With the system facts they need (kernel, sys) and the unit formatting (units), which
//! import nothing above them. The cryptobench binary crate builds the workloads, records,
//! rendering and store on top; this crate cannot import them.

pub mod algorithms;
pub mod impls;
pub mod kat;
pub mod kernel;
pub mod sys;
pub mod testing;
pub mod units;
