//! libsodium's public-key operations: Ed25519 (`crypto_sign`) and X25519
//! (`crypto_scalarmult`, the raw shared secret as RFC 7748 defines it).

use crate::algorithms::Algorithm;
use crate::impls::pkey::{self, KeyPair, PublicKey};
use anyhow::anyhow;
use libsodium_sys as sodium;

pub fn offers(alg: Algorithm) -> bool {
    matches!(alg, Algorithm::Ed25519 | Algorithm::X25519)
}

fn exact<const N: usize>(b: &[u8], what: &str) -> anyhow::Result<[u8; N]> {
    b.try_into()
        .map_err(|_| anyhow!("{what} must be {N} bytes, got {}", b.len()))
}

struct Ed25519 {
    /// libsodium's 64-byte secret key: seed || public key.
    secret: [u8; 64],
    public: [u8; 32],
}

impl KeyPair for Ed25519 {
    fn public_key(&self) -> Vec<u8> {
        self.public.to_vec()
    }
    fn sign(&mut self, msg: &[u8]) -> anyhow::Result<Vec<u8>> {
        let mut sig = vec![0u8; 64];
        // SAFETY: sig has 64 bytes, msg is valid for its length, secret is 64 bytes.
        let rc = unsafe {
            sodium::crypto_sign_detached(
                sig.as_mut_ptr(),
                std::ptr::null_mut(),
                msg.as_ptr(),
                msg.len() as u64,
                self.secret.as_ptr(),
            )
        };
        if rc != 0 {
            return Err(anyhow!("crypto_sign_detached failed"));
        }
        Ok(sig)
    }
}

struct X25519 {
    scalar: [u8; 32],
}

impl KeyPair for X25519 {
    fn public_key(&self) -> Vec<u8> {
        let mut p = [0u8; 32];
        // SAFETY: both buffers are 32 bytes.
        unsafe { sodium::crypto_scalarmult_base(p.as_mut_ptr(), self.scalar.as_ptr()) };
        p.to_vec()
    }
    fn derive(&mut self, peer: &[u8]) -> anyhow::Result<Vec<u8>> {
        let peer: [u8; 32] = exact(peer, "an X25519 public key")?;
        let mut s = vec![0u8; 32];
        // SAFETY: all three buffers are 32 bytes.
        let rc = unsafe {
            sodium::crypto_scalarmult(s.as_mut_ptr(), self.scalar.as_ptr(), peer.as_ptr())
        };
        if rc != 0 {
            return Err(anyhow!(
                "crypto_scalarmult rejected the peer's public key (low order)"
            ));
        }
        Ok(s)
    }
}

struct Ed25519Public([u8; 32]);

impl PublicKey for Ed25519Public {
    fn verify(&mut self, msg: &[u8], sig: &[u8]) -> anyhow::Result<()> {
        let sig: [u8; 64] = exact(sig, "an Ed25519 signature")?;
        // SAFETY: sig is 64 bytes, the key 32, msg valid for its length.
        let rc = unsafe {
            sodium::crypto_sign_verify_detached(
                sig.as_ptr(),
                msg.as_ptr(),
                msg.len() as u64,
                self.0.as_ptr(),
            )
        };
        if rc != 0 {
            return Err(anyhow!("libsodium: the signature does not verify"));
        }
        Ok(())
    }
}

pub fn key_pair(alg: Algorithm, private: Option<&[u8]>) -> anyhow::Result<Box<dyn KeyPair>> {
    let raw: [u8; 32] = match private {
        Some(p) => exact(p, "the private key")?,
        None => exact(&pkey::random_bytes(32)?, "random bytes")?,
    };
    match alg {
        Algorithm::Ed25519 => {
            let mut k = Ed25519 {
                secret: [0; 64],
                public: [0; 32],
            };
            // SAFETY: public 32 bytes, secret 64 bytes, seed 32 bytes.
            let rc = unsafe {
                sodium::crypto_sign_seed_keypair(
                    k.public.as_mut_ptr(),
                    k.secret.as_mut_ptr(),
                    raw.as_ptr(),
                )
            };
            if rc != 0 {
                return Err(anyhow!("crypto_sign_seed_keypair failed"));
            }
            Ok(Box::new(k))
        }
        Algorithm::X25519 => Ok(Box::new(X25519 { scalar: raw })),
        a => Err(pkey::not_offered("libsodium", a)),
    }
}

pub fn public_key(alg: Algorithm, public: &[u8]) -> anyhow::Result<Box<dyn PublicKey>> {
    match alg {
        Algorithm::Ed25519 => Ok(Box::new(Ed25519Public(exact(
            public,
            "an Ed25519 public key",
        )?))),
        a => Err(anyhow!("libsodium has no {a} public-key operation")),
    }
}
