use super::*;
use crate::analyse::paths::tests::ANALYSES;
use crate::record::read::AnyRecord;
use crate::record::read::{parse_line, Line};
use crate::render::Format;

const FIXTURE: &str = include_str!("../../../tests/fixtures/schema1-mixed.jsonl");

/// `runs` runs, each with the fixture's speed records (one path at two sizes) under its
/// own run id.
fn runs(runs: usize) -> Loaded {
    let speed: Vec<AnyRecord> = FIXTURE
        .lines()
        .filter_map(|l| match parse_line(l) {
            Ok(Line::Record(r)) if matches!(*r, AnyRecord::Speed(_)) => Some(*r),
            _ => None,
        })
        .collect();
    assert!(!speed.is_empty());
    Loaded {
        runs: (0..runs)
            .map(|k| {
                let run_id = format!("run-{k}");
                let records = speed
                    .iter()
                    .cloned()
                    .map(|mut r| {
                        if let AnyRecord::Speed(s) = &mut r {
                            s.run_id = run_id.clone();
                        }
                        r
                    })
                    .collect();
                Run {
                    run_id,
                    records,
                    ..Run::default()
                }
            })
            .collect(),
        ..Loaded::default()
    }
}

/// Every run in `format`, as a string.
fn render(doc: &Loaded, format: Format, opts: &Options) -> String {
    crate::render::write::string(&mut Report::of(doc, opts), format).unwrap()
}

/// How many times the speed analysis (the bootstrap fits) ran while rendering.
fn analyses(doc: &Loaded, format: Format) -> usize {
    let before = ANALYSES.with(|n| n.get());
    render(doc, format, &crate::workloads::table::render_options(None));
    ANALYSES.with(|n| n.get()) - before
}

#[test]
fn each_run_is_analysed_once_and_only_when_shown() {
    // Work per run must not grow with the number of runs: the bootstrap analysis runs once
    // per run for JSON, never for CSV or the table (which do not show it here), and for
    // HTML only for the runs whose figures are drawn.
    for n in [1, 3, 40] {
        let doc = runs(n);
        assert_eq!(analyses(&doc, Format::Json), n, "json, {n} runs");
        assert_eq!(analyses(&doc, Format::Csv), 0, "csv, {n} runs");
        assert_eq!(analyses(&doc, Format::Table), 0, "table, {n} runs");
        assert_eq!(
            analyses(&doc, Format::Html),
            n.min(MAX_RUNS_DRAWN),
            "html, {n} runs"
        );
    }
}

#[test]
fn html_draws_the_last_runs_and_says_so() {
    let one = render(
        &runs(1),
        Format::Html,
        &crate::workloads::table::render_options(None),
    );
    let per_run = one.matches("<svg").count();
    assert!(per_run > 0);
    assert!(!one.contains("Figures not drawn"));
    let many = render(
        &runs(MAX_RUNS_DRAWN + 5),
        Format::Html,
        &crate::workloads::table::render_options(None),
    );
    assert_eq!(many.matches("<svg").count(), per_run * MAX_RUNS_DRAWN);
    assert_eq!(many.matches("Figures not drawn for this run").count(), 5);
    assert!(many.contains("figures are drawn for the last 20 of these 25 runs"));
    // Every run still has its section, the undrawn ones first.
    assert_eq!(many.matches("<h2>").count(), MAX_RUNS_DRAWN + 5);
    let (first, last) = (many.find("run-0").unwrap(), many.find("run-24").unwrap());
    assert!(first < last);
}

#[test]
fn json_streams_the_same_document() {
    let doc = runs(2);
    let v: Value = serde_json::from_str(&render(
        &doc,
        Format::Json,
        &crate::workloads::table::render_options(None),
    ))
    .unwrap();
    let n = doc.record_count();
    assert_eq!(v["records"].as_array().unwrap().len(), n);
    assert_eq!(v["records"][0], doc.runs[0].records[0].to_json());
    assert_eq!(v["runs"].as_array().unwrap().len(), 2);
    assert_eq!(v["runs"][1]["run_id"], "run-1");
    assert_eq!(v["runs"][1]["records"], n / 2);
    assert!(v["runs"][1]["analysis"]["speed"]["fits"].is_array());
    // Several runs: no top-level environment or analysis.
    assert!(v.get("environment").is_none() && v.get("analysis").is_none());
    let one: Value = serde_json::from_str(&render(
        &runs(1),
        Format::Json,
        &crate::workloads::table::render_options(None),
    ))
    .unwrap();
    assert_eq!(one["analysis"], one["runs"][0]["analysis"]["speed"]);
}

/// A report of one run of three libraries (openssl, aws-lc and ring at six sizes, on
/// known cost lines: aws-lc and ring beat openssl everywhere, ring beats aws-lc below
/// 3000 bytes): its HTML headlines once said "aws-lc is faster at every size measured"
/// beside "ring is faster below ..." without saying than whom. Every clause
/// with "faster" names two of the three.
#[test]
fn a_three_library_headline_names_what_each_is_faster_than() {
    // Throughput from a + n/B: overhead in µs, bandwidth in GB/s.
    let libs = [
        ("openssl", 2.0, 1.0),
        ("aws-lc", 1.0, 2.0),
        ("ring", 0.5, 1.5),
    ];
    let mut records = Vec::new();
    for (lib, a_us, b_gbps) in libs {
        for size in [16u64, 64, 256, 1024, 4096, 16384] {
            let bps = size as f64 / (a_us * 1e-6 + size as f64 / (b_gbps * 1e9));
            records.push(crate::study::tests::speed_rec(
                lib,
                None,
                "aes-128-gcm",
                "enc",
                size,
                1,
                bps,
            ));
        }
    }
    let doc = Loaded {
        runs: vec![Run {
            run_id: "three".into(),
            records,
            ..Run::default()
        }],
        ..Loaded::default()
    };
    let html = render(
        &doc,
        Format::Html,
        &crate::workloads::table::render_options(None),
    );
    let shows: Vec<&str> = html
        .split("What this shows: ")
        .skip(1)
        .map(|s| s.split('<').next().unwrap())
        .collect();
    let clauses: Vec<&str> = shows
        .iter()
        .flat_map(|s| s.split("; "))
        .filter(|c| c.contains("faster"))
        .collect();
    // The fastest against the slowest, and one sentence per pair of the three.
    assert!(clauses.len() >= 4, "{shows:#?}");
    for c in &clauses {
        let named = ["openssl", "aws-lc", "ring"]
            .iter()
            .filter(|l| c.split([' ', ',']).any(|w| w == **l))
            .count();
        assert_eq!(named, 2, "{c:?} in {shows:#?}");
    }
    assert!(
        clauses.iter().any(
            |c| c.starts_with("ring is faster below ") && c.contains(" bytes and aws-lc above")
        ),
        "{clauses:#?}"
    );
}
