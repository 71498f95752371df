//! Study 1: would a crypto accelerator help my tunnel? Software AES-128-CBC against
//! every kernel path, the cost fits and crossover, the CPU-load table, then the crypto
//! share of an OpenVPN tunnel and the best speed-up an accelerator could give it (Amdahl),
//! and in the guest the tunnel that does use the kernel's drivers, IPsec, per driver
//! beside AF_ALG's figure for the same two drivers.

use super::definition::{argv, Action, Findings, Observed, Opts, Step, Study};
use super::quote::{mbit, times};
use crate::algorithms::Direction;
use crate::analyse::decide::{apart, Decision};
use crate::analyse::paths::analyse as fit_paths;
use crate::analyse::{share::amdahl, vpn::shares as vpn_shares};
use crate::record::speed::SpeedRecord;
use crate::render::model::{Block, Column, Table};

mod ipsec;

use ipsec::{ipsec_drivers, ipsec_per_driver, GUEST_TUNNEL_S};

pub struct Offload;

const SIZES: &str = "16,256,1024,4096,8192,65536,450000";

impl Study for Offload {
    fn name(&self) -> &'static str {
        "offload"
    }
    fn question(&self) -> &'static str {
        "would a crypto accelerator help my tunnel?"
    }
    fn original(&self) -> &'static str {
        "study 1: the kernel (FPGA) path lost at small buffers, overtook software (160 Mbit/s) past a crossover and levelled at 400/250 Mbit/s enc/dec, CPU load fell from ~92% to 29-43% with size, and AES was under 20% of OpenVPN's CPU, so offloading AES alone could not speed the tunnel much"
    }
    fn options(&self) -> &'static [(&'static str, &'static str)] {
        &[(
            "--guest",
            "run the kernel part (AF_ALG, the afalg engine) in the qemu guest kernel (guest/run), where this kernel has none",
        )]
    }
    fn steps(&self, o: &Opts) -> Vec<Step> {
        let (t, d, sizes) = if o.quick {
            ("0.03", "1", "16,1024,65536")
        } else {
            ("0.3", "5", SIZES)
        };
        let tf: f64 = t.parse().unwrap_or(0.3);
        let df: f64 = d.parse().unwrap_or(5.0);
        let n = sizes.split(',').count() as f64;
        let speed = kernel_paths(sizes, t);
        // The kernel paths --rounds times: the CPU load per size (one figure a run) then
        // has an interval.
        let rounds = o.rounds as usize;
        let mut steps = vec![
            Step {
                tag: "host".into(),
                seconds: 2.0 * n * tf * 1.2 + 2.0,
                action: Action::Workload(speed),
            };
            rounds
        ];
        if o.guest {
            // One boot: the kernel cipher paths, then the tunnels with their whole data
            // path in user space or in the kernel.
            let mut cmds = vec![kernel_paths(sizes, "0.03"); rounds];
            cmds.push(guest_tunnels());
            cmds.extend(ipsec_per_driver());
            steps.push(Step {
                tag: "guest".into(),
                seconds: 90.0
                    + 2.0 * ENGINES.len() as f64 * 4.0 * n * 0.04 * rounds as f64
                    + (GUEST_TUNNELS.len() + 2) as f64 * 2.0 * (GUEST_TUNNEL_S + 6.0),
                action: Action::Guest(cmds),
            });
        }
        let mut vpn = argv(&[
            "vpn",
            "--tunnels",
            "openvpn",
            "--ciphers",
            "AES-256-CBC,AES-128-GCM,none",
            "--streams",
            "1",
            "--directions",
            "up",
            "--duration",
            d,
        ]);
        // Sampled where perf works: the share quoted is then the sampled one (each point
        // runs again under perf).
        let profiled = o.profile_flag();
        let runs = 1.0 + profiled.len() as f64;
        vpn.extend(profiled);
        steps.push(Step {
            tag: "tunnel".into(),
            seconds: 3.0 * runs * (df + 2.0) + 4.0,
            action: Action::Workload(vpn),
        });
        steps
    }
    fn analyse(&self, o: &Observed) -> Findings {
        analyse(o)
    }
}

/// The tunnels measured in the guest, user space against kernel: OpenVPN with its data
/// channel in user space and in ovpn-dco, wireguard-go and kernel WireGuard.
const GUEST_TUNNELS: [&str; 4] = ["openvpn", "openvpn-dco", "wireguard-go", "wireguard-kernel"];

fn guest_tunnels() -> Vec<String> {
    argv(&[
        "vpn",
        "--tunnels",
        &GUEST_TUNNELS.join(","),
        "--ciphers",
        "AES-128-GCM,none",
        "--streams",
        "1",
        "--direction",
        "up",
        "--time",
        &GUEST_TUNNEL_S.to_string(),
    ])
}

/// OpenSSL's engines for the kernel paths (study 1's stack: libcrypto, engine, kernel).
const ENGINES: [&str; 2] = ["engine=afalg", "engine=devcrypto"];

/// Software AES-128-CBC against every kernel path: AF_ALG (each driver), /dev/crypto and
/// libcrypto through each engine. Paths this machine lacks are listed with the reason.
fn kernel_paths(sizes: &str, seconds: &str) -> Vec<String> {
    let mut a = argv(&[
        "speed",
        "--impl",
        "openssl,af_alg,cryptodev",
        "--alg",
        "aes-128-cbc",
        "--direction",
        "enc,dec",
        "--sizes",
        sizes,
        "--time",
        seconds,
    ]);
    for e in ENGINES {
        a.extend(argv(&["--variant", e]));
    }
    a
}

/// Why each kernel path (AF_ALG, /dev/crypto, an engine) is missing from a step's runs,
/// as the speed run recorded it.
fn kernel_paths_missing(o: &Observed, tag: &str, what: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for run in o.tagged(tag) {
        for u in run.end.iter().flat_map(|e| &e.unavailable) {
            let name = u.name.as_str();
            let kernel_path =
                ["af_alg", "cryptodev"].contains(&name) || ENGINES.iter().any(|e| name.contains(e));
            let line = format!(
                "{what}: {name}: {}",
                if u.reason.is_empty() {
                    "no reason given"
                } else {
                    &u.reason
                }
            );
            if kernel_path && !out.contains(&line) {
                out.push(line);
            }
        }
        // Points of a present path that it refused (e.g. a message an engine cannot take).
        for x in run.end.iter().flat_map(|e| &e.exclusions) {
            let name = x.implementation.as_str();
            let kernel_path = name.starts_with("af_alg")
                || name.starts_with("cryptodev")
                || ENGINES.iter().any(|e| name.contains(e));
            let line = format!("{what}: {name}: {}", x.reason);
            if kernel_path && !out.contains(&line) {
                out.push(line);
            }
        }
    }
    out
}

fn kernel(r: &SpeedRecord) -> bool {
    r.implementation != "openssl"
        || r.variant
            .as_deref()
            .is_some_and(|v| v.starts_with("engine"))
}

/// Throughput, fits, crossover and CPU load of one source (host or guest).
fn paths(
    o: &Observed,
    tag: &str,
    what: &str,
    blocks: &mut Vec<Block>,
    conclusions: &mut Vec<String>,
) -> Option<f64> {
    let recs = o.speed(tag);
    if recs.is_empty() {
        return None;
    }
    let mut sizes: Vec<u64> = recs.iter().map(|r| r.size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut t = Table::new(
        format!("{what}: AES-128-CBC, Mbit/s by buffer size"),
        [Column::text("path"), Column::text("dir")]
            .into_iter()
            .chain(sizes.iter().map(|s| Column::num(&s.to_string())))
            .collect(),
    );
    let mut load = Table::new(
        format!(
            "{what}: CPU load of the kernel path (user+sys per thread, %), laid out as study 1's"
        ),
        std::iter::once(Column::text("path / direction"))
            .chain(sizes.iter().map(|s| Column::num(&s.to_string())))
            .collect(),
    );
    let mut labels: Vec<String> = recs.iter().map(|r| r.label.clone()).collect();
    labels.sort();
    labels.dedup();
    for l in &labels {
        for dir in ["enc", "dec"] {
            let at = |s: u64| {
                recs.iter()
                    .find(|r| &r.label == l && r.direction.name() == dir && r.size == s)
            };
            let mut row = vec![l.clone(), dir.into()];
            row.extend(
                sizes
                    .iter()
                    .map(|s| at(*s).map(|r| mbit(r.throughput_bps)).unwrap_or("-".into())),
            );
            t.push(row);
            if at(sizes[0]).is_some_and(|r| kernel(r)) {
                let mut row = vec![format!("{l} {dir}")];
                row.extend(sizes.iter().map(|s| {
                    at(*s)
                        .map(|r| format!("{:.0}%", r.cpu_load_pct))
                        .unwrap_or("-".into())
                }));
                load.push(row);
                if let (Some(a), Some(b)) = (at(sizes[0]), at(*sizes.last().unwrap_or(&0))) {
                    // The load of every run at each size: one figure a size has no interval.
                    let load = |s: u64| -> Vec<f64> {
                        recs.iter()
                            .filter(|r| &r.label == l && r.direction.name() == dir && r.size == s)
                            .map(|r| r.cpu_load_pct)
                            .collect()
                    };
                    let d = super::verdict::differ(&load(a.size), &load(b.size));
                    conclusions.push(format!(
                        "{what}: {l} {dir} CPU load {:.0}% at {} B and {:.0}% at {} B: {}",
                        a.cpu_load_pct, a.size, b.cpu_load_pct, b.size,
                        match d.decision {
                            Decision::Lower => format!("it falls with size, {}.", super::verdict::agreement(d.decision, Decision::Lower, 1)),
                            Decision::CannotDecide => format!("{} (one CPU-load figure a size).", super::verdict::UNDECIDED),
                            _ => "it does not fall with size beyond the noise: unlike study 1's offload (92% -> 29%), this kernel path computes on the CPU itself.".into(),
                        }
                    ));
                }
            }
        }
    }
    if what.contains("guest") {
        t.notes.push("emulated CPU: shapes only".into());
        load.notes.push("emulated CPU: shapes only".into());
    }
    blocks.push(Block::Table(t));
    if !load.rows.is_empty() {
        blocks.push(Block::Table(load));
    }
    let a = fit_paths(&recs, None);
    let mut fits = Table::new(
        format!("{what}: cost per call, t(n) = a + n/B"),
        vec![
            Column::text("path"),
            Column::text("dir"),
            Column::num("a (us)"),
            Column::num("B (Mbit/s)"),
        ],
    );
    for f in &a.fits {
        fits.push(vec![
            f.path.clone(),
            f.direction.to_string(),
            format!("{:.2}", f.fit.overhead_s * 1e6),
            mbit(f.fit.bandwidth_bps),
        ]);
    }
    if !fits.rows.is_empty() {
        blocks.push(Block::Table(fits));
    }
    let sw = |dir: Direction| {
        a.fits
            .iter()
            .find(|f| f.implementation == "openssl" && f.variant.is_none() && f.direction == dir)
    };
    let mut best_ratio: Option<f64> = None;
    for c in a
        .crossovers
        .iter()
        .filter(|c| c.a == "openssl" || c.b == "openssl")
    {
        let other = if c.a == "openssl" { &c.b } else { &c.a };
        let text = match c.crossover.size_bytes {
            // A crossing claimed only where every resample of the run crosses too.
            Some(n) => match c.crossover.bounds {
                [Some(lo), Some(hi)] => format!("{other} overtakes software at {n:.0} bytes [{lo:.0}-{hi:.0}] ({}), as study 1 found a crossover", c.direction),
                _ => format!("{other} crosses software's line near {n:.0} bytes ({}), but not in every resample of this run: {}", c.direction, super::verdict::UNDECIDED),
            },
            None => format!("{other} never overtakes software ({}): {}, unlike study 1's accelerator", c.direction, c.faster()),
        };
        conclusions.push(format!("{what}: {text}."));
    }
    let kernel_fit = |f: &&crate::analyse::paths::PathFit| {
        f.implementation != "openssl"
            || f.variant
                .as_deref()
                .is_some_and(|v| v.starts_with("engine"))
    };
    for f in a.fits.iter().filter(kernel_fit) {
        if let Some(s) = sw(f.direction) {
            let r = f.fit.bandwidth_bps / s.fit.bandwidth_bps;
            best_ratio = Some(best_ratio.map_or(r, |b: f64| b.max(r)));
            conclusions.push(format!(
                "{what}: {} {} levels at {} Mbit/s against software's {} ({}; study 1: 400 against 160, 2.5x).",
                f.path, f.direction, mbit(f.fit.bandwidth_bps), mbit(s.fit.bandwidth_bps), times(r)
            ));
        }
    }
    best_ratio
}

fn analyse(o: &Observed) -> Findings {
    let mut blocks = Vec::new();
    let mut conclusions = Vec::new();
    let host = paths(o, "host", "host", &mut blocks, &mut conclusions);
    if !o.speed("host").iter().any(|r| kernel(r)) {
        conclusions.push("No kernel crypto path on this host (no AF_ALG, no /dev/crypto; the run's environment says why): give --guest to measure AF_ALG in the qemu guest.".into());
    }
    let guest = paths(
        o,
        "guest",
        "guest (emulated CPU: shapes only)",
        &mut blocks,
        &mut conclusions,
    );
    if o.failure("guest").is_some() {
        conclusions.push(format!(
            "Kernel part in the guest not observed: {}",
            o.why_missing("guest")
        ));
    }
    let mut unobservable = kernel_paths_missing(o, "host", "host");
    if o.tagged("guest").next().is_some() {
        unobservable.extend(kernel_paths_missing(o, "guest", "guest"));
    } else if o.failure("guest").is_none() {
        unobservable.push("guest: not run: give --guest to measure AF_ALG and the engines under a real kernel in qemu".into());
    }
    let vpn: Vec<_> = o.vpn("tunnel").into_iter().cloned().collect();
    let shares = vpn_shares(&vpn);
    if shares.is_empty() {
        conclusions.push(format!(
            "The tunnel's crypto share was not observed: {}",
            o.why_missing("tunnel")
        ));
    } else {
        let mut t = Table::new(
            "OpenVPN, 1 stream up: crypto share of the tunnel's CPU (sampled with perf where profiled, else per byte against cipher none) and Amdahl's bound",
            vec![Column::text("cipher"), Column::num("Mbit/s"), Column::num("crypto share"), Column::num("per-byte cross-check"), Column::num("if crypto were free"), Column::num("with the measured accelerator")],
        );
        let k = host.or(guest);
        let from = if host.is_some() {
            ""
        } else {
            ", in the emulated guest"
        };
        for s in &shares {
            let amdahl = k.map(|k| amdahl(s.crypto_share, k));
            t.push(vec![
                format!(
                    "{}{}",
                    s.cipher,
                    s.auth
                        .as_deref()
                        .map(|a| format!(" + {a}"))
                        .unwrap_or_default()
                ),
                mbit(s.throughput_bps),
                super::quote::share_text(s),
                if s.sampled.is_some() {
                    format!("{:.0}%", s.per_byte_share * 100.0)
                } else {
                    "-".into()
                },
                times(s.max_speedup),
                amdahl.map(times).unwrap_or("no kernel path".into()),
            ]);
            conclusions.push(format!(
                "OpenVPN {}: crypto is {} of the tunnel's CPU ({}), so even free crypto gives at most {}{}: {}",
                s.cipher,
                super::quote::share_text(s),
                super::quote::share_source_text(s),
                times(s.max_speedup),
                amdahl.map(|a| format!(", and the measured kernel path ({} software's bandwidth{from}) {}", times(k.unwrap_or(1.0)), times(a))).unwrap_or_default(),
                // Half the CPU against the sampled share's interval (the per-byte estimate has none).
                match apart(Some([0.5, 0.5]), s.sampled.as_ref().map(|x| x.ci)) {
                    d @ Decision::Lower => format!("offloading the cipher cannot make the tunnel much faster, {}.", super::verdict::agreement(d, Decision::Lower, 1)),
                    Decision::Higher => "the cipher dominates here, so offload could pay, unlike study 1 (AES under 20%).".into(),
                    Decision::NoDifference => "its interval holds half the CPU, so whether offload could pay is not decided.".into(),
                    Decision::CannotDecide => format!("{} (the per-byte share has no interval; perf sampling gives one).", super::verdict::UNDECIDED),
                }
            ));
        }
        blocks.push(Block::Table(t));
    }
    whole_path(o, guest, &mut blocks, &mut conclusions);
    ipsec_drivers(o, &mut blocks, &mut conclusions);
    Findings {
        blocks,
        conclusions,
        unobservable,
    }
}

/// Offload the whole data path (the guest's tunnels): each kernel tunnel's gain over its
/// user-space form, against the Amdahl bounds from user-space OpenVPN's crypto share
/// (crypto free, and crypto through the kernel cipher driver measured in the guest).
fn whole_path(
    o: &Observed,
    af_alg: Option<f64>,
    blocks: &mut Vec<Block>,
    conclusions: &mut Vec<String>,
) {
    let recs: Vec<_> = o.vpn("guest").into_iter().cloned().collect();
    if recs.is_empty() {
        return;
    }
    let tp = |tunnel: &str, go: Option<bool>, cipher: &str| {
        recs.iter()
            .filter(|r| r.tunnel == tunnel && r.cipher == cipher)
            .filter(|r| go.is_none_or(|g| g == r.impl_version.starts_with("wireguard-go")))
            .map(|r| (r.throughput_bps, r.busiest_thread_cpu_pct))
            .next()
    };
    let aead = "AES-128-GCM";
    let wg = crate::workloads::vpn::WIREGUARD_CIPHER;
    let share = vpn_shares(&recs).into_iter().find(|s| s.cipher == aead);
    let mut t = Table::new(
        "guest (emulated CPU: shapes only): the whole data path in the kernel, 1 stream up",
        vec![
            Column::text("tunnel"),
            Column::text("cipher"),
            Column::num("Mbit/s"),
            Column::num("busiest thread"),
            Column::num("against user space"),
        ],
    );
    t.notes.push("emulated CPU: shapes only".into());
    let rows = [
        (
            "openvpn (user space)",
            tp("openvpn", None, aead),
            tp("openvpn", None, aead),
            aead,
        ),
        (
            "openvpn-dco (kernel)",
            tp("openvpn-dco", None, aead),
            tp("openvpn", None, aead),
            aead,
        ),
        (
            "wireguard-go (user space)",
            tp("wireguard", Some(true), wg),
            tp("wireguard", Some(true), wg),
            wg,
        ),
        (
            "wireguard (kernel)",
            tp("wireguard", Some(false), wg),
            tp("wireguard", Some(true), wg),
            wg,
        ),
    ];
    for (name, mine, user, cipher) in &rows {
        let Some((bps, busiest)) = mine else {
            continue;
        };
        t.push(vec![
            name.to_string(),
            cipher.to_string(),
            mbit(*bps),
            busiest.map(|b| format!("{b:.0}%")).unwrap_or("-".into()),
            user.map(|(u, _)| times(bps / u)).unwrap_or("-".into()),
        ]);
    }
    blocks.push(Block::Table(t));
    let gain = |k: usize| match (rows[k].1, rows[k].2) {
        (Some((a, _)), Some((b, _))) if b > 0.0 => Some(a / b),
        _ => None,
    };
    let mut line = "Offload the whole data path (guest, emulated CPU: shapes only): ".to_string();
    match (gain(1), &share) {
        (Some(g), Some(s)) => {
            let bound = s.max_speedup;
            let via_driver = af_alg
                .map(|k| {
                    format!(
                        ", and {} with the cipher through the kernel driver measured here (AF_ALG, {} software's bandwidth)",
                        times(1.0 / ((1.0 - s.crypto_share) + s.crypto_share / k)),
                        times(k)
                    )
                })
                .unwrap_or_default();
            line.push_str(&format!(
                "OpenVPN DCO carries {} of user-space OpenVPN's {aead} throughput. Crypto is {:.0}% of user-space OpenVPN's CPU per byte, so speeding the cipher alone could give at most {} (if it were free){via_driver}. {}",
                times(g),
                s.crypto_share * 100.0,
                times(bound),
                if g > bound {
                    "DCO beats that bound: what it removes is the rest of the user-space path (copies across the tun device, system calls, one thread), which study 1 could not offload by moving AES."
                } else {
                    "DCO stays within that bound here: moving the data path did not pay more than a free cipher would."
                }
            ));
        }
        (Some(g), None) => line.push_str(&format!(
            "OpenVPN DCO carries {} of user-space OpenVPN's {aead} throughput (no crypto share: the cipher-none point is missing).",
            times(g)
        )),
        // Say which of the pair is missing, with the reason its run wrote for it.
        (None, _) => line.push_str(&match (rows[1].1, rows[1].2) {
            (None, _) => format!(
                "OpenVPN DCO not measured: {}.",
                o.why_missing_of("guest", "openvpn-dco")
            ),
            _ => format!(
                "OpenVPN DCO not compared: user-space OpenVPN not measured: {}.",
                o.why_missing_of("guest", "openvpn")
            ),
        }),
    }
    if let Some(g) = gain(3) {
        line.push_str(&format!(
            " Kernel WireGuard carries {} of wireguard-go's.",
            times(g)
        ));
    }
    conclusions.push(line);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::tests::{observed, speed_rec_load, vpn_rec};

    /// Software: 1 us + n / 100 MB/s; kernel: 20 us + n / 400 MB/s: cross at 2533 B.
    fn cbc_paths(sizes: &[u64]) -> Vec<crate::record::read::AnyRecord> {
        let t = |a: f64, bw: f64, n: f64| n / (a + n / bw);
        let mut recs = Vec::new();
        for (i, &n) in sizes.iter().enumerate() {
            for dir in ["enc", "dec"] {
                recs.push(speed_rec_load(
                    "openssl",
                    None,
                    "aes-128-cbc",
                    dir,
                    n,
                    1,
                    t(1e-6, 1e8, n as f64),
                    100.0,
                ));
                recs.push(speed_rec_load(
                    "af_alg",
                    None,
                    "aes-128-cbc",
                    dir,
                    n,
                    1,
                    t(20e-6, 4e8, n as f64),
                    95.0 - 10.0 * i as f64,
                ));
            }
        }
        recs
    }

    /// Two sizes fit each line exactly: no resample, so the crossing is not claimed.
    #[test]
    fn a_crossover_without_bounds_is_not_a_finding() {
        let f = analyse(&observed(vec![("host", cbc_paths(&[16, 450000]))]));
        let c = f.conclusions.join("\n");
        assert!(
            c.contains("af_alg crosses software's line near 2533 bytes (enc), but not in every resample of this run: one round cannot decide")
                && !c.contains("as study 1 found a crossover"),
            "{c}"
        );
    }

    #[test]
    fn crossover_load_and_the_speed_up_bounds_with_known_answers() {
        let recs = cbc_paths(&[16, 256, 1024, 4096, 8192, 65536, 450000]);
        let o = observed(vec![
            ("host", recs),
            (
                "tunnel",
                vec![
                    vpn_rec("openvpn", "AES-256-CBC", 1, 1e8, 10.0),
                    vpn_rec("openvpn", "none", 1, 1.2e8, 8.0),
                ],
            ),
        ]);
        let f = analyse(&o);
        let c = f.conclusions.join("\n");
        assert!(c.contains("af_alg overtakes software at 2533"), "{c}");
        assert!(
            c.contains("af_alg enc levels at 3200 Mbit/s against software's 800 (4.00x"),
            "{c}"
        );
        // One run: one CPU-load figure a size, no interval.
        assert!(
            c.contains(
                "CPU load 95% at 16 B and 35% at 450000 B: one round cannot decide: run without --quick (one CPU-load figure a size)."
            ),
            "{c}"
        );
        assert!(!c.contains("falls with size"), "{c}");
        // Three runs (study --rounds 3): the interval decides.
        let mut o3 = o.clone();
        o3.runs
            .extend(o.runs.iter().filter(|t| t.tag == "host").cloned());
        o3.runs
            .extend(o.runs.iter().filter(|t| t.tag == "host").cloned());
        let c = analyse(&o3).conclusions.join("\n");
        assert!(
            c.contains(
                "CPU load 95% at 16 B and 35% at 450000 B: it falls with size, as study 1 found."
            ),
            "{c}"
        );
        // share 0.2; accelerator 4x: 1/(0.8 + 0.05) = 1.18x.
        assert!(c.contains("crypto is 20% of the tunnel's CPU (per-byte estimate (no profile: run without --profile)), so even free crypto gives at most 1.25x, and the measured kernel path (4.00x software's bandwidth) 1.18x"), "{c}");
    }

    #[test]
    fn engines_count_as_kernel_paths_and_missing_ones_say_why() {
        let t = |a: f64, bw: f64, n: f64| n / (a + n / bw);
        let mut recs = Vec::new();
        for n in [16u64, 1024, 65536] {
            recs.push(speed_rec_load(
                "openssl",
                None,
                "aes-128-cbc",
                "enc",
                n,
                1,
                t(1e-6, 1e8, n as f64),
                100.0,
            ));
            recs.push(speed_rec_load(
                "openssl",
                Some("engine=afalg"),
                "aes-128-cbc",
                "enc",
                n,
                1,
                t(30e-6, 2e8, n as f64),
                90.0,
            ));
        }
        let mut o = observed(vec![("guest", recs)]);
        o.runs[0].run.end = Some(crate::record::RunEnd {
            kind: crate::record::LineKind::End,
            run_id: "run0".into(),
            interrupted: false,
            points: 6,
            exclusions: vec![crate::record::Exclusion {
                workload: crate::record::Workload::Speed,
                implementation: "openssl [engine=afalg]".into(),
                kind: crate::record::ExclusionKind::Refused,
                reason: "enc at 450000 bytes: engine afalg cannot take a 450000-byte message"
                    .into(),
                point: Default::default(),
            }],
            unavailable: vec![
                crate::record::Unavailable {
                    name: "openssl [engine=devcrypto]".into(),
                    reason: "engine devcrypto needs /dev/crypto: no /dev/crypto".into(),
                },
                crate::record::Unavailable {
                    name: "boringssl".into(),
                    reason: "not in this build".into(),
                },
            ],
            analysis_inputs: Default::default(),
        });
        let f = analyse(&o);
        let c = f.conclusions.join("\n");
        assert!(
            c.contains(
                "openssl [engine=afalg] enc levels at 1600 Mbit/s against software's 800 (2.00x"
            ),
            "{c}"
        );
        assert!(c.contains("CPU load 90% at 16 B"), "{c}");
        assert_eq!(
            f.unobservable,
            [
                "guest: openssl [engine=devcrypto]: engine devcrypto needs /dev/crypto: no /dev/crypto",
                "guest: openssl [engine=afalg]: enc at 450000 bytes: engine afalg cannot take a 450000-byte message",
            ],
        );
        // Without --guest, the section says how to get the kernel part.
        let f = analyse(&Observed::default());
        assert!(
            f.unobservable.iter().any(|l| l.contains("give --guest")),
            "{:?}",
            f.unobservable
        );
    }
}
