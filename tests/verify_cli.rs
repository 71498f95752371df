//! `cryptobench verify` on the real binary: every in-process path passes the known
//! answers, Project Wycheproof and the round trip, with every vector of the files counted
//! (passed, failed or not applicable); a deliberately broken path is caught with the
//! failing vector named; bad input exits 2 with one line; af_alg passes in the guest.

mod common;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cryptobench"))
        .args(args)
        .output()
        .expect("binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Minimum Wycheproof vectors each path must pass per algorithm: the vectors of the
/// file that fit the Operation (12-byte nonce, 16-byte tag, the algorithm's key).
const FLOORS: &[(&str, usize)] = &[
    ("aes-128-gcm", 60),
    ("aes-192-gcm", 60),
    ("aes-256-gcm", 60),
    ("chacha20-poly1305", 300),
    ("aes-128-cbc", 20),
    ("aes-192-cbc", 20),
    ("aes-256-cbc", 20),
    ("hmac-sha256", 170),
];

/// Vectors in the Wycheproof file that belong to `alg` (its key size), from the crate
/// directly: what verify must account for, passed or failed or not applicable.
fn vectors_in_file(alg: &str) -> usize {
    use wycheproof::{aead, cipher, mac};
    let bits = if alg.contains("128") {
        128
    } else if alg.contains("192") {
        192
    } else {
        256
    };
    let of_key = |groups: Vec<(usize, usize)>| -> usize {
        groups
            .into_iter()
            .filter(|(k, _)| *k == bits)
            .map(|(_, n)| n)
            .sum()
    };
    match alg {
        "aes-128-gcm" | "aes-192-gcm" | "aes-256-gcm" => of_key(
            aead::TestSet::load(aead::TestName::AesGcm)
                .unwrap()
                .test_groups
                .iter()
                .map(|g| (g.key_size, g.tests.len()))
                .collect(),
        ),
        "aes-128-cbc" | "aes-192-cbc" | "aes-256-cbc" => of_key(
            cipher::TestSet::load(cipher::TestName::AesCbcPkcs5)
                .unwrap()
                .test_groups
                .iter()
                .map(|g| (g.key_size, g.tests.len()))
                .collect(),
        ),
        "chacha20-poly1305" => {
            aead::TestSet::load(aead::TestName::ChaCha20Poly1305)
                .unwrap()
                .number_of_tests
        }
        "hmac-sha256" => {
            mac::TestSet::load(mac::TestName::HmacSha256)
                .unwrap()
                .number_of_tests
        }
        _ => unreachable!("{alg} has no Wycheproof file"),
    }
}

fn count(t: &Value) -> (usize, usize, usize) {
    let na: u64 = t["not_applicable"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    (
        t["passed"].as_u64().unwrap() as usize,
        t["failed"].as_array().unwrap().len(),
        na as usize,
    )
}

/// Every path of the report passed, and each AEAD/MAC/CBC path took at least its floor
/// of Wycheproof vectors and accounted for every vector of the file.
fn assert_all_pass(v: &Value, impls: &[&str]) {
    assert_eq!(v["ok"], true, "{v:#}");
    let paths = v["paths"].as_array().unwrap();
    for p in paths {
        assert_eq!(p["failed"], 0, "{p:#}");
        assert!(p["known_answers"]["passed"].as_u64().unwrap() >= 1, "{p:#}");
    }
    for imp in impls {
        let mine: Vec<&Value> = paths.iter().filter(|p| p["impl"] == *imp).collect();
        assert!(!mine.is_empty(), "{imp} was not verified");
        for p in &mine {
            let alg = p["alg"].as_str().unwrap();
            let Some(&(_, floor)) = FLOORS.iter().find(|(a, _)| *a == alg) else {
                assert!(p["wycheproof"].is_null(), "{alg} has no Wycheproof file");
                continue;
            };
            let (passed, failed, na) = count(&p["wycheproof"]);
            assert!(
                passed >= floor,
                "{imp} {alg}: {passed} Wycheproof vectors passed"
            );
            assert_eq!(
                passed + failed + na,
                vectors_in_file(alg),
                "{imp} {alg}: every vector of the file is counted"
            );
        }
    }
}

#[test]
fn every_in_process_path_passes_known_answers_wycheproof_and_round_trip() {
    let o = run(&["verify", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(o.stderr.is_empty(), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_all_pass(
        &v,
        &["openssl", "aws-lc", "ring", "rustcrypto", "libsodium"],
    );
    // The round trip ran against a second implementation wherever one exists.
    for p in v["paths"].as_array().unwrap() {
        assert!(p["reference"].is_string(), "{p:#}");
        // Symmetric: several message sizes; public-key: one cross-library check.
        let alg = p["alg"].as_str().unwrap();
        let public_key = [
            "rsa", "ecdsa", "ed25519", "x25519", "ecdh", "ml-kem", "ml-dsa",
        ]
        .iter()
        .any(|x| alg.starts_with(x));
        let least = if public_key { 1 } else { 3 };
        assert!(count(&p["round_trip"]).0 >= least, "{p:#}");
    }
    // AEADs count what they cannot take (other nonce sizes), never drop it.
    let gcm = v["paths"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["impl"] == "openssl" && p["alg"] == "aes-128-gcm")
        .unwrap();
    assert!(count(&gcm["wycheproof"]).2 > 0);

    // The table shows the same paths, and says nothing failed.
    let o = run(&["verify", "--impl", "ring", "--alg", "aes-*-gcm"]);
    assert_eq!(o.status.code(), Some(0));
    let table = text(&o.stdout);
    assert_eq!(
        table.lines().filter(|l| l.starts_with("ring ")).count(),
        2,
        "{table}"
    );
    assert!(table.contains("nothing failed"), "{table}");
    assert!(table.contains("ring does not offer aes-192-gcm"), "{table}");
}

#[test]
fn a_corrupt_path_is_caught_with_the_failing_vector_named() {
    let args = [
        "verify",
        "--impl",
        "rustcrypto,openssl",
        "--alg",
        "aes-128-gcm,hmac-sha256",
        "--test-corrupt",
        "rustcrypto",
    ];
    let o = run(&args);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    for file in ["aes_gcm", "hmac_sha256"] {
        assert!(
            out.contains(&format!(
                "FAILED rustcrypto [test-corrupt] {}: wycheproof {file} tcId ",
                if file == "aes_gcm" {
                    "aes-128-gcm"
                } else {
                    "hmac-sha256"
                }
            )),
            "{out}"
        );
    }
    assert!(!out.contains("FAILED openssl"), "{out}");
    assert_eq!(text(&o.stderr).lines().count(), 1, "{}", text(&o.stderr));

    let mut json = args.to_vec();
    json.extend(["--format", "json"]);
    let o = run(&json);
    assert_eq!(o.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["ok"], false);
    for p in v["paths"].as_array().unwrap() {
        if p["impl"] == "openssl" {
            assert_eq!(p["failed"], 0, "{p:#}");
            continue;
        }
        assert_eq!(p["variant"], "test-corrupt");
        let failed = p["wycheproof"]["failed"].as_array().unwrap();
        assert!(!failed.is_empty(), "{p:#}");
        // Each failure names its vector and carries Wycheproof's comment where it has one.
        assert!(failed
            .iter()
            .all(|f| f["vector"].as_str().unwrap().starts_with("wycheproof ")));
        assert!(failed
            .iter()
            .any(|f| !f["comment"].as_str().unwrap().is_empty()));
        // Its invalid vectors are still refused: a flipped output bit does not make the
        // open accept a bad tag.
        assert!(count(&p["wycheproof"]).0 > 0, "{p:#}");
    }
}

#[test]
fn bad_input_exits_2_with_one_line() {
    for args in [
        &["verify", "--impl", "nope"][..],
        &["verify", "--alg", "rc5"],
        &["verify", "--format", "openssl"],
        &["verify", "--variant", "bogus"],
        &["verify", "--libcrypto", "/nonexistent/libcrypto.so"],
        &["verify", "--test-corrupt", "nope"],
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
        assert!(o.stdout.is_empty(), "{args:?}");
        let err = text(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("cryptobench: "), "{args:?}: {err}");
    }
}

/// af_alg (base and zero-copy) under a real kernel: guest/run boots the Debian kernel
/// with the AF_ALG modules and runs this build's verify there.
#[test]
fn af_alg_passes_verify_in_the_guest() {
    if !common::guest_enabled() {
        return;
    }
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("guest/run");
    let o = Command::new(&run)
        .args([
            "cryptobench",
            "verify",
            "--impl",
            "af_alg",
            "--variant",
            "zerocopy",
            "--format",
            "json",
        ])
        .env("CRYPTOBENCH_BIN", env!("CARGO_BIN_EXE_cryptobench"))
        .env("GUEST_TIMEOUT", "900")
        .env_remove("GUEST_VERBOSE")
        .output()
        .unwrap_or_else(|e| panic!("{} does not start: {e}", run.display()));
    let err = text(&o.stderr);
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("no JSON from the guest ({e}): {err}\n{}", text(&o.stdout)));
    assert_eq!(o.status.code(), Some(0), "{err}\n{v:#}");
    assert_all_pass(&v, &["af_alg"]);
    let variants: Vec<&Value> = v["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["variant"])
        .collect();
    assert!(variants.iter().any(|x| x.is_null()), "base af_alg verified");
    assert!(
        variants.iter().any(|x| *x == "zerocopy"),
        "zero-copy af_alg verified"
    );
}
