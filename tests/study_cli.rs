//! `cryptobench study NAME --quick` for each of the five studies on the real binary: the
//! study's table and a computed conclusion line come out, and the records it kept are
//! ordinary records that `cryptobench report` renders. Speeds are never asserted.
//! Parts that need root, nginx or OpenVPN say "not observed: why" instead (and the test
//! then checks that line), so the primitive parts are always checked.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Instant;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cryptobench"))
}

fn temp_file(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("cryptobench-study-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

/// Runs the study; returns its stdout and the records file.
fn study(name: &str, extra: &[&str]) -> (String, String, PathBuf) {
    let file = temp_file(&format!("{name}.jsonl"));
    let t = Instant::now();
    let o: Output = bin()
        .args(["study", name, "--quick", "--output"])
        .arg(&file)
        .args(extra)
        .output()
        .expect("binary runs");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "{name}: {err}\n{out}");
    // The expected duration comes first, then a progress line per step.
    assert!(
        err.contains(&format!("study {name}: ")) && err.contains("expected about"),
        "{err}"
    );
    assert!(err.contains("[1/"), "{err}");
    eprintln!(
        "study {name} --quick took {:.0} s",
        t.elapsed().as_secs_f64()
    );
    (out, err, file)
}

/// The conclusion block: the lines under the "Conclusion" heading.
fn conclusion(out: &str) -> String {
    let (_, c) = out
        .split_once("Conclusion\n==========\n")
        .unwrap_or_else(|| panic!("no Conclusion heading: {out}"));
    c.to_string()
}

/// `report` renders the study's records as ordinary records.
fn reported(file: &PathBuf, workload_line: &str) {
    let o = bin().arg("report").arg(file).output().expect("report runs");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains(workload_line), "{out}");
    let skipped = String::from_utf8_lossy(&o.stderr);
    assert!(
        !out.contains("Skipped") && !skipped.contains("Skipped"),
        "{out}{skipped}"
    );
    let _ = std::fs::remove_file(file);
}

#[test]
fn list_describes_all_five() {
    let o = bin().args(["study", "--list"]).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    for n in ["offload:", "aesni:", "scaling:", "avx512:", "router-vpn:"] {
        assert!(out.contains(n), "{out}");
    }
    assert_eq!(out.matches("--quick about").count(), 5, "{out}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for (args, says) in [
        (vec!["study", "nosuch"], "unknown study 'nosuch'"),
        (vec!["study"], "name a study"),
        (vec!["study", "aesni", "--guest"], "--guest is offload's"),
        (
            vec!["study", "aesni", "--output", "/nonexistent-dir/x.jsonl"],
            "nonexistent-dir",
        ),
    ] {
        let o = bin().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn aesni_quick() {
    let (out, _, file) = study("aesni", &[]);
    assert!(out.contains("AES-NI on against off"), "{out}");
    let c = conclusion(&out);
    assert!(
        c.contains("AES-NI: primitive ") && c.contains("x (median of 6 points)"),
        "{c}"
    );
    assert!(
        c.contains("aws-lc honours") || c.contains("aws-lc ignores"),
        "{c}"
    );
    assert!(c.contains("study 2"), "{c}");
    // `openssl enc` was timed into ordinary speed records, in both directions.
    assert!(
        c.contains("openssl enc -aes-256-cbc encrypt of 33 MB")
            || out.contains("not observed: enc"),
        "{out}"
    );
    reported(&file, "openssl-enc");
}

#[test]
fn avx512_quick() {
    let (out, _, file) = study("avx512", &[]);
    assert!(out.contains("Thread scaling, 16 KiB"), "{out}");
    let c = conclusion(&out);
    assert!(c.contains("Mixed test: the AES-GCM thread runs at"), "{c}");
    assert!(
        c.contains("Clock not observable on this machine") || c.contains("Clock at "),
        "{c}"
    );
    // nginx with ChaCha on a share of the connections, on both ISA paths (or why not).
    if c.contains("nginx mix not observed") {
        assert!(out.contains("not observed: nginx chacha 20%"), "{out}");
    } else {
        assert!(
            c.contains("requests/s against AES-GCM alone with ChaCha20-Poly1305 on a share"),
            "{c}"
        );
        for path in ["base (AVX-512)", "isa=no-avx512"] {
            assert!(
                out.lines()
                    .any(|l| l.starts_with(path) && l.contains(" 20% ")),
                "a 20% mix row for {path}: {out}"
            );
        }
    }
    reported(&file, "chacha20-poly1305");
}

#[test]
fn scaling_quick() {
    let (out, _, file) = study("scaling", &[]);
    assert!(out.contains("per core %"), "{out}");
    let c = conclusion(&out);
    assert!(
        c.contains("aes-128-gcm gives ") || c.contains("one core only"),
        "{c}"
    );
    assert!(
        c.contains("HTTPS delivers") || c.contains("HTTP against HTTPS not observed"),
        "{c}"
    );
    assert!(
        c.contains("governor not settable: ") || c.contains("governor set to "),
        "{c}"
    );
    assert!(c.contains("cryptobench compare"), "{c}");
    reported(&file, "aes-128-cbc");
}

#[test]
fn router_vpn_quick() {
    let (out, _, file) = study("router-vpn", &[]);
    assert!(out.contains("1000s of bytes per second"), "{out}");
    assert!(
        out.contains("16 bytes") && out.contains("8192 bytes"),
        "{out}"
    );
    let c = conclusion(&out);
    assert!(c.contains("aes-256-cbc at 8 KiB: openssl "), "{c}");
    assert!(
        c.contains("OpenVPN's best") || c.contains("OpenVPN against WireGuard not observed"),
        "{c}"
    );
    reported(&file, "sha512");
}

/// Also the HTML page: one self-contained file with the tables, figures and conclusion.
#[test]
fn offload_quick_with_the_kernel_part_in_the_guest_as_html() {
    let mut extra = vec!["--format", "html"];
    let guest = common::guest_enabled();
    if guest {
        extra.push("--guest");
    }
    let (out, _, file) = study("offload", &extra);
    assert!(out.starts_with("<!DOCTYPE html>") && out.trim_end().ends_with("</html>"));
    assert!(
        !out.contains("<script") && !out.contains("src=\"http"),
        "self-contained"
    );
    assert!(out.contains("<svg"), "a figure drawn from the records");
    assert!(
        out.contains("host: AES-128-CBC, Mbit/s by buffer size"),
        "{out}"
    );
    let (_, c) = out
        .split_once("<h3>Conclusion</h3>")
        .unwrap_or_else(|| panic!("no Conclusion heading: {out}"));
    assert!(
        c.contains("crypto is ") || c.contains("crypto share was not observed"),
        "{c}"
    );
    // Debian's OpenSSL 3 ships no devcrypto engine and no kernel has /dev/crypto here:
    // the section names the engine with the reason.
    let (_, missing) = c
        .split_once("<h3>Not observable here</h3>")
        .unwrap_or_else(|| panic!("no Not observable here section: {c}"));
    assert!(
        missing.contains("openssl [engine=devcrypto]: "),
        "{missing}"
    );
    if guest {
        assert!(out.contains("guest (emulated CPU: shapes only)"), "{out}");
        assert!(out.contains("af_alg"), "{out}");
        // Which line appears depends on the measurement (whether the guest's kernel path
        // overtakes software or not): either is a computed crossover line.
        assert!(
            c.contains("overtakes software at ") || c.contains("never overtakes software ("),
            "a computed crossover or level line: {c}"
        );
        assert!(
            out.contains("openssl [engine=afalg]"),
            "the afalg engine, measured or why not: {out}"
        );
        // The same boot measured the tunnels: DCO and kernel WireGuard against their
        // user-space forms, with the Amdahl bound of the cipher alone.
        assert!(
            out.contains("the whole data path in the kernel, 1 stream up"),
            "{out}"
        );
        assert!(
            c.contains("Offload the whole data path (guest, emulated CPU: shapes only): OpenVPN DCO carries "),
            "{c}"
        );
        assert!(c.contains("Kernel WireGuard carries "), "{c}");
    } else {
        assert!(missing.contains("give --guest"), "{missing}");
    }
    reported(&file, "aes-128-cbc");
}
