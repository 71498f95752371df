//! Implementations behind one trait, and the registry that finds them.
//!
//! An [`Implementation`] is a library (or later a kernel path) reached in one way. It
//! hands out [`Operation`]s: one prepared key for one algorithm and direction, which
//! processes one message of exactly n bytes per call.

use anyhow::anyhow;
use serde::Serialize;
use std::path::PathBuf;

pub use implementation::{
    each_message, Access, Batch, Implementation, KernelDriver, KeyPairResult, OneShot, Operation,
    PkeyFns, Prepared, PublicKeyOps, PublicKeyResult, Support, Symmetric,
};
pub use io::{opened_len, sealed_len, too_small, Io, RawIo};

pub mod af_alg;
#[cfg(feature = "aws-lc")]
pub mod aws_lc;
#[cfg(feature = "boringssl")]
pub mod boringssl;
#[cfg(test)]
mod conformance;
#[cfg(feature = "test-corrupt")]
pub mod corrupt;
pub mod cryptodev;
pub mod details;
pub mod implementation;
mod io;
#[cfg(feature = "libsodium")]
pub mod libsodium;
pub mod openssl;
pub mod pkey;
pub mod ring;
pub mod rustcrypto;

/// An implementation that could not be loaded, and why.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize, PartialEq)]
#[serde(default)]
pub struct Unavailable {
    pub name: String,
    pub reason: String,
}

pub const NAMES: &[&str] = &[
    "openssl",
    "aws-lc",
    "ring",
    "rustcrypto",
    "libsodium",
    "boringssl",
    "af_alg",
    "cryptodev",
];

/// What this build and machine offer.
pub struct Registry {
    pub found: Vec<Box<dyn Implementation>>,
    pub missing: Vec<Unavailable>,
}

/// Every implementation this build and machine offer, plus the ones that are missing
/// with the reason. `libcrypto` adds further OpenSSL builds beside the system one; a
/// path that is not a libcrypto is an input error.
pub fn registry(libcrypto: &[PathBuf], variants: &[String]) -> anyhow::Result<Registry> {
    let mut found: Vec<Box<dyn Implementation>> = Vec::new();
    let mut missing = Vec::new();
    match openssl::OpenSsl::load_system() {
        Ok(o) => found.push(Box::new(o)),
        Err(reason) => missing.push(Unavailable {
            name: "openssl".into(),
            reason: reason.to_string(),
        }),
    }
    for path in libcrypto {
        let o = openssl::OpenSsl::load_path(path)?;
        // The same file reached twice (the system one, or one path given twice) is one
        // path: measured once, and the run says so.
        let canon = |p: &std::path::Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        let twin = found.iter().find_map(|f| {
            let p = f.details().path.map(PathBuf::from)?;
            (canon(&p) == canon(o.path())).then(|| p.display().to_string())
        });
        match twin {
            Some(p) => missing.push(Unavailable {
                name: format!("openssl@{}", path.display()),
                reason: format!("the same library as {p}: measured once"),
            }),
            None => found.push(Box::new(o)),
        }
    }
    #[cfg(feature = "aws-lc")]
    found.push(Box::new(aws_lc::AwsLc));
    #[cfg(all(not(feature = "aws-lc"), not(target_arch = "mips")))]
    missing.push(not_built("aws-lc", "aws-lc", ""));
    #[cfg(all(not(feature = "aws-lc"), target_arch = "mips"))]
    missing.push(Unavailable {
        name: "aws-lc".into(),
        reason: "AWS-LC does not support MIPS: no build of it can have it".into(),
    });
    found.push(Box::new(ring::Ring));
    found.push(Box::new(rustcrypto::RustCrypto));
    #[cfg(feature = "libsodium")]
    match libsodium::Libsodium::init() {
        Ok(s) => found.push(Box::new(s)),
        Err(reason) => missing.push(Unavailable {
            name: "libsodium".into(),
            reason: reason.to_string(),
        }),
    }
    #[cfg(not(feature = "libsodium"))]
    missing.push(not_built("libsodium", "libsodium", ""));
    #[cfg(feature = "boringssl")]
    found.push(Box::new(boringssl::BoringSsl));
    #[cfg(not(feature = "boringssl"))]
    missing.push(not_built("boringssl", "boringssl", " (needs libclang-dev)"));
    match af_alg::AfAlg::probe() {
        Ok(a) => found.push(Box::new(a)),
        Err(reason) => missing.push(Unavailable {
            name: "af_alg".into(),
            reason: reason.to_string(),
        }),
    }
    match cryptodev::Cryptodev::open() {
        Ok(c) => found.push(Box::new(c)),
        Err(reason) => missing.push(Unavailable {
            name: "cryptodev".into(),
            reason: reason.to_string(),
        }),
    }
    add_variants(&mut found, &mut missing, variants)?;
    Ok(Registry { found, missing })
}

/// A library this build was made without (a cargo feature off), and how to get it.
#[allow(dead_code)] // with every optional library built in, nothing is missing
fn not_built(name: &str, feature: &str, needs: &str) -> Unavailable {
    Unavailable {
        name: name.into(),
        reason: format!(
            "not in this build: rebuild with `cargo build --release --features {feature}`{needs}"
        ),
    }
}

/// The implementations that take a `--variant` spec.
pub fn variant_owners(spec: &str) -> Vec<&'static str> {
    let owners: [(&str, Understands); 2] = [
        ("openssl", openssl::understands_variant),
        ("af_alg", af_alg::understands_variant),
    ];
    owners
        .iter()
        .filter(|(_, u)| u(spec))
        .map(|(n, _)| *n)
        .collect()
}

/// Variants every implementation may understand, for the error message.
#[cfg(not(any(target_arch = "aarch64", target_arch = "arm")))]
pub const VARIANT_HELP: &str =
    "isa=no-aesni|no-avx512|no-avx2|<OPENSSL_ia32cap mask> (openssl), speed-loop (openssl), engine=afalg|devcrypto (openssl), driver=<kernel driver> (af_alg), zerocopy (af_alg)";
#[cfg(any(target_arch = "aarch64", target_arch = "arm"))]
pub const VARIANT_HELP: &str =
    "isa=no-neon|no-aes|no-sha|<OPENSSL_armcap value> (openssl), speed-loop (openssl), engine=afalg|devcrypto (openssl), driver=<kernel driver> (af_alg), zerocopy (af_alg)";

/// Whether an implementation understands a `--variant` spec.
type Understands = fn(&str) -> bool;

/// Adds, beside each base implementation, an instance per `--variant` it understands.
/// A variant nobody understands is an input error; one this machine cannot provide is
/// listed as unavailable with the reason.
fn add_variants(
    found: &mut Vec<Box<dyn Implementation>>,
    missing: &mut Vec<Unavailable>,
    variants: &[String],
) -> anyhow::Result<()> {
    for spec in variants {
        // A malformed switch is bad input whoever would take it.
        if let Some(value) = spec.strip_prefix("isa=") {
            openssl::isa::check_request(value)
                .map_err(|e| anyhow!("invalid --variant '{spec}': {e}"))?;
        }
        let mut understood = false;
        let base = found.len();
        for i in 0..base {
            match found[i].with_variant(spec) {
                Some(Ok(v)) => {
                    understood = true;
                    found.push(v);
                }
                Some(Err(reason)) => {
                    understood = true;
                    missing.push(Unavailable {
                        name: format!("{} [{spec}]", found[i].name()),
                        reason,
                    });
                }
                None => {}
            }
        }
        // A variant of an implementation this machine lacks: unavailable, with its reason.
        let owners: [(&str, Understands); 2] = [
            ("openssl", openssl::understands_variant),
            ("af_alg", af_alg::understands_variant),
        ];
        for (name, understands) in owners {
            if understood || !understands(spec) {
                continue;
            }
            if let Some(u) = missing.iter().find(|u| u.name == name).cloned() {
                understood = true;
                missing.push(Unavailable {
                    name: format!("{name} [{spec}]"),
                    reason: u.reason,
                });
            }
        }
        if !understood {
            return Err(anyhow!(
                "unknown --variant '{spec}': use one of {VARIANT_HELP}"
            ));
        }
    }
    Ok(())
}
