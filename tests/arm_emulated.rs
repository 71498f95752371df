//! The ARM builds under qemu-user, on the CPU models of the studies: `--list`, `probe`,
//! and a short `speed` over every algorithm and implementation, whose correctness gate
//! (known answers, round trips against another implementation) must pass on ARM.
//!
//! The binaries come from scripts/build-arm (scripts/test runs it first); the sysroots
//! with Debian's arm64/armhf libc and libcrypto from scripts/deps/arm.sh.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

struct Target {
    triple: &'static str,
    qemu: &'static str,
    debian_arch: &'static str,
    /// std::env::consts::ARCH of the build.
    arch: &'static str,
}

const AARCH64: Target = Target {
    triple: "aarch64-unknown-linux-gnu",
    qemu: "qemu-aarch64",
    debian_arch: "arm64",
    arch: "aarch64",
};
const ARMV7: Target = Target {
    triple: "armv7-unknown-linux-gnueabihf",
    qemu: "qemu-arm",
    debian_arch: "armhf",
    arch: "arm",
};

const IN_PROCESS: [&str; 5] = ["openssl", "aws-lc", "ring", "rustcrypto", "libsodium"];

/// The binary and sysroot of a target, or None after reporting the skip.
fn ready(t: &Target) -> Option<(PathBuf, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let bin = target_dir.join(t.triple).join("release/cryptobench");
    let sysroot = common::arm_cache().join(format!("sysroot-{}", t.debian_arch));
    if !bin.is_file() {
        common::skip(&format!(
            "{} is not built: run scripts/deps/arm.sh, then scripts/build-arm",
            bin.display()
        ));
        return None;
    }
    if !sysroot.join("usr").is_dir() || Command::new(t.qemu).arg("--version").output().is_err() {
        common::skip(&format!(
            "{} or {} is missing: run scripts/deps/arm.sh",
            t.qemu,
            sysroot.display()
        ));
        return None;
    }
    Some((bin, sysroot))
}

fn run(t: &Target, env: &(PathBuf, PathBuf), cpu: &str, args: &[&str]) -> Output {
    Command::new(t.qemu)
        .arg("-L")
        .arg(&env.1)
        .args(["-cpu", cpu])
        .arg(&env.0)
        .args(args)
        .output()
        .expect("qemu-user runs")
}

fn json(t: &Target, env: &(PathBuf, PathBuf), cpu: &str, args: &[&str]) -> Value {
    let o = run(t, env, cpu, args);
    assert!(
        o.status.success(),
        "{} -cpu {cpu} {args:?}: {}",
        t.qemu,
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: {e}: {}",
            String::from_utf8_lossy(&o.stdout[..o.stdout.len().min(400)])
        )
    })
}

/// probe's CPU part: the features from HWCAP, and the emulation it must admit to.
fn probe_cpu(t: &Target, env: &(PathBuf, PathBuf), cpu: &str) -> Value {
    let v = json(t, env, cpu, &["probe", "--format", "json"]);
    let c = v["cpu"].clone();
    assert!(
        c["emulated_by"]
            .as_str()
            .unwrap_or("")
            .contains("qemu-user"),
        "-cpu {cpu}: probe must say it runs emulated: {c}"
    );
    c
}

fn features_on(cpu: &Value) -> Vec<String> {
    cpu["features"]
        .as_object()
        .expect("features")
        .iter()
        .filter(|(_, on)| on.as_bool() == Some(true))
        .map(|(k, _)| k.clone())
        .collect()
}

/// `--list`, then a short `speed` over everything, through the gate (common::gate).
fn list_and_gate(t: &Target, cpu: &str) {
    let Some(env) = ready(t) else { return };
    let list = run(t, &env, cpu, &["speed", "--list"]);
    assert!(list.status.success());
    let v = json(t, &env, cpu, common::gate::SPEED_EVERYTHING);
    common::gate::check(
        t.triple,
        &String::from_utf8_lossy(&list.stdout),
        &v,
        &IN_PROCESS,
        t.arch,
        true,
    );
}

#[test]
fn aarch64_max_runs_every_implementation_through_the_gate() {
    list_and_gate(&AARCH64, "max");
}

#[test]
fn armv7_cortex_a9_runs_every_implementation_through_the_gate() {
    list_and_gate(&ARMV7, "cortex-a9");
}

#[test]
fn probe_reads_the_features_of_each_studied_cpu() {
    if let Some(env) = ready(&AARCH64) {
        let max = probe_cpu(&AARCH64, &env, "max");
        let on = features_on(&max);
        for f in ["asimd", "aes", "pmull", "sha1", "sha2", "sha512", "sha3"] {
            assert!(on.contains(&f.to_string()), "max lacks {f}: {on:?}");
        }
        assert!(max["arm"]["midr"]["source"]
            .as_str()
            .unwrap()
            .contains("MIDR_EL1"));
        // Cortex-A53: ARMv8.0 crypto extensions, no SHA-512 or SHA-3.
        let a53 = probe_cpu(&AARCH64, &env, "cortex-a53");
        assert_eq!(
            features_on(&a53),
            ["aes", "asimd", "pmull", "sha1", "sha2"],
            "{a53}"
        );
        assert!(
            a53["model"].as_str().unwrap().starts_with("ARM Cortex-A53"),
            "{a53}"
        );
    }
    if let Some(env) = ready(&ARMV7) {
        // The 32-bit cores of the studies have NEON and none of the ARMv8 crypto.
        for cpu in ["cortex-a9", "cortex-a7", "cortex-a15"] {
            let c = probe_cpu(&ARMV7, &env, cpu);
            assert_eq!(features_on(&c), ["neon"], "-cpu {cpu}: {c}");
            assert_eq!(c["arch"], "arm");
        }
    }
}

/// `isa=` on ARM sets OPENSSL_armcap, and what libcrypto then reports is checked: a name
/// clears its bits, a value that changes nothing or turns on what the CPU lacks is refused.
#[test]
fn openssl_armcap_variants_are_checked_against_what_libcrypto_reports() {
    if let Some(env) = ready(&AARCH64) {
        let v = json(
            &AARCH64,
            &env,
            "max",
            &[
                "speed",
                "--impl",
                "openssl",
                "--alg",
                "aes-128-gcm,sha256",
                "--sizes",
                "1k",
                "--time",
                "0.01",
                "--variant",
                "isa=no-aes",
                "--variant",
                "isa=no-sha",
                "--variant",
                "isa=no-neon",
                "--format",
                "json",
            ],
        );
        let recs = v["records"].as_array().unwrap();
        // Each variant's records say which OPENSSL_armcap libcrypto reported: the base
        // caps of -cpu max (0xfd and up) less the variant's bits.
        for (variant, cleared) in [
            ("isa=no-aes", 0x24u64),
            ("isa=no-sha", 0x858),
            ("isa=no-neon", 0x1),
        ] {
            let notes: Vec<String> = recs
                .iter()
                .filter(|r| r["variant"] == variant)
                .flat_map(|r| r["notes"].as_array().unwrap().clone())
                .map(|n| n.as_str().unwrap().to_string())
                .collect();
            let line = notes
                .iter()
                .find(|n| n.contains("OPENSSL_armcap="))
                .unwrap_or_else(|| panic!("{variant}: no armcap note in {notes:?}"));
            let reported = line.rsplit("OPENSSL_armcap=0x").next().unwrap();
            let hex: String = reported
                .chars()
                .take_while(|c| c.is_ascii_hexdigit())
                .collect();
            let caps = u64::from_str_radix(&hex, 16).unwrap();
            assert_eq!(
                caps & cleared,
                0,
                "{variant} still reports {caps:#x}: {line}"
            );
            assert_ne!(caps, 0, "{line}");
        }
    }
    if let Some(env) = ready(&ARMV7) {
        // A Cortex-A9 has no ARMv8 AES: isa=no-aes changes nothing, isa=0x5 would turn it
        // on. Either variant is refused with its reason; the base instance is measured.
        for (variant, why) in [("isa=no-aes", "changes nothing"), ("isa=0x5", "turns on")] {
            let o = run(
                &ARMV7,
                &env,
                "cortex-a9",
                &[
                    "speed",
                    "--impl",
                    "openssl",
                    "--alg",
                    "sha256",
                    "--sizes",
                    "1k",
                    "--time",
                    "0.01",
                    "--variant",
                    variant,
                    "--format",
                    "json",
                ],
            );
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
            let label = format!("openssl [{variant}]");
            let refused = v["unavailable"]
                .as_array()
                .unwrap()
                .iter()
                .find(|u| u.to_string().contains(&label))
                .unwrap_or_else(|| panic!("{variant} not refused: {}", v["unavailable"]));
            assert!(refused.to_string().contains(why), "{variant}: {refused}");
            assert!(v["records"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["variant"].is_null()));
        }
    }
}

/// An OpenSSL built for aarch64 (scripts/build-openssl 3.5 --target
/// aarch64-unknown-linux-gnu and GATE_ONLY's options, Debian's cross gcc) is what the aarch64 build measures
/// with `--openssl`: every algorithm of the default set through the gate, labelled with
/// that build and its version, none refused.
#[test]
fn aarch64_measures_an_openssl_built_for_aarch64() {
    let t = &AARCH64;
    let Some(env) = ready(t) else { return };
    let flags = [&["--target", t.triple][..], &common::openssl::GATE_ONLY].concat();
    let Some(dir) = common::openssl::build("3.5", &flags) else {
        return;
    };
    let v = json(
        t,
        &env,
        "max",
        &[
            "speed",
            "--impl",
            "openssl",
            "--openssl",
            dir.to_str().unwrap(),
            "--alg",
            "aes-128-gcm,chacha20-poly1305,aes-128-cbc,sha256,hmac-sha256",
            "--sizes",
            "16,1k",
            "--time",
            "0.01",
            "--no-store",
            "--format",
            "json",
        ],
    );
    common::openssl::assert_measured(
        &v,
        "openssl 3.5.5 no-apps -O0",
        "OpenSSL 3.5.5",
        &[
            "aes-128-gcm",
            "chacha20-poly1305",
            "aes-128-cbc",
            "sha256",
            "hmac-sha256",
        ],
    );
    let refused = common::gate::refused(&v);
    assert!(refused.is_empty(), "the gate refused: {refused:?}");
}
