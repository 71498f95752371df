//! Study 4: does AVX-512 slow the other threads? Thread scaling of ChaCha20-Poly1305 and
//! AES-GCM with and without AVX-512, the clock during each point, and the mixed test:
//! one AES-GCM thread beside N-1 threads of AVX-512 ChaCha, against non-AVX-512 ChaCha.

use super::{argv, thread_counts, times, Action, Findings, Observed, Opts, Step, Study};
use crate::render::model::{Block, Column, Table};

pub struct Avx512;

const VARIANT: &str = "isa=no-avx512";
/// Differences within this many percent are this shared machine's noise.
const NOISE_PCT: f64 = 15.0;

impl Study for Avx512 {
    fn name(&self) -> &'static str {
        "avx512"
    }
    fn question(&self) -> &'static str {
        "does AVX-512 slow my other threads?"
    }
    fn original(&self) -> &'static str {
        "study 4: AVX-512 ChaCha20-Poly1305 scaled at ~50% per core against ~80% for AES-GCM, the clock fell from ~2400 to ~1200 MHz, and nginx lost 5.5-10% of requests with 10-100% of connections on ChaCha"
    }
    fn steps(&self, o: &Opts) -> Vec<Step> {
        let t = if o.quick { "0.05" } else { "0.3" };
        let tf: f64 = t.parse().unwrap_or(0.3);
        let threads = thread_counts(o.cores);
        let tl: Vec<String> = threads.iter().map(|n| n.to_string()).collect();
        let scaling = argv(&[
            "speed",
            "--impl",
            "openssl",
            "--variant",
            VARIANT,
            "--alg",
            "chacha20-poly1305,aes-128-gcm",
            "--direction",
            "enc",
            "--sizes",
            "16k",
            "--threads",
            &tl.join(","),
            "--time",
            t,
        ]);
        let aes = argv(&[
            "speed",
            "--impl",
            "openssl",
            "--alg",
            "aes-128-gcm",
            "--direction",
            "enc",
            "--sizes",
            "16k",
            "--threads",
            "1",
            "--time",
            t,
        ]);
        let others = o.cores.saturating_sub(1).max(1).to_string();
        let neighbour = argv(&[
            "speed",
            "--impl",
            "openssl",
            "--alg",
            "chacha20-poly1305",
            "--direction",
            "enc",
            "--sizes",
            "16k",
            "--threads",
            &others,
            "--time",
            "5",
        ]);
        let mask = crate::impls::openssl::isa::isa_request("no-avx512")
            .map(|(m, _)| vec![("OPENSSL_ia32cap".to_string(), m)])
            .unwrap_or_default();
        let beside = |env| Action::Beside {
            neighbour: neighbour.clone(),
            neighbour_env: env,
            argv: aes.clone(),
        };
        let step = |tag: &str, seconds: f64, action| Step {
            tag: tag.into(),
            seconds,
            action,
        };
        vec![
            step(
                "scaling",
                4.0 * threads.len() as f64 * tf * 1.2 + 2.0,
                Action::Workload(scaling),
            ),
            step("alone", tf * 1.2 + 1.0, Action::Workload(aes.clone())),
            step("beside avx512", tf * 1.2 + 2.0, beside(Vec::new())),
            step("beside no-avx512", tf * 1.2 + 2.0, beside(mask)),
        ]
    }
    fn analyse(&self, o: &Observed) -> Findings {
        analyse(o)
    }
}

fn analyse(o: &Observed) -> Findings {
    let recs = o.speed("scaling");
    let mut table = Table::new(
        "Thread scaling, 16 KiB, encrypt (efficiency = throughput / (threads x 1-thread))",
        vec![
            Column::text("alg"),
            Column::text("path"),
            Column::num("threads"),
            Column::num("MB/s"),
            Column::num("per core %"),
            Column::text("clock"),
        ],
    );
    let clock_text = "not observable on this machine";
    let mut eff_at_max: Vec<(String, Option<String>, f64, u32)> = Vec::new();
    let max_threads = recs.iter().map(|r| r.threads).max().unwrap_or(1);
    for alg in ["chacha20-poly1305", "aes-128-gcm"] {
        for variant in [None, Some(VARIANT)] {
            let one = recs
                .iter()
                .find(|r| r.alg == alg && r.variant.as_deref() == variant && r.threads == 1)
                .map(|r| r.throughput_bps);
            let mut rows: Vec<_> = recs
                .iter()
                .filter(|r| r.alg == alg && r.variant.as_deref() == variant)
                .collect();
            rows.sort_by_key(|r| r.threads);
            for r in rows {
                let eff = one.and_then(|s| {
                    crate::analyse::scaling::efficiency(r.throughput_bps, s, r.threads)
                });
                if r.threads == max_threads && max_threads > 1 {
                    if let Some(e) = eff {
                        eff_at_max.push((alg.into(), variant.map(str::to_string), e, r.threads));
                    }
                }
                table.push(vec![
                    alg.into(),
                    variant.unwrap_or("base").into(),
                    r.threads.to_string(),
                    crate::render::mbps(r.throughput_bps),
                    eff.map(|e| format!("{:.0}", e * 100.0))
                        .unwrap_or("-".into()),
                    r.clock
                        .as_ref()
                        .map(|c| format!("{:.0} MHz ({:?})", c.mhz, c.source))
                        .unwrap_or(clock_text.into()),
                ]);
            }
        }
    }
    let mut conclusions = Vec::new();
    let eff = |alg: &str, v: Option<&str>| {
        eff_at_max
            .iter()
            .find(|(a, var, _, _)| a == alg && var.as_deref() == v)
            .map(|(_, _, e, n)| (*e, *n))
    };
    match (eff("chacha20-poly1305", None), eff("aes-128-gcm", None)) {
        (Some((c, n)), Some((a, _))) => {
            let agrees = c < a - 0.05;
            conclusions.push(format!(
                "At {n} threads ChaCha20-Poly1305 (AVX-512 path) scales at {:.0}% per core and AES-GCM at {:.0}%: {}",
                c * 100.0,
                a * 100.0,
                if agrees {
                    format!("ChaCha scales worse, {}.", super::agreement(true, 4))
                } else {
                    "ChaCha does not scale worse than AES-GCM here, unlike study 4 (50% against 80%).".into()
                }
            ));
        }
        _ => conclusions.push(format!(
            "Per-core scaling efficiency not observed: {}",
            if max_threads <= 1 && !recs.is_empty() {
                "one core only".to_string()
            } else {
                o.why_missing("scaling")
            }
        )),
    }
    if let Some((c, _)) = eff("chacha20-poly1305", Some(VARIANT)) {
        conclusions.push(format!(
            "Without AVX-512 ChaCha20-Poly1305 scales at {:.0}% per core.",
            c * 100.0
        ));
    }
    let clock_at = |alg: &str| {
        recs.iter()
            .filter(|r| r.alg == alg && r.variant.is_none() && r.threads == max_threads)
            .find_map(|r| r.clock.as_ref().map(|c| c.mhz))
    };
    match (clock_at("chacha20-poly1305"), clock_at("aes-128-gcm")) {
        (Some(c), Some(a)) => conclusions.push(format!(
            "Clock at {max_threads} threads: {c:.0} MHz under ChaCha20-Poly1305 (AVX-512) against {a:.0} MHz under AES-GCM: {}",
            if c < a * 0.9 {
                format!("AVX-512 lowers the clock, {}.", super::agreement(true, 4))
            } else {
                "no AVX-512 clock drop, unlike study 4 (1200 against 2400 MHz).".into()
            }
        )),
        _ => conclusions.push(format!(
            "Clock {clock_text}: no APERF/MPERF, perf cycles or cpufreq here (the run's environment, frequency.source, says why), so the clock drop study 4 saw can be neither confirmed nor ruled out."
        )),
    }
    let mut blocks = vec![Block::Table(table)];
    let aes = |tag: &str| {
        o.speed(tag)
            .iter()
            .find(|r| r.alg == "aes-128-gcm" && r.threads == 1)
            .map(|r| r.throughput_bps)
    };
    let mut mixed = Table::new(
        "One AES-128-GCM thread (16 KiB), alone and beside N-1 ChaCha20-Poly1305 threads",
        vec![
            Column::text("AES-GCM thread"),
            Column::num("MB/s"),
            Column::num("vs alone"),
        ],
    );
    let alone = aes("alone");
    for (tag, what) in [
        ("alone", "alone"),
        ("beside avx512", "beside AVX-512 ChaCha"),
        ("beside no-avx512", "beside non-AVX-512 ChaCha"),
    ] {
        if let Some(v) = aes(tag) {
            mixed.push(vec![
                what.into(),
                crate::render::mbps(v),
                alone.map(|a| times(v / a)).unwrap_or("-".into()),
            ]);
        }
    }
    match (alone, aes("beside avx512"), aes("beside no-avx512")) {
        (Some(_), Some(w), Some(wo)) => {
            let change = (w / wo - 1.0) * 100.0;
            conclusions.push(format!(
                "Mixed test: the AES-GCM thread runs at {} MB/s beside AVX-512 ChaCha and {} MB/s beside non-AVX-512 ChaCha ({change:+.1}% with AVX-512 neighbours): {}",
                crate::render::mbps(w),
                crate::render::mbps(wo),
                if change < -NOISE_PCT {
                    format!("AVX-512 neighbours slow it, {}.", super::agreement(true, 4))
                } else if change > NOISE_PCT {
                    "it is faster beside AVX-512 ChaCha, the opposite of study 4's finding (a VM without frequency scaling has no AVX-512 clock drop to show; the rest is this shared machine's noise).".into()
                } else {
                    format!("no change beyond this machine's noise (±{NOISE_PCT:.0}%), unlike study 4; a VM without frequency scaling has no AVX-512 clock drop to show.")
                }
            ));
            blocks.push(Block::Table(mixed));
        }
        _ => conclusions.push(format!(
            "Mixed test not observed: {}",
            o.why_missing("beside avx512")
        )),
    }
    if recs.is_empty() {
        blocks.remove(0);
    }
    Findings {
        blocks,
        conclusions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::tests::{observed, speed_rec};

    #[test]
    fn efficiency_and_the_neighbours_drop_with_known_answers() {
        let s = |alg, v, n, bps| speed_rec("openssl", v, alg, "enc", 16384, n, bps);
        let o = observed(vec![
            (
                "scaling",
                vec![
                    s("chacha20-poly1305", None, 1, 2e9),
                    s("chacha20-poly1305", None, 2, 2e9),
                    s("aes-128-gcm", None, 1, 4e9),
                    s("aes-128-gcm", None, 2, 7.2e9),
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
            c.contains("scales at 50% per core and AES-GCM at 90%"),
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
}
