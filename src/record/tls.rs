//! The tls record: one measured point (a suite or a mix, a file, a concurrency), in the
//! same JSON Lines envelope as `speed` records. See docs/records.md, "tls record".

use crate::record::any::KeyValue;
use serde::{Deserialize, Serialize};

/// Latency percentiles from the generator, in milliseconds.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Latency {
    pub p50: f64,
    pub p75: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub mean: f64,
}

/// The TLS server of a point (`--server`, `--threads`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ServerInfo {
    /// "nginx" or "haproxy".
    pub name: String,
    /// As the server reports it (`nginx -v`, `haproxy -v`): "1.22.1", "2.6.12-1+deb12u4".
    pub version: String,
    /// nginx worker processes, or HAProxy threads (`nbthread`).
    pub threads: u32,
}

/// `--tls-lib`: the libssl/libcrypto the server ran on, proven from the server process.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TlsLib {
    /// As asked: "system", "openssl-3.5", "aws-lc", "wolfssl" (an --openssl DIR build: "openssl-3.5",
    /// with its non-default flags after a space).
    pub name: String,
    /// The version string in the library's file: "OpenSSL 3.0.19 27 Jan 2026",
    /// "AWS-LC 5.12.0", "wolfSSL 5.7.2".
    pub version: String,
    pub proof: TlsLibProof,
}

/// What the server process mapped (/proc/PID/maps) while it served the point.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TlsLibProof {
    /// "haproxy (pid 1234)": the process whose maps were read.
    pub process: String,
    pub libcrypto: std::path::PathBuf,
    /// Null for a program that maps no libssl.
    pub libssl: Option<std::path::PathBuf>,
}

impl TlsLib {
    /// Why the name and the version cannot belong together, if they cannot.
    pub fn mismatch(&self) -> Option<String> {
        let v = &self.version;
        let fits = match self.name.split(' ').next().unwrap_or("") {
            "aws-lc" => v.starts_with("AWS-LC "),
            "wolfssl" => v.starts_with("wolfSSL "),
            "system" => v.starts_with("OpenSSL "),
            n => n
                .strip_prefix("openssl-")
                .is_some_and(|series| v.starts_with(&format!("OpenSSL {series}."))),
        };
        (!fits).then(|| format!("tls_lib {} cannot be version '{v}'", self.name))
    }
}

/// The tag tables and identities give a point's server: its name and threads, and the
/// library unless the system's, when any differs from the default (nginx, one worker per
/// server CPU, the system library).
pub fn server_tag(name: &str, threads: usize, cpus: usize, lib: Option<&str>) -> Option<String> {
    let lib = lib.filter(|l| *l != "system");
    (name != "nginx" || threads != cpus || lib.is_some()).then(|| match lib {
        Some(l) => format!("{name} {threads}t {l}"),
        None => format!("{name} {threads}t"),
    })
}

fn first_round() -> u32 {
    1
}

fn is_first_round(r: &u32) -> bool {
    *r == 1
}

/// `--handshake`: the client's time per request on a connection opened for it, in ms.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct HandshakeMs {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

/// One suite's share of a mixed point.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct MixPart {
    pub suite: String,
    pub negotiated: String,
    /// Share of the connections asked for, in percent.
    pub percent: f64,
    pub connections: u32,
    pub requests: u64,
    pub requests_per_s: f64,
    pub bytes: u64,
    pub errors: u64,
    pub latency_ms: Option<Latency>,
    pub server_requests: u64,
    pub port: u16,
}

/// One public-key operation a full handshake makes on the server, timed alone on the
/// libcrypto nginx uses: one thread, operations per CPU-second.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PrimitiveRate {
    /// A catalogue name: "rsa2048-pss", "ecdsa-p256", "x25519".
    pub alg: String,
    /// "sign" or "derive".
    pub direction: String,
    pub ops_per_cpu_s: f64,
    /// `handshakes_per_server_cpu_s` in percent of `ops_per_cpu_s`: the share of the
    /// server's CPU per handshake that this operation alone would take.
    pub handshake_pct: f64,
}

/// `--handshake`: the handshake rate beside the server's signing and key-exchange rates.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct HandshakeCost {
    /// Handshakes per second: one per request, the generator's requests_per_s.
    pub handshakes_per_s: f64,
    /// Handshakes per CPU-second of all nginx workers (server_requests / server_cpu_s).
    pub handshakes_per_server_cpu_s: f64,
    /// The certificate's signature, then the key exchange.
    pub primitives: Vec<PrimitiveRate>,
    /// Where the primitives were timed, e.g. "openssl OpenSSL 3.0.19 ...".
    pub implementation: String,
}

/// Kernel TLS at a `+ktls` point: the kernel's counters prove it protected the records
/// (a point where they did not move is refused, never recorded).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct KtlsUse {
    /// The kernel's AEAD for the suite: "gcm(aes)", "ccm(aes)", "rfc7539(chacha20,poly1305)".
    pub kernel_aead: String,
    /// Sockets switched to kernel TLS during the load (TlsTxSw + TlsTxDevice), for
    /// sending (at least one per connection) and for receiving.
    pub tx_sockets: u64,
    pub rx_sockets: u64,
    /// Records the kernel failed to decrypt during the load (TlsDecryptError).
    pub decrypt_errors: u64,
    /// One response fetched through kTLS (openssl s_client) before the load was
    /// byte-identical to the file; null for a gzip'd response (nothing to compare).
    pub body_identical: Option<bool>,
    pub body_bytes: u64,
    /// /proc/net/tls_stat after that fetch and after the load.
    pub tls_stat_before: std::collections::BTreeMap<String, u64>,
    pub tls_stat_after: std::collections::BTreeMap<String, u64>,
}

/// A tls point: the shared envelope (impl "nginx", label = the suite) and these fields.
pub type TlsRecord = crate::record::envelope::Record<TlsData>;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TlsData {
    /// "http", "null", an OpenSSL suite name, or "mix".
    pub suite: String,
    /// "http", "TLSv1.2" or "TLSv1.3" (for a mix: both parts' joined by "+").
    pub protocol: String,
    /// `$ssl_protocol $ssl_cipher` as nginx logged it for every request of the point
    /// ("- -" for plain HTTP); for a mix, the parts' joined by " + ".
    pub negotiated: String,
    /// The parts of a `--mix` point; null otherwise.
    pub mix: Option<Vec<MixPart>>,
    /// "wrk" or "h2load".
    pub generator: String,
    /// A new connection (and full handshake) for every request.
    pub handshake: bool,
    /// "rsa2048" or "ecdsa-p256".
    pub cert: String,
    /// "random" (incompressible), "html" or "html+gzip".
    pub content: String,
    /// Size of the file on disk, in bytes.
    pub file_size: u64,
    /// Connections open at once.
    pub concurrency: u32,
    /// Which pass over every point this one belongs to (1-based; --rounds); absent when 1.
    #[serde(default = "first_round", skip_serializing_if = "is_first_round")]
    pub round: u32,
    /// Seconds asked for, and measured by the generator.
    pub duration_s: f64,
    /// Responses the generator completed, and those it counted as errors (socket errors,
    /// timeouts, status >= 400).
    pub requests: u64,
    pub errors: u64,
    /// Response bytes (HTTP headers and body, after TLS) the generator received.
    pub bytes: u64,
    pub requests_per_s: f64,
    /// Null for a mix (see each part's).
    pub latency_ms: Option<Latency>,
    /// Requests nginx logged, bytes it sent ($bytes_sent) and of them body bytes, and
    /// the distinct connections they came on.
    pub server_requests: u64,
    pub server_bytes: u64,
    pub server_body_bytes: u64,
    pub server_connections: u64,
    /// Logged requests whose `$ssl_protocol $ssl_cipher` was the suite asked for: a point
    /// is kept only when this equals server_requests.
    pub negotiated_requests: u64,
    /// CPU seconds of all nginx workers during the load (from /proc/<pid>/stat).
    pub server_cpu_s: f64,
    /// server_cpu_s / (wall x server CPUs), in percent.
    pub server_cpu_pct: f64,
    pub server_workers: u32,
    pub server_cpus: Vec<usize>,
    /// CPU seconds of the load generator process(es).
    pub client_cpu_s: f64,
    pub client_cpu_user_s: f64,
    pub client_cpu_sys_s: f64,
    /// client_cpu_s / (wall x usable generator CPUs), in percent.
    pub client_cpu_pct: f64,
    pub client_threads: u32,
    pub client_cpus: Vec<usize>,
    /// The generator used (nearly) all the CPU it had: the server was not the limit.
    pub generator_bound: bool,
    /// `others_cpu_pct` (envelope) is the CPU other processes used on the server and
    /// generator CPUs during the point, in percent of those CPUs; `disturbed` from 10%.
    /// Server CPU milliseconds per logged request (`cpu_s_per_gb` in the envelope is per
    /// 10^9 bytes sent, $bytes_sent).
    pub cpu_ms_per_request: f64,
    /// Ports of the server blocks used.
    pub ports: Vec<u16>,
    /// `--handshake` points of a TLS suite: the handshake rate against the public-key
    /// operations behind it; null otherwise (and in records from before it existed).
    #[serde(default)]
    pub handshake_cost: Option<HandshakeCost>,
    /// The key-exchange group nginx logged (`$ssl_curve`) when every request of the point
    /// used the same one, e.g. "X25519"; null otherwise (plain HTTP, or records from
    /// before it existed).
    #[serde(default)]
    pub key_exchange: Option<String>,
    /// `--groups`: the key-exchange group both ends were restricted to, e.g.
    /// "x25519mlkem768"; absent otherwise (and in records from before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// `--groups`: the group the handshake negotiated, as `openssl s_client` reported it
    /// ("X25519MLKEM768"); nginx's log agreed for every request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub negotiated_group: Option<String>,
    /// `--groups`: the ClientHello and ServerHello handshake messages of one full
    /// handshake (header included), in bytes, from `openssl s_client -msg`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_hello_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_hello_bytes: Option<u64>,
    /// `--openssl DIR`: the build nginx ran on, as its processes mapped it; absent on the
    /// system OpenSSL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub openssl_build: Option<crate::impls::openssl::build::OpenSslBuild>,
    /// What held the point back, and the figures that say so (analyse/limit.rs): nginx
    /// ("server"), the generator, every CPU, or none seen. Older `tls --dut` records wrote
    /// a bare word; absent in older records of points run here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<crate::record::window::Limit>,
    /// `+ktls` suites: what the kernel did; absent for user-space TLS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ktls: Option<KtlsUse>,
    /// The server that served the point; absent in records from before `--server`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerInfo>,
    /// `--handshake` points of a TLS suite: one full handshake per request, so the
    /// generator's requests per second; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handshakes_per_s: Option<f64>,
    /// `--handshake` points of a TLS suite: the generator's latency percentiles, each
    /// request on a new connection (see docs/records.md for what the interval holds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handshake_ms: Option<HandshakeMs>,
    /// `--handshake` points of a TLS suite: server CPU milliseconds per handshake
    /// (server_cpu_s over the requests the server logged, one handshake each).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_per_handshake_ms: Option<f64>,
    /// The library the server ran on (`--tls-lib`, `--openssl`), as its process mapped it;
    /// absent in records from before `--tls-lib`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_lib: Option<TlsLib>,
}

impl TlsData {
    /// The server and its threads, when they are not the default (nginx, one worker per
    /// server CPU): tables prefix the suite with them and compare pairs by them.
    pub fn server_tag(&self) -> Option<String> {
        let s = self.server.as_ref()?;
        let lib = self.tls_lib.as_ref().map(|l| l.name.as_str());
        server_tag(
            &s.name,
            s.threads as usize,
            self.server_cpus.len().max(1),
            lib,
        )
    }
}

/// A suite's record protection timed alone, in process, on the same libcrypto: what the
/// crypto share of the server's CPU is computed against (kept in the run's end line).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CipherAlone {
    pub suite: String,
    /// The primitives timed, e.g. ["aes-128-cbc", "hmac-sha256"].
    pub algs: Vec<String>,
    /// CPU seconds per 10^9 bytes of all of them together (seal/encrypt direction).
    pub cpu_s_per_gb: f64,
    pub implementation: String,
    pub note: Option<String>,
}

impl crate::record::any::RecordData for TlsData {
    fn identity_keys<'a>(
        r: &'a crate::record::envelope::Record<Self>,
        label: Option<&str>,
    ) -> (&'a str, Vec<(&'static str, KeyValue)>) {
        let text = |s: &str| KeyValue::Text(s.to_string());
        (
            &r.implementation,
            vec![
                // A tls record's label is its suite (or mix): a renamed side is paired by
                // the name it is given.
                ("suite", text(label.unwrap_or(&r.suite))),
                ("content", text(&r.content)),
                ("file_size", KeyValue::Num(r.file_size)),
                ("concurrency", KeyValue::Num(r.concurrency as u64)),
                ("handshake", text(&r.handshake.to_string())),
            ]
            .into_iter()
            // Only --groups records have a group: older ones keep their identity.
            .chain(r.group.as_deref().map(|g| ("group", text(g))))
            // Only a server other than the default nginx (or its threads) adds a key.
            .chain(r.server_tag().map(|t| ("server", KeyValue::Text(t))))
            .collect(),
        )
    }

    /// Each --rounds pass measures the point again.
    fn point_key(r: &TlsRecord) -> (String, u32) {
        (r.label.clone(), r.round)
    }

    /// A library whose name and version disagree, or whose proof names no libcrypto.
    fn check(r: &TlsRecord) -> anyhow::Result<()> {
        let Some(lib) = &r.tls_lib else {
            return Ok(());
        };
        if let Some(why) = lib.mismatch() {
            anyhow::bail!("{why}");
        }
        let named = |p: &std::path::Path, prefix: &str| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
        };
        // wolfSSL's one file, libwolfssl, is its libcrypto and its libssl.
        let (crypto, ssl) = match lib.name.as_str() {
            "wolfssl" => ("libwolfssl.so", "libwolfssl.so"),
            _ => ("libcrypto.so", "libssl.so"),
        };
        if !named(&lib.proof.libcrypto, crypto)
            || lib.proof.libssl.as_deref().is_some_and(|s| !named(s, ssl))
        {
            anyhow::bail!(
                "tls_lib {}: its proof names no {crypto} (or a libssl that is not {ssl})",
                lib.name
            );
        }
        Ok(())
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct TlsSuiteSettings {
    pub suite: String,
    pub cipher: Option<String>,
    pub protocol: String,
    pub null: bool,
    pub record_protection: String,
    pub port: u16,
    /// The suite's kernel-TLS twin (`NAME+ktls`).
    #[serde(default)]
    pub ktls: bool,
}

/// The settings of a tls run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct TlsSettings {
    pub suites: Vec<TlsSuiteSettings>,
    #[serde(default)]
    pub files: Vec<u64>,
    #[serde(default)]
    pub gzip_page: bool,
    #[serde(default)]
    pub concurrency: Vec<u32>,
    #[serde(default)]
    pub duration_s: f64,
    #[serde(default)]
    pub generator: String,
    #[serde(default)]
    pub handshake: bool,
    #[serde(default)]
    pub mix: Option<String>,
    #[serde(default)]
    pub cert: String,
    #[serde(default)]
    pub server_cpus: Vec<usize>,
    #[serde(default)]
    pub generator_cpus: Vec<usize>,
    #[serde(default)]
    pub pinned: bool,
    #[serde(default)]
    pub nginx_workers: usize,
    #[serde(default)]
    pub worker_connections: u64,
    #[serde(default)]
    pub keepalive_requests: Option<u64>,
    #[serde(default)]
    pub ssl_session_cache: String,
    #[serde(default)]
    pub ssl_session_tickets: String,
    #[serde(default)]
    pub ktls: bool,
    #[serde(default)]
    pub sendfile: String,
    #[serde(default)]
    pub http_version: String,
    #[serde(default)]
    pub nginx_restarted_per_point: bool,
    #[serde(default)]
    pub temp_dir: std::path::PathBuf,
    #[serde(default)]
    pub cipher_alone_record_bytes: usize,
    #[serde(default)]
    pub notes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record written before --groups existed reads, without the group fields, and a
    /// record without them writes none of them.
    #[test]
    fn records_without_groups_still_read() {
        let mut v = serde_json::to_value(sample()).unwrap();
        for k in [
            "group",
            "negotiated_group",
            "client_hello_bytes",
            "server_hello_bytes",
        ] {
            assert!(v.get(k).is_none(), "{k} written when absent");
        }
        v.as_object_mut().unwrap().remove("key_exchange");
        let back: TlsData = serde_json::from_value(v).unwrap();
        assert_eq!((&back.group, back.client_hello_bytes), (&None, None));
        // Nor the server (before --server) or the handshake figures.
        assert_eq!((&back.server, back.handshakes_per_s), (&None, None));
        assert_eq!(back.server_tag(), None);
    }

    #[test]
    fn only_a_server_other_than_the_default_is_tagged() {
        let mut d = sample();
        let info = |name: &str, threads| ServerInfo {
            name: name.into(),
            version: "1".into(),
            threads,
        };
        d.server = Some(info("nginx", 1));
        assert_eq!(d.server_tag(), None);
        d.server = Some(info("nginx", 2));
        assert_eq!(d.server_tag().as_deref(), Some("nginx 2t"));
        d.server = Some(info("haproxy", 1));
        assert_eq!(d.server_tag().as_deref(), Some("haproxy 1t"));
        // A library other than the system's is part of the tag.
        d.server = Some(info("nginx", 1));
        d.tls_lib = Some(lib("openssl-3.5", "OpenSSL 3.5.5 27 Jan 2026"));
        assert_eq!(d.server_tag().as_deref(), Some("nginx 1t openssl-3.5"));
        d.tls_lib = Some(lib("system", "OpenSSL 3.0.19 27 Jan 2026"));
        assert_eq!(d.server_tag(), None);
    }

    fn lib(name: &str, version: &str) -> TlsLib {
        TlsLib {
            name: name.into(),
            version: version.into(),
            proof: TlsLibProof {
                process: "haproxy (pid 1)".into(),
                libcrypto: "/x/lib/libcrypto.so".into(),
                libssl: Some("/x/lib/libssl.so".into()),
            },
        }
    }

    /// A record whose library name and version disagree is refused on read.
    #[test]
    fn a_library_is_checked_on_read() {
        use crate::record::any::RecordData;
        let mut r = crate::analyse::tls::tests::rec("TLS_AES_128_GCM_SHA256", 4096, 1, 1.0, 1, 1.0);
        for (name, version, ok) in [
            ("aws-lc", "AWS-LC 5.12.0", true),
            ("openssl-3.5", "OpenSSL 3.5.5 27 Jan 2026", true),
            ("openssl-3.5 no-asm", "OpenSSL 3.5.5 27 Jan 2026", true),
            ("system", "OpenSSL 3.0.19 27 Jan 2026", true),
            ("aws-lc", "OpenSSL 3.0.19 27 Jan 2026", false),
            ("wolfssl", "OpenSSL 3.0.19 27 Jan 2026", false),
            ("openssl-3.5", "OpenSSL 3.0.19 27 Jan 2026", false),
        ] {
            r.data.tls_lib = Some(lib(name, version));
            assert_eq!(TlsData::check(&r).is_ok(), ok, "{name} {version}");
        }
        r.data.tls_lib.as_mut().unwrap().proof.libcrypto = "/x/lib/libz.so".into();
        assert!(TlsData::check(&r).is_err());
        // wolfSSL's proof names its one file twice; a libcrypto.so is not it.
        let mut wolf = lib("wolfssl", "wolfSSL 5.7.2");
        wolf.proof.libcrypto = "/x/lib/libwolfssl.so.42".into();
        wolf.proof.libssl = Some("/x/lib/libwolfssl.so.42".into());
        r.data.tls_lib = Some(wolf.clone());
        assert!(TlsData::check(&r).is_ok());
        wolf.proof.libcrypto = "/x/lib/libcrypto.so".into();
        r.data.tls_lib = Some(wolf);
        assert!(TlsData::check(&r).is_err());
    }

    fn sample() -> TlsData {
        serde_json::from_value(serde_json::json!({
            "suite": "TLS_AES_128_GCM_SHA256", "protocol": "TLSv1.3",
            "negotiated": "TLSv1.3 TLS_AES_128_GCM_SHA256", "mix": null, "generator": "wrk",
            "handshake": true, "cert": "rsa2048", "content": "random", "file_size": 4096,
            "concurrency": 10, "duration_s": 1.0, "requests": 10, "errors": 0, "bytes": 1,
            "requests_per_s": 10.0, "latency_ms": null, "server_requests": 10,
            "server_bytes": 1, "server_body_bytes": 1, "server_connections": 10,
            "negotiated_requests": 10, "server_cpu_s": 0.1, "server_cpu_pct": 10.0,
            "server_workers": 1, "server_cpus": [0], "client_cpu_s": 0.1,
            "client_cpu_user_s": 0.1, "client_cpu_sys_s": 0.0, "client_cpu_pct": 10.0,
            "client_threads": 1, "client_cpus": [1], "generator_bound": false,
            "cpu_ms_per_request": 10.0, "ports": [1]
        }))
        .unwrap()
    }
}
