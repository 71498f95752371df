//! The HTML report in a real browser (headless Chromium), the figures as files, compare's
//! exit codes and JSON shape.
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::browser::{chromium, headless, ink, open_in_browser};
use common::{
    fixture, run, significant_digits, speed_file, speed_run, svg_texts, tempdir, text, BIN,
};

/// Kept after the test: the screenshot is an artefact.
fn artefacts() -> PathBuf {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/report-test");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn html_report_renders_in_a_real_browser_and_figures_are_files() {
    let dir = artefacts();
    let speed = speed_file(&dir);
    let plots = dir.join("plots");
    let files = [
        speed.clone(),
        fixture("schema1-mixed.jsonl"),
        fixture("vpn-openvpn-short.jsonl"),
    ];
    let mut args = vec!["report".to_string()];
    args.extend(files.iter().map(|f| f.to_string_lossy().into_owned()));
    args.extend([
        "--format".into(),
        "html".into(),
        "--plots".into(),
        plots.to_string_lossy().into_owned(),
    ]);
    let o = Command::new(BIN).args(&args).output().unwrap();
    let (html, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let report = dir.join("report.html");
    std::fs::write(&report, &html).unwrap();

    // Self-contained: no script, nothing fetched.
    assert!(!html.contains("<script"), "the report runs no script");
    for fetch in ["src=", "href=", "@import", "url("] {
        assert!(
            !html.contains(fetch),
            "the report fetches nothing ({fetch})"
        );
    }
    // Every workload's section, with computed findings and each run's environment.
    let figures = html.matches("<figure class=\"figure\"").count();
    assert!(figures >= 5, "{figures} figures");
    assert_eq!(
        html.matches("<svg").count(),
        figures,
        "one inline SVG per figure"
    );
    assert_eq!(html.matches("What this shows: ").count(), figures);
    for needle in [
        "speed figures",
        "vpn figures",
        "tls figures",
        "thread scaling",
        "CPU seconds per GB",
        "openvpn AES-128-GCM",
        "busiest tunnel thread",
    ] {
        assert!(html.contains(needle), "missing {needle:?}");
    }
    assert!(
        html.matches("<aside class=\"env\">").count() >= 4,
        "every run's environment is shown"
    );
    // A finding names a measured ratio, e.g. "openssl encrypts aes-128-gcm 1.3x faster than ring".
    assert!(
        html.contains("x faster than") || html.contains(" seals aes-128-gcm at "),
        "no computed finding"
    );

    // Figures as files: an SVG and a non-blank PNG for each.
    let pngs: Vec<PathBuf> = std::fs::read_dir(&plots)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "png"))
        .collect();
    assert_eq!(pngs.len(), figures, "{pngs:?}");
    for p in &pngs {
        assert!(p.with_extension("svg").is_file());
        let (share, colour) = ink(p);
        assert!(
            share > 0.01 && colour,
            "{} looks blank: {share:.4} ink",
            p.display()
        );
    }

    let Some(browser) = chromium() else {
        common::skip("no chromium: run scripts/deps/report.sh");
        return;
    };
    let v = open_in_browser(&browser, &dir, &report, &html, 0.03);
    let sizes = v["sizes"].as_array().unwrap();
    assert_eq!(sizes.len(), figures);
    for s in sizes {
        assert!(
            s[1].as_i64().unwrap() > 100 && s[2].as_i64().unwrap() > 50,
            "a figure with no size: {s}"
        );
    }
}

/// Every bad `--plots` is bad input (exit 2) in one line that names the directory and
/// the fix, refused before a record is read (the records file here does not exist).
#[test]
fn plots_that_cannot_be_written_are_refused_before_anything_else() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("cbench-plots-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let locked = dir.join("locked");
    std::fs::create_dir_all(&locked).unwrap();
    let file = dir.join("file");
    std::fs::write(&file, "").unwrap();
    // Root-owned 0755 is read-only to nobody; for this user 0555.
    let mode = if common::is_root() { 0o755 } else { 0o555 };
    for d in [&dir, &locked] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let missing = dir.join("never-written.jsonl");
    for (plots, why) in [
        (locked.clone(), "cannot write into it"),
        (locked.join("sub"), "cannot create it in"),
        (
            Path::new("/proc/version").to_path_buf(),
            "is not a directory",
        ),
        (file.join("sub"), "its parent is not a directory"),
    ] {
        let o = common::unprivileged(BIN)
            .arg("report")
            .arg(&missing)
            .arg("--plots")
            .arg(&plots)
            .output()
            .expect("runs");
        let (out, err) = text(&o);
        let shown = plots.display().to_string();
        assert_eq!(o.status.code(), Some(2), "{shown}: {err}");
        assert!(out.is_empty(), "{shown}: {out}");
        assert_eq!(err.lines().count(), 1, "{shown}: {err}");
        assert!(
            err.contains(&format!("--plots {shown}"))
                && err.contains(why)
                && err.contains("give a"),
            "{shown}: {err}"
        );
    }
    assert!(std::fs::read_dir(&locked).unwrap().next().is_none());
    for d in [&dir, &locked] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A tick label's value: a number, or a size as speed writes it ("16", "1k", "16m").
fn label_value(label: &str) -> Option<f64> {
    let (number, unit) = match label.strip_suffix(['k', 'm', 'g']) {
        Some(n) => (n, label.chars().last()),
        None => (label, None),
    };
    let v: f64 = number.parse().ok()?;
    Some(
        v * match unit {
            Some('k') => 1024.0,
            Some('m') => 1048576.0,
            Some('g') => 1073741824.0,
            _ => 1.0,
        },
    )
}

/// Asserts that `labels` span `points` (the lowest label at or below the lowest point, the
/// highest at or above the highest), with a little room for rounding in the records.
fn assert_spans(what: &str, labels: &[f64], points: &[f64]) {
    assert!(
        !labels.is_empty() && !points.is_empty(),
        "{what}: {labels:?} {points:?}"
    );
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    assert!(
        min(labels) <= min(points) * (1.0 + 1e-9) && max(labels) >= max(points) * (1.0 - 1e-9),
        "{what}: labels {labels:?} do not span the points {:?}..{:?}",
        min(points),
        max(points)
    );
}

/// Every axis of every figure of a report of real speed runs (several sizes and threads,
/// and one size alone) is labelled with short numbers that span its points, and every
/// "x faster than" headline compares two paths whose 95% intervals are apart.
#[test]
fn speed_figures_are_labelled_where_their_points_are() {
    let dir = std::env::temp_dir().join(format!("cbench-axes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let sizes = speed_file(&dir);
    let one_size = speed_run(
        &dir,
        "one-size.jsonl",
        &["--alg", "sha256", "--sizes", "16k"],
    );
    let o = run(&[
        "report",
        sizes.to_str().unwrap(),
        one_size.to_str().unwrap(),
        "--format",
        "html",
    ]);
    let (html, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let records: Vec<serde_json::Value> = [&sizes, &one_size]
        .iter()
        .flat_map(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
                .collect::<Vec<_>>()
        })
        .filter(|r| r["kind"] == "record")
        .collect();
    let figures: Vec<&str> = html.split("<figure class=\"figure\"").skip(1).collect();
    assert!(figures.len() >= 5, "{} figures", figures.len());
    for figure in &figures {
        let caption = figure
            .split("<figcaption>")
            .nth(1)
            .and_then(|c| c.split("</figcaption>").next())
            .unwrap_or_default();
        let texts = svg_texts(figure);
        for (_, _, _, t) in &texts {
            if label_value(t).is_some() {
                assert!(significant_digits(t) <= 6, "{caption}: the label {t}");
            }
        }
        // y labels are right-aligned beside the axis; x labels centred below the lowest.
        let y: Vec<(f64, f64)> = texts
            .iter()
            .filter(|(anchor, _, _, _)| anchor == "end")
            .filter_map(|(_, _, at, t)| Some((*at, label_value(t)?)))
            .collect();
        let bottom = y.iter().map(|(at, _)| *at).fold(0.0, f64::max);
        let x: Vec<f64> = texts
            .iter()
            .filter(|(anchor, _, at, _)| anchor == "middle" && *at > bottom)
            .filter_map(|(_, _, _, t)| label_value(t))
            .collect();
        let y: Vec<f64> = y.into_iter().map(|(_, v)| v).collect();
        // The records drawn: this figure's algorithm and direction.
        let (alg, rest) = caption.split_once(' ').unwrap();
        let direction = rest.split(':').next().unwrap();
        let drawn: Vec<&serde_json::Value> = records
            .iter()
            .filter(|r| r["alg"] == alg && r["direction"] == direction)
            .collect();
        assert!(!drawn.is_empty(), "{caption}: no records");
        let one = |r: &&&serde_json::Value| r["threads"] == 1;
        let f = |r: &serde_json::Value, k: &str| r[k].as_f64();
        let (xs, ys): (Vec<f64>, Vec<f64>) = if caption.contains("thread scaling") {
            let size = drawn
                .iter()
                .filter(|r| r["threads"] != 1)
                .filter_map(|r| f(r, "size"));
            let size = size.fold(0.0, f64::max);
            let at: Vec<_> = drawn
                .iter()
                .filter(|r| f(r, "size") == Some(size))
                .collect();
            (
                at.iter().filter_map(|r| f(r, "threads")).collect(),
                at.iter()
                    .filter_map(|r| f(r, "throughput_bps"))
                    .map(|b| b / 1e6)
                    .collect(),
            )
        } else if caption.contains("CPU seconds per GB") {
            let at: Vec<_> = drawn.iter().filter(one).collect();
            (
                at.iter().filter_map(|r| f(r, "size")).collect(),
                at.iter().filter_map(|r| f(r, "cpu_s_per_gb")).collect(),
            )
        } else {
            let at: Vec<_> = drawn.iter().filter(one).collect();
            (
                at.iter().filter_map(|r| f(r, "size")).collect(),
                at.iter()
                    .flat_map(|r| {
                        let ci = r["throughput_bps_ci"]
                            .as_array()
                            .cloned()
                            .unwrap_or_default();
                        ci.into_iter()
                            .filter_map(|b| b.as_f64())
                            .chain(f(r, "throughput_bps"))
                    })
                    .map(|b| b / 1e6)
                    .collect(),
            )
        };
        assert_spans(&format!("{caption}: y"), &y, &ys);
        if caption.contains("against size") || caption.contains("thread scaling") {
            assert_spans(&format!("{caption}: x"), &x, &xs);
        } else {
            // One size: bars per path, no size axis.
            assert!(x.is_empty(), "{caption}: a size axis for one size: {x:?}");
        }
    }
    // A headline ratio only between intervals that are apart.
    for shows in html.split("What this shows: ").skip(1) {
        let shows = shows.split('<').next().unwrap();
        let Some((head, tail)) = shows.split_once("x faster than ") else {
            continue;
        };
        let words: Vec<&str> = head.split(' ').collect();
        let (fast, verb, alg) = (words[0], words[1], words[2]);
        let slow = tail.split(' ').next().unwrap();
        let direction = if ["opens", "decrypts"].contains(&verb) {
            "dec"
        } else {
            "enc"
        };
        let interval = |label: &str| -> [f64; 2] {
            let at: Vec<_> = records
                .iter()
                .filter(|r| {
                    r["label"] == label
                        && r["alg"] == alg
                        && r["direction"] == direction
                        && r["threads"] == 1
                })
                .collect();
            let largest = at.iter().filter_map(|r| r["size"].as_u64()).max().unwrap();
            let r = at.iter().find(|r| r["size"] == largest).unwrap();
            let ci = r["throughput_bps_ci"].as_array().expect("an interval");
            [ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap()]
        };
        let (f, w) = (interval(fast), interval(slow));
        assert!(
            f[0] > w[1],
            "{shows}: the intervals {f:?} and {w:?} overlap"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A real `speed --profile-dir` run's flame graph, inlined in the HTML report sanitised
/// (inferno's script and handlers gone, nothing fetched) after its category table; a
/// record whose SVG has gone keeps its table and says so. Rendered in Chromium.
#[test]
fn html_report_inlines_flame_graphs_without_their_script() {
    if !common::perf_usable() {
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/report-test-flame");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let graphs = dir.join("graphs");
    let results = dir.join("profiled.jsonl");
    let o = run(&[
        "speed",
        "--impl",
        "openssl",
        "--alg",
        "aes-128-gcm",
        "--direction",
        "enc",
        "--sizes",
        "16k",
        "--time",
        "0.3",
        "--profile-dir",
        graphs.to_str().unwrap(),
        "--output",
        results.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{:?}", text(&o));
    let svg_file = std::fs::read_dir(&graphs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "svg"))
        .expect("the run wrote a flame graph");
    let raw = std::fs::read_to_string(&svg_file).unwrap();
    assert!(
        raw.contains("<script"),
        "inferno's SVG has a script to remove"
    );

    let o = run(&["report", results.to_str().unwrap(), "--format", "html"]);
    let (html, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let page = dir.join("report.html");
    std::fs::write(&page, &html).unwrap();
    // Still self-contained: no script, no handler, nothing fetched.
    assert!(!html.contains("<script") && !html.contains("onload"));
    for fetch in ["src=", "href=", "@import", "url(", "xlink"] {
        assert!(
            !html.contains(fetch),
            "the report fetches nothing ({fetch})"
        );
    }
    // The graph, once, with its frames and the category table before it.
    assert_eq!(html.matches("<figure class=\"figure flame\"").count(), 1);
    let at = html.find("<figure class=\"figure flame\"").unwrap();
    let table = html.find("<th>category</th>").expect("the category table");
    assert!(table < at, "the table comes first");
    assert!(html[table..at].contains("<td>aes</td>"), "an aes row");
    assert!(html[table..at].contains("Amdahl ceiling"));
    let frames = raw.matches("<title>").count();
    assert!(frames > 3);
    assert_eq!(
        html.matches("<title>").count(),
        frames + 1,
        "every frame kept"
    );
    assert!(
        html[at..].contains("[aes]"),
        "crypto frames keep their label"
    );

    // The same record with its SVG gone: the table stays, the line says why.
    let moved = dir.join("moved.jsonl");
    let gone = dir.join("gone.svg");
    let text_in = std::fs::read_to_string(&results).unwrap();
    let shown = svg_file.to_str().unwrap();
    assert!(text_in.contains(shown));
    std::fs::write(&moved, text_in.replace(shown, gone.to_str().unwrap())).unwrap();
    let o = run(&["report", moved.to_str().unwrap(), "--format", "html"]);
    let (html2, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(html2.contains("<th>category</th>") && !html2.contains("figure flame"));
    assert!(
        html2.contains("gone.svg: cannot read it"),
        "no reason given"
    );

    let Some(browser) = chromium() else {
        common::skip("no chromium: run scripts/deps/report.sh");
        return;
    };
    let shot = dir.join("flame.png");
    let o = headless(
        &browser,
        &tempdir(&dir, "profile"),
        &[
            format!("--screenshot={}", shot.display()),
            // Tall enough for the graph below the run's own figures.
            "--window-size=1400,4400".into(),
        ],
        &page,
    );
    let (_, log) = text(&o);
    assert!(shot.is_file(), "no screenshot: {log}");
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");
    // The [aes] frames are drawn, in their category's colour (src/profile/flame.rs).
    let p = resvg::tiny_skia::Pixmap::load_png(&shot).unwrap();
    let aes = p
        .pixels()
        .iter()
        .filter(|px| (px.red(), px.green(), px.blue()) == (214, 39, 40))
        .count();
    assert!(aes > 1000, "{aes} pixels of AES red in {}", shot.display());
}
