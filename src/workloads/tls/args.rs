//! `cryptobench tls`'s flags and what they parse into: `TlsArgs`, the limits of each
//! value, and the parsers and checks of the flags that are not the typed ones.

use super::load::Generator;
use super::suites::{self, Catalogue, CertKind};
use super::{groups, servers, tls_lib};
use crate::shell::args::{CommonArgs, List};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct TlsArgs {
    /// Suites, comma-separated: OpenSSL names (ECDHE-RSA-AES128-GCM-SHA256,
    /// TLS_AES_128_GCM_SHA256, ...), short names (aes128gcm, aes256gcm, chacha,
    /// tls12-aes128gcm, tls12-aes256gcm, tls12-chacha, tls12-aes128cbc), http (plain
    /// HTTP) and null (no encryption: the ceiling). Default: the AES-GCM, ChaCha20 and
    /// AES-CBC suites of TLS 1.2 and the three TLS 1.3 suites, then http and null.
    #[arg(long, value_name = "LIST", value_parser = |s: &str| anyhow::Ok(List(Catalogue::names(s))))]
    pub suites: Option<List<String>>,
    /// File sizes served, comma-separated, binary units (4k,100k,10m; 1 byte to 1g).
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "LIST",
        default_value = "4k,100k,10m",
        value_parser = |s: &str| parse_files(s).map(List)
    )]
    pub files: List<u64>,
    /// Connections open at once, comma-separated (1 to 10000).
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "LIST",
        default_value = "1,10,100",
        value_parser = |s: &str| parse_concurrency(s).map(List)
    )]
    pub concurrency: List<u32>,
    /// Kernel TLS beside user space: every suite the kernel can take (AES-GCM,
    /// ChaCha20-Poly1305) is measured again as NAME+ktls, with nginx's `ssl_conf_command
    /// Options KTLS` and sendfile. /proc/net/tls_stat must show the kernel did the work.
    #[arg(long)]
    pub ktls: bool,
    /// Load generator.
    #[arg(long, value_enum, default_value_t = Generator::Wrk)]
    pub generator: Generator,
    /// A new connection, and a full handshake, for every request (no keep-alive, no
    /// session resumption).
    #[arg(long)]
    pub handshake: bool,
    /// Key-exchange groups, comma-separated (x25519, secp256r1, secp384r1, x448,
    /// x25519mlkem768, secp256r1mlkem768, mlkem768): each TLS suite once per group, nginx
    /// restricted to it (`ssl_ecdh_curve`) and the client too; the ML-KEM groups
    /// need OpenSSL 3.5 (--openssl DIR). Records give the negotiated group and the
    /// ClientHello and ServerHello sizes. Without --suites: TLS_AES_128_GCM_SHA256 only.
    #[arg(long, value_name = "LIST", value_parser = |s: &str| groups::parse(s).map(List))]
    pub groups: Option<List<&'static groups::Group>>,
    /// Also serve two suites at once from one server, splitting the connections, e.g.
    /// chacha=10%,aes128gcm=90%; compared with each suite alone.
    #[arg(long, value_name = "A=P%,B=Q%", value_parser = suites::MixSpec::parse)]
    pub mix: Option<suites::MixSpec>,
    /// Also serve a 100 KiB HTML page, plain and gzip'd on the fly.
    #[arg(long)]
    pub gzip: bool,
    /// Certificate key: rsa (RSA-2048) or ecdsa (P-256).
    #[arg(long, value_enum, default_value_t = CertKind::Rsa)]
    pub cert: CertKind,
    /// TLS servers, comma-separated, measured one at a time: nginx, haproxy (HAProxy
    /// terminating TLS and answering with the file itself, from one buffer: files up to
    /// 1m).
    #[arg(long, value_name = "LIST", default_value = "nginx", value_parser = |s: &str| servers::parse(s).map(List))]
    pub server: List<&'static str>,
    /// nginx worker processes or HAProxy threads, comma-separated (1 to 1024), each
    /// measured [default: one per server CPU].
    #[arg(allow_negative_numbers = true, long, value_name = "LIST",
          value_parser = |s: &str| servers::parse_threads(s).map(List))]
    pub threads: Option<List<usize>>,
    /// Passes over every point, one after the other, so that a shared machine's drift
    /// hits every server, library and thread count alike; the thread sweep's scaling
    /// efficiency pairs the points of each round, and has an interval from 2 rounds on.
    #[arg(allow_negative_numbers = true, long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=MAX_ROUNDS as i64))]
    pub rounds: u32,
    /// The nginx binary (default: nginx on PATH or in /usr/sbin).
    #[arg(long, value_name = "PATH")]
    pub nginx: Option<PathBuf>,
    /// TLS libraries the servers run on, comma-separated, each in turn: system (Debian's
    /// OpenSSL 3.0), openssl-3.5, openssl-3.6, openssl-4.0 (scripts/build-openssl's builds,
    /// through LD_LIBRARY_PATH), aws-lc and wolfssl (HAProxy built against AWS-LC or
    /// wolfSSL by scripts/build-haproxy). Each point proves from the server's
    /// /proc/PID/maps that it ran on the library asked.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        value_name = "LIST",
        default_value = "system",
        conflicts_with = "openssl"
    )]
    pub tls_lib: Vec<tls_lib::LibName>,
    /// Run the servers on the OpenSSL build installed in DIR (its lib*/libssl.so.N and
    /// libcrypto.so.N, through LD_LIBRARY_PATH; e.g. what scripts/build-openssl prints): a
    /// build --tls-lib does not find in the cache, or one on a --dut. Each point checks,
    /// from /proc/PID/maps, that the server mapped that pair.
    #[arg(long, value_name = "DIR")]
    pub openssl: Option<PathBuf>,
    // --time: seconds of load per point (default 5; at least 1; whole seconds with wrk).
    #[command(flatten)]
    pub common: CommonArgs,
    /// List the suites this OpenSSL and certificate allow, and exit.
    #[arg(long)]
    pub list: bool,
    /// Sample the nginx workers with perf: where the server's CPU goes, per point.
    #[arg(long)]
    pub profile: bool,
    /// With --profile: keep folded stacks and a flame graph SVG per point in DIR.
    #[arg(long, value_name = "DIR")]
    pub profile_dir: Option<PathBuf>,
    /// With --dut: nginx runs on the DUT (bound to its address; --nginx and --openssl
    /// name paths there), the load generator here.
    #[command(flatten)]
    pub dut: crate::dut::DutArgs,
    #[command(flatten)]
    pub dut_address: crate::dut::DataAddress,
    /// The DUT's agent: the load generator runs on the controller, on these CPUs. Given
    /// by the controller, never by hand.
    #[arg(long, hide = true, value_name = "CPUS")]
    pub remote_load: Option<String>,
}

const MAX_CONCURRENCY: u32 = 10_000;
const MAX_ROUNDS: u32 = 50;
const MAX_FILE: u64 = 1 << 30;
const MAX_DURATION: f64 = 3600.0;
/// Seconds of load per point when --time is not given.
pub(super) const DEFAULT_DURATION: f64 = 5.0;

pub fn parse_concurrency(s: &str) -> anyhow::Result<Vec<u32>> {
    let n = crate::units::counts(s, "--concurrency", 1..=MAX_CONCURRENCY as u64, "1,10,100")?;
    Ok(n.into_iter().map(|n| n as u32).collect())
}

pub fn parse_files(s: &str) -> anyhow::Result<Vec<u64>> {
    crate::units::byte_list(s, "--files", 1..=MAX_FILE, "4k,100k,10m")
}

pub(super) fn check_duration(d: f64, g: Generator) -> anyhow::Result<f64> {
    if g == Generator::Wrk {
        return crate::units::whole_seconds(d, "--time", MAX_DURATION, "wrk").map(f64::from);
    }
    crate::units::check_seconds(d, "--time", 1.0, MAX_DURATION)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_checked() {
        assert_eq!(parse_concurrency("100,1,10,10").unwrap(), vec![1, 10, 100]);
        assert!(parse_concurrency("0").is_err());
        assert!(parse_concurrency("10001").is_err());
        assert!(parse_concurrency("10000").is_ok());
        assert!(parse_concurrency("a").is_err());
        assert_eq!(
            parse_files("10m,4k,100k").unwrap(),
            vec![4096, 102400, 10 << 20]
        );
        assert!(parse_files("0").is_err());
        assert!(parse_files("0k").is_err());
        assert_eq!(parse_files("1g").unwrap(), [1 << 30]);
        assert!(parse_files("1025m").is_err());
        assert!(parse_files("2g").is_err());
        assert!(check_duration(0.5, Generator::Wrk).is_err());
        assert!(check_duration(1.5, Generator::Wrk).is_err());
        assert!(check_duration(1.5, Generator::H2load).is_ok());
        assert!(check_duration(f64::NAN, Generator::H2load).is_err());
    }
}
