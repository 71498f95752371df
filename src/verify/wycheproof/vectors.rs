//! What every family's file shares: the Wycheproof files in the binary, read and parsed
//! once, the names of their vectors, and how a public-key vector is judged.

use crate::algorithms::{Algorithm, Direction};
use crate::impls::Implementation;
use crate::kat::run_twice;
use crate::kat::tally::Tally;
use anyhow::anyhow;
use std::fmt::Debug;
use std::sync::OnceLock;
use wycheproof::TestResult;

/// The catalogue's algorithms whose name ends with `mode` (e.g. "-gcm"): the key sizes a
/// file's vectors can go to.
pub(super) fn catalogue_aes(mode: &str) -> Vec<Algorithm> {
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
pub(super) fn load<T: serde::de::DeserializeOwned>(file: &str) -> anyhow::Result<T> {
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
pub(super) fn cached<T: serde::de::DeserializeOwned>(
    cell: &'static OnceLock<Result<T, String>>,
    file: &str,
) -> anyhow::Result<&'static T> {
    cached_with(cell, file, || load(file))
}

/// What `make` derives from a file (e.g. its vectors in one shape), once per process.
pub(super) fn cached_with<T>(
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
pub(super) fn uncovered_keys(
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
pub(super) fn vector_name(file: &str, tc_id: usize) -> String {
    format!("wycheproof {file} tcId {tc_id}")
}

/// A valid vector: the path must give `expect` for `input`, in `dir`.
pub(super) fn expect_output(
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
pub(super) enum Outcome {
    /// Accepted, with the file's output where there is one.
    Accepted,
    /// Accepted, with another output than the file's.
    Wrong(String),
    /// Refused: an error from the key import, verify, derive or decaps.
    Refused(String),
}

/// One vector of a public-key file: its tcId, comment, flags and Wycheproof's verdict.
pub(super) struct Case {
    tc_id: usize,
    comment: String,
    result: TestResult,
    /// Its flags as one label, e.g. "LowOrderPublic,ZeroSharedSecret".
    flags: String,
}

impl Case {
    pub(super) fn of<F: Debug>(
        tc_id: usize,
        comment: &str,
        result: TestResult,
        flags: &[F],
    ) -> Self {
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
pub(super) fn judge(t: &mut Tally, file: &str, c: &Case, outcome: Outcome) {
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
pub(super) fn same_secret(got: Vec<u8>, expect: &[u8]) -> Outcome {
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
