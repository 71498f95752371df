//! `advise`'s verdicts: which tunnel, which cipher, whether a kernel path helps (its
//! throughput and its CPU per GB), round trips idle and under load, what limits the best
//! points, each from the records of one machine with its interval. A
//! winner is named only when the interval of the ratio excludes no difference; a path
//! that failed or could not run gets no verdict, only its reason. Pure: runs in, words
//! and numbers out.

pub(crate) mod advice;
mod costs;
mod judge;
pub mod stacks;

use crate::record::any::Listed;
use crate::record::read::Run;
use crate::record::speed::SpeedRecord;
use crate::record::ssh::SshRecord;
use crate::record::tls::TlsRecord;
use crate::record::vpn::VpnRecord;
use crate::record::Record;
pub use advice::{Advice, Figure, Unavailable, ANOTHER_LIBRARY};
use judge::{alone, compared, figure, limit_verdict, Candidate};
pub use judge::{mbit, median_interval};
use std::collections::BTreeSet;

/// What the verdicts read: the runs of one machine, the paths that were asked for, and
/// those known missing (probe's reasons, steps that failed).
pub struct Input<'a> {
    pub runs: Vec<&'a Run>,
    /// The stack comparison's TLS runs (servers and libraries at one thread), kept apart
    /// from the TLS suite runs whose verdicts would otherwise pool them.
    pub stacks: Vec<&'a Run>,
    pub expected: Vec<String>,
    pub missing: Vec<Unavailable>,
}

/// The path an ssh record measured: "ssh openssh", "ssh dropbear".
pub fn ssh_path(r: &SshRecord) -> String {
    format!("ssh {}", r.server.name)
}

/// The path a vpn record measured: kernel WireGuard and wireguard-go share a tunnel name.
pub fn vpn_path(r: &VpnRecord) -> String {
    match r.tunnel.as_str() {
        "wireguard" if r.impl_version == "kernel" => "wireguard-kernel".into(),
        "wireguard" => "wireguard-go".into(),
        t => t.into(),
    }
}

/// The path a tls record measured: nginx in user space, or with kernel TLS.
pub fn tls_path(r: &TlsRecord) -> &'static str {
    if r.ktls.is_some() || r.suite.ends_with("+ktls") {
        "ktls"
    } else {
        "tls"
    }
}

fn records<'a, D: Listed>(runs: &[&'a Run]) -> Vec<&'a Record<D>> {
    runs.iter()
        .flat_map(|r| &r.records)
        .filter_map(D::pick)
        .collect()
}

pub fn advise(input: &Input) -> Advice {
    let missing: BTreeSet<&str> = input.missing.iter().map(|m| m.path.as_str()).collect();
    let vpn: Vec<&VpnRecord> = records(&input.runs)
        .into_iter()
        .filter(|r: &&VpnRecord| !missing.contains(vpn_path(r).as_str()))
        .collect();
    let tls: Vec<&TlsRecord> = records(&input.runs)
        .into_iter()
        .filter(|r: &&TlsRecord| !missing.contains(tls_path(r)) && r.errors == 0)
        .collect();
    let ssh: Vec<&SshRecord> = records(&input.runs)
        .into_iter()
        .filter(|r: &&SshRecord| !missing.contains(ssh_path(r).as_str()))
        .collect();
    let speed: Vec<&SpeedRecord> = if missing.contains("speed") {
        Vec::new()
    } else {
        records(&input.runs)
    };
    let stack_tls: Vec<&TlsRecord> = records(&input.stacks)
        .into_iter()
        .filter(|r: &&TlsRecord| r.errors == 0)
        .collect();
    let mut a = Advice {
        unavailable: input.missing.clone(),
        ..Advice::default()
    };
    let measured: BTreeSet<String> = vpn
        .iter()
        .map(|r| vpn_path(r))
        .chain(tls.iter().map(|r| tls_path(r).to_string()))
        .chain(ssh.iter().map(|r| ssh_path(r)))
        .chain((!speed.is_empty()).then(|| "speed".to_string()))
        .chain((!stack_tls.is_empty()).then(|| STACKS_PATH.to_string()))
        .collect();
    for p in &input.expected {
        if !measured.contains(p) && !missing.contains(p.as_str()) {
            a.unavailable.push(Unavailable {
                path: p.clone(),
                reason: "nothing measured: the step wrote no point of it".into(),
            });
        }
    }
    tunnels(&vpn, &mut a);
    tls_verdicts(&tls, &mut a);
    speed_verdicts(&speed, &mut a);
    library_verdicts(&speed, &mut a);
    ssh_verdicts(&ssh, &mut a);
    stacks::verdicts(&stack_tls, &mut a);
    // Under qemu the ratios are the emulator's: its AES instructions, not the hardware's.
    let emulated = input
        .runs
        .iter()
        .any(|r| r.environment.as_ref().is_some_and(|e| e.emulated));
    if emulated {
        for v in &mut a.verdicts {
            v.answer.push_str(EMULATED);
        }
    }
    a
}

/// The path of the stack comparison's runs.
pub const STACKS_PATH: &str = "stacks";

/// What every verdict adds when a run was on an emulated CPU.
pub const EMULATED: &str = " (emulated CPU: the emulator's shape, not this hardware's speed)";

/// The throughput points of each tunnel and cipher over the rounds (TCP, not the packet
/// rate loads), best first.
fn vpn_candidates<'a>(vpn: &[&'a VpnRecord]) -> Vec<Candidate<'a, VpnRecord>> {
    let mut out: Vec<Candidate<VpnRecord>> = Vec::new();
    for r in vpn.iter().filter(|r| r.packet_size.is_none()) {
        let (path, name) = (vpn_path(r), r.cipher.clone());
        match out.iter_mut().find(|c| c.path == path && c.name == name) {
            Some(c) => {
                c.values.push(r.throughput_bps);
                c.records.push(r);
            }
            None => out.push(Candidate {
                path,
                name,
                values: vec![r.throughput_bps],
                records: vec![r],
            }),
        }
    }
    out.retain(|c| c.name != "none");
    out.sort_by(|a, b| b.median().total_cmp(&a.median()));
    out
}

fn tunnels(vpn: &[&VpnRecord], a: &mut Advice) {
    let all = vpn_candidates(vpn);
    // Each tunnel's best cipher, best tunnel first.
    let mut best: Vec<&Candidate<VpnRecord>> = Vec::new();
    for c in &all {
        if !best.iter().any(|b| b.path == c.path) {
            best.push(c);
        }
    }
    let Some(top) = best.first() else { return };
    let show = |c: &Candidate<VpnRecord>| format!("{} {}", c.path, c.name);
    a.verdicts.push(match best.get(1) {
        Some(second) => compared(
            "Which tunnel is fastest here?",
            (&show(top), top),
            (&show(second), second),
            mbit,
        ),
        None => alone("Which tunnel is fastest here?", &show(top), top, mbit),
    });
    for b in &best {
        let ciphers: Vec<&Candidate<VpnRecord>> = all.iter().filter(|c| c.path == b.path).collect();
        if let [first, second, ..] = ciphers[..] {
            a.verdicts.push(compared(
                &format!("Which cipher for {}?", b.path),
                (&first.name, first),
                (&second.name, second),
                mbit,
            ));
        }
    }
    // A kernel data path against the same tunnel in user space, at the same cipher.
    for (user, kernel, what) in [
        ("openvpn", "openvpn-dco", "Does OpenVPN DCO help here?"),
        (
            "wireguard-go",
            "wireguard-kernel",
            "Does kernel WireGuard help here?",
        ),
    ] {
        let pair = all.iter().filter(|k| k.path == kernel).find_map(|k| {
            all.iter()
                .find(|u| u.path == user && u.name == k.name)
                .map(|u| (k, u))
        });
        if let Some((k, u)) = pair {
            a.verdicts
                .push(compared(what, (kernel, k), (user, u), mbit));
            a.verdicts.extend(costs::cpu_per_gb(
                &format!("Does {kernel} save CPU per GB here?"),
                (kernel, k),
                (user, u),
            ));
        }
    }
    costs::round_trips(&best, &mut a.verdicts, &mut a.unavailable);
    a.verdicts.push(limit_verdict(
        "What limits the fastest tunnel?",
        &show(top),
        top,
        |r| r.limit.as_ref(),
    ));
    a.headline
        .push(figure("tunnel throughput", top, |r| r.limit.as_ref()));
    // The packet rate at the smallest datagrams of the fastest tunnel's point.
    let pps: Vec<&VpnRecord> = vpn
        .iter()
        .copied()
        .filter(|r| vpn_path(r) == top.path && r.cipher == top.name && r.pps.is_some())
        .collect();
    if let Some(size) = pps.iter().filter_map(|r| r.packet_size).min() {
        let at: Vec<&VpnRecord> = pps
            .into_iter()
            .filter(|r| r.packet_size == Some(size))
            .collect();
        let values: Vec<f64> = at.iter().filter_map(|r| r.pps).collect();
        let (value, ci) = median_interval(&values);
        a.headline.push(Figure {
            what: format!("packets per second at {size} B"),
            path: show(top),
            value,
            unit: "pps".into(),
            ci,
            limit: at
                .first()
                .and_then(|r| r.limit.as_ref())
                .map(|l| l.kind.clone()),
        });
    }
}

fn tls_verdicts(tls: &[&TlsRecord], a: &mut Advice) {
    let mut all: Vec<Candidate<TlsRecord>> = Vec::new();
    for r in tls {
        let (path, name) = (tls_path(r).to_string(), r.suite.clone());
        let values = if r.samples_bps.len() > 1 {
            r.samples_bps.clone()
        } else {
            vec![r.throughput_bps]
        };
        match all.iter_mut().find(|c| c.path == path && c.name == name) {
            Some(c) => {
                c.values.extend(values);
                c.records.push(r);
            }
            None => all.push(Candidate {
                path,
                name,
                values,
                records: vec![r],
            }),
        }
    }
    all.retain(|c| c.name != "http" && c.name != "null");
    all.sort_by(|a, b| b.median().total_cmp(&a.median()));
    let user: Vec<&Candidate<TlsRecord>> = all.iter().filter(|c| c.path == "tls").collect();
    if let [first, second, ..] = user[..] {
        a.verdicts.push(compared(
            "Which TLS suite is fastest here?",
            (&first.name, first),
            (&second.name, second),
            mbit,
        ));
    }
    for k in all.iter().filter(|c| c.path == "ktls") {
        let base = k.name.trim_end_matches("+ktls");
        if let Some(u) = all.iter().find(|u| u.path == "tls" && u.name == base) {
            a.verdicts.push(compared(
                &format!("Does kernel TLS help {base} here?"),
                (&k.name, k),
                (&u.name, u),
                mbit,
            ));
            a.verdicts.extend(costs::cpu_per_gb(
                &format!("Does kernel TLS save CPU per GB for {base} here?"),
                (&k.name, k),
                (&u.name, u),
            ));
        }
    }
    if let Some(top) = all.first() {
        a.verdicts.push(limit_verdict(
            "What limits the best TLS point?",
            &top.name,
            top,
            |r| r.limit.as_ref(),
        ));
        a.headline
            .push(figure("TLS throughput", top, |r| r.limit.as_ref()));
    }
}

/// AES-GCM against ChaCha20-Poly1305 on this CPU at the tunnels' packet size: each one's
/// best library, its trials compared.
fn speed_verdicts(speed: &[&SpeedRecord], a: &mut Advice) {
    let at = |alg: &str| {
        speed
            .iter()
            .filter(|r| r.alg.to_string().starts_with(alg) && r.size == 1400 && r.threads == 1)
            .max_by(|x, y| x.throughput_bps.total_cmp(&y.throughput_bps))
            .map(|r| speed_candidate(r, format!("{} {}", r.label, r.alg)))
    };
    let (Some(gcm), Some(chacha)) = (at("aes-"), at("chacha20-poly1305")) else {
        return;
    };
    let (first, second) = if gcm.median() >= chacha.median() {
        (gcm, chacha)
    } else {
        (chacha, gcm)
    };
    a.verdicts.push(compared(
        "AES-GCM or ChaCha20-Poly1305 on this CPU (1400 B, one core)?",
        (&first.name, &first),
        (&second.name, &second),
        mbit,
    ));
    a.headline
        .push(figure("cipher speed at 1400 B", &first, |_| None));
}

/// The question of `ssh_verdicts`, per server.
pub const SSH_CIPHER: &str = "Which SSH cipher here?";

/// Per SSH server: its two fastest ciphers (with their MACs) compared over the rounds,
/// and what held the fastest back. Upload points only, as advise measures them.
fn ssh_verdicts(ssh: &[&SshRecord], a: &mut Advice) {
    for server in ["openssh", "dropbear"] {
        let mut mine: Vec<Candidate<SshRecord>> = ssh
            .iter()
            .filter(|r| r.server.name == server && r.direction == "up")
            .map(|r| Candidate {
                path: ssh_path(r),
                name: match &r.mac {
                    Some(m) => format!("{}+{m}", r.cipher),
                    None => r.cipher.clone(),
                },
                values: r.samples_bps.clone(),
                records: vec![*r],
            })
            .collect();
        mine.sort_by(|x, y| y.median().total_cmp(&x.median()));
        let question = format!("{SSH_CIPHER} ({server})");
        let Some(best) = mine.first() else { continue };
        a.verdicts.push(match mine.get(1) {
            Some(second) => compared(&question, (&best.name, best), (&second.name, second), mbit),
            None => alone(&question, &best.name, best, mbit),
        });
        a.verdicts.push(limit_verdict(
            &format!("What limits the fastest SSH cipher? ({server})"),
            &best.name,
            best,
            |r: &SshRecord| Some(&r.limit),
        ));
    }
}

/// A speed point as a candidate: its samples (or its one figure).
fn speed_candidate(r: &SpeedRecord, name: String) -> Candidate<'_, SpeedRecord> {
    Candidate {
        path: "speed".to_string(),
        name,
        values: if r.samples_bps.is_empty() {
            vec![r.throughput_bps]
        } else {
            r.samples_bps.clone()
        },
        records: vec![r],
    }
}

/// The system libcrypto (the one nginx, HAProxy and OpenVPN load) against the fastest
/// other library measured in process, per AEAD at a packet's and a TLS record's size,
/// one core: what moving the stack onto another library would buy its crypto.
fn library_verdicts(speed: &[&SpeedRecord], a: &mut Advice) {
    let in_process =
        |r: &&&SpeedRecord| r.threads == 1 && r.variant.is_none() && r.implementation != "af_alg";
    for (alg, shown) in [
        ("aes-128-gcm", "AES-128-GCM"),
        ("chacha20-poly1305", "ChaCha20-Poly1305"),
    ] {
        for (size, at) in [(1400, "1400 B"), (16384, "16 KiB")] {
            let here: Vec<&&SpeedRecord> = speed
                .iter()
                .filter(in_process)
                .filter(|r| r.alg.to_string() == alg && r.size == size)
                .collect();
            // The system's: the OpenSSL loaded from the system's library dirs, not a build
            // scripts/build-openssl made (labelled "openssl" alone when no build ran).
            let Some(system) = here.iter().find(|r| is_system_openssl(r)) else {
                continue;
            };
            let other = here
                .iter()
                .filter(|r| !is_system_openssl(r))
                .max_by(|x, y| x.throughput_bps.total_cmp(&y.throughput_bps));
            let Some(other) = other else { continue };
            let system_name = format!(
                "the system's OpenSSL {}",
                crate::units::short_version(&system.impl_version)
            );
            a.verdicts.push(compared(
                &format!("{ANOTHER_LIBRARY} ({shown}, {at}, one core)"),
                (&system_name, &speed_candidate(system, String::new())),
                (&other.label, &speed_candidate(other, String::new())),
                mbit,
            ));
        }
    }
}

fn is_system_openssl(r: &SpeedRecord) -> bool {
    r.implementation == "openssl"
        && match r.library.as_deref() {
            Some(p) => crate::sys::system_library(std::path::Path::new(p)),
            None => r.label == "openssl",
        }
}

#[cfg(test)]
mod tests;
