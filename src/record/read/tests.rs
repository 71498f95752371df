use super::*;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/schema1-mixed.jsonl"
);

#[test]
fn schema1_files_of_every_workload_upgrade() {
    let loaded = read_files(&[PathBuf::from(FIXTURE)]).unwrap();
    assert!(loaded.skipped.is_empty(), "{:?}", loaded.skipped);
    assert_eq!(loaded.runs.len(), 3, "three runs, kept apart");
    let kinds: Vec<&str> = loaded
        .runs
        .iter()
        .flat_map(|r| r.records.iter().map(|r| r.workload().name()))
        .collect();
    assert!(kinds.contains(&"speed") && kinds.contains(&"tls") && kinds.contains(&"vpn"));
    for run in &loaded.runs {
        assert!(run.environment.is_some(), "{}", run.run_id);
        assert!(run.end.is_none(), "schema 1 wrote no end line");
        for r in &run.records {
            let v = r.to_json();
            assert_eq!(v["schema"], 2);
            assert!(v["impl"].is_string() && v["label"].is_string(), "{v}");
            assert!(v["throughput_bps"].as_f64().unwrap() > 0.0, "{v}");
            assert!(v["others_cpu_pct"].as_f64().unwrap() <= 100.0, "{v}");
        }
    }
    let vpn = loaded
        .runs
        .iter()
        .flat_map(|r| &r.records)
        .find_map(|r| match r {
            AnyRecord::Vpn(v) => Some(v),
            _ => None,
        })
        .unwrap();
    assert_eq!(vpn.implementation, "none", "vpn's impl is the tunnel");
    assert_eq!(
        vpn.impl_version, "veth",
        "the old `implementation` moved to impl_version"
    );
}

#[test]
fn a_bad_line_is_skipped_by_number_and_the_rest_kept() {
    let good = std::fs::read_to_string(FIXTURE).unwrap();
    let mut lines: Vec<&str> = good.lines().collect();
    let cut = &lines[1][..lines[1].len() / 2];
    lines[1] = cut;
    let dir = std::env::temp_dir().join(format!("cb-read-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("partial.jsonl");
    std::fs::write(&path, lines.join("\n")).unwrap();
    let loaded = read_files(std::slice::from_ref(&path)).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(loaded.skipped.len(), 1);
    assert_eq!(loaded.skipped[0].line, 2);
    assert_eq!(loaded.record_count(), good.lines().count() - 3 - 1);
}

#[test]
fn impossible_values_are_refused() {
    let line = std::fs::read_to_string(FIXTURE).unwrap();
    let rec = line.lines().nth(1).unwrap();
    let mut v: Value = serde_json::from_str(rec).unwrap();
    for (k, bad) in [
        ("trials", json!(0)),
        ("threads", json!(0)),
        ("throughput_bps", json!(-5.0)),
    ] {
        let mut w = v.clone();
        w[k] = bad;
        let e = parse_line(&w.to_string()).err().unwrap();
        assert!(e.to_string().starts_with("invalid record"), "{k}: {e}");
    }
    v["schema"] = json!(99);
    let e = parse_line(&v.to_string()).err().unwrap();
    assert!(e.to_string().contains("newer"), "{e}");
}
