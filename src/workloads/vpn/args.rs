//! `cryptobench vpn`'s flags and what they parse into: `VpnArgs`, the tunnels asked for
//! (`Wanted`), the directions, the limits of each value, their parsers, and the check of
//! the ciphers asked against the ones OpenVPN has.

use super::ipsec;
use crate::shell::args::{CommonArgs, List};
use anyhow::anyhow;
use std::path::PathBuf;

#[derive(clap::Args, Clone)]
pub struct VpnArgs {
    /// Tunnels, comma-separated: none (the bare veth), wireguard (the kernel's where it
    /// can, else wireguard-go), wireguard-kernel, wireguard-go, openvpn (data channel in
    /// user space), openvpn-dco (data channel in the kernel's ovpn-dco module, AEAD
    /// ciphers only), ipsec (the kernel's ESP in tunnel mode, static SAs; not none).
    #[arg(long, value_name = "LIST", default_value = "none,wireguard,openvpn",
          value_parser = |s: &str| parse_tunnels(s).map(List))]
    pub tunnels: List<Wanted>,
    /// OpenVPN data ciphers, comma-separated, plus none (no cipher, no auth: the ceiling).
    /// Non-AEAD ciphers use HMAC-SHA1.
    #[arg(
        long,
        value_name = "LIST",
        default_value = "AES-128-GCM,AES-256-GCM,CHACHA20-POLY1305,AES-256-CBC,none",
        value_parser = |s: &str| parse_ciphers(s).map(List)
    )]
    pub ciphers: List<String>,
    /// Parallel iperf3 streams per point, comma-separated, 1 to 128.
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "LIST",
        default_value = "1,4",
        value_parser = |s: &str| parse_streams(s).map(List)
    )]
    pub streams: List<u32>,
    // --direction: up (the client namespace sends), down (iperf3 -R), or both [up,down].
    #[arg(long = "direction", alias = "directions", value_name = "LIST", default_value = "up,down", value_parser = parse_directions, help = "Directions, comma-separated: up (the client namespace sends), down (iperf3 -R)")]
    pub direction: Directions,
    /// Passes over all tunnels and loads, one after the other, so that a shared machine's
    /// drift hits every tunnel alike; the table and the shares use the medians.
    #[arg(allow_negative_numbers = true, long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=MAX_ROUNDS as i64))]
    pub rounds: u32,
    /// Also measure UDP (iperf3 -u at unlimited rate): throughput received and loss.
    #[arg(long)]
    pub udp: bool,
    /// Packets per second: a UDP load of datagrams of each payload size (bytes,
    /// comma-separated, 16 to 8972, e.g. 64,512,1400), per direction and stream count;
    /// each point records pps and loss.
    #[arg(long, value_name = "LIST", value_parser = |s: &str| parse_packet_sizes(s).map(List))]
    pub packet_sizes: Option<List<u32>>,
    /// IPsec: the kernel crypto drivers to measure, comma-separated: /proc/crypto driver
    /// names (e.g. rfc4106-gcm-aesni), template instances, or generic (the C code); each is
    /// given the highest priority for its points. The record's kernel_driver is the one bound.
    #[arg(long, value_name = "NAME[,NAME...]", value_parser = |s: &str| parse_drivers(s).map(List))]
    pub ipsec_driver: Option<List<String>>,
    /// IPsec: how the work spreads over cores: sa (one SA per direction), pcrypt (the
    /// kernel's parallel crypto template around the AEAD), percpu (per-CPU SAs, 6.13+).
    #[arg(long, value_name = "sa|pcrypt|percpu", default_value = "sa", value_parser = ipsec::parse_spread)]
    pub ipsec_spread: ipsec::Spread,
    /// Find and remove what a crashed run left behind (namespaces, links, daemons, temp
    /// files named with our prefix), say what was removed, and exit.
    #[arg(long)]
    pub cleanup: bool,
    // --time: seconds of load per point (default 5; whole seconds, at least 1).
    #[command(flatten)]
    pub common: CommonArgs,
    /// Sample the tunnel's processes with perf (the whole system for kernel WireGuard).
    #[arg(long)]
    pub profile: bool,
    /// With --profile: keep folded stacks and a flame graph SVG per point in DIR.
    #[arg(long, value_name = "DIR")]
    pub profile_dir: Option<PathBuf>,
    /// Run OpenVPN on the OpenSSL build installed in DIR (its lib*/libssl.so.N and
    /// libcrypto.so.N, through LD_LIBRARY_PATH; e.g. what scripts/build-openssl prints).
    /// Both ends are checked, from /proc/PID/maps, to have mapped that pair.
    #[arg(long, value_name = "DIR")]
    pub openssl: Option<PathBuf>,
    /// With --dut: the tunnel's server end and iperf3's server run on the DUT (--openssl
    /// names a build there), the client ends and iperf3's client here; the data goes over
    /// the network between them.
    #[command(flatten)]
    pub dut: crate::dut::DutArgs,
    #[command(flatten)]
    pub dut_address: crate::dut::DataAddress,
    /// The DUT's agent: the client ends run on the controller. Given by the controller,
    /// never by hand.
    #[arg(long, hide = true)]
    pub remote_client: bool,
}

pub const MAX_STREAMS: u32 = 128;
pub(super) const MAX_ROUNDS: u32 = 20;
const MAX_DURATION: f64 = 3600.0;
/// Seconds of load per point when --time is not given.
pub(super) const DEFAULT_DURATION: f64 = 5.0;

/// Which tunnels were asked for, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wanted {
    Bare,
    WireGuardAuto,
    WireGuardKernel,
    WireGuardGo,
    OpenVpn,
    OpenVpnDco,
    Ipsec,
}

impl Wanted {
    pub(super) fn wireguard(self) -> bool {
        matches!(
            self,
            Wanted::WireGuardAuto | Wanted::WireGuardKernel | Wanted::WireGuardGo
        )
    }

    pub(super) fn openvpn(self) -> bool {
        matches!(self, Wanted::OpenVpn | Wanted::OpenVpnDco)
    }
}

fn parse_tunnels(s: &str) -> anyhow::Result<Vec<Wanted>> {
    crate::units::choices(
        s,
        "--tunnels",
        "none,wireguard,openvpn",
        &[
            ("none", Wanted::Bare),
            ("veth", Wanted::Bare),
            ("wireguard", Wanted::WireGuardAuto),
            ("wg", Wanted::WireGuardAuto),
            ("wireguard-kernel", Wanted::WireGuardKernel),
            ("wireguard-go", Wanted::WireGuardGo),
            ("openvpn", Wanted::OpenVpn),
            ("openvpn-dco", Wanted::OpenVpnDco),
            ("ipsec", Wanted::Ipsec),
        ],
    )
}

/// The least UDP payload iperf3 sends (its sequence number and time stamp), and the most
/// that fits a 9000-byte jumbo frame's IPv4 packet.
const PACKET_SIZES: std::ops::RangeInclusive<u64> = 16..=8972;

fn parse_packet_sizes(s: &str) -> anyhow::Result<Vec<u32>> {
    let n = crate::units::counts(s, "--packet-sizes", PACKET_SIZES, "64,512,1400")?;
    Ok(n.into_iter().map(|n| n as u32).collect())
}

fn parse_streams(s: &str) -> anyhow::Result<Vec<u32>> {
    let n = crate::units::counts(s, "--streams", 1..=MAX_STREAMS as u64, "1,4")?;
    Ok(n.into_iter().map(|n| n as u32).collect())
}

/// `--direction`: true for down. Order as given, without repeats.
/// `--direction`, parsed: true for down.
#[derive(Clone, Debug)]
pub struct Directions(pub Vec<bool>);

fn parse_directions(s: &str) -> anyhow::Result<Directions> {
    let down = [("up", false), ("down", true)];
    crate::units::choices(s, "--direction", "up,down", &down).map(Directions)
}

pub(super) fn parse_duration(d: f64) -> anyhow::Result<u32> {
    crate::units::whole_seconds(d, "--time", MAX_DURATION, "iperf3")
}

/// The data ciphers named first when one asked for is unknown.
const USUAL_CIPHERS: &[&str] = &[
    "AES-128-GCM",
    "AES-256-GCM",
    "CHACHA20-POLY1305",
    "AES-128-CBC",
    "AES-256-CBC",
    "none",
];

/// `--ciphers`: cipher names as OpenVPN and the kernel spell them (upper case; none in
/// lower case), each once.
fn parse_ciphers(s: &str) -> anyhow::Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for c in crate::units::items(s, "--ciphers", "AES-128-GCM,none")? {
        let name = if c.eq_ignore_ascii_case("none") {
            "none".to_string()
        } else {
            c.to_ascii_uppercase()
        };
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

/// `--ipsec-driver`: driver names, each once (whether the kernel has them is the
/// workload's check: a DUT's kernel checks its own).
fn parse_drivers(s: &str) -> anyhow::Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for d in crate::units::items(s, "--ipsec-driver", "rfc4106-gcm-aesni")? {
        if !out.iter().any(|o| o == d) {
            out.push(d.to_string());
        }
    }
    Ok(out)
}

/// The OpenVPN ciphers asked for that this OpenVPN supports; the first it does not is bad
/// input naming the usual ones it has.
pub(super) fn openvpn_ciphers(asked: &[String], supported: &[String], version: &str) -> anyhow::Result<Vec<String>> {
    if let Some(c) = asked.iter().find(|c| !supported.contains(c)) {
        // The whole list is long (errors are one bounded line): the usual ones first.
        let usual: Vec<&str> = USUAL_CIPHERS
            .iter()
            .copied()
            .filter(|u| supported.iter().any(|s| s == u))
            .collect();
        let more = supported.len().saturating_sub(usual.len());
        return Err(anyhow!(
            "invalid --ciphers '{}': this OpenVPN ({version}) supports {}{}",
            crate::units::shown(c),
            usual.join(", "),
            if more > 0 {
                format!(" and {more} more (openvpn --show-ciphers)")
            } else {
                String::new()
            }
        ));
    }
    Ok(asked.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_checks() {
        assert_eq!(parse_streams("1,4").unwrap(), [1, 4]);
        assert!(parse_streams("0").is_err());
        assert!(parse_streams("129").is_err());
        assert!(parse_streams("128").is_ok());
        assert!(parse_duration(0.5).is_err());
        assert!(parse_duration(2.5).is_err());
        assert_eq!(parse_duration(2.0).unwrap(), 2);
        assert!(parse_tunnels("none,ipsecx").is_err());
        assert_eq!(parse_tunnels("ipsec").unwrap(), [Wanted::Ipsec]);
        assert!(parse_tunnels("none,,wg").is_err());
        assert_eq!(parse_directions("down,up").unwrap().0, [true, false]);
        let sup: Vec<String> = ["AES-128-GCM", "AES-256-CBC", "none"]
            .map(String::from)
            .to_vec();
        let asked = parse_ciphers("aes-128-gcm,NONE,AES-128-GCM").unwrap();
        assert_eq!(asked, ["AES-128-GCM", "none"]);
        assert_eq!(openvpn_ciphers(&asked, &sup, "OpenVPN 2.6").unwrap(), asked);
        assert!(parse_ciphers("aes-128-gcm,").is_err());
        assert_eq!(parse_drivers("generic, generic,x").unwrap(), ["generic", "x"]);
        let e = openvpn_ciphers(&parse_ciphers("rot13").unwrap(), &sup, "OpenVPN 2.6").unwrap_err();
        assert!(e.to_string().contains("AES-256-CBC") && !e.to_string().contains('\n'));
    }
}
