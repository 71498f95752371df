//! OpenSSL built from source (scripts/build-openssl, cached under ~/.cache/cryptobench)
//! under the real workloads: `speed --openssl` through the correctness gate, nginx and
//! OpenVPN running on a build with /proc/PID/maps showing it, and the bad inputs refused.
//!
//! scripts/test builds 3.5 and 3.5 no-asm before `cargo test`; here they come from the
//! cache (a cold build takes minutes). The tunnel test needs root (CI runs as root).

mod common;

use common::openssl::{found, json, refused, temp_dir, tunnel_possible};
use common::{cryptobench as run, stderr};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// The install dir of `scripts/build-openssl 3.5 [flags]`; None (skip reported) when it
/// cannot be built here.
fn build(flags: &[&str]) -> Option<PathBuf> {
    common::openssl::build("3.5", flags)
}

/// The one record a successful run of `args` (with `--format json`) measured.
fn one_record(args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let o = run(&a);
    let v = json(&o, &a.join(" "));
    let recs = v["records"].as_array().unwrap();
    assert_eq!(recs.len(), 1, "{}", stderr(&o));
    recs[0].clone()
}

/// One short `tls` point (AES-128-GCM, a 4 KiB file, 2 connections, 1 s) on `dir`.
fn tls_point_args(dir: &Path) -> Vec<String> {
    let d = dir.to_string_lossy();
    [
        "tls",
        "--openssl",
        &d,
        "--suites",
        "aes128gcm",
        "--files",
        "4k",
    ]
    .into_iter()
    .chain(["--concurrency", "2", "--duration", "1"])
    .map(String::from)
    .collect()
}

/// The mapped libraries a record carries are files of the build in `dir`.
fn check_mapped(r: &Value, dir: &Path, libssl: bool) {
    let b = &r["openssl_build"];
    let dir = dir.canonicalize().unwrap();
    assert_eq!(b["dir"].as_str(), dir.to_str(), "{b}");
    let inside = |v: &Value| {
        let p = Path::new(v.as_str().unwrap_or_else(|| panic!("no path: {b}")));
        p.canonicalize().unwrap().starts_with(&dir)
    };
    assert!(inside(&b["libcrypto"]), "{b}");
    if libssl {
        assert!(inside(&b["libssl"]), "{b}");
    }
    assert!(
        b["version"].as_str().unwrap().starts_with("OpenSSL 3.5."),
        "{b}"
    );
}

#[test]
fn speed_on_the_built_libraries_passes_the_gate_with_labels_naming_each_build() {
    let (Some(asm), Some(no_asm)) = (build(&[]), build(&["--no-asm"])) else {
        return;
    };
    let o = run(&[
        "speed",
        "--impl",
        "openssl",
        "--openssl",
        asm.to_str().unwrap(),
        "--openssl",
        no_asm.to_str().unwrap(),
        "--sizes",
        "16,16k",
        "--time",
        "0.02",
        "--format",
        "json",
    ]);
    let v = json(&o, "speed --openssl");
    // The default symmetric set, every algorithm and direction on both builds: each
    // passed the known answers and the round trip first (a failure is never timed).
    for label in ["openssl 3.5.5", "openssl 3.5.5 no-asm"] {
        common::openssl::assert_measured(
            &v,
            label,
            "OpenSSL 3.5.5",
            &[
                "aes-128-gcm",
                "aes-256-gcm",
                "chacha20-poly1305",
                "aes-128-cbc",
                "aes-256-ctr",
                "sha256",
                "sha512",
                "hmac-sha256",
            ],
        );
    }
    let excl = v["exclusions"].as_array().unwrap();
    assert!(
        !excl.iter().any(|e| e["kind"] == "refused"),
        "no build may fail the gate: {excl:?}"
    );
}

#[test]
fn nginx_serves_a_point_on_the_build_and_maps_it() {
    let Some(dir) = build(&[]) else { return };
    if !found("nginx") || !found("wrk") {
        return;
    }
    let args = tls_point_args(&dir);
    let r = &one_record(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(r["impl"], "nginx [openssl 3.5.5]");
    assert_eq!(r["negotiated"], "TLSv1.3 TLS_AES_128_GCM_SHA256");
    assert!(r["requests"].as_u64().unwrap() > 0);
    // nginx itself says which library it runs with.
    assert!(
        r["impl_version"]
            .as_str()
            .unwrap()
            .contains("running with OpenSSL 3.5.5"),
        "{}",
        r["impl_version"]
    );
    check_mapped(r, &dir, true);
}

#[test]
fn a_build_dir_holding_the_system_libraries_is_refused_at_the_maps_check() {
    if !found("nginx") || !found("wrk") {
        return;
    }
    // Links to Debian's pair: the loader takes them, but nginx then maps Debian's
    // files, not files of the directory, and the point must not be reported.
    let dir = temp_dir("system");
    let system = Path::new("/usr/lib/x86_64-linux-gnu");
    if !system.join("libssl.so.3").exists() {
        common::skip("no Debian libssl.so.3 in /usr/lib/x86_64-linux-gnu");
        return;
    }
    for l in ["libssl.so.3", "libcrypto.so.3"] {
        std::os::unix::fs::symlink(system.join(l), dir.join("lib").join(l)).unwrap();
    }
    let mut args = tls_point_args(&dir);
    args.extend(["--format".into(), "json".into()]);
    let o = run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(1), "nothing measured: {}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["records"].as_array().unwrap().is_empty());
    let excl = v["exclusions"].as_array().unwrap();
    assert_eq!(excl.len(), 1, "{excl:?}");
    let why = excl[0]["reason"].as_str().unwrap();
    assert!(
        why.contains("mapped /usr/lib/x86_64-linux-gnu/libcrypto.so.3, not the build"),
        "{why}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn openvpn_runs_a_tunnel_on_the_no_asm_build_and_maps_it() {
    if !tunnel_possible() {
        return;
    }
    let Some(dir) = build(&["--no-asm"]) else {
        return;
    };
    let d = dir.to_string_lossy();
    let r = &one_record(&[
        "vpn",
        "--openssl",
        &d,
        "--tunnels",
        "openvpn",
        "--ciphers",
        "AES-256-CBC",
        "--streams",
        "1",
        "--directions",
        "up",
        "--duration",
        "2",
    ]);
    assert_eq!(r["impl"], "openvpn [openssl 3.5.5 no-asm]");
    assert_eq!(r["tunnel"], "openvpn");
    assert_eq!(r["cipher"], "AES-256-CBC");
    assert!(r["throughput_bps"].as_f64().unwrap() > 0.0, "{r}");
    assert!(r["tunnel_rx_bytes"].as_u64().unwrap() > 0, "{r}");
    check_mapped(r, &dir, true);
}

#[test]
fn bad_build_dirs_exit_2_naming_the_problem_and_the_fix() {
    // No libraries at all.
    let empty = temp_dir("empty");
    let e = empty.to_str().unwrap();
    refused(
        &["speed", "--openssl", e, "--alg", "sha256"],
        "no libcrypto.so.N in its lib or lib64 directory: give the install dir of an OpenSSL 3.x build (scripts/build-openssl VERSION prints it)",
    );
    refused(&["tls", "--openssl", e], "no libcrypto.so.N");
    refused(
        &["study", "router-vpn", "--quick", "--openssl", e],
        "no libcrypto.so.N",
    );
    refused(
        &["study", "scaling", "--openssl", e],
        "--openssl is for study aesni and router-vpn",
    );
    refused(
        &[
            "speed",
            "--openssl",
            "/nonexistent/openssl",
            "--alg",
            "sha256",
        ],
        "not a directory",
    );
    let _ = std::fs::remove_dir_all(&empty);

    // A libssl of 3.5 beside Debian's 3.0 libcrypto.
    let system_crypto = Path::new("/usr/lib/x86_64-linux-gnu/libcrypto.so.3");
    match build(&[]) {
        Some(dir) if system_crypto.exists() => {
            let mixed = temp_dir("mixed");
            let lib = mixed.join("lib");
            std::os::unix::fs::symlink(dir.join("lib/libssl.so.3"), lib.join("libssl.so.3"))
                .unwrap();
            std::os::unix::fs::symlink(system_crypto, lib.join("libcrypto.so.3")).unwrap();
            let m = mixed.to_str().unwrap();
            let err = refused(
                &["tls", "--openssl", m],
                "a libssl needs the libcrypto of its own build",
            );
            assert!(
                err.contains("is from OpenSSL 3.5 but") && err.contains("is from 3.0"),
                "{err}"
            );
            let _ = std::fs::remove_dir_all(&mixed);
        }
        Some(_) => common::skip("no Debian libcrypto.so.3 to mismatch with"),
        None => {}
    }

    // A libcrypto of another architecture: Debian's arm64 one, from the sysroot that
    // scripts/deps/arm.sh unpacks.
    let cache = common::arm_cache();
    let arm64 = cache.join("sysroot-arm64/usr/lib/aarch64-linux-gnu/libcrypto.so.3");
    if arm64.exists() && cfg!(target_arch = "x86_64") {
        let foreign = temp_dir("arm64");
        std::os::unix::fs::symlink(&arm64, foreign.join("lib/libcrypto.so.3")).unwrap();
        refused(
            &[
                "speed",
                "--openssl",
                foreign.to_str().unwrap(),
                "--alg",
                "sha256",
            ],
            "is built for aarch64 (64-bit), this machine runs x86_64 (64-bit)",
        );
        let _ = std::fs::remove_dir_all(&foreign);
    } else {
        common::skip(&format!(
            "no arm64 libcrypto at {} (scripts/deps/arm.sh unpacks it)",
            arm64.display()
        ));
    }
}

/// The records of a finished run of `args` (`--format json` added), whatever its exit code.
fn run_json(args: &[&str]) -> (Output, Value) {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let o = run(&a);
    let v = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{a:?}: no JSON document ({e}): {}", stderr(&o)));
    (o, v)
}

/// `speed --impl openssl --openssl DIR --alg ALGS` in short trials, with `more`.
fn speed_on(dir: &Path, algs: &str, more: &[&str]) -> (Output, Value) {
    let d = dir.to_str().unwrap();
    let mut a = vec![
        "speed",
        "--impl",
        "openssl",
        "--openssl",
        d,
        "--alg",
        algs,
        "--time",
        "0.02",
    ];
    a.extend(more);
    run_json(&a)
}

/// ML-KEM-768, ML-DSA-65 and X25519MLKEM768 on the 3.5 build: through the same known
/// answers and aws-lc cross-checks as aws-lc, then measured; Debian's 3.0 beside it says
/// why it has none.
#[test]
fn post_quantum_on_the_35_build_passes_the_gate() {
    let Some(dir) = build(&[]) else { return };
    let (o, v) = speed_on(&dir, "ml-kem-768,ml-dsa-65,x25519-mlkem768", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = v["records"].as_array().unwrap();
    for (alg, dirs) in [
        ("ml-kem-768", &["keygen", "encaps", "decaps"][..]),
        ("ml-dsa-65", &["sign", "verify"][..]),
        ("x25519-mlkem768", &["keygen", "encaps", "decaps"][..]),
    ] {
        for d in dirs {
            assert!(
                recs.iter().any(|r| r["label"] == "openssl 3.5.5"
                    && r["alg"] == alg
                    && r["direction"] == *d
                    && r["ops_per_s"].as_f64().unwrap() > 0.0),
                "openssl 3.5.5 {alg} {d} not measured: {}",
                stderr(&o)
            );
        }
    }
    let excl = v["exclusions"].as_array().unwrap();
    assert!(!excl.iter().any(|e| e["kind"] == "refused"), "{excl:?}");
    // Debian's 3.0.19, loaded beside it: not available, with the reason, not a crash.
    for (alg, what) in [("ml-kem-768", "ML-KEM"), ("ml-dsa-65", "ML-DSA")] {
        let e = excl
            .iter()
            .find(|e| e["alg"] == alg && e["impl"].as_str().unwrap().starts_with("openssl 3.0"))
            .unwrap_or_else(|| panic!("the system's {alg} not listed: {excl:?}"));
        assert_eq!(e["kind"], "not_offered", "{e}");
        let why = e["reason"].as_str().unwrap();
        assert!(
            why.contains(&format!("OpenSSL before 3.5 has no {what}")),
            "{why}"
        );
    }
}

/// `--format openssl` of rows that are all the 3.5 build's is headed by the 3.5 build,
/// though the system's 3.0 is loaded (and listed) first, and prints 3.5's KEM block.
#[test]
fn openssl_format_is_headed_by_the_build_whose_rows_follow() {
    let Some(dir) = build(&[]) else { return };
    let o = common::run(&[
        "speed",
        "--impl",
        "openssl",
        "--openssl",
        dir.to_str().unwrap(),
        "--alg",
        "ml-kem-768",
        "--time",
        "0.02",
        "--format",
        "openssl",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = common::stdout(&o);
    let versions: Vec<&str> = out.lines().filter(|l| l.starts_with("version: ")).collect();
    assert_eq!(versions.len(), 1, "{out}");
    assert!(versions[0].starts_with("version: 3.5"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.ends_with("keygens/s  encaps/s  decaps/s")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with(&format!("{:>27} ", "ML-KEM-768"))),
        "{out}"
    );
}

/// The system's OpenSSL 3.0 alone: ML-KEM is not available (exit 1: nothing to measure),
/// with the reason.
#[test]
fn ml_kem_on_the_system_30_is_not_available_with_the_reason() {
    let (o, v) = run_json(&[
        "speed",
        "--impl",
        "openssl",
        "--alg",
        "ml-kem-768",
        "--time",
        "0.02",
    ]);
    let version = v["environment"]["libraries"]
        .as_array()
        .and_then(|l| l.iter().find(|x| x["impl"] == "openssl"))
        .and_then(|x| x["version"].as_str())
        .unwrap_or("")
        .to_string();
    if !version.starts_with("OpenSSL 3.0") && !version.starts_with("OpenSSL 1.") {
        common::skip(&format!(
            "the system OpenSSL is {version:?}, not one before 3.5"
        ));
        return;
    }
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(v["records"].as_array().unwrap().is_empty());
    let e = &v["exclusions"][0];
    assert_eq!(
        (&e["alg"], &e["kind"]),
        (&"ml-kem-768".into(), &"not_offered".into()),
        "{e}"
    );
    assert!(
        e["reason"]
            .as_str()
            .unwrap()
            .contains("OpenSSL before 3.5 has no ML-KEM"),
        "{e}"
    );
}

/// A 3.5 build whose ML-KEM answers wrongly (--test-corrupt) fails FIPS 203's known
/// answer and is refused before timing: nothing else offers ML-KEM, so exit 1.
#[test]
fn a_corrupt_ml_kem_on_the_build_is_refused_before_timing() {
    if !cfg!(feature = "test-corrupt") {
        common::skip("the corrupt implementation is only in builds with `--features test-corrupt` (scripts/test turns it on)");
        return;
    }
    let Some(dir) = build(&[]) else { return };
    let (o, v) = speed_on(&dir, "ml-kem-768", &["--test-corrupt", "openssl 3.5.5"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(v["records"].as_array().unwrap().is_empty(), "timed: {v}");
    let refusal = v["exclusions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "refused")
        .unwrap_or_else(|| panic!("refused: {v}"));
    assert_eq!(refusal["impl"], "openssl 3.5.5 [test-corrupt]");
    let why = refusal["reason"].as_str().unwrap();
    assert!(
        why.contains("FIPS 203") && why.contains("wrong shared secret"),
        "{why}"
    );
}

/// `tls_point_args` on `dir` with a full handshake per request and `more`.
fn tls_groups(dir: &Path, more: &[&str]) -> (Output, Value) {
    let args = tls_point_args(dir);
    let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
    a.push("--handshake");
    a.extend(more);
    run_json(&a)
}

/// nginx on the 3.5 build, one point per group with a full handshake per request: the
/// 3.5 client (wrk on the build's libssl, s_client of the build) negotiates
/// X25519MLKEM768, whose hellos carry the ML-KEM key share and ciphertext (about 1.2 KB
/// each way); the maps check passes; the handshake maps the hybrid to its encaps.
#[test]
fn nginx_on_the_build_negotiates_x25519mlkem768_per_group() {
    let Some(dir) = build(&[]) else { return };
    if !found("nginx") || !found("wrk") {
        return;
    }
    let (o, v) = tls_groups(&dir, &["--groups", "x25519,x25519mlkem768,secp256r1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = v["records"].as_array().unwrap();
    let of = |g: &str| {
        recs.iter()
            .find(|r| r["group"] == g)
            .unwrap_or_else(|| panic!("no {g} record: {}", stderr(&o)))
    };
    for (g, negotiated) in [
        ("x25519", "X25519"),
        ("x25519mlkem768", "X25519MLKEM768"),
        ("secp256r1", "prime256v1"),
    ] {
        let r = of(g);
        assert_eq!(r["negotiated_group"], negotiated, "{r}");
        assert!(r["requests"].as_u64().unwrap() > 0, "{r}");
        check_mapped(r, &dir, true);
    }
    let hellos = |g: &str| {
        let r = of(g);
        r["client_hello_bytes"].as_u64().unwrap() + r["server_hello_bytes"].as_u64().unwrap()
    };
    // ML-KEM's encapsulation key (1184 B) out, its ciphertext (1088 B) back.
    assert!(
        hellos("x25519mlkem768") > hellos("x25519") + 2000,
        "{} vs {}",
        hellos("x25519mlkem768"),
        hellos("x25519")
    );
    assert!(of("x25519mlkem768")["server_hello_bytes"].as_u64().unwrap() > 1088);
    let prims = of("x25519mlkem768")["handshake_cost"]["primitives"].clone();
    assert!(
        prims
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["alg"] == "x25519-mlkem768" && p["direction"] == "encaps"),
        "{prims}"
    );
    // h2load sets its own groups: it is given the one under test.
    if !found("h2load") {
        return;
    }
    let (o, v) = tls_groups(
        &dir,
        &["--groups", "x25519mlkem768", "--generator", "h2load"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        v["records"][0]["negotiated_group"],
        "X25519MLKEM768",
        "{}",
        stderr(&o)
    );
}

/// `--groups` bad input: an unknown name lists the valid ones; the hybrid on Debian's
/// OpenSSL 3.0 (nothing else asked for) says why, both in one line with exit 2.
#[test]
fn bad_groups_exit_2_naming_the_problem_and_the_fix() {
    if !found("nginx") || !found("wrk") {
        return;
    }
    refused(
        &["tls", "--groups", "nonsense", "--duration", "1"],
        "valid groups are x25519",
    );
    refused(
        &["tls", "--groups", "x25519mlkem768", "--duration", "1"],
        "has no X25519MLKEM768 (OpenSSL 3.5 added it): give --openssl DIR",
    );
    // Beside a group it can do: that one runs, the hybrid is not available, with why.
    let (o, v) = run_json(&[
        "tls",
        "--groups",
        "x25519,x25519mlkem768",
        "--files",
        "4k",
        "--concurrency",
        "1",
        "--duration",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(v["records"][0]["group"], "x25519", "{v}");
    let e = v["exclusions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["group"] == "x25519mlkem768")
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(e["kind"], "not_offered");
    assert!(
        e["reason"]
            .as_str()
            .unwrap()
            .contains("OpenSSL 3.5 added it"),
        "{e}"
    );
}
