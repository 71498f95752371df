use super::line::STRING_MAX;
use super::*;
use serde_json::{json, Value};

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
    let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let loaded = read_lines("partial", &lines);
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

/// The fixture's first speed record as a schema-2 line of run `run_id`, at `size` bytes.
fn speed_line(run_id: &str, size: u64) -> String {
    let text = std::fs::read_to_string(FIXTURE).unwrap();
    let rec = text
        .lines()
        .find_map(|l| match parse_line(l) {
            Ok(Line::Record(r)) if r.workload().name() == "speed" => Some(r),
            _ => None,
        })
        .unwrap();
    let mut v = rec.to_json();
    v["run_id"] = json!(run_id);
    v["size"] = json!(size);
    v.to_string()
}

fn end_line(run_id: &str) -> String {
    json!({"kind": "end", "run_id": run_id, "interrupted": false, "points": 1,
           "exclusions": [], "unavailable": []})
    .to_string()
}

fn read_lines(name: &str, lines: &[String]) -> Loaded {
    let dir = std::env::temp_dir().join(format!("cb-read-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("runs.jsonl");
    std::fs::write(&path, lines.join("\n")).unwrap();
    let loaded = read_files(std::slice::from_ref(&path)).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    loaded
}

#[test]
fn interleaved_runs_come_out_in_the_order_they_began() {
    // b ends before a: it still comes second, and each run keeps only its own records.
    let loaded = read_lines(
        "order",
        &[
            speed_line("a", 16),
            speed_line("b", 16),
            speed_line("b", 64),
            end_line("b"),
            speed_line("a", 64),
            end_line("a"),
            speed_line("c", 16),
        ],
    );
    assert!(loaded.skipped.is_empty(), "{:?}", loaded.skipped);
    let runs: Vec<(&str, usize, bool)> = loaded
        .runs
        .iter()
        .map(|r| (r.run_id.as_str(), r.records.len(), r.end.is_some()))
        .collect();
    // c never wrote its end line: handed out at the end of the file, as it was.
    assert_eq!(runs, vec![("a", 2, true), ("b", 2, true), ("c", 1, false)]);
}

#[test]
fn a_line_after_its_runs_end_is_skipped_with_the_reason() {
    let loaded = read_lines(
        "late",
        &[
            speed_line("a", 16),
            end_line("a"),
            speed_line("a", 16),
            speed_line("a", 64),
            end_line("a"),
        ],
    );
    assert_eq!(loaded.record_count(), 1);
    let reasons: Vec<(usize, &str)> = loaded
        .skipped
        .iter()
        .map(|s| (s.line, s.reason.as_str()))
        .collect();
    assert_eq!(reasons.len(), 3, "{reasons:?}");
    assert!(reasons[0].1.starts_with("duplicate"), "{reasons:?}");
    assert_eq!(reasons[1].0, 4);
    assert!(
        reasons[1].1.contains("ended on an earlier line"),
        "{reasons:?}"
    );
    assert!(
        reasons[2].1.contains("ended on an earlier line"),
        "{reasons:?}"
    );
}

#[test]
fn many_files_and_batches_keep_their_line_numbers() {
    // More lines than one worker batch: skipped lines still name their file and line.
    let mut lines: Vec<String> = (0..1500).map(|k| speed_line("big", 16 + k)).collect();
    lines[1200] = "{not json".into();
    lines.push(end_line("big"));
    let loaded = read_lines("batches", &lines);
    assert_eq!(loaded.record_count(), 1499);
    assert_eq!(loaded.skipped.len(), 1);
    assert_eq!(loaded.skipped[0].line, 1201);
    let sizes: Vec<u64> = loaded.runs[0]
        .records
        .iter()
        .filter_map(|r| {
            <crate::record::speed::SpeedData as crate::record::Listed>::pick(r).map(|s| s.size)
        })
        .collect();
    assert!(sizes.windows(2).all(|w| w[0] < w[1]), "file order kept");
}

/// A point's clock as a board with cpufreq records it: the cores are JSON's string keys.
/// Both readers take them back (the typed one, through the record's flattened envelope,
/// and the general one, through a Value): no point measured on such a board is lost.
#[test]
fn a_clock_per_core_reads_back_both_ways() {
    let mut v: Value = serde_json::from_str(&speed_line("clock", 16)).unwrap();
    v["clock"] =
        json!({"source": "cpufreq", "mhz": 1490.1, "per_core_mhz": {"0": 1490.1, "1": 1490.1}});
    // A Value's text has its keys sorted: the general path reads it.
    let general = v.to_string();
    assert!(!general.starts_with("{\"kind\":\"record\",\"schema\":2,"));
    // The record's own serialisation, as the writers write it: the typed path.
    let Ok(Line::Record(r)) = parse_line(&general) else {
        panic!("not read: {:?}", parse_line(&general).err());
    };
    let AnyRecord::Speed(s) = *r else {
        panic!("not speed")
    };
    let typed = serde_json::to_string(&s).unwrap();
    assert!(
        typed.starts_with("{\"kind\":\"record\",\"schema\":2,"),
        "{typed}"
    );
    for line in [typed, general] {
        let Ok(Line::Record(r)) = parse_line(&line) else {
            panic!("not read: {:?}", parse_line(&line).err());
        };
        let AnyRecord::Speed(s) = *r else {
            panic!("not speed")
        };
        let clock = s.clock.as_ref().expect("clock");
        assert_eq!(
            clock.per_core_mhz.keys().copied().collect::<Vec<_>>(),
            [0, 1]
        );
    }
}

fn end_of(run_id: &str, points: usize) -> String {
    let mut v: Value = serde_json::from_str(&end_line(run_id)).unwrap();
    v["points"] = json!(points);
    v.to_string()
}

/// The same point read again is a duplicate; with other figures it is a conflict (another
/// run under the same id), said as such.
#[test]
fn the_same_point_with_other_figures_is_a_conflict_not_a_duplicate() {
    let mut other: Value = serde_json::from_str(&speed_line("a", 16)).unwrap();
    let bps = other["throughput_bps"].as_f64().unwrap();
    other["throughput_bps"] = json!(bps * 1.5);
    other["throughput_bps_ci"] = Value::Null;
    other["samples_bps"] = json!([bps * 1.5]);
    let lines = [speed_line("a", 16), speed_line("a", 16), other.to_string()];
    let loaded = read_lines("conflict", &lines);
    let reasons: Vec<&str> = loaded.skipped.iter().map(|s| s.reason.as_str()).collect();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(reasons[0].starts_with("duplicate"), "{reasons:?}");
    assert!(reasons[1].starts_with("conflict"), "{reasons:?}");
}

/// A run is whole when its end line came and every record it counts: a `sort`ed file
/// (end line first) or one with the end line moved up reads whole.
#[test]
fn line_order_within_a_run_does_not_matter() {
    for (name, lines) in [
        (
            "sorted",
            vec![end_of("a", 2), speed_line("a", 16), speed_line("a", 64)],
        ),
        (
            "middle",
            vec![speed_line("a", 16), end_of("a", 2), speed_line("a", 64)],
        ),
    ] {
        let loaded = read_lines(name, &lines);
        assert!(loaded.skipped.is_empty(), "{name}: {:?}", loaded.skipped);
        assert_eq!(loaded.runs.len(), 1, "{name}");
        assert_eq!(loaded.runs[0].records.len(), 2, "{name}");
        assert!(loaded.runs[0].end.is_some(), "{name}");
    }
}

/// Damaged lines cost a count, not memory: the first `KEPT` are kept with their reasons,
/// and a line longer than any record is passed over without being held.
#[test]
fn damaged_lines_are_counted_and_a_huge_line_is_not_held() {
    let mut lines = vec!["{}".to_string(); 1000];
    lines.push("x".repeat(parsed::MAX_LINE + 1));
    lines.push(speed_line("a", 16));
    let loaded = read_lines("damaged", &lines);
    assert_eq!(loaded.skipped.total(), 1001);
    assert_eq!(loaded.skipped.len(), Skipped::KEPT);
    assert_eq!(loaded.record_count(), 1);
    let mut all = Skipped::default();
    all.extend(loaded.skipped.clone());
    all.extend(loaded.skipped);
    assert_eq!((all.total(), all.len()), (2002, Skipped::KEPT));
    let huge = read_lines(
        "huge",
        &[speed_line("a", 16), "y".repeat(parsed::MAX_LINE + 5)],
    );
    assert_eq!(huge.skipped.len(), 1);
    assert_eq!(huge.skipped[0].line, 2);
    assert!(
        huge.skipped[0].reason.starts_with("longer than any record"),
        "{:?}",
        huge.skipped
    );
}

/// Figures no run can produce, and a key named twice (a Value keeps the last), are refused.
#[test]
fn impossible_figures_and_duplicate_keys_are_refused() {
    let good: Value = serde_json::from_str(&speed_line("a", 16)).unwrap();
    let ci = good["throughput_bps_ci"].clone();
    assert!(
        ci.is_array(),
        "the fixture's record has an interval: {good}"
    );
    for (k, bad) in [
        ("throughput_bps", json!(0.0)),
        ("throughput_bps", json!(1.7e308)),
        ("throughput_bps", Value::Null),
        ("throughput_bps", json!(ci[1].as_f64().unwrap() * 2.0)),
        ("throughput_bps_ci", json!([5.0, 1.0])),
        ("samples_bps", json!([-1.0])),
        ("wall_s", json!(-1.0)),
        ("cpu_user_s", json!(-0.5)),
        ("cpu_load_pct", json!(-3.0)),
    ] {
        let mut w = good.clone();
        w[k] = bad.clone();
        let e = parse_line(&w.to_string()).err();
        assert!(
            e.as_ref()
                .is_some_and(|e| e.to_string().starts_with("invalid record")),
            "{k} = {bad}: {e:?}"
        );
    }
    let text = speed_line("a", 16);
    let body = text.strip_suffix('}').unwrap();
    for dup in [
        format!("{body},\"throughput_bps\":1}}"),
        format!("{body},\"size\":64}}"),
        format!("{{\"size\":64,{}", &text[1..]),
    ] {
        let e = parse_line(&dup).err();
        assert!(
            e.as_ref()
                .is_some_and(|e| e.to_string().contains("a key twice")),
            "{dup}: {e:?}"
        );
    }
}

/// The fixture's vpn record made a packet point with round trips and a limit, and a disk
/// record beside it: both read; each value no run writes is refused, naming the field.
#[test]
fn vpn_and_disk_values_no_run_writes_are_refused() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/vpn-openvpn-short.jsonl"
    ))
    .unwrap();
    let mut vpn: Value = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["workload"] == "vpn")
        .unwrap();
    let pps = vpn["bytes"].as_f64().unwrap() / 1400.0 / vpn["transfer_s"].as_f64().unwrap();
    vpn["packet_size"] = json!(1400);
    vpn["pps"] = json!(pps);
    vpn["loss_pct"] = json!(0.5);
    let rtt = json!({"p50": 0.2, "p90": 0.3, "p99": 0.9, "probes": 100, "lost": 1});
    vpn["rtt_idle_ms"] = rtt.clone();
    vpn["rtt_loaded_ms"] = rtt;
    vpn["limit"] = json!({"kind": "thread", "evidence": "thread openvpn used 100%"});
    let disk = json!({
        "kind": "record", "schema": 2, "run_id": vpn["run_id"], "workload": "disk",
        "impl": "dm-crypt", "impl_version": "6.1", "variant": null,
        "label": "aes-xts-plain64 512 xts-aes-aesni default", "throughput_bps": 9e8,
        "throughput_bps_ci": null, "samples_bps": [9e8], "wall_s": 1.0, "cpu_user_s": null,
        "cpu_sys_s": null, "cpu_s_per_gb": null, "others_cpu_pct": 0.0, "disturbed": false,
        "notes": [], "cipher": "aes-xts-plain64", "key_bits": 512,
        "kernel_driver": "xts-aes-aesni", "queues": "default", "pattern": "seq-write",
        "block_size": 1048576, "iodepth": 1, "iops": 858.3, "lat_p50_us": 1.0,
        "lat_p99_us": 2.0, "bare_throughput_bps": 1e9, "bare_iops": 1000.0,
        "primitive_bps": 2e9, "device": "brd", "size_bytes": 33554432, "kcryptd_cpu_s": 0.4,
    });
    for good in [&vpn, &disk] {
        assert!(parse_line(&good.to_string()).is_ok(), "{good}");
    }
    // An older disk record's "not observable" 0 is read as null, its note as now; a 0
    // without that note stays a measured 0.
    let mut old_disk = disk.clone();
    old_disk["notes"] = json!(["others_cpu_pct: not observable for disk, recorded as 0: why"]);
    for (line, others, note) in [
        (
            &old_disk,
            None,
            Some(crate::record::disk::OTHERS_NOT_OBSERVABLE),
        ),
        (&disk, Some(0.0), None),
    ] {
        let Ok(Line::Record(rec)) = parse_line(&line.to_string()) else {
            panic!("a disk record is refused")
        };
        let AnyRecord::Disk(r) = *rec else {
            panic!("not a disk record")
        };
        assert_eq!(r.others_cpu_pct, others);
        assert_eq!(r.notes.first().map(String::as_str), note);
    }
    // A 100,000-character evidence line is kept, cut to STRING_MAX characters; one just
    // at the limit is kept whole.
    for (len, kept) in [(100_000, STRING_MAX), (STRING_MAX, STRING_MAX)] {
        let mut long = vpn.clone();
        long["limit"]["evidence"] = json!("é".repeat(len));
        let Ok(Line::Record(rec)) = parse_line(&long.to_string()) else {
            panic!("a long evidence line is refused")
        };
        let AnyRecord::Vpn(r) = *rec else {
            panic!("not a vpn record")
        };
        let evidence = &r.data.limit.as_ref().unwrap().evidence;
        assert_eq!(evidence.chars().filter(|c| *c == 'é').count(), kept);
        assert_eq!(evidence.contains("cut on read"), len > STRING_MAX, "{len}");
    }
    // A busy machine's share as CI's vpn run wrote it: 100%, rounded past it.
    let mut busy = vpn.clone();
    busy["system_busy_pct"] = json!(100.00000000002241);
    assert!(parse_line(&busy.to_string()).is_ok(), "{busy}");
    let cases: [(&Value, &str, Value, &str); 15] = [
        (&vpn, "pps", json!(-1.0), "pps -1"),
        (
            &vpn,
            "pps",
            json!(pps * 10.0),
            "is not bytes / packet_size / transfer_s",
        ),
        (
            &vpn,
            "loss_pct",
            json!(200.0),
            "loss_pct 200 is not a percentage",
        ),
        (
            &vpn,
            "loss_pct",
            json!(-5.0),
            "loss_pct -5 is not a percentage",
        ),
        (&vpn, "lost_pct", json!(101.0), "lost_pct 101"),
        (
            &vpn,
            "system_busy_pct",
            json!(-125.0),
            "system_busy_pct -125",
        ),
        (
            &vpn,
            "rtt_idle_ms",
            json!({"p50": -1.0, "p90": 1.0, "p99": 50.0, "probes": 9, "lost": 0}),
            "rtt_idle_ms: p50 -1",
        ),
        (
            &vpn,
            "rtt_loaded_ms",
            json!({"p50": 9.0, "p90": 1.0, "p99": 5.0, "probes": 9, "lost": 0}),
            "not round trips in order",
        ),
        (
            &vpn,
            "rtt_loaded_ms",
            json!({"p50": 1.0, "p90": 1.0, "p99": 5.0, "probes": 9, "lost": 10}),
            "10 probes lost of 9 sent",
        ),
        (
            &vpn,
            "limit",
            json!({"kind": "gremlins", "evidence": ""}),
            "limit kind 'gremlins' is none of",
        ),
        (
            &disk,
            "throughput_bps",
            json!(1e10),
            "10.0x the bare disk's",
        ),
        (&disk, "key_bits", json!(7), "key_bits 7"),
        (&disk, "block_size", json!(1000), "block_size 1000"),
        (&disk, "iodepth", json!(3), "iodepth 3"),
        (&disk, "kcryptd_cpu_s", json!(-1.0), "kcryptd_cpu_s -1"),
    ];
    for (good, k, bad, says) in cases {
        let mut w = good.clone();
        w[k] = bad.clone();
        let e = parse_line(&w.to_string()).err().map(|e| e.to_string());
        assert!(
            e.as_deref().is_some_and(|e| e.contains(says)),
            "{k} = {bad}: {e:?}"
        );
    }
}
