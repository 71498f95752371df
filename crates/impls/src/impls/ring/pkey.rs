//! ring's public-key operations: RSA (sign with an imported key), ECDSA, Ed25519, X25519
//! and ECDH P-256.
//!
//! RSA: ring signs with the fixed key of each size that every library is timed with
//! (pkey/rsa_keys.rs).
//! Its key-agreement keys are single-use (`EphemeralPrivateKey` is consumed by
//! `agree_ephemeral`), so after the first derive every derive generates a fresh key
//! pair first, as a TLS handshake does; `notes` says so.

use crate::algorithms::Algorithm;
use crate::impls::pkey::{self, is_pss, KeyPair, PublicKey};
use anyhow::anyhow;
use ring::agreement::{self, EphemeralPrivateKey, UnparsedPublicKey as PeerKey};
use ring::rand::SystemRandom;
use ring::signature::{self, KeyPair as _, UnparsedPublicKey};

const LIB: &str = "ring";

pub fn support(alg: Algorithm) -> Option<String> {
    match alg {
        Algorithm::MlKem768 => Some("ring offers no ML-KEM".into()),
        Algorithm::MlDsa65 => Some("ring offers no ML-DSA".into()),
        Algorithm::Dsa2048 | Algorithm::Dsa3072 => Some("ring offers no DSA".into()),
        Algorithm::X25519MlKem768 => {
            Some("ring offers no ML-KEM, the other half of X25519MLKEM768".into())
        }
        _ => None,
    }
}

pub const DERIVE_NOTE: &str = "ring's key-agreement keys are single-use: each derive includes generating ring's own ephemeral key pair";

fn verification(alg: Algorithm) -> &'static dyn signature::VerificationAlgorithm {
    match alg {
        Algorithm::EcdsaP256 => &signature::ECDSA_P256_SHA256_ASN1,
        Algorithm::EcdsaP384 => &signature::ECDSA_P384_SHA384_ASN1,
        Algorithm::Ed25519 => &signature::ED25519,
        a if is_pss(a) => &signature::RSA_PSS_2048_8192_SHA256,
        _ => &signature::RSA_PKCS1_2048_8192_SHA256,
    }
}

enum Signer {
    Rsa(signature::RsaKeyPair, &'static dyn signature::RsaEncoding),
    Ecdsa(signature::EcdsaKeyPair),
    Ed25519(signature::Ed25519KeyPair),
}

struct SignKeyPair {
    signer: Signer,
    rng: SystemRandom,
}

impl KeyPair for SignKeyPair {
    fn public_key(&self) -> Vec<u8> {
        match &self.signer {
            Signer::Rsa(k, _) => k.public().as_ref().to_vec(),
            Signer::Ecdsa(k) => k.public_key().as_ref().to_vec(),
            Signer::Ed25519(k) => k.public_key().as_ref().to_vec(),
        }
    }
    fn sign(&mut self, msg: &[u8]) -> anyhow::Result<Vec<u8>> {
        let failed = |_| anyhow!("ring could not sign");
        match &self.signer {
            Signer::Rsa(k, enc) => {
                let mut sig = vec![0u8; k.public().modulus_len()];
                k.sign(*enc, &self.rng, msg, &mut sig).map_err(failed)?;
                Ok(sig)
            }
            Signer::Ecdsa(k) => Ok(k.sign(&self.rng, msg).map_err(failed)?.as_ref().to_vec()),
            Signer::Ed25519(k) => Ok(k.sign(msg).as_ref().to_vec()),
        }
    }
}

struct AgreeKeyPair {
    alg: &'static agreement::Algorithm,
    /// The key whose public half `public_key` reports, until the first derive uses it.
    first: Option<EphemeralPrivateKey>,
    public: Vec<u8>,
    rng: SystemRandom,
}

impl KeyPair for AgreeKeyPair {
    fn public_key(&self) -> Vec<u8> {
        self.public.clone()
    }
    fn derive(&mut self, peer: &[u8]) -> anyhow::Result<Vec<u8>> {
        let key = match self.first.take() {
            Some(k) => k,
            None => EphemeralPrivateKey::generate(self.alg, &self.rng)
                .map_err(|_| "ring could not generate a key".to_string())
                .map_err(anyhow::Error::msg)?,
        };
        agreement::agree_ephemeral(key, &PeerKey::new(self.alg, peer), |s| s.to_vec())
            .map_err(|_| anyhow!("ring rejected the peer's public key"))
    }
}

struct Verifier(UnparsedPublicKey<Vec<u8>>);

impl PublicKey for Verifier {
    fn verify(&mut self, msg: &[u8], sig: &[u8]) -> anyhow::Result<()> {
        self.0
            .verify(msg, sig)
            .map_err(|_| anyhow!("ring: the signature does not verify"))
    }
}

pub fn key_pair(alg: Algorithm, private: Option<&[u8]>) -> anyhow::Result<Box<dyn KeyPair>> {
    let rng = SystemRandom::new();
    let rejected = |e: ring::error::KeyRejected| anyhow!("ring rejected the {alg} key: {e}");
    let failed = |_| anyhow!("ring could not generate a {alg} key");
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
        Algorithm::EcdsaP256 | Algorithm::EcdsaP384 => {
            let sa = if alg == Algorithm::EcdsaP256 {
                &signature::ECDSA_P256_SHA256_ASN1_SIGNING
            } else {
                &signature::ECDSA_P384_SHA384_ASN1_SIGNING
            };
            let der = match private {
                Some(d) => d.to_vec(),
                None => signature::EcdsaKeyPair::generate_pkcs8(sa, &rng)
                    .map_err(failed)?
                    .as_ref()
                    .to_vec(),
            };
            Signer::Ecdsa(signature::EcdsaKeyPair::from_pkcs8(sa, &der, &rng).map_err(rejected)?)
        }
        Algorithm::X25519 | Algorithm::EcdhP256 => {
            if private.is_some() {
                return Err(anyhow!(
                    "ring cannot import a {alg} private key (its key-agreement keys are ephemeral)"
                ));
            }
            let a = if alg == Algorithm::X25519 {
                &agreement::X25519
            } else {
                &agreement::ECDH_P256
            };
            let first = EphemeralPrivateKey::generate(a, &rng).map_err(failed)?;
            let public = first
                .compute_public_key()
                .map_err(failed)?
                .as_ref()
                .to_vec();
            return Ok(Box::new(AgreeKeyPair {
                alg: a,
                first: Some(first),
                public,
                rng,
            }));
        }
        a => {
            let (_, der) = pkey::rsa_key(LIB, a, private)?;
            let k = signature::RsaKeyPair::from_pkcs8(&der).map_err(rejected)?;
            let enc: &'static dyn signature::RsaEncoding = if is_pss(a) {
                &signature::RSA_PSS_SHA256
            } else {
                &signature::RSA_PKCS1_SHA256
            };
            Signer::Rsa(k, enc)
        }
    };
    Ok(Box::new(SignKeyPair { signer, rng }))
}

pub fn public_key(alg: Algorithm, public: &[u8]) -> anyhow::Result<Box<dyn PublicKey>> {
    if alg.kind() != crate::algorithms::Kind::Signature {
        return Err(anyhow!("ring has no {alg} public-key operation"));
    }
    Ok(Box::new(Verifier(UnparsedPublicKey::new(
        verification(alg),
        public.to_vec(),
    ))))
}
