//! The crossover experiment in a real kernel with AF_ALG (the qemu guest): OpenSSL in process
//! against the kernel's AES-CBC through AF_ALG, across sizes. Both curves, a cost model
//! for each path, the crossover or "never", and the CPU load table must come out of one
//! run. Timings under emulation mean nothing; the shapes and fields are checked.
//! CRYPTOBENCH_SKIP_GUEST=1 is the only way to skip.

mod common;

use serde_json::Value;
use std::path::Path;
use std::process::Command;

const MARK: &str = "=====8<=====";
const SIZES: [u64; 6] = [16, 256, 1024, 4096, 16384, 65536];

#[test]
fn openssl_against_af_alg_gives_curves_fits_crossover_and_cpu_table() {
    if !common::guest_enabled() {
        return;
    }
    let speed = "cryptobench speed --impl openssl,af_alg --alg aes-128-cbc --sizes 16,256,1k,4k,16k,64k --time 0.05";
    let script = format!(
        "{speed} --output /tmp/r.jsonl; echo \"{MARK} $?\"; cryptobench report /tmp/r.jsonl --format json; echo \"{MARK} $?\""
    );
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("guest/run");
    let o = Command::new(&run)
        .args(["sh", "-c", &script])
        .env("CRYPTOBENCH_BIN", env!("CARGO_BIN_EXE_cryptobench"))
        .env("GUEST_TIMEOUT", "600")
        .env_remove("GUEST_VERBOSE")
        .output()
        .expect("guest/run starts");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}\n{out}");
    let parts: Vec<&str> = out.split(MARK).collect();
    assert_eq!(parts.len(), 3, "{out}");
    let (table, json) = (parts[0], parts[1]);
    assert!(json.starts_with(" 0\n"), "speed exited non-zero: {out}");
    let json = json.trim_start_matches(" 0\n");

    // The table: both paths, the CPU load table with user+sys, the fits and the crossover.
    for row in ["openssl", "af_alg"] {
        assert!(
            table
                .lines()
                .any(|l| l.starts_with(row) && l.contains("aes-128-cbc")),
            "{row}: {table}"
        );
    }
    assert!(table.contains("CPU load %"), "{table}");
    assert!(table.contains("Cost per call, t(n) = a + n/B"), "{table}");
    assert!(table.contains("Crossovers"), "{table}");
    // The kernel path spends system time: the load table shows user+sys.
    assert!(table.contains("user+sys"), "{table}");

    let v: Value = serde_json::from_str(json.trim()).expect("report prints JSON");
    let recs = v["records"].as_array().unwrap();
    for imp in ["openssl", "af_alg"] {
        for dir in ["enc", "dec"] {
            let sizes: Vec<u64> = recs
                .iter()
                .filter(|r| r["impl"] == imp && r["direction"] == dir)
                .map(|r| r["size"].as_u64().unwrap())
                .collect();
            assert_eq!(sizes, SIZES, "{imp} {dir}: whole curve");
        }
    }
    for r in recs.iter().filter(|r| r["impl"] == "af_alg") {
        assert_eq!(
            r["driver"], "cbc-aes-aesni",
            "the driver the kernel chose: {r}"
        );
        assert!(
            r["cpu_sys_s"].as_f64().unwrap() > 0.0,
            "AF_ALG work is system time: {r}"
        );
    }
    let fits = v["analysis"]["fits"].as_array().unwrap();
    assert_eq!(fits.len(), 4, "openssl and af_alg, enc and dec: {fits:?}");
    for f in fits {
        let a = f["overhead_s"].as_f64().unwrap();
        let b = f["bandwidth_bps"].as_f64().unwrap();
        assert!(a.is_finite() && b > 0.0, "{f}");
        let ab = f["overhead_s_bounds"].as_array().unwrap();
        assert!(ab[0].as_f64().unwrap() <= ab[1].as_f64().unwrap(), "{f}");
    }
    // The syscall path costs more per call than the in-process library.
    for dir in ["enc", "dec"] {
        let a = |p: &str| {
            fits.iter()
                .find(|f| f["path"] == p && f["direction"] == dir)
                .unwrap()["overhead_s"]
                .as_f64()
                .unwrap()
        };
        assert!(
            a("af_alg") > a("openssl"),
            "{dir}: per-call overhead of AF_ALG above OpenSSL's"
        );
    }
    let cs = v["analysis"]["crossovers"].as_array().unwrap();
    assert_eq!(cs.len(), 2, "one pair per direction: {cs:?}");
    for c in cs {
        let n = &c["size_bytes"];
        assert!(n.is_null() || n.as_f64().unwrap() > 0.0, "{c}");
        assert!(
            c["faster_below"] == "openssl" || c["faster_below"] == "af_alg",
            "{c}"
        );
        if n.is_null() {
            assert!(table.contains("never:"), "{table}");
        }
    }
}

/// Study 1's stack: libcrypto → afalg engine → AF_ALG → kernel driver, measured as
/// openssl with variant engine=afalg beside plain openssl, with its driver named.
#[test]
fn openssl_afalg_engine_is_measured_with_its_driver() {
    if !common::guest_enabled() {
        return;
    }
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("guest/run");
    let o = Command::new(&run)
        .args([
            "cryptobench",
            "speed",
            "--impl",
            "openssl",
            "--variant",
            "engine=afalg",
            "--alg",
            "aes-*-cbc",
            "--sizes",
            "16,4k,64k",
            "--time",
            "0.03",
            "--format",
            "json",
        ])
        .env("CRYPTOBENCH_BIN", env!("CARGO_BIN_EXE_cryptobench"))
        .env("GUEST_TIMEOUT", "600")
        .output()
        .expect("guest/run starts");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let refused: Vec<&Value> = v["exclusions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "refused")
        .collect();
    assert!(
        refused.is_empty(),
        "the engine passes the known answers: {refused:?}"
    );
    let recs = v["records"].as_array().unwrap();
    let engine: Vec<&Value> = recs
        .iter()
        .filter(|r| r["variant"] == "engine=afalg")
        .collect();
    assert_eq!(
        engine.len(),
        2 * 2 * 3,
        "aes-128/256-cbc x enc/dec x 3 sizes"
    );
    for r in &engine {
        assert_eq!(r["impl"], "openssl");
        assert_eq!(r["access"], "engine");
        assert_eq!(r["driver"], "cbc-aes-aesni", "{r}");
    }
    assert!(
        recs.iter().any(|r| r["variant"].is_null()),
        "plain openssl beside it"
    );
    assert!(!v["analysis"]["crossovers"].as_array().unwrap().is_empty());
}
