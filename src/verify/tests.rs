//! The verify function set against a path that is wrong in the way Wycheproof's invalid
//! vectors exist to catch: an AES-GCM open that decrypts without checking the tag.
// The tag-skipping implementation below serves only the Wycheproof test.
#![cfg_attr(not(feature = "wycheproof"), allow(dead_code))]

use super::*;
use crate::algorithms::Direction;
use crate::impls::rustcrypto::RustCrypto;
use crate::impls::{Io, Operation};
use aes::cipher::{KeyIvInit, StreamCipher};

/// AES-128-GCM whose seal is RustCrypto's and whose open is GCM's keystream alone
/// (CTR from nonce || 2), with no tag check.
struct NoTagCheck;

struct OpenWithoutTag(Vec<u8>);

impl Operation for OpenWithoutTag {
    fn process(&mut self, nonce: &[u8], _aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        let (buf, len) = io.into_in_place();
        let n = len - crate::algorithms::TAG_LEN;
        let mut iv = [0u8; 16];
        iv[..12].copy_from_slice(nonce);
        iv[15] = 2;
        ctr::Ctr32BE::<aes::Aes128>::new_from_slices(&self.0, &iv)?.apply_keystream(&mut buf[..n]);
        Ok(n)
    }
}

impl Implementation for NoTagCheck {
    fn name(&self) -> &str {
        "no-tag-check"
    }
    fn version(&self) -> String {
        "test".into()
    }
    fn support(&self, alg: Algorithm) -> Support {
        match alg {
            Algorithm::Aes128Gcm => Support::Yes,
            _ => Support::No("test path".into()),
        }
    }
}

impl crate::impls::Symmetric for NoTagCheck {
    fn prepare(
        &self,
        alg: Algorithm,
        dir: Direction,
        key: &[u8],
    ) -> anyhow::Result<Box<dyn Operation>> {
        match dir {
            Direction::Enc => RustCrypto.prepare(alg, dir, key),
            _ => Ok(Box::new(OpenWithoutTag(key.to_vec()))),
        }
    }
}

#[test]
#[cfg(feature = "wycheproof")]
fn an_open_that_skips_the_tag_fails_every_invalid_vector_by_name() {
    let t = wycheproof::check(&NoTagCheck, Algorithm::Aes128Gcm).expect("aes_gcm has vectors");
    // Every valid vector decrypts right (the keystream is GCM's)...
    assert!(t.passed >= 40, "{t:#?}");
    // ...and every invalid one with a 12-byte nonce is accepted: each named.
    assert!(t.failed.len() >= 20, "{t:#?}");
    for f in &t.failed {
        assert!(f.vector.starts_with("wycheproof aes_gcm tcId "), "{f:?}");
        assert!(f.problem.contains("invalid vector was accepted"), "{f:?}");
    }
    assert!(t.failed.iter().any(|f| !f.comment.is_empty()));
    // The gate's known answers catch it too (the forged tag).
    let e = kat::known_answers(&NoTagCheck, Algorithm::Aes128Gcm).unwrap_err();
    assert!(e.to_string().contains("forged tag was accepted"), "{e}");
}

#[test]
fn the_gate_and_verify_share_the_known_answers_and_round_trip() {
    let reg = crate::impls::registry(&[], &[]).expect("registry");
    let rc = reg
        .found
        .iter()
        .position(|i| i.name() == "rustcrypto")
        .unwrap();
    let algs = [Algorithm::Aes128Gcm, Algorithm::Sha256];
    let (gate, _) = check_paths(&reg.found, &[rc], &algs, Suite::GATE);
    let (full, _) = check_paths(&reg.found, &[rc], &algs, Suite::ALL);
    for (g, f) in gate.iter().zip(&full) {
        assert_eq!(g.known_answers.passed, f.known_answers.passed);
        assert_eq!(
            g.round_trip.as_ref().map(|t| t.passed),
            f.round_trip.as_ref().map(|t| t.passed)
        );
        assert!(g.wycheproof.is_none());
        let vectors = cfg!(feature = "wycheproof") && f.alg == Algorithm::Aes128Gcm;
        assert_eq!(vectors, f.wycheproof.is_some());
    }
}
