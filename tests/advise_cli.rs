//! `cryptobench advise --quick` on this host with the real binary: every verdict carries
//! an interval, "no difference" or "cannot decide" (a limit verdict its evidence), names
//! runs that are in its records, and every path probe calls unusable here is listed with
//! probe's reason and gets no verdict. The shared row holds no host name, user, address or
//! key; another box's row is put beside it. Speeds are never asserted. Bad input: exit 2,
//! one line. One advise run (about 100 s on 2 cores).

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Instant;

fn temp(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("cryptobench-advise-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

/// What must never be in a shared row: this host's name, the user's, every address of
/// its interfaces.
fn secrets() -> Vec<String> {
    let mut s = Vec::new();
    if let Ok(h) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
        s.push(h.trim().to_string());
    }
    for v in ["USER", "LOGNAME"] {
        s.extend(std::env::var(v).ok());
    }
    if let Ok(o) = std::process::Command::new("id").arg("-un").output() {
        s.push(String::from_utf8_lossy(&o.stdout).trim().to_string());
    }
    if let Ok(o) = std::process::Command::new("ip")
        .args(["-o", "addr"])
        .output()
    {
        for l in String::from_utf8_lossy(&o.stdout).lines() {
            let mut w = l.split_whitespace();
            if let Some(addr) = w.find(|x| *x == "inet" || *x == "inet6").and(w.next()) {
                s.push(addr.split('/').next().unwrap_or(addr).to_string());
            }
        }
    }
    s.retain(|x| !x.is_empty());
    s
}

/// `advise --quick` without a store, in JSON, its row to the path that follows.
const QUICK_JSON_SHARE: &[&str] = &[
    "advise",
    "--quick",
    "--no-store",
    "--format",
    "json",
    "--share",
];

/// The path names advise gives the kernel paths, and where probe's JSON has them.
const KERNEL_PATHS: [(&str, &str); 5] = [
    ("wireguard-kernel", "/kernel/offload/wireguard"),
    ("openvpn-dco", "/kernel/offload/ovpn_dco"),
    ("ipsec", "/kernel/offload/ipsec"),
    ("ktls", "/kernel/offload/ktls"),
    ("af_alg", "/kernel/af_alg/aead"),
];

#[test]
fn advise_quick_answers_with_intervals_and_lists_what_this_host_lacks() {
    let share = temp("share.json");
    let records = temp("records.jsonl");
    // Another box's row, as --share writes it.
    let theirs = temp("theirs.json");
    std::fs::write(
        &theirs,
        r#"{"kind":"cryptobench-advise-share","schema":1,"device":"Raspberry Pi 4 Model B Rev 1.4",
            "cpu":"Cortex-A72","cores":4,"arch":"aarch64","os":"OpenWrt 23.05.3","kernel":"5.15.150",
            "cryptobench":"0.1.0","figures":[{"what":"tunnel throughput","path":"wireguard-kernel CHACHA20-POLY1305",
            "value":420.0,"unit":"Mbit/s","ci":[400.0,440.0],"limit":"thread"}]}"#,
    )
    .unwrap();
    let t = Instant::now();
    let o = common::command()
        .args(QUICK_JSON_SHARE)
        .arg(&share)
        .arg("--output")
        .arg(&records)
        .arg("--compare")
        .arg(&theirs)
        .output()
        .expect("binary runs");
    eprintln!("advise --quick took {:.0} s", t.elapsed().as_secs_f64());
    let err = common::stderr(&o);
    let lacks = common::tls_lacks().or_else(|| common::vpn_lacks(false));
    if lacks.is_none() {
        assert_eq!(o.status.code(), Some(0), "{err}");
    }
    let v: Value = serde_json::from_str(&common::stdout(&o)).expect("one JSON document");
    let verdicts = v["verdicts"].as_array().unwrap();
    let unavailable = v["unavailable"].as_array().unwrap();
    let kept = std::fs::read_to_string(&records).unwrap();
    for x in verdicts {
        let (q, a) = (
            x["question"].as_str().unwrap(),
            x["answer"].as_str().unwrap(),
        );
        let decided = x["ci"].is_array() && x["ratio"].is_number();
        let undecided = a.contains("no difference beyond the noise") || a.contains("cannot decide");
        let limit = q.starts_with("What limits") && !x["evidence"].as_str().unwrap().is_empty();
        assert!(decided || undecided || limit, "{x}");
        if x["ci"].is_array() && !undecided {
            let ci = &x["ci"];
            assert!(
                ci[0].as_f64().unwrap() > 1.0,
                "a winner's interval excludes 1: {x}"
            );
        }
        let runs = x["runs"].as_array().unwrap();
        assert!(!runs.is_empty(), "{x}");
        for r in runs {
            assert!(
                kept.contains(&format!("\"run_id\":{r}")),
                "{r} not in the records"
            );
        }
    }
    // Every kernel path probe calls unusable here: listed with probe's reason, no verdict.
    let probe: Value = serde_json::from_str(&common::stdout(&common::run(&[
        "probe", "--format", "json",
    ])))
    .unwrap();
    for (path, at) in KERNEL_PATHS {
        let p = probe
            .pointer(at)
            .unwrap_or_else(|| panic!("probe has {at}"));
        if p["usable"] == true {
            continue;
        }
        let u = unavailable
            .iter()
            .find(|u| u["path"] == path)
            .unwrap_or_else(|| panic!("{path} not in unavailable: {unavailable:?}"));
        assert_eq!(u["reason"], p["reason"], "{path}");
        for x in verdicts {
            assert!(!x.to_string().contains(path), "{path} is unavailable: {x}");
        }
    }
    match &lacks {
        None => {
            for q in [
                "Which tunnel is fastest here?",
                "What limits the fastest tunnel?",
                "Which TLS suite is fastest here?",
            ] {
                assert!(verdicts.iter().any(|x| x["question"] == q), "{q}: {v}");
            }
            // What every one of our machines decides (AES-NI: AES-GCM about 3x ChaCha20 at
            // 1400 B; wireguard-go about 3-4.5x OpenVPN): a winner whose interval excludes
            // 1, never "cannot decide".
            for q in [
                "AES-GCM or ChaCha20-Poly1305 on this CPU (1400 B, one core)?",
                "Which tunnel is fastest here?",
            ] {
                let x = verdicts
                    .iter()
                    .find(|x| x["question"] == q)
                    .unwrap_or_else(|| panic!("{q}: {v}"));
                assert!(
                    x["ci"][0].as_f64().is_some_and(|lo| lo > 1.0),
                    "{q} is decidable here: {x}"
                );
            }
            // SSH: each server's two fastest ciphers over the rounds, with an interval,
            // and what held its fastest back.
            for server in ["openssh", "dropbear"] {
                let q = format!("Which SSH cipher here? ({server})");
                let x = verdicts
                    .iter()
                    .find(|x| x["question"] == q.as_str())
                    .unwrap_or_else(|| panic!("{q}: {v}"));
                assert!(x["ci"].is_array(), "{q}: {x}");
                let q = format!("What limits the fastest SSH cipher? ({server})");
                let x = verdicts
                    .iter()
                    .find(|x| x["question"] == q.as_str())
                    .unwrap_or_else(|| panic!("{q}: {v}"));
                assert!(!x["evidence"].as_str().unwrap().is_empty(), "{q}: {x}");
            }
            // Another library: the system's OpenSSL, named with its version, against the
            // fastest other in-process library (AWS-LC, ring, the OpenSSL builds in the
            // cache), per AEAD and size, each
            // with an interval. Which side wins depends on the CPU (VAES or not).
            for alg in ["AES-128-GCM", "ChaCha20-Poly1305"] {
                for size in ["1400 B", "16 KiB"] {
                    let q = format!(
                        "Would another crypto library help here? ({alg}, {size}, one core)"
                    );
                    let x = verdicts
                        .iter()
                        .find(|x| x["question"] == q.as_str())
                        .unwrap_or_else(|| panic!("{q}: {v}"));
                    assert!(
                        x["ci"].is_array() && x["ratio"].as_f64().unwrap() >= 1.0,
                        "{q}: {x}"
                    );
                    let evidence = x["evidence"].as_str().unwrap();
                    assert!(
                        evidence.contains("the system's OpenSSL 3."),
                        "{q}: the system library's version: {x}"
                    );
                    // An OpenSSL build from the cache is labelled "openssl 3.5.5".
                    assert!(
                        ["aws-lc", "ring", "rustcrypto", "libsodium"]
                            .iter()
                            .any(|l| evidence.contains(&format!("{l}: ")))
                            || ["openssl 3.", "openssl 4."]
                                .iter()
                                .any(|b| evidence.contains(b)),
                        "{q}: another library: {x}"
                    );
                }
            }
        }
        Some(why) => assert!(
            unavailable
                .iter()
                .any(|u| u["reason"].as_str().unwrap().contains(why.as_str())),
            "{why}: {unavailable:?}"
        ),
    }
    // The shared row: the file, and the same under "share"; nothing that names this host.
    let row = std::fs::read_to_string(&share).expect("--share wrote the file");
    let shared: Value = serde_json::from_str(&row).unwrap();
    assert_eq!(shared, v["share"]);
    assert_eq!(shared["kind"], "cryptobench-advise-share");
    assert!(
        shared["markdown"].as_str().unwrap().starts_with("| "),
        "{row}"
    );
    assert!(shared["cores"].as_u64().unwrap() >= 1);
    let low = row.to_lowercase();
    // A short name ("vm") is looked for as a word, a longer one anywhere.
    let words: Vec<&str> = low
        .split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '.' || c == ':'))
        .collect();
    for s in secrets() {
        let s = s.to_lowercase();
        assert!(!words.contains(&s.as_str()), "the share holds '{s}': {row}");
        assert!(
            s.len() < 3 || !low.contains(&s),
            "the share holds '{s}': {row}"
        );
    }
    for key in ["ssh-", "begin ", "private"] {
        assert!(!low.contains(key), "{key}: {row}");
    }
    // The other box's row is beside this one.
    assert_eq!(v["compare"][0]["device"], "Raspberry Pi 4 Model B Rev 1.4");
    if let Some(why) = lacks {
        common::skip(&format!("advise could not run every workload here: {why}"));
    }
    for p in [share, records, theirs] {
        let _ = std::fs::remove_file(p);
    }
}

/// `--dut` with `--guest` (the guest is this machine's) is refused before connecting, and
/// writes no shared row. The DUT's own row is tests/dut_tls_vpn.rs's
/// (advise_quick_composes_lean_steps_on_the_dut): no user, host name, address or key in it.
#[test]
fn advise_dut_with_guest_is_refused_before_connecting() {
    let share = temp("dut-share.json");
    let o = common::command()
        .args([
            "advise",
            "--guest",
            "--dut",
            "ssh://alice@secret-host.example:22",
            "--share",
        ])
        .arg(&share)
        .output()
        .unwrap();
    let e = common::one_line_exit_2(&o, "advise --dut --guest");
    assert!(e.contains("--guest"), "{e}");
    assert!(!e.contains("secret-host"), "{e}");
    assert!(!share.exists());
}

/// A fresh directory `name` with a FIFO in it; both paths.
fn dir_with_fifo(name: &str) -> (PathBuf, PathBuf) {
    let dir = common::tempdir(Path::new(env!("CARGO_TARGET_TMPDIR")), name);
    let fifo = dir.join("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    (dir, fifo)
}

/// `--share` to anything but a regular file or a new name in an existing directory: refused
/// before measuring (exit 2, one line naming the problem), and a link's target untouched.
#[test]
fn a_share_path_that_would_lose_the_row_is_refused_before_measuring() {
    let (dir, fifo) = dir_with_fifo("advise-share-paths");
    let target = dir.join("target.json");
    std::fs::write(&target, "theirs").unwrap();
    let link = dir.join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let dangling = dir.join("dangling.json");
    std::os::unix::fs::symlink(dir.join("nowhere"), &dangling).unwrap();
    let long = dir.join("x".repeat(300));
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let (fifo, link, dangling, long) = (s(&fifo), s(&link), s(&dangling), s(&long));
    let new_dir = format!("{}/new/", dir.display());
    let not_regular = "not a regular file";
    let symlink = "a symbolic link (never followed)";
    let kernel = "on /proc or /sys";
    let cases: Vec<(&str, &str)> = vec![
        ("/dev/full", not_regular),
        (&fifo, not_regular),
        ("/dev/stdout", symlink),
        (&link, symlink),
        (&dangling, symlink),
        ("/proc/self/status", kernel),
        ("/sys/kernel/cryptobench-row.json", kernel),
        (&long, "too long"),
        (&new_dir, "a directory"),
    ];
    for (path, needle) in cases {
        let t = Instant::now();
        let o = common::command()
            .args(["advise", "--quick", "--no-store", "--share", path])
            .output()
            .unwrap();
        let e = common::one_line_exit_2(&o, path);
        assert!(e.contains("--share") && e.contains(needle), "{path}: {e}");
        assert!(t.elapsed().as_secs() < 5, "{path}: {:?}", t.elapsed());
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "theirs");
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(left.len(), 4, "no temp file left: {left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// SIGINT during the run: the report is printed, marked interrupted, the row is not
/// written (its figures would be missing with nothing to say so), and the exit is 130.
#[test]
fn an_interrupted_advise_writes_no_row_and_exits_130() {
    use std::io::BufRead;
    let share = temp("interrupted-share.json");
    let mut child = common::command()
        .args(QUICK_JSON_SHARE)
        .arg(&share)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The runner has its signal handler once it names its steps.
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    while err.read_line(&mut seen).unwrap() > 0 && !seen.contains("study advise:") {}
    assert!(seen.contains("study advise:"), "{seen}");
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    // Read beside stdout: either pipe filling up would stop the child.
    let rest = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut rest);
        rest
    });
    let o = child.wait_with_output().unwrap();
    let rest = rest.join().unwrap();
    assert_eq!(o.status.code(), Some(130), "{seen}{rest}");
    let v: Value = serde_json::from_str(&common::stdout(&o)).expect("the report, printed");
    assert_eq!(v["interrupted"], true, "{v}");
    assert!(!share.exists(), "an interrupted run wrote its row");
    assert!(
        rest.contains(&format!("--share {} not written", share.display())),
        "{rest}"
    );
}

/// `--compare` of a FIFO or /dev/zero: refused at once (it blocked, or read until memory
/// ran out).
#[test]
fn a_compare_file_that_is_no_file_is_refused_at_once() {
    let (dir, fifo) = dir_with_fifo("advise-compare");
    for f in [fifo.as_path(), Path::new("/dev/zero")] {
        let t = Instant::now();
        let mut child = common::command()
            .args(["advise", "--compare"])
            .arg(f)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        while child.try_wait().unwrap().is_none() && t.elapsed().as_secs() < 10 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = child.kill();
        let o = child.wait_with_output().unwrap();
        let took = t.elapsed();
        let e = common::one_line_exit_2(&o, &f.display().to_string());
        assert!(e.contains("not a regular file"), "{e}");
        assert!(took.as_millis() < 1000, "{}: {took:?}", f.display());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_is_refused_in_one_line() {
    let not_share = temp("not-share.json");
    std::fs::write(&not_share, "{\"kind\":\"record\"}").unwrap();
    let not_json = temp("not-json.json");
    std::fs::write(&not_json, "hello").unwrap();
    // A row with a count as text.
    let bad_cores = temp("bad-cores.json");
    std::fs::write(
        &bad_cores,
        r#"{"kind":"cryptobench-advise-share","schema":1,"device":"d","cpu":"c","cores":"four",
            "arch":"a","os":"o","kernel":"k","cryptobench":"0.1.0","figures":[]}"#,
    )
    .unwrap();
    let ns = not_share.to_str().unwrap();
    let nj = not_json.to_str().unwrap();
    let bc = bad_cores.to_str().unwrap();
    common::refused_in_one_line(&[
        (
            &["advise", "--compare", "/nonexistent/row.json"],
            "--compare",
        ),
        (&["advise", "--compare", ns], "not a shared row: field kind"),
        (
            &["advise", "--compare", bc],
            "not a shared row: field cores",
        ),
        (&["advise", "--compare", nj], "not JSON"),
        (
            &["advise", "--share", "/nonexistent/dir/row.json"],
            "does not exist",
        ),
        (&["advise", "--share", "/tmp"], "a directory"),
        (&["advise", "--output", "-"], "--output"),
        (&["advise", "--format", "csv"], "csv"),
        (&["advise", "--stacks", "--quick"], "cannot be used with"),
        (&["advise", "--stacks", "--guest"], "cannot be used with"),
        (
            &["advise", "--quick", "--store", "x", "--no-store"],
            "--no-store",
        ),
    ]);
    for f in [not_share, not_json, bad_cores] {
        let _ = std::fs::remove_file(f);
    }
}
