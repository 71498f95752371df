//! Property tests over command lines and record files: no panic ever, every bad input is
//! one line naming the value with exit 2, and every exit-0 `--format json` parses.
//! Cases: CRYPTOBENCH_FUZZ_CASES (default 600 command lines; each is a process).

mod common;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// CRYPTOBENCH_FUZZ_CASES, else `default`. Zero cases test nothing: that goes through
/// the skip rule (a failure under CRYPTOBENCH_REQUIRE_ALL=1), never a silent pass.
fn cases(default: u32) -> u32 {
    let Ok(v) = std::env::var("CRYPTOBENCH_FUZZ_CASES") else {
        return default;
    };
    let n: u32 = v
        .parse()
        .unwrap_or_else(|_| panic!("CRYPTOBENCH_FUZZ_CASES={v}: give a whole number of cases"));
    if n == 0 {
        common::skip("CRYPTOBENCH_FUZZ_CASES=0: no fuzz case runs");
    }
    n
}

/// Values that break parsers: empty, negative, huge, NaN, control bytes, long.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("-1".to_string()),
        Just("0".to_string()),
        Just("1e308".to_string()),
        Just("nan".to_string()),
        Just("inf".to_string()),
        Just(",".to_string()),
        Just("1,,2".to_string()),
        Just("16,1k".to_string()),
        Just("\u{1b}[31mred".to_string()),
        Just("x".repeat(5000)),
        Just("isa=bogus".to_string()),
        Just("aes-*".to_string()),
        "[a-z0-9=,.*-]{0,12}",
    ]
}

/// Random (flag, value) pairs after `base`: never a panic or a hang; exit 0 with `--format
/// json` (added when no format was drawn) prints one JSON document; a bad input (exit 2)
/// is one line naming it; any other exit is one of `codes`.
fn fuzz_command_lines(base: &[&str], flags: Vec<&'static str>, codes: &[i32], cases: u32) {
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let flag = proptest::sample::select(flags);
    let args = proptest::collection::vec((flag, value()), 0..4);
    runner
        .run(&args, |pairs| {
            let mut argv: Vec<String> = base.iter().map(|s| s.to_string()).collect();
            for (f, v) in &pairs {
                argv.push(f.to_string());
                // A flag that takes no value is followed by the value as a positional.
                argv.push(v.clone());
            }
            let json = !pairs.iter().any(|(f, _)| *f == "--format");
            if json {
                argv.push("--format".into());
                argv.push("json".into());
            }
            let o = common::command().args(&argv).output().unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            prop_assert!(!err.contains("panicked"), "{argv:?}: {err}");
            match o.status.code() {
                Some(0) if json => {
                    let out = String::from_utf8_lossy(&o.stdout);
                    prop_assert!(
                        serde_json::from_str::<serde_json::Value>(&out).is_ok(),
                        "{argv:?}: not JSON: {out}"
                    );
                }
                Some(2) => {
                    let lines: Vec<&str> = err.trim_end().lines().collect();
                    prop_assert_eq!(lines.len(), 1, "{:?}: {}", argv, err);
                    prop_assert!(lines[0].starts_with("cryptobench: "), "{argv:?}: {err}");
                    prop_assert!(
                        lines[0].len() < 700,
                        "{argv:?}: a line of {}",
                        lines[0].len()
                    );
                }
                Some(c) if c == 0 || codes.contains(&c) => {}
                other => prop_assert!(false, "{argv:?}: exit {other:?}: {err}"),
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn command_lines_never_panic_and_bad_input_is_one_line() {
    // A tiny valid base, so that an accepted line finishes in a moment.
    let base = [
        "speed", "--impl", "ring", "--alg", "sha256", "--sizes", "16", "--time", "0.01",
    ];
    let flags = vec![
        "--impl",
        "--alg",
        "--sizes",
        "--threads",
        "--time",
        "--direction",
        "--variant",
        "--format",
        "--crossover",
        "--libcrypto",
        "--bogus-flag",
    ];
    fuzz_command_lines(&base, flags, &[1], cases(600));
}

/// compare of two real fixtures, with its labels, threshold, gate and store flags drawn;
/// 3 (regression) and 4 (points missing) are the gate's own exits.
#[test]
fn compare_command_lines() {
    let f = common::fixture("schema1-mixed.jsonl");
    let f = f.to_str().unwrap();
    let flags = vec![
        "--a",
        "--b",
        "--threshold",
        "--fail-on-regression",
        "--allow-missing",
        "--format",
        "--store",
        "--bogus-flag",
    ];
    fuzz_command_lines(&["compare", f, f], flags, &[1, 3, 4], cases(150));
}

/// history's listing and subcommands against a private store (never the user's).
#[test]
fn history_command_lines() {
    let store = format!(
        "sqlite:{}",
        std::env::temp_dir()
            .join(format!("cb-fuzz-history-{}.db", std::process::id()))
            .display()
    );
    for sub in [
        &[][..],
        &["show"],
        &["tag"],
        &["rm"],
        &["export"],
        &["import"],
    ] {
        let mut base = vec!["history", "--store", store.as_str()];
        base.extend_from_slice(sub);
        let flags = vec![
            "--machine",
            "--workload",
            "--since",
            "--tag",
            "--limit",
            "--format",
            "--force",
            "--store",
            "--bogus-flag",
        ];
        fuzz_command_lines(&base, flags, &[1], cases(40));
    }
    let _ = std::fs::remove_file(store.trim_start_matches("sqlite:"));
}

/// study: names, flags and formats drawn (a real study name is never drawn, so nothing
/// long runs); `--list` exits 0 at once.
#[test]
fn study_command_lines() {
    let flags = vec![
        "--list",
        "--quick",
        "--guest",
        "--libcrypto",
        "--output",
        "--format",
        "--bogus-flag",
    ];
    fuzz_command_lines(&["study"], flags, &[1], cases(150));
}

/// verify of one fast path, with its path flags drawn; 1 is "a check failed or nothing
/// was checked".
#[test]
fn verify_command_lines() {
    let base = ["verify", "--impl", "ring", "--alg", "sha256"];
    let flags = vec![
        "--impl",
        "--alg",
        "--variant",
        "--libcrypto",
        "--format",
        "--bogus-flag",
    ];
    fuzz_command_lines(&base, flags, &[1], cases(150));
}

/// One mutation of a good line: a cut, a flipped byte, a field set to a strange value.
fn mutate(line: &str, seed: u64) -> String {
    let b = line.as_bytes();
    let at = (seed as usize) % b.len().max(1);
    match seed % 5 {
        0 => String::from_utf8_lossy(&b[..at]).into_owned(),
        1 => {
            let mut v = b.to_vec();
            v[at] ^= 1 << (seed % 8);
            String::from_utf8_lossy(&v).into_owned()
        }
        2 => line.replacen("\"trials\":", "\"trials\":-", 1),
        3 => line.replacen("\"throughput_bps\":", "\"throughput_bps\":1e400,\"x\":", 1),
        _ => line.replacen("\"label\":\"", "\"label\":\"\\u001b[2J", 1),
    }
}

#[test]
fn mutated_record_files_never_panic_and_keep_the_good_lines() {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/schema1-mixed.jsonl"
    );
    let good = std::fs::read_to_string(fixture).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    let n = cases(2000) as u64;
    let mut text = String::new();
    for seed in 0..n {
        let l = lines[(seed as usize) % lines.len()];
        text.push_str(&mutate(l, seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 7));
        text.push('\n');
    }
    // The good lines go last, under run ids no mutation can make (a mutated copy of a
    // point is the same point and would be counted once, first come), so they are kept
    // whatever came before them.
    let kept = good.replace("\"run_id\":\"", "\"run_id\":\"good-");
    text.push_str(&kept);
    let path = std::env::temp_dir().join(format!("cb-fuzz-{}.jsonl", std::process::id()));
    std::fs::write(&path, &text).unwrap();
    for format in ["table", "json", "csv", "markdown"] {
        let o = common::command()
            .args(["report", path.to_str().unwrap(), "--format", format])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{format}: {err}");
        assert_eq!(o.status.code(), Some(0), "{format}: {err}");
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(
            !out.contains('\u{1b}'),
            "{format}: a control character reached the output"
        );
        if format == "json" {
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            let recs = v["records"].as_array().unwrap();
            // Every good record is there, by content: its run, workload and throughput.
            let mut found = 0;
            for g in kept
                .lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            {
                if g["kind"] != "record" {
                    continue;
                }
                let same = |r: &&serde_json::Value| {
                    r["run_id"] == g["run_id"]
                        && r["workload"] == g["workload"]
                        && r["throughput_bps"] == g["throughput_bps"]
                };
                let n = recs.iter().filter(same).count();
                assert_eq!(n, 1, "good record kept once: {g}");
                found += 1;
            }
            assert_eq!(found, 5, "the fixture's five records");
        }
    }
    let _ = std::fs::remove_file(path);
}
