//! The shape of a known-answer vector of the symmetric catalogue.

/// One known-answer vector of the symmetric catalogue (vectors.rs, vectors_legacy.rs). For
/// AEADs `output` is ciphertext || tag; for ciphers the ciphertext; for hashes and MACs
/// the digest.
pub struct Vector {
    pub source: &'static str,
    pub key: &'static str,
    pub nonce: &'static str,
    pub aad: &'static str,
    pub input: &'static str,
    pub output: &'static str,
}
