//! aws-lc's public-key operations: RSA, ECDSA, Ed25519, X25519, ECDH, ML-KEM-768, ML-DSA-65
//! and the TLS hybrid X25519MLKEM768 (built from its own ML-KEM and X25519).

use crate::algorithms::Algorithm;
use crate::impls::pkey::{self, hybrid, is_pss, KeyPair, PublicKey};
use anyhow::anyhow;
use aws_lc_rs::agreement::{self, UnparsedPublicKey as PeerKey};
use aws_lc_rs::kem::{Ciphertext, DecapsulationKey, EncapsulationKey, ML_KEM_768};
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::rsa;
use aws_lc_rs::signature::{self, KeyPair as _, UnparsedPublicKey};

const LIB: &str = "aws-lc";

/// Every public-key algorithm but DSA, which aws-lc-rs does not expose.
pub fn offers(alg: Algorithm) -> bool {
    alg.kind().is_public_key() && pkey::dsa::dsa_bits(alg).is_none()
}

fn verification(alg: Algorithm) -> &'static dyn signature::VerificationAlgorithm {
    match alg {
        Algorithm::EcdsaP256 => &signature::ECDSA_P256_SHA256_ASN1,
        Algorithm::EcdsaP384 => &signature::ECDSA_P384_SHA384_ASN1,
        Algorithm::Ed25519 => &signature::ED25519,
        Algorithm::MlDsa65 => &signature::ML_DSA_65,
        a if is_pss(a) => &signature::RSA_PSS_2048_8192_SHA256,
        _ => &signature::RSA_PKCS1_2048_8192_SHA256,
    }
}

fn agreement_alg(alg: Algorithm) -> &'static agreement::Algorithm {
    if alg == Algorithm::X25519 {
        &agreement::X25519
    } else {
        &agreement::ECDH_P256
    }
}

enum Signer {
    Rsa(rsa::KeyPair, &'static dyn signature::RsaEncoding),
    Ecdsa(signature::EcdsaKeyPair),
    Ed25519(signature::Ed25519KeyPair),
    MlDsa(signature::PqdsaKeyPair),
}

struct SignKeyPair {
    signer: Signer,
    rng: SystemRandom,
}

impl KeyPair for SignKeyPair {
    fn public_key(&self) -> Vec<u8> {
        match &self.signer {
            Signer::Rsa(k, _) => k.public_key().as_ref().to_vec(),
            Signer::Ecdsa(k) => k.public_key().as_ref().to_vec(),
            Signer::Ed25519(k) => k.public_key().as_ref().to_vec(),
            Signer::MlDsa(k) => k.public_key().as_ref().to_vec(),
        }
    }
    fn sign(&mut self, msg: &[u8]) -> anyhow::Result<Vec<u8>> {
        let failed = |_| anyhow!("aws-lc could not sign");
        match &self.signer {
            Signer::Rsa(k, enc) => {
                let mut sig = vec![0u8; k.public_modulus_len()];
                k.sign(*enc, &self.rng, msg, &mut sig).map_err(failed)?;
                Ok(sig)
            }
            Signer::Ecdsa(k) => Ok(k.sign(&self.rng, msg).map_err(failed)?.as_ref().to_vec()),
            Signer::Ed25519(k) => Ok(k.sign(msg).as_ref().to_vec()),
            // Hedged signing (FIPS 204's default): aws-lc offers no deterministic variant.
            Signer::MlDsa(k) => {
                let mut sig = vec![0u8; k.algorithm().signature_len()];
                let n = k.sign(msg, &mut sig).map_err(failed)?;
                sig.truncate(n);
                Ok(sig)
            }
        }
    }
}

struct AgreeKeyPair {
    key: agreement::PrivateKey,
    alg: &'static agreement::Algorithm,
}

impl KeyPair for AgreeKeyPair {
    fn public_key(&self) -> Vec<u8> {
        self.key
            .compute_public_key()
            .map(|p| p.as_ref().to_vec())
            .unwrap_or_default()
    }
    fn derive(&mut self, peer: &[u8]) -> anyhow::Result<Vec<u8>> {
        agreement::agree(
            &self.key,
            PeerKey::new(self.alg, peer),
            anyhow!("aws-lc rejected the peer's public key"),
            |s| Ok(s.to_vec()),
        )
    }
}

struct KemKeyPair(DecapsulationKey<aws_lc_rs::kem::AlgorithmId>);

impl KeyPair for KemKeyPair {
    fn public_key(&self) -> Vec<u8> {
        self.0
            .encapsulation_key()
            .and_then(|k| k.key_bytes().map(|b| b.as_ref().to_vec()))
            .unwrap_or_default()
    }
    fn decaps(&mut self, ciphertext: &[u8]) -> anyhow::Result<Vec<u8>> {
        let ss = self
            .0
            .decapsulate(Ciphertext::from(ciphertext))
            .map_err(|_| "aws-lc could not decapsulate".to_string())
            .map_err(anyhow::Error::msg)?;
        Ok(ss.as_ref().to_vec())
    }
    fn keygen(&mut self) -> anyhow::Result<()> {
        DecapsulationKey::generate(&ML_KEM_768)
            .map(drop)
            .map_err(|_| anyhow!("aws-lc could not generate an ML-KEM key"))
    }
}

struct Verifier(UnparsedPublicKey<Vec<u8>>);

impl PublicKey for Verifier {
    fn verify(&mut self, msg: &[u8], sig: &[u8]) -> anyhow::Result<()> {
        self.0
            .verify(msg, sig)
            .map_err(|_| anyhow!("aws-lc: the signature does not verify"))
    }
}

struct Encapsulator(EncapsulationKey<aws_lc_rs::kem::AlgorithmId>);

impl PublicKey for Encapsulator {
    fn encaps(&mut self) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
        let (ct, ss) = self
            .0
            .encapsulate()
            .map_err(|_| "aws-lc could not encapsulate".to_string())
            .map_err(anyhow::Error::msg)?;
        Ok((ct.as_ref().to_vec(), ss.as_ref().to_vec()))
    }
}

pub fn key_pair(alg: Algorithm, private: Option<&[u8]>) -> anyhow::Result<Box<dyn KeyPair>> {
    let rejected = |e: aws_lc_rs::error::KeyRejected| anyhow!("aws-lc rejected the {alg} key: {e}");
    let failed = |_| anyhow!("aws-lc could not generate a {alg} key");
    let signer = match alg {
        Algorithm::Ed25519 => {
            let seed = match private {
                Some(s) => s.to_vec(),
                None => pkey::random_bytes(32)?,
            };
            Signer::Ed25519(
                signature::Ed25519KeyPair::from_seed_unchecked(&seed).map_err(rejected)?,
            )
        }
        Algorithm::MlDsa65 => {
            let sa = &signature::ML_DSA_65_SIGNING;
            Signer::MlDsa(match private {
                Some(seed) => signature::PqdsaKeyPair::from_seed(sa, seed).map_err(rejected)?,
                None => signature::PqdsaKeyPair::generate(sa).map_err(failed)?,
            })
        }
        Algorithm::X25519MlKem768 => return hybrid::key_pair(PARTS, private),
        Algorithm::EcdsaP256 | Algorithm::EcdsaP384 => {
            let sa = if alg == Algorithm::EcdsaP256 {
                &signature::ECDSA_P256_SHA256_ASN1_SIGNING
            } else {
                &signature::ECDSA_P384_SHA384_ASN1_SIGNING
            };
            Signer::Ecdsa(match private {
                Some(der) => signature::EcdsaKeyPair::from_pkcs8(sa, der).map_err(rejected)?,
                None => signature::EcdsaKeyPair::generate(sa).map_err(failed)?,
            })
        }
        Algorithm::X25519 | Algorithm::EcdhP256 => {
            let a = agreement_alg(alg);
            let key = match private {
                Some(raw) => agreement::PrivateKey::from_private_key(a, raw).map_err(rejected)?,
                None => agreement::PrivateKey::generate(a).map_err(failed)?,
            };
            return Ok(Box::new(AgreeKeyPair { key, alg: a }));
        }
        Algorithm::MlKem768 => {
            let key = match private {
                Some(raw) => DecapsulationKey::new(&ML_KEM_768, raw).map_err(rejected)?,
                None => DecapsulationKey::generate(&ML_KEM_768).map_err(failed)?,
            };
            return Ok(Box::new(KemKeyPair(key)));
        }
        a => {
            let (bits, der) = pkey::rsa_key(LIB, a, private)?;
            let k = rsa::KeyPair::from_pkcs8(&der).map_err(rejected)?;
            if k.public_modulus_len() * 8 != bits {
                return Err(anyhow!(
                    "the key has {} bits, not {bits}",
                    k.public_modulus_len() * 8
                ));
            }
            let enc: &'static dyn signature::RsaEncoding = if is_pss(a) {
                &signature::RSA_PSS_SHA256
            } else {
                &signature::RSA_PKCS1_SHA256
            };
            Signer::Rsa(k, enc)
        }
    };
    Ok(Box::new(SignKeyPair {
        signer,
        rng: SystemRandom::new(),
    }))
}

/// aws-lc's own ML-KEM-768 and X25519, for the hybrid.
const PARTS: hybrid::Parts = hybrid::Parts {
    key_pair,
    public_key,
};

pub fn public_key(alg: Algorithm, public: &[u8]) -> anyhow::Result<Box<dyn PublicKey>> {
    if alg == Algorithm::X25519MlKem768 {
        return hybrid::public_key(PARTS, public);
    }
    if alg == Algorithm::MlKem768 {
        let k = EncapsulationKey::new(&ML_KEM_768, public)
            .map_err(|e| anyhow!("aws-lc rejected the ML-KEM public key: {e}"))?;
        return Ok(Box::new(Encapsulator(k)));
    }
    if !matches!(alg.kind(), crate::algorithms::Kind::Signature) {
        return Err(anyhow!("{alg} has no public-key operation of its own"));
    }
    Ok(Box::new(Verifier(UnparsedPublicKey::new(
        verification(alg),
        public.to_vec(),
    ))))
}
