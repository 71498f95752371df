#![recursion_limit = "256"]
// The lean (router) build leaves out `study`, whose helpers live in the modules it shares
// with the workloads; dead code is checked in the full build, which has them all.
#![cfg_attr(not(feature = "study"), allow(dead_code, unused_imports))]
//! cryptobench: how fast symmetric crypto really is on this machine, and through which path.
//! The whole program is this library; src/main.rs calls [`main`], which is `cli`'s.

#[cfg(feature = "advise")]
mod advise;
mod analyse;
mod cli;
mod driver;
mod dut;
mod environment;
mod failure;
mod measure;
mod profile;
mod record;
mod render;
mod shell;
mod sinks;
mod stats;
mod store;
#[cfg(feature = "study")]
mod study;
mod verify;
mod workloads;

// The providers' crate, under the names its modules had here.
#[cfg(test)]
use cryptobench_impls::testing;
use cryptobench_impls::{algorithms, impls, kat, kernel, sys, units};

pub use cli::main;
