//! `compare` through the real binary: points paired, the CI gate's exit codes (3 on a
//! regression, 4 on missing points), the JSON shape, labels per side, bad input.
mod common;

use common::{fixture, run, significant_digits, speed_file, svg_texts, tempdir, text};

#[test]
fn compare_pairs_points_gates_on_regressions_and_refuses_bad_input() {
    let dir = tempdir(
        &std::env::temp_dir(),
        &format!("cbench-compare-{}", std::process::id()),
    );
    let speed = speed_file(&dir);
    let s = speed.to_str().unwrap();
    // A file against itself: every point unchanged, ratio exactly 1.
    let o = run(&["compare", s, s, "--format", "json", "--fail-on-regression"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let pairs = v["pairs"].as_array().unwrap();
    assert_eq!(
        pairs.len(),
        24,
        "2 paths x 2 directions x 3 sizes x 2 thread counts"
    );
    for p in pairs {
        assert_eq!(p["ratio"], 1.0);
        assert_eq!(p["verdict"], "unchanged");
        assert!(
            p["ratio_ci"][0].as_f64().unwrap() <= 1.0 && p["ratio_ci"][1].as_f64().unwrap() >= 1.0
        );
        for k in [
            "impl",
            "alg",
            "direction",
            "size",
            "threads",
            "base_bps",
            "new_bps",
        ] {
            assert!(!p[k].is_null(), "{k} missing in {p}");
        }
    }
    assert!(v["summary"][0]["geomean_ratio"].as_f64().unwrap() == 1.0);
    assert!(v["base"]["run_ids"].is_array() && v["only_in_base"].as_array().unwrap().is_empty());

    // ring's trials scaled to 1% in a copy: regressed, exit 3 only with the flag.
    let slow = dir.join("slow.jsonl");
    let lines: Vec<String> = std::fs::read_to_string(&speed)
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            if v["label"] == "ring" {
                v["throughput_bps"] = (v["throughput_bps"].as_f64().unwrap() * 0.01).into();
                let s: Vec<f64> = v["samples_bps"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap() * 0.01)
                    .collect();
                v["samples_bps"] = s.into();
                v["throughput_bps_ci"] = serde_json::Value::Null;
            }
            v.to_string()
        })
        .collect();
    std::fs::write(&slow, lines.join("\n") + "\n").unwrap();
    let o = run(&["compare", s, slow.to_str().unwrap(), "--fail-on-regression"]);
    assert_eq!(o.status.code(), Some(3), "{:?}", text(&o));
    let o = run(&["compare", s, slow.to_str().unwrap(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&text(&o).0).unwrap();
    for p in v["pairs"].as_array().unwrap() {
        let want = if p["impl"] == "ring" {
            "regressed"
        } else {
            "unchanged"
        };
        assert_eq!(p["verdict"], want, "{p}");
    }
    let o = run(&["compare", s, slow.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));

    // Every ring point gone from the new side: the gate fails (exit 4) with one line,
    // unless the user allows it; without the gate it is only listed.
    let gone = dir.join("gone.jsonl");
    let kept: Vec<&str> = std::fs::read_to_string(&speed)
        .unwrap()
        .leak()
        .lines()
        .filter(|l| !l.contains("\"label\":\"ring\""))
        .collect();
    std::fs::write(&gone, kept.join("\n") + "\n").unwrap();
    let g = gone.to_str().unwrap();
    let o = run(&["compare", s, g, "--fail-on-regression"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(out.contains("Only in base"), "{out}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("missing from the new side") && err.contains("--allow-missing"),
        "{err}"
    );
    let o = run(&["compare", s, g, "--fail-on-regression", "--allow-missing"]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    let o = run(&["compare", s, g]);
    assert_eq!(o.status.code(), Some(0), "{:?}", text(&o));
    // Two labels of one file.
    let o = run(&[
        "compare", s, s, "--a", "openssl", "--b", "ring", "--format", "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&text(&o).0).unwrap();
    assert_eq!(v["pairs"].as_array().unwrap().len(), 12);
    assert_eq!(v["pairs"][0]["new_impl"], "ring");

    // Bad input: one line, exit 2.
    let empty = dir.join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let vpn = fixture("vpn-openvpn-short.jsonl");
    for (args, want) in [
        (vec!["compare", empty.to_str().unwrap(), s], "no records"),
        (vec!["compare", s, vpn.to_str().unwrap()], "no common point"),
        (
            vec!["compare", s, s, "--a", "nosuch"],
            "its labels are: openssl, ring",
        ),
        (
            vec![
                "compare",
                s,
                fixture("schema1-mixed.jsonl").to_str().unwrap(),
            ],
            "schema",
        ),
    ] {
        let o = run(&args);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    let o = run(&["compare", s, s, "--format", "html"]);
    let (html, _) = text(&o);
    assert!(
        html.contains("<svg") && html.contains("What this shows: 0 of 24 points regressed"),
        "{}",
        &html[..html.len().min(400)]
    );
    // The ratio axis has labels around 1 (it had only "1.0"), and the legend stands right
    // of every error bar.
    let texts = svg_texts(&html);
    let ratios: Vec<&str> = texts
        .iter()
        .filter(|(anchor, _, _, _)| anchor == "end")
        .map(|(_, _, _, t)| t.as_str())
        .collect();
    assert!(
        ratios.iter().all(|t| significant_digits(t) <= 6),
        "{ratios:?}"
    );
    let ratios: Vec<f64> = ratios.iter().filter_map(|t| t.parse().ok()).collect();
    assert!(
        ratios.contains(&1.0) && ratios.iter().any(|r| *r < 1.0) && ratios.iter().any(|r| *r > 1.0),
        "the ratio axis needs labels below, at and above 1: {ratios:?}"
    );
    let bars = html
        .split("<circle cx=\"")
        .skip(1)
        .filter_map(|c| c.split('"').next()?.parse::<f64>().ok());
    let right = bars.fold(0.0, f64::max);
    let legend = texts
        .iter()
        .find(|(_, _, _, t)| t == "unchanged")
        .expect("a legend");
    assert!(
        legend.1 > right + 10.0,
        "the legend at x {} covers bars up to {right}",
        legend.1
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--a` and `--b` each pick their own side; a missing label is
/// blamed on the flag and file that named it; two tls suites of one file compare by
/// their labels (the suites).
#[test]
fn compare_labels_pick_their_own_side_and_tls_suites_compare() {
    let f = fixture("schema1-mixed.jsonl");
    let f = f.to_str().unwrap();
    let o = run(&[
        "compare",
        f,
        f,
        "--a",
        "http",
        "--b",
        "TLS_AES_128_GCM_SHA256",
        "--format",
        "json",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let pairs = v["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 1, "{v}");
    assert_eq!(pairs[0]["workload"], "tls");
    assert_eq!(pairs[0]["new_impl"], "TLS_AES_128_GCM_SHA256");
    // --b alone: the error names --b and NEW's file, not --a and BASE's.
    let speed_dir = std::env::temp_dir().join(format!("cbench-labels-{}", std::process::id()));
    std::fs::create_dir_all(&speed_dir).unwrap();
    let other = speed_dir.join("copy.jsonl");
    std::fs::copy(f, &other).unwrap();
    let o = run(&["compare", f, other.to_str().unwrap(), "--b", "nosuch"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.starts_with("cryptobench: --b \"nosuch\""), "{err}");
    assert!(err.contains("copy.jsonl"), "{err}");
    // --b alone filters NEW only: BASE keeps its other points, listed as only in base.
    let o = run(&[
        "compare",
        f,
        other.to_str().unwrap(),
        "--b",
        "http",
        "--format",
        "json",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["pairs"].as_array().unwrap().len(), 1, "{v}");
    assert!(!v["only_in_base"].as_array().unwrap().is_empty(), "{v}");
    let _ = std::fs::remove_dir_all(speed_dir);
}
