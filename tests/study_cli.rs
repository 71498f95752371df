//! `cryptobench study NAME --quick` for each of the six studies on the real binary: the
//! study's table and a computed conclusion line come out, and the records it kept are
//! ordinary records that `cryptobench report` renders. Speeds are never asserted.
//! A part this machine cannot run (no nginx, no OpenVPN, not root) must say "cannot be
//! observed here" with the reason this machine gives; a part it can run must give its
//! result: a step that breaks fails the study (exit 1, "FAILED") and so the test.

mod common;

use std::path::PathBuf;
use std::process::Output;
use std::time::Instant;

fn temp_file(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("cryptobench-study-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

/// The result of a step this machine can run (`result` in the conclusion), or, where it
/// `lacks` something, the "cannot be observed here" line of step `tag` with that reason.
fn result_or_unavailable(out: &str, c: &str, result: &str, tag: &str, lacks: Option<String>) {
    match lacks {
        None => assert!(c.contains(result), "{result}: {out}"),
        Some(why) => {
            let line = out
                .lines()
                .find(|l| l.starts_with(&format!("cannot be observed here: {tag}: ")))
                .unwrap_or_else(|| panic!("no 'cannot be observed here: {tag}' line: {out}"));
            assert!(line.contains(&why), "{line}: expected {why}");
            assert!(!c.contains(result), "{c}");
            // The study said so correctly, but its result was not checked: a skip.
            common::skip(&format!("study step {tag} cannot run here: {why}"));
        }
    }
}

/// Runs the study; returns its stdout and the records file.
fn study(name: &str, extra: &[&str]) -> (String, String, PathBuf) {
    let file = temp_file(&format!("{name}.jsonl"));
    let t = Instant::now();
    let o: Output = common::command()
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
    let o = common::command()
        .arg("report")
        .arg(file)
        .output()
        .expect("report runs");
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
fn list_describes_all_six() {
    let o = common::command()
        .args(["study", "--list"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success());
    for n in [
        "offload:",
        "aesni:",
        "scaling:",
        "avx512:",
        "router-vpn:",
        "tls-stacks:",
    ] {
        assert!(out.contains(n), "{out}");
    }
    assert_eq!(out.matches("--quick about").count(), 6, "{out}");
    // Each study's own options, under it: the builds router-vpn and aesni compare.
    let under = |study: &str, option: &str| {
        out.lines()
            .skip_while(|l| !l.starts_with(&format!("{study}: ")))
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            .any(|l| l.starts_with(&format!("  {option}: ")))
    };
    assert!(under("router-vpn", "--openssl DIR"), "{out}");
    assert!(under("router-vpn", "--libcrypto PATH"), "{out}");
    assert!(under("aesni", "--openssl DIR"), "{out}");
    assert!(under("offload", "--guest"), "{out}");
    assert!(under("aesni", "--guest"), "{out}");
    assert!(!under("scaling", "--openssl DIR"), "{out}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for (args, says) in [
        (vec!["study", "nosuch"], "unknown study 'nosuch'"),
        (vec!["study"], "name a study"),
        (
            vec!["study", "scaling", "--guest"],
            "--guest is for study offload and aesni",
        ),
        (
            vec!["study", "aesni", "--output", "/nonexistent-dir/x.jsonl"],
            "nonexistent-dir",
        ),
    ] {
        let o = common::command().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// With the RAM disk row in the qemu guest (this host's kernel has no dm-crypt).
#[test]
fn aesni_quick() {
    let guest = common::guest_enabled();
    let (out, _, file) = study("aesni", if guest { &["--guest"] } else { &[] });
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
    let enc: Option<String> =
        (!common::has_program("openssl")).then(|| "openssl (the command) not found".into());
    for dir in ["encrypt", "decrypt"] {
        let what = format!("openssl enc -aes-256-cbc {dir} of 33 MB");
        result_or_unavailable(&out, &c, &what, "enc", enc.clone());
    }
    // Several trials each, so that every `openssl enc` point has its interval.
    if enc.is_none() {
        let text = std::fs::read_to_string(&file).unwrap();
        let recs: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|l| l["kind"] == "record" && l["impl"] == "openssl-enc")
            .collect();
        assert_eq!(recs.len(), 4, "enc and dec, with and without AES-NI");
        for r in &recs {
            assert_eq!(r["trials"], 6, "{r}");
            // Six trials of a real command never time alike: an interval of no width
            // would be one trial's figure copied, not an interval.
            let [lo, hi]: [f64; 2] =
                serde_json::from_value(r["throughput_bps_ci"].clone()).expect("an interval");
            let bps = r["throughput_bps"].as_f64().unwrap();
            assert!(lo < hi && lo <= bps && bps <= hi, "{r}");
        }
    }
    result_or_unavailable(&out, &c, "nginx 10 MiB file", "nginx", common::tls_lacks());
    result_or_unavailable(
        &out,
        &c,
        "OpenVPN AES-256-GCM",
        "openvpn",
        common::vpn_lacks(false),
    );
    // The tunnel's crypto share with and without AES-NI, sampled where perf samples.
    if common::vpn_lacks(false).is_none() && common::perf_usable() {
        for path in ["with AES-NI", "without"] {
            let line = format!("OpenVPN AES-256-GCM {path}: crypto is ");
            assert!(
                c.lines()
                    .any(|l| l.starts_with(&line) && l.contains("(sampled with perf)")),
                "{line}: {c}"
            );
        }
    }
    // The RAM disk row: the kernel's AES-XTS driver against the generic one, bound in the
    // guest's dm-crypt, as a time beside AF_ALG's gain and study 2's; one round decides
    // nothing. fio is the host's, shipped into the guest.
    if guest {
        let fio = (!common::has_program("fio")).then(|| "disk needs fio".to_string());
        let row = "RAM disk (guest, emulated CPU: shapes only): 33 MB written then read in ";
        result_or_unavailable(&out, &c, row, "guest ram disk", fio.clone());
        if fio.is_none() {
            let line = c.lines().find(|l| l.starts_with(row)).unwrap_or_default();
            for part in [
                "s with the kernel's choice (xts-aes-",
                "s with the generic C code (xts(ecb(aes-generic))): ",
                "for the same two drivers through AF_ALG",
                "study 2 found 7 s -> 4 s (1.75x). One round each: it cannot decide.",
            ] {
                assert!(line.contains(part), "{part}: {line}");
            }
            assert!(
                out.contains("a 33 MB file written then read through dm-crypt"),
                "{out}"
            );
        }
    }
    reported(&file, "openssl-enc");
}

#[test]
fn avx512_quick() {
    let (out, _, file) = study("avx512", &[]);
    assert!(out.contains("Thread scaling, 16 KiB"), "{out}");
    let c = conclusion(&out);
    // A CPU without AVX-512 (a Zen 3) cannot show study 4's effect: said before the
    // tables, with what libcrypto reports for the two paths, and no "as study 4 found".
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap();
    let avx512 = cpuinfo
        .lines()
        .filter(|l| l.starts_with("flags"))
        .any(|l| l.split_whitespace().any(|f| f == "avx512f"));
    let base = if avx512 {
        "base (AVX-512)"
    } else {
        let said = out
            .find("Not observable here: this CPU has no AVX-512")
            .unwrap_or_else(|| panic!("not said: {out}"));
        assert!(
            said < out.find("Thread scaling").unwrap(),
            "said first: {out}"
        );
        assert!(
            out.contains("isa=no-avx512 was not measured: changes nothing on this CPU")
                || out.contains("capability words"),
            "{out}"
        );
        assert!(!c.contains("as study 4 found"), "{c}");
        "base (no AVX-512 here)"
    };
    assert!(out.lines().any(|l| l.contains(base)), "{base}: {out}");
    assert!(c.contains("Mixed test: the AES-GCM thread runs at"), "{c}");
    assert!(
        c.contains("Clock not observable on this machine") || c.contains("Clock at "),
        "{c}"
    );
    // nginx with ChaCha on a share of the connections, on both ISA paths (or why not).
    let nginx = "requests/s against AES-GCM alone with ChaCha20-Poly1305 on a share";
    let lacks = common::tls_lacks();
    result_or_unavailable(&out, &c, nginx, "nginx chacha 20%", lacks.clone());
    if lacks.is_none() {
        for path in [base, "isa=no-avx512"] {
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
    result_or_unavailable(&out, &c, "HTTPS delivers", "https", common::tls_lacks());
    assert!(
        c.contains("governor not settable: ") || c.contains("governor set to "),
        "{c}"
    );
    assert!(c.contains("cryptobench compare"), "{c}");
    reported(&file, "aes-128-cbc");
}

/// Every server on every library built here, one core each, and HAProxy across the thread
/// counts: the one-core table, the thread sweep, and the stack verdicts as conclusions
/// (one round with --quick: "cannot decide" is the honest answer), and why the lock
/// contention cannot be seen on this machine where it cannot.
#[test]
fn tls_stacks_quick() {
    let (out, _, file) = study("tls-stacks", &[]);
    let lacks = common::tls_lacks()
        .or_else(|| (!common::has_program("haproxy")).then(|| "haproxy not found".to_string()));
    let c = conclusion(&out);
    result_or_unavailable(
        &out,
        &c,
        "Which TLS server and library handle the most handshakes per core here?",
        "stack haproxy",
        lacks,
    );
    assert!(out.contains("Each server and library on one core"), "{out}");
    for server in ["haproxy", "nginx"] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(server) && l.contains("system (OpenSSL 3.")),
            "{server} on the system library: {out}"
        );
    }
    assert!(out.contains("Thread scaling"), "{out}");
    // A claim needs the threads within the server's CPUs; where none is, the study says why.
    let claims = out
        .lines()
        .any(|l| l.contains("handshakes") && l.contains("% ["));
    assert!(
        claims || out.contains("no thread count beyond it is a claim"),
        "{out}"
    );
    reported(&file, "TLS_AES_128_GCM_SHA256");
}

#[test]
fn router_vpn_quick() {
    let (out, _, file) = study("router-vpn", &[]);
    assert!(out.contains("1000s of bytes per second"), "{out}");
    assert!(
        out.contains("16 bytes") && out.contains("8192 bytes"),
        "{out}"
    );
    // Every row of study 5's table, the public-key block included.
    for row in [
        "des-cbc",
        "des-ede3-cbc",
        "aes-192-cbc",
        "rsa 2048 bits",
        "dsa 2048 bits",
    ] {
        assert!(out.contains(row), "{row}: {out}");
    }
    assert!(!out.contains("catalogue has none"), "{out}");
    let c = conclusion(&out);
    assert!(c.contains("aes-256-cbc at 8 KiB: openssl "), "{c}");
    result_or_unavailable(&out, &c, "OpenVPN's best", "vpn", common::vpn_lacks(true));
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
    let text = c.replace("<li>", "\n").replace("</li>", "\n");
    result_or_unavailable(
        &text,
        &text,
        "crypto is ",
        "tunnel",
        common::vpn_lacks(false),
    );
    // Where perf samples, the share quoted is the sampled one, per byte beside it.
    if common::vpn_lacks(false).is_none() && common::perf_usable() {
        assert!(
            text.contains("of the tunnel's CPU (sampled with perf; per byte against cipher none: "),
            "{text}"
        );
    }
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
        // overtakes software, or crosses in some resamples only): each is a computed line.
        assert!(
            c.contains("overtakes software at ")
                || c.contains("never overtakes software (")
                || c.contains("but not in every resample of this run: one round cannot decide"),
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
        // And IPsec, which goes through the kernel's drivers: generic against the
        // kernel's choice, beside AF_ALG's figure for the two.
        assert!(out.contains("IPsec AES-128-GCM per kernel driver"), "{out}");
        assert!(
            c.contains("IPsec per driver (guest, emulated CPU: shapes only, one round: it cannot decide): the kernel's choice carries "),
            "{c}"
        );
    } else {
        assert!(missing.contains("give --guest"), "{missing}");
    }
    reported(&file, "aes-128-cbc");
}

/// A step that breaks is a failure, not "cannot be observed here": it is said first, the
/// study exits 1 and its JSON lists it under `failed` (the table's first line is
/// study::tests' concern). Here the guest runner is a program
/// that exits 1 without running anything.
#[test]
fn a_failed_step_fails_the_study() {
    let file = temp_file("failed.jsonl");
    let o = common::command()
        .args(["study", "offload", "--quick", "--guest", "--format", "json"])
        .arg("--output")
        .arg(&file)
        .env("CRYPTOBENCH_GUEST_RUN", "/bin/false")
        .output()
        .unwrap();
    let (out, err) = common::text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}\n{out}");
    assert!(
        err.contains("study offload: guest: failed: the guest did not run cryptobench"),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_str(&out).expect("one JSON document");
    assert_eq!(doc["failed"][0]["step"], "guest", "{doc}");
    assert!(
        doc["not_observed"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["step"] != "guest"),
        "{doc}"
    );
    // The host's speed step still ran and is reported.
    assert!(
        doc["runs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["step"] == "host"),
        "{doc}"
    );
    let _ = std::fs::remove_file(file);
}

/// `--no-store` keeps every step's run out of the store (the user's, when a test forgot
/// its private data dir); `--store URL` puts them in that one.
#[test]
fn study_no_store_writes_nothing_and_store_keeps_every_step() {
    let home = std::env::temp_dir().join(format!("cbench-study-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home).unwrap();
    let study = |extra: &[&str]| {
        let o = common::command()
            .env("XDG_DATA_HOME", &home)
            .args(["study", "scaling", "--quick", "--format", "json"])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    study(&["--no-store"]);
    let written: Vec<_> = walk(&home);
    assert!(written.is_empty(), "--no-store wrote {written:?}");
    let db = home.join("kept.db");
    let url = format!("sqlite:{}", db.display());
    let stepped = study(&["--store", &url]);
    let o = common::command()
        .args(["history", "--store", &url, "--format", "json"])
        .output()
        .unwrap();
    let listed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // Every step's run is in the store, and nothing else.
    let ids = |v: &serde_json::Value| -> std::collections::BTreeSet<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| r["run_id"].as_str().unwrap().to_string())
            .collect()
    };
    let steps = ids(&stepped["runs"]);
    assert!(
        steps.len() >= 2,
        "the quick scaling study has steps: {stepped}"
    );
    assert_eq!(ids(&listed), steps, "{listed}");
    // The database and its journal files, nothing else.
    let db_text = db.to_string_lossy().into_owned();
    let all = walk(&home);
    assert!(
        all.iter()
            .all(|p| p.to_string_lossy().starts_with(&db_text)),
        "{all:?}"
    );
    std::fs::remove_dir_all(&home).unwrap();
}

/// Every file below `dir`.
fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// SIGINT during a study's first step, through the CLI (src/study/tests.rs checks the
/// view on a hand-made value): exit 130, stdout headed INTERRUPTED with the step cut
/// short and those never run, and no conclusion drawn from the part that ran.
#[test]
fn sigint_during_a_study_heads_its_output_interrupted() {
    use std::io::{BufRead, BufReader, Read};
    let mut child = common::command()
        .args(["study", "scaling", "--quick", "--no-store"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    while !said.contains("[1/") {
        assert!(
            err.read_line(&mut said).unwrap() > 0,
            "no first step: {said}"
        );
    }
    let first = said.lines().last().unwrap().to_string();
    let tag = first.split_whitespace().nth(1).unwrap().to_string();
    // SAFETY: signalling the child we started, by its PID.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(start.elapsed().as_secs() < 60, "the study did not stop");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let _ = err.read_to_string(&mut said);
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert_eq!(status.code(), Some(130), "{said}");
    let head = out.lines().next().unwrap_or_default();
    assert!(
        head.starts_with(&format!(
            "INTERRUPTED: steps not run: {tag} (interrupted), "
        )),
        "{first}\n{out}"
    );
    let c = conclusion(&out);
    assert!(
        c.trim_start()
            .starts_with("No conclusion: the study was interrupted")
            && !c.contains("gives "),
        "{c}"
    );
}
