//! `cryptobench speed` with no arguments, the README's first command: the matrix it
//! measures, the bound its budget puts on its length, and the precision line it ends with.
//! Speeds are never asserted.

mod common;
use common::{command, stderr, stdout};

use serde_json::Value;
use std::collections::BTreeSet;

/// The libraries the README's figures for the default run are of (a build with BoringSSL,
/// or a kernel with AF_ALG, measures more paths).
const README_LIBRARIES: [&str; 5] = ["openssl", "aws-lc", "ring", "rustcrypto", "libsodium"];

/// The README's goal for the default run on a busy machine, in seconds, and what the
/// warm-ups, the correctness gate and the bookkeeping between trials take beside the
/// trials (about 8 s on a 2-CPU machine at load 4).
const BUSY_GOAL_S: f64 = 45.0;
const BESIDE_TRIALS_S: f64 = 8.0;

#[test]
fn the_default_run_measures_each_operation_once_within_its_budget_and_says_how_precise() {
    // The default matrix at a tenth of its budget: the matrix and the precision line are
    // the default run's; the budget's bound is checked on the default settings below.
    let file =
        std::env::temp_dir().join(format!("cryptobench-default-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let o = command()
        .args(["speed", "--time", "0.01", "--no-store", "--output"])
        .arg(&file)
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<Value> = std::fs::read_to_string(&file)
        .expect("the run's lines")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON"))
        .collect();
    let _ = std::fs::remove_file(&file);
    let recs: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "record").collect();

    // Every operation once: the everyday algorithms, both directions of a cipher but CTR's
    // (its decryption is its encryption), the seven sizes (CBC without 1350).
    let groups: BTreeSet<(String, String, u64)> = recs
        .iter()
        .map(|r| {
            (
                r["alg"].as_str().unwrap().to_string(),
                r["direction"].as_str().unwrap().to_string(),
                r["size"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut expected = BTreeSet::new();
    for alg in common::DEFAULT_ALGS {
        let dirs: &[&str] = match alg {
            a if a.contains("gcm") || a.contains("cbc") || a.contains("chacha") => &["enc", "dec"],
            _ => &["enc"],
        };
        for dir in dirs {
            for size in [16, 64, 256, 1024, 1350, 8192, 16384] {
                if !(alg.contains("cbc") && size == 1350) {
                    expected.insert((alg.to_string(), dir.to_string(), size));
                }
            }
        }
    }
    assert_eq!(groups, expected);

    // The budget bounds the run: its trials never take longer than every point's budget
    // together (the savings rule), so at the default --time the README's libraries'
    // points leave the gate and warm-ups room within the busy goal.
    let points = recs
        .iter()
        .filter(|r| README_LIBRARIES.contains(&r["impl"].as_str().unwrap()))
        .count();
    let one = command()
        .args([
            "speed", "--impl", "ring", "--alg", "sha256", "--sizes", "16",
        ])
        .args(["--no-store", "--format", "json"])
        .output()
        .expect("runs");
    assert!(one.status.success(), "{}", stderr(&one));
    let v: Value = serde_json::from_slice(&one.stdout).expect("JSON");
    let settings = &v["environment"]["settings"];
    let time = settings["time_per_point_s"].as_f64().unwrap();
    assert!(
        points as f64 * time + BESIDE_TRIALS_S <= BUSY_GOAL_S,
        "{points} points x {time} s per point"
    );
    assert_eq!(settings["target_ci_pct"], 1.0);
    // JSON carries the precision too.
    let p = &v["analysis"]["precision"];
    assert_eq!(p["points"], 1, "{p}");
    let ci = v["records"][0]["ci_pct"].as_f64().unwrap();
    assert!(
        (p["median_ci_pct"].as_f64().unwrap() - ci).abs() < 1e-9,
        "{p}"
    );

    // Each point says why it stopped; one stopped at its target reached it.
    let env = &lines[0]["settings"];
    let target = env["target_ci_pct"].as_f64().unwrap();
    let min_trials = env["min_trials"].as_u64().unwrap();
    let mut stops = [0usize; 3];
    for r in &recs {
        let ci = r["ci_pct"].as_f64().unwrap();
        match r["stop_reason"].as_str().unwrap() {
            "target_ci" => {
                assert!(ci <= target, "{r}");
                assert!(r["trials"].as_u64().unwrap() >= min_trials, "{r}");
                stops[0] += 1;
            }
            "budget" => stops[1] += 1,
            "max_time" => stops[2] += 1,
            other => panic!("stopped by {other}: {r}"),
        }
    }

    // The table ends with the run's precision: the median CI and how the points stopped.
    let mut ci: Vec<f64> = recs.iter().map(|r| r["ci_pct"].as_f64().unwrap()).collect();
    ci.sort_by(f64::total_cmp);
    let n = ci.len();
    let median = if n % 2 == 1 {
        ci[n / 2]
    } else {
        (ci[n / 2 - 1] + ci[n / 2]) / 2.0
    };
    let table = stdout(&o);
    let last = table.lines().rev().find(|l| !l.trim().is_empty()).unwrap();
    assert!(
        last.starts_with(&format!(
            "Precision: median CI half-width ±{median:.2}% over {n} points (target ±1%)"
        )),
        "{last}"
    );
    for (count, what) in stops.iter().zip([
        "at the target",
        "at their budget (--time) short of it",
        "at --max-time short of it",
    ]) {
        assert_eq!(
            *count > 0,
            last.contains(&format!("{count} {what}")),
            "{what}: {last}"
        );
    }
}
