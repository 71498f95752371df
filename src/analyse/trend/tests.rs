use super::*;
use crate::analyse::bootstrap::Rng;
use crate::analyse::changepoint::tests::normal;

fn row(run: usize, median: f64, version: &str) -> PointRow {
    PointRow {
        run_id: format!("run{run:03}"),
        started_unix: 1_700_000_000 + run as i64 * 86400,
        machine_id: "m1".into(),
        hostname: "host".into(),
        workload: "speed".into(),
        implementation: "openssl".into(),
        impl_version: version.into(),
        variant: None,
        label: "openssl".into(),
        subject: Some("aes-128-gcm".into()),
        size: Some(16384),
        direction: Some("enc".into()),
        parallel: Some(1),
        median,
        ci: Some([median * 0.99, median * 1.01]),
        disturbed: false,
        others_cpu_pct: 1.0,
        seq: 0,
    }
}

#[test]
fn labels_lose_versions_and_paths_only() {
    assert_eq!(
        stable_label("openssl 3.5.5 no-asm [isa=no-aesni]"),
        "openssl no-asm [isa=no-aesni]"
    );
    assert_eq!(stable_label("openssl@/tmp/libcrypto.so.3"), "openssl");
    assert_eq!(stable_label("openvpn AES-128-GCM"), "openvpn AES-128-GCM");
}

#[test]
fn a_library_step_is_found_and_named() {
    let mut rng = Rng::new(1);
    let rows: Vec<PointRow> = (0..30)
        .map(|i| {
            let (m, v) = if i < 15 {
                (5e9, "OpenSSL 3.0.17")
            } else {
                (4.1e9, "OpenSSL 3.0.18")
            };
            row(i, normal(&mut rng, m, 3e7), v)
        })
        .collect();
    let s = series(rows, &HashMap::new(), &Settings::default());
    assert_eq!(s.len(), 1);
    let c = &s[0].changes;
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].run_id, "run015");
    assert!((c[0].change + 0.18).abs() < 0.01, "{:?}", c[0]);
    assert!(c[0].change_ci[0] < c[0].change && c[0].change < c[0].change_ci[1]);
    assert_eq!(
        c[0].causes,
        vec!["library: OpenSSL 3.0.17 → OpenSSL 3.0.18"]
    );
    assert_eq!(s[0].env_changes.len(), 1);
}

#[test]
fn disturbed_runs_are_shown_but_make_no_change_point() {
    let mut rng = Rng::new(2);
    let rows: Vec<PointRow> = (0..30)
        .map(|i| {
            let mut r = row(i, normal(&mut rng, 5e9, 3e7), "v");
            if (20..24).contains(&i) {
                // A noisy night: four runs far lower, each marked disturbed.
                r.median = 3e9;
                r.disturbed = true;
                r.others_cpu_pct = 60.0;
            }
            r
        })
        .collect();
    let s = series(rows, &HashMap::new(), &Settings::default());
    assert_eq!(s[0].points.len(), 30);
    assert!(s[0].changes.is_empty(), "{:?}", s[0].changes);
}

#[test]
fn a_step_with_nothing_recorded_but_a_busier_machine_says_so() {
    let mut rng = Rng::new(3);
    let rows: Vec<PointRow> = (0..30)
        .map(|i| {
            let mut r = row(
                i,
                normal(&mut rng, if i < 15 { 5e9 } else { 4e9 }, 3e7),
                "v",
            );
            r.others_cpu_pct = if i < 15 { 2.0 } else { 40.0 };
            r
        })
        .collect();
    let s = series(rows, &HashMap::new(), &Settings::default());
    let c = &s[0].changes;
    assert_eq!(c.len(), 1);
    assert!(
        c[0].causes[0].contains("others' CPU went from 2% to 40%"),
        "{:?}",
        c[0].causes
    );
}

#[test]
fn kernel_and_governor_changes_are_read_from_the_facts() {
    let a = TrendPoint {
        run_id: "a".into(),
        started_unix: 0,
        median: 1.0,
        ci: None,
        disturbed: false,
        others_cpu_pct: 0.0,
        impl_version: "x".into(),
    };
    let b = TrendPoint {
        run_id: "b".into(),
        ..a.clone()
    };
    let facts: HashMap<String, RunFacts> = [
        ("a", r#"{"kernel":"6.1.0-40","cryptobench_version":"0.9.0","frequency":{"governor":"performance"},"kernel_crypto":{"big":[1,2,3]}}"#),
        ("b", r#"{"kernel":"6.1.0-41","cryptobench_version":"0.9.0","frequency":{"governor":"powersave"}}"#),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), serde_json::from_str(v).unwrap()))
    .collect();
    assert_eq!(
        differences(&a, &b, &facts),
        vec![
            "kernel: 6.1.0-40 → 6.1.0-41",
            "governor: performance → powersave"
        ]
    );
}

#[test]
fn facts_are_read_from_the_head_of_an_environment_line() {
    let line = r#"{"kind":"environment","schema":1,"run_id":"r","cryptobench_version":"0.9.0","command_line":["cryptobench","--kernel\"x"],"hostname":"h","kernel":"6.1.0-41-cloud-amd64","cpu":{"arch":"x86_64","model":"AMD EPYC 7B13","logical_cpus":2},"frequency":{"governor":null,"source":"none"},"kernel_crypto":{"drivers":[1,2,3]}}"#;
    let f = RunFacts::from_head(line);
    assert_eq!(f, serde_json::from_str::<RunFacts>(line).unwrap());
    assert_eq!(f.kernel, "6.1.0-41-cloud-amd64");
    assert_eq!(f.cpu.model.as_deref(), Some("AMD EPYC 7B13"));
    // Cut before the frequency: what is there is read, the rest stays empty.
    let cut = RunFacts::from_head(&line[..line.find("\"frequency\"").unwrap() - 3]);
    assert_eq!(cut.kernel, "6.1.0-41-cloud-amd64");
    assert_eq!(cut.frequency.governor, None);
}

/// Runs of one second are in the order they started (the id's millisecond), not in the
/// text order of their pids: 9998 before 10002 here, though "10002" < "9998" as text.
#[test]
fn runs_of_one_second_keep_their_start_order() {
    let ids = ["1700000000-9998-0640abcd", "1700000000-10002-0c812345"];
    assert_eq!((start_ms(ids[0]), start_ms(ids[1])), (100, 200));
    assert_eq!(start_ms("1700000000-9998"), 0);
    let rows: Vec<PointRow> = ids
        .iter()
        .zip([(5e9, "OpenSSL 3.0.17"), (1e9, "OpenSSL 3.5.5")])
        .map(|(id, (m, v))| PointRow {
            run_id: id.to_string(),
            started_unix: 1_700_000_000,
            ..row(0, m, v)
        })
        .collect();
    let s = series(rows, &HashMap::new(), &Settings::default());
    let order: Vec<&str> = s[0].points.iter().map(|p| p.run_id.as_str()).collect();
    assert_eq!(order, ids);
}
