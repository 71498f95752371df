//! RustCrypto's public-key operations: rsa, dsa, p256 (ECDSA and ECDH), p384, ed25519-dalek,
//! x25519-dalek, ml-kem, ml-dsa, and the TLS hybrid X25519MLKEM768 from x25519-dalek and
//! ml-kem.
//!
//! RSA and DSA keys are the fixed ones of pkey/rsa_keys.rs and pkey/dsa.rs, which every
//! library is timed with (the rsa crate's 4096-bit key generation takes seconds, a minute
//! under qemu-mipsel; the dsa crate's parameter generation takes minutes). DSA and ECDSA sign deterministically
//! (RFC 6979), and so
//! does ML-DSA (FIPS 204's deterministic variant, the only one ml-dsa's `Signer` offers).

use crate::algorithms::Algorithm;
use crate::impls::pkey::dsa::shared_dsa_pkcs8;
use crate::impls::pkey::{self, hybrid, is_pss, rsa_bits, KeyPair, PublicKey};
use anyhow::anyhow;
use dsa::pkcs8::{DecodePublicKey, EncodePublicKey};
use ml_kem::kem::{Decapsulate, Encapsulate};
use ml_kem::{EncodedSizeUser, KemCore, MlKem768};
use p256::elliptic_curve::sec1::ToEncodedPoint;
use rand_core_06::OsRng;
use rsa::pkcs1::{DecodeRsaPublicKey, EncodeRsaPublicKey};
use rsa::pkcs8::DecodePrivateKey;
use rsa::signature::{RandomizedSigner, SignatureEncoding, Signer, Verifier};
use sha2_10::Sha256;

type MlKemDk = <MlKem768 as KemCore>::DecapsulationKey;
type MlKemEk = <MlKem768 as KemCore>::EncapsulationKey;
type MlDsaSk = ml_dsa::SigningKey<ml_dsa::MlDsa65>;
type MlDsaVk = ml_dsa::VerifyingKey<ml_dsa::MlDsa65>;

fn bad<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> String {
    move |e| format!("rustcrypto: {what}: {e}")
}

fn array<const N: usize>(b: &[u8], what: &str) -> anyhow::Result<[u8; N]> {
    b.try_into()
        .map_err(|_| anyhow!("{what} must be {N} bytes, got {}", b.len()))
}

enum Signing {
    Pkcs1(rsa::pkcs1v15::SigningKey<Sha256>, Vec<u8>),
    Pss(rsa::pss::SigningKey<Sha256>, Vec<u8>),
    P256(p256::ecdsa::SigningKey),
    P384(p384::ecdsa::SigningKey),
    Ed25519(ed25519_dalek::SigningKey),
    MlDsa(Box<MlDsaSk>),
    Dsa(Box<dsa::SigningKey>),
}

impl KeyPair for Signing {
    fn public_key(&self) -> Vec<u8> {
        match self {
            Signing::Pkcs1(_, p) | Signing::Pss(_, p) => p.clone(),
            Signing::P256(k) => k
                .verifying_key()
                .to_encoded_point(false)
                .as_bytes()
                .to_vec(),
            Signing::P384(k) => k
                .verifying_key()
                .to_encoded_point(false)
                .as_bytes()
                .to_vec(),
            Signing::Ed25519(k) => k.verifying_key().to_bytes().to_vec(),
            Signing::MlDsa(k) => ml_dsa::Keypair::verifying_key(&**k).encode().to_vec(),
            Signing::Dsa(k) => k
                .verifying_key()
                .to_public_key_der()
                .map(|d| d.as_bytes().to_vec())
                .unwrap_or_default(),
        }
    }
    fn sign(&mut self, msg: &[u8]) -> anyhow::Result<Vec<u8>> {
        Ok(match self {
            Signing::Pkcs1(k, _) => k.sign(msg).to_vec(),
            Signing::Pss(k, _) => k.sign_with_rng(&mut OsRng, msg).to_vec(),
            Signing::P256(k) => {
                let s: p256::ecdsa::Signature = k.sign(msg);
                s.to_der().as_bytes().to_vec()
            }
            Signing::P384(k) => {
                let s: p384::ecdsa::Signature = k.sign(msg);
                s.to_der().as_bytes().to_vec()
            }
            Signing::Ed25519(k) => k.sign(msg).to_bytes().to_vec(),
            Signing::MlDsa(k) => ml_dsa::Signer::try_sign(&**k, msg)
                .map_err(bad("ML-DSA signing"))
                .map_err(anyhow::Error::msg)?
                .encode()
                .to_vec(),
            Signing::Dsa(k) => k
                .try_sign(msg)
                .map_err(bad("DSA signing"))
                .map_err(anyhow::Error::msg)?
                .to_vec(),
        })
    }
}

enum Verifying {
    Pkcs1(rsa::pkcs1v15::VerifyingKey<Sha256>),
    Pss(rsa::pss::VerifyingKey<Sha256>),
    P256(p256::ecdsa::VerifyingKey),
    P384(p384::ecdsa::VerifyingKey),
    Ed25519(ed25519_dalek::VerifyingKey),
    MlDsa(Box<MlDsaVk>),
    MlKem(Box<MlKemEk>),
    Dsa(Box<dsa::VerifyingKey>),
}

impl PublicKey for Verifying {
    fn verify(&mut self, msg: &[u8], sig: &[u8]) -> anyhow::Result<()> {
        let no =
            |e: rsa::signature::Error| anyhow!("rustcrypto: the signature does not verify: {e}");
        match self {
            Verifying::Pkcs1(k) => k.verify(msg, &sig.try_into().map_err(no)?).map_err(no),
            Verifying::Pss(k) => k.verify(msg, &sig.try_into().map_err(no)?).map_err(no),
            Verifying::P256(k) => k
                .verify(msg, &p256::ecdsa::Signature::from_der(sig).map_err(no)?)
                .map_err(no),
            Verifying::P384(k) => k
                .verify(msg, &p384::ecdsa::Signature::from_der(sig).map_err(no)?)
                .map_err(no),
            Verifying::Ed25519(k) => {
                let s = ed25519_dalek::Signature::from_bytes(&array(sig, "an Ed25519 signature")?);
                k.verify(msg, &s).map_err(no)
            }
            Verifying::MlDsa(k) => {
                let s = ml_dsa::Signature::<ml_dsa::MlDsa65>::try_from(sig)
                    .map_err(bad("the ML-DSA signature does not decode"))
                    .map_err(anyhow::Error::msg)?;
                k.verify_with_context(msg, &[], &s)
                    .then_some(())
                    .ok_or_else(|| anyhow!("rustcrypto: the signature does not verify"))
            }
            Verifying::Dsa(k) => k
                .verify(msg, &dsa::Signature::try_from(sig).map_err(no)?)
                .map_err(no),
            Verifying::MlKem(_) => Err(anyhow!("an ML-KEM key does not verify")),
        }
    }
    fn encaps(&mut self) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
        let Verifying::MlKem(ek) = self else {
            return Err(anyhow!("this key does not encapsulate"));
        };
        let (ct, ss) = ek
            .encapsulate(&mut OsRng)
            .map_err(|()| "rustcrypto could not encapsulate".to_string())
            .map_err(anyhow::Error::msg)?;
        Ok((ct.to_vec(), ss.to_vec()))
    }
}

enum Agreeing {
    X25519(x25519_dalek::StaticSecret),
    P256(p256::SecretKey),
}

impl KeyPair for Agreeing {
    fn public_key(&self) -> Vec<u8> {
        match self {
            Agreeing::X25519(s) => x25519_dalek::PublicKey::from(s).as_bytes().to_vec(),
            Agreeing::P256(s) => s.public_key().to_encoded_point(false).as_bytes().to_vec(),
        }
    }
    fn derive(&mut self, peer: &[u8]) -> anyhow::Result<Vec<u8>> {
        match self {
            Agreeing::X25519(s) => {
                let p = x25519_dalek::PublicKey::from(array::<32>(peer, "an X25519 public key")?);
                Ok(s.diffie_hellman(&p).as_bytes().to_vec())
            }
            Agreeing::P256(s) => {
                let p = p256::PublicKey::from_sec1_bytes(peer)
                    .map_err(bad("the peer's P-256 public key"))
                    .map_err(anyhow::Error::msg)?;
                let shared = p256::ecdh::diffie_hellman(s.to_nonzero_scalar(), p.as_affine());
                Ok(shared.raw_secret_bytes().to_vec())
            }
        }
    }
}

struct Decapsulating(Box<MlKemDk>);

impl KeyPair for Decapsulating {
    fn public_key(&self) -> Vec<u8> {
        self.0.encapsulation_key().as_bytes().to_vec()
    }
    fn decaps(&mut self, ciphertext: &[u8]) -> anyhow::Result<Vec<u8>> {
        let ct = ml_kem::Ciphertext::<MlKem768>::try_from(ciphertext).map_err(|_| {
            anyhow!(
                "an ML-KEM-768 ciphertext has 1088 bytes, not {}",
                ciphertext.len()
            )
        })?;
        let ss = self
            .0
            .decapsulate(&ct)
            .map_err(|()| "rustcrypto could not decapsulate".to_string())
            .map_err(anyhow::Error::msg)?;
        Ok(ss.to_vec())
    }
    fn keygen(&mut self) -> anyhow::Result<()> {
        std::hint::black_box(MlKem768::generate(&mut OsRng));
        Ok(())
    }
}

pub fn key_pair(alg: Algorithm, private: Option<&[u8]>) -> anyhow::Result<Box<dyn KeyPair>> {
    let random32 = || pkey::random_bytes(32);
    Ok(match alg {
        Algorithm::Ed25519 => {
            let seed = match private {
                Some(s) => array(s, "an Ed25519 seed")?,
                None => array(&random32()?, "a seed")?,
            };
            Box::new(Signing::Ed25519(ed25519_dalek::SigningKey::from_bytes(
                &seed,
            )))
        }
        Algorithm::MlDsa65 => {
            let seed = match private {
                Some(s) => array(s, "an ML-DSA seed")?,
                None => array(&random32()?, "a seed")?,
            };
            Box::new(Signing::MlDsa(Box::new(MlDsaSk::from_seed(&seed.into()))))
        }
        Algorithm::X25519MlKem768 => return hybrid::key_pair(PARTS, private),
        Algorithm::Dsa2048 | Algorithm::Dsa3072 => {
            let der = match private {
                Some(d) => d.to_vec(),
                None => {
                    shared_dsa_pkcs8(alg).ok_or_else(|| pkey::not_offered("rustcrypto", alg))?
                }
            };
            Box::new(Signing::Dsa(Box::new(
                dsa::SigningKey::from_pkcs8_der(&der)
                    .map_err(bad("DSA PKCS#8"))
                    .map_err(anyhow::Error::msg)?,
            )))
        }
        Algorithm::EcdsaP256 => Box::new(Signing::P256(match private {
            Some(der) => p256::ecdsa::SigningKey::from_pkcs8_der(der)
                .map_err(bad("P-256 PKCS#8"))
                .map_err(anyhow::Error::msg)?,
            None => p256::ecdsa::SigningKey::random(&mut OsRng),
        })),
        Algorithm::EcdsaP384 => Box::new(Signing::P384(match private {
            Some(der) => p384::ecdsa::SigningKey::from_pkcs8_der(der)
                .map_err(bad("P-384 PKCS#8"))
                .map_err(anyhow::Error::msg)?,
            None => p384::ecdsa::SigningKey::random(&mut OsRng),
        })),
        Algorithm::X25519 => {
            let raw = match private {
                Some(s) => array(s, "an X25519 private key")?,
                None => array(&random32()?, "a scalar")?,
            };
            Box::new(Agreeing::X25519(x25519_dalek::StaticSecret::from(raw)))
        }
        Algorithm::EcdhP256 => Box::new(Agreeing::P256(match private {
            Some(s) => p256::SecretKey::from_slice(s)
                .map_err(bad("P-256 private scalar"))
                .map_err(anyhow::Error::msg)?,
            None => p256::SecretKey::random(&mut OsRng),
        })),
        Algorithm::MlKem768 => {
            let dk = match private {
                Some(b) => MlKemDk::from_bytes(&b.try_into().map_err(|_| {
                    anyhow!("an ML-KEM-768 private key has 2400 bytes, not {}", b.len())
                })?),
                None => MlKem768::generate(&mut OsRng).0,
            };
            Box::new(Decapsulating(Box::new(dk)))
        }
        a => {
            let (_, der) = pkey::rsa_key("rustcrypto", a, private)?;
            let key = rsa::RsaPrivateKey::from_pkcs8_der(&der)
                .map_err(bad("RSA PKCS#8"))
                .map_err(anyhow::Error::msg)?;
            let public = key
                .to_public_key()
                .to_pkcs1_der()
                .map_err(bad("RSA public key"))
                .map_err(anyhow::Error::msg)?
                .as_bytes()
                .to_vec();
            if is_pss(a) {
                Box::new(Signing::Pss(rsa::pss::SigningKey::new(key), public))
            } else {
                Box::new(Signing::Pkcs1(rsa::pkcs1v15::SigningKey::new(key), public))
            }
        }
    })
}

/// RustCrypto's own ML-KEM-768 and X25519, for the hybrid.
const PARTS: hybrid::Parts = hybrid::Parts {
    key_pair,
    public_key,
};

pub fn public_key(alg: Algorithm, public: &[u8]) -> anyhow::Result<Box<dyn PublicKey>> {
    Ok(Box::new(match alg {
        Algorithm::X25519MlKem768 => return hybrid::public_key(PARTS, public),
        Algorithm::MlDsa65 => {
            let enc =
                ml_dsa::EncodedVerifyingKey::<ml_dsa::MlDsa65>::try_from(public).map_err(|_| {
                    anyhow!(
                        "an ML-DSA-65 public key has 1952 bytes, not {}",
                        public.len()
                    )
                })?;
            Verifying::MlDsa(Box::new(MlDsaVk::decode(&enc)))
        }
        Algorithm::Ed25519 => Verifying::Ed25519(
            ed25519_dalek::VerifyingKey::from_bytes(&array(public, "an Ed25519 public key")?)
                .map_err(bad("Ed25519 public key"))
                .map_err(anyhow::Error::msg)?,
        ),
        Algorithm::Dsa2048 | Algorithm::Dsa3072 => Verifying::Dsa(Box::new(
            dsa::VerifyingKey::from_public_key_der(public)
                .map_err(bad("DSA public key"))
                .map_err(anyhow::Error::msg)?,
        )),
        Algorithm::EcdsaP256 => Verifying::P256(
            p256::ecdsa::VerifyingKey::from_sec1_bytes(public)
                .map_err(bad("P-256 public key"))
                .map_err(anyhow::Error::msg)?,
        ),
        Algorithm::EcdsaP384 => Verifying::P384(
            p384::ecdsa::VerifyingKey::from_sec1_bytes(public)
                .map_err(bad("P-384 public key"))
                .map_err(anyhow::Error::msg)?,
        ),
        Algorithm::MlKem768 => Verifying::MlKem(Box::new(MlKemEk::from_bytes(
            &public.try_into().map_err(|_| {
                anyhow!(
                    "an ML-KEM-768 public key has 1184 bytes, not {}",
                    public.len()
                )
            })?,
        ))),
        a if rsa_bits(a).is_some() => {
            let k = rsa::RsaPublicKey::from_pkcs1_der(public)
                .map_err(bad("RSA public key"))
                .map_err(anyhow::Error::msg)?;
            if is_pss(a) {
                Verifying::Pss(rsa::pss::VerifyingKey::new(k))
            } else {
                Verifying::Pkcs1(rsa::pkcs1v15::VerifyingKey::new(k))
            }
        }
        a => return Err(anyhow!("rustcrypto has no {a} public-key operation")),
    }))
}
