//! Property tests over command lines and record files: no panic ever, every bad input is
//! one line naming the value with exit 2, and every exit-0 `--format json` parses.
//! Cases: CRYPTOBENCH_FUZZ_CASES (default 600 command lines; each is a process).

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::process::Command;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_cryptobench")
}

fn cases(default: u32) -> u32 {
    std::env::var("CRYPTOBENCH_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
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

fn flag() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("--impl"),
        Just("--alg"),
        Just("--sizes"),
        Just("--threads"),
        Just("--time"),
        Just("--direction"),
        Just("--variant"),
        Just("--format"),
        Just("--crossover"),
        Just("--libcrypto"),
        Just("--bogus-flag"),
    ]
}

#[test]
fn command_lines_never_panic_and_bad_input_is_one_line() {
    let mut runner = TestRunner::new(Config {
        cases: cases(600),
        failure_persistence: None,
        ..Config::default()
    });
    let args = proptest::collection::vec((flag(), value()), 0..4);
    runner
        .run(&args, |pairs| {
            // A tiny valid base, so that an accepted line finishes in a moment.
            let mut argv: Vec<String> = [
                "speed", "--impl", "ring", "--alg", "sha256", "--sizes", "16", "--time", "0.01",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            for (f, v) in &pairs {
                argv.push(f.to_string());
                argv.push(v.clone());
            }
            let json = !pairs.iter().any(|(f, _)| *f == "--format");
            if json {
                argv.push("--format".into());
                argv.push("json".into());
            }
            let o = Command::new(bin()).args(&argv).output().unwrap();
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
                Some(0) | Some(1) => {}
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
                other => prop_assert!(false, "{argv:?}: exit {other:?}: {err}"),
            }
            Ok(())
        })
        .unwrap();
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
    // The good lines go last, so they are kept whatever came before them.
    text.push_str(&good);
    let path = std::env::temp_dir().join(format!("cb-fuzz-{}.jsonl", std::process::id()));
    std::fs::write(&path, &text).unwrap();
    for format in ["table", "json", "csv", "markdown"] {
        let o = Command::new(bin())
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
            assert!(recs.len() >= 7, "the good lines are kept: {}", recs.len());
        }
    }
    let _ = std::fs::remove_file(path);
}
