//! Pure functions over vpn records: each point over its rounds, and the crypto share of
//! a tunnel against OpenVPN without crypto.

use super::share::{against_null, amdahl_ceiling, pooled_crypto, unavailable, Share};
use crate::record::vpn::VpnRecord;
use crate::record::window::{disturbed, SATURATED_PCT as BOUND_PCT};
use serde::Serialize;

/// The crypto share of one OpenVPN cipher at one load, against OpenVPN with no crypto.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CipherShare {
    pub tunnel: String,
    pub cipher: String,
    pub auth: Option<String>,
    pub protocol: String,
    pub direction: String,
    pub streams: u32,
    /// Rounds measured for this cipher; the figures below are medians over them.
    pub rounds: u32,
    /// Tunnel CPU seconds per GB with this cipher.
    pub cpu_s_per_gb: f64,
    /// The busiest tunnel thread at this cipher's point (100 = it held the tunnel back).
    pub busiest_thread_cpu_pct: Option<f64>,
    /// The same with cipher and auth none.
    pub none_cpu_s_per_gb: f64,
    /// The part of the tunnel's CPU that crypto costs: sampled with perf where the tunnel
    /// was profiled (`sampled`), else the per-byte estimate.
    pub crypto_share: f64,
    /// Where `crypto_share` comes from: "sampled", or "per-byte estimate (no profile: why)".
    #[serde(default)]
    pub share_source: String,
    /// Amdahl from `crypto_share`: 1 / (1 - share), the most any speed-up of the crypto
    /// alone can give.
    pub max_speedup: f64,
    /// 1 - none / cipher: the crypto share per byte against cipher none. Beside a sampled
    /// share it is the cross-check (the none tunnel moves packets at another rate).
    #[serde(default)]
    pub per_byte_share: f64,
    /// Amdahl from the per-byte share.
    #[serde(default)]
    pub per_byte_max_speedup: f64,
    pub throughput_bps: f64,
    /// throughput x max_speedup: the ceiling if the crypto cost nothing.
    pub ceiling_bps: f64,
    /// What OpenVPN without crypto actually moved at the same load.
    pub none_throughput_bps: f64,
    pub notes: Vec<String>,
    /// The crypto share sampled with perf in the tunnel's processes (--profile), samples
    /// pooled over rounds: the direct measurement that crypto_share cross-checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampled: Option<Share>,
}

/// Identity of a point across rounds: tunnel, implementation and its version (which tells
/// kernel WireGuard, "kernel", from wireguard-go: they share the tunnel's name), cipher,
/// auth and load.
#[allow(clippy::type_complexity)]
pub fn point_key(
    r: &VpnRecord,
) -> (
    String,
    String,
    String,
    String,
    Option<String>,
    String,
    String,
    u32,
    Option<u32>,
) {
    (
        r.tunnel.clone(),
        r.implementation.clone(),
        r.impl_version.clone(),
        r.cipher.clone(),
        r.auth.clone(),
        r.protocol.clone(),
        r.direction.clone(),
        r.streams,
        r.packet_size,
    )
}

/// The records of each point (all its rounds), in the order first measured.
pub fn by_point(records: &[VpnRecord]) -> Vec<Vec<&VpnRecord>> {
    let mut groups: Vec<Vec<&VpnRecord>> = Vec::new();
    for r in records {
        match groups.iter_mut().find(|g| point_key(g[0]) == point_key(r)) {
            Some(g) => g.push(r),
            None => groups.push(vec![r]),
        }
    }
    groups
}

pub fn median_of(rs: &[&VpnRecord], f: impl Fn(&VpnRecord) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = rs.iter().filter_map(|r| f(r)).collect();
    (!v.is_empty()).then(|| super::stats::median(&v))
}

/// One point over its rounds: the round with the median throughput, with the medians of
/// throughput, CPU per GB, CPU percentages and the machine figures; and the throughput
/// spread ((max - min) / median, percent).
pub fn summary(rounds: &[&VpnRecord]) -> (VpnRecord, f64) {
    let tp: Vec<f64> = rounds.iter().map(|r| r.throughput_bps).collect();
    let med = super::stats::median(&tp);
    let mid = rounds
        .iter()
        .min_by(|a, b| {
            (a.throughput_bps - med)
                .abs()
                .total_cmp(&(b.throughput_bps - med).abs())
        })
        .copied()
        .unwrap_or(rounds[0]);
    let mut r = mid.clone();
    r.throughput_bps = med;
    r.cpu_s_per_gb = median_of(rounds, |x| x.cpu_s_per_gb);
    r.pps = median_of(rounds, |x| x.pps);
    r.busiest_thread_cpu_pct = median_of(rounds, |x| x.busiest_thread_cpu_pct);
    r.tunnel_cpu_pct = median_of(rounds, |x| x.tunnel_cpu_pct);
    r.system_busy_pct = median_of(rounds, |x| Some(x.system_busy_pct)).unwrap_or(0.0);
    r.others_cpu_pct = median_of(rounds, |x| x.others_cpu_pct);
    (r, super::stats::spread_pct(&tp))
}

/// Shares for every OpenVPN cipher point that has a no-crypto point at the same load,
/// from the medians over rounds.
pub fn shares(records: &[VpnRecord]) -> Vec<CipherShare> {
    let mut out = Vec::new();
    let groups = by_point(records);
    for mine in groups
        .iter()
        .filter(|g| g[0].tunnel == "openvpn" && g[0].cipher != "none")
    {
        let r = mine[0];
        let Some(base) = groups.iter().find(|b| {
            b[0].tunnel == "openvpn" && b[0].cipher == "none" && b[0].load_key() == r.load_key()
        }) else {
            continue;
        };
        let (Some(c), Some(n)) = (
            median_of(mine, |x| x.cpu_s_per_gb),
            median_of(base, |x| x.cpu_s_per_gb),
        ) else {
            continue;
        };
        if c <= 0.0 {
            continue;
        }
        let per_byte = against_null(c, n);
        let mut notes = Vec::new();
        if per_byte < 0.0 {
            notes.push("no-crypto tunnel cost more CPU per byte: the difference is noise".into());
        }
        let amdahl = |share: f64| amdahl_ceiling(share.clamp(0.0, 0.999));
        let others = median_of(mine, |x| x.others_cpu_pct).unwrap_or(0.0);
        let others_none = median_of(base, |x| x.others_cpu_pct).unwrap_or(0.0);
        if disturbed(others) || disturbed(others_none) {
            notes.push(format!(
                "disturbed: other processes used {others:.0}% and {others_none:.0}% of all cores during the two points"
            ));
        }
        let busiest = median_of(mine, |x| x.busiest_thread_cpu_pct);
        if busiest.is_some_and(|p| p < BOUND_PCT) {
            notes.push(format!(
                "busiest tunnel thread at {:.0}% of a core: the tunnel was not held back by one thread, so the ceiling overstates",
                busiest.unwrap_or(0.0)
            ));
        }
        let throughput = median_of(mine, |x| Some(x.throughput_bps)).unwrap_or(0.0);
        let profiles = || mine.iter().filter_map(|x| x.profile.as_deref());
        let sampled = pooled_crypto(profiles());
        if let Some(sm) = sampled
            .as_ref()
            .filter(|sm| per_byte < sm.ci[0] || per_byte > sm.ci[1])
        {
            notes.push(format!(
                "per-byte cross-check {:.1}% against cipher none is outside the sampled {:.1}% [{:.1}-{:.1}%]: the none tunnel moves packets at a different rate and batching, so its CPU per byte is not this tunnel's minus its crypto",
                per_byte * 100.0, sm.share * 100.0, sm.ci[0] * 100.0, sm.ci[1] * 100.0
            ));
        }
        let (share, share_source) = match &sampled {
            Some(sm) => (sm.share, "sampled".to_string()),
            None => (
                per_byte,
                format!(
                    "per-byte estimate (no profile: {})",
                    unavailable(profiles()).unwrap_or_else(|| "run without --profile".into())
                ),
            ),
        };
        let max_speedup = amdahl(share);
        out.push(CipherShare {
            sampled,
            share_source,
            per_byte_share: per_byte,
            per_byte_max_speedup: amdahl(per_byte),
            tunnel: r.tunnel.clone(),
            cipher: r.cipher.clone(),
            auth: r.auth.clone(),
            protocol: r.protocol.clone(),
            direction: r.direction.clone(),
            streams: r.streams,
            rounds: mine.len() as u32,
            cpu_s_per_gb: c,
            busiest_thread_cpu_pct: busiest,
            none_cpu_s_per_gb: n,
            crypto_share: share,
            max_speedup,
            throughput_bps: throughput,
            ceiling_bps: throughput * max_speedup,
            none_throughput_bps: median_of(base, |x| Some(x.throughput_bps)).unwrap_or(0.0),
            notes,
        });
    }
    out
}

/// What a reader must know of the records and the shares, once each: the records' notes
/// (summarised where they repeat per point) and the shares' caveats.
pub fn notes(records: &[VpnRecord], shares: &[CipherShare]) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    for r in records {
        for n in &r.notes {
            let n = if n.starts_with("every core was busy") {
                "every core was busy during some points (see the machine column): tunnel, iperf3 and the kernel shared them".to_string()
            } else if n.starts_with("other processes used") {
                "other processes used a noticeable share of the CPUs during some points (others_cpu_pct in the records): those numbers are disturbed".to_string()
            } else {
                n.clone()
            };
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
    }
    if shares.iter().any(|s| s.crypto_share < 0.0) {
        notes.push("a negative crypto share means the no-crypto tunnel cost more CPU per byte at that load: the difference is noise (run longer with --time)".into());
    }
    if shares
        .iter()
        .any(|s| s.notes.iter().any(|n| n.starts_with("disturbed")))
    {
        notes.push("some crypto shares compare points that other processes disturbed: CPU per byte rises under contention, so those shares are unreliable".into());
    }
    if shares
        .iter()
        .any(|s| s.busiest_thread_cpu_pct.is_some_and(|p| p < BOUND_PCT))
    {
        notes.push(format!("a ceiling is an upper bound only where one tunnel thread held the tunnel back (busiest thread near 100%); below {:.0}% it overstates", BOUND_PCT));
    }
    notes
}

#[cfg(test)]
pub mod tests {
    use super::*;

    pub fn rec(tunnel: &str, cipher: &str, streams: u32, bps: f64, cpu_per_gb: f64) -> VpnRecord {
        crate::record::read::from_v1(serde_json::json!({
            "kind": "record".to_string(),
            "run_id": "r".to_string(),
            "workload": "vpn".to_string(),
            "tunnel": tunnel.to_string(),
            "implementation": "OpenVPN 2.6.14".to_string(),
            "cipher": cipher.to_string(),
            "auth": null,
            "negotiated": null,
            "protocol": "tcp".to_string(),
            "direction": "up".to_string(),
            "streams": streams,
            "round": 1,
            "duration_s": 2,
            "transfer_s": 2.0,
            "throughput_bps": bps,
            "bytes": (bps * 2.0) as u64,
            "sent_bytes": (bps * 2.0) as u64,
            "retransmits": 0,
            "lost_pct": null,
            "mtu": 1500,
            "outer_mtu": 1500,
            "tcp_mss": 1400,
            "tunnel_if": ["a", "b"],
            "tunnel_tx_bytes": 0,
            "tunnel_rx_bytes": 0,
            "outer_tx_bytes": 0,
            "tunnel_dropped": 0,
            "outer_dropped": 0,
            "udp_rcvbuf_errors": 0,
            "tunnel_cpu_s": 1.0,
            "cpu_user_s": 0.5,
            "cpu_sys_s": 0.5,
            "cpu_s_per_gb": cpu_per_gb,
            "tunnel_cpu_pct": 100.0,
            "busiest_thread_cpu_pct": 99.0,
            "threads_used": 1,
            "processes": [],
            "thread_cpu": [],
            "softirq_s": 0.0,
            "system_busy_pct": 100.0,
            "others_cpu_pct": 0.0,
            "iperf3_client_cpu_pct": null,
            "iperf3_server_cpu_pct": null,
            "notes": [],
        }))
    }

    #[test]
    fn share_and_ceiling_with_known_answers() {
        // Crypto costs a fifth of the CPU per byte: at most 1.25x faster if it were free.
        let rs = vec![
            rec("openvpn", "AES-256-CBC", 1, 40e6, 10.0),
            rec("openvpn", "none", 1, 48e6, 8.0),
            rec("openvpn", "AES-128-GCM", 4, 50e6, 9.0),
            rec("wireguard", "CHACHA20-POLY1305", 1, 90e6, 4.0),
        ];
        let s = shares(&rs);
        assert_eq!(
            s.len(),
            1,
            "GCM at 4 streams has no no-crypto point; WireGuard none"
        );
        let s = &s[0];
        assert_eq!(s.cipher, "AES-256-CBC");
        assert!((s.crypto_share - 0.2).abs() < 1e-12);
        assert!((s.max_speedup - 1.25).abs() < 1e-12);
        assert!((s.ceiling_bps - 50e6).abs() < 1e-6);
        assert_eq!(s.none_throughput_bps, 48e6);
        assert!(s.notes.is_empty());
        assert_eq!(
            s.share_source,
            "per-byte estimate (no profile: run without --profile)"
        );
        assert_eq!(s.per_byte_share, s.crypto_share);
    }

    /// A profile of `n` samples, `crypto` of them in crypto.
    pub fn profile(crypto: u64, n: u64) -> Box<crate::record::profile::ProfileField> {
        use crate::record::profile::{Profile, ProfileField};
        let mut p: Profile = serde_json::from_value(serde_json::json!({
            "samples": n, "event": "cpu-clock", "categories": {}, "unknown_share": 0.0,
            "crypto": {"share": 0.0, "ci": [0.0, 1.0], "samples": 0}, "amdahl_ceiling": 1.0,
        }))
        .unwrap();
        p.crypto = Share::of(crypto, n);
        Box::new(ProfileField::Measured(p))
    }

    /// Where the tunnel was profiled, the share and its ceiling are the sampled ones and
    /// the per-byte figure is the cross-check beside them (here outside the interval:
    /// said). Without perf, perf's reason is given.
    #[test]
    fn the_sampled_share_is_primary_where_a_profile_exists() {
        let mut gcm = rec("openvpn", "AES-128-GCM", 1, 40e6, 10.0);
        gcm.profile = Some(profile(35, 1000));
        let rs = vec![gcm, rec("openvpn", "none", 1, 48e6, 8.08)];
        let s = &shares(&rs)[0];
        assert_eq!(s.share_source, "sampled");
        assert!((s.crypto_share - 0.035).abs() < 1e-12, "{s:?}");
        assert!((s.max_speedup - 1.0 / 0.965).abs() < 1e-12, "{s:?}");
        assert!((s.per_byte_share - 0.192).abs() < 1e-9, "{s:?}");
        assert!((s.per_byte_max_speedup - 1.0 / 0.808).abs() < 1e-9, "{s:?}");
        assert!((s.ceiling_bps - 40e6 / 0.965).abs() < 1e-3, "{s:?}");
        assert!(
            s.notes[0].starts_with(
                "per-byte cross-check 19.2% against cipher none is outside the sampled 3.5%"
            ),
            "{:?}",
            s.notes
        );
        let mut gcm = rec("openvpn", "AES-128-GCM", 1, 40e6, 10.0);
        gcm.profile = Some(Box::new(
            crate::record::profile::ProfileField::Unavailable {
                unavailable: "perf is not installed".into(),
            },
        ));
        let s = &shares(&[gcm, rec("openvpn", "none", 1, 48e6, 8.0)])[0];
        assert_eq!(
            s.share_source,
            "per-byte estimate (no profile: perf is not installed)"
        );
    }

    #[test]
    fn a_disturbed_point_is_said() {
        let mut busy = rec("openvpn", "none", 1, 48e6, 8.0);
        busy.others_cpu_pct = Some(40.0);
        let rs = vec![rec("openvpn", "AES-256-GCM", 1, 40e6, 10.0), busy];
        let s = &shares(&rs)[0];
        assert!(s.notes[0].starts_with("disturbed"), "{:?}", s.notes);
    }

    #[test]
    fn rounds_are_combined_by_their_medians() {
        let mut rs = Vec::new();
        for (round, cbc, none) in [(1, 10.0, 8.0), (2, 30.0, 8.0), (3, 12.0, 9.0)] {
            let mut a = rec("openvpn", "AES-256-CBC", 1, 40e6, cbc);
            a.round = round;
            let mut b = rec("openvpn", "none", 1, 48e6, none);
            b.round = round;
            rs.extend([a, b]);
        }
        assert_eq!(by_point(&rs).len(), 2);
        let s = &shares(&rs)[0];
        assert_eq!(s.rounds, 3);
        assert_eq!((s.cpu_s_per_gb, s.none_cpu_s_per_gb), (12.0, 8.0));
        assert!((s.crypto_share - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn negative_share_is_noise_and_caps_at_no_speedup() {
        let rs = vec![
            rec("openvpn", "AES-128-GCM", 1, 40e6, 8.0),
            rec("openvpn", "none", 1, 40e6, 8.4),
        ];
        let s = &shares(&rs)[0];
        assert!(s.crypto_share < 0.0);
        assert_eq!(s.max_speedup, 1.0);
        assert_eq!(s.notes.len(), 1);
    }
}
