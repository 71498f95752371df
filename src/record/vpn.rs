//! The vpn record: one measured point of a tunnel. See docs/records.md, "vpn record".

use crate::record::any::KeyValue;
use crate::record::window::{ProcessCpu, ThreadCpu};
use serde::{Deserialize, Serialize};

/// One measured point: a tunnel (and cipher), a protocol, a direction and a number of
/// streams. Field names are a public contract (docs/records.md): add, never rename.
/// A vpn point: the shared envelope (impl = the tunnel, impl_version "veth", "kernel",
/// "wireguard-go 0.0.20250522" or "OpenVPN 2.6.14", label = tunnel and cipher) and these.
pub type VpnRecord = crate::record::envelope::Record<VpnData>;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct VpnData {
    /// "none" (bare veth), "wireguard" or "openvpn".
    pub tunnel: String,
    /// The data cipher: OpenVPN's name (AES-128-GCM, ..., or "none"); WireGuard's is
    /// always CHACHA20-POLY1305; "none" for the bare veth.
    pub cipher: String,
    /// HMAC beside a non-AEAD cipher ("HMAC-SHA1"), "none" for OpenVPN without crypto,
    /// null for AEADs and the bare veth.
    pub auth: Option<String>,
    /// What the tunnel said it negotiated (OpenVPN's "Data Channel" log line).
    pub negotiated: Option<String>,
    /// "tcp" or "udp" (iperf3 -u at unlimited rate).
    pub protocol: String,
    /// "up": the client namespace sends; "down": the server namespace sends (iperf3 -R).
    pub direction: String,
    /// Parallel iperf3 streams (-P).
    pub streams: u32,
    /// Which pass over all tunnels this point belongs to (1-based; --rounds).
    pub round: u32,
    /// Requested seconds of load (iperf3 -t).
    pub duration_s: u32,
    /// The receiver's transfer time, as iperf3 reports it.
    pub transfer_s: f64,
    /// Payload bytes received.
    pub bytes: u64,
    /// Payload bytes sent.
    pub sent_bytes: u64,
    /// TCP retransmits of the sender (null for UDP).
    pub retransmits: Option<u64>,
    /// UDP datagrams lost, in percent (null for TCP).
    pub lost_pct: Option<f64>,
    /// MTU of the tunnel interface (the veth's for the bare veth).
    pub mtu: u32,
    /// MTU of the veth pair that carries the tunnel's packets.
    pub outer_mtu: u32,
    /// TCP maximum segment size iperf3 saw.
    pub tcp_mss: Option<u32>,
    /// The interface whose counters follow (the sender's and the receiver's tunnel device).
    pub tunnel_if: [String; 2],
    /// Bytes the sender's tunnel interface transmitted during the point (IP packets).
    pub tunnel_tx_bytes: u64,
    /// Bytes the receiver's tunnel interface received during the point.
    pub tunnel_rx_bytes: u64,
    /// Bytes the sender's veth transmitted (the tunnel's packets, encapsulated).
    pub outer_tx_bytes: u64,
    /// Packets dropped during the point by the tunnel interfaces at both ends (full
    /// queues: the tunnel process did not keep up), by the veths, and by full UDP receive
    /// buffers in either namespace (RcvbufErrors): where the retransmits come from.
    pub tunnel_dropped: u64,
    pub outer_dropped: u64,
    pub udp_rcvbuf_errors: u64,
    /// CPU seconds (user + sys) of the tunnel's processes at both ends during the point;
    /// null where the work cannot be attributed (the bare veth).
    pub tunnel_cpu_s: Option<f64>,
    /// tunnel_cpu_s / transfer_s x 100: cores in use x 100, summed over all threads.
    pub tunnel_cpu_pct: Option<f64>,
    /// The busiest single thread's CPU, in percent of one core.
    pub busiest_thread_cpu_pct: Option<f64>,
    /// Threads that used at least THREAD_USED_PCT of a core.
    pub threads_used: Option<u32>,
    /// Per tunnel process: end, pid, name, user and sys seconds, CPU %.
    pub processes: Vec<ProcessCpu>,
    /// Per thread, busiest first (threads under 1% of a core left out).
    pub thread_cpu: Vec<ThreadCpu>,
    /// Softirq seconds on all CPUs during the point (the kernel's packet work, shared).
    pub softirq_s: f64,
    /// Busy share of all CPUs during the point, in percent (100 = every core busy).
    pub system_busy_pct: f64,
    /// iperf3's own CPU use, percent of one core.
    pub iperf3_client_cpu_pct: Option<f64>,
    pub iperf3_server_cpu_pct: Option<f64>,
    /// `--openssl DIR`: the build both OpenVPN ends ran on, as their processes mapped
    /// it; absent on the system OpenSSL and for other tunnels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub openssl_build: Option<crate::impls::openssl::build::OpenSslBuild>,
    /// The busiest thread of the tunnel's server end (on the DUT with `vpn --dut`) and of
    /// its client end (on the controller), in percent of one core; null for the bare
    /// veth and where the work is a kernel's (kworkers are no end's in the lab).
    #[serde(default)]
    pub server_busiest_thread_cpu_pct: Option<f64>,
    #[serde(default)]
    pub client_busiest_thread_cpu_pct: Option<f64>,
    /// `vpn --dut`: the tunnel's client end and iperf3's client, on the controller. The
    /// fields above (tunnel CPU, threads, shares, system use) are then the DUT's alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<ControllerEnd>,
    /// `--packet-sizes`: the UDP payload of this point's datagrams (iperf3 -l); absent for
    /// the throughput loads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet_size: Option<u32>,
    /// Datagrams the receiver got per second (packet-size points).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pps: Option<f64>,
    /// Datagrams lost, in percent (packet-size points; lost_pct under the name that pps
    /// goes with).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_pct: Option<f64>,
    /// Round trips through the tunnel with nothing else on it, just before the point;
    /// null where not measured (`vpn --dut`, or irtt missing: see the notes).
    #[serde(default)]
    pub rtt_idle_ms: Option<Rtt>,
    /// Round trips through the tunnel while the point's load ran.
    #[serde(default)]
    pub rtt_loaded_ms: Option<Rtt>,
    /// What held the point back, and the figures that say so (analyse/limit.rs).
    #[serde(default)]
    pub limit: Option<crate::record::window::Limit>,
    /// Whether the CPU clock fell between the point's start and end; null where the
    /// machine shows no clock (cpufreq) to read.
    #[serde(default)]
    pub throttled: Option<bool>,
    /// IPsec: the kernel crypto driver the SAs bound (/proc/crypto's driver name whose
    /// reference count rose when they were made); absent for other tunnels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_driver: Option<String>,
    /// How kernel_driver is known: "refcount" (proven) or "priority" (the kernel's
    /// choice, nothing proved it); absent for other tunnels and in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_driver_proof: Option<crate::kernel::DriverProof>,
    /// IPsec: "sa", "pcrypt" or "percpu" (--ipsec-spread); absent for other tunnels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipsec_spread: Option<String>,
    /// IPsec: what the receiver's SA counted over the point (`ip -s xfrm state`), the
    /// proof that the load went through it; absent for other tunnels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipsec_sa: Option<SaCount>,
}

/// Bytes and packets an IPsec SA counted.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct SaCount {
    pub bytes: u64,
    pub packets: u64,
}

/// Round-trip times of one series of probes, in milliseconds.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Rtt {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    /// Probes sent, and of those never answered.
    pub probes: u32,
    #[serde(default)]
    pub lost: u32,
}

/// `vpn --dut`: the controller's end of a point.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ControllerEnd {
    /// The client end's implementation there ("OpenVPN 2.6.14", "wireguard-go ...").
    pub implementation: String,
    /// The controller's CPUs (its affinity), and their busy share during the point.
    pub cpus: Vec<usize>,
    pub system_busy_pct: f64,
    /// As tunnel_cpu_s and tunnel_cpu_pct, for the client end's processes.
    pub tunnel_cpu_s: Option<f64>,
    pub tunnel_cpu_pct: Option<f64>,
    pub processes: Vec<ProcessCpu>,
    /// Per thread, busiest first (under 1% of a core left out).
    pub thread_cpu: Vec<ThreadCpu>,
}

/// The label of a tunnel and cipher: "wireguard", "openvpn AES-256-CBC+HMAC-SHA1".
pub fn label(tunnel: &str, cipher: &str, auth: Option<&str>) -> String {
    match tunnel {
        "openvpn" => format!("openvpn {}", cipher_label(cipher, auth)),
        "none" => "veth".into(),
        t => t.into(),
    }
}

impl VpnData {
    /// Identity of a point apart from tunnel and cipher.
    pub fn load_key(&self) -> (&str, &str, u32, Option<u32>) {
        (
            &self.protocol,
            &self.direction,
            self.streams,
            self.packet_size,
        )
    }
}

/// A cipher and its HMAC as shown: "AES-256-CBC+HMAC-SHA1", or the AEAD alone.
pub fn cipher_label(cipher: &str, auth: Option<&str>) -> String {
    match auth {
        Some(a) if cipher != "none" && a != "none" => format!("{cipher}+{a}"),
        _ => cipher.to_string(),
    }
}

impl crate::record::any::RecordData for VpnData {
    fn selection_label(r: &VpnRecord) -> &str {
        &r.implementation
    }
    fn identity_keys<'a>(
        r: &'a VpnRecord,
        _label: Option<&str>,
    ) -> (&'a str, Vec<(&'static str, KeyValue)>) {
        let text = |s: &str| KeyValue::Text(s.to_string());
        (
            &r.implementation,
            vec![
                ("tunnel", text(&r.tunnel)),
                ("cipher", text(&r.cipher)),
                ("protocol", text(&r.protocol)),
                ("direction", text(&r.direction)),
                ("streams", KeyValue::Num(r.streams as u64)),
            ]
            .into_iter()
            .chain(
                r.packet_size
                    .map(|n| ("packet_size", KeyValue::Num(n as u64))),
            )
            .chain(
                r.kernel_driver
                    .as_deref()
                    .map(|d| ("kernel_driver", text(d))),
            )
            .chain(r.ipsec_spread.as_deref().map(|s| ("ipsec_spread", text(s))))
            .collect(),
        )
    }
    /// Kernel WireGuard and wireguard-go share tunnel and label: what ran it
    /// (impl_version) tells their points apart; one record per point and round.
    fn point_key(r: &VpnRecord) -> (String, u32) {
        (format!("{} [{}]", r.label, r.impl_version), r.round)
    }

    /// Values no vpn run writes: percentages outside 0-100, pps that is not the bytes
    /// over the packet size and time, round trips out of order or more lost than sent,
    /// a limit kind outside the documented set.
    fn check(r: &VpnRecord) -> anyhow::Result<()> {
        use anyhow::bail;
        for (name, v) in [
            ("lost_pct", r.lost_pct),
            ("loss_pct", r.loss_pct),
            ("system_busy_pct", Some(r.system_busy_pct)),
        ] {
            if let Some(v) = v.filter(|v| !super::envelope::PERCENT.contains(v)) {
                bail!("{name} {v} is not a percentage from 0 to 100");
            }
        }
        if let Some(pps) = r.pps {
            let Some(size) = r.packet_size.filter(|s| *s > 0) else {
                bail!("pps {pps} without a packet_size");
            };
            let want = r.bytes as f64 / f64::from(size) / r.transfer_s;
            if !(want.is_finite() && (pps - want).abs() <= 1e-6 * want) {
                bail!(
                    "pps {pps} is not bytes / packet_size / transfer_s ({} / {size} / {} = {want:.1})",
                    r.bytes,
                    r.transfer_s
                );
            }
        }
        for (name, rtt) in [
            ("rtt_idle_ms", &r.rtt_idle_ms),
            ("rtt_loaded_ms", &r.rtt_loaded_ms),
        ] {
            let Some(t) = rtt else { continue };
            if !(t.p50 >= 0.0 && t.p50 <= t.p90 && t.p90 <= t.p99 && t.p99.is_finite()) {
                bail!(
                    "{name}: p50 {}, p90 {}, p99 {} are not round trips in order (0 <= p50 <= p90 <= p99)",
                    t.p50,
                    t.p90,
                    t.p99
                );
            }
            if t.lost > t.probes {
                bail!("{name}: {} probes lost of {} sent", t.lost, t.probes);
            }
        }
        if let Some(l) = &r.limit {
            if !crate::record::window::LIMIT_KINDS.contains(&l.kind.as_str()) {
                bail!(
                    "limit kind '{}' is none of {}",
                    crate::units::shown(&l.kind),
                    crate::record::window::LIMIT_KINDS.join(", ")
                );
            }
        }
        Ok(())
    }
}

/// The settings of a vpn run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct VpnSettings {
    pub tunnels: Vec<String>,
    #[serde(default)]
    pub streams: Vec<u32>,
    #[serde(default)]
    pub directions: Vec<String>,
    #[serde(default)]
    pub duration_s: u32,
    #[serde(default)]
    pub rounds: u32,
    #[serde(default)]
    pub udp: bool,
    #[serde(default)]
    pub kernel_wireguard: bool,
    #[serde(default)]
    pub netns: Vec<String>,
    #[serde(default)]
    pub veth: Vec<String>,
    #[serde(default)]
    pub outer_addresses: Vec<String>,
}
