//! Public-key operations through the real binary: ops/s records, the `openssl speed`
//! blocks, libraries that lack an algorithm, and the gate refusing wrong signatures.
//! Speeds are never asserted; shapes and consistency are.

use serde_json::Value;
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

fn json(o: &Output) -> Value {
    assert!(o.status.success(), "{}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("one JSON document")
}

#[test]
fn public_key_records_count_operations_not_bytes() {
    let o = run(&[
        "speed",
        "--time",
        "0.02",
        "--impl",
        "aws-lc,ring",
        "--alg",
        "ed25519,x25519",
        "--sizes",
        "1k",
        "--threads",
        "1,2",
        "--format",
        "json",
    ]);
    let v = json(&o);
    assert!(
        text(&o.stderr).contains("--sizes does not apply to public-key algorithms"),
        "{}",
        text(&o.stderr)
    );
    let recs = v["records"].as_array().unwrap();
    // (ed25519 sign, verify + x25519 derive) x 2 libraries x 2 thread counts
    assert_eq!(recs.len(), 12, "{recs:?}");
    for r in recs {
        let dir = r["direction"].as_str().unwrap();
        assert!(["sign", "verify", "derive"].contains(&dir), "{dir}");
        assert_eq!(r["size"], 0);
        assert!(r["throughput_bps"].is_null(), "{r}");
        assert_eq!(r["bytes"], 0);
        let ops = r["ops_per_s"].as_f64().unwrap();
        let ci = r["ops_per_s_ci"].as_array().unwrap();
        assert!(ci[0].as_f64().unwrap() <= ops && ops <= ci[1].as_f64().unwrap());
        let threads = r["threads"].as_u64().unwrap() as usize;
        let per = r["per_thread_ops_per_s"].as_array().unwrap();
        assert_eq!(per.len(), threads);
        assert!(per.iter().all(|x| x.as_f64().unwrap() > 0.0), "{per:?}");
        let samples = r["samples_ops_per_s"].as_array().unwrap();
        assert_eq!(samples.len() as u64, r["trials"].as_u64().unwrap());
        assert!(r["calls"].as_u64().unwrap() > 0);
        assert!(r["cpu_user_s"].as_f64().unwrap() > 0.0);
    }
    assert!(recs.iter().any(|r| r["impl"] == "ring"
        && r["direction"] == "derive"
        && r["notes"].to_string().contains("single-use")));
}

#[test]
fn openssl_format_prints_the_speed_blocks() {
    let o = run(&[
        "speed",
        "--time",
        "0.02",
        "--impl",
        "aws-lc",
        "--alg",
        "rsa2048-pkcs1,ecdsa-p256,ed25519,x25519",
        "--format",
        "openssl",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    let at = |header: &str| {
        lines
            .iter()
            .position(|l| *l == header)
            .unwrap_or_else(|| panic!("no header {header:?} in\n{out}"))
    };
    let rsa = at("                  sign    verify    sign/s verify/s");
    let row: Vec<&str> = lines[rsa + 1].split_whitespace().collect();
    assert_eq!(&row[..3], ["rsa", "2048", "bits"], "{}", lines[rsa + 1]);
    // The seconds per operation are the reciprocal of the rate, as openssl speed prints.
    let sign_s: f64 = row[3].trim_end_matches('s').parse().unwrap();
    let sign_rate: f64 = row[5].parse().unwrap();
    assert!(
        (sign_s * sign_rate - 1.0).abs() < 0.01,
        "{}",
        lines[rsa + 1]
    );
    assert!(lines[rsa + 1].starts_with("rsa 2048 bits 0."));
    let sig = "                              sign    verify    sign/s verify/s";
    assert!(lines
        .iter()
        .any(|l| l.starts_with(" 256 bits ecdsa (nistp256) ")));
    assert!(lines
        .iter()
        .any(|l| l.starts_with(" 253 bits EdDSA (Ed25519) ")));
    assert!(lines.iter().filter(|l| **l == sig).count() == 2, "{out}");
    let ecdh = at("                              op      op/s");
    assert!(
        lines[ecdh + 1].starts_with(" 253 bits ecdh (X25519) "),
        "{out}"
    );
}

#[test]
fn a_missing_curve_is_listed_unavailable_not_skipped() {
    let v = json(&run(&[
        "speed",
        "--time",
        "0.02",
        "--impl",
        "libsodium,aws-lc",
        "--alg",
        "ecdsa-p256,ml-kem-768",
        "--format",
        "json",
    ]));
    let excl = v["exclusions"].as_array().unwrap();
    for alg in ["ecdsa-p256", "ml-kem-768"] {
        assert!(
            excl.iter()
                .any(|e| e["impl"] == "libsodium" && e["alg"] == alg && e["kind"] == "not_offered"),
            "{alg}: {excl:?}"
        );
    }
    let recs = v["records"].as_array().unwrap();
    let dirs: Vec<&str> = recs
        .iter()
        .filter(|r| r["alg"] == "ml-kem-768")
        .map(|r| r["direction"].as_str().unwrap())
        .collect();
    assert_eq!(dirs, ["keygen", "encaps", "decaps"]);
}

#[test]
fn wrong_signatures_and_secrets_are_refused_before_timing() {
    for alg in ["ed25519", "ecdsa-p256", "rsa2048-pss", "x25519"] {
        let v = json(&run(&[
            "speed",
            "--time",
            "0.02",
            "--impl",
            "rustcrypto,aws-lc",
            "--alg",
            alg,
            "--test-corrupt",
            "rustcrypto",
            "--format",
            "json",
        ]));
        let recs = v["records"].as_array().unwrap();
        assert!(
            recs.iter().all(|r| r["impl"] != "rustcrypto"),
            "{alg}: timed"
        );
        assert!(recs.iter().any(|r| r["impl"] == "aws-lc"), "{alg}");
        assert!(
            v["exclusions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["kind"] == "refused"
                    && e["impl"].as_str().unwrap().starts_with("rustcrypto")),
            "{alg}: {}",
            v["exclusions"]
        );
    }
}

/// A wrong ML-KEM fails the FIPS 203 known answer (NIST ACVP decapsulation) and is
/// refused on its own; the library that passes it is measured.
#[test]
fn a_wrong_kem_fails_the_fips_203_known_answer() {
    let v = json(&run(&[
        "speed",
        "--time",
        "0.02",
        "--impl",
        "rustcrypto,aws-lc",
        "--alg",
        "ml-kem-768",
        "--test-corrupt",
        "rustcrypto",
        "--format",
        "json",
    ]));
    let ex = v["exclusions"].as_array().unwrap();
    let refusal = ex
        .iter()
        .find(|e| e["kind"] == "refused" && e["impl"].as_str().unwrap().starts_with("rustcrypto"))
        .unwrap_or_else(|| panic!("rustcrypto refused: {ex:?}"));
    let reason = refusal["reason"].as_str().unwrap();
    assert!(reason.contains("FIPS 203"), "{reason}");
    assert!(reason.contains("wrong shared secret"), "{reason}");
    let recs = v["records"].as_array().unwrap();
    assert!(recs.iter().all(|r| r["impl"] != "rustcrypto"), "timed");
    for dir in ["keygen", "encaps", "decaps"] {
        assert!(
            recs.iter()
                .any(|r| r["impl"] == "aws-lc" && r["direction"] == dir),
            "aws-lc {dir} measured: {recs:?}"
        );
    }
}
