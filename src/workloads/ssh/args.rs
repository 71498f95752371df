//! `cryptobench ssh`'s flags and what they parse into: `SshArgs`, the servers (`Kind`),
//! the directions, the algorithm names, the limits of each value and the default
//! ciphers and MACs, and their parsers.

use crate::shell::args::CommonArgs;
use anyhow::anyhow;

#[derive(clap::Args, Clone)]
pub struct SshArgs {
    /// Servers, comma-separated: openssh (sshd), dropbear.
    #[arg(long, value_name = "openssh|dropbear,...", default_value = "openssh,dropbear", value_parser = parse_servers)]
    pub server: Servers,
    /// Ciphers, comma-separated, by OpenSSH's names. A cipher a server does not offer is
    /// refused (exit 2, with what it offers); by default each server is measured with
    /// those of the default list it offers, the others recorded as not offered.
    /// [default: chacha20-poly1305@openssh.com,aes128-gcm@openssh.com,aes256-gcm@openssh.com,aes128-ctr,aes256-ctr]
    #[arg(long, value_name = "LIST", value_parser = parse_ciphers)]
    pub ciphers: Option<Names>,
    /// MACs beside the non-AEAD ciphers, comma-separated (e.g. hmac-sha2-256-etm@openssh.com,
    /// hmac-sha2-256); none is refused. [default: hmac-sha2-256-etm@openssh.com, else
    /// hmac-sha2-256 on a server without the ETM one]
    #[arg(long, value_name = "LIST", value_parser = parse_macs)]
    pub macs: Option<Names>,
    /// Payload bytes per transfer (e.g. 32m, 256m, 1g).
    #[arg(long, value_name = "SIZE", default_value = "256m", value_parser = parse_bytes)]
    pub bytes: u64,
    /// up: the client sends (the server's `wc -c` counts); down: the server sends
    /// (`head -c BYTES /dev/zero`); both: each, as separate points.
    #[arg(long, value_name = "up|down|both", default_value = "both", value_parser = parse_directions)]
    pub direction: Directions,
    /// Transfers per point, one after the other; the point is their median, with its
    /// interval.
    #[arg(allow_negative_numbers = true, long, value_name = "N", default_value_t = 3,
          value_parser = clap::value_parser!(u32).range(1..=MAX_ROUNDS as i64))]
    pub rounds: u32,
    /// Name the ciphers and MACs each server offers here, and exit.
    #[arg(long)]
    pub list: bool,
    /// Each point once more under perf: where each end's CPU went (the crypto share of the
    /// server and of the client), beside the unsampled rounds' figures.
    #[arg(long)]
    pub profile: bool,
    /// With --profile: keep folded stacks and a flame graph SVG per point and end in DIR
    /// (implies --profile).
    #[arg(long, value_name = "DIR")]
    pub profile_dir: Option<std::path::PathBuf>,
    /// Find and remove what a killed run left behind (the lab's namespaces and what runs
    /// in them, temp dirs), say what was removed, and exit.
    #[arg(long)]
    pub cleanup: bool,
    // --time: the longest one transfer may take, in seconds (default 300); a transfer
    // that moves no byte for STALL_S is stopped sooner.
    #[command(flatten)]
    pub common: CommonArgs,
    /// With --dut: the servers run on the DUT (in a mount namespace of their own, on its
    /// data address, with host keys made there for the run), the client here.
    #[command(flatten)]
    pub dut: crate::dut::DutArgs,
    #[command(flatten)]
    pub dut_address: crate::dut::DataAddress,
    /// The DUT's agent: the client runs on the controller. Given by the controller, never
    /// by hand.
    #[arg(long, hide = true)]
    pub remote_client: bool,
}

const MAX_ROUNDS: u32 = 50;
/// The longest one transfer may take when --time is not given, and the most --time takes.
const DEFAULT_LIMIT_S: f64 = 300.0;
pub(super) const MAX_LIMIT_S: f64 = 3600.0;
/// Payload per transfer: at least 1 MiB (the start of the data phase is read to a few
/// milliseconds), at most 64 GiB.
const BYTES: std::ops::RangeInclusive<u64> = (1 << 20)..=(64 << 30);

pub(super) const DEFAULT_CIPHERS: [&str; 5] = [
    "chacha20-poly1305@openssh.com",
    "aes128-gcm@openssh.com",
    "aes256-gcm@openssh.com",
    "aes128-ctr",
    "aes256-ctr",
];
/// Without --macs, each non-AEAD cipher gets the first of these its server offers.
pub(super) const DEFAULT_MACS: [&str; 2] = ["hmac-sha2-256-etm@openssh.com", "hmac-sha2-256"];

/// A server to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    OpenSsh,
    Dropbear,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::OpenSsh => "openssh",
            Kind::Dropbear => "dropbear",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Servers(pub Vec<Kind>);

fn parse_servers(s: &str) -> anyhow::Result<Servers> {
    let kinds = [("openssh", Kind::OpenSsh), ("dropbear", Kind::Dropbear)];
    crate::units::choices(s, "--server", "openssh,dropbear", &kinds).map(Servers)
}

/// `--direction`: true for down, in order, each once.
#[derive(Clone, Debug)]
pub struct Directions(pub Vec<bool>);

fn parse_directions(s: &str) -> anyhow::Result<Directions> {
    let d: [(&str, &[bool]); 3] = [("up", &[false]), ("down", &[true]), ("both", &[false, true])];
    let chosen = crate::units::choices(s, "--direction", "up", &d)?;
    let mut out = Vec::new();
    for down in chosen.into_iter().flatten() {
        if !out.contains(down) {
            out.push(*down);
        }
    }
    Ok(Directions(out))
}

/// Algorithm names as OpenSSH spells them, each once, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Names(pub Vec<String>);

/// A list of algorithm names: OpenSSH's characters only (they go on ssh's command line
/// and into messages), each once.
fn names(s: &str, flag: &str, example: &str) -> anyhow::Result<Names> {
    let mut out: Vec<String> = Vec::new();
    for item in crate::units::items(s, flag, example)? {
        let ok = item.len() <= 64
            && item
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "@.-_".contains(c));
        if !ok {
            return Err(anyhow!(
                "invalid {flag} '{}': give algorithm names as `ssh -Q {}` lists them, e.g. {flag} {example}",
                crate::units::shown(item),
                if flag == "--macs" { "mac" } else { "cipher" }
            ));
        }
        let item = item.to_ascii_lowercase();
        if !out.contains(&item) {
            out.push(item);
        }
    }
    Ok(Names(out))
}

/// `--ciphers` or `--macs`: names, never `none` (`without` says what a channel would
/// then lack).
fn algorithms(s: &str, flag: &str, example: &str, without: &str) -> anyhow::Result<Names> {
    let n = names(s, flag, example)?;
    if n.0.iter().any(|c| c == "none") {
        return Err(anyhow!(
            "invalid {flag} 'none': a channel without {without} is not measured; give one, e.g. {flag} {example}"
        ));
    }
    Ok(n)
}

fn parse_ciphers(s: &str) -> anyhow::Result<Names> {
    algorithms(s, "--ciphers", "aes128-gcm@openssh.com,aes128-ctr", "encryption")
}

fn parse_macs(s: &str) -> anyhow::Result<Names> {
    algorithms(s, "--macs", "hmac-sha2-256-etm@openssh.com", "integrity")
}

fn parse_bytes(s: &str) -> anyhow::Result<u64> {
    crate::units::bytes(s)
        .filter(|n| BYTES.contains(n))
        .ok_or_else(|| {
            anyhow!(
                "invalid --bytes '{}': give a size from 1m to 64g with an optional k, m or g suffix (binary), e.g. --bytes 256m",
                crate::units::shown(s)
            )
        })
}

/// `--time`: the longest one transfer may take.
pub(super) fn parse_limit(t: Option<f64>) -> anyhow::Result<f64> {
    let t = t.unwrap_or(DEFAULT_LIMIT_S);
    crate::units::check_seconds(t, "--time", 1.0, MAX_LIMIT_S)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_checks() {
        assert_eq!(parse_directions("both").unwrap().0, [false, true]);
        assert_eq!(parse_directions("down,up").unwrap().0, [true, false]);
        assert!(parse_directions("sideways").is_err());
        assert_eq!(
            parse_servers("dropbear,openssh").unwrap().0,
            [Kind::Dropbear, Kind::OpenSsh]
        );
        assert!(parse_servers("tinyssh").is_err());
        assert_eq!(parse_bytes("32m").unwrap(), 32 << 20);
        for bad in ["0", "1k", "lots", "65g"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
        let e = parse_macs("hmac-sha1,none").unwrap_err().to_string();
        assert!(e.contains("none") && !e.contains('\n'), "{e}");
        assert!(parse_ciphers("aes128-ctr;reboot").is_err());
        assert!(parse_ciphers("aes128-ctr,,x").is_err());
        assert_eq!(
            parse_ciphers("AES128-CTR,aes128-ctr").unwrap().0,
            ["aes128-ctr"]
        );
        assert!(parse_limit(Some(0.5)).is_err());
        assert_eq!(parse_limit(None).unwrap(), DEFAULT_LIMIT_S);
    }
}
