//! Build against build (study 5's stock against optimised firmware): an OpenVPN
//! tunnel on each `--openssl` build beside the speed figures a study's speed step takes
//! of it, and what a build's change of the primitive did to the tunnel, against what
//! Amdahl's law allows from the sampled crypto share.

use super::definition::{argv, Action, Observed, Opts, Step};
use super::quote::mbit;
use super::verdict::NOISE_PCT;
use crate::analyse::decide::{Decision, Difference};
use crate::analyse::share::{amdahl, Share};
use crate::analyse::stats::median;
use crate::record::speed::SpeedRecord;
use crate::render::model::{Column, Table};

/// Tag prefix of the tunnel step on one build: "tunnel on openssl 3.5.5 no-asm".
const TUNNEL_ON: &str = "tunnel on ";
/// The system's libcrypto in tunnel tags. Its speed label is "openssl 3.0.19" once builds
/// are measured beside it, "openssl" alone otherwise: see [`system_label`].
pub const SYSTEM: &str = "system openssl";

/// The tag of the tunnel step on the build named `build` (its label, or [`SYSTEM`]).
pub fn tunnel_tag(build: &str) -> String {
    format!("{TUNNEL_ON}{build}")
}

/// `--openssl DIR` for each build, for a speed step.
pub fn openssl_flags(o: &Opts) -> Vec<String> {
    o.openssl
        .iter()
        .flat_map(|b| ["--openssl".to_string(), b.dir.display().to_string()])
        .collect()
}

/// One OpenVPN tunnel step per build (the system's first, with `system`): `cipher`, one
/// stream, up, for `duration` seconds, profiled where perf can sample (so that the crypto
/// share behind the Amdahl bound is the sampled one).
pub fn tunnel_steps(o: &Opts, cipher: &str, duration: &str, system: bool) -> Vec<Step> {
    let profiled = o.profile_flag();
    let seconds = (duration.parse::<f64>().unwrap_or(5.0) + 6.0) * (1.0 + profiled.len() as f64);
    let system = system.then(|| (SYSTEM.to_string(), Vec::new()));
    let on_builds = o.openssl.iter().map(|b| {
        let dir = b.dir.display().to_string();
        (b.name(), vec!["--openssl".to_string(), dir])
    });
    system
        .into_iter()
        .chain(on_builds)
        .map(|(name, flags)| {
            let mut vpn = argv(&[
                "vpn",
                "--tunnels",
                "openvpn",
                "--ciphers",
                cipher,
                "--streams",
                "1",
                "--directions",
                "up",
                "--duration",
                duration,
                "--rounds",
                &o.rounds.to_string(),
            ]);
            vpn.extend(flags);
            vpn.extend(profiled.clone());
            Step {
                tag: tunnel_tag(&name),
                seconds: seconds * o.rounds as f64,
                action: Action::Workload(vpn),
            }
        })
        .collect()
}

/// The builds a tunnel step was planned for (run, failed or unavailable), in step order,
/// [`SYSTEM`] included.
pub fn tunnelled(o: &Observed) -> Vec<String> {
    let tags = o.runs.iter().map(|t| &t.tag);
    let broken = o.failed.iter().chain(&o.unavailable).map(|(t, _)| t);
    let mut names: Vec<String> = Vec::new();
    for tag in tags.chain(broken) {
        if let Some(name) = tag.strip_prefix(TUNNEL_ON) {
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// The system libcrypto's label in the speed records of `tag`: the OpenSSL label
/// without a variant that names no `--openssl` build.
pub fn system_label(o: &Observed, tag: &str) -> Option<String> {
    let builds = tunnelled(o);
    o.speed(tag)
        .iter()
        .find(|r| {
            r.implementation == "openssl" && r.variant.is_none() && !builds.contains(&r.label)
        })
        .map(|r| r.label.clone())
}

/// The label a build's speed records carry: its name, or the system's label.
fn speed_label(o: &Observed, speed_tag: &str, build: &str) -> Option<String> {
    if build == SYSTEM {
        system_label(o, speed_tag)
    } else {
        Some(build.to_string())
    }
}

/// The median tunnel throughput (bytes/s) of the step `tag`.
pub fn tunnel_bps(o: &Observed, tag: &str) -> Option<Vec<f64>> {
    let v = super::verdict::values(o.vpn(tag));
    (!v.is_empty()).then_some(v)
}

/// The throughput of `alg` encryption at `size` bytes, one thread, on the path `label`:
/// its trials (or each round's figure), for [`super::verdict::differ`].
pub fn primitive_bps(recs: &[&SpeedRecord], label: &str, alg: &str, size: u64) -> Option<Vec<f64>> {
    let v = super::verdict::values(recs.iter().copied().filter(|r| {
        r.label == label
            && r.alg.name() == alg
            && r.size == size
            && r.threads == 1
            && r.direction.name() == "enc"
    }));
    (!v.is_empty()).then_some(v)
}

/// "+12%", "-40%": a ratio as a change.
pub fn change(ratio: f64) -> String {
    format!("{:+.0}%", (ratio - 1.0) * 100.0)
}

/// The OpenVPN tunnel on each build: throughput, its busiest thread, the crypto share.
pub fn tunnel_table(o: &Observed, cipher: &str) -> Option<Table> {
    let mut t = Table::new(
        format!("OpenVPN on each build: {cipher}, 1 stream, up, TCP"),
        vec![
            Column::text("build"),
            Column::num("Mbit/s"),
            Column::num("busiest thread %"),
            Column::text("crypto share (sampled)"),
        ],
    );
    for name in tunnelled(o) {
        let tag = tunnel_tag(&name);
        let Some(bps) = tunnel_bps(o, &tag) else {
            continue;
        };
        let busiest: Vec<f64> = o
            .vpn(&tag)
            .iter()
            .filter_map(|r| r.busiest_thread_cpu_pct)
            .collect();
        let share = match super::quote::sampled_share(o, &tag, cipher) {
            Some(Ok(s)) => super::quote::sampled_text(&s),
            _ => "-".into(),
        };
        t.push(vec![
            name,
            mbit(median(&bps)),
            if busiest.is_empty() {
                "-".into()
            } else {
                format!("{:.0}", median(&busiest))
            },
            share,
        ]);
    }
    (!t.rows.is_empty()).then_some(t)
}

/// One build's figures for the comparison.
struct Figures {
    name: String,
    /// The speed label (the system's is version-qualified).
    label: String,
    /// The primitive's trials and the tunnel's rounds, for [`super::verdict::differ`].
    primitive: Vec<f64>,
    tunnel: Vec<f64>,
}

/// Study 5's inference, from its table: AES 33% faster, so OpenVPN "35-50% faster".
const INFERENCE: &str = "study 5 inferred 35-50% for OpenVPN from 33% for AES";

/// Every pair of builds whose primitive (`alg` at `size` bytes, from the speed step
/// `speed_tag`) and tunnel (`cipher`) were both measured, the later against the earlier
/// (the system's libcrypto first, then the `--openssl` builds in the order given): how
/// much the build changed each, the Amdahl bound from the earlier build's sampled crypto
/// share, and how that compares with study 5's inference.
pub fn pairs(o: &Observed, speed_tag: &str, alg: &str, size: u64, cipher: &str) -> Vec<String> {
    let recs = o.speed(speed_tag);
    let mut figures = Vec::new();
    let mut lines = Vec::new();
    for name in tunnelled(o) {
        let tag = tunnel_tag(&name);
        let label = speed_label(o, speed_tag, &name);
        let primitive = label
            .as_deref()
            .and_then(|l| primitive_bps(&recs, l, alg, size));
        match (label, primitive, tunnel_bps(o, &tag)) {
            (Some(label), Some(primitive), Some(tunnel)) => figures.push(Figures {
                name,
                label,
                primitive,
                tunnel,
            }),
            (_, p, t) => lines.push(format!(
                "{name}: not compared ({})",
                if t.is_none() {
                    format!("its tunnel: {}", o.why_missing(&tag))
                } else if p.is_none() {
                    format!("{alg} at {size} bytes not measured on it")
                } else {
                    "no speed records".into()
                }
            )),
        }
    }
    if figures.len() < 2 {
        return lines;
    }
    lines.insert(
        0,
        format!(
            "Build against build ({alg} at {size} bytes from openssl speed's table, OpenVPN {cipher} 1 stream up), each later build against each earlier one; the baseline is {}.",
            if figures[0].name == SYSTEM {
                format!("the system's libcrypto ({})", figures[0].label)
            } else {
                format!("the first --openssl build ({})", figures[0].name)
            }
        ),
    );
    for (i, base) in figures.iter().enumerate() {
        for new in &figures[i + 1..] {
            let share = super::quote::sampled_share(o, &tunnel_tag(&base.name), cipher);
            lines.push(pair(base, new, alg, size, cipher, share));
        }
    }
    lines
}

/// One pair's sentence: "openssl 3.5.5 no-asm against openssl 3.5.5: the build changed
/// AES-256-CBC by -62% ... and the OpenVPN tunnel by -30% ...; by Amdahl ...".
fn pair(
    base: &Figures,
    new: &Figures,
    alg: &str,
    size: u64,
    cipher: &str,
    share: Option<Result<Share, String>>,
) -> String {
    let (dx, dy) = (
        super::verdict::differ(&base.primitive, &new.primitive),
        super::verdict::differ(&base.tunnel, &new.tunnel),
    );
    let (x, y) = (dx.ratio, dy.ratio);
    let kib = if size.is_multiple_of(1024) {
        format!("{} KiB", size / 1024)
    } else {
        format!("{size} B")
    };
    let mut s = format!(
        "{} against {}: the build changed {} by {} ({kib}, openssl speed: {:.0} -> {:.0} MB/s) and the OpenVPN tunnel by {} ({} -> {} Mbit/s, {cipher})",
        new.label,
        base.label,
        alg.to_uppercase(),
        change(x),
        median(&base.primitive) / 1e6,
        median(&new.primitive) / 1e6,
        change(y),
        mbit(median(&base.tunnel)),
        mbit(median(&new.tunnel)),
    );
    s += &match share {
        Some(Ok(sh)) => {
            let z = amdahl(sh.share, x);
            let of = format!(
                "by Amdahl from the sampled crypto share ({} of {}'s tunnel CPU)",
                super::quote::sampled_text(&sh),
                base.label
            );
            if x >= 1.0 {
                format!("; {of}, {} was the most it could give", change(z))
            } else {
                format!(
                    "; {of}, {}'s change alone accounts for {}",
                    alg.to_uppercase(),
                    change(z)
                )
            }
        }
        Some(Err(why)) => {
            format!("; the crypto share was not sampled ({why}), so there is no Amdahl bound")
        }
        None => String::new(),
    };
    let moved = |d: &Difference| matches!(d.decision, Decision::Higher | Decision::Lower);
    s += &if [dx.decision, dy.decision].contains(&Decision::CannotDecide) {
        format!(
            ". {} (one run a side, no interval), so this pair says nothing about study 5's inference.",
            super::verdict::UNDECIDED
        )
    } else if !moved(&dx) {
        format!(
            ". {} did not change beyond noise ({NOISE_PCT:.0}%), so this pair says nothing about study 5's inference{}.",
            alg.to_uppercase(),
            if moved(&dy) {
                " (the tunnel's change is not AES's: the rest of the build, or this machine's noise)"
            } else {
                ""
            }
        )
    } else if !moved(&dy) {
        format!(
            ". The tunnel did not change beyond noise ({NOISE_PCT:.0}%) though {} did: {INFERENCE}, more than AES itself; here it moved less, as Amdahl says it must.",
            alg.to_uppercase()
        )
    } else if y.ln().abs() < x.ln().abs() {
        format!(
            ". The tunnel moved {:.0}% as far as {} did: {INFERENCE}, more than AES itself; that does not hold here.",
            (y - 1.0) / (x - 1.0) * 100.0,
            alg.to_uppercase()
        )
    } else {
        format!(
            ". The tunnel moved as far as {} or further, as {INFERENCE}.",
            alg.to_uppercase()
        )
    };
    s
}
