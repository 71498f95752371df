//! Runs the real `cryptobench` binary: correctness gate, formats, interruption, bad
//! input and threads. Speeds are never asserted; shapes and consistency are.

mod common;
use common::{run, skip, stderr, stdout};

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn json(args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let o = run(&a);
    assert!(o.status.success(), "{:?} failed: {}", args, stderr(&o));
    // No progress bar or chatter when stderr is not a terminal.
    assert!(o.stderr.is_empty(), "{:?}: stderr: {}", args, stderr(&o));
    serde_json::from_slice(&o.stdout).expect("--format json prints one JSON document")
}

fn temp_file(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("cryptobench-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

fn read_lines(p: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(p)
        .expect("results file exists")
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .collect()
}

const QUICK: &[&str] = &["speed", "--time", "0.02"];

fn quick(extra: &[&str]) -> Vec<String> {
    QUICK.iter().chain(extra).map(|s| s.to_string()).collect()
}

#[test]
fn every_implementation_passes_the_correctness_gate() {
    let v = json(&["speed", "--time", "0.01", "--sizes", "16"]);
    let excl = v["exclusions"].as_array().unwrap();
    let refused: Vec<&Value> = excl.iter().filter(|e| e["kind"] == "refused").collect();
    assert!(refused.is_empty(), "refused: {refused:?}");
    let recs = v["records"].as_array().unwrap();
    for imp in ["openssl", "aws-lc", "ring", "rustcrypto", "libsodium"] {
        assert!(
            recs.iter().any(|r| r["impl"] == imp),
            "no record from {imp}"
        );
    }
    // Every algorithm is measured by at least two implementations.
    for alg in common::DEFAULT_ALGS {
        let n = recs
            .iter()
            .filter(|r| r["alg"] == alg && r["direction"] == "enc")
            .count();
        assert!(n >= 2, "{alg}: {n} implementations");
    }
    // What a library lacks is reported with a reason, not silently dropped.
    assert!(excl
        .iter()
        .any(|e| e["impl"] == "ring" && e["alg"] == "aes-128-cbc" && e["kind"] == "not_offered"));
}

#[test]
fn record_contract_fields_are_present() {
    let v = json(
        &quick(&[
            "--impl",
            "openssl",
            "--alg",
            "aes-128-gcm",
            "--sizes",
            "64,1k",
        ])
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>(),
    );
    assert_eq!(v["schema"], 2);
    assert!(v["environment"]["cpu"]["crypto_flags"].is_array());
    assert!(v["environment"]["kernel"].as_str().unwrap().len() > 3);
    let recs = v["records"].as_array().unwrap();
    assert_eq!(recs.len(), 4, "2 sizes x enc,dec");
    for r in recs {
        for f in [
            "workload",
            "impl",
            "impl_version",
            "variant",
            "alg",
            "direction",
            "size",
            "threads",
            "throughput_bps",
            "throughput_bps_ci",
            "per_thread_bps",
            "trials",
            "cpu_user_s",
            "cpu_sys_s",
            "wall_s",
        ] {
            assert!(r.get(f).is_some(), "record lacks {f}: {r}");
        }
        assert_eq!(r["workload"], "speed");
        assert!(r["impl_version"].as_str().unwrap().contains("OpenSSL"));
        let t = r["throughput_bps"].as_f64().unwrap();
        let ci = r["throughput_bps_ci"].as_array().unwrap();
        assert!(ci[0].as_f64().unwrap() <= t && t <= ci[1].as_f64().unwrap());
        assert!(r["trials"].as_u64().unwrap() >= 5);
        // Bytes and calls agree with the size of one call.
        assert_eq!(
            r["bytes"].as_u64().unwrap(),
            r["calls"].as_u64().unwrap() * r["size"].as_u64().unwrap()
        );
        assert!(r["cpu_user_s"].as_f64().unwrap() > 0.0);
        // Why it stopped, and the CI it reached, agree with the samples.
        let why = r["stop_reason"].as_str().unwrap();
        assert!(["target_ci", "max_time", "budget"].contains(&why), "{why}");
        let ci_pct = r["ci_pct"].as_f64().unwrap();
        let half = (ci[1].as_f64().unwrap() - ci[0].as_f64().unwrap()) / 2.0 / t * 100.0;
        assert!((ci_pct - half).abs() < 1e-6, "{ci_pct} vs {half}");
        if why == "target_ci" {
            assert!(ci_pct <= 1.0, "stopped on the target at {ci_pct}%");
        }
        // The per-CPU-second figure, with its CI, beside the wall-clock one.
        let cpu = r["throughput_cpu_bps"].as_f64().unwrap();
        let cpu_ci = r["throughput_cpu_bps_ci"].as_array().unwrap();
        assert!(cpu_ci[0].as_f64().unwrap() <= cpu && cpu <= cpu_ci[1].as_f64().unwrap());
        let others = r["others_cpu_pct"].as_f64().unwrap();
        assert!((0.0..=100.0).contains(&others), "others_cpu_pct {others}");
    }
}

#[test]
fn fixed_budget_and_cap_are_honoured() {
    // --target-ci 0: no point stops early, each takes its whole budget.
    let args = "speed --time 0.05 --target-ci 0 --impl ring --alg sha256 --sizes 64,1k";
    let run = || json(&args.split(' ').collect::<Vec<_>>());
    let (mut v, mut counts) = (run(), Vec::new());
    for r in v["records"].as_array().unwrap() {
        assert_eq!(r["stop_reason"], "budget", "{r}");
        let wall = r["wall_s"].as_f64().unwrap();
        assert!(wall >= 0.05 * 0.9, "{wall}");
    }
    assert_eq!(v["environment"]["settings"]["max_time_per_point_s"], 0.2);
    assert_eq!(v["environment"]["settings"]["target_ci_pct"], 0.0);
    // Trials of 3 ms unless asked, each point's trials all kept.
    let trial = v["environment"]["settings"]["trial_s"].as_f64().unwrap();
    assert!((trial - 0.003).abs() < 0.0005, "{trial}");
    // 0.05 s holds about 16 trials of 3 ms; other work stretches some, so runs repeat (at
    // most 10) until one has 15 at every point: trials of 6 ms never would.
    let kept = |r: &Value| {
        let n = r["samples_bps"].as_array().unwrap().len();
        assert_eq!(n as u64, r["trials"].as_u64().unwrap(), "{r}");
        n
    };
    loop {
        let n: Vec<usize> = v["records"].as_array().unwrap().iter().map(kept).collect();
        if n.iter().all(|&n| n >= 15) {
            break;
        }
        counts.push(n);
        assert!(counts.len() < 10, "0.05 s of 3 ms trials: {counts:?}");
        v = run();
    }
}

#[test]
fn the_corrupt_switch_exists_only_in_builds_with_the_feature() {
    let o = run(&["speed", "--list", "--test-corrupt", "rustcrypto"]);
    if cfg!(feature = "test-corrupt") {
        assert!(o.status.success(), "{}", stderr(&o));
    } else {
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("--test-corrupt"), "{}", stderr(&o));
    }
}

#[test]
fn corrupted_implementation_is_refused_before_timing() {
    if !cfg!(feature = "test-corrupt") {
        common::skip("the corrupt implementation is only in builds with `--features test-corrupt` (scripts/test turns it on)");
        return;
    }
    // Alone, it leaves nothing to measure: exit 1 with the failing vector named.
    let o = run(&quick(&[
        "--impl",
        "rustcrypto",
        "--alg",
        "aes-128-gcm",
        "--sizes",
        "16",
        "--test-corrupt",
        "rustcrypto",
    ])
    .iter()
    .map(String::as_str)
    .collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("known-answer"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("NIST GCM"),
        "names the vector: {}",
        stderr(&o)
    );
    // Beside a good one, it is reported and never timed; the good one is measured.
    for alg in ["aes-128-gcm", "sha256", "aes-128-cbc"] {
        let v = json(
            &quick(&[
                "--impl",
                "rustcrypto,openssl",
                "--alg",
                alg,
                "--sizes",
                "16",
                "--test-corrupt",
                "rustcrypto",
            ])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        );
        let recs = v["records"].as_array().unwrap();
        assert!(
            recs.iter().all(|r| r["impl"] != "rustcrypto"),
            "{alg}: corrupt one was timed"
        );
        assert!(recs.iter().any(|r| r["impl"] == "openssl"));
        assert!(v["exclusions"].as_array().unwrap().iter().any(|e| e["impl"]
            .as_str()
            .unwrap()
            .starts_with("rustcrypto")
            && e["kind"] == "refused"));
    }
}

fn fmt_run(format: &str, out: &std::path::Path) -> String {
    let o = run(&[
        "speed",
        "--time",
        "0.02",
        "--impl",
        "openssl,ring",
        "--alg",
        "aes-128-gcm,sha256",
        "--sizes",
        "16,1350",
        "--format",
        format,
        "--output",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{format}: {}", stderr(&o));
    stdout(&o)
}

fn records_of(lines: &[Value]) -> Vec<&Value> {
    lines.iter().filter(|l| l["kind"] == "record").collect()
}

#[test]
fn every_format_parses_back_to_the_recorded_numbers() {
    // csv: one row per record, same throughput as the JSON Lines file.
    let f = temp_file("csv.jsonl");
    let csv = fmt_run("csv", &f);
    let lines = read_lines(&f);
    assert_eq!(lines[0]["kind"], "environment");
    let recs = records_of(&lines);
    assert_eq!(
        recs.len(),
        12,
        "(openssl+ring) x (gcm enc+dec, sha256) x 2 sizes"
    );
    let mut rows = csv.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let body: Vec<Vec<String>> = rows
        .map(|r| r.split(',').map(str::to_string).collect())
        .collect();
    assert_eq!(body.len(), recs.len());
    for (row, rec) in body.iter().zip(&recs) {
        assert_eq!(row[col("alg")], rec["alg"].as_str().unwrap());
        let t: f64 = row[col("throughput_bps")].parse().unwrap();
        assert!((t - rec["throughput_bps"].as_f64().unwrap()).abs() <= 1.0);
    }

    // openssl: the exact `openssl speed` layout, values in 1000s of bytes/s.
    let f = temp_file("openssl.jsonl");
    let text = fmt_run("openssl", &f);
    let recs_owned = read_lines(&f);
    let recs = records_of(&recs_owned);
    let mut it = text
        .lines()
        .skip_while(|l| !l.starts_with("The 'numbers' are in 1000s"));
    assert!(it.next().is_some(), "header line: {text}");
    let type_line = it.next().unwrap();
    assert!(type_line.starts_with("type        "), "{type_line}");
    assert!(
        type_line.contains("     16 bytes   1350 bytes"),
        "{type_line}"
    );
    let table: Vec<&str> = it
        .filter(|l| !l.trim().is_empty() && !l.starts_with("~ noisy"))
        .collect();
    assert_eq!(
        table.len(),
        6,
        "(openssl, ring) x (gcm enc, gcm dec, sha256): {table:?}"
    );
    let mut checked = 0;
    for line in &table {
        let nums: Vec<f64> = line
            .split_whitespace()
            .rev()
            .take(2)
            .map(|w| {
                w.trim_start_matches('~')
                    .trim_end_matches('k')
                    .parse::<f64>()
                    .unwrap()
                    * 1e3
            })
            .collect();
        let (imp, rest) = line.split_once(' ').unwrap();
        let dir = if rest.contains(" dec") { "dec" } else { "enc" };
        let alg = if rest.contains("AES-128-GCM") {
            "aes-128-gcm"
        } else {
            "sha256"
        };
        for (size, v) in [(1350, nums[0]), (16, nums[1])] {
            let rec = recs
                .iter()
                .find(|r| {
                    r["impl"] == imp
                        && r["alg"] == alg
                        && r["direction"] == dir
                        && r["size"] == size
                })
                .unwrap_or_else(|| panic!("no record for {line}"));
            assert!(
                (rec["throughput_bps"].as_f64().unwrap() - v).abs() <= 10.0,
                "{line}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, recs.len());

    // markdown: a pipe table with one row per implementation x algorithm x direction.
    let f = temp_file("md.jsonl");
    let md = fmt_run("markdown", &f);
    // The MB/s table: the first pipe table after its title line.
    let rows: Vec<&str> = md
        .lines()
        .skip_while(|l| !l.starts_with("Throughput in MB/s"))
        .skip_while(|l| !l.starts_with("| impl"))
        .skip(2)
        .take_while(|l| l.starts_with("| "))
        .collect();
    assert_eq!(rows.len(), 6, "{md}");
    for r in rows {
        let cells: Vec<&str> = r.trim_matches('|').split('|').map(str::trim).collect();
        assert_eq!(cells.len(), 4 + 2);
        for c in &cells[4..] {
            c.trim_end_matches('~')
                .parse::<f64>()
                .unwrap_or_else(|_| panic!("cell {c}"));
        }
    }

    // table: the default; every measured row appears with numbers, the libraries on top.
    let f = temp_file("table.jsonl");
    let t = fmt_run("table", &f);
    assert!(t.contains("Libraries:") && t.contains("OpenSSL"), "{t}");
    assert!(
        t.lines()
            .any(|l| l.starts_with("ring") && l.contains("aes-128-gcm") && l.contains(" dec ")),
        "{t}"
    );
    assert!(t.contains("CPU seconds per GB"), "{t}");

    // json: covered by its own test; and the JSON Lines file reads back whole.
    for p in ["csv.jsonl", "openssl.jsonl", "md.jsonl", "table.jsonl"] {
        let _ = std::fs::remove_file(temp_file(p));
    }
}

#[test]
fn output_file_appends_runs() {
    let f = temp_file("append.jsonl");
    for _ in 0..2 {
        let o = run(&[
            "speed",
            "--time",
            "0.02",
            "--impl",
            "ring",
            "--alg",
            "sha256",
            "--sizes",
            "64",
            "--output",
            f.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let lines = read_lines(&f);
    assert_eq!(
        lines.iter().filter(|l| l["kind"] == "environment").count(),
        2
    );
    assert_eq!(records_of(&lines).len(), 2);
    // Each run ends with its end line, and the two runs differ.
    assert_eq!(lines.iter().filter(|l| l["kind"] == "end").count(), 2);
    assert_ne!(lines[0]["run_id"], lines[3]["run_id"]);
    let _ = std::fs::remove_file(f);
}

#[test]
fn interrupted_run_keeps_its_finished_points() {
    let f = temp_file("interrupt.jsonl");
    let mut child = common::command()
        .args([
            "speed",
            "--time",
            "0.1",
            "--impl",
            "rustcrypto",
            "--sizes",
            "16,64,256,1k,4k,16k,64k",
            "--output",
        ])
        .arg(&f)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    // Wait for at least two finished points on disk.
    loop {
        let n = std::fs::read_to_string(&f)
            .map(|s| s.lines().count())
            .unwrap_or(0);
        if n >= 3 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no points written"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let before = std::fs::read_to_string(&f).unwrap().lines().count();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .collect::<Vec<_>>();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let lines = read_lines(&f);
    assert!(lines.len() >= before, "points were lost");
    let recs = records_of(&lines);
    // Stopped well before the whole plan (7 sizes x 18 algorithm-directions).
    assert!(recs.len() < 7 * 18, "did not stop: {}", recs.len());
    for r in &recs {
        assert!(r["throughput_bps"].as_f64().unwrap() > 0.0);
    }
    assert!(
        stdout.iter().any(|l| l.contains("Interrupted")),
        "{stdout:?}"
    );
    // The end line lists what was never reached, each with its identity.
    let end = lines
        .iter()
        .find(|l| l["kind"] == "end")
        .expect("an end line");
    assert_eq!(end["interrupted"], true);
    let unreached: Vec<&Value> = end["exclusions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "not_reached")
        .collect();
    assert!(!unreached.is_empty(), "{end}");
    for e in &unreached {
        assert!(
            e["alg"].is_string() && e["size"].is_u64() && e["direction"].is_string(),
            "{e}"
        );
        assert_eq!(e["impl"], "rustcrypto", "{e}");
    }
    // No reached point is listed as unreached.
    for e in &unreached {
        assert!(
            !recs.iter().any(|r| r["alg"] == e["alg"]
                && r["size"] == e["size"]
                && r["direction"] == e["direction"]),
            "{e} was measured"
        );
    }
    let _ = std::fs::remove_file(f);
}

#[test]
fn bad_input_gets_one_line_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["--alg", "rc5"], "rc5"),
        (&["--impl", "nosuchlib"], "nosuchlib"),
        (&["--sizes", "0"], "'0'"),
        (&["--sizes", "65m"], "65m"),
        (&["--sizes", "12q"], "12q"),
        (&["--sizes", "16,,32"], "size"),
        (&["--threads", "0"], "'0'"),
        (&["--threads", "two"], "two"),
        (&["--direction", "sideways"], "sideways"),
        (&["--time", "0"], "--time"),
        (&["--time", "-1"], "-1"),
        (&["--time", "0.5", "--max-time", "0.2"], "--max-time 0.2"),
        (&["--target-ci", "101"], "--target-ci 101"),
        (&["--trial-time", "0.0001"], "--trial-time 0.0001"),
        (&["--time", "0.1", "--trial-time", "0.2"], "at most --time"),
        (&["--target-ci", "nan"], "--target-ci"),
        (&["--libcrypto", "/bin/ls"], "/bin/ls"),
        (
            &["--libcrypto", "/nonexistent/libcrypto.so.3"],
            "/nonexistent/libcrypto.so.3",
        ),
        (&["--format", "xml"], "xml"),
        (&["--no-such-flag"], "--no-such-flag"),
    ];
    for (args, needle) in cases {
        let mut a = vec!["speed"];
        a.extend_from_slice(args);
        let o = run(&a);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{args:?}: not one line: {err}"
        );
        assert!(
            err.contains(needle),
            "{args:?}: does not name the value: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(stdout(&o).is_empty(), "{args:?}: printed results");
    }
}

#[test]
fn threads_report_aggregate_and_per_thread() {
    // Other work taking a core (the point says so) can stall one thread past the other's
    // end, and then the scaling is not observable: measure again, up to five times, until
    // an undisturbed run; five disturbed runs in a row are a skip, never a pass.
    let mut tries = 0;
    let (v, per, agg, mean) = loop {
        tries += 1;
        let v = json(&[
            "speed",
            "--time",
            "0.1",
            "--impl",
            "rustcrypto",
            "--alg",
            "sha256",
            "--sizes",
            "16k",
            "--threads",
            "1,2",
        ]);
        let recs = v["records"].as_array().unwrap();
        let two = recs
            .iter()
            .find(|r| r["threads"] == 2)
            .expect("2-thread record");
        let per: Vec<f64> = two["per_thread_bps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(per.len(), 2);
        let agg = two["throughput_bps"].as_f64().unwrap();
        // Against the threads' mean rate: a thread starved by a busy machine may run
        // alone for a while, but together they always move more than one of them on
        // average.
        let mean = per.iter().sum::<f64>() / per.len() as f64;
        if two["disturbed"] != true || agg > mean {
            break (v.clone(), per, agg, mean);
        }
        eprintln!("try {tries}: the 2-thread point was disturbed by other load ({per:?})");
        if tries == 5 {
            skip("five 2-thread points in a row were disturbed by other load: scaling not observable");
            return;
        }
    };
    let recs = v["records"].as_array().unwrap();
    let two = recs.iter().find(|r| r["threads"] == 2).unwrap();
    assert!(
        agg > mean,
        "aggregate {agg} not above the mean per-thread rate {mean} ({per:?})"
    );
    let eff = two["scaling_efficiency"]
        .as_f64()
        .expect("efficiency against 1 thread");
    assert!(eff > 0.2 && eff < 1.5, "{eff}");
    // The efficiency's CI holds it, and one above 100% beyond its CI is flagged.
    let ci: Vec<f64> = two["scaling_efficiency_ci"]
        .as_array()
        .expect("efficiency CI")
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert!(ci[0] <= eff && eff <= ci[1], "{eff} outside {ci:?}");
    if ci[0] > 1.0 {
        assert_eq!(two["noisy"], true);
    }
    let one = recs.iter().find(|r| r["threads"] == 1).unwrap();
    assert_eq!(one["per_thread_bps"].as_array().unwrap().len(), 1);
}

#[test]
fn list_says_what_is_missing_and_why() {
    let o = run(&["speed", "--list"]);
    assert!(o.status.success());
    let s = stdout(&o);
    for imp in [
        "openssl",
        "aws-lc",
        "ring",
        "rustcrypto",
        "libsodium",
        "boringssl",
    ] {
        assert!(s.contains(imp), "{imp} not listed: {s}");
    }
    assert!(s.lines().any(|l| l.contains("missing aes-128-cbc")), "{s}");
}

#[test]
fn second_libcrypto_is_measured_beside_the_system_one() {
    let path = [
        "/usr/lib/x86_64-linux-gnu/libcrypto.so.3",
        "/usr/lib/aarch64-linux-gnu/libcrypto.so.3",
    ]
    .into_iter()
    .find(|p| std::path::Path::new(p).exists())
    .expect("system libcrypto");
    // A second build (a copy stands in for one): both measured, with unique labels.
    let copy = temp_file("libcrypto-copy.so.3");
    std::fs::copy(path, &copy).unwrap();
    let copy_s = copy.to_str().unwrap();
    let args = |lib: &str| {
        vec![
            "speed",
            "--time",
            "0.02",
            "--impl",
            "openssl",
            "--alg",
            "sha256",
            "--sizes",
            "64",
            "--libcrypto",
            lib,
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>()
    };
    let a = args(copy_s);
    let v = json(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let recs = v["records"].as_array().unwrap();
    assert_eq!(recs.len(), 2, "system and --libcrypto build");
    assert!(recs.iter().any(|r| r["library"] == copy_s));
    let labels: std::collections::BTreeSet<&str> =
        recs.iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(labels.len(), 2, "one label per path: {labels:?}");
    // The system library named again is the same path: measured once, and said so.
    let a = args(path);
    let v = json(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(v["records"].as_array().unwrap().len(), 1);
    assert!(
        v["unavailable"].to_string().contains("measured once"),
        "{}",
        v["unavailable"]
    );
    let _ = std::fs::remove_file(copy);
}

#[test]
fn report_renders_a_saved_file_without_rerunning() {
    let f = temp_file("report.jsonl");
    let o = run(&[
        "speed",
        "--time",
        "0.02",
        "--impl",
        "ring",
        "--alg",
        "sha256",
        "--sizes",
        "64,1k",
        "--output",
        f.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&["report", f.to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let saved = read_lines(&f);
    let recs = v["records"].as_array().unwrap();
    assert_eq!(recs.len(), 2);
    for (r, s) in recs.iter().zip(records_of(&saved)) {
        assert_eq!(r["throughput_bps"], s["throughput_bps"]);
    }
    let o = run(&["report", "/nonexistent.jsonl"]);
    assert_eq!(o.status.code(), Some(2));
    // No usable record (a damaged vpn line): one clear line, exit 2, not an empty table.
    let env = &read_lines(&f)[0];
    let other = temp_file("report-vpn.jsonl");
    std::fs::write(
        &other,
        format!("{env}\n{{\"kind\":\"record\",\"run_id\":\"x\",\"workload\":\"vpn\"}}\n"),
    )
    .unwrap();
    let o = run(&["report", other.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no records"), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim_end().lines().count(), 1);
    let _ = std::fs::remove_file(other);
    let _ = std::fs::remove_file(f);
}

/// `--format openssl` never prints a rate for a point that was not measured: a size an
/// algorithm cannot take (CBC at 15 bytes) is "-", as in the table, not "0.00".
#[test]
fn openssl_format_shows_unmeasured_points_as_a_dash() {
    let o = run(&[
        "speed",
        "--impl",
        "ring,rustcrypto",
        "--alg",
        "aes-128-cbc,sha256",
        "--sizes",
        "15,16",
        "--time",
        "0.02",
        "--format",
        "openssl",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let cbc: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("AES-128-CBC") && !l.starts_with("~"))
        .collect();
    assert!(!cbc.is_empty(), "no CBC line in:\n{out}");
    for l in &cbc {
        let cells: Vec<&str> = l.split_whitespace().collect();
        let n = cells.len();
        assert_eq!(cells[n - 2], "-", "15 bytes was never measured: {l}");
        assert!(
            cells[n - 1].ends_with('k') || cells[n - 1].parse::<f64>().is_ok(),
            "{l}"
        );
        assert!(!l.contains(" 0.00"), "{l}");
    }
    // sha256 takes any size: both measured.
    let sha = out
        .lines()
        .find(|l| l.contains("sha256"))
        .expect("sha256 line");
    assert!(!sha.contains(" - "), "{sha}");
}
