use super::*;
use crate::record::identity::KeyValue;
use crate::record::read::{parse_line, Line};
use serde_json::{json, Value};

const FIXTURE: &str = include_str!("../../../tests/fixtures/schema1-mixed.jsonl");

/// A speed record from the fixture's template with the given point and trials.
fn speed(label: &str, alg: &str, size: u64, samples: &[f64]) -> AnyRecord {
    let mut v: Value = FIXTURE
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["kind"] == "record" && v["workload"] == "speed")
        .unwrap();
    v["impl"] = json!(label);
    v["label"] = json!(label);
    v["variant"] = Value::Null;
    v["alg"] = json!(alg);
    v["size"] = json!(size);
    v["samples_bps"] = json!(samples);
    v["throughput_bps"] = json!(median(samples));
    v["throughput_bps_ci"] = Value::Null;
    match parse_line(&v.to_string()).unwrap() {
        Line::Record(r) => *r,
        _ => unreachable!(),
    }
}

/// Trials around `centre` with a ±2 % deterministic spread.
fn trials(centre: f64) -> Vec<f64> {
    [0.98, 0.99, 1.0, 1.01, 1.02, 0.995, 1.005]
        .iter()
        .map(|f| centre * f)
        .collect()
}

#[test]
fn a_tenfold_drop_is_regressed_and_equal_trials_are_unchanged() {
    let base = [
        speed("openssl", "aes-128-gcm", 16, &trials(1e9)),
        speed("openssl", "aes-128-gcm", 16384, &trials(4e9)),
        speed("openssl", "sha256", 16, &trials(5e8)),
    ];
    let new = [
        speed("openssl", "aes-128-gcm", 16, &trials(1e8)),
        speed("openssl", "aes-128-gcm", 16384, &trials(4e9)),
        speed("openssl", "sha256", 16, &trials(6e8)),
    ];
    let c = compare(
        &points(base.iter(), None, None),
        &points(new.iter(), None, None),
        0.05,
        None,
    );
    assert_eq!(c.pairs.len(), 3);
    let by_size = |alg: &str, size: u64| {
        c.pairs
            .iter()
            .find(|p| {
                p.identity.keys["alg"] == KeyValue::Text(alg.into())
                    && p.identity.keys["size"] == KeyValue::Num(size)
            })
            .unwrap()
    };
    let drop = by_size("aes-128-gcm", 16);
    assert!((drop.ratio - 0.1).abs() < 1e-9, "{drop:?}");
    let ci = drop.ratio_ci.unwrap();
    assert!(ci[0] <= 0.1 && 0.1 <= ci[1] && ci[1] < 0.11);
    assert_eq!(drop.verdict, Verdict::Regressed);
    let same = by_size("aes-128-gcm", 16384);
    let ci = same.ratio_ci.unwrap();
    assert!((same.ratio - 1.0).abs() < 1e-9 && ci[0] < 1.0 && ci[1] > 1.0);
    assert_eq!(same.verdict, Verdict::Unchanged);
    assert_eq!(by_size("sha256", 16).verdict, Verdict::Improved);
    // Geomean of 0.1, 1.0 and 1.2.
    let s = &c.summary[0];
    assert_eq!(
        (s.label.as_str(), s.points, s.regressed, s.improved),
        ("openssl", 3, 1, 1)
    );
    assert!(
        (s.geomean_ratio - (0.1f64 * 1.2).powf(1.0 / 3.0)).abs() < 1e-9,
        "{s:?}"
    );
}

#[test]
fn a_change_under_the_threshold_or_inside_the_interval_is_unchanged() {
    // 3 % faster with tight trials: significant but under a 5 % threshold.
    let (r, ci) = ratio_ci(&trials(1e9), &trials(1.03e9));
    assert!(ci[0] > 1.0, "{ci:?}");
    assert_eq!(verdict(r, ci, 0.05), Verdict::Unchanged);
    assert_eq!(verdict(r, ci, 0.01), Verdict::Improved);
    // 20 % slower but trials spread from 0.5x to 1.5x: the interval holds 1.
    let wide: Vec<f64> = [0.5, 0.7, 0.9, 1.0, 1.1, 1.3, 1.5]
        .iter()
        .map(|f| f * 1e9)
        .collect();
    let narrow_new: Vec<f64> = wide.iter().map(|x| x * 0.8).collect();
    let (r, ci) = ratio_ci(&wide, &narrow_new);
    assert!((r - 0.8).abs() < 1e-9 && ci[1] > 1.0, "{r} {ci:?}");
    assert_eq!(verdict(r, ci, 0.05), Verdict::Unchanged);
}

#[test]
fn points_on_one_side_are_listed_and_labels_can_meet() {
    let one_file = [
        speed("openssl", "aes-128-gcm", 16, &trials(2e9)),
        speed("openssl", "aes-128-gcm", 1024, &trials(3e9)),
        speed("openssl [isa=no-aesni]", "aes-128-gcm", 16, &trials(2e8)),
        speed("openssl [isa=no-aesni]", "aes-128-gcm", 64, &trials(2e8)),
    ];
    let base = points(one_file.iter(), Some("openssl"), Some("openssl"));
    let new = points(
        one_file.iter(),
        Some("openssl [isa=no-aesni]"),
        Some("openssl"),
    );
    let c = compare(&base, &new, 0.05, Some("openssl [isa=no-aesni]"));
    assert_eq!(c.pairs.len(), 1);
    assert_eq!(c.pairs[0].verdict, Verdict::Regressed);
    assert_eq!(c.only_in_base[0].keys["size"], KeyValue::Num(1024));
    assert_eq!(c.only_in_new[0].keys["size"], KeyValue::Num(64));
    let v = serde_json::to_value(&c.pairs[0]).unwrap();
    assert_eq!(v["impl"], "openssl");
    assert_eq!(v["new_impl"], "openssl [isa=no-aesni]");
    assert_eq!(v["size"], 16);
    assert_eq!(v["verdict"], "regressed");
}

/// `speed` with another run id.
fn in_run(run: &str, mut rec: AnyRecord) -> AnyRecord {
    if let AnyRecord::Speed(r) = &mut rec {
        r.run_id = run.into();
    }
    rec
}

#[test]
fn records_of_one_run_pool_their_trials_and_several_runs_give_one_median_each() {
    let recs = [
        speed("ring", "sha256", 16, &[1.0, 2.0]),
        speed("ring", "sha256", 16, &[3.0]),
    ];
    let p = points(recs.iter(), None, None);
    assert_eq!(p.len(), 1);
    let one_run = p.values().next().unwrap();
    assert_eq!(
        (one_run.values.as_slice(), one_run.runs, one_run.trials),
        (&[1.0, 2.0, 3.0][..], 1, 3)
    );
    let runs = [
        in_run("r1", speed("ring", "sha256", 16, &[1.0, 2.0, 9.0])),
        in_run("r2", speed("ring", "sha256", 16, &[4.0, 5.0, 6.0])),
        in_run("r1", speed("ring", "sha256", 16, &[3.0])),
    ];
    let p = points(runs.iter(), None, None);
    let t = p.values().next().unwrap();
    // r1 pools 1, 2, 9, 3 (median 2.5); r2's median is 5.
    assert_eq!(
        (t.values.as_slice(), t.runs, t.trials),
        (&[2.5, 5.0][..], 2, 7)
    );
    assert!((geomean([2.0, 8.0].into_iter()) - 4.0).abs() < 1e-12);
}

#[test]
fn the_interval_matches_bonett_and_price() {
    // The example of statpsych's ci.ratio.median2 (Bonett's R package): median1/median2
    // = 1.162162 with the 95% interval [0.927667, 1.455933].
    let y1 = [36.0, 44.0, 47.0, 42.0, 49.0, 39.0, 46.0, 31.0, 33.0, 48.0];
    let y2 = [
        32.0, 39.0, 26.0, 35.0, 43.0, 27.0, 40.0, 37.0, 34.0, 29.0, 49.0, 42.0, 40.0,
    ];
    let (r, ci) = ratio_ci(&y2, &y1);
    assert!((r - 1.162162).abs() < 1e-6, "{r}");
    assert!((ci[0] - 0.927667).abs() < 1e-6, "{ci:?}");
    assert!((ci[1] - 1.455933).abs() < 1e-6, "{ci:?}");
    // One value on each side: no interval; one on one side: only the other's error.
    assert_eq!(ratio_ci(&[2.0], &[3.0]), (1.5, [1.5, 1.5]));
    let (_, ci) = ratio_ci(&[2.0], &y1);
    assert!(ci[0] < 1.0 / 2.0 * 43.0 && ci[1] > 43.0 / 2.0);
}

#[test]
fn many_runs_cost_one_interval_per_point() {
    // 2,000 runs of 5 trials: the interval comes from 2,000 per-run medians, and a 2 %
    // drop across every run is found even though each run's trials spread by 4 %.
    let base: Vec<AnyRecord> = (0..2000)
        .map(|k| in_run(&format!("b{k}"), speed("ring", "sha256", 16, &trials(1e9))))
        .collect();
    let new: Vec<AnyRecord> = (0..2000)
        .map(|k| {
            in_run(
                &format!("n{k}"),
                speed("ring", "sha256", 16, &trials(0.98e9)),
            )
        })
        .collect();
    let (b, n) = (
        points(base.iter(), None, None),
        points(new.iter(), None, None),
    );
    let t = b.values().next().unwrap();
    assert_eq!((t.values.len(), t.runs, t.trials), (2000, 2000, 14000));
    let c = compare(&b, &n, 0.01, None);
    let p = &c.pairs[0];
    assert!(
        (p.ratio - 0.98).abs() < 1e-9 && p.ratio_ci.unwrap()[1] < 1.0,
        "{p:?}"
    );
    assert_eq!(
        (p.base_runs, p.new_runs, p.verdict),
        (2000, 2000, Verdict::Regressed)
    );
}

/// One trial a side has no interval: the pair claims none (null), rather than [x, x].
#[test]
fn one_trial_a_side_claims_no_interval() {
    let base = [speed("openssl", "aes-128-gcm", 16, &[1e9])];
    let new = [speed("openssl", "aes-128-gcm", 16, &[1e9])];
    let c = compare(
        &points(base.iter(), None, None),
        &points(new.iter(), None, None),
        0.05,
        None,
    );
    let p = &c.pairs[0];
    assert_eq!(p.ratio, 1.0);
    assert_eq!(p.ratio_ci, None, "{p:?}");
    assert_eq!(p.bounds(), [1.0, 1.0]);
    assert_eq!(p.verdict, Verdict::Unchanged);
    // Several trials on one side: an interval again.
    let new = [speed("openssl", "aes-128-gcm", 16, &trials(1e9))];
    let c = compare(
        &points(base.iter(), None, None),
        &points(new.iter(), None, None),
        0.05,
        None,
    );
    assert!(c.pairs[0].ratio_ci.is_some());
}

/// Compare reads a side run by run: once a point has two runs, only one median per run is
/// held, not the trials (a year of runs held as records took 231 MB), and the medians come
/// out in the order of the runs' ids whatever order the runs came in.
#[test]
fn points_hold_one_median_per_run_once_a_point_has_two() {
    let mut side = Points::new(None, None);
    let (a, b, c) = (
        speed("ring", "sha256", 16, &[7.0, 8.0, 9.0]),
        speed("ring", "sha256", 16, &[1.0, 2.0, 3.0]),
        speed("ring", "sha256", 16, &[4.0, 5.0, 6.0]),
    );
    side.add_run("r3", std::iter::once(&a));
    let held = |s: &Points| {
        let p = s.by_id.values().next().unwrap();
        (p.first.1.len(), p.medians.len())
    };
    assert_eq!(held(&side), (3, 0), "one run: its trials");
    side.add_run("r1", std::iter::once(&b));
    side.add_run("r2", std::iter::once(&c));
    assert_eq!(held(&side), (0, 3), "three runs: a median each, no trials");
    let t = side.finish().into_values().next().unwrap();
    assert_eq!(
        (t.values.as_slice(), t.runs, t.trials),
        (&[2.0, 5.0, 8.0][..], 3, 9)
    );
}
