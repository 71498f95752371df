//! Where a run's lines go: the `--output` file and the store, opened before anything is
//! measured (the driver's runs and the DUT relay's alike).

use crate::cli::CommonArgs;
use crate::failure::Failure;
use crate::record::{JsonLinesWriter, Sink};

/// The store named by `--store`, `--no-store` or the default, opened for writing. A
/// store named but not usable is bad input, refused before anything is measured.
pub fn open_store(common: &CommonArgs) -> Result<Option<Box<dyn crate::store::Store>>, Failure> {
    match common.store_url().map_err(Failure::input)? {
        Some(url) => crate::store::open(&url, crate::store::Access::Write)
            .map(Some)
            .map_err(Failure::input),
        None => Ok(None),
    }
}

/// Where a run's lines go: the `--output` file, then the store opened by `open_store`.
pub fn sinks(
    common: &CommonArgs,
    store: Option<Box<dyn crate::store::Store>>,
    workload: &str,
) -> Result<Vec<Box<dyn Sink>>, Failure> {
    let mut sinks: Vec<Box<dyn Sink>> = Vec::new();
    if let Some(p) = &common.output {
        sinks.push(Box::new(
            JsonLinesWriter::append(p).map_err(Failure::input)?,
        ));
    }
    if let Some(s) = store {
        sinks.push(Box::new(crate::store::sink::StoreSink::new(s, workload)));
    }
    Ok(sinks)
}
