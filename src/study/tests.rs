//! Synthetic records for the studies' unit tests, and tests of the shared parts.

use super::definition::{thread_counts, Findings, Tagged};
use super::*;
use crate::record::read::{AnyRecord, Run};
use anyhow::anyhow;

/// Observed runs, one per (tag, records).
pub fn observed(parts: Vec<(&str, Vec<AnyRecord>)>) -> Observed {
    Observed {
        runs: parts
            .into_iter()
            .enumerate()
            .map(|(i, (tag, records))| Tagged {
                tag: tag.into(),
                run: Run {
                    run_id: format!("run{i}"),
                    records,
                    ..Run::default()
                },
            })
            .collect(),
        ..Observed::default()
    }
}

/// A speed record with known throughput (every trial the same) and CPU load.
pub fn speed_rec(
    implementation: &str,
    variant: Option<&str>,
    alg: &str,
    dir: &str,
    size: u64,
    threads: u32,
    bps: f64,
) -> AnyRecord {
    speed_rec_load(implementation, variant, alg, dir, size, threads, bps, 100.0)
}

#[allow(clippy::too_many_arguments)]
pub fn speed_rec_load(
    implementation: &str,
    variant: Option<&str>,
    alg: &str,
    dir: &str,
    size: u64,
    threads: u32,
    bps: f64,
    load: f64,
) -> AnyRecord {
    let label = match variant {
        Some(v) => format!("{implementation} [{v}]"),
        None => implementation.to_string(),
    };
    AnyRecord::Speed(crate::record::read::from_v1(serde_json::json!({
        "kind": "record", "run_id": "r", "workload": "speed",
        "impl": implementation, "impl_version": "1", "variant": variant, "label": label,
        "access": if implementation == "af_alg" { "syscall" } else { "in_process" },
        "driver": null, "library": null,
        "alg": alg, "direction": dir, "size": size, "threads": threads,
        "throughput_bps": bps, "throughput_bps_ci": [bps * 0.99, bps * 1.01],
        "samples_bps": [bps * 0.99, bps, bps * 1.01, bps, bps],
        "ci_level": 0.95, "per_thread_bps": vec![bps / threads as f64; threads as usize],
        "trials": 5, "bytes": 1000, "calls": 10, "batch": 1, "wall_s": 1.0,
        "ops_per_s": bps / size as f64,
        "cpu_user_s": 1.0, "cpu_sys_s": 0.0, "cpu_s_per_gb": 1.0,
        "cpu_load_pct": load, "cpu_user_pct": load, "cpu_sys_pct": 0.0,
        "others_cpu_pct": 0.0, "tsc_cycles_per_byte": null, "scaling_efficiency": null,
        "spread_pct": 2.0, "noisy": false, "disturbed": false, "disturbed_trials": 0,
        "notes": [],
    })))
}

pub fn tls_rec(suite: &str, file: u64, conc: u32, bps: f64) -> AnyRecord {
    let mut r = crate::analyse::tls::tests::rec(suite, file, conc, 1.0, bps as u64, 100.0);
    r.throughput_bps = bps;
    AnyRecord::Tls(r)
}

pub fn vpn_rec(tunnel: &str, cipher: &str, streams: u32, bps: f64, cpu_per_gb: f64) -> AnyRecord {
    AnyRecord::Vpn(crate::analyse::vpn::tests::rec(
        tunnel, cipher, streams, bps, cpu_per_gb,
    ))
}

#[test]
fn thread_counts_double_up_to_the_cores() {
    assert_eq!(thread_counts(1), [1]);
    assert_eq!(thread_counts(2), [1, 2]);
    assert_eq!(thread_counts(6), [1, 2, 4, 6]);
    assert_eq!(thread_counts(8), [1, 2, 4, 8]);
}

#[test]
fn every_study_has_steps_that_parse_and_a_quick_matrix_smaller_than_the_full() {
    let o = Opts {
        quick: false,
        rounds: 3,
        guest: true,
        libcrypto: Vec::new(),
        openssl: Vec::new(),
        cores: 4,
        arch: "x86_64",
        governors: Err((anyhow!("governor not settable: test")).to_string()),
        profile: Err((anyhow!("perf: test")).to_string()),
    };
    for s in all() {
        let full: f64 = s.steps(&o).iter().map(|s| s.seconds).sum();
        let q = Opts {
            quick: true,
            ..o.clone()
        };
        let quick: f64 = s.steps(&q).iter().map(|s| s.seconds).sum();
        assert!(quick < full && quick > 0.0, "{}: {quick} {full}", s.name());
        // Nothing observed: the conclusion still says so instead of being empty.
        let f = s.analyse(&Observed::default());
        assert!(!f.conclusions.is_empty(), "{}", s.name());
    }
}

/// An interrupted study heads every format "INTERRUPTED: steps not
/// run: ..." and draws no conclusion from the part that ran.
#[test]
fn an_interrupted_study_says_so_and_concludes_nothing() {
    let o = quick_opts();
    let f = Findings {
        blocks: Vec::new(),
        conclusions: vec!["AES-NI makes it 4x faster, as study 2 found".into()],
        unobservable: Vec::new(),
    };
    let study = &all()[0];
    let mut ob = Observed {
        not_run: vec!["openvpn (interrupted)".into(), "enc".into()],
        ..Observed::default()
    };
    for format in [Format::Table, Format::Markdown, Format::Html, Format::Json] {
        let out = view::render(study.as_ref(), &o, &ob, &f, format);
        assert!(!out.contains("as study 2 found"), "{out}");
        if format != Format::Json {
            assert!(
                out.contains("INTERRUPTED: steps not run: openvpn (interrupted), enc"),
                "{out}"
            );
        } else {
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(v["interrupted"], true);
            assert_eq!(v["not_run"][1], "enc");
        }
    }
    let table = view::render(study.as_ref(), &o, &ob, &f, Format::Table);
    assert!(table.starts_with("INTERRUPTED"), "{table}");
    // Run to the end: the conclusion is drawn, and nothing says interrupted.
    ob.not_run.clear();
    let out = view::render(study.as_ref(), &o, &ob, &f, Format::Table);
    assert!(out.contains("as study 2 found") && !out.contains("INTERRUPTED"));
}

/// A step that broke and a step this machine cannot run are said apart: the first heads
/// the output "FAILED", the second is listed under "Not observable here" with its reason.
#[test]
fn a_failed_step_is_not_an_unobservable_one() {
    let o = quick_opts();
    let study = &all()[2];
    let ob = Observed {
        failed: vec![("threads".into(), "exited with status 1: boom".into())],
        unavailable: vec![("https".into(), "nginx not found on PATH".into())],
        ..Observed::default()
    };
    let f = study.analyse(&ob);
    let table = view::render(study.as_ref(), &o, &ob, &f, Format::Table);
    assert!(
        table.starts_with("FAILED: steps: threads (exited with status 1: boom)"),
        "{table}"
    );
    assert!(
        table.contains("Thread scaling not observed: failed: exited with status 1: boom"),
        "{table}"
    );
    assert!(
        table.contains("HTTP against HTTPS not observed: cannot be observed here: nginx not found"),
        "{table}"
    );
    let (_, missing) = table.split_once("Not observable here").unwrap();
    assert!(
        missing.contains("cannot be observed here: https: nginx not found on PATH")
            && !missing.contains("threads"),
        "{missing}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&view::render(study.as_ref(), &o, &ob, &f, Format::Json)).unwrap();
    assert_eq!(v["failed"][0]["step"], "threads");
    assert_eq!(v["not_observed"][0]["step"], "https");
}

/// A quick study on a 2-core x86_64 machine where neither governors nor perf can be used.
fn quick_opts() -> Opts {
    Opts {
        quick: true,
        rounds: 1,
        guest: false,
        libcrypto: Vec::new(),
        openssl: Vec::new(),
        cores: 2,
        arch: "x86_64",
        governors: Err((anyhow!("governor not settable: test")).to_string()),
        profile: Err((anyhow!("perf: test")).to_string()),
    }
}

/// A tunnel missing from the guest's run is named with the reason the run wrote for it,
/// not "nothing measured" (CI once failed on that line with no reason to go on).
#[test]
fn a_missing_tunnel_is_named_with_its_runs_reason() {
    use crate::record::{Exclusion, ExclusionKind, LineKind, RunEnd, Workload};
    let mut ob = observed(vec![(
        "guest",
        vec![vpn_rec("openvpn", "AES-128-GCM", 1, 1e8, 10.0)],
    )]);
    ob.runs[0].run.end = Some(RunEnd {
        kind: LineKind::End,
        run_id: "run0".into(),
        interrupted: false,
        points: 1,
        exclusions: vec![Exclusion {
            workload: Workload::Vpn,
            implementation: "openvpn-dco".into(),
            kind: ExclusionKind::Failed,
            reason: "server openvpn did not come up in 240 s".into(),
            point: Default::default(),
        }],
        unavailable: Vec::new(),
        analysis_inputs: Default::default(),
    });
    assert_eq!(
        ob.why_missing_of("guest", "openvpn-dco"),
        "server openvpn did not come up in 240 s"
    );
    assert_eq!(ob.why_missing_of("guest", "wireguard"), "nothing measured");
    let f = all()[0].analyse(&ob);
    assert!(
        f.conclusions
            .iter()
            .any(|c| c
                .contains("OpenVPN DCO not measured: server openvpn did not come up in 240 s.")),
        "{:?}",
        f.conclusions
    );
}

/// guest/run may let a guest step run eight times its estimate (at least its own 600 s)
/// before it counts as hung: the quick offload study's guest step, about 100 s alone,
/// ran past the fixed 600 s on a host busy with another lane's guest.
#[test]
fn guest_steps_may_run_eight_times_their_estimate() {
    let mut guest_steps = 0;
    for quick in [true, false] {
        let o = Opts {
            guest: true,
            quick,
            ..quick_opts()
        };
        for s in all() {
            for step in s.steps(&o) {
                if let Action::Guest(_) = step.action {
                    let limit: f64 = runner::guest_timeout(step.seconds).parse().unwrap();
                    assert!(
                        limit >= 8.0 * step.seconds && limit >= 600.0,
                        "{} {}: {limit} s for {} s expected",
                        s.name(),
                        step.tag,
                        step.seconds
                    );
                    guest_steps += 1;
                }
            }
        }
    }
    // offload and aesni's disk row, quick and full.
    assert!(guest_steps >= 4, "{guest_steps}");
}
