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

/// Every one of `algs` measured under `label` in the speed document `v`, and every record
/// under it on the library `version` names ("OpenSSL 3.6.3"): the build, not the system's.
pub fn assert_measured(v: &serde_json::Value, label: &str, version: &str, algs: &[&str]) {
    let mine: Vec<&serde_json::Value> = v["records"]
        .as_array()
        .expect("a speed document has records")
        .iter()
        .filter(|r| r["label"] == label)
        .collect();
    for alg in algs {
        assert!(
            mine.iter().any(|r| r["alg"] == *alg),
            "{label} {alg} not measured: {}",
            v["exclusions"]
        );
    }
    assert!(
        mine.iter().all(|r| r["impl_version"]
            .as_str()
            .unwrap_or("")
            .starts_with(version)),
        "{label}: not every record on {version}: {}",
        mine[0]
    );
}
