//! Study 5: the router's `openssl speed` table per build and ISA path, the kernel-path
//! crossover where one exists, and OpenVPN (one thread) against WireGuard (many).

use super::builds;
use super::definition::{argv, Action, Findings, Observed, Opts, Step, Study};
use super::quote::mbit;
use crate::analyse::decide::Decision;
use crate::analyse::stats::median;
use crate::record::vpn::VpnRecord;
use crate::render::model::{Block, Column, Table};

pub struct RouterVpn;

/// Study 5's table, its rows in its order.
const ALGS: [&str; 8] = [
    "sha1",
    "des-cbc",
    "des-ede3-cbc",
    "aes-128-cbc",
    "aes-192-cbc",
    "aes-256-cbc",
    "sha256",
    "sha512",
];
/// Its public-key rows: `rsa 2048 bits` and `dsa 2048 bits`, sign/s and verify/s.
const PKEY: [(&str, &str); 2] = [
    ("rsa2048-pkcs1", "rsa 2048 bits"),
    ("dsa2048", "dsa 2048 bits"),
];
const SIZES: [u64; 5] = [16, 64, 256, 1024, 8192];
/// The tunnel on each build runs study 5's era cipher, the one its AES rows measure.
const TUNNEL_CIPHER: &str = "AES-256-CBC";

impl Study for RouterVpn {
    fn name(&self) -> &'static str {
        "router-vpn"
    }
    fn question(&self) -> &'static str {
        "OpenVPN or WireGuard on this router?"
    }
    fn original(&self) -> &'static str {
        "study 5: builds and ISA paths changed AES by up to 33% and SHA-512 3x; the accelerator crossed NEON software between 256 B and 1 KiB; single-threaded OpenVPN lost to WireGuard spread over cores"
    }
    fn options(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "--libcrypto PATH",
                "another libcrypto's openssl speed table beside the system's (repeatable)",
            ),
            (
                "--openssl DIR",
                "an OpenSSL build (scripts/build-openssl): its openssl speed table and an OpenVPN AES-256-CBC tunnel on it and on the system's, then what the build did to AES and to the tunnel against Amdahl's bound and the study's inferred 35-50% (repeatable)",
            ),
        ]
    }
    fn steps(&self, o: &Opts) -> Vec<Step> {
        let (t, d) = if o.quick { ("0.02", "1") } else { ("0.2", "5") };
        let tf: f64 = t.parse().unwrap_or(0.2);
        let df: f64 = d.parse().unwrap_or(5.0);
        let isa = if o.arch == "aarch64" || o.arch == "arm" {
            "isa=no-neon"
        } else {
            "isa=no-aesni"
        };
        let mut speed = argv(&[
            "speed",
            "--impl",
            "openssl,af_alg,cryptodev",
            "--alg",
            &ALGS.join(","),
            "--direction",
            "enc",
            "--sizes",
            "16,64,256,1k,8k",
            "--time",
            t,
            "--variant",
            isa,
        ]);
        speed.extend(builds(o));
        let mut pkey = argv(&[
            "speed",
            "--impl",
            "openssl",
            "--alg",
            &PKEY.map(|(a, _)| a).join(","),
            "--direction",
            "sign,verify",
            "--time",
            t,
        ]);
        pkey.extend(builds(o));
        let n_builds = 2.0 + (o.libcrypto.len() + o.openssl.len()) as f64;
        let streams = o.cores.max(2).to_string();
        let mut vpn = argv(&[
            "vpn",
            "--tunnels",
            "openvpn,wireguard",
            "--ciphers",
            "AES-256-GCM,CHACHA20-POLY1305",
            "--streams",
            &format!("1,{streams}"),
            "--directions",
            "up",
            "--duration",
            d,
            "--rounds",
            &o.rounds.to_string(),
        ]);
        // Sampled where perf works (each point runs again under perf): OpenVPN's crypto
        // share, the part a faster build or an accelerator could win.
        let profiled = o.profile_flag();
        let runs = 1.0 + profiled.len() as f64;
        vpn.extend(profiled);
        let mut steps = vec![
            Step {
                tag: "speed".into(),
                seconds: 40.0 * n_builds * tf * 1.2 + 2.0,
                action: Action::Workload(speed),
            },
            Step {
                tag: "pkey".into(),
                seconds: 4.0 * (n_builds - 1.0) * tf * 1.5 + 2.0,
                action: Action::Workload(pkey),
            },
            Step {
                tag: "vpn".into(),
                seconds: 6.0 * runs * (df + 2.0) * o.rounds as f64 + 5.0,
                action: Action::Workload(vpn),
            },
        ];
        // The tunnel on each --openssl build, and on the system's libcrypto as the
        // baseline, with study 5's cipher: what a build change did to OpenVPN.
        if !o.openssl.is_empty() {
            steps.extend(builds::tunnel_steps(o, TUNNEL_CIPHER, d, true));
        }
        steps
    }
    fn analyse(&self, o: &Observed) -> Findings {
        analyse(o)
    }
}

/// `--libcrypto PATH` and `--openssl DIR` for each build the study was given, for both
/// speed steps.
fn builds(o: &Opts) -> Vec<String> {
    let mut flags: Vec<String> = o
        .libcrypto
        .iter()
        .flat_map(|l| ["--libcrypto".to_string(), l.display().to_string()])
        .collect();
    flags.extend(builds::openssl_flags(o));
    flags
}

fn analyse(o: &Observed) -> Findings {
    let recs = o.speed("speed");
    let mut blocks = Vec::new();
    let mut conclusions = Vec::new();
    let mut table = Table::new(
        "The numbers are in 1000s of bytes per second processed (the `openssl speed` layout)",
        std::iter::once(Column::text("type"))
            .chain(std::iter::once(Column::text("path")))
            .chain(SIZES.iter().map(|s| Column::num(&format!("{s} bytes"))))
            .collect(),
    );
    table.group_by = Some(1);
    let mut labels: Vec<String> = recs.iter().map(|r| r.label.clone()).collect();
    labels.dedup();
    labels.sort();
    labels.dedup();
    for label in &labels {
        for alg in ALGS {
            let cells: Vec<String> = SIZES
                .iter()
                .map(|s| {
                    recs.iter()
                        .find(|r| &r.label == label && r.alg.name() == alg && r.size == *s)
                        .map(|r| format!("{:.2}k", r.throughput_bps / 1e3))
                        .unwrap_or("-".into())
                })
                .collect();
            if cells.iter().all(|c| c == "-") {
                continue;
            }
            let mut row = vec![alg.to_string(), label.clone()];
            row.extend(cells);
            table.push(row);
        }
    }
    for alg in ALGS {
        if !recs.iter().any(|r| r.alg.name() == alg) {
            table.notes.push(format!(
                "{alg}: no path measured it here (the run's exclusions say why)"
            ));
        }
    }
    if !recs.is_empty() {
        blocks.push(Block::Table(table));
        if let Some(t) = pkey_table(&o.speed("pkey")) {
            blocks.push(Block::Table(t));
        }
        let at = |label: &str, alg: &str| {
            let v = super::verdict::values(
                recs.iter()
                    .filter(|r| r.label == label && r.alg.name() == alg && r.size == 8192)
                    .copied(),
            );
            (!v.is_empty()).then_some(v)
        };
        for label in labels.iter().filter(|l| l.contains("isa=")) {
            // The same build without the switch: "openssl 3.5.5" for "openssl 3.5.5 [isa=..]".
            let base = label.split(" [").next().unwrap_or(label);
            for alg in ["aes-256-cbc", "sha512"] {
                if let (Some(b), Some(v)) = (at(base, alg), at(label, alg)) {
                    let d = super::verdict::differ(&v, &b);
                    conclusions.push(format!(
                        "{alg} at 8 KiB: {base} {:.0} MB/s against {label} {:.0} MB/s ({:.2}x): {}",
                        median(&b) / 1e6,
                        median(&v) / 1e6,
                        d.ratio,
                        match d.decision {
                            Decision::NoDifference =>
                                "no difference beyond noise: this ISA switch does not touch it."
                                    .to_string(),
                            Decision::CannotDecide => format!("{}.", super::verdict::UNDECIDED),
                            // Study 5's switch took speed away: the masked path is slower.
                            _ =>
                                format!(
                                "the ISA path changes the same algorithm's speed, {} ({} there).",
                                super::verdict::agreement(d.decision, Decision::Higher, 5),
                                if alg == "sha512" { "SHA-512 over 3x" } else { "AES up to 1.33x" }
                            ),
                        }
                    ));
                }
            }
        }
        if !recs
            .iter()
            .any(|r| r.implementation == "af_alg" || r.implementation == "cryptodev")
        {
            conclusions.push("No /dev/crypto or AF_ALG path here, so the accelerator crossover (study 5: between 256 B and 1 KiB) cannot be observed; the offload study with --guest measures AF_ALG in the qemu guest.".into());
        }
    } else {
        conclusions.push(format!(
            "The speed table was not observed: {}",
            o.why_missing("speed")
        ));
    }
    let vpn = o.vpn("vpn");
    if vpn.is_empty() {
        conclusions.push(format!(
            "OpenVPN against WireGuard not observed: {}",
            o.why_missing("vpn")
        ));
    } else {
        let mut t = Table::new(
            "Tunnels, up, TCP",
            vec![
                Column::text("tunnel"),
                Column::text("cipher"),
                Column::num("streams"),
                Column::num("Mbit/s"),
                Column::num("busiest thread %"),
                Column::num("threads"),
            ],
        );
        for r in &vpn {
            t.push(vec![
                r.tunnel.clone(),
                r.cipher.clone(),
                r.streams.to_string(),
                mbit(r.throughput_bps),
                r.busiest_thread_cpu_pct
                    .map(|p| format!("{p:.0}"))
                    .unwrap_or("-".into()),
                r.threads_used.map(|n| n.to_string()).unwrap_or("-".into()),
            ]);
        }
        blocks.push(Block::Table(t));
        let best = |tunnel: &str| {
            vpn.iter()
                .filter(|r| r.tunnel.starts_with(tunnel))
                .max_by(|a, b| a.throughput_bps.total_cmp(&b.throughput_bps))
        };
        if let (Some(ov), Some(wg)) = (best("openvpn"), best("wireguard")) {
            let bound = ov.busiest_thread_cpu_pct.is_some_and(|p| p > 85.0);
            // Each best point over its rounds (vpn --rounds): the interval decides.
            let rounds = |b: &VpnRecord| {
                super::verdict::values(vpn.iter().copied().filter(|r| {
                    r.tunnel == b.tunnel && r.cipher == b.cipher && r.streams == b.streams
                }))
            };
            let d = super::verdict::differ(&rounds(ov), &rounds(wg));
            let found = super::verdict::agreement(d.decision, Decision::Higher, 5);
            conclusions.push(format!(
                "OpenVPN's best: {} Mbit/s ({} streams), its busiest thread at {} of a core; WireGuard's best: {} Mbit/s on {} threads: {}",
                mbit(ov.throughput_bps), ov.streams,
                ov.busiest_thread_cpu_pct.map(|p| format!("{p:.0}%")).unwrap_or("?".into()),
                mbit(wg.throughput_bps), wg.threads_used.map(|n| n.to_string()).unwrap_or("?".into()),
                match d.decision {
                    Decision::Higher if bound => format!("single-threaded OpenVPN is bound by one core and WireGuard is faster than OpenVPN, {found}."),
                    Decision::Higher => format!("WireGuard is faster than OpenVPN, {found}, though OpenVPN's thread is not saturated here."),
                    Decision::Lower => format!("OpenVPN is faster than WireGuard here: {found}."),
                    Decision::NoDifference => format!("{found}."),
                    Decision::CannotDecide => format!("{} (one tunnel run a side).", super::verdict::UNDECIDED),
                }
            ));
        }
        // What a faster build or an accelerator could win in OpenVPN: its crypto share.
        for cipher in ["AES-256-GCM", "CHACHA20-POLY1305"] {
            if let Some(c) = super::quote::sampled_clause(o, "vpn", cipher) {
                conclusions.push(format!("OpenVPN {cipher}: crypto is {c}."));
            }
        }
    }
    if let Some(t) = builds::tunnel_table(o, TUNNEL_CIPHER) {
        blocks.push(Block::Table(t));
    }
    conclusions.extend(builds::pairs(
        o,
        "speed",
        "aes-256-cbc",
        8192,
        TUNNEL_CIPHER,
    ));
    Findings {
        blocks,
        conclusions,
        ..Findings::default()
    }
}

/// Study 5's public-key block, one row per algorithm and build: sign/s and verify/s.
fn pkey_table(recs: &[&crate::record::speed::SpeedRecord]) -> Option<Table> {
    let mut t = Table::new(
        "Public-key operations (the `openssl speed` layout)",
        vec![
            Column::text(""),
            Column::text("path"),
            Column::num("sign/s"),
            Column::num("verify/s"),
        ],
    );
    let mut labels: Vec<&str> = recs.iter().map(|r| r.label.as_str()).collect();
    labels.sort();
    labels.dedup();
    for (alg, name) in PKEY {
        for label in &labels {
            let ops = |dir: &str| {
                recs.iter()
                    .find(|r| r.label == *label && r.alg.name() == alg && r.direction.name() == dir)
                    .map(|r| format!("{:.1}", r.ops_per_s))
                    .unwrap_or("-".into())
            };
            let (sign, verify) = (ops("sign"), ops("verify"));
            if sign != "-" || verify != "-" {
                t.push(vec![name.into(), label.to_string(), sign, verify]);
            }
        }
    }
    (!t.rows.is_empty()).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::tests::{observed, speed_rec, vpn_rec};

    #[test]
    fn speed_layout_isa_ratio_and_tunnel_verdict() {
        let mut recs = Vec::new();
        for s in SIZES {
            recs.push(speed_rec("openssl", None, "aes-256-cbc", "enc", s, 1, 1e9));
            recs.push(speed_rec(
                "openssl",
                Some("isa=no-aesni"),
                "aes-256-cbc",
                "enc",
                s,
                1,
                2.5e8,
            ));
        }
        let mut ov = vpn_rec("openvpn", "AES-256-GCM", 1, 1e8, 10.0);
        let mut wg = vpn_rec("wireguard", "CHACHA20-POLY1305", 2, 3e8, 5.0);
        if let crate::record::read::AnyRecord::Vpn(r) = &mut wg {
            r.threads_used = Some(2);
        }
        if let crate::record::read::AnyRecord::Vpn(r) = &mut ov {
            r.busiest_thread_cpu_pct = Some(99.0);
        }
        let mut pkey = Vec::new();
        for (alg, dir, ops) in [
            ("rsa2048-pkcs1", "sign", 1303.0),
            ("dsa2048", "verify", 2511.7),
        ] {
            // One "byte" per operation: ops_per_s comes out as `ops`.
            pkey.push(speed_rec("openssl", None, alg, dir, 1, 1, ops));
        }
        let o = observed(vec![("speed", recs), ("pkey", pkey), ("vpn", vec![ov, wg])]);
        let f = analyse(&o);
        let c = f.conclusions.join("\n");
        assert!(
            c.contains("openssl 1000 MB/s against openssl [isa=no-aesni] 250 MB/s (4.00x)"),
            "{c}"
        );
        assert!(c.contains("OpenVPN's best: 800 Mbit/s (1 streams), its busiest thread at 99% of a core; WireGuard's best: 2400 Mbit/s on 2 threads: one round cannot decide: run without --quick (one tunnel run a side)."), "{c}");
        // No profile in these records: the share is said not sampled, with why.
        assert!(
            c.contains(
                "OpenVPN AES-256-GCM: crypto is not sampled (no profile: perf cannot sample here)."
            ),
            "{c}"
        );
        let Block::Table(t) = &f.blocks[0] else {
            panic!()
        };
        // Every row of study 5's table is asked for; the ones without a record say so.
        assert!(
            t.notes
                .iter()
                .any(|n| n.starts_with("des-ede3-cbc: no path measured it")),
            "{:?}",
            t.notes
        );
        let Block::Table(p) = &f.blocks[1] else {
            panic!("no public-key table: {:?}", f.blocks)
        };
        assert_eq!(p.rows[0], ["rsa 2048 bits", "openssl", "1303.0", "-"]);
        assert_eq!(p.rows[1], ["dsa 2048 bits", "openssl", "-", "2511.7"]);
        assert_eq!(
            t.rows[0],
            [
                "aes-256-cbc",
                "openssl",
                "1000000.00k",
                "1000000.00k",
                "1000000.00k",
                "1000000.00k",
                "1000000.00k"
            ]
        );
    }

    /// A speed record of AES-256-CBC at 8 KiB on the path labelled `label`.
    fn cbc_8k(label: &str, bps: f64) -> crate::record::read::AnyRecord {
        let mut r = speed_rec("openssl", None, "aes-256-cbc", "enc", 8192, 1, bps);
        if let crate::record::read::AnyRecord::Speed(s) = &mut r {
            s.label = label.into();
        }
        r
    }

    /// An OpenVPN AES-256-CBC record, `crypto` of 1000 perf samples in crypto (None: the
    /// tunnel was not profiled).
    fn cbc_tunnel(bps: f64, crypto: Option<u64>) -> crate::record::read::AnyRecord {
        let mut r = vpn_rec("openvpn", "AES-256-CBC", 1, bps, 10.0);
        if let crate::record::read::AnyRecord::Vpn(v) = &mut r {
            v.profile = crypto.map(|k| crate::analyse::vpn::tests::profile(k, 1000));
        }
        r
    }

    /// Three rounds of one tunnel (vpn --rounds 3), the first profiled: an exact interval.
    fn tunnel_rounds(bps: f64, crypto: Option<u64>) -> Vec<crate::record::read::AnyRecord> {
        vec![
            cbc_tunnel(bps, crypto),
            cbc_tunnel(bps, None),
            cbc_tunnel(bps, None),
        ]
    }

    /// OpenVPN against WireGuard, each over its rounds: a clear difference is study 5's
    /// finding, rounds that overlap are no difference, and one run a side cannot decide.
    #[test]
    fn the_tunnel_verdict_needs_an_interval() {
        let run = |ov: &[f64], wg: &[f64]| {
            let recs = ov
                .iter()
                .map(|b| vpn_rec("openvpn", "AES-256-GCM", 1, *b, 10.0))
                .chain(
                    wg.iter()
                        .map(|b| vpn_rec("wireguard", "CHACHA20-POLY1305", 2, *b, 5.0)),
                )
                .collect();
            analyse(&observed(vec![("vpn", recs)]))
                .conclusions
                .join("\n")
        };
        let c = run(&[1.0e8, 1.02e8, 0.98e8], &[3.0e8, 3.1e8, 2.9e8]);
        assert!(
            c.contains("bound by one core and WireGuard is faster than OpenVPN, as study 5 found."),
            "{c}"
        );
        let c = run(&[1.0e8, 1.02e8, 0.98e8], &[0.5e8, 0.51e8, 0.49e8]);
        assert!(
            c.contains("OpenVPN is faster than WireGuard here: the opposite of study 5's finding."),
            "{c}"
        );
        // Medians 1.75 and 2.05 (+17%), but the rounds spread over each other.
        let c = run(&[1e8, 2e8, 3e8, 1.5e8], &[1.2e8, 2.4e8, 3.3e8, 1.7e8]);
        assert!(
            c.contains("no difference beyond this machine's noise (±15%), unlike study 5."),
            "{c}"
        );
        // One run a side: 3x is no finding.
        let c = run(&[1e8], &[3e8]);
        assert!(
            c.contains(": one round cannot decide: run without --quick (one tunnel run a side)."),
            "{c}"
        );
        assert!(!c.contains("study 5"), "{c}");
    }

    /// Debian's libcrypto, a 3.5 build and its no-asm twin: every pair compared, the
    /// later against the earlier, with Amdahl from the earlier one's sampled share.
    #[test]
    fn each_build_against_the_system_one_with_the_bound_from_the_sampled_share() {
        let o = observed(vec![
            (
                "speed",
                vec![
                    cbc_8k("openssl 3.0.19", 1e9),
                    cbc_8k("openssl 3.5.5", 1.1e9),
                    cbc_8k("openssl 3.5.5 no-asm", 2.5e8),
                ],
            ),
            ("tunnel on system openssl", tunnel_rounds(100e6, Some(300))),
            ("tunnel on openssl 3.5.5", tunnel_rounds(120e6, Some(280))),
            (
                "tunnel on openssl 3.5.5 no-asm",
                tunnel_rounds(60e6, Some(700)),
            ),
        ]);
        let f = analyse(&o);
        let c = f.conclusions.join("\n");
        assert!(c.contains("each later build against each earlier one; the baseline is the system's libcrypto (openssl 3.0.19)."), "{c}");
        // +10% AES: within the noise, though the arithmetic is still given
        // (1 / (0.7 + 0.3 / 1.1) = 1.028); the tunnel's +20% is then not AES's.
        assert!(c.contains("openssl 3.5.5 against openssl 3.0.19: the build changed AES-256-CBC by +10% (8 KiB, openssl speed: 1000 -> 1100 MB/s) and the OpenVPN tunnel by +20% (800 -> 960 Mbit/s, AES-256-CBC); by Amdahl from the sampled crypto share (30% [27-33%] of openssl 3.0.19's tunnel CPU), +3% was the most it could give. AES-256-CBC did not change beyond noise (15%), so this pair says nothing about study 5's inference (the tunnel's change is not AES's"), "{c}");
        // -75% AES: Amdahl expects 1 / (0.7 + 0.3 / 0.25) = 0.526, -47%; the tunnel
        // lost 40%, 53% of AES's change.
        assert!(c.contains("openssl 3.5.5 no-asm against openssl 3.0.19: the build changed AES-256-CBC by -75% (8 KiB, openssl speed: 1000 -> 250 MB/s) and the OpenVPN tunnel by -40% (800 -> 480 Mbit/s, AES-256-CBC); by Amdahl from the sampled crypto share (30% [27-33%] of openssl 3.0.19's tunnel CPU), AES-256-CBC's change alone accounts for -47%. The tunnel moved 53% as far as AES-256-CBC did: study 5 inferred 35-50% for OpenVPN from 33% for AES, more than AES itself; that does not hold here."), "{c}");
        // The third pair uses 3.5.5's own share: 1 / (0.72 + 0.28 / (2.5 / 11)) = 0.512.
        assert!(
            c.contains(
                "openssl 3.5.5 no-asm against openssl 3.5.5: the build changed AES-256-CBC by -77%"
            ),
            "{c}"
        );
        assert!(c.contains("(28% [25-31%] of openssl 3.5.5's tunnel CPU), AES-256-CBC's change alone accounts for -49%."), "{c}");
        let t = f
            .blocks
            .iter()
            .find_map(|b| match b {
                Block::Table(t) if t.title.starts_with("OpenVPN on each build") => Some(t),
                _ => None,
            })
            .expect("a tunnel table per build");
        assert_eq!(t.rows.len(), 3);
        assert_eq!(
            t.rows[2],
            ["openssl 3.5.5 no-asm", "480", "99", "70% [67-73%]"]
        );
    }

    /// Only --openssl builds (no system tunnel): the first is the baseline. A gain gets
    /// its Amdahl ceiling; an unprofiled baseline gets X and Y only, and says why.
    #[test]
    fn the_first_build_is_the_baseline_and_an_unsampled_share_gives_no_bound() {
        let parts = |crypto| {
            observed(vec![
                (
                    "speed",
                    vec![
                        cbc_8k("openssl 3.5.5 no-asm", 2.5e8),
                        cbc_8k("openssl 3.5.5", 1e9),
                    ],
                ),
                (
                    "tunnel on openssl 3.5.5 no-asm",
                    tunnel_rounds(60e6, crypto),
                ),
                ("tunnel on openssl 3.5.5", tunnel_rounds(100e6, None)),
            ])
        };
        let c = analyse(&parts(Some(600))).conclusions.join("\n");
        assert!(
            c.contains("the baseline is the first --openssl build (openssl 3.5.5 no-asm)."),
            "{c}"
        );
        // 4x AES on 60% crypto: 1 / (0.4 + 0.6 / 4) = 1.82, so +82% at most; the tunnel
        // gained 67%, 22% of AES's +300%.
        assert!(c.contains("the build changed AES-256-CBC by +300% (8 KiB, openssl speed: 250 -> 1000 MB/s) and the OpenVPN tunnel by +67% (480 -> 800 Mbit/s, AES-256-CBC); by Amdahl from the sampled crypto share (60% [57-63%] of openssl 3.5.5 no-asm's tunnel CPU), +82% was the most it could give. The tunnel moved 22% as far as AES-256-CBC did"), "{c}");
        let c = analyse(&parts(None)).conclusions.join("\n");
        assert!(c.contains("and the OpenVPN tunnel by +67% (480 -> 800 Mbit/s, AES-256-CBC); the crypto share was not sampled (perf cannot sample here), so there is no Amdahl bound."), "{c}");
    }
}
