//! The algorithm catalogue: names, shapes and known-answer vectors.

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
    pub const ALL: [Algorithm; 31] = [
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
            | Algorithm::EcdsaP256
            | Algorithm::EcdsaP384
            | Algorithm::Ed25519
            | Algorithm::MlDsa65 => Kind::Signature,
            Algorithm::X25519 | Algorithm::EcdhP256 => Kind::Agreement,
            Algorithm::MlKem768 | Algorithm::X25519MlKem768 => Kind::Kem,
        }
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

/// One known-answer vector. For AEADs `output` is ciphertext || tag; for ciphers the
/// ciphertext; for hashes and MACs the digest.
pub struct Vector {
    pub source: &'static str,
    pub key: &'static str,
    pub nonce: &'static str,
    pub aad: &'static str,
    pub input: &'static str,
    pub output: &'static str,
}

const SP800_38A_PT: &str = "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710";
const GCM_PT: &str = "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39";
const GCM_AAD: &str = "feedfacedeadbeeffeedfacedeadbeefabaddad2";
const GCM_IV: &str = "cafebabefacedbaddecaf888";
const RFC8439_PT: &str = "4c616469657320616e642047656e746c656d656e206f662074686520636c617373206f66202739393a204966204920636f756c64206f6666657220796f75206f6e6c79206f6e652074697020666f7220746865206675747572652c2073756e73637265656e20776f756c642062652069742e";
/// "abc"
const ABC: &str = "616263";
/// "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
const ABC448: &str = "6162636462636465636465666465666765666768666768696768696a68696a6b696a6b6c6a6b6c6d6b6c6d6e6c6d6e6f6d6e6f706e6f7071";
/// "abcdefghbcdefghi...nopqrstu" (896 bits)
const ABC896: &str = "61626364656667686263646566676869636465666768696a6465666768696a6b65666768696a6b6c666768696a6b6c6d6768696a6b6c6d6e68696a6b6c6d6e6f696a6b6c6d6e6f706a6b6c6d6e6f70716b6c6d6e6f7071726c6d6e6f707172736d6e6f70717273746e6f707172737475";

/// Known-answer vectors: NIST (SP 800-38A, the GCM spec's test cases, FIPS 180
/// examples), RFC 8439 and RFC 4231.
pub fn vectors(alg: Algorithm) -> &'static [Vector] {
    match alg {
        Algorithm::Aes128Gcm => &[
            Vector {
                source: "NIST GCM spec test case 4",
                key: "feffe9928665731c6d6a8f9467308308",
                nonce: GCM_IV,
                aad: GCM_AAD,
                input: GCM_PT,
                output: "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091\
                         5bc94fbc3221a5db94fae95ae7121a47",
            },
            Vector {
                source: "NIST GCM spec test case 1 (empty message, no AAD)",
                key: "00000000000000000000000000000000",
                nonce: "000000000000000000000000",
                aad: "",
                input: "",
                output: "58e2fccefa7e3061367f1d57a4e7455a",
            },
            Vector {
                source: "NIST GCM spec test case 2",
                key: "00000000000000000000000000000000",
                nonce: "000000000000000000000000",
                aad: "",
                input: "00000000000000000000000000000000",
                output: "0388dace60b6a392f328c2b971b2fe78ab6e47d42cec13bdf53a67b21257bddf",
            },
        ],
        Algorithm::Aes256Gcm => &[
            Vector {
                source: "NIST GCM spec test case 16",
                key: "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
                nonce: GCM_IV,
                aad: GCM_AAD,
                input: GCM_PT,
                output: "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662\
                         76fc6ece0f4e1768cddf8853bb2d551b",
            },
            Vector {
                source: "NIST GCM spec test case 13 (empty message, no AAD)",
                key: "0000000000000000000000000000000000000000000000000000000000000000",
                nonce: "000000000000000000000000",
                aad: "",
                input: "",
                output: "530f8afbc74536b9a963b4f1c4cb738b",
            },
            Vector {
                source: "NIST GCM spec test case 14",
                key: "0000000000000000000000000000000000000000000000000000000000000000",
                nonce: "000000000000000000000000",
                aad: "",
                input: "00000000000000000000000000000000",
                output: "cea7403d4d606b6e074ec5d3baf39d18d0d1c8a799996bf0265b98b5d48ab919",
            },
        ],
        Algorithm::Chacha20Poly1305 => &[Vector {
            source: "RFC 8439 section 2.8.2",
            key: "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f",
            nonce: "070000004041424344454647",
            aad: "50515253c0c1c2c3c4c5c6c7",
            input: RFC8439_PT,
            output: "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc3ff4def08e4b7a9de576d26586cec64b6116\
                     1ae10b594f09e26a7e902ecbd0600691",
        }],
        Algorithm::Aes192Gcm => &[
            Vector {
                source: "NIST GCM spec test case 10",
                key: "feffe9928665731c6d6a8f9467308308feffe9928665731c",
                nonce: GCM_IV,
                aad: GCM_AAD,
                input: GCM_PT,
                output: "3980ca0b3c00e841eb06fac4872a2757859e1ceaa6efd984628593b40ca1e19c7d773d00c144c525ac619d18c84a3f4718e2448b2fe324d9ccda2710\
                         2519498e80f1478f37ba55bd6d27618c",
            },
            Vector {
                source: "NIST GCM spec test case 8",
                key: "000000000000000000000000000000000000000000000000",
                nonce: "000000000000000000000000",
                aad: "",
                input: "00000000000000000000000000000000",
                output: "98e7247c07f0fe411c267e4384b0f6002ff58d80033927ab8ef4d4587514f0fb",
            },
        ],
        Algorithm::Aes192Cbc => &[Vector {
            source: "NIST SP 800-38A F.2.3",
            key: "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
            nonce: "000102030405060708090a0b0c0d0e0f",
            aad: "",
            input: SP800_38A_PT,
            output: "4f021db243bc633d7178183a9fa071e8b4d9ada9ad7dedf4e5e738763f69145a571b242012fb7ae07fa9baac3df102e008b0e27988598881d920a9e64f5615cd",
        }],
        Algorithm::Aes192Ctr => &[Vector {
            source: "NIST SP 800-38A F.5.3",
            key: "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
            nonce: "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
            aad: "",
            input: SP800_38A_PT,
            output: "1abc932417521ca24f2b0459fe7e6e0b090339ec0aa6faefd5ccc2c6f4ce8e941e36b26bd1ebc670d1bd1d665620abf74f78a7f6d29809585a97daec58c6b050",
        }],
        Algorithm::Aes128Cbc => &[Vector {
            source: "NIST SP 800-38A F.2.1",
            key: "2b7e151628aed2a6abf7158809cf4f3c",
            nonce: "000102030405060708090a0b0c0d0e0f",
            aad: "",
            input: SP800_38A_PT,
            output: "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b273bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7",
        }],
        Algorithm::Aes256Cbc => &[Vector {
            source: "NIST SP 800-38A F.2.5",
            key: "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
            nonce: "000102030405060708090a0b0c0d0e0f",
            aad: "",
            input: SP800_38A_PT,
            output: "f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d39f23369a9d9bacfa530e26304231461b2eb05e2c39be9fcda6c19078c6a9d1b",
        }],
        Algorithm::Aes128Ctr => &[Vector {
            source: "NIST SP 800-38A F.5.1",
            key: "2b7e151628aed2a6abf7158809cf4f3c",
            nonce: "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
            aad: "",
            input: SP800_38A_PT,
            output: "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee",
        }],
        Algorithm::Aes256Ctr => &[Vector {
            source: "NIST SP 800-38A F.5.5",
            key: "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
            nonce: "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
            aad: "",
            input: SP800_38A_PT,
            output: "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c52b0930daa23de94ce87017ba2d84988ddfc9c58db67aada613c2dd08457941a6",
        }],
        Algorithm::Sha1 => &[
            Vector { source: "FIPS 180 example \"abc\"", key: "", nonce: "", aad: "", input: ABC, output: "a9993e364706816aba3e25717850c26c9cd0d89d" },
            Vector { source: "FIPS 180 example, 448 bits", key: "", nonce: "", aad: "", input: ABC448, output: "84983e441c3bd26ebaae4aa1f95129e5e54670f1" },
        ],
        Algorithm::Sha256 => &[
            Vector { source: "FIPS 180 example \"abc\"", key: "", nonce: "", aad: "", input: ABC, output: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
            Vector { source: "FIPS 180 example, 448 bits", key: "", nonce: "", aad: "", input: ABC448, output: "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
        ],
        Algorithm::Sha512 => &[
            Vector { source: "FIPS 180 example \"abc\"", key: "", nonce: "", aad: "", input: ABC, output: "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f" },
            Vector { source: "FIPS 180 example, 896 bits", key: "", nonce: "", aad: "", input: ABC896, output: "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909" },
        ],
        Algorithm::HmacSha256 => &[
            Vector {
                source: "RFC 4231 test case 1",
                key: "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b",
                nonce: "",
                aad: "",
                input: "4869205468657265",
                output: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
            },
            Vector {
                source: "RFC 4231 test case 2",
                key: "4a656665",
                nonce: "",
                aad: "",
                input: "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
                output: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
            },
        ],
        Algorithm::DesCbc => crate::kat::vectors_legacy::DES_CBC,
        Algorithm::DesEde3Cbc => crate::kat::vectors_legacy::DES_EDE3_CBC,
        Algorithm::Rc4 => crate::kat::vectors_legacy::RC4,
        // Public-key vectors live in kat/pkey.rs: they have another shape.
        Algorithm::Rsa2048Pkcs1
        | Algorithm::Rsa2048Pss
        | Algorithm::Rsa3072Pkcs1
        | Algorithm::Rsa3072Pss
        | Algorithm::Rsa4096Pkcs1
        | Algorithm::Rsa4096Pss
        | Algorithm::EcdsaP256
        | Algorithm::EcdsaP384
        | Algorithm::Ed25519
        | Algorithm::X25519
        | Algorithm::EcdhP256
        | Algorithm::MlKem768
        | Algorithm::MlDsa65
        | Algorithm::X25519MlKem768 => &[],
    }
}

/// Sizes `openssl speed` uses, plus 1350 bytes: a typical TLS/VPN record.
pub const DEFAULT_SIZES: [usize; 7] = [16, 64, 256, 1024, 1350, 8192, 16384];
pub const MAX_SIZE: usize = 64 << 20;

/// One `--sizes` item, binary units (k = 1024, m = 1048576), through the shared unit
/// parser, with the range and messages of the size axis.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let shown = crate::units::shown(s);
    let n = crate::units::bytes(s).ok_or_else(|| {
        format!("invalid size '{shown}': use a number of bytes with an optional k or m suffix, e.g. 16,1k,1350,64k,1m")
    })?;
    if n == 0 {
        return Err(format!(
            "invalid size '{shown}': a size must be at least 1 byte"
        ));
    }
    if n > MAX_SIZE as u64 {
        return Err(format!(
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
        assert_eq!(parse_size("16"), Ok(16));
        assert_eq!(parse_size("1k"), Ok(1024));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("1m"), Ok(1 << 20));
        assert_eq!(parse_size("64m"), Ok(64 << 20));
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
            for v in vectors(a) {
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
