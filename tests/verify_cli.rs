//! `cryptobench verify` on the real binary: every in-process path passes the known
//! answers, Project Wycheproof and the round trip, with every vector of the files counted
//! (passed, failed or not applicable) and no failure but the listed known findings; a
//! deliberately broken path is caught with the failing vector named; bad input exits 2
//! with one line; af_alg passes in the guest.

mod common;
use common::run;

use serde_json::Value;
use std::path::Path;
use std::process::Command;

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
    ("rsa2048-pkcs1", 250),
    ("rsa3072-pkcs1", 250),
    ("rsa4096-pkcs1", 250),
    ("rsa2048-pss", 100),
    ("rsa3072-pss", 100),
    ("rsa4096-pss", 100),
    ("ecdsa-p256", 480),
    ("ecdsa-p384", 500),
    ("ed25519", 150),
    ("x25519", 500),
    ("ecdh-p256", 350),
    ("ml-kem-768", 200),
    ("ml-dsa-65", 200),
    ("dsa2048", 300),
    ("dsa3072", 300),
];

/// The Wycheproof files of each public-key algorithm.
const PKEY_FILES: &[(&str, &[&str])] = &[
    ("rsa2048-pkcs1", &["rsa_signature_2048_sha256"]),
    ("rsa3072-pkcs1", &["rsa_signature_3072_sha256"]),
    ("rsa4096-pkcs1", &["rsa_signature_4096_sha256"]),
    ("rsa2048-pss", &["rsa_pss_2048_sha256_mgf1_32"]),
    ("rsa3072-pss", &["rsa_pss_3072_sha256_mgf1_32"]),
    ("rsa4096-pss", &["rsa_pss_4096_sha256_mgf1_32"]),
    ("ecdsa-p256", &["ecdsa_secp256r1_sha256"]),
    ("ecdsa-p384", &["ecdsa_secp384r1_sha384"]),
    ("ed25519", &["ed25519"]),
    ("x25519", &["x25519"]),
    ("ecdh-p256", &["ecdh_secp256r1_ecpoint"]),
    (
        "ml-kem-768",
        &[
            "mlkem_768",
            "mlkem_768_semi_expanded_decaps",
            "mlkem_768_encaps",
        ],
    ),
    ("ml-dsa-65", &["mldsa_65_verify"]),
    ("dsa2048", &["dsa_2048_256_sha256"]),
    ("dsa3072", &["dsa_3072_256_sha256"]),
];

/// Real failures Wycheproof finds, accepted only as listed: RustCrypto ml-kem 0.2 skips
/// FIPS 203's input checks on the encapsulation key (modulus, §7.2: mlkem_768_encaps
/// tcIds 2-13 "ModulusOverflow", 114-213 "Public key not reduced") and decapsulation key
/// (hash, §7.3: mlkem_768_semi_expanded_decaps tcIds 6-7).
fn known_finding(imp: &str, alg: &str, vector: &str) -> bool {
    let id = |file: &str| -> Option<usize> {
        vector
            .strip_prefix(&format!("wycheproof {file} tcId "))?
            .parse()
            .ok()
    };
    imp == "rustcrypto"
        && alg == "ml-kem-768"
        && (id("mlkem_768_encaps")
            .is_some_and(|n| (2..=13).contains(&n) || (114..=213).contains(&n))
            || id("mlkem_768_semi_expanded_decaps").is_some_and(|n| (6..=7).contains(&n)))
}

/// Vectors in a public-key algorithm's Wycheproof files, from the crate directly.
fn pkey_vectors_in_files(alg: &str) -> Option<usize> {
    use wycheproof::{
        dsa, ecdh, ecdsa, eddsa, mldsa_verify, mlkem, rsa_pkcs1_verify, rsa_pss_verify, xdh,
    };
    macro_rules! tests {
        ($m:ident, $f:expr) => {
            $m::TestSet::load($f.parse().unwrap())
                .unwrap()
                .number_of_tests
        };
    }
    let (_, files) = PKEY_FILES.iter().find(|(a, _)| *a == alg)?;
    Some(
        files
            .iter()
            .map(|f| match alg {
                a if a.ends_with("-pkcs1") => tests!(rsa_pkcs1_verify, f),
                a if a.ends_with("-pss") => tests!(rsa_pss_verify, f),
                a if a.starts_with("ecdsa") => tests!(ecdsa, f),
                a if a.starts_with("dsa") => tests!(dsa, f),
                "ed25519" => tests!(eddsa, f),
                "x25519" => tests!(xdh, f),
                "ecdh-p256" => tests!(ecdh, f),
                "ml-kem-768" => tests!(mlkem, f),
                _ => tests!(mldsa_verify, f),
            })
            .sum(),
    )
}

/// Vectors in the Wycheproof file that belong to `alg` (its key size), from the crate
/// directly: what verify must account for, passed or failed or not applicable.
fn vectors_in_file(alg: &str) -> usize {
    use wycheproof::{aead, cipher, mac};
    if let Some(n) = pkey_vectors_in_files(alg) {
        return n;
    }
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

/// Every path of the report passed but for the known findings (their count is
/// returned), and each path with a Wycheproof file took at least its floor of vectors
/// (unless it cannot import the file's private keys) and accounted for every vector.
fn assert_all_pass(v: &Value, impls: &[&str]) -> usize {
    let paths = v["paths"].as_array().unwrap();
    let mut known = 0;
    for p in paths {
        let (imp, alg) = (p["impl"].as_str().unwrap(), p["alg"].as_str().unwrap());
        for t in ["known_answers", "wycheproof", "round_trip"] {
            for f in p[t]["failed"].as_array().into_iter().flatten() {
                let vector = f["vector"].as_str().unwrap();
                assert!(known_finding(imp, alg, vector), "{imp} {alg}: {f:#}");
                known += 1;
            }
        }
        assert!(p["known_answers"]["passed"].as_u64().unwrap() >= 1, "{p:#}");
    }
    assert_eq!(v["ok"], known == 0, "{v:#}");
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
            let reasons = p["wycheproof"]["not_applicable"].as_object().unwrap();
            let no_import = passed == 0
                && !reasons.is_empty()
                && reasons.keys().all(|r| r.contains("cannot import"));
            assert!(
                passed >= floor || no_import,
                "{imp} {alg}: {passed} Wycheproof vectors passed"
            );
            assert_eq!(
                passed + failed + na,
                vectors_in_file(alg),
                "{imp} {alg}: every vector of the file is counted"
            );
        }
    }
    known
}

#[test]
fn every_in_process_path_passes_known_answers_wycheproof_and_round_trip() {
    let o = run(&["verify", "--format", "json"]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    let known = assert_all_pass(
        &v,
        &["openssl", "aws-lc", "ring", "rustcrypto", "libsodium"],
    );
    // Exit 1 with one line on stderr exactly when a known finding showed.
    let err = common::utf8(&o.stderr);
    assert_eq!(o.status.code(), Some(i32::from(known > 0)), "{err}");
    assert_eq!(err.lines().count(), usize::from(known > 0), "{err}");
    // The round trip ran against a second implementation wherever one exists.
    for p in v["paths"].as_array().unwrap() {
        assert!(p["reference"].is_string(), "{p:#}");
        // Symmetric: several message sizes; public-key: one cross-library check.
        let alg = p["alg"].as_str().unwrap();
        let public_key = [
            "rsa", "ecdsa", "ed25519", "x25519", "ecdh", "ml-kem", "ml-dsa", "dsa",
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
    let table = common::utf8(&o.stdout);
    assert_eq!(
        table.lines().filter(|l| l.starts_with("ring ")).count(),
        2,
        "{table}"
    );
    assert!(table.contains("nothing failed"), "{table}");
    assert!(table.contains("ring does not offer aes-192-gcm"), "{table}");
}

#[test]
fn public_key_algorithms_pass_wycheproof_on_every_in_process_path() {
    let algs: Vec<&str> = PKEY_FILES.iter().map(|(a, _)| *a).collect();
    let o = run(&["verify", "--alg", &algs.join(","), "--format", "json"]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    let impls = ["openssl", "aws-lc", "ring", "rustcrypto", "libsodium"];
    let known = assert_all_pass(&v, &impls);
    assert_eq!(o.status.code(), Some(i32::from(known > 0)));
    // The JSON lists each algorithm on every path that offers it.
    let paths = v["paths"].as_array().unwrap();
    for alg in &algs {
        let on = paths.iter().filter(|p| p["alg"] == *alg).count();
        assert!(on >= 2, "{alg} verified on {on} path(s)");
    }
    for imp in impls {
        assert!(paths
            .iter()
            .any(|p| p["impl"] == imp && p["wycheproof"]["passed"].as_u64() > Some(0)));
    }
    // Acceptable vectors are counted by their flags and what the path did.
    let x25519 = paths
        .iter()
        .find(|p| p["impl"] == "openssl" && p["alg"] == "x25519")
        .unwrap();
    let acceptable = x25519["wycheproof"]["acceptable"].as_object().unwrap();
    assert!(
        acceptable.keys().any(|k| k.contains("LowOrderPublic")),
        "{x25519:#}"
    );
}

#[test]
fn a_corrupt_path_is_caught_with_the_failing_vector_named() {
    let args = [
        "verify",
        "--impl",
        "rustcrypto,openssl",
        "--alg",
        "aes-128-gcm,hmac-sha256,ed25519,x25519",
        "--test-corrupt",
        "rustcrypto",
    ];
    let o = run(&args);
    assert_eq!(o.status.code(), Some(1), "{}", common::utf8(&o.stderr));
    let out = common::utf8(&o.stdout);
    // Symmetric outputs with a flipped bit, signatures accepted unverified, secrets with
    // a flipped bit: each caught on a named vector of its file.
    for (alg, file) in [
        ("aes-128-gcm", "aes_gcm"),
        ("hmac-sha256", "hmac_sha256"),
        ("ed25519", "ed25519"),
        ("x25519", "x25519"),
    ] {
        assert!(
            out.contains(&format!(
                "FAILED rustcrypto [test-corrupt] {alg}: wycheproof {file} tcId "
            )),
            "{out}"
        );
    }
    assert!(!out.contains("FAILED openssl"), "{out}");
    assert_eq!(
        common::utf8(&o.stderr).lines().count(),
        1,
        "{}",
        common::utf8(&o.stderr)
    );

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
        // open accept a bad tag, and a verify that accepts everything accepts valid
        // signatures too. (Every X25519 secret has a flipped bit: none passes.)
        let passed = count(&p["wycheproof"]).0;
        assert_eq!(passed == 0, p["alg"] == "x25519", "{p:#}");
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
        assert_eq!(
            o.status.code(),
            Some(2),
            "{args:?}: {}",
            common::utf8(&o.stderr)
        );
        assert!(o.stdout.is_empty(), "{args:?}");
        let err = common::utf8(&o.stderr);
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
    let err = common::utf8(&o.stderr);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON from the guest ({e}): {err}\n{}",
            common::utf8(&o.stdout)
        )
    });
    assert_eq!(o.status.code(), Some(0), "{err}\n{v:#}");
    assert_eq!(assert_all_pass(&v, &["af_alg"]), 0);
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

/// A verify that checked nothing proves nothing: exit 1, not ok, never "-0.00 s"; and a
/// format verify cannot write is refused (exit 2, one line), not silently replaced.
#[test]
fn verify_that_checks_nothing_fails_and_unwritable_formats_are_refused() {
    let o = run(&[
        "verify",
        "--impl",
        "libsodium",
        "--alg",
        "aes-128-cbc",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", common::utf8(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).expect("a JSON report");
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(v["paths"].as_array().map(Vec::len), Some(0), "{v}");
    assert!(v["seconds"].as_f64().unwrap().is_sign_positive(), "{v}");
    assert!(
        common::utf8(&o.stderr).contains("nothing was checked"),
        "{}",
        common::utf8(&o.stderr)
    );
    let o = run(&["verify", "--impl", "libsodium", "--alg", "aes-128-cbc"]);
    assert_eq!(o.status.code(), Some(1));
    let out = common::utf8(&o.stdout);
    assert!(
        !out.contains("-0.00") && out.contains("NOTHING CHECKED"),
        "{out}"
    );
    for f in ["html", "openssl"] {
        let o = run(&["verify", "--impl", "ring", "--alg", "sha256", "--format", f]);
        assert_eq!(o.status.code(), Some(2), "{f}");
        let err = common::utf8(&o.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(&format!("--format {f}")), "{err}");
    }
}
