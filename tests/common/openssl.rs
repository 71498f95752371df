//! OpenSSL built from source for the tests (scripts/build-openssl, cached under
//! ~/.cache/cryptobench/openssl).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The install dir of `scripts/build-openssl VERSION [flags]`; None (skip reported) when
/// it cannot be built here.
pub fn build(version: &str, flags: &[&str]) -> Option<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/build-openssl");
    let o = Command::new(script)
        .arg(version)
        .args(flags)
        .output()
        .expect("scripts/build-openssl runs");
    if !o.status.success() {
        super::skip(&format!(
            "scripts/build-openssl {version} {flags:?} failed: {}",
            super::stderr(&o).lines().last().unwrap_or("")
        ));
        return None;
    }
    Some(PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
}
