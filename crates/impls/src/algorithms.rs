//! The algorithm catalogue: names, shapes and known-answer vectors.

use anyhow::anyhow;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What an algorithm does to a message, which decides the shape of an Operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Authenticated encryption: nonce, AAD, 16-byte tag.
    Aead,
    /// Unauthenticated cipher: a block-cipher mode with an IV of one block, or a stream
    /// cipher without one (RC4).
    Cipher,
    /// Unkeyed digest.
    Hash,
    /// Keyed digest.
    Mac,
    /// Public-key signature: sign and verify, one message per call.
    Signature,
    /// Key agreement: one shared secret per call.
    Agreement,
    /// Key encapsulation: keygen, encaps and decaps.
    Kem,
}

impl Kind {
    /// Public-key kinds have no size axis: one operation per call, counted as ops/s.
    pub fn is_public_key(self) -> bool {
        matches!(self, Kind::Signature | Kind::Agreement | Kind::Kem)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Algorithm {
    #[serde(rename = "aes-128-gcm")]
    Aes128Gcm,
    #[serde(rename = "aes-256-gcm")]
    Aes256Gcm,
    #[serde(rename = "chacha20-poly1305")]
    Chacha20Poly1305,
    #[serde(rename = "aes-128-cbc")]
    Aes128Cbc,
    #[serde(rename = "aes-256-cbc")]
    Aes256Cbc,
    #[serde(rename = "aes-128-ctr")]
    Aes128Ctr,
    #[serde(rename = "aes-256-ctr")]
    Aes256Ctr,
    #[serde(rename = "sha1")]
    Sha1,
    #[serde(rename = "sha256")]
    Sha256,
    #[serde(rename = "sha512")]
    Sha512,
    #[serde(rename = "hmac-sha256")]
    HmacSha256,
    #[serde(rename = "aes-192-gcm")]
    Aes192Gcm,
    #[serde(rename = "aes-192-cbc")]
    Aes192Cbc,
    #[serde(rename = "aes-192-ctr")]
    Aes192Ctr,
    #[serde(rename = "rsa2048-pkcs1")]
    Rsa2048Pkcs1,
    #[serde(rename = "rsa2048-pss")]
    Rsa2048Pss,
    #[serde(rename = "rsa3072-pkcs1")]
    Rsa3072Pkcs1,
    #[serde(rename = "rsa3072-pss")]
    Rsa3072Pss,
    #[serde(rename = "rsa4096-pkcs1")]
    Rsa4096Pkcs1,
    #[serde(rename = "rsa4096-pss")]
    Rsa4096Pss,
    /// FIPS 186-4 DSA, (L, N) = (2048, 256), SHA-256: `openssl speed dsa2048`'s row.
    #[serde(rename = "dsa2048")]
    Dsa2048,
    /// FIPS 186-4 DSA, (L, N) = (3072, 256), SHA-256.
    #[serde(rename = "dsa3072")]
    Dsa3072,
    #[serde(rename = "ecdsa-p256")]
    EcdsaP256,
    #[serde(rename = "ecdsa-p384")]
    EcdsaP384,
    #[serde(rename = "ed25519")]
    Ed25519,
    #[serde(rename = "x25519")]
    X25519,
    #[serde(rename = "ecdh-p256")]
    EcdhP256,
    #[serde(rename = "ml-kem-768")]
    MlKem768,
    #[serde(rename = "ml-dsa-65")]
    MlDsa65,
    /// The TLS hybrid key exchange (draft-ietf-tls-ecdhe-mlkem): ML-KEM-768 and X25519.
    #[serde(rename = "x25519-mlkem768")]
    X25519MlKem768,
    #[serde(rename = "des-cbc")]
    DesCbc,
    #[serde(rename = "des-ede3-cbc")]
    DesEde3Cbc,
    #[serde(rename = "rc4")]
    Rc4,
}

/// What every output says beside a legacy cipher's figures.
pub const LEGACY_NOTE: &str = "legacy cipher (DES, Triple DES or RC4): broken or obsolete, measured only beside old figures (studies 3 and 5), never advice";

/// AEAD tag length for every AEAD we measure.
pub const TAG_LEN: usize = 16;
/// AAD length used in timed runs: a TLS 1.2 record header.
pub const TIMED_AAD_LEN: usize = 13;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Encrypt, seal, or compute a digest.
    Enc,
    /// Decrypt, or open and verify the tag.
    Dec,
    /// Make one signature.
    Sign,
    /// Check one signature.
    Verify,
    /// One shared secret from a peer's public key.
    Derive,
    /// Generate one key pair.
    Keygen,
    /// Encapsulate one shared secret to a public key.
    Encaps,
    /// Recover one shared secret from a ciphertext.
    Decaps,
}

impl Direction {
    pub const ALL: [Direction; 8] = [
        Direction::Enc,
        Direction::Dec,
        Direction::Sign,
        Direction::Verify,
        Direction::Derive,
        Direction::Keygen,
        Direction::Encaps,
        Direction::Decaps,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Direction::Enc => "enc",
            Direction::Dec => "dec",
            Direction::Sign => "sign",
            Direction::Verify => "verify",
            Direction::Derive => "derive",
            Direction::Keygen => "keygen",
            Direction::Encaps => "encaps",
            Direction::Decaps => "decaps",
        }
    }
    pub fn parse(s: &str) -> Option<Direction> {
        Direction::ALL.into_iter().find(|d| d.name() == s)
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Algorithm {
    pub const ALL: [Algorithm; 33] = [
        Algorithm::Aes128Gcm,
        Algorithm::Aes192Gcm,
        Algorithm::Aes256Gcm,
        Algorithm::Chacha20Poly1305,
        Algorithm::Aes128Cbc,
        Algorithm::Aes192Cbc,
        Algorithm::Aes256Cbc,
        Algorithm::Aes128Ctr,
        Algorithm::Aes192Ctr,
        Algorithm::Aes256Ctr,
        Algorithm::Sha1,
        Algorithm::Sha256,
        Algorithm::Sha512,
        Algorithm::HmacSha256,
        Algorithm::DesCbc,
        Algorithm::DesEde3Cbc,
        Algorithm::Rc4,
        Algorithm::Rsa2048Pkcs1,
        Algorithm::Rsa2048Pss,
        Algorithm::Rsa3072Pkcs1,
        Algorithm::Rsa3072Pss,
        Algorithm::Rsa4096Pkcs1,
        Algorithm::Rsa4096Pss,
        Algorithm::Dsa2048,
        Algorithm::Dsa3072,
        Algorithm::EcdsaP256,
        Algorithm::EcdsaP384,
        Algorithm::Ed25519,
        Algorithm::X25519,
        Algorithm::EcdhP256,
        Algorithm::MlKem768,
        Algorithm::MlDsa65,
        Algorithm::X25519MlKem768,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Aes128Gcm => "aes-128-gcm",
            Algorithm::Aes256Gcm => "aes-256-gcm",
            Algorithm::Chacha20Poly1305 => "chacha20-poly1305",
            Algorithm::Aes128Cbc => "aes-128-cbc",
            Algorithm::Aes256Cbc => "aes-256-cbc",
            Algorithm::Aes128Ctr => "aes-128-ctr",
            Algorithm::Aes256Ctr => "aes-256-ctr",
            Algorithm::Sha1 => "sha1",
            Algorithm::Sha256 => "sha256",
            Algorithm::Sha512 => "sha512",
            Algorithm::HmacSha256 => "hmac-sha256",
            Algorithm::Aes192Gcm => "aes-192-gcm",
            Algorithm::Aes192Cbc => "aes-192-cbc",
            Algorithm::Aes192Ctr => "aes-192-ctr",
            Algorithm::Rsa2048Pkcs1 => "rsa2048-pkcs1",
            Algorithm::Rsa2048Pss => "rsa2048-pss",
            Algorithm::Rsa3072Pkcs1 => "rsa3072-pkcs1",
            Algorithm::Rsa3072Pss => "rsa3072-pss",
            Algorithm::Rsa4096Pkcs1 => "rsa4096-pkcs1",
            Algorithm::Rsa4096Pss => "rsa4096-pss",
            Algorithm::Dsa2048 => "dsa2048",
            Algorithm::Dsa3072 => "dsa3072",
            Algorithm::EcdsaP256 => "ecdsa-p256",
            Algorithm::EcdsaP384 => "ecdsa-p384",
            Algorithm::Ed25519 => "ed25519",
            Algorithm::X25519 => "x25519",
            Algorithm::EcdhP256 => "ecdh-p256",
            Algorithm::MlKem768 => "ml-kem-768",
            Algorithm::MlDsa65 => "ml-dsa-65",
            Algorithm::X25519MlKem768 => "x25519-mlkem768",
            Algorithm::DesCbc => "des-cbc",
            Algorithm::DesEde3Cbc => "des-ede3-cbc",
            Algorithm::Rc4 => "rc4",
        }
    }

    /// Whether `speed` without `--alg` measures it: the symmetric algorithms deployed
    /// today. Public-key operations, AES-192 and the legacy ciphers run when named
    /// (`--alg '*'` for every one), so that the default run stays a quick first look.
    pub fn in_default_run(self) -> bool {
        !self.is_legacy() && !self.kind().is_public_key() && !self.name().starts_with("aes-192")
    }

    /// The directions `speed` measures without `--alg` and `--direction`. A keystream
    /// mode decrypts by encrypting (the same keystream XORed in, one code path in every
    /// library), so the default run measures CTR once, as enc.
    pub fn default_run_directions(self) -> &'static [Direction] {
        match self {
            Algorithm::Aes128Ctr | Algorithm::Aes192Ctr | Algorithm::Aes256Ctr => &[Direction::Enc],
            _ => self.directions(),
        }
    }

    /// Broken or obsolete ciphers, labelled as such in every output.
    pub fn is_legacy(self) -> bool {
        matches!(
            self,
            Algorithm::DesCbc | Algorithm::DesEde3Cbc | Algorithm::Rc4
        )
    }

    /// The name with a "(legacy)" mark for the legacy ciphers, for lists and tables.
    pub fn labelled(self) -> String {
        if self.is_legacy() {
            format!("{} (legacy)", self.name())
        } else {
            self.name().to_string()
        }
    }

    /// The name `openssl speed` prints for this algorithm in its table.
    pub fn openssl_speed_name(self) -> &'static str {
        match self {
            Algorithm::Aes128Gcm => "AES-128-GCM",
            Algorithm::Aes256Gcm => "AES-256-GCM",
            Algorithm::Chacha20Poly1305 => "ChaCha20-Poly1305",
            Algorithm::Aes128Cbc => "AES-128-CBC",
            Algorithm::Aes256Cbc => "AES-256-CBC",
            Algorithm::Aes128Ctr => "AES-128-CTR",
            Algorithm::Aes256Ctr => "AES-256-CTR",
            Algorithm::Sha1 => "sha1",
            Algorithm::Sha256 => "sha256",
            Algorithm::Sha512 => "sha512",
            Algorithm::HmacSha256 => "hmac(sha256)",
            Algorithm::Aes192Gcm => "AES-192-GCM",
            Algorithm::Aes192Cbc => "AES-192-CBC",
            Algorithm::Aes192Ctr => "AES-192-CTR",
            // Public-key rows: the label `openssl speed` prints before "sign verify".
            Algorithm::Rsa2048Pkcs1 | Algorithm::Rsa2048Pss => "rsa 2048 bits",
            Algorithm::Rsa3072Pkcs1 | Algorithm::Rsa3072Pss => "rsa 3072 bits",
            Algorithm::Rsa4096Pkcs1 | Algorithm::Rsa4096Pss => "rsa 4096 bits",
            Algorithm::Dsa2048 => "dsa 2048 bits",
            Algorithm::Dsa3072 => "dsa 3072 bits",
            Algorithm::EcdsaP256 => "256 bits ecdsa (nistp256)",
            Algorithm::EcdsaP384 => "384 bits ecdsa (nistp384)",
            Algorithm::Ed25519 => "253 bits EdDSA (Ed25519)",
            Algorithm::X25519 => "253 bits ecdh (X25519)",
            Algorithm::EcdhP256 => "256 bits ecdh (nistp256)",
            Algorithm::MlKem768 => "ML-KEM-768",
            Algorithm::MlDsa65 => "ML-DSA-65",
            Algorithm::X25519MlKem768 => "X25519MLKEM768",
            Algorithm::DesCbc => "DES-CBC",
            Algorithm::DesEde3Cbc => "DES-EDE3-CBC",
            Algorithm::Rc4 => "RC4",
        }
    }

    pub fn parse(s: &str) -> Option<Algorithm> {
        let s = s.to_ascii_lowercase();
        Algorithm::ALL.into_iter().find(|a| a.name() == s)
    }

    pub fn kind(self) -> Kind {
        match self {
            Algorithm::Aes128Gcm
            | Algorithm::Aes192Gcm
            | Algorithm::Aes256Gcm
            | Algorithm::Chacha20Poly1305 => Kind::Aead,
            Algorithm::Aes128Cbc
            | Algorithm::Aes192Cbc
            | Algorithm::Aes256Cbc
            | Algorithm::Aes128Ctr
            | Algorithm::Aes192Ctr
            | Algorithm::Aes256Ctr
            | Algorithm::DesCbc
            | Algorithm::DesEde3Cbc
            | Algorithm::Rc4 => Kind::Cipher,
            Algorithm::Sha1 | Algorithm::Sha256 | Algorithm::Sha512 => Kind::Hash,
            Algorithm::HmacSha256 => Kind::Mac,
            Algorithm::Rsa2048Pkcs1
            | Algorithm::Rsa2048Pss
            | Algorithm::Rsa3072Pkcs1
            | Algorithm::Rsa3072Pss
            | Algorithm::Rsa4096Pkcs1
            | Algorithm::Rsa4096Pss
            | Algorithm::Dsa2048
            | Algorithm::Dsa3072
            | Algorithm::EcdsaP256
            | Algorithm::EcdsaP384
            | Algorithm::Ed25519
            | Algorithm::MlDsa65 => Kind::Signature,
            Algorithm::X25519 | Algorithm::EcdhP256 => Kind::Agreement,
            Algorithm::MlKem768 | Algorithm::X25519MlKem768 => Kind::Kem,
        }
    }

    /// The error for a key of another length than [`Algorithm::key_len`], worded alike
    /// for every library.
    pub fn wrong_key(self, key: &[u8]) -> anyhow::Error {
        anyhow!(
            "{self} needs a {}-byte key, got {} bytes",
            self.key_len(),
            key.len()
        )
    }

    /// Ok for a key of [`Algorithm::key_len`] bytes, else [`Algorithm::wrong_key`].
    pub fn check_key(self, key: &[u8]) -> anyhow::Result<()> {
        if key.len() != self.key_len() {
            return Err(self.wrong_key(key));
        }
        Ok(())
    }

    /// Key length in bytes (0 for hashes and public-key algorithms, whose keys are
    /// made by the library). HMAC takes a 32-byte key in timed runs; RC4 a 16-byte one,
    /// as `openssl speed rc4` does.
    pub fn key_len(self) -> usize {
        match self {
            Algorithm::DesCbc => 8,
            Algorithm::Rc4 => 16,
            Algorithm::Aes128Gcm | Algorithm::Aes128Cbc | Algorithm::Aes128Ctr => 16,
            Algorithm::Aes192Gcm
            | Algorithm::Aes192Cbc
            | Algorithm::Aes192Ctr
            | Algorithm::DesEde3Cbc => 24,
            Algorithm::Aes256Gcm
            | Algorithm::Aes256Cbc
            | Algorithm::Aes256Ctr
            | Algorithm::Chacha20Poly1305
            | Algorithm::HmacSha256 => 32,
            _ => 0,
        }
    }

    /// Nonce (AEAD) or IV (cipher: one block) length in bytes; 0 for hashes, MACs and
    /// RC4, which has no IV.
    pub fn nonce_len(self) -> usize {
        match self.kind() {
            Kind::Aead => 12,
            Kind::Cipher => self.block_len(),
            _ => 0,
        }
    }

    /// The cipher's block: 16 bytes for AES, 8 for DES, 0 for the stream cipher RC4.
    pub fn block_len(self) -> usize {
        match self {
            Algorithm::DesCbc | Algorithm::DesEde3Cbc => 8,
            Algorithm::Rc4 => 0,
            _ => 16,
        }
    }

    /// Bytes of output beyond the message: the tag for AEAD seal, the digest for hashes.
    pub fn output_len(self, direction: Direction, n: usize) -> usize {
        match (self.kind(), direction) {
            (Kind::Aead, Direction::Enc) => n + TAG_LEN,
            (Kind::Aead, Direction::Dec) | (Kind::Cipher, _) => n,
            (Kind::Hash | Kind::Mac, _) => self.digest_len(),
            _ => 0,
        }
    }

    pub fn digest_len(self) -> usize {
        match self {
            Algorithm::Sha1 => 20,
            Algorithm::Sha256 | Algorithm::HmacSha256 => 32,
            Algorithm::Sha512 => 64,
            _ => 0,
        }
    }

    /// Directions that mean something for this algorithm. A digest has only one.
    pub fn directions(self) -> &'static [Direction] {
        match self.kind() {
            Kind::Aead | Kind::Cipher => &[Direction::Enc, Direction::Dec],
            Kind::Hash | Kind::Mac => &[Direction::Enc],
            Kind::Signature => &[Direction::Sign, Direction::Verify],
            Kind::Agreement => &[Direction::Derive],
            Kind::Kem => &[Direction::Keygen, Direction::Encaps, Direction::Decaps],
        }
    }

    /// Why a message of `size` bytes cannot be processed, if it cannot.
    pub fn size_problem(self, size: usize) -> Option<String> {
        match self {
            Algorithm::Aes128Cbc
            | Algorithm::Aes192Cbc
            | Algorithm::Aes256Cbc
            | Algorithm::DesCbc
            | Algorithm::DesEde3Cbc
                if !size.is_multiple_of(self.block_len()) =>
            {
                let b = self.block_len();
                Some(format!(
                    "CBC without padding needs whole {b}-byte blocks; {size} is not a multiple of {b}"
                ))
            }
            _ => None,
        }
    }

    /// Input bytes for a message of `size` bytes in `direction` (AEAD open reads the tag too).
    pub fn input_len(self, direction: Direction, size: usize) -> usize {
        match (self.kind(), direction) {
            (Kind::Aead, Direction::Dec) => size + TAG_LEN,
            _ => size,
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Sizes `openssl speed` uses, plus 1350 bytes: a typical TLS/VPN record.
pub const DEFAULT_SIZES: [usize; 7] = [16, 64, 256, 1024, 1350, 8192, 16384];
pub const MAX_SIZE: usize = 64 << 20;

/// One `--sizes` item, binary units (k = 1024, m = 1048576), through the shared unit
/// parser, with the range and messages of the size axis.
pub fn parse_size(s: &str) -> anyhow::Result<usize> {
    let shown = crate::units::shown(s);
    let n = crate::units::bytes(s).ok_or_else(|| {
        format!("invalid size '{shown}': use a number of bytes with an optional k or m suffix, e.g. 16,1k,1350,64k,1m")
    }).map_err(anyhow::Error::msg)?;
    if n == 0 {
        return Err(anyhow!(
            "invalid size '{shown}': a size must be at least 1 byte"
        ));
    }
    if n > MAX_SIZE as u64 {
        return Err(anyhow!(
            "size '{shown}' is too large: the largest is 64m (67108864 bytes)"
        ));
    }
    Ok(n as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("16").ok(), Some(16));
        assert_eq!(parse_size("1k").ok(), Some(1024));
        assert_eq!(parse_size("64K").ok(), Some(65536));
        assert_eq!(parse_size("1m").ok(), Some(1 << 20));
        assert_eq!(parse_size("64m").ok(), Some(64 << 20));
        assert!(parse_size("65m").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("12q").is_err());
        assert!(parse_size("").is_err());
    }

    #[test]
    fn names_round_trip() {
        for a in Algorithm::ALL {
            assert_eq!(Algorithm::parse(a.name()), Some(a));
        }
    }

    #[test]
    fn vectors_are_well_formed() {
        for a in Algorithm::ALL {
            let vectors = crate::kat::vectors::vectors(a);
            assert_eq!(vectors.is_empty(), a.kind().is_public_key(), "{a}");
            for v in vectors {
                let out = hex::decode(v.output).unwrap();
                let inp = hex::decode(v.input).unwrap();
                assert_eq!(
                    hex::decode(v.nonce).unwrap().len(),
                    a.nonce_len(),
                    "{}",
                    v.source
                );
                assert_eq!(
                    out.len(),
                    a.output_len(Direction::Enc, inp.len()),
                    "{}",
                    v.source
                );
                if a.kind() != Kind::Mac {
                    assert_eq!(
                        hex::decode(v.key).unwrap().len(),
                        a.key_len(),
                        "{}",
                        v.source
                    );
                }
            }
        }
    }
}
