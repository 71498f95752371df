//! Where a run's lines go: the `--output` file and the store, opened before anything is
//! measured (the driver's runs and the DUT relay's alike).

use crate::failure::Failure;
use crate::record::{JsonLinesWriter, Sink};
use crate::store::StoreUrl;
use std::path::PathBuf;

/// Where a run's lines go, as the command line said it, checked and parsed
/// (`shell::args::CommonArgs::output`): nothing below the commands sees the flags themselves.
#[derive(Clone, Debug, Default)]
pub struct Output {
    /// `--output FILE`: JSON Lines appended.
    pub file: Option<PathBuf>,
    /// The store to keep the run in, if any.
    pub store: Option<StoreUrl>,
    /// A DUT's agent (`--agent`): every line goes to the controller on stdout instead.
    pub agent: bool,
}

/// The store named by `--store`, `--no-store` or the default, opened for writing. A
/// store named but not usable is bad input, refused before anything is measured.
pub fn open_store(out: &Output) -> Result<Option<Box<dyn crate::store::Store>>, Failure> {
    match &out.store {
        Some(url) => crate::store::open(url, crate::store::Access::Write)
            .map(Some)
            .map_err(Failure::input),
        None => Ok(None),
    }
}

/// Where a run's lines go: the `--output` file, then the store opened by `open_store`.
pub fn sinks(
    out: &Output,
    store: Option<Box<dyn crate::store::Store>>,
    workload: &str,
) -> Result<Vec<Box<dyn Sink>>, Failure> {
    let mut sinks: Vec<Box<dyn Sink>> = Vec::new();
    if let Some(p) = &out.file {
        sinks.push(Box::new(
            JsonLinesWriter::append(p).map_err(Failure::input)?,
        ));
    }
    if let Some(s) = store {
        sinks.push(Box::new(crate::store::sink::StoreSink::new(s, workload)));
    }
    Ok(sinks)
}
