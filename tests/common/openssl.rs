//! OpenSSL built from source for the tests (scripts/build-openssl, cached under
//! ~/.cache/cryptobench/openssl).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The Configure options of the builds the tests only load and pass through the gate (3.6's
/// and 4.0's loader, the emulated ARM and MIPS libcrypto): no `openssl` program and no
/// optimisation. Its C compiles in a third of the CPU of OpenSSL's -O3 (eight of its
/// larger files: 0.95 against 2.82 CPU-s); a whole 3.6 build, with its assembly, perl and
/// install, took 124 CPU-s against 203 here (one build each). Their labels say so
/// ("openssl 3.6.3 no-apps -O0"). scripts/test builds the same ones before the tests.
pub const GATE_ONLY: [&str; 4] = ["--config", "no-apps", "--config", "-O0"];

/// The install dir of `scripts/build-openssl VERSION [flags]`; None (skip reported) when
/// it cannot be built here.
pub fn build(version: &str, flags: &[&str]) -> Option<PathBuf> {
    built("build-openssl", &[&[version][..], flags].concat())
}

/// The install dir a scripts/build-* script prints (cached after its first run); None
/// (skip reported) when it fails here.
pub fn built(script: &str, args: &[&str]) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts")
        .join(script);
    let o = Command::new(path)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("scripts/{script} runs: {e}"));
    if !o.status.success() {
        super::skip(&format!(
            "scripts/{script} {args:?} failed: {}",
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

/// `program` is installed (a skip is reported when not).
pub fn found(program: &str) -> bool {
    let yes = ["/usr/sbin", "/usr/bin", "/sbin"]
        .iter()
        .any(|d| Path::new(d).join(program).exists());
    if !yes {
        super::skip(&format!("{program} is not installed"));
    }
    yes
}

/// An OpenVPN tunnel can run here: root, openvpn and iperf3 (a skip is reported when not).
pub fn tunnel_possible() -> bool {
    if !super::is_root() {
        super::skip("cryptobench vpn needs root (CI runs the tests as root)");
        return false;
    }
    found("openvpn") && found("iperf3")
}

/// A fresh directory for a made-up build.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "cryptobench-openssl-test-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("lib")).unwrap();
    d
}

/// A run that must be refused as bad input: exit 2 and one line naming the fix.
pub fn refused(args: &[&str], says: &str) -> String {
    let o = super::cryptobench(args);
    let err = super::stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: one line: {err}"
    );
    assert!(err.contains(says), "{args:?}: should say '{says}': {err}");
    err
}

/// The JSON document a successful run printed.
pub fn json(o: &Output, what: &str) -> Value {
    assert!(o.status.success(), "{what} failed: {}", super::stderr(o));
    serde_json::from_slice(&o.stdout).expect("--format json prints one JSON document")
}
