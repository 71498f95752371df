//! `--profile`: real perf sampling real OpenSSL, classified by the rules table.
mod common;
use common::run;

use serde_json::Value;

/// The profile of one speed point, checked for internal consistency.
fn profile_of(alg: &str) -> Value {
    let o = run(&[
        "speed",
        "--impl",
        "openssl",
        "--alg",
        alg,
        "--direction",
        "enc",
        "--sizes",
        "16k",
        "--time",
        "0.5",
        "--profile",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report: Value = serde_json::from_slice(&o.stdout).expect("json report");
    let p = report["records"][0]["profile"].clone();
    let n = common::check_profile(&p);
    assert!(n >= 100, "only {n} samples in 0.5 s");
    p
}

fn share(p: &Value, cat: &str) -> f64 {
    p["categories"][cat]["share"].as_f64().unwrap_or(0.0)
}

#[test]
fn aes_gcm_profile_is_mostly_aes_and_ghash() {
    if !common::perf_usable() {
        return;
    }
    let p = profile_of("aes-128-gcm");
    let (aes, ghash) = (share(&p, "aes"), share(&p, "ghash"));
    assert!(aes + ghash > 0.5, "aes {aes} + ghash {ghash}: {p}");
    // Stitched AES-GCM still splits: both halves are seen, AES the larger.
    assert!(aes > ghash && ghash > 0.05, "aes {aes}, ghash {ghash}");
    assert!(
        share(&p, "sha2") < 0.05 && share(&p, "chacha20") < 0.05,
        "{p}"
    );
}

#[test]
fn sha256_profile_is_mostly_sha2() {
    if !common::perf_usable() {
        return;
    }
    let p = profile_of("sha256");
    assert!(share(&p, "sha2") > 0.5, "{p}");
    assert!(share(&p, "aes") < 0.05, "{p}");
}

#[test]
fn chacha20_poly1305_profile_splits_cipher_and_mac() {
    if !common::perf_usable() {
        return;
    }
    let p = profile_of("chacha20-poly1305");
    let (c, m) = (share(&p, "chacha20"), share(&p, "poly1305"));
    assert!(
        c + m > 0.5 && c > 0.05 && m > 0.05,
        "chacha20 {c}, poly1305 {m}: {p}"
    );
    assert!(share(&p, "aes") < 0.05, "{p}");
}

#[test]
fn profile_dir_keeps_folded_stacks_and_a_flame_graph() {
    if !common::perf_usable() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("cbench-profile-test-{}", std::process::id()));
    let o = run(&[
        "speed",
        "--impl",
        "openssl",
        "--alg",
        "aes-128-gcm",
        "--direction",
        "enc",
        "--sizes",
        "16k",
        "--time",
        "0.2",
        "--profile-dir",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let svg = names.iter().find(|n| n.ends_with(".svg")).expect("an svg");
    let text = std::fs::read_to_string(dir.join(svg)).unwrap();
    assert!(
        text.contains("<svg") && text.contains("[aes]"),
        "crypto frames are labelled"
    );
    let folded = names
        .iter()
        .find(|n| n.ends_with(".folded"))
        .expect("folded stacks");
    let folded = std::fs::read_to_string(dir.join(folded)).unwrap();
    assert!(folded.lines().all(|l| l
        .rsplit_once(' ')
        .is_some_and(|(_, n)| n.parse::<u64>().is_ok())));
    // The per-point breakdown goes to the terminal beside the progress, not into the report.
    assert!(String::from_utf8_lossy(&o.stderr).contains("flame graph:"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn impossible_profiles_exit_2_with_one_line_before_measuring() {
    // An unwritable --profile-dir (a path under a regular file).
    let o = run(&[
        "speed",
        "--impl",
        "openssl",
        "--alg",
        "sha256",
        "--profile-dir",
        "/etc/passwd/x",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--profile-dir"), "{err}");
    assert!(o.stdout.is_empty());
    // No perf on PATH: the line names the package.
    let empty = std::env::temp_dir().join(format!("cbench-empty-path-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let o = common::command()
        .args(["speed", "--impl", "openssl", "--alg", "sha256", "--profile"])
        .env("PATH", &empty)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir(&empty);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("linux-perf"), "{err}");
    assert!(o.stdout.is_empty());
}
