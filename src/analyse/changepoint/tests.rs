use super::*;
use crate::analyse::bootstrap::Rng;

/// Normal noise around `mean` with standard deviation `sd` (Box-Muller).
pub fn normal(rng: &mut Rng, mean: f64, sd: f64) -> f64 {
    let u = rng.unit().max(f64::MIN_POSITIVE);
    let v = rng.unit();
    mean + sd * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

fn noise(rng: &mut Rng, n: usize, mean: f64, sd: f64) -> Vec<f64> {
    (0..n).map(|_| normal(rng, mean, sd)).collect()
}

fn indices(series: &[f64], s: &Settings) -> Vec<usize> {
    detect(series, s)
        .change_points
        .iter()
        .map(|c| c.index)
        .collect()
}

#[test]
fn q_hat_matches_its_definition() {
    // Q̂ straight from its formula, at every split, against the prefix-sum form.
    let mut rng = Rng::new(7);
    let w = noise(&mut rng, 12, 10.0, 2.0);
    let pairs = |a: &[f64], b: &[f64]| -> f64 {
        a.iter()
            .flat_map(|x| b.iter().map(move |y| (x - y).abs()))
            .sum()
    };
    let within = |a: &[f64]| -> f64 {
        (0..a.len())
            .flat_map(|i| (i + 1..a.len()).map(move |k| (i, k)))
            .map(|(i, k)| (a[i] - a[k]).abs())
            .sum()
    };
    let (a, b) = (2, 11);
    let mut best = (0, f64::NEG_INFINITY);
    for tau in a + 1..b {
        for kappa in tau + 1..=b {
            let (x, y) = (&w[a..tau], &w[tau..kappa]);
            let (n, m) = (x.len() as f64, y.len() as f64);
            let mut q = 2.0 / (m + n) * pairs(x, y);
            if n > 1.0 {
                q -= 2.0 * m / ((m + n) * (n - 1.0)) * within(x);
            }
            if m > 1.0 {
                q -= 2.0 * n / ((m + n) * (m - 1.0)) * within(y);
            }
            if q > best.1 {
                best = (tau, q);
            }
        }
    }
    let got = ColumnPrefix::new(&w).candidate(a, b).unwrap();
    assert_eq!(got.0, best.0);
    assert!(
        (got.1 - best.1).abs() < 1e-9 * best.1.abs().max(1.0),
        "{got:?} {best:?}"
    );
}

#[test]
fn t_test_matches_a_textbook_value() {
    // Means 10 and 11, standard deviations over n of 1, 10 values a side: t = √5 with 18
    // degrees of freedom, two-sided p = 0.038250 (the t density integrated numerically).
    let left = [9.0, 11.0, 9.0, 11.0, 9.0, 11.0, 9.0, 11.0, 9.0, 11.0];
    let right: Vec<f64> = left.iter().map(|x| x + 1.0).collect();
    let p = t_test(&left, &right);
    assert!((p - 0.038250).abs() < 1e-5, "{p}");
}

#[test]
fn a_step_is_found_where_it_is() {
    let mut rng = Rng::new(1);
    let mut s = noise(&mut rng, 40, 100.0, 1.0);
    s.extend(noise(&mut rng, 40, 110.0, 1.0));
    let d = detect(&s, &Settings::default());
    assert_eq!(d.change_points.len(), 1, "{:?}", d.change_points);
    let c = d.change_points[0];
    assert_eq!(c.index, 40);
    assert_eq!(c.kind, Kind::Mean);
    assert!((c.mean_after / c.mean_before - 1.10).abs() < 0.01, "{c:?}");
    assert!(c.pvalue < 1e-6);
}

#[test]
fn several_steps_over_many_windows() {
    let mut rng = Rng::new(2);
    let mut s = Vec::new();
    for mean in [100.0, 90.0, 90.0, 120.0, 100.0] {
        s.extend(noise(&mut rng, 45, mean, 1.5));
    }
    // 90 then 90 again is no change.
    assert_eq!(indices(&s, &Settings::default()), vec![45, 135, 180]);
}

#[test]
fn a_slow_drift_is_cut_in_its_direction() {
    // 20% up over 100 runs, noise 1%: not a step, but the series did move, and every cut
    // says up.
    let mut rng = Rng::new(3);
    let s: Vec<f64> = (0..100)
        .map(|i| normal(&mut rng, 100.0 + 0.2 * i as f64, 1.0))
        .collect();
    let d = detect(&s, &Settings::default());
    assert!(!d.change_points.is_empty());
    assert!(d.change_points.iter().all(|c| c.mean_after > c.mean_before));
    // A flat series of the same noise has none.
    let flat = noise(&mut rng, 100, 100.0, 1.0);
    assert_eq!(indices(&flat, &Settings::default()), Vec::<usize>::new());
}

/// Flat noise over many windows: each window picks its best split, so without the
/// p-value shared among them 10,000 runs gave 2 change points at 0.001.
#[test]
fn long_flat_noise_has_no_change_point() {
    for seed in 1..=5 {
        let mut rng = Rng::new(seed);
        let flat = noise(&mut rng, 10_000, 100.0, 1.0);
        let d = detect(&flat, &Settings::default());
        assert_eq!(d.change_points, [], "seed {seed}");
    }
}

#[test]
fn a_change_in_spread_alone_is_caught_where_a_mean_test_is_not() {
    let mut rng = Rng::new(4);
    let mut s = noise(&mut rng, 40, 100.0, 0.5);
    s.extend(noise(&mut rng, 40, 100.0, 6.0));
    let d = detect(&s, &Settings::default());
    assert_eq!(d.change_points.len(), 1, "{:?}", d.change_points);
    let c = d.change_points[0];
    assert_eq!(c.kind, Kind::Spread);
    assert!((38..=42).contains(&c.index), "{c:?}");
    // The means alone (Otava's test) see nothing there.
    assert!(t_test(&s[..c.index], &s[c.index..]) > 0.05);
    let mean_only = Settings {
        spread: false,
        ..Settings::default()
    };
    assert_eq!(indices(&s, &mean_only), Vec::<usize>::new());
}

/// Two runs a side say nothing about spread: each one's distance from their median is the
/// same, so a Brown-Forsythe test between such sides had zero variance and called any
/// difference certain. In trend_cli's twelve runs (a library change, run-to-run noise)
/// that made five "spread" change points at p < 1e-26, every side two runs long.
#[test]
fn two_runs_a_side_are_no_evidence_of_spread() {
    let s: Vec<f64> = [
        (1050.0, 1054.0),
        (1047.0, 1057.0),
        (1051.0, 1053.0),
        (1046.0, 1058.0),
        (252.0, 256.0),
        (250.0, 258.0),
        (253.0, 255.0),
    ]
    .iter()
    .flat_map(|&(a, b)| [a, b])
    .collect();
    let d = detect(&s, &Settings::default());
    assert_eq!(
        d.change_points.iter().map(|c| c.index).collect::<Vec<_>>(),
        vec![8],
        "{:?}",
        d.change_points
    );
    // Sides of two: the mean test alone decides.
    let c = significance(2, &s[..2], &s[2..4], true);
    assert_eq!(c.kind, Kind::Mean);
    assert_eq!(c.pvalue, t_test(&s[..2], &s[2..4]));
}

#[test]
fn a_single_outlier_is_no_change() {
    let mut rng = Rng::new(5);
    let mut s = noise(&mut rng, 60, 100.0, 1.0);
    s[30] = 150.0;
    assert_eq!(indices(&s, &Settings::default()), Vec::<usize>::new());
}

#[test]
fn empty_and_short_series_make_no_claim() {
    let s = Settings::default();
    for series in [&[][..], &[1.0], &[1.0, 2.0], &[1.0, 1.0, 5.0], &[3.0; 10]] {
        assert_eq!(indices(series, &s), Vec::<usize>::new(), "{series:?}");
    }
}

#[test]
fn min_magnitude_drops_small_changes() {
    let mut rng = Rng::new(6);
    let mut s = noise(&mut rng, 40, 100.0, 0.2);
    s.extend(noise(&mut rng, 40, 102.0, 0.2));
    assert_eq!(indices(&s, &Settings::default()), vec![40]);
    let five_pct = Settings {
        min_magnitude: 0.05,
        ..Settings::default()
    };
    assert_eq!(indices(&s, &five_pct), Vec::<usize>::new());
}

/// The Python of a venv holding Apache Otava (scripts/deps/trend.sh makes it).
fn otava_python() -> Option<std::path::PathBuf> {
    let p = std::env::var_os("CRYPTOBENCH_OTAVA_PYTHON")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|h| std::path::Path::new(&h).join(".cache/cryptobench/otava-0.8.0/bin/python"))
        })?;
    p.exists().then_some(p)
}

#[test]
fn agrees_with_apache_otava() {
    let Some(python) = otava_python() else {
        return crate::testing::skip("Apache Otava is not installed: run scripts/deps/trend.sh");
    };
    // Series with 0 to 3 steps of 3-20% at 2% noise, steps at least 5 runs from either
    // end (a side of one run makes no claim here, where Otava would make one).
    let mut rng = Rng::new(11);
    let mut all = Vec::new();
    for _ in 0..30 {
        let n = 60 + rng.below(140);
        let steps = rng.below(4);
        let mut at: Vec<usize> = (0..steps).map(|_| 5 + rng.below(n - 10)).collect();
        at.sort_unstable();
        let mut level = 100.0;
        let series: Vec<f64> = (0..n)
            .map(|i| {
                if at.contains(&i) {
                    let size = 0.03 + 0.17 * rng.unit();
                    level *= if rng.below(2) == 0 {
                        1.0 + size
                    } else {
                        1.0 - size
                    };
                }
                normal(&mut rng, level, 2.0)
            })
            .collect();
        all.push(series);
    }
    // Otava's split step (its weak points) and its final change points.
    let script = "import json, sys\n\
        from otava.analysis import compute_change_points, split\n\
        out = []\n\
        for s in json.load(sys.stdin):\n\
        \x20   weak = split(s, 50, 0.01)\n\
        \x20   cps, _ = compute_change_points(s, window_len=50, max_pvalue=0.001)\n\
        \x20   out.append([[int(c.index) for c in weak], [int(c.index) for c in cps]])\n\
        print(json.dumps(out))\n";
    let mut child = std::process::Command::new(python)
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python runs");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(serde_json::to_string(&all).unwrap().as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Vec<[Vec<usize>; 2]> = serde_json::from_slice(&out.stdout).unwrap();
    let otava = Settings {
        spread: false,
        shared: false,
        ..Settings::default()
    };
    let mut differ = 0;
    let mut shipped_differ = 0;
    let mut near_bar_missed = 0;
    for (s, [weak, last]) in all.iter().zip(&theirs) {
        // The shipped default (spread tested too, p-values doubled) against Otava: each of
        // its points holds by Otava's own rule (the t-test against its neighbours) unless
        // it is a change of spread.
        let shipped = detect(s, &Settings::default()).change_points;
        let ours: Vec<usize> = shipped.iter().map(|c| c.index).collect();
        shipped_differ += usize::from(&ours != last);
        for (k, c) in shipped.iter().enumerate() {
            let p = stats_at(&ours, k, s, false).pvalue;
            assert!(
                c.kind == Kind::Spread || p <= otava.max_pvalue,
                "shipped {c:?}: t-test p {p} among {ours:?}, for {s:?}"
            );
        }
        // Ours shares the p-value among the windows searched and doubles it for the spread
        // test beside the t-test. Otava's points that clear that bar tenfold, against
        // Otava's own neighbours, must each have one of ours within 3 runs. Nearer the bar
        // the split may place a point a few runs off Otava's, where it no longer passes
        // (measured: Otava's 129 of [129], ours 126 at p 3.9e-4 against a bar of 1.4e-4):
        // those are counted, and bounded below.
        let bar = Settings::default().bar(s.len());
        let p_max = (0..last.len())
            .map(|k| stats_at(last, k, s, true).pvalue)
            .fold(0.0, f64::max);
        let found_all = last
            .iter()
            .all(|&i| ours.iter().any(|&o| o.abs_diff(i) <= 3));
        if p_max < bar / 10.0 {
            assert!(
                found_all,
                "Otava's {last:?} (each p < {:e}) missed by the shipped default {ours:?}, for {s:?}",
                bar / 10.0
            );
        } else if p_max < bar && !found_all {
            near_bar_missed += 1;
        }
        let d = detect(s, &otava);
        // The split step is the same computation: the same weak points.
        let ours_weak: Vec<usize> = split(s, &otava).iter().map(|c| c.index).collect();
        assert_eq!(&ours_weak, weak, "weak change points of {s:?}");
        let ours: Vec<usize> = d.change_points.iter().map(|c| c.index).collect();
        if &ours != last {
            // Only where Otava's own answer breaks its rule: one of its points, tested
            // against its actual neighbours, is not significant (its merge leaves a
            // neighbour's statistics stale) or bounds a single run.
            differ += 1;
            let fails =
                (0..last.len()).any(|k| stats_at(last, k, s, false).pvalue >= otava.max_pvalue);
            assert!(fails, "ours {ours:?}, Otava {last:?}, for {s:?}");
        }
    }
    let found: usize = theirs.iter().map(|t| t[1].len()).sum();
    assert!(
        found >= 20,
        "the series should have steps to find: {theirs:?}"
    );
    assert!(differ <= 3, "{differ} of {} series differ", all.len());
    // Measured: 1 of 30.
    assert!(
        near_bar_missed <= 2,
        "{near_bar_missed} of {} series miss a point of Otava's near the bar",
        all.len()
    );
    eprintln!(
        "the shipped default differs from Otava on {shipped_differ} of {} series",
        all.len()
    );
}

/// A step right after an outlier: the step is the change point, not the outlier. From a
/// CI run of trend_cli: the last run on the old library read 1.5 % high, so the split
/// found it and the step as neighbours with a side of one run each (both p = 1), and the
/// merge dropped the step (the last of equal p-values).
#[test]
fn a_step_after_an_outlier_is_kept_and_the_outlier_dropped() {
    let v = [
        1051.9, 1050.1, 1047.8, 1051.0, 1054.1, 1066.7, 170.9, 193.9, 169.7, 166.3, 182.5, 172.9,
    ];
    for min_magnitude in [0.0, 1.0] {
        let s = Settings {
            min_magnitude,
            ..Settings::default()
        };
        assert_eq!(indices(&v, &s), vec![6], "min_magnitude {min_magnitude}");
    }
}
