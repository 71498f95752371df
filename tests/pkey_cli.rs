//! Public-key operations through the real binary: ops/s records, the `openssl speed`
//! blocks, libraries that lack an algorithm, and the gate refusing wrong signatures.
//! Speeds are never asserted; shapes and consistency are.

mod common;
use common::run;

use serde_json::Value;
use std::process::Output;

fn json(o: &Output) -> Value {
    assert!(o.status.success(), "{}", common::utf8(&o.stderr));
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
        common::utf8(&o.stderr).contains("--sizes does not apply to public-key algorithms"),
        "{}",
        common::utf8(&o.stderr)
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

/// `speed --format openssl` of `algs` on `imp`, `time` seconds per point.
fn openssl_table(imp: &str, algs: &str, time: &str) -> String {
    let o = run(&[
        "speed", "--time", time, "--impl", imp, "--alg", algs, "--format", "openssl",
    ]);
    assert!(o.status.success(), "{}", common::utf8(&o.stderr));
    common::utf8(&o.stdout)
}

/// The index of the line that is exactly `header` in `out`'s lines.
fn header_at(lines: &[&str], out: &str, header: &str) -> usize {
    lines
        .iter()
        .position(|l| *l == header)
        .unwrap_or_else(|| panic!("no header {header:?} in\n{out}"))
}

/// A `NAME BITS bits` row of the RSA or DSA block, whose seconds per operation are the
/// reciprocal of the rate, as `openssl speed` prints them.
fn assert_bits_row(line: &str, name: &str, bits: &str) {
    let row: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(&row[..3], [name, bits, "bits"], "{line}");
    let sign_s: f64 = row[3].trim_end_matches('s').parse().unwrap();
    let sign_rate: f64 = row[5].parse().unwrap();
    assert!((sign_s * sign_rate - 1.0).abs() < 0.01, "{line}");
    assert!(
        line.starts_with(&format!("{name} {bits} bits 0.")),
        "{line}"
    );
}

#[test]
fn openssl_format_prints_the_speed_blocks() {
    let out = openssl_table("aws-lc", "rsa2048-pkcs1,ecdsa-p256,ed25519,x25519", "0.02");
    let lines: Vec<&str> = out.lines().collect();
    let at = |header: &str| header_at(&lines, &out, header);
    let rsa = at("                  sign    verify    sign/s verify/s");
    assert_bits_row(lines[rsa + 1], "rsa", "2048");
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

/// ML-KEM and ML-DSA in OpenSSL 3.5's own blocks: `%27s %8.6fs %8.6fs %8.6fs %9.1f %9.1f
/// %9.1f` under its headers, keygen first; ML-DSA's keygen is not timed, so it is "-".
#[test]
fn openssl_format_prints_the_kem_and_signature_blocks_of_3_5() {
    let out = openssl_table("aws-lc", "ml-kem-768,ml-dsa-65", "0.02");
    let lines: Vec<&str> = out.lines().collect();
    let at = |header: &str| header_at(&lines, &out, header);
    let kem = at(
        "                               keygen    encaps    decaps keygens/s  encaps/s  decaps/s",
    );
    let sig = at(
        "                               keygen     signs    verify keygens/s    sign/s  verify/s",
    );
    let row = |line: &str, name: &str| -> Vec<String> {
        assert!(line.starts_with(&format!("{name:>27} ")), "{line}");
        line[28..].split_whitespace().map(String::from).collect()
    };
    let k = row(lines[kem + 1], "ML-KEM-768");
    assert_eq!(k.len(), 6, "{out}");
    for i in 0..3 {
        let secs: f64 = k[i].trim_end_matches('s').parse().unwrap();
        let rate: f64 = k[i + 3].parse().unwrap();
        // %8.6fs of 1/rate: equal to six decimals.
        assert!((secs - 1.0 / rate).abs() <= 5e-7 + 1e-12, "{out}");
    }
    let d = row(lines[sig + 1], "ML-DSA-65");
    assert_eq!((d[0].as_str(), d[3].as_str()), ("-", "-"), "{out}");
    assert!(
        d[1].ends_with('s') && d[4].parse::<f64>().unwrap() > 0.0,
        "{out}"
    );
    assert!(sig > kem, "{out}");
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

/// `speed` of `alg` on `impls` with `corrupt` wrapped by the corrupt implementation.
fn corrupt_speed(impls: &str, alg: &str, corrupt: &str) -> Value {
    json(&run(&[
        "speed",
        "--time",
        "0.02",
        "--impl",
        impls,
        "--alg",
        alg,
        "--test-corrupt",
        corrupt,
        "--format",
        "json",
    ]))
}

/// The gate refused `corrupt` for `alg` (never timed) and `good` was measured.
fn assert_refused_not_timed(v: &Value, alg: &str, corrupt: &str, good: &str) {
    let recs = v["records"].as_array().unwrap();
    assert!(
        recs.iter().all(|r| r["impl"] != corrupt),
        "{alg}: {corrupt} timed"
    );
    assert!(recs.iter().any(|r| r["impl"] == good), "{alg}: {good}");
    assert!(
        v["exclusions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "refused"
                && e["alg"] == alg
                && e["impl"].as_str().unwrap().starts_with(corrupt)),
        "{alg}: {}",
        v["exclusions"]
    );
}

#[test]
fn wrong_signatures_and_secrets_are_refused_before_timing() {
    for alg in ["ed25519", "ecdsa-p256", "rsa2048-pss", "x25519"] {
        let v = corrupt_speed("rustcrypto,aws-lc", alg, "rustcrypto");
        assert_refused_not_timed(&v, alg, "rustcrypto", "aws-lc");
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

/// ML-DSA-65 and the TLS hybrid X25519MLKEM768: measured in aws-lc and RustCrypto with
/// every operation, and listed unavailable, with the reason, where a library lacks them.
#[test]
fn post_quantum_signatures_and_the_tls_hybrid_are_measured_where_offered() {
    let v = json(&run(&[
        "speed",
        "--time",
        "0.02",
        "--impl",
        "aws-lc,rustcrypto,ring,libsodium,openssl",
        "--alg",
        "ml-dsa-65,x25519-mlkem768",
        "--format",
        "json",
    ]));
    let recs = v["records"].as_array().unwrap();
    for lib in ["aws-lc", "rustcrypto"] {
        for (alg, dirs) in [
            ("ml-dsa-65", &["sign", "verify"][..]),
            ("x25519-mlkem768", &["keygen", "encaps", "decaps"][..]),
        ] {
            let got: Vec<&str> = recs
                .iter()
                .filter(|r| r["impl"] == lib && r["alg"] == alg)
                .map(|r| r["direction"].as_str().unwrap())
                .collect();
            assert_eq!(got, dirs, "{lib} {alg}: {recs:?}");
        }
    }
    for r in recs {
        assert!(r["ops_per_s"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["throughput_bps"].is_null(), "{r}");
    }
    let excl = v["exclusions"].as_array().unwrap();
    for (lib, alg, why) in [
        ("ring", "ml-dsa-65", "ML-DSA"),
        ("ring", "x25519-mlkem768", "ML-KEM"),
        ("libsodium", "ml-dsa-65", "ml-dsa-65"),
        ("libsodium", "x25519-mlkem768", "x25519-mlkem768"),
        ("openssl", "ml-dsa-65", "ML-DSA"),
        ("openssl", "x25519-mlkem768", "X25519MLKEM768"),
    ] {
        let e = excl
            .iter()
            .find(|e| e["impl"] == lib && e["alg"] == alg)
            .unwrap_or_else(|| panic!("{lib} {alg} not listed: {excl:?}"));
        assert_eq!(e["kind"], "not_offered", "{e}");
        assert!(e["reason"].as_str().unwrap().contains(why), "{e}");
    }
}

/// A library whose signatures are wrong and which accepts any signature fails ML-DSA's
/// known answers; one whose hybrid secret is wrong fails the hybrid's (FIPS 203 and
/// RFC 7748 joined). The library that passes is measured.
#[test]
fn wrong_post_quantum_backends_are_refused_before_timing() {
    for (alg, source, why) in [
        ("ml-dsa-65", "mldsa_65", "forged signature"),
        ("x25519-mlkem768", "X25519MLKEM768", "wrong shared secret"),
    ] {
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
        let ex = v["exclusions"].as_array().unwrap();
        let refusal = ex
            .iter()
            .find(|e| {
                e["kind"] == "refused" && e["impl"].as_str().unwrap().starts_with("rustcrypto")
            })
            .unwrap_or_else(|| panic!("{alg}: rustcrypto refused: {ex:?}"));
        let reason = refusal["reason"].as_str().unwrap();
        assert!(
            reason.contains(source) && reason.contains(why),
            "{alg}: {reason}"
        );
        let recs = v["records"].as_array().unwrap();
        assert!(
            recs.iter().all(|r| r["impl"] != "rustcrypto"),
            "{alg}: timed"
        );
        assert!(
            recs.iter().any(|r| r["impl"] == "aws-lc"),
            "{alg}: {recs:?}"
        );
    }
}

/// `--list` names the post-quantum operations each library offers, and says why the
/// others lack them.
#[test]
fn list_says_where_post_quantum_is_offered_and_why_not() {
    let o = run(&["speed", "--list"]);
    assert!(o.status.success(), "{}", common::utf8(&o.stderr));
    let out = common::utf8(&o.stdout);
    let section = |lib: &str| -> String {
        let start = out
            .lines()
            .position(|l| l.starts_with(&format!("{lib}:")))
            .unwrap_or_else(|| panic!("{lib} not listed:\n{out}"));
        out.lines()
            .skip(start + 1)
            .take_while(|l| l.starts_with("  "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    for lib in ["aws-lc", "rustcrypto"] {
        let s = section(lib);
        let offers = s.lines().find(|l| l.contains("offers:")).unwrap_or("");
        for alg in ["ml-kem-768", "ml-dsa-65", "x25519-mlkem768"] {
            assert!(offers.contains(alg), "{lib} {alg}:\n{s}");
        }
    }
    let ring = section("ring");
    assert!(
        ring.contains("missing ml-dsa-65: ring offers no ML-DSA"),
        "{ring}"
    );
    assert!(
        ring.contains("missing x25519-mlkem768: ring offers no ML-KEM"),
        "{ring}"
    );
    assert!(
        section("openssl").contains("missing ml-dsa-65: OpenSSL"),
        "{out}"
    );
}

/// The exclusion of `imp` for `alg` that is not the gate's refusal (a library without
/// DSA, e.g. an OpenSSL built `no-dsa`), if there is one.
fn not_offered(v: &Value, imp: &str, alg: &str) -> Option<String> {
    v["exclusions"].as_array()?.iter().find_map(|e| {
        (e["impl"] == imp && e["alg"] == alg && e["kind"] != "refused")
            .then(|| e["reason"].to_string())
    })
}

#[test]
fn dsa_is_measured_through_openssl_and_printed_in_its_block() {
    let v = json(&run(&[
        "speed", "--impl", "openssl", "--alg", "dsa2048", "--time", "0.05", "--format", "json",
    ]));
    if let Some(why) = not_offered(&v, "openssl", "dsa2048") {
        common::skip(&format!("this libcrypto offers no DSA: {why}"));
        return;
    }
    let recs = v["records"].as_array().unwrap();
    let dirs: Vec<&str> = recs
        .iter()
        .filter(|r| r["impl"] == "openssl" && r["alg"] == "dsa2048")
        .map(|r| r["direction"].as_str().unwrap())
        .collect();
    assert_eq!(dirs, ["sign", "verify"], "{recs:?}");
    for r in recs {
        assert!(r["ops_per_s"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["notes"].to_string().contains("fixed key"), "{r}");
    }

    let out = openssl_table("openssl", "dsa2048,dsa3072", "0.05");
    let lines: Vec<&str> = out.lines().collect();
    let header = lines
        .iter()
        .position(|l| *l == "                  sign    verify    sign/s verify/s")
        .unwrap_or_else(|| panic!("no dsa header in\n{out}"));
    assert_bits_row(lines[header + 1], "dsa", "2048");
    assert_bits_row(lines[header + 2], "dsa", "3072");
}

#[test]
fn a_wrong_dsa_is_refused_before_timing() {
    if !cfg!(feature = "test-corrupt") {
        common::skip("the corrupt implementation is only in builds with `--features test-corrupt` (scripts/test turns it on)");
        return;
    }
    for (corrupt, good) in [("openssl", "rustcrypto"), ("rustcrypto", "openssl")] {
        let v = corrupt_speed("openssl,rustcrypto", "dsa2048", corrupt);
        if let Some(why) = not_offered(&v, "openssl", "dsa2048") {
            common::skip(&format!("this libcrypto offers no DSA: {why}"));
            return;
        }
        assert_refused_not_timed(&v, "dsa2048", corrupt, good);
    }
}
