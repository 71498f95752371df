//! The legacy ciphers (des-cbc, des-ede3-cbc, rc4): OpenSSL's legacy provider, the
//! RustCrypto crates, the known-answer gate, the "legacy" label, and the reason given
//! when the provider is missing. Speeds are never asserted.

mod common;

use serde_json::Value;
use std::process::Output;

const LEGACY: [&str; 3] = ["des-cbc", "des-ede3-cbc", "rc4"];

fn run_env(args: &[&str], modules: Option<&std::path::Path>) -> Output {
    let mut c = common::command();
    c.args(args);
    if let Some(dir) = modules {
        c.env("OPENSSL_MODULES", dir);
    }
    c.output().expect("binary runs")
}

fn run(args: &[&str]) -> Output {
    run_env(args, None)
}

fn json(args: &[&str]) -> Value {
    let o = run(args);
    assert!(o.status.success(), "{args:?}: {}", common::utf8(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("one JSON document")
}

/// Whether this machine's openssl offers the legacy ciphers; skips (with the reason it
/// gives) when it does not.
fn openssl_offers_legacy() -> bool {
    let list = common::utf8(&run(&["speed", "--list"]).stdout);
    let openssl = list.split("\naws-lc").next().unwrap_or("");
    if let Some(line) = openssl.lines().find(|l| l.contains("missing des-cbc")) {
        common::skip(&format!("openssl has no legacy ciphers here: {line}"));
        return false;
    }
    true
}

#[test]
fn legacy_ciphers_are_measured_and_labelled_in_every_output() {
    if !openssl_offers_legacy() {
        return;
    }
    let list = common::utf8(&run(&["speed", "--list"]).stdout);
    let offers = |imp: &str| {
        let block = list.split(&format!("{imp}: ")).nth(1).unwrap_or("");
        block.lines().nth(1).unwrap_or("").to_string()
    };
    for imp in ["openssl", "rustcrypto"] {
        for alg in LEGACY {
            assert!(
                offers(imp).contains(&format!("{alg} (legacy)")),
                "{imp} offers {alg}, marked legacy: {list}"
            );
        }
    }
    // ring offers none of them and says so.
    assert!(
        list.contains("missing rc4 (legacy): ring offers no legacy ciphers"),
        "{list}"
    );

    let args = [
        "speed",
        "--impl",
        "openssl,rustcrypto",
        "--alg",
        "des-cbc,des-ede3-cbc,rc4",
        "--sizes",
        "16,64",
        "--time",
        "0.02",
    ];
    let v = json(&[&args[..], &["--format", "json"]].concat());
    let recs = v["records"].as_array().unwrap();
    for imp in ["openssl", "rustcrypto"] {
        for alg in LEGACY {
            for dir in ["enc", "dec"] {
                for size in [16, 64] {
                    let r = recs
                        .iter()
                        .find(|r| {
                            r["impl"] == imp
                                && r["alg"] == alg
                                && r["direction"] == dir
                                && r["size"] == size
                                && r["threads"] == 1
                        })
                        .unwrap_or_else(|| panic!("no record {imp} {alg} {dir} {size}"));
                    assert!(r["throughput_bps"].as_f64().unwrap() > 0.0);
                    let notes = r["notes"].to_string();
                    assert!(notes.contains("legacy cipher"), "{imp} {alg}: {notes}");
                }
            }
        }
    }
    assert!(
        v["exclusions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["kind"] != "refused"),
        "{}",
        v["exclusions"]
    );
    // The table and the openssl layout mark them too; an AES row is not marked.
    let table = common::utf8(&run(&args).stdout);
    for alg in LEGACY {
        assert!(table.contains(&format!("{alg} (legacy)")), "{table}");
    }
    let o = run(&[&args[..], &["--format", "openssl"]].concat());
    let layout = common::utf8(&o.stdout);
    assert!(layout.contains("DES-EDE3-CBC enc (legacy)"), "{layout}");
    let aes = common::utf8(
        &run(&[
            "speed",
            "--impl",
            "openssl",
            "--alg",
            "aes-128-ctr",
            "--sizes",
            "16",
            "--time",
            "0.02",
        ])
        .stdout,
    );
    assert!(!aes.contains("(legacy)"), "{aes}");
}

#[test]
fn without_the_legacy_provider_openssl_says_why_and_keeps_the_rest() {
    let version = common::utf8(&run(&["speed", "--list"]).stdout);
    if !version.starts_with("openssl: OpenSSL 3") {
        common::skip("the legacy provider exists only in OpenSSL 3");
        return;
    }
    let empty = std::env::temp_dir().join(format!("cryptobench-no-modules-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let list = common::utf8(&run_env(&["speed", "--list"], Some(&empty)).stdout);
    let list = list.split("\naws-lc").next().unwrap_or("").to_string();
    let v: Value = {
        let o = run_env(
            &[
                "speed",
                "--impl",
                "openssl",
                "--alg",
                "aes-128-gcm,rc4",
                "--sizes",
                "16",
                "--time",
                "0.02",
                "--format",
                "json",
            ],
            Some(&empty),
        );
        let _ = std::fs::remove_dir(&empty);
        assert!(o.status.success(), "{}", common::utf8(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    // Triple DES stays in OpenSSL 3's default provider; single DES and RC4 need legacy.so.
    assert!(
        !list.contains("missing des-ede3-cbc"),
        "des-ede3-cbc comes from the default provider: {list}"
    );
    for alg in ["des-cbc", "rc4"] {
        let line = list
            .lines()
            .find(|l| l.contains(&format!("missing {alg} (legacy)")))
            .unwrap_or_else(|| panic!("{alg} listed unavailable: {list}"));
        assert!(line.contains("legacy provider is not loadable"), "{line}");
        assert!(line.contains("OPENSSL_MODULES"), "names the fix: {line}");
    }
    let ex = v["exclusions"].as_array().unwrap();
    assert!(
        ex.iter().any(|e| e["alg"] == "rc4"
            && e["kind"] == "not_offered"
            && e["reason"].as_str().unwrap().contains("legacy provider")),
        "{ex:?}"
    );
    // AES still comes from the default provider.
    let recs = v["records"].as_array().unwrap();
    assert!(recs.iter().any(|r| r["alg"] == "aes-128-gcm"), "{recs:?}");
    assert!(recs.iter().all(|r| r["alg"] != "rc4"), "{recs:?}");
}

#[test]
fn a_wrong_legacy_backend_is_refused_before_timing() {
    if !cfg!(feature = "test-corrupt") {
        common::skip("the corrupt implementation is only in builds with `--features test-corrupt` (scripts/test turns it on)");
        return;
    }
    if !openssl_offers_legacy() {
        return;
    }
    let sources = [
        ("des-cbc", "FIPS 81"),
        ("des-ede3-cbc", "SP 800-67"),
        ("rc4", "RFC 6229"),
    ];
    for corrupt in ["openssl", "rustcrypto"] {
        let good = if corrupt == "openssl" {
            "rustcrypto"
        } else {
            "openssl"
        };
        let v = json(&[
            "speed",
            "--impl",
            "openssl,rustcrypto",
            "--alg",
            "des-cbc,des-ede3-cbc,rc4",
            "--sizes",
            "16",
            "--time",
            "0.02",
            "--test-corrupt",
            corrupt,
            "--format",
            "json",
        ]);
        let recs = v["records"].as_array().unwrap();
        let ex = v["exclusions"].as_array().unwrap();
        for (alg, source) in sources {
            assert!(
                recs.iter()
                    .all(|r| !(r["impl"] == corrupt && r["alg"] == alg)),
                "corrupt {corrupt} {alg} was timed"
            );
            assert!(
                recs.iter().any(|r| r["impl"] == good && r["alg"] == alg),
                "{good} {alg} measured"
            );
            let refusal = ex
                .iter()
                .find(|e| {
                    e["alg"] == alg
                        && e["kind"] == "refused"
                        && e["impl"].as_str().unwrap().starts_with(corrupt)
                })
                .unwrap_or_else(|| panic!("{corrupt} {alg} refused: {ex:?}"));
            let reason = refusal["reason"].as_str().unwrap();
            assert!(reason.contains(source), "names the vector: {reason}");
        }
    }
}

#[test]
fn verify_checks_the_legacy_ciphers_by_known_answers() {
    if !openssl_offers_legacy() {
        return;
    }
    let v = json(&[
        "verify",
        "--impl",
        "openssl,rustcrypto",
        "--alg",
        "des-cbc,des-ede3-cbc,rc4",
        "--format",
        "json",
    ]);
    assert_eq!(v["ok"], true, "{v}");
    let paths = v["paths"].as_array().unwrap();
    for imp in ["openssl", "rustcrypto"] {
        for alg in LEGACY {
            let p = paths
                .iter()
                .find(|p| p["impl"] == imp && p["alg"] == alg)
                .unwrap_or_else(|| panic!("{imp} {alg} verified: {v}"));
            let kat = &p["known_answers"];
            assert!(kat["passed"].as_u64().unwrap() >= 1, "{imp} {alg}: {kat}");
            assert_eq!(kat["failed"].as_array().unwrap().len(), 0, "{imp} {alg}");
            assert!(p["round_trip"]["passed"].as_u64().unwrap() >= 1);
        }
    }
}
