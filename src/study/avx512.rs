//! Study 4: does AVX-512 slow the other threads? Thread scaling of ChaCha20-Poly1305 and
//! AES-GCM with and without AVX-512, the clock during each point, and the mixed test:
//! one AES-GCM thread beside N-1 threads of AVX-512 ChaCha, against non-AVX-512 ChaCha.

use super::definition::{argv, thread_counts, Action, Findings, Observed, Opts, Step, Study};
use super::quote::times;
use super::verdict::NOISE_PCT;
use crate::algorithms::Algorithm;
use crate::analyse::decide::{decide, Decision, Difference};
use crate::analyse::stats::median;
use crate::analyse::tls::{mixes, MixResult};
use crate::record::tls::{TlsData, TlsRecord};
use crate::record::Listed;
use crate::render::model::{Block, Column, Table};

pub struct Avx512;

const VARIANT: &str = "isa=no-avx512";
/// ChaCha20-Poly1305's shares of nginx's connections in the mixes (study 4's; its 100%
/// is ChaCha alone, measured in every run).
const MIX_SHARES: [u32; 2] = [10, 20];
const MIX_FILE: &str = "100k";
const MIX_CONNECTIONS: u32 = 10;

/// The step's tag for the mix with `share` % ChaCha, on the AVX-512 path or masked.
fn nginx_tag(share: u32, masked: bool) -> String {
    format!(
        "nginx chacha {share}%{}",
        if masked { " no-avx512" } else { "" }
    )
}

/// `tls` serving AES-128-GCM alone, ChaCha20-Poly1305 alone and the mix of the two.
fn nginx_mix(share: u32, seconds: &str) -> Vec<String> {
    argv(&[
        "tls",
        "--suites",
        "aes128gcm",
        "--mix",
        &format!("chacha={share}%,aes128gcm={}%", 100 - share),
        "--files",
        MIX_FILE,
        "--concurrency",
        &MIX_CONNECTIONS.to_string(),
        "--time",
        seconds,
    ])
}

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
        let mut steps = vec![
            step(
                "scaling",
                4.0 * threads.len() as f64 * tf * 1.2 + 2.0,
                Action::Workload(scaling),
            ),
            step("alone", tf * 1.2 + 1.0, Action::Workload(aes.clone())),
            step("beside avx512", tf * 1.2 + 2.0, beside(Vec::new())),
            step("beside no-avx512", tf * 1.2 + 2.0, beside(mask.clone())),
        ];
        // nginx: AES-GCM alone, ChaCha alone (100%) and the mix, per share and ISA path;
        // the mask reaches nginx (and wrk) through the environment of a child cryptobench.
        let d = if o.quick { "1" } else { "5" };
        let shares: &[u32] = if o.quick { &[20] } else { &MIX_SHARES };
        // Each mix `--rounds` times, both paths in turn, so that drift hits both alike and
        // every verdict on a mix has an interval over its rounds.
        for _ in 0..o.rounds {
            for &p in shares {
                let tls = nginx_mix(p, d);
                let seconds = 3.0 * (d.parse::<f64>().unwrap_or(5.0) + 1.5) + 2.0;
                steps.push(step(
                    &nginx_tag(p, false),
                    seconds,
                    Action::Workload(tls.clone()),
                ));
                steps.push(step(
                    &nginx_tag(p, true),
                    seconds,
                    Action::Child {
                        env: mask.clone(),
                        argv: tls,
                    },
                ));
            }
        }
        steps
    }
    fn analyse(&self, o: &Observed) -> Findings {
        analyse(o)
    }
}

/// What this CPU lets the study show, from the scaling run's environment: whether it has
/// AVX-512 (None: not recorded), and what libcrypto reports for the two paths.
struct Cpu {
    avx512: Option<bool>,
    /// One line comparing libcrypto's effective capability words (CPUINFO) of the base and
    /// of isa=no-avx512, saying when they select the same code.
    caps: Option<String>,
}

impl Cpu {
    fn of(o: &Observed) -> Cpu {
        let env = o.tagged("scaling").find_map(|r| r.environment.as_ref());
        let avx512 = env.map(|e| e.cpu.crypto_flags.iter().any(|x| x == "avx512f"));
        let caps = env.and_then(|e| {
            let variant = e
                .libraries
                .iter()
                .find(|l| l.variant.as_deref() == Some(VARIANT))
                .map(|l| &l.details);
            if let Some(d) = variant {
                let words = |v: Option<&str>| {
                    v.and_then(crate::impls::openssl::isa::caps_of)
                        .map(|(a, b)| format!("{a:#x}:{b:#x}"))
                };
                let base = d.variant.as_ref().and_then(|v| v.base_cpu_info.as_deref());
                let (b, v) = (words(base), words(d.cpu_info.as_deref()));
                return Some(match (b, v) {
                    (Some(b), Some(v)) if b == v => format!("libcrypto reports the same capability words (OPENSSL_ia32cap {b}) for the base and {VARIANT}: they select the same code."),
                    (Some(b), Some(v)) => format!("libcrypto's capability words (OPENSSL_ia32cap): base {b}, {VARIANT} {v}: the paths differ in the bits cleared."),
                    _ => format!("libcrypto reports no capability words (CPUINFO) for {VARIANT}: whether it selects other code is not confirmed."),
                });
            }
            e.unavailable
                .iter()
                .find(|u| u.name.contains(VARIANT))
                .map(|u| u.reason.as_str())
                .map(|why| format!("{VARIANT} was not measured: {why}."))
        });
        Cpu { avx512, caps }
    }

    /// False only when the run says this CPU has no AVX-512: study 4's effect cannot occur.
    fn effect_possible(&self) -> bool {
        self.avx512 != Some(false)
    }

    /// "as study 4 found" where the effect can occur; otherwise why this is not it.
    fn found(&self) -> String {
        if self.effect_possible() {
            super::verdict::agreement(Decision::Lower, Decision::Lower, 4)
        } else {
            "but this CPU has no AVX-512, so it is not study 4's effect".into()
        }
    }

    fn path_name(&self, masked: bool) -> &'static str {
        match (masked, self.effect_possible()) {
            (true, _) => VARIANT,
            (false, true) => "base (AVX-512)",
            (false, false) => "base (no AVX-512 here)",
        }
    }

    /// Said first: what this CPU cannot show, and the capability words of the two paths.
    fn first_lines(&self) -> Vec<String> {
        let mut l = Vec::new();
        if !self.effect_possible() {
            l.push("Not observable here: this CPU has no AVX-512 (no avx512f among its flags), so study 4's effect (AVX-512 code lowering the clock of the cores that run it) cannot occur: the base path runs no AVX-512 code, and no conclusion \"as study 4 found\" is drawn from comparing the two paths.".to_string());
        }
        l.extend(self.caps.clone());
        l
    }
}

/// Scaling efficiency at the most threads, with the interval from the record's paired
/// 1- and N-thread trials (the noise of scaling on this machine).
struct Eff {
    alg: String,
    variant: Option<String>,
    value: f64,
    ci: Option<[f64; 2]>,
    threads: u32,
}

fn pct_ci(e: &Eff) -> String {
    match e.ci {
        Some([lo, hi]) => format!(
            "{:.0}% [{:.0}-{:.0}%]",
            e.value * 100.0,
            lo * 100.0,
            hi * 100.0
        ),
        None => format!("{:.0}%", e.value * 100.0),
    }
}

fn analyse(o: &Observed) -> Findings {
    let cpu = Cpu::of(o);
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
    let mut eff_at_max: Vec<Eff> = Vec::new();
    let max_threads = recs.iter().map(|r| r.threads).max().unwrap_or(1);
    for alg in ["chacha20-poly1305", "aes-128-gcm"] {
        for variant in [None, Some(VARIANT)] {
            let one = recs
                .iter()
                .find(|r| r.alg.name() == alg && r.variant.as_deref() == variant && r.threads == 1)
                .map(|r| r.throughput_bps);
            let mut rows: Vec<_> = recs
                .iter()
                .filter(|r| r.alg.name() == alg && r.variant.as_deref() == variant)
                .collect();
            rows.sort_by_key(|r| r.threads);
            for r in rows {
                let eff = one.and_then(|s| {
                    crate::analyse::scaling::efficiency(r.throughput_bps, s, r.threads)
                });
                if r.threads == max_threads && max_threads > 1 {
                    if let Some(e) = eff {
                        eff_at_max.push(Eff {
                            alg: alg.into(),
                            variant: variant.map(str::to_string),
                            value: e,
                            ci: r.scaling_efficiency_ci,
                            threads: r.threads,
                        });
                    }
                }
                table.push(vec![
                    alg.into(),
                    if variant.is_some() {
                        VARIANT
                    } else {
                        cpu.path_name(false)
                    }
                    .into(),
                    r.threads.to_string(),
                    crate::units::mbps(r.throughput_bps),
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
            .find(|e| e.alg == alg && e.variant.as_deref() == v)
    };
    match (eff("chacha20-poly1305", None), eff("aes-128-gcm", None)) {
        (Some(c), Some(a)) => {
            // "Worse" only beyond the noise of scaling here: the intervals of the paired
            // 1- and N-thread trials must not overlap (2 threads on 2 vCPUs share them
            // with everything else).
            let apart = crate::analyse::decide::apart(a.ci, c.ci);
            conclusions.push(format!(
                "At {} threads ChaCha20-Poly1305 ({}) scales at {} per core and AES-GCM at {}: {}",
                c.threads,
                if cpu.effect_possible() { "AVX-512 path" } else { "no AVX-512 on this CPU" },
                pct_ci(c),
                pct_ci(a),
                match apart {
                    Decision::Lower => format!("ChaCha scales worse, {}.", cpu.found()),
                    Decision::Higher => "ChaCha scales better than AES-GCM here, unlike study 4 (50% against 80%).".into(),
                    Decision::NoDifference => "no difference beyond the noise of the repeated 1- and N-thread trials (their intervals overlap), so no finding either way.".into(),
                    Decision::CannotDecide => format!("{} (no interval for the scaling efficiency).", super::verdict::UNDECIDED),
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
    if let Some(c) = eff("chacha20-poly1305", Some(VARIANT)) {
        conclusions.push(format!(
            "Without AVX-512 ChaCha20-Poly1305 scales at {} per core{}",
            pct_ci(c),
            if cpu.effect_possible() {
                "."
            } else {
                ": the same ChaCha code as the base on this CPU, so any difference from the base is this machine's noise."
            }
        ));
    }
    let clocks_at = |alg: &str| -> Vec<f64> {
        recs.iter()
            .filter(|r| r.alg.name() == alg && r.variant.is_none() && r.threads == max_threads)
            .filter_map(|r| r.clock.as_ref().map(|c| c.mhz))
            .collect()
    };
    let (cc, ac) = (clocks_at("chacha20-poly1305"), clocks_at("aes-128-gcm"));
    match (cc.first(), ac.first()) {
        (Some(_), Some(_)) => conclusions.push(format!(
            "Clock at {max_threads} threads: {:.0} MHz under ChaCha20-Poly1305 (AVX-512) against {:.0} MHz under AES-GCM: {}",
            median(&cc),
            median(&ac),
            // A tenth lower is a drop (study 4's was a half), over rounds with an interval.
            match decide(&ac, &cc, 0.1).decision {
                Decision::Lower => format!("the clock is lower under ChaCha, {}.", cpu.found()),
                Decision::CannotDecide => format!("{} (one clock reading a side).", super::verdict::UNDECIDED),
                _ => "no AVX-512 clock drop, unlike study 4 (1200 against 2400 MHz).".into(),
            }
        )),
        _ => conclusions.push(format!(
            "Clock {clock_text}: no APERF/MPERF, perf cycles or cpufreq here (the run's environment, frequency.source, says why), so the clock drop study 4 saw can be neither confirmed nor ruled out."
        )),
    }
    let mut blocks = vec![Block::Table(table)];
    let trials = |tag: &str| -> Vec<f64> {
        o.speed(tag)
            .iter()
            .filter(|r| r.alg == Algorithm::Aes128Gcm && r.threads == 1)
            .flat_map(|r| {
                if r.samples_bps.is_empty() {
                    vec![r.throughput_bps]
                } else {
                    r.samples_bps.clone()
                }
            })
            .collect()
    };
    let aes = |tag: &str| {
        o.speed(tag)
            .iter()
            .find(|r| r.alg == Algorithm::Aes128Gcm && r.threads == 1)
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
                crate::units::mbps(v),
                alone.map(|a| times(v / a)).unwrap_or("-".into()),
            ]);
        }
    }
    match (alone, aes("beside avx512"), aes("beside no-avx512")) {
        (Some(_), Some(w), Some(wo)) => {
            let change = (w / wo - 1.0) * 100.0;
            // The verdict from the two runs' trials, not from their medians alone.
            let d = decide(
                &trials("beside no-avx512"),
                &trials("beside avx512"),
                NOISE_PCT / 100.0,
            );
            conclusions.push(format!(
                "Mixed test: the AES-GCM thread runs at {} MB/s beside AVX-512 ChaCha and {} MB/s beside non-AVX-512 ChaCha ({change:+.1}% with AVX-512 neighbours): {}",
                crate::units::mbps(w),
                crate::units::mbps(wo),
                if !cpu.effect_possible() {
                    "both neighbours run the same code on this CPU (no AVX-512), so the difference is this machine's noise, not study 4's effect.".into()
                } else {
                    match d.decision {
                        Decision::Lower => format!("AVX-512 neighbours slow it, {}.", super::verdict::agreement(Decision::Lower, Decision::Lower, 4)),
                        Decision::Higher => "it is faster beside AVX-512 ChaCha than beside non-AVX-512 ChaCha, the opposite of study 4's finding (a VM without frequency scaling has no AVX-512 clock drop to show; the rest is this shared machine's noise).".into(),
                        Decision::NoDifference => format!("no change beyond this machine's noise (±{NOISE_PCT:.0}%, and the trials' intervals hold no difference), unlike study 4; a VM without frequency scaling has no AVX-512 clock drop to show."),
                        Decision::CannotDecide => format!("{}.", super::verdict::UNDECIDED),
                    }
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
    let first = cpu.first_lines();
    if !first.is_empty() {
        blocks.insert(0, Block::Lines(first));
    }
    let (table, lines) = nginx(o, &cpu);
    blocks.extend(table.map(Block::Table));
    conclusions.extend(lines);
    Findings {
        blocks,
        conclusions,
        ..Findings::default()
    }
}

fn is_aes(suite: &str) -> bool {
    suite.contains("AES_128_GCM") || suite.contains("AES128-GCM")
}

fn is_chacha(suite: &str) -> bool {
    suite.contains("CHACHA20")
}

/// One mix of one ISA path over its rounds, each against the same run's single-suite
/// points.
struct MixRow {
    share: u32,
    masked: bool,
    /// Every round's mix, in the order run.
    rounds: Vec<MixResult>,
    /// Per round: bytes/s per connection of the AES-GCM connections in the mix, and alone.
    aes: Vec<(Option<f64>, Option<f64>)>,
}

impl MixRow {
    /// Per round: the AES-GCM connections' speed in the mix as a fraction of their speed
    /// alone.
    fn aes_kept(&self) -> Vec<f64> {
        self.aes
            .iter()
            .filter_map(|(m, a)| Some(m.as_ref()? / a.as_ref()?))
            .filter(|x| x.is_finite())
            .collect()
    }
    fn requests(&self) -> Vec<f64> {
        self.rounds.iter().map(|m| m.requests_per_s).collect()
    }
    /// The mix against the majority suite alone, over the rounds.
    fn against_alone(&self) -> Difference {
        let alone: Vec<f64> = self
            .rounds
            .iter()
            .filter_map(|m| m.baseline_requests_per_s)
            .collect();
        super::verdict::differ(&alone, &self.requests())
    }
    fn disturbed(&self) -> bool {
        self.rounds.iter().any(|m| m.disturbed)
    }
}

/// The median of what each round has, or None.
fn mid(v: impl Iterator<Item = f64>) -> Option<f64> {
    let v: Vec<f64> = v.collect();
    (!v.is_empty()).then(|| median(&v))
}

fn mix_rows(o: &Observed) -> Vec<MixRow> {
    let mut rows = Vec::new();
    for masked in [false, true] {
        for share in MIX_SHARES {
            let mut row = MixRow {
                share,
                masked,
                rounds: Vec::new(),
                aes: Vec::new(),
            };
            for run in o.tagged(&nginx_tag(share, masked)) {
                let recs: Vec<TlsRecord> = run
                    .records
                    .iter()
                    .filter_map(<TlsData as Listed>::pick)
                    .cloned()
                    .collect();
                if let Some(round) = mix_round(&recs, share) {
                    row.rounds.push(round.0);
                    row.aes.push(round.1);
                }
            }
            if !row.rounds.is_empty() {
                rows.push(row);
            }
        }
    }
    rows
}

/// One round's mix, and the AES-GCM connections' speed per connection in it and alone.
type Round = (MixResult, (Option<f64>, Option<f64>));

fn mix_round(recs: &[TlsRecord], share: u32) -> Option<Round> {
    let m = recs.iter().find(|r| r.mix.is_some())?;
    let spec = format!("chacha={share}%,aes128gcm={}%", 100 - share);
    let mix = mixes(recs, &spec).into_iter().next()?;
    let aes_in_mix = m
        .mix
        .iter()
        .flatten()
        .find(|p| is_aes(&p.suite))
        .and_then(|p| {
            (p.requests > 0 && p.connections > 0).then(|| {
                p.requests_per_s * p.bytes as f64 / p.requests as f64 / p.connections as f64
            })
        });
    let aes_alone = recs
        .iter()
        .find(|r| r.mix.is_none() && is_aes(&r.suite))
        .map(|r| r.throughput_bps / r.concurrency.max(1) as f64);
    Some((mix, (aes_in_mix, aes_alone)))
}

/// Requests/s of one suite alone over every run of one ISA path (each share's step
/// measures it too).
fn alone_rps(o: &Observed, masked: bool, pick: fn(&str) -> bool) -> Vec<f64> {
    MIX_SHARES
        .iter()
        .flat_map(|&s| o.tls(&nginx_tag(s, masked)))
        .filter(|r| r.mix.is_none() && pick(&r.suite))
        .map(|r| r.requests_per_s)
        .collect()
}

/// Said after a verdict drawn from points that other load disturbed.
fn caveat(disturbed: bool) -> &'static str {
    if disturbed {
        " Other processes disturbed these points, so this is not a finding here."
    } else {
        ""
    }
}

/// Study 4's nginx test: ChaCha20-Poly1305 on 10, 20 and 100% of the connections against
/// AES-GCM alone, on each ISA path, and what happens to the AES-GCM connections.
fn nginx(o: &Observed, cpu: &Cpu) -> (Option<Table>, Vec<String>) {
    let rows = mix_rows(o);
    let pct = |x: Option<f64>| x.map(|x| format!("{x:+.1}%")).unwrap_or("-".into());
    let mut t = Table::new(
        format!("nginx, {MIX_FILE} file, {MIX_CONNECTIONS} connections, TLS 1.3: ChaCha20-Poly1305 on a share of the connections, the rest AES-128-GCM (nginx and wrk both masked on the {VARIANT} path)"),
        vec![
            Column::text("path"),
            Column::num("ChaCha share"),
            Column::num("req/s"),
            Column::num("vs AES-GCM alone"),
            Column::num("vs cost-mix expected"),
            Column::num("AES-GCM MB/s per conn"),
            Column::num("kept vs alone"),
        ],
    );
    let mut lines = Vec::new();
    let undecided = format!(
        "{} (one nginx run a side, no interval).",
        super::verdict::UNDECIDED
    );
    for masked in [false, true] {
        let aes = alone_rps(o, masked, is_aes);
        for r in rows.iter().filter(|r| r.masked == masked) {
            t.push(vec![
                cpu.path_name(masked).into(),
                format!("{}%", r.share),
                format!("{:.0}", median(&r.requests())),
                pct(mid(r.rounds.iter().filter_map(|m| m.change_pct))),
                pct(mid(r.rounds.iter().filter_map(|m| m.vs_expected_pct))),
                mid(r.aes.iter().filter_map(|a| a.0))
                    .map(crate::units::mbps)
                    .unwrap_or("-".into()),
                mid(r.aes_kept().into_iter())
                    .map(|k| format!("{:.0}%", k * 100.0))
                    .unwrap_or("-".into()),
            ]);
        }
        let chacha_runs = alone_rps(o, masked, is_chacha);
        let chacha = mid(chacha_runs.iter().copied());
        let all_chacha = mid(aes.iter().copied())
            .zip(chacha)
            .map(|(a, c)| (c - a) / a * 100.0);
        if let Some(c) = chacha {
            t.push(vec![
                cpu.path_name(masked).into(),
                "100%".into(),
                format!("{c:.0}"),
                pct(all_chacha),
                "-".into(),
                "-".into(),
                "-".into(),
            ]);
        }
        if masked {
            continue;
        }
        let mut changes: Vec<String> = rows
            .iter()
            .filter(|r| !r.masked)
            .filter_map(|r| {
                mid(r.rounds.iter().filter_map(|m| m.change_pct))
                    .map(|c| format!("{}% ChaCha {c:+.1}%", r.share))
            })
            .collect();
        changes.extend(all_chacha.map(|c| format!("100% ChaCha {c:+.1}%")));
        if !changes.is_empty() {
            // Each mix against AES-GCM alone: one decision per share, over its rounds.
            let decisions: Vec<Decision> = rows
                .iter()
                .filter(|r| !r.masked)
                .map(|r| r.against_alone().decision)
                .chain(
                    chacha
                        .is_some()
                        .then(|| super::verdict::differ(&aes, &chacha_runs).decision),
                )
                .collect();
            lines.push(format!(
                "nginx ({MIX_FILE}, {MIX_CONNECTIONS} connections), requests/s against AES-GCM alone with ChaCha20-Poly1305 on a share of the connections: {}: {}{}",
                changes.join(", "),
                if decisions.iter().all(|d| *d == Decision::Lower) {
                    format!("every mix is slower than AES-GCM alone, {} (-5.5%, -7%, -10% at 10, 20, 100%).", cpu.found())
                } else if decisions.contains(&Decision::CannotDecide) {
                    undecided.clone()
                } else {
                    "not every mix is slower than AES-GCM alone beyond the noise, unlike study 4 (-5.5%, -7%, -10% at 10, 20, 100%).".into()
                },
                caveat(rows.iter().any(|r| !r.masked && r.disturbed()))
            ));
        }
    }
    // The effect: what ChaCha neighbours cost the AES-GCM connections, with and without
    // AVX-512 at the same share.
    for share in MIX_SHARES {
        let kept = |masked| {
            rows.iter()
                .find(|r| r.share == share && r.masked == masked)
                .map(MixRow::aes_kept)
                .filter(|k| !k.is_empty())
        };
        if let (Some(wr), Some(wor)) = (kept(false), kept(true)) {
            let (w, wo) = (median(&wr), median(&wor));
            // Rounded first, so a difference under half a point prints as +0, not -0.
            let diff = ((w - wo) * 100.0).round() + 0.0;
            lines.push(format!(
                "nginx, {share}% ChaCha: the AES-GCM connections keep {:.0}% of their speed alone beside AVX-512 ChaCha and {:.0}% beside non-AVX-512 ChaCha ({diff:+.0} points): {}{}",
                w * 100.0,
                wo * 100.0,
                if !cpu.effect_possible() {
                    "both paths run the same ChaCha code on this CPU (no AVX-512), so the difference is this machine's noise, not study 4's effect.".into()
                } else {
                    match super::verdict::differ(&wor, &wr).decision {
                        d @ Decision::Lower => format!("AVX-512 ChaCha slows its AES-GCM neighbours, {}.", super::verdict::agreement(d, Decision::Lower, 4)),
                        d @ Decision::Higher => format!("they are faster beside AVX-512 ChaCha than beside non-AVX-512 ChaCha, {}.", super::verdict::agreement(d, Decision::Lower, 4)),
                        d @ Decision::NoDifference => format!("{}; a VM without frequency scaling has no AVX-512 clock drop to pass on.", super::verdict::agreement(d, Decision::Lower, 4)),
                        Decision::CannotDecide => undecided.clone(),
                    }
                },
                caveat(rows.iter().any(|r| r.share == share && r.disturbed()))
            ));
        }
    }
    if t.rows.is_empty() {
        let why = MIX_SHARES
            .iter()
            .flat_map(|&s| [nginx_tag(s, false), nginx_tag(s, true)])
            .find_map(|t| o.failure(&t).map(|w| format!("{t}: {w}")))
            .unwrap_or("nothing measured".into());
        lines.push(format!("nginx mix not observed: {why}"));
        return (None, lines);
    }
    t.notes.push("vs cost-mix expected: against 1/sum(f_i/r_i) from each suite's own run, i.e. interference beyond what ChaCha's own cost explains; kept vs alone: per-connection speed of the AES-GCM connections in the mix over AES-GCM alone in the same run".into());
    (Some(t), lines)
}

#[cfg(test)]
mod tests;
