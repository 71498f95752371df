//! Public-key operations: the second face of an [`Implementation`](super::Implementation).
//!
//! Keys cross library boundaries (known answers, cross-checks, one library's key timed in
//! another) in one interchange encoding per algorithm:
//!
//! | algorithm        | private key              | public key                  | signature / secret |
//! |------------------|--------------------------|-----------------------------|--------------------|
//! | rsa*-pkcs1/-pss  | PKCS#8 DER               | PKCS#1 RSAPublicKey DER     | raw, SHA-256; PSS salt 32, MGF1-SHA-256 |
//! | dsa2048/3072     | PKCS#8 DER               | SubjectPublicKeyInfo DER (p, q, g, y) | ASN.1 DER, SHA-256 |
//! | ecdsa-p256/p384  | PKCS#8 DER               | SEC1 uncompressed point     | ASN.1 DER, SHA-256 / SHA-384 |
//! | ed25519          | 32-byte seed (RFC 8032)  | 32 bytes                    | 64 bytes |
//! | x25519           | 32-byte scalar (RFC 7748)| 32 bytes                    | 32-byte secret |
//! | ecdh-p256        | 32-byte big-endian scalar| SEC1 uncompressed point     | x coordinate, 32 bytes |
//! | ml-kem-768       | 2400-byte decapsulation key (FIPS 203) | 1184 bytes    | 1088-byte ciphertext, 32-byte secret |
//! | ml-dsa-65        | 32-byte seed ξ (FIPS 204 KeyGen) | 1952 bytes          | 3309 bytes, empty context |
//! | x25519-mlkem768  | ML-KEM dk ‖ X25519 scalar (2432) | ek ‖ X25519 key (1216) | ct ‖ X25519 key (1120), ML-KEM ‖ X25519 secret (64) |

use crate::algorithms::Algorithm;
use anyhow::anyhow;

pub mod dsa;
pub mod hybrid;
mod rsa_keys;

pub use rsa_keys::shared_rsa_pkcs8;

/// One key pair of one library for one public-key algorithm, made outside any timed loop.
/// Each method is one timed operation; the defaults say the kind has no such operation.
pub trait KeyPair: Send {
    /// The public key in the interchange encoding.
    fn public_key(&self) -> Vec<u8>;
    /// One signature over `msg` (signature algorithms).
    fn sign(&mut self, _msg: &[u8]) -> anyhow::Result<Vec<u8>> {
        Err(anyhow!("this key pair does not sign"))
    }
    /// One shared secret with a peer's public key (key agreement).
    fn derive(&mut self, _peer: &[u8]) -> anyhow::Result<Vec<u8>> {
        Err(anyhow!("this key pair does not agree keys"))
    }
    /// The shared secret inside a ciphertext (KEM).
    fn decaps(&mut self, _ciphertext: &[u8]) -> anyhow::Result<Vec<u8>> {
        Err(anyhow!("this key pair does not decapsulate"))
    }
    /// Generates (and drops) one more key pair of the same algorithm (KEM keygen).
    fn keygen(&mut self) -> anyhow::Result<()> {
        Err(anyhow!("this key pair has no keygen operation"))
    }
}

/// A peer's public key, parsed once outside the timed loop.
pub trait PublicKey: Send {
    /// Err when the signature does not verify.
    fn verify(&mut self, _msg: &[u8], _signature: &[u8]) -> anyhow::Result<()> {
        Err(anyhow!("this public key does not verify"))
    }
    /// (ciphertext, shared secret) for a fresh secret (KEM).
    fn encaps(&mut self) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
        Err(anyhow!("this public key does not encapsulate"))
    }
}

/// In the error of a library that cannot import a private key of this algorithm.
pub const NO_IMPORT: &str = "cannot import";

/// RSA modulus bits of an RSA algorithm.
pub fn rsa_bits(alg: Algorithm) -> Option<usize> {
    match alg {
        Algorithm::Rsa2048Pkcs1 | Algorithm::Rsa2048Pss => Some(2048),
        Algorithm::Rsa3072Pkcs1 | Algorithm::Rsa3072Pss => Some(3072),
        Algorithm::Rsa4096Pkcs1 | Algorithm::Rsa4096Pss => Some(4096),
        _ => None,
    }
}

/// An RSA algorithm's modulus bits and PKCS#8 DER key: `private` as given, or the shared
/// timing key of that size; for any other algorithm, `lib`'s "offers no".
pub fn rsa_key(
    lib: &str,
    alg: Algorithm,
    private: Option<&[u8]>,
) -> anyhow::Result<(usize, Vec<u8>)> {
    let bits = rsa_bits(alg).ok_or_else(|| not_offered(lib, alg))?;
    let der = match private {
        Some(d) => d.to_vec(),
        None => shared_rsa_pkcs8(bits)?,
    };
    Ok((bits, der))
}

pub fn is_pss(alg: Algorithm) -> bool {
    matches!(
        alg,
        Algorithm::Rsa2048Pss | Algorithm::Rsa3072Pss | Algorithm::Rsa4096Pss
    )
}

/// Random bytes from the OS, for seeds and scalars.
pub fn random_bytes(n: usize) -> anyhow::Result<Vec<u8>> {
    let mut b = vec![0u8; n];
    getrandom(&mut b)?;
    Ok(b)
}

fn getrandom(buf: &mut [u8]) -> anyhow::Result<()> {
    use rand_core_06::RngCore;
    rand_core_06::OsRng
        .try_fill_bytes(buf)
        .map_err(|e| anyhow!("the system random generator failed: {e}"))
}

/// The "unsupported" answer of libraries without any public-key operations.
pub fn not_offered(lib: &str, alg: Algorithm) -> anyhow::Error {
    anyhow!("{lib} offers no {alg}")
}
