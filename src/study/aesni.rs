//! Study 2: what AES-NI buys the primitive, and what it buys applications (nginx, an
//! OpenVPN tunnel, `openssl enc` of a RAM-disk-sized file, and the RAM disk itself through
//! dm-crypt per kernel driver), side by side.

use super::builds;
use super::definition::{argv, Action, Findings, Observed, Opts, Step, Study};
use super::quote::times;
use crate::algorithms::{Algorithm, Direction};
use crate::analyse::decide::{apart, Decision};
use crate::analyse::stats::median;
use crate::render::model::{Block, Column, Table};

#[cfg(feature = "disk")]
mod disk;

pub struct AesNi;

const MASKED: &str = " no-aesni";
const ALGS: [&str; 3] = ["aes-128-gcm", "aes-256-gcm", "aes-256-cbc"];
/// The tunnel's cipher, and the primitive a build is compared on.
const TUNNEL_CIPHER: &str = "AES-256-GCM";
/// `openssl enc` runs per direction and path: the fewest trials whose median's interval
/// covers 95% (one trial would have none).
pub const ENC_ROUNDS: u32 = 6;

/// The OPENSSL_ia32cap value of `isa=no-aesni`, for processes started with it.
fn mask() -> Vec<(String, String)> {
    crate::impls::openssl::isa::isa_request("no-aesni")
        .map(|(m, _)| vec![("OPENSSL_ia32cap".to_string(), m)])
        .unwrap_or_default()
}

impl Study for AesNi {
    fn name(&self) -> &'static str {
        "aesni"
    }
    fn question(&self) -> &'static str {
        "what does AES-NI buy my application?"
    }
    fn original(&self) -> &'static str {
        "study 2: AES-NI made synthetic AES 3-6x faster, but applications far less (330 MB RAM disk 7 s -> 4 s, 1.75x; file CBC-256 encrypt 1.2x, decrypt 1.09x)"
    }
    fn options(&self) -> &'static [(&'static str, &'static str)] {
        &[
            (
                "--openssl DIR",
                "an OpenSSL build, e.g. scripts/build-openssl 3.5 --no-asm: its AES and an OpenVPN tunnel on it beside the AES-NI-off path (repeatable)",
            ),
            (
                "--guest",
                "run the RAM disk row (dm-crypt, the kernel's AES-XTS driver against the generic one) in the qemu guest kernel (guest/run), where this host has no dm-crypt",
            ),
        ]
    }
    fn notes(&self, _o: &Opts) -> Vec<String> {
        if cfg!(feature = "disk") {
            Vec::new()
        } else {
            vec!["RAM disk row: not in this build (the lean build leaves out disk)".into()]
        }
    }
    fn steps(&self, o: &Opts) -> Vec<Step> {
        let (t, d, mb) = if o.quick {
            ("0.05", "1", 33_000_000)
        } else {
            ("0.3", "5", 330_000_000)
        };
        let rounds = ENC_ROUNDS;
        let tf: f64 = t.parse().unwrap_or(0.3);
        let df: f64 = d.parse().unwrap_or(5.0);
        let speed = |imp: &str, algs: &str, dirs: &str| {
            argv(&[
                "speed",
                "--impl",
                imp,
                "--alg",
                algs,
                "--sizes",
                "16k",
                "--direction",
                dirs,
                "--time",
                t,
            ])
        };
        let mut primitive = speed("openssl,aws-lc", &ALGS.join(","), "enc,dec");
        primitive.extend(argv(&["--variant", "isa=no-aesni"]));
        primitive.extend(builds::openssl_flags(o));
        let tls = argv(&[
            "tls",
            "--suites",
            "aes256gcm",
            "--files",
            "10m",
            "--concurrency",
            "1",
            "--duration",
            d,
        ]);
        let mut vpn = argv(&[
            "vpn",
            "--tunnels",
            "openvpn",
            "--ciphers",
            "AES-256-GCM",
            "--streams",
            "1",
            "--directions",
            "up",
            "--duration",
            d,
            "--rounds",
            &o.rounds.to_string(),
        ]);
        // Sampled where perf works (each point runs again under perf): the tunnel's
        // crypto share with and without AES-NI.
        let profiled = o.profile_flag();
        let vpn_s = (df + 6.0) * (1.0 + profiled.len() as f64) * o.rounds as f64;
        vpn.extend(profiled);
        let enc = |env, variant: Option<&str>| Action::OpensslEnc {
            cipher: Algorithm::Aes256Cbc,
            bytes: mb,
            rounds,
            env,
            variant: variant.map(str::to_string),
            store: Vec::new(),
        };
        let step = |tag: &str, seconds: f64, action| Step {
            tag: tag.into(),
            seconds,
            action,
        };
        let mut steps = vec![
            step(
                "primitive",
                18.0 * tf * 1.2 * (1.0 + o.openssl.len() as f64) + 2.0,
                Action::Workload(primitive),
            ),
            step(
                "aws-lc no-aesni",
                2.0 * tf + 2.0,
                Action::Child {
                    env: mask(),
                    argv: speed("aws-lc", "aes-128-gcm", "enc"),
                },
            ),
        ];
        // nginx with and without AES-NI in turn, --rounds times: the gain's interval.
        for _ in 0..o.rounds {
            steps.push(step("nginx", df + 3.0, Action::Workload(tls.clone())));
            steps.push(step(
                "nginx no-aesni",
                df + 3.0,
                Action::Child {
                    env: mask(),
                    argv: tls.clone(),
                },
            ));
        }
        steps.extend([
            step("openvpn", vpn_s, Action::Workload(vpn.clone())),
            step(
                "openvpn no-aesni",
                vpn_s,
                Action::Child {
                    env: mask(),
                    argv: vpn,
                },
            ),
            step(
                "enc",
                mb as f64 / 2e8 * rounds as f64 + 1.0,
                enc(Vec::new(), None),
            ),
            step(
                "enc no-aesni",
                mb as f64 / 5e7 * rounds as f64 + 1.0,
                enc(mask(), Some("isa=no-aesni")),
            ),
        ]);
        // A build given with --openssl (a no-asm one, study 5's stock firmware): the same
        // tunnel on it, beside the stock build and its ISA-off path.
        steps.extend(builds::tunnel_steps(o, TUNNEL_CIPHER, d, false));
        #[cfg(feature = "disk")]
        steps.extend(disk::steps(o));
        steps
    }
    fn analyse(&self, o: &Observed) -> Findings {
        analyse(o)
    }
}

/// One line of the side-by-side table.
#[derive(Debug, PartialEq)]
struct Gain {
    what: String,
    unit: &'static str,
    with: f64,
    without: f64,
    /// with/without for speeds, without/with for times.
    gain: f64,
    /// The gain's interval over the trials or rounds (analyse::decide); None from one value
    /// a side.
    ci: Option<[f64; 2]>,
}

fn analyse(o: &Observed) -> Findings {
    let mut gains = Vec::new();
    let prim = o.speed("primitive");
    // The stock build's records (an --openssl build's are compared in `builds_against`).
    let stock = builds::system_label(o, "primitive");
    for alg in ALGS {
        for dir in ["enc", "dec"] {
            let pick = |variant: Option<&str>| {
                prim.iter().find(|r| {
                    r.implementation == "openssl"
                        && r.label.split(" [").next() == stock.as_deref()
                        && r.variant.as_deref() == variant
                        && r.alg.name() == alg
                        && r.direction.name() == dir
                })
            };
            if let (Some(w), Some(wo)) = (pick(None), pick(Some("isa=no-aesni"))) {
                let d = super::verdict::differ(
                    &super::verdict::values([*wo]),
                    &super::verdict::values([*w]),
                );
                gains.push(Gain {
                    what: format!("primitive openssl {alg} {dir} 16 KiB"),
                    unit: "MB/s",
                    with: w.throughput_bps / 1e6,
                    without: wo.throughput_bps / 1e6,
                    gain: w.throughput_bps / wo.throughput_bps,
                    ci: d.ci,
                });
            }
        }
    }
    let n_prim = gains.len();
    let mut apps = Vec::new();
    // A speed: the ratio of the medians and its interval over the rounds.
    let speed = |what: &str, w: Vec<f64>, wo: Vec<f64>| {
        let d = super::verdict::differ(&wo, &w);
        let (w, wo) = (median(&w), median(&wo));
        Gain {
            what: what.into(),
            unit: "Mbit/s",
            with: w * 8.0 / 1e6,
            without: wo * 8.0 / 1e6,
            gain: w / wo,
            ci: d.ci,
        }
    };
    let tls = |tag: &str| {
        let v = super::verdict::values(o.tls(tag));
        (!v.is_empty()).then_some(v)
    };
    if let (Some(w), Some(wo)) = (tls("nginx"), tls(&format!("nginx{MASKED}"))) {
        apps.push(speed(
            "nginx 10 MiB file, AES-256-GCM (server and client masked)",
            w,
            wo,
        ));
    }
    let vpn = |tag: &str| builds::tunnel_bps(o, tag);
    if let (Some(w), Some(wo)) = (vpn("openvpn"), vpn(&format!("openvpn{MASKED}"))) {
        apps.push(speed(
            "OpenVPN AES-256-GCM, 1 stream (both ends masked)",
            w,
            wo,
        ));
    }
    // `openssl enc` speed records: seconds per file = bytes / median speed.
    for w in o.speed("enc") {
        let masked = o.speed(&format!("enc{MASKED}"));
        let wo = masked
            .iter()
            .find(|m| m.alg == w.alg && m.direction == w.direction && m.size == w.size);
        if let Some(wo) = wo.filter(|m| m.throughput_bps > 0.0 && w.throughput_bps > 0.0) {
            let d = super::verdict::differ(
                &super::verdict::values([*wo]),
                &super::verdict::values([w]),
            );
            let what = if w.direction == Direction::Dec {
                "decrypt"
            } else {
                "encrypt"
            };
            apps.push(Gain {
                what: format!(
                    "openssl enc -{} {what} of {} MB in tmpfs",
                    w.alg,
                    w.size / 1_000_000
                ),
                unit: "s",
                with: w.size as f64 / w.throughput_bps,
                without: wo.size as f64 / wo.throughput_bps,
                gain: w.throughput_bps / wo.throughput_bps,
                ci: d.ci,
            });
        }
    }
    let mut table = Table::new(
        "AES-NI on against off (OPENSSL_ia32cap isa=no-aesni); gain = on/off for speeds, off/on for times",
        vec![
            Column::text("what"),
            Column::text("unit"),
            Column::num("AES-NI"),
            Column::num("no AES-NI"),
            Column::num("gain"),
        ],
    );
    for g in gains.iter().chain(&apps) {
        table.push(vec![
            g.what.clone(),
            g.unit.into(),
            crate::render::plots::axis_number(g.with),
            crate::render::plots::axis_number(g.without),
            times(g.gain),
        ]);
    }
    let mut conclusions = Vec::new();
    let prim_gain = (n_prim > 0).then(|| median(&gains.iter().map(|g| g.gain).collect::<Vec<_>>()));
    match prim_gain {
        Some(p) => {
            let app_text: Vec<String> = apps
                .iter()
                .map(|a| format!("{} {}", short(&a.what), times(a.gain)))
                .collect();
            if apps.is_empty() {
                conclusions.push(format!(
                    "AES-NI: primitive {} (median of {n_prim} points); no application was measured here",
                    times(p)
                ));
            } else {
                conclusions.push(format!(
                    "AES-NI: primitive {} (median of {n_prim} points), {}: {}",
                    times(p),
                    app_text.join(", "),
                    app_against_primitive(&gains, &apps)
                ));
            }
            let in_range = (3.0..=6.0).contains(&p);
            conclusions.push(format!(
                "The primitive gain {} is {} study 2's synthetic 3-6x{}",
                times(p),
                if in_range {
                    "within"
                } else if p > 6.0 {
                    "above"
                } else {
                    "below"
                },
                if p > 6.0 {
                    " (today's OpenSSL has far faster AES-NI code than 2010's)."
                } else {
                    "."
                }
            ));
        }
        None => conclusions.push(format!(
            "AES-NI primitive gain not observed: {}",
            o.why_missing("primitive")
        )),
    }
    // Why the tunnel gains less than the primitive: the share of its CPU that crypto is.
    for (tag, path) in [("openvpn", "with AES-NI"), ("openvpn no-aesni", "without")] {
        if let Some(c) = super::quote::sampled_clause(o, tag, "AES-256-GCM") {
            conclusions.push(format!("OpenVPN AES-256-GCM {path}: crypto is {c}."));
        }
    }
    conclusions.push(aws_lc_honours(o));
    conclusions.extend(builds_against(o, stock.as_deref()));
    let mut blocks = vec![Block::Table(table)];
    if gains.is_empty() && apps.is_empty() {
        blocks.clear();
    }
    #[cfg(feature = "disk")]
    disk::ram_disk(o, &mut blocks, &mut conclusions);
    Findings {
        blocks,
        conclusions,
        ..Findings::default()
    }
}

/// Each --openssl build (a no-asm one) against the stock build and its ISA-off path:
/// AES-256-GCM at 16 KiB and the OpenVPN tunnel.
fn builds_against(o: &Observed, stock: Option<&str>) -> Vec<String> {
    let prim = o.speed("primitive");
    let at = |label: &str| builds::primitive_bps(&prim, label, "aes-256-gcm", 16384);
    let off = stock.map(|s| format!("{s} [isa=no-aesni]"));
    let paths = [
        (stock.and_then(at), builds::tunnel_bps(o, "openvpn")),
        (
            off.as_deref().and_then(at),
            builds::tunnel_bps(o, &format!("openvpn{MASKED}")),
        ),
    ];
    // "0.31x the ISA-off path's (slower)", from the rounds' interval (analyse::decide).
    let against = |x: &[f64], y: &[f64], what: &str| {
        let d = super::verdict::differ(y, x);
        let how = match d.decision {
            Decision::NoDifference => "within noise of it",
            Decision::Lower => "slower",
            Decision::Higher => "faster",
            Decision::CannotDecide => "one round cannot decide",
        };
        format!("{} {what} ({how})", times(d.ratio))
    };
    let mut lines = Vec::new();
    for name in builds::tunnelled(o) {
        let (p, t) = (at(&name), builds::tunnel_bps(o, &builds::tunnel_tag(&name)));
        let mut parts = Vec::new();
        for (i, what) in ["the stock build's", "the ISA-off path's"]
            .iter()
            .enumerate()
        {
            let (sp, st) = &paths[i];
            if let (Some(p), Some(sp)) = (&p, sp) {
                parts.push(format!("AES-256-GCM at 16 KiB {}", against(p, sp, what)));
            }
            if let (Some(t), Some(st)) = (&t, st) {
                parts.push(format!("the OpenVPN tunnel {}", against(t, st, what)));
            }
        }
        lines.push(if parts.is_empty() {
            format!(
                "{name} against the stock build and its ISA-off path: not observed ({})",
                o.why_missing(&builds::tunnel_tag(&name))
            )
        } else {
            format!(
                "{name} against the stock build ({}) and its ISA-off path (isa=no-aesni): {}{}.",
                stock.unwrap_or("?"),
                parts.join(", "),
                match (&p, &t) {
                    (Some(p), Some(t)) => format!(
                        " (on the build: {} MB/s, {} Mbit/s)",
                        crate::units::mbps(median(p)),
                        super::quote::mbit(median(t))
                    ),
                    _ => String::new(),
                }
            )
        });
    }
    lines
}

/// Whether every application gains less from AES-NI than the primitive, as study 2 found:
/// each application's interval against the span of the primitive points' intervals
/// (analyse::decide::apart), so a gain with no interval (one run a side) decides nothing.
fn app_against_primitive(prim: &[Gain], apps: &[Gain]) -> String {
    let span = prim.iter().try_fold([f64::INFINITY, 0.0_f64], |s, g| {
        g.ci.map(|c| [s[0].min(c[0]), s[1].max(c[1])])
    });
    let decisions: Vec<Decision> = apps.iter().map(|a| apart(span, a.ci)).collect();
    let smaller = decisions.iter().filter(|d| **d == Decision::Lower).count();
    if decisions.contains(&Decision::CannotDecide) {
        format!(
            "{} (an application measured once a side has no interval).",
            super::verdict::UNDECIDED
        )
    } else if smaller == apps.len() {
        format!(
            "the application gain is smaller, {}.",
            super::verdict::agreement(Decision::Lower, Decision::Lower, 2)
        )
    } else {
        format!(
            "{smaller} of {} application gains are smaller beyond their intervals (study 2 found every application gain smaller).",
            apps.len()
        )
    }
}

fn short(what: &str) -> String {
    what.split(" (").next().unwrap_or(what).to_string()
}

/// Whether aws-lc reads OPENSSL_ia32cap: its AES-128-GCM speed with and without the mask.
fn aws_lc_honours(o: &Observed) -> String {
    let pick = |tag: &str| {
        o.speed(tag)
            .iter()
            .find(|r| {
                r.implementation == "aws-lc"
                    && r.alg == Algorithm::Aes128Gcm
                    && r.direction == Direction::Enc
            })
            .map(|r| r.throughput_bps)
    };
    match (pick("primitive"), pick(&format!("aws-lc{MASKED}"))) {
        (Some(w), Some(wo)) => {
            let r = w / wo;
            if r > 1.5 {
                format!(
                    "aws-lc honours OPENSSL_ia32cap: AES-128-GCM {} MB/s unmasked, {} MB/s with the no-aesni mask ({}).",
                    crate::units::mbps(w), crate::units::mbps(wo), times(r)
                )
            } else {
                format!(
                    "aws-lc ignores OPENSSL_ia32cap: AES-128-GCM {} MB/s unmasked, {} MB/s with the no-aesni mask ({}), so its gain cannot be measured this way.",
                    crate::units::mbps(w), crate::units::mbps(wo), times(r)
                )
            }
        }
        _ => format!(
            "whether aws-lc honours OPENSSL_ia32cap: not observed ({})",
            o.why_missing("aws-lc no-aesni")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::tests::{observed, speed_rec, tls_rec};

    /// nginx measured three times (study --rounds 3): an exact interval.
    fn rounds(bps: f64) -> Vec<crate::record::read::AnyRecord> {
        (0..3)
            .map(|_| tls_rec("aes256gcm", 10 << 20, 1, bps))
            .collect()
    }

    fn gain(gain: f64, ci: Option<[f64; 2]>) -> Gain {
        Gain {
            what: "x".into(),
            unit: "MB/s",
            with: gain,
            without: 1.0,
            gain,
            ci,
        }
    }

    /// Study 2's "applications gain less": each application's interval against the
    /// primitive points' span; without an interval on either side, no verdict.
    #[test]
    fn the_application_gain_is_smaller_only_beyond_the_intervals() {
        let prim = [gain(4.0, Some([3.9, 4.1])), gain(5.0, Some([4.8, 5.2]))];
        let says = |apps: &[Gain]| app_against_primitive(&prim, apps);
        assert_eq!(
            says(&[gain(1.2, Some([1.1, 1.3]))]),
            "the application gain is smaller, as study 2 found."
        );
        // 3.5x [2.5-4.5] reaches into the primitive's span: not smaller beyond it.
        assert!(
            says(&[gain(1.2, Some([1.1, 1.3])), gain(3.5, Some([2.5, 4.5]))])
                .starts_with("1 of 2 application gains are smaller beyond their intervals"),
        );
        // One nginx run a side: 1.2x against 4x is still no finding.
        assert!(
            says(&[gain(1.2, None)]).starts_with("one round cannot decide: run without --quick")
        );
        let no_prim = app_against_primitive(&[gain(4.0, None)], &[gain(1.2, Some([1.1, 1.3]))]);
        assert!(no_prim.starts_with("one round cannot decide"), "{no_prim}");
    }

    #[test]
    fn primitive_gain_beside_application_gain() {
        let mut recs = Vec::new();
        for alg in ALGS {
            for dir in ["enc", "dec"] {
                recs.push(speed_rec("openssl", None, alg, dir, 16384, 1, 4e9));
                recs.push(speed_rec(
                    "openssl",
                    Some("isa=no-aesni"),
                    alg,
                    dir,
                    16384,
                    1,
                    4e8,
                ));
            }
        }
        recs.push(speed_rec(
            "aws-lc",
            None,
            "aes-128-gcm",
            "enc",
            16384,
            1,
            5e9,
        ));
        let mut o = observed(vec![
            ("primitive", recs),
            (
                "aws-lc no-aesni",
                vec![speed_rec(
                    "aws-lc",
                    None,
                    "aes-128-gcm",
                    "enc",
                    16384,
                    1,
                    4.9e9,
                )],
            ),
            ("nginx", rounds(1e9)),
            ("nginx no-aesni", rounds(5e8)),
        ]);
        // openssl enc of 330 MB: 1 s with AES-NI (median of 3), 1.5 s without.
        let file = |v, bps| {
            speed_rec(
                crate::workloads::enc::IMPL,
                v,
                "aes-256-cbc",
                "enc",
                330_000_000,
                1,
                bps,
            )
        };
        o.runs.extend(
            observed(vec![
                ("enc", vec![file(None, 3.3e8)]),
                ("enc no-aesni", vec![file(Some("isa=no-aesni"), 2.2e8)]),
            ])
            .runs,
        );
        let f = analyse(&o);
        let c = f.conclusions.join("\n");
        assert!(c.contains("primitive 10.00x (median of 6 points)"), "{c}");
        assert!(c.contains("nginx 10 MiB file, AES-256-GCM 2.00x"), "{c}");
        assert!(
            c.contains("openssl enc -aes-256-cbc encrypt of 330 MB in tmpfs 1.50x"),
            "{c}"
        );
        assert!(
            c.contains("the application gain is smaller, as study 2 found"),
            "{c}"
        );
        assert!(c.contains("above study 2's synthetic 3-6x"), "{c}");
        assert!(c.contains("aws-lc ignores OPENSSL_ia32cap"), "{c}");
        let Block::Table(t) = &f.blocks[0] else {
            panic!()
        };
        assert_eq!(t.rows.len(), 8);
    }

    #[test]
    fn a_larger_application_gain_is_said_to_contradict() {
        let o = observed(vec![
            (
                "primitive",
                vec![
                    speed_rec("openssl", None, "aes-128-gcm", "enc", 16384, 1, 2e9),
                    speed_rec(
                        "openssl",
                        Some("isa=no-aesni"),
                        "aes-128-gcm",
                        "enc",
                        16384,
                        1,
                        1e9,
                    ),
                ],
            ),
            ("nginx", rounds(3e9)),
            ("nginx no-aesni", rounds(1e9)),
        ]);
        let c = analyse(&o).conclusions.join("\n");
        assert!(c.contains("0 of 1 application gains are smaller"), "{c}");
        assert!(c.contains("below study 2's"), "{c}");
    }

    /// A no-asm build beside Debian's (labels then carry versions): compared with the
    /// stock build and with its ISA-off path, on the primitive and the tunnel; the
    /// stock gain still comes from the system's records alone.
    #[test]
    fn a_no_asm_build_against_the_stock_build_and_the_isa_off_path() {
        let gcm = |label: &str, variant, bps| {
            let mut r = speed_rec("openssl", variant, "aes-256-gcm", "enc", 16384, 1, bps);
            if let crate::record::read::AnyRecord::Speed(s) = &mut r {
                s.label = label.into();
            }
            r
        };
        // Three rounds a tunnel (vpn --rounds 3).
        let tunnel = |bps| -> Vec<_> {
            (0..3)
                .map(|_| crate::study::tests::vpn_rec("openvpn", "AES-256-GCM", 1, bps, 10.0))
                .collect()
        };
        let o = observed(vec![
            (
                "primitive",
                vec![
                    gcm("openssl 3.5.5 no-asm", None, 1e8),
                    gcm(
                        "openssl 3.5.5 no-asm [isa=no-aesni]",
                        Some("isa=no-aesni"),
                        1e8,
                    ),
                    gcm("openssl 3.0.19", None, 4e9),
                    gcm("openssl 3.0.19 [isa=no-aesni]", Some("isa=no-aesni"), 4e8),
                ],
            ),
            ("openvpn", tunnel(100e6)),
            ("openvpn no-aesni", tunnel(70e6)),
            ("tunnel on openssl 3.5.5 no-asm", tunnel(40e6)),
        ]);
        let c = analyse(&o).conclusions.join("\n");
        assert!(
            c.contains("AES-NI: primitive 10.00x (median of 1 points)"),
            "{c}"
        );
        assert!(c.contains("openssl 3.5.5 no-asm against the stock build (openssl 3.0.19) and its ISA-off path (isa=no-aesni): AES-256-GCM at 16 KiB 0.03x the stock build's (slower), the OpenVPN tunnel 0.40x the stock build's (slower), AES-256-GCM at 16 KiB 0.25x the ISA-off path's (slower), the OpenVPN tunnel 0.57x the ISA-off path's (slower) (on the build: 100 MB/s, 320 Mbit/s)."), "{c}");
    }
}
