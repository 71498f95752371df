//! The verdict rules on synthetic runs: a clear winner, overlapping intervals, a path
//! that failed, a limit that is not the crypto, one round.

use super::advice::Verdict;
use super::*;
use crate::record::read::{AnyRecord, Run};
use crate::record::window::Limit;
use crate::study::tests::{speed_rec_load, tls_rec, vpn_rec};

/// A vpn throughput point of one round, with its run id and limit.
fn tunnel(path: &str, cipher: &str, round: u32, mbit: f64, limit: &str) -> AnyRecord {
    let AnyRecord::Vpn(mut r) = vpn_rec(path, cipher, 1, mbit * 1e6 / 8.0, 2.0) else {
        unreachable!()
    };
    if let Some(go) = path.strip_suffix("-go") {
        r.data.tunnel = go.into();
        r.impl_version = "wireguard-go 0.0.1".into();
    }
    r.data.round = round;
    r.run_id = format!("vpn{round}");
    r.data.limit = Some(Limit {
        kind: limit.into(),
        evidence: format!("{limit} evidence"),
    });
    AnyRecord::Vpn(r)
}

fn run(id: &str, records: Vec<AnyRecord>) -> Run {
    Run {
        run_id: id.into(),
        records,
        ..Run::default()
    }
}

fn advice(runs: &[Run], missing: Vec<Unavailable>) -> Advice {
    advise(&Input {
        runs: runs.iter().collect(),
        stacks: Vec::new(),
        expected: vec!["openvpn".into(), "wireguard-go".into()],
        missing,
    })
}

fn find<'a>(a: &'a Advice, q: &str) -> &'a Verdict {
    a.verdicts
        .iter()
        .find(|v| v.question.contains(q))
        .unwrap_or_else(|| panic!("no verdict for {q}: {a:#?}"))
}

/// Three rounds each, wireguard-go about 1.8 times OpenVPN's best: named, with an
/// interval above 1, and the cipher verdict within OpenVPN.
#[test]
fn a_clear_winner_is_named_with_its_ratio_and_interval() {
    let mut runs = Vec::new();
    for (round, wg, gcm, chacha) in [
        (1, 900.0, 500.0, 300.0),
        (2, 910.0, 505.0, 305.0),
        (3, 890.0, 495.0, 295.0),
    ] {
        runs.push(run(
            &format!("vpn{round}"),
            vec![
                tunnel("wireguard-go", "CHACHA20-POLY1305", round, wg, "thread"),
                tunnel("openvpn", "AES-256-GCM", round, gcm, "thread"),
                tunnel("openvpn", "CHACHA20-POLY1305", round, chacha, "thread"),
            ],
        ));
    }
    let a = advice(&runs, Vec::new());
    let v = find(&a, "Which tunnel");
    assert!(
        v.answer.starts_with(
            "wireguard-go CHACHA20-POLY1305 is faster than openvpn AES-256-GCM by 1.80x ["
        ),
        "{v:?}"
    );
    let ci = v.ci.unwrap();
    assert!(ci[0] > 1.0 && ci[0] < 1.8 && ci[1] > 1.8, "{ci:?}");
    assert_eq!(v.runs, ["vpn1", "vpn2", "vpn3"]);
    let c = find(&a, "Which cipher for openvpn");
    assert!(
        c.answer
            .starts_with("AES-256-GCM is faster than CHACHA20-POLY1305"),
        "{c:?}"
    );
    // These points recorded no round trips: that alone is listed.
    let listed: Vec<&str> = a.unavailable.iter().map(|u| u.path.as_str()).collect();
    assert_eq!(listed, ["round trips"]);
    let h = &a.headline[0];
    assert_eq!(h.path, "wireguard-go CHACHA20-POLY1305");
    assert!((h.value - 900.0).abs() < 1e-6 && h.ci.is_some(), "{h:?}");
}

/// Rounds that overlap: no winner, "no difference beyond the noise", the interval holds 1.
#[test]
fn overlapping_intervals_name_no_winner() {
    let runs: Vec<Run> = [(1, 500.0, 520.0), (2, 560.0, 480.0), (3, 470.0, 540.0)]
        .into_iter()
        .map(|(round, gcm, chacha)| {
            run(
                &format!("vpn{round}"),
                vec![
                    tunnel("openvpn", "AES-256-GCM", round, gcm, "cpus"),
                    tunnel("openvpn", "CHACHA20-POLY1305", round, chacha, "cpus"),
                ],
            )
        })
        .collect();
    let a = advice(&runs, Vec::new());
    let c = find(&a, "Which cipher for openvpn");
    assert!(
        c.answer.starts_with("no difference beyond the noise"),
        "{c:?}"
    );
    let ci = c.ci.unwrap();
    assert!(ci[0] <= 1.0 && ci[1] >= 1.0, "{ci:?}");
    // Only one tunnel ran: its verdict says it cannot decide, and the missing one is listed.
    assert!(find(&a, "Which tunnel").answer.starts_with("cannot decide"));
    assert_eq!(a.unavailable[0].path, "wireguard-go");
    assert!(a.unavailable[0].reason.starts_with("nothing measured"));
}

/// A path whose step failed gets no verdict, even from the records it wrote before it
/// failed: only its `unavailable` entry.
#[test]
fn a_failed_path_gets_no_verdict_only_its_reason() {
    let runs: Vec<Run> = (1..=3)
        .map(|round| {
            run(
                &format!("vpn{round}"),
                vec![
                    tunnel("wireguard-go", "CHACHA20-POLY1305", round, 900.0, "thread"),
                    tunnel("openvpn", "AES-256-GCM", round, 500.0, "thread"),
                ],
            )
        })
        .collect();
    let failed = Unavailable {
        path: "wireguard-go".into(),
        reason: "failed: exited with status 1".into(),
    };
    let a = advice(&runs, vec![failed.clone()]);
    for v in &a.verdicts {
        assert!(
            !v.answer.contains("wireguard") && !v.evidence.contains("wireguard"),
            "{v:?}"
        );
    }
    assert_eq!(a.unavailable[0], failed);
    assert_eq!(a.unavailable.len(), 2, "{:?}", a.unavailable);
    assert_eq!(a.unavailable[1].path, "round trips");
    assert!(find(&a, "Which tunnel")
        .answer
        .contains("only openvpn AES-256-GCM"));
}

/// The fastest tunnel limited by the load generator: the verdict says it is not the
/// path measured, with the record's evidence, and names the run of the median round.
#[test]
fn a_limit_that_is_not_the_crypto_says_so_with_its_evidence() {
    let runs: Vec<Run> = [(1, 900.0), (2, 950.0), (3, 800.0)]
        .into_iter()
        .map(|(round, v)| {
            run(
                &format!("vpn{round}"),
                vec![tunnel(
                    "wireguard-go",
                    "CHACHA20-POLY1305",
                    round,
                    v,
                    "generator",
                )],
            )
        })
        .collect();
    let a = advice(&runs, Vec::new());
    let l = find(&a, "What limits the fastest tunnel");
    assert!(
        l.answer
            .contains("the load generator, not the path measured"),
        "{l:?}"
    );
    assert!(!l.answer.contains("its crypto"), "{l:?}");
    assert_eq!(l.evidence, "generator evidence");
    assert_eq!(l.runs, ["vpn1"]);
    assert_eq!(a.headline[0].limit.as_deref(), Some("generator"));
}

/// One round a side: a ratio but no interval, and the answer says it cannot decide.
#[test]
fn one_round_cannot_decide() {
    let runs = vec![run(
        "vpn1",
        vec![
            tunnel("wireguard-go", "CHACHA20-POLY1305", 1, 900.0, "thread"),
            tunnel("openvpn", "AES-256-GCM", 1, 300.0, "thread"),
        ],
    )];
    let a = advice(&runs, Vec::new());
    let v = find(&a, "Which tunnel");
    assert!(v.answer.starts_with("one round cannot decide"), "{v:?}");
    assert_eq!(v.ci, None);
    assert!((v.ratio.unwrap() - 3.0).abs() < 1e-9);
}

/// The speed trials of AES-GCM and ChaCha20 at 1400 B, and a TLS suite pair over three
/// runs each, one of the suites through kernel TLS.
#[test]
fn speed_and_tls_verdicts_read_their_own_records() {
    let speed = run(
        "speed",
        vec![
            speed_rec_load("openssl", None, "aes-128-gcm", "enc", 1400, 1, 4e9, 100.0),
            speed_rec_load(
                "ring",
                None,
                "chacha20-poly1305",
                "enc",
                1400,
                1,
                1e9,
                100.0,
            ),
            speed_rec_load("ring", None, "chacha20-poly1305", "enc", 64, 1, 9e9, 100.0),
        ],
    );
    let mut runs = vec![speed];
    for (i, (gcm, chacha)) in [(250e6, 180e6), (255e6, 185e6), (245e6, 175e6)]
        .into_iter()
        .enumerate()
    {
        let mut k = tls_rec("TLS_AES_128_GCM_SHA256+ktls", 102400, 4, gcm);
        if let AnyRecord::Tls(r) = &mut k {
            r.throughput_bps = gcm * 1.01;
        }
        runs.push(run(
            &format!("tls{i}"),
            vec![
                tls_rec("TLS_AES_128_GCM_SHA256", 102400, 4, gcm),
                tls_rec("TLS_CHACHA20_POLY1305_SHA256", 102400, 4, chacha),
                k,
            ],
        ));
    }
    let a = advice(&runs, Vec::new());
    let s = find(&a, "AES-GCM or ChaCha20");
    assert!(
        s.answer
            .starts_with("openssl aes-128-gcm is faster than ring chacha20-poly1305 by 4.00x"),
        "{s:?}"
    );
    let t = find(&a, "Which TLS suite");
    assert!(
        t.answer.starts_with("TLS_AES_128_GCM_SHA256 is faster"),
        "{t:?}"
    );
    let k = find(&a, "Does kernel TLS help TLS_AES_128_GCM_SHA256");
    assert!(
        k.answer.starts_with("no difference beyond the noise"),
        "{k:?}"
    );
    // kTLS's CPU per GB has a verdict of its own (each round: the same on both sides).
    let c = find(
        &a,
        "Does kernel TLS save CPU per GB for TLS_AES_128_GCM_SHA256",
    );
    assert!(
        c.answer
            .starts_with("no difference beyond the noise in CPU per GB"),
        "{c:?}"
    );
}

/// A tunnel point of one round with its CPU per GB and round trips (idle, loaded p50).
fn costed(path: &str, round: u32, mbit: f64, cpu: f64, rtt: Option<(f64, f64)>) -> AnyRecord {
    let AnyRecord::Vpn(mut r) = tunnel(path, "AES-256-GCM", round, mbit, "thread") else {
        unreachable!()
    };
    if path == "openvpn-dco" {
        r.data.tunnel = "openvpn-dco".into();
    }
    r.cpu_s_per_gb = Some(cpu);
    let p50 = |ms: f64| crate::record::vpn::Rtt {
        p50: ms,
        p90: ms * 1.2,
        p99: ms * 1.5,
        probes: 100,
        lost: 0,
    };
    r.data.rtt_idle_ms = rtt.map(|(i, _)| p50(i));
    r.data.rtt_loaded_ms = rtt.map(|(_, l)| p50(l));
    AnyRecord::Vpn(r)
}

/// DCO at about 3 CPU s/GB against user-space OpenVPN's 7 over three rounds: it helps, by
/// the difference, with user space's ratio above 1 and its interval excluding 1. The same
/// CPU within the noise: no difference. One round: cannot decide.
#[test]
fn cpu_per_gb_is_a_verdict_of_its_own() {
    let rounds = |dco: [f64; 3], user: [f64; 3]| -> Vec<Run> {
        (0..3)
            .map(|i| {
                let round = i as u32 + 1;
                run(
                    &format!("vpn{round}"),
                    vec![
                        costed("openvpn-dco", round, 900.0, dco[i], None),
                        costed("openvpn", round, 600.0 + i as f64, user[i], None),
                    ],
                )
            })
            .collect()
    };
    let q = "Does openvpn-dco save CPU per GB here?";
    let a = advice(&rounds([3.0, 3.1, 2.9], [7.0, 7.2, 6.9]), Vec::new());
    let v = find(&a, q);
    assert!(
        v.answer
            .starts_with("openvpn-dco helps here by 4.00 CPU s/GB: 3.00 against openvpn's 7.00"),
        "{v:?}"
    );
    let ci = v.ci.unwrap();
    assert!(
        ci[0] > 1.0 && ci[0] < 7.0 / 3.0 && ci[1] > 7.0 / 3.0,
        "{v:?}"
    );
    assert!((v.ratio.unwrap() - 7.0 / 3.0).abs() < 1e-9, "{v:?}");
    let a = advice(&rounds([5.0, 5.4, 4.6], [5.1, 4.7, 5.3]), Vec::new());
    assert!(
        find(&a, q)
            .answer
            .starts_with("no difference beyond the noise in CPU per GB"),
        "{:?}",
        find(&a, q)
    );
    // DCO costing more is said so, never "helps".
    let a = advice(&rounds([7.0, 7.2, 6.9], [3.0, 3.1, 2.9]), Vec::new());
    assert!(
        find(&a, q)
            .answer
            .starts_with("openvpn-dco costs more here"),
        "{:?}",
        find(&a, q)
    );
    let one = advice(&rounds([3.0, 3.1, 2.9], [7.0, 7.2, 6.9])[..1], Vec::new());
    assert!(find(&one, q).answer.starts_with("one round cannot decide"));
}

/// Round trips from the records: the load adds about 3 ms to the fastest tunnel's, and
/// wireguard-go keeps them lower under load than OpenVPN, each with its interval. Without
/// any round trip recorded: no verdict, one `unavailable` entry.
#[test]
fn round_trips_idle_and_loaded_are_verdicts() {
    let runs: Vec<Run> = [
        (1, 0.20, 3.1, 9.0),
        (2, 0.22, 3.3, 9.5),
        (3, 0.21, 2.9, 8.8),
    ]
    .into_iter()
    .map(|(round, idle, wg, ovpn)| {
        run(
            &format!("vpn{round}"),
            vec![
                costed("wireguard-go", round, 900.0, 2.0, Some((idle, wg))),
                costed("openvpn", round, 500.0, 4.0, Some((idle, ovpn))),
            ],
        )
    })
    .collect();
    let a = advice(&runs, Vec::new());
    let l = find(&a, "Latency under load through wireguard-go AES-256-GCM");
    assert!(
        l.answer
            .starts_with("load adds 2.89 ms: 0.21 ms idle, 3.10 ms under load"),
        "{l:?}"
    );
    assert!(l.ci.unwrap()[0] > 1.0, "{l:?}");
    let w = find(&a, "Which tunnel keeps round trips lowest under load");
    assert!(
        w.answer.starts_with(
            "wireguard-go AES-256-GCM keeps round trips lower under load than openvpn AES-256-GCM"
        ),
        "{w:?}"
    );
    assert!(w.ci.unwrap()[0] > 1.0, "{w:?}");
    assert!(a.unavailable.is_empty(), "{:?}", a.unavailable);
    // The same points without round trips (vpn --dut): listed, never a verdict.
    let bare: Vec<Run> = (1..=3)
        .map(|round| {
            run(
                &format!("vpn{round}"),
                vec![costed("wireguard-go", round, 900.0, 2.0, None)],
            )
        })
        .collect();
    let a = advice(&bare, Vec::new());
    assert!(a
        .verdicts
        .iter()
        .all(|v| !v.question.contains("round trips")));
    assert!(
        a.unavailable.iter().any(|u| u.path == "round trips"),
        "{:?}",
        a.unavailable
    );
}

/// A run on an emulated CPU (qemu) qualifies every verdict: the ratios are the emulator's.
/// The same runs on real hardware say nothing of it.
#[test]
fn verdicts_from_an_emulated_cpu_say_so() {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/schema1-mixed.jsonl"
    );
    let env = crate::record::read::read_files(&[fixture.into()])
        .unwrap()
        .runs
        .into_iter()
        .find_map(|r| r.environment)
        .unwrap();
    let runs_on = |emulated: bool| -> Vec<Run> {
        (1..=3)
            .map(|round| {
                let mut r = run(
                    &format!("vpn{round}"),
                    vec![
                        tunnel(
                            "openvpn",
                            "AES-256-GCM",
                            round,
                            500.0 + round as f64,
                            "cpus",
                        ),
                        tunnel("openvpn", "CHACHA20-POLY1305", round, 300.0, "cpus"),
                    ],
                );
                let mut e = env.clone();
                e.emulated = emulated;
                r.environment = Some(e);
                r
            })
            .collect()
    };
    let a = advice(&runs_on(true), Vec::new());
    assert!(a.verdicts.len() >= 2, "{a:#?}");
    for v in &a.verdicts {
        assert!(v.answer.ends_with(EMULATED), "{v:?}");
    }
    let real = advice(&runs_on(false), Vec::new());
    assert!(real.verdicts.iter().all(|v| !v.answer.contains("emulated")));
}

/// One server on one library at one thread, a handshake point (or its keep-alive control)
/// of one round.
fn stack(server: &str, lib: &str, version: &str, handshake: bool, value: f64) -> AnyRecord {
    use crate::record::tls::{ServerInfo, TlsLib, TlsLibProof};
    let mut r = crate::analyse::tls::tests::rec("TLS_AES_128_GCM_SHA256", 4096, 10, 1.0, 1, value);
    r.data.handshake = handshake;
    r.throughput_bps = value * 4096.0;
    r.data.server = Some(ServerInfo {
        name: server.into(),
        version: "x".into(),
        threads: 1,
    });
    r.data.tls_lib = Some(TlsLib {
        name: lib.into(),
        version: version.into(),
        proof: TlsLibProof {
            process: format!("{server} (pid 1)"),
            libcrypto: "/x/libcrypto.so.3".into(),
            libssl: None,
        },
    });
    AnyRecord::Tls(r)
}

#[test]
fn the_stack_question_names_the_server_and_library_with_the_interval() {
    let system = "OpenSSL 3.0.19 27 Jan 2026";
    let mut recs = Vec::new();
    for (round, d) in [(1, 0.0), (2, 10.0), (3, -10.0)] {
        for (server, lib, version, hs, ka) in [
            ("haproxy", "system", system, 600.0, 40_000.0),
            ("haproxy", "aws-lc", "AWS-LC 5.12.0", 800.0, 44_000.0),
            ("nginx", "system", system, 500.0, 38_000.0),
        ] {
            for (handshake, v) in [(true, hs), (false, ka)] {
                let AnyRecord::Tls(mut r) = stack(server, lib, version, handshake, v + d) else {
                    unreachable!()
                };
                r.data.round = round;
                r.label = format!("{server} {lib} {handshake} {round}");
                recs.push(AnyRecord::Tls(r));
            }
        }
    }
    let runs = [run("stacks", recs)];
    let a = advise(&Input {
        runs: Vec::new(),
        stacks: runs.iter().collect(),
        expected: vec![STACKS_PATH.into()],
        missing: Vec::new(),
    });
    assert!(a.unavailable.is_empty(), "{:?}", a.unavailable);
    let top = find(&a, stacks::STACKS);
    assert!(
        top.answer.starts_with("haproxy on AWS-LC 5.12.0 is faster than haproxy on the system's OpenSSL 3.0.19 by 1.33x ["),
        "{}",
        top.answer
    );
    let lib = find(
        &a,
        &format!("{ANOTHER_LIBRARY} (haproxy, handshakes per core)"),
    );
    assert!(lib.ci.is_some_and(|[lo, _]| lo > 1.0), "{lib:?}");
    let ka = find(
        &a,
        &format!("{ANOTHER_LIBRARY} (haproxy, keep-alive throughput, one core)"),
    );
    assert!(
        ka.answer.contains("faster") && ka.answer.contains("1.10x"),
        "{}",
        ka.answer
    );
    // nginx ran on the system's library only: nothing to say about another one for it.
    assert!(!a.verdicts.iter().any(|v| v.question.contains("(nginx,")));
    let speedup = a
        .headline
        .iter()
        .find(|f| f.what == "TLS stack speedup over the system library")
        .expect("the row's speedup");
    assert!(
        (speedup.value - 800.0 / 600.0).abs() < 1e-6 && speedup.ci.is_some(),
        "{speedup:?}"
    );
    // The stack runs never feed the TLS suite verdicts.
    assert!(!a.verdicts.iter().any(|v| v.question.contains("TLS suite")));
}

/// With OpenSSL builds measured beside it, the system's OpenSSL is labelled by its version
/// like them: it is told apart by the library it was loaded from, and a build can be the
/// other library.
#[test]
fn an_openssl_build_is_another_library_and_the_system_is_known_by_its_path() {
    let rec = |label: &str, library: &str, version: &str, bps: f64| {
        let AnyRecord::Speed(mut r) = crate::study::tests::speed_rec_load(
            "openssl",
            None,
            "aes-128-gcm",
            "enc",
            16384,
            1,
            bps,
            0.0,
        ) else {
            unreachable!()
        };
        r.label = label.into();
        r.impl_version = version.into();
        r.data.library = Some(library.into());
        AnyRecord::Speed(r)
    };
    let runs = [run(
        "speed",
        vec![
            rec(
                "openssl 3.0.19",
                "/lib/x86_64-linux-gnu/libcrypto.so.3",
                "OpenSSL 3.0.19 27 Jan 2026",
                5e9,
            ),
            rec(
                "openssl 3.5.5",
                "/root/.cache/cryptobench/openssl/3.5.5-asm/lib/libcrypto.so.3",
                "OpenSSL 3.5.5 27 Jan 2026",
                10e9,
            ),
        ],
    )];
    let a = advice(&runs, Vec::new());
    let v = find(
        &a,
        &format!("{ANOTHER_LIBRARY} (AES-128-GCM, 16 KiB, one core)"),
    );
    assert!(
        v.answer
            .starts_with("openssl 3.5.5 is faster than the system's OpenSSL 3.0.19 by 2.00x"),
        "{}",
        v.answer
    );
}
