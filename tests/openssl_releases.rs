//! The newer OpenSSL releases, built from source (scripts/build-openssl, cached): the
//! loader keeps up with 3.6 and 4.0 (libcrypto.so.4), and `compare` keeps builds apart.

mod common;

use common::cryptobench as run;
use common::openssl::{build, GATE_ONLY};
use serde_json::Value;
use std::path::Path;

fn json(o: &std::process::Output, what: &str) -> Value {
    assert!(o.status.success(), "{what}: {}", common::stderr(o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{what}: not JSON: {e}"))
}

/// The newer releases the loader must keep up with: OpenSSL 3.6 and 4.0 (libcrypto.so.4)
/// pass the gate, each labelled with its own version; `compare` of a 3.5 run against a
/// 4.0 run names both builds among the environment's differences and pairs no point of
/// one build with the other's (they are other implementations, listed apart).
#[test]
fn openssl_36_and_40_pass_the_gate_and_compare_keeps_builds_apart() {
    let (Some(v35), Some(v36), Some(v40)) = (
        build("3.5", &[]),
        build("3.6", &GATE_ONLY),
        build("4.0", &GATE_ONLY),
    ) else {
        return;
    };
    let dir = common::tempdir(Path::new(env!("CARGO_TARGET_TMPDIR")), "openssl-releases");
    let file = |n: &str| dir.join(n).to_str().unwrap().to_string();
    let speed = |builds: &[&Path], out: &str| {
        let mut args = vec!["speed", "--impl", "openssl", "--no-store"];
        for b in builds {
            args.extend(["--openssl", b.to_str().unwrap()]);
        }
        let out = file(out);
        args.extend([
            "--alg",
            "aes-128-gcm,chacha20-poly1305,aes-128-cbc,sha256,hmac-sha256",
            "--sizes",
            "16,16k",
            "--time",
            "0.02",
            "--output",
            &out,
            "--format",
            "json",
        ]);
        let o = run(&args);
        json(&o, "speed --openssl")
    };
    let v = speed(&[&v36, &v40], "new.jsonl");
    for (label, version) in [
        ("openssl 3.6.3 no-apps -O0", "OpenSSL 3.6.3"),
        ("openssl 4.0.3 no-apps -O0", "OpenSSL 4.0.3"),
    ] {
        common::openssl::assert_measured(
            &v,
            label,
            version,
            &[
                "aes-128-gcm",
                "chacha20-poly1305",
                "aes-128-cbc",
                "sha256",
                "hmac-sha256",
            ],
        );
    }
    let excl = v["exclusions"].as_array().unwrap();
    assert!(
        !excl.iter().any(|e| e["kind"] == "refused"),
        "no build may fail the gate: {excl:?}"
    );
    speed(&[&v35], "base.jsonl");
    let o = run(&[
        "compare",
        &file("base.jsonl"),
        &file("new.jsonl"),
        "--format",
        "json",
    ]);
    let c = json(&o, "compare");
    let text = c.to_string();
    assert!(
        text.contains("OpenSSL 3.5.5") && text.contains("OpenSSL 4.0.3"),
        "both builds among the environments' differences: {text:.600}"
    );
    let pairs = c["pairs"].as_array().unwrap();
    assert!(
        pairs
            .iter()
            .all(|p| !p.to_string().contains("openssl 3.5.5")
                && !p.to_string().contains("openssl 4.0.3")),
        "a point of one build paired with another's: {pairs:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
