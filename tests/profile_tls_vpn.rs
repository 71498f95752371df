//! `tls --profile` and `vpn --profile` for real: perf samples real nginx workers and a
//! real OpenVPN tunnel between namespaces (one short point each, about 10 s in all).
//! Shares are never asserted beyond what any real run must show: a consistent profile,
//! some crypto (the point encrypts every byte), and the flame graph on disk.
//! Needs nginx and wrk (scripts/deps/tls.sh), openvpn (scripts/deps/vpn.sh), perf
//! (scripts/deps/profile.sh); vpn needs root.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "cryptobench-profile-net-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Runs `args` with --profile-dir `dir` and returns the JSON report.
fn run(args: &[&str], dir: &Path) -> Value {
    let o = common::command()
        .args(args)
        .args(["--profile", "--profile-dir"])
        .arg(dir)
        .args(["--format", "json"])
        .output()
        .expect("cryptobench runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{args:?} failed: {err}");
    // The per-point breakdown goes to the terminal.
    assert!(err.contains("flame graph:"), "{err}");
    serde_json::from_slice(&o.stdout).expect("--format json prints one JSON document")
}

/// The first record's profile: consistent, with crypto above 0 even at its interval's low
/// end, and an SVG flame graph (folded stacks beside it) in `dir`.
fn check(report: &Value, dir: &Path) -> Value {
    let recs = report["records"].as_array().expect("records");
    let p = recs[0]["profile"].clone();
    let n = common::check_profile(&p);
    assert!(n >= 50, "only {n} samples: {p}");
    let crypto = &p["crypto"];
    assert!(
        crypto["ci"][0].as_f64().unwrap() > 0.0,
        "no crypto in a point that encrypts every byte: {p}"
    );
    let ceiling = p["amdahl_ceiling"].as_f64().unwrap();
    let share = crypto["share"].as_f64().unwrap();
    assert!((ceiling - 1.0 / (1.0 - share)).abs() < 1e-9, "{p}");
    // The sampled rerun's own throughput, for the overhead.
    assert!(p["throughput_bps"].as_f64().unwrap() > 0.0, "{p}");
    let svg = PathBuf::from(p["flame_graph"].as_str().expect("flame_graph path"));
    assert!(
        svg.starts_with(dir),
        "{} outside {}",
        svg.display(),
        dir.display()
    );
    let text = std::fs::read_to_string(&svg).expect("the flame graph exists");
    assert!(text.contains("<svg") && text.contains("</svg>"));
    // Crypto frames carry their category, so the flame graph colours them.
    assert!(
        text.contains("[aes]") || text.contains("[ghash]"),
        "no crypto frame in {}",
        svg.display()
    );
    assert!(svg.with_extension("folded").is_file());
    p
}

#[test]
fn tls_profile_samples_the_nginx_workers() {
    if !common::perf_usable() {
        return;
    }
    let dir = temp_dir("tls");
    let v = run(
        &[
            "tls",
            "--suites",
            "aes128gcm",
            "--files",
            "100k",
            "--concurrency",
            "1",
            "--duration",
            "1",
        ],
        &dir,
    );
    assert_eq!(v["records"].as_array().map(Vec::len), Some(1), "{v}");
    check(&v, &dir);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn vpn_profile_samples_the_openvpn_processes() {
    if !common::is_root() {
        return common::skip("cryptobench vpn needs root (CI runs the tests as root)");
    }
    if !common::perf_usable() {
        return;
    }
    let dir = temp_dir("vpn");
    let v = run(
        &[
            "vpn",
            "--tunnels",
            "openvpn",
            "--ciphers",
            "AES-128-GCM,none",
            "--streams",
            "1",
            "--directions",
            "up",
            "--duration",
            "1",
        ],
        &dir,
    );
    let recs = v["records"].as_array().unwrap();
    assert_eq!(recs.len(), 2, "{v}");
    assert_eq!(recs[0]["cipher"], "AES-128-GCM");
    let p = check(&v, &dir);
    // The tunnel's crypto share and its ceiling are the sampled ones; the share per byte
    // against cipher none is beside them as the cross-check.
    let s = &v["analysis"]["shares"][0];
    let f = |x: &Value| x.as_f64().unwrap();
    assert_eq!(s["share_source"], "sampled", "{s}");
    assert_eq!(s["crypto_share"], p["crypto"]["share"], "{s}");
    assert!(
        (f(&s["max_speedup"]) - 1.0 / (1.0 - f(&s["crypto_share"]))).abs() < 1e-9,
        "{s}"
    );
    let per_byte = 1.0 - f(&recs[1]["cpu_s_per_gb"]) / f(&recs[0]["cpu_s_per_gb"]);
    assert!((f(&s["per_byte_share"]) - per_byte).abs() < 1e-9, "{s}");
    // Only the tunnel's own processes are sampled: openvpn's code is there.
    assert!(
        p["categories"]["protocol"]["samples"].as_u64().unwrap_or(0) > 0,
        "{p}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
