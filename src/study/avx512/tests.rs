use super::*;
use crate::record::read::AnyRecord;
use crate::study::tests::{observed, speed_rec};

#[test]
fn efficiency_and_the_neighbours_drop_with_known_answers() {
    let s = |alg, v, n, bps| speed_rec("openssl", v, alg, "enc", 16384, n, bps);
    // The 2-thread points' efficiency intervals, as a scaling run records them.
    let ci = |alg, v, bps, ci| {
        let mut r = s(alg, v, 2, bps);
        if let AnyRecord::Speed(x) = &mut r {
            x.scaling_efficiency_ci = Some(ci);
        }
        r
    };
    let o = observed(vec![
        (
            "scaling",
            vec![
                s("chacha20-poly1305", None, 1, 2e9),
                ci("chacha20-poly1305", None, 2e9, [0.45, 0.55]),
                s("aes-128-gcm", None, 1, 4e9),
                ci("aes-128-gcm", None, 7.2e9, [0.85, 0.95]),
                s("chacha20-poly1305", Some(VARIANT), 1, 1e9),
                s("chacha20-poly1305", Some(VARIANT), 2, 1.8e9),
            ],
        ),
        ("alone", vec![s("aes-128-gcm", None, 1, 4e9)]),
        ("beside avx512", vec![s("aes-128-gcm", None, 1, 3e9)]),
        ("beside no-avx512", vec![s("aes-128-gcm", None, 1, 4e9)]),
    ]);
    let c = analyse(&o).conclusions.join("\n");
    assert!(
        c.contains("scales at 50% [45-55%] per core and AES-GCM at 90% [85-95%]"),
        "{c}"
    );
    assert!(c.contains("ChaCha scales worse, as study 4 found"), "{c}");
    assert!(
        c.contains("Without AVX-512 ChaCha20-Poly1305 scales at 90%"),
        "{c}"
    );
    assert!(
        c.contains(
            "(-25.0% with AVX-512 neighbours): AVX-512 neighbours slow it, as study 4 found"
        ),
        "{c}"
    );
    assert!(c.contains("Clock not observable on this machine"), "{c}");
}

/// A CPU without AVX-512 (a Zen 3): said first, with libcrypto's word on the variant;
/// no "as study 4 found" from two paths that run the same code; "scales worse" only
/// beyond the interval of the paired 1- and 2-thread trials.
#[test]
fn a_cpu_without_avx512_says_so_first_and_concludes_nothing_from_the_paths() {
    let s = |alg, v, n, bps, ci: Option<[f64; 2]>| {
        let mut r = speed_rec("openssl", v, alg, "enc", 16384, n, bps);
        if let AnyRecord::Speed(x) = &mut r {
            x.scaling_efficiency_ci = ci;
        }
        r
    };
    let scaling = |chacha_ci| {
        vec![
            s("chacha20-poly1305", None, 1, 2e9, None),
            s("chacha20-poly1305", None, 2, 2e9, Some(chacha_ci)),
            s("aes-128-gcm", None, 1, 4e9, None),
            s("aes-128-gcm", None, 2, 6.64e9, Some([0.80, 0.86])),
        ]
    };
    let zen3 = |o: &mut Observed| {
        let env: crate::record::Environment = serde_json::from_value(serde_json::json!({
            "schema": 2, "run_id": "run0", "cryptobench_version": "0", "started_unix": 0,
            "command_line": [], "hostname": "h", "kernel": "k",
            "cpu": {"crypto_flags": ["aes", "avx2", "vaes", "vpclmulqdq"]},
            "frequency": {}, "libraries": [], "settings": {},
            "unavailable": [{"name": "openssl [isa=no-avx512]", "reason": "changes nothing on this CPU: it has no AVX-512"}],
        }))
        .unwrap();
        o.runs[0].run.environment = Some(env);
    };
    let mut o = observed(vec![
        ("scaling", scaling([0.40, 0.60])),
        ("alone", vec![s("aes-128-gcm", None, 1, 4e9, None)]),
        ("beside avx512", vec![s("aes-128-gcm", None, 1, 3e9, None)]),
        (
            "beside no-avx512",
            vec![s("aes-128-gcm", None, 1, 4e9, None)],
        ),
    ]);
    zen3(&mut o);
    let f = analyse(&o);
    let Block::Lines(first) = &f.blocks[0] else {
        panic!("{:?}", f.blocks[0])
    };
    assert!(
        first[0].starts_with("Not observable here: this CPU has no AVX-512"),
        "{first:?}"
    );
    assert_eq!(
        first[1],
        "isa=no-avx512 was not measured: changes nothing on this CPU: it has no AVX-512."
    );
    let c = f.conclusions.join("\n");
    assert!(!c.contains("as study 4 found"), "{c}");
    assert!(c.contains("ChaCha20-Poly1305 (no AVX-512 on this CPU) scales at 50% [40-60%] per core and AES-GCM at 83% [80-86%]: ChaCha scales worse, but this CPU has no AVX-512, so it is not study 4's effect."), "{c}");
    assert!(
        c.contains(
            "(-25.0% with AVX-512 neighbours): both neighbours run the same code on this CPU"
        ),
        "{c}"
    );
    let Block::Table(t) = &f.blocks[1] else {
        panic!()
    };
    assert_eq!(t.rows[0][1], "base (no AVX-512 here)");
    // Intervals that overlap: no "worse" at all.
    let mut o = observed(vec![("scaling", scaling([0.40, 0.82]))]);
    zen3(&mut o);
    let c = analyse(&o).conclusions.join("\n");
    assert!(c.contains("scales at 50% [40-82%] per core and AES-GCM at 83% [80-86%]: no difference beyond the noise"), "{c}");
}

/// A tls run of one share: AES alone, ChaCha alone and the mix, with known rates.
fn nginx_run(
    share: u32,
    aes_rps: f64,
    chacha_rps: f64,
    mix_rps: f64,
    aes_conn_bps: f64,
) -> Vec<AnyRecord> {
    use crate::analyse::tls::tests::rec;
    use crate::record::tls::MixPart;
    let (aes, chacha) = ("TLS_AES_128_GCM_SHA256", "TLS_CHACHA20_POLY1305_SHA256");
    let mut m = rec("mix", 102400, 10, 1.0, 1, mix_rps);
    let part = |suite: &str, pct: f64, conns: u32, rps: f64, bytes_per_req: f64| MixPart {
        suite: suite.into(),
        negotiated: String::new(),
        percent: pct,
        connections: conns,
        requests: rps as u64,
        requests_per_s: rps,
        bytes: (rps * bytes_per_req) as u64,
        errors: 0,
        latency_ms: None,
        server_requests: rps as u64,
        port: 1,
    };
    let c = share as f64 / 10.0;
    // Each AES-GCM connection moves aes_conn_bps at 100 000 bytes per request.
    let aes_req = aes_conn_bps * (10.0 - c) / 100_000.0;
    m.mix = Some(vec![
        part(chacha, share as f64, c as u32, mix_rps - aes_req, 100_000.0),
        part(aes, 100.0 - share as f64, 10 - c as u32, aes_req, 100_000.0),
    ]);
    let mut a = rec(aes, 102400, 10, 1.0, 1, aes_rps);
    // 10 connections at 100 MB/s each alone.
    a.throughput_bps = 1e9;
    vec![
        AnyRecord::Tls(a),
        AnyRecord::Tls(rec(chacha, 102400, 10, 1.0, 1, chacha_rps)),
        AnyRecord::Tls(m),
    ]
}

#[test]
fn nginx_mix_against_aes_alone_on_both_paths() {
    let mut o = observed(vec![
        (
            &nginx_tag(10, false),
            nginx_run(10, 1000.0, 800.0, 950.0, 80e6),
        ),
        (
            &nginx_tag(20, false),
            nginx_run(20, 1000.0, 800.0, 900.0, 80e6),
        ),
        (
            &nginx_tag(10, true),
            nginx_run(10, 1000.0, 500.0, 940.0, 100e6),
        ),
        (
            &nginx_tag(20, true),
            nginx_run(20, 1000.0, 500.0, 890.0, 100e6),
        ),
    ]);
    // Other load during the masked 20% mix: that share's verdict says so.
    if let AnyRecord::Tls(m) = &mut o.runs[3].run.records[2] {
        m.disturbed = true;
    }
    let f = analyse(&o);
    let c = f.conclusions.join("\n");
    assert!(
        c.contains(
            "connections: 10% ChaCha -5.0%, 20% ChaCha -10.0%, 100% ChaCha -20.0%: one round cannot decide: run without --quick (one nginx run a side, no interval)."
        ),
        "{c}"
    );
    // 80 MB/s of 100 beside AVX-512 ChaCha, 100 of 100 beside the masked path: -20
    // points, but from one run a side, so neither "as study 4 found" nor "the opposite".
    assert!(
        c.contains("10% ChaCha: the AES-GCM connections keep 80% of their speed alone beside AVX-512 ChaCha and 100% beside non-AVX-512 ChaCha (-20 points): one round cannot decide: run without --quick (one nginx run a side, no interval)."),
        "{c}"
    );
    assert!(
        !c.contains("study 4 found") && !c.contains("opposite"),
        "{c}"
    );
    assert!(
        c.contains("no interval).\nnginx, 20% ChaCha")
            && c.ends_with(
                "Other processes disturbed these points, so this is not a finding here."
            ),
        "{c}"
    );
    let t = f
        .blocks
        .iter()
        .find_map(|b| match b {
            Block::Table(t) if t.title.starts_with("nginx") => Some(t),
            _ => None,
        })
        .expect("the nginx table");
    // 2 mixes and the 100% row per path.
    assert_eq!(t.rows.len(), 6, "{t:?}");
    assert_eq!(t.rows[2][1], "100%");
    assert_eq!(t.rows[2][3], "-20.0%");
    assert_eq!(t.rows[5][3], "-50.0%");
    // Nothing measured: said, with the step.
    let c = analyse(&Observed::default()).conclusions.join("\n");
    assert!(
        c.contains("nginx mix not observed: nothing measured"),
        "{c}"
    );
}

/// Each mix over three rounds (study --rounds 3): the interval decides study 4's nginx
/// findings, and rounds that spread over each other are no finding.
#[test]
fn nginx_rounds_give_each_mix_its_interval() {
    let (t, tm) = (nginx_tag(10, false), nginx_tag(10, true));
    let run = |spread: &[f64]| {
        let mut parts = Vec::new();
        for j in spread {
            // The mix at 70% of AES-GCM alone, ChaCha alone at 60%; the AES-GCM
            // connections keep 60% beside AVX-512 ChaCha, 100% beside the masked path.
            parts.push((
                t.as_str(),
                nginx_run(10, 1000.0 * j, 600.0 * j, 700.0 * j, 60e6 * j),
            ));
            parts.push((
                tm.as_str(),
                nginx_run(10, 1000.0 * j, 600.0 * j, 980.0 * j, 100e6 * j),
            ));
        }
        analyse(&observed(parts)).conclusions.join("\n")
    };
    let c = run(&[1.0, 0.99, 1.01]);
    assert!(
        c.contains("100% ChaCha -40.0%: every mix is slower than AES-GCM alone, as study 4 found"),
        "{c}"
    );
    assert!(
        c.contains("(-40 points): AVX-512 ChaCha slows its AES-GCM neighbours, as study 4 found."),
        "{c}"
    );
    let c = run(&[0.5, 1.0, 1.6]);
    assert!(
        c.contains("not every mix is slower than AES-GCM alone beyond the noise, unlike study 4"),
        "{c}"
    );
    assert!(!c.contains("cannot decide"), "{c}");
}

/// A quick round seen on a Zen 4: +42% beside AVX-512 ChaCha from one value a side (no trials
/// kept) is no finding either way; the same runs with tight trials are.
#[test]
fn the_mixed_test_claims_nothing_from_one_value_a_side() {
    let s = |bps: f64, trials: bool| {
        let mut r = speed_rec("openssl", None, "aes-128-gcm", "enc", 16384, 1, bps);
        if let AnyRecord::Speed(x) = &mut r {
            if !trials {
                x.samples_bps.clear();
            }
        }
        r
    };
    let run = |trials| {
        observed(vec![
            ("alone", vec![s(4e9, trials)]),
            ("beside avx512", vec![s(5.68e9, trials)]),
            ("beside no-avx512", vec![s(4e9, trials)]),
        ])
    };
    let c = analyse(&run(false)).conclusions.join("\n");
    assert!(
        c.contains(
            "(+42.0% with AVX-512 neighbours): one round cannot decide: run without --quick."
        ),
        "{c}"
    );
    assert!(
        !c.contains("opposite") && !c.contains("as study 4 found"),
        "{c}"
    );
    let c = analyse(&run(true)).conclusions.join("\n");
    assert!(
        c.contains("(+42.0% with AVX-512 neighbours): it is faster beside AVX-512 ChaCha than beside non-AVX-512 ChaCha, the opposite of study 4's finding"),
        "{c}"
    );
}
