//! The implementations a command works on, shared by `speed` and `verify`: the registry
//! with `--libcrypto` builds and `--variant` instances, the test-only corrupt wrapper,
//! and one display label per path.

use super::Failure;
use crate::impls::{self, corrupt::Corrupt, Implementation, Unavailable};
use std::path::PathBuf;

pub struct Paths {
    pub found: Vec<Box<dyn Implementation>>,
    pub missing: Vec<Unavailable>,
    /// Display label of each entry of `found`, by the same rule as records' labels.
    pub labels: Vec<String>,
}

/// Loads every implementation; `test_corrupt` wraps the named one so that it flips a bit
/// of every output (tests only).
pub fn load(
    libcrypto: &[PathBuf],
    variants: &[String],
    test_corrupt: Option<&str>,
) -> Result<Paths, Failure> {
    let impls::Registry { mut found, missing } =
        impls::registry(libcrypto, variants).map_err(Failure::Input)?;
    if let Some(name) = test_corrupt {
        let i = found.iter().position(|x| x.name() == name).ok_or_else(|| {
            Failure::Input(format!(
                "--test-corrupt {name}: no such implementation here"
            ))
        })?;
        let inner = found.remove(i);
        found.insert(i, Box::new(Corrupt(inner)));
    }
    let labels = labels(&found);
    Ok(Paths {
        found,
        missing,
        labels,
    })
}

fn labels(found: &[Box<dyn Implementation>]) -> Vec<String> {
    found
        .iter()
        .map(|imp| {
            let versions = found
                .iter()
                .filter(|o| o.name() == imp.name())
                .map(|o| o.version())
                .collect::<std::collections::BTreeSet<_>>()
                .len();
            crate::analyse::paths::label(
                imp.name(),
                &imp.version(),
                versions,
                imp.variant().as_deref(),
            )
        })
        .collect()
}
