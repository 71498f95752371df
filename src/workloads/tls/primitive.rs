//! The cost of each suite's record protection measured alone: the servers' own library in
//! this process (`ServerCrypto`), one full 16 KiB TLS record per call, one thread, CPU time.
//! A bottom-up estimate beside the end-to-end share against the null suite. With
//! `--handshake`, also the public-key operations of a full handshake, for the rate of
//! handshakes beside the rate of signatures.

use super::suites::{CertKind, Suite};
use crate::algorithms::{Algorithm, Direction};
use crate::impls::{openssl::OpenSsl, Implementation, Support};

/// The library the servers run on, loaded in this process to time their crypto alone.
pub enum ServerCrypto {
    /// Debian's libcrypto, which Debian's nginx and haproxy load.
    System,
    /// An OpenSSL build's libcrypto (`--openssl DIR`, `--tls-lib openssl-X.Y`).
    Build(PathBuf),
    /// AWS-LC through aws-lc-rs: the tree scripts/build-aws-lc builds HAProxy's from.
    AwsLc,
}

impl ServerCrypto {
    fn load(&self) -> anyhow::Result<Box<dyn Implementation>> {
        Ok(match self {
            ServerCrypto::System => Box::new(OpenSsl::load_system()?),
            ServerCrypto::Build(path) => Box::new(OpenSsl::load_path(path)?),
            #[cfg(feature = "aws-lc")]
            ServerCrypto::AwsLc => Box::new(crate::impls::aws_lc::AwsLc),
            #[cfg(not(feature = "aws-lc"))]
            ServerCrypto::AwsLc => anyhow::bail!("this build has no AWS-LC (feature aws-lc)"),
        })
    }
}

/// How records name the library a cost was timed on: "openssl 3.0.19 ...", "aws-lc 1.x (AWS-LC 5.12.0)".
fn label(imp: &dyn Implementation) -> String {
    format!("{} {}", imp.name(), imp.version())
}
use crate::record::tls::{HandshakeCost, PrimitiveRate, TlsData};
use std::path::PathBuf;
use std::time::Duration;

/// Bytes per call: the largest TLS record, which bulk transfers fill.
pub const RECORD: usize = 16384;

pub use crate::record::tls::CipherAlone;

/// CPU seconds per GB of one algorithm at RECORD bytes per call, over about `budget`.
fn cost(imp: &dyn Implementation, alg: Algorithm, budget: Duration) -> anyhow::Result<f64> {
    crate::measure::alone::cpu_s_per_gb(imp, alg, RECORD, budget)
}

/// The public-key operations a full handshake can make on the server: the certificate's
/// signature (RSA-PSS for an RSA key: TLS 1.3 requires it and OpenSSL 3 peers choose it in
/// TLS 1.2 too), then the key exchanges of the catalogue (X25519, P-256); each point
/// shows the one nginx logged for it (`$ssl_curve`).
pub fn handshake_ops(cert: CertKind) -> [(Algorithm, Direction); 4] {
    let sign = match cert {
        CertKind::Rsa => Algorithm::Rsa2048Pss,
        CertKind::Ecdsa => Algorithm::EcdsaP256,
    };
    [
        (sign, Direction::Sign),
        (Algorithm::X25519, Direction::Derive),
        (Algorithm::EcdhP256, Direction::Derive),
        // The server's side of the hybrid: encapsulate to the client's ML-KEM key, and its
        // own X25519 key pair and derive (OpenSSL 3.5's X25519MLKEM768, as libssl does it).
        (Algorithm::X25519MlKem768, Direction::Encaps),
    ]
}

/// The catalogue's key exchange for a group as OpenSSL names it in `$ssl_curve`.
fn group_alg(group: &str) -> Option<Algorithm> {
    match super::groups::find(group)?.name {
        "x25519" => Some(Algorithm::X25519),
        "secp256r1" => Some(Algorithm::EcdhP256),
        "x25519mlkem768" => Some(Algorithm::X25519MlKem768),
        _ => None,
    }
}

/// The handshake's operations timed alone: (algorithm, direction, ops per CPU-second).
pub struct HandshakePrimitives {
    pub rates: Vec<(Algorithm, Direction, f64)>,
    pub implementation: String,
}

/// Times [`handshake_ops`] on the servers' library, one thread.
pub fn measure_handshake(
    cert: CertKind,
    budget: Duration,
    crypto: &ServerCrypto,
) -> (Option<HandshakePrimitives>, Vec<String>) {
    let imp = match crypto.load() {
        Ok(o) => o,
        Err(e) => {
            return (
                None,
                vec![format!("handshake primitives not measured: {e}")],
            )
        }
    };
    let mut rates = Vec::new();
    for (alg, dir) in handshake_ops(cert) {
        if crate::measure::stopped() {
            return (None, Vec::new());
        }
        // The hybrid only where nginx's libcrypto has it (3.5 and later): before, no
        // handshake can negotiate it either.
        if dir == Direction::Encaps && imp.support(alg) != Support::Yes {
            continue;
        }
        match crate::measure::alone::cpu_per_call(imp.as_ref(), alg, dir, 0, budget) {
            Ok(c) if c > 0.0 => rates.push((alg, dir, 1.0 / c)),
            Ok(_) => {
                return (
                    None,
                    vec![format!(
                    "handshake primitives not measured: {alg} {dir} took no measurable CPU time"
                )],
                )
            }
            Err(e) => {
                return (
                    None,
                    vec![format!(
                        "handshake primitives not measured: {alg} {dir}: {e}"
                    )],
                )
            }
        }
    }
    let implementation = label(imp.as_ref());
    (
        Some(HandshakePrimitives {
            rates,
            implementation,
        }),
        Vec::new(),
    )
}

/// A handshake point's rate against the primitives; None for plain HTTP (no handshake)
/// or a point whose server used no measurable CPU.
pub fn handshake_cost(p: &HandshakePrimitives, d: &TlsData) -> Option<HandshakeCost> {
    if d.suite == "http" || d.server_cpu_s <= 0.0 || d.server_requests == 0 {
        return None;
    }
    let per_cpu_s = d.server_requests as f64 / d.server_cpu_s;
    // The signature, and the key exchange nginx logged (none when it logged no one group).
    let kx = d.key_exchange.as_deref().and_then(group_alg);
    Some(HandshakeCost {
        handshakes_per_s: d.requests_per_s,
        handshakes_per_server_cpu_s: per_cpu_s,
        primitives: p
            .rates
            .iter()
            .filter(|(alg, dir, _)| *dir == Direction::Sign || Some(*alg) == kx)
            .map(|&(alg, dir, ops)| PrimitiveRate {
                alg: alg.name().into(),
                direction: dir.name().into(),
                ops_per_cpu_s: ops,
                handshake_pct: per_cpu_s / ops * 100.0,
            })
            .collect(),
        implementation: p.implementation.clone(),
    })
}

/// For each TLS suite whose primitives the catalogue has, their summed cost alone, on
/// the servers' library.
pub fn measure(
    suites: &[&Suite],
    budget: Duration,
    crypto: &ServerCrypto,
) -> (Vec<CipherAlone>, Vec<String>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let imp = match crypto.load() {
        Ok(o) => o,
        Err(e) => {
            notes.push(format!("cipher cost alone not measured: {e}"));
            return (out, notes);
        }
    };
    let mut cache: Vec<(Algorithm, f64)> = Vec::new();
    for s in suites {
        if s.cipher.is_none() || crate::measure::stopped() {
            continue;
        }
        let Some(algs) = s.primitives() else {
            notes.push(format!(
                "cipher cost alone not measured for {}: its primitives ({}) are not in the catalogue",
                s.name, s.enc
            ));
            continue;
        };
        let mut total = 0.0;
        let mut failed = None;
        for &a in &algs {
            if let Some((_, c)) = cache.iter().find(|(x, _)| *x == a) {
                total += c;
                continue;
            }
            match cost(imp.as_ref(), a, budget) {
                Ok(c) => {
                    cache.push((a, c));
                    total += c;
                }
                Err(e) => failed = Some(format!("{a}: {e}")),
            }
        }
        if let Some(e) = failed {
            notes.push(format!(
                "cipher cost alone not measured for {}: {e}",
                s.name
            ));
            continue;
        }
        let note = if s.null {
            Some("HMAC-SHA1 timed as SHA-1 over the record (HMAC adds two blocks)".to_string())
        } else if algs.iter().any(|a| a.name() == "hmac-sha256") {
            Some("CBC and HMAC timed apart and added (TLS 1.2 MAC-then-encrypt)".to_string())
        } else {
            None
        };
        out.push(CipherAlone {
            suite: s.name.clone(),
            algs: algs.iter().map(|a| a.name().to_string()).collect(),
            cpu_s_per_gb: total,
            implementation: label(imp.as_ref()),
            note,
        });
    }
    (out, notes)
}
