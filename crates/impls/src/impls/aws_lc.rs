//! AWS-LC through aws-lc-rs: every algorithm of the catalogue.
//!
//! AEADs use `aead::LessSafeKey` (key schedule once, in `prepare`), with its
//! scatter/gather entry points so that neither direction copies: a seal writes the tag
//! straight after the ciphertext, an open reads the input and writes the output.
//! CBC and CTR use `cipher::EncryptingKey` / `cipher::DecryptingKey`, which also keep
//! the expanded key across calls but only work in place: a dec call copies the
//! ciphertext into the output buffer first (said in `notes`).

use super::implementation::{
    Implementation, OneShot, Operation, PkeyFns, Prepared, PublicKeyOps, Support, Symmetric,
};
use super::io::{opened_len, sealed_len, too_small, Io};
use crate::algorithms::{Algorithm, Direction, Kind, TAG_LEN};
use anyhow::anyhow;
use aws_lc_rs::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};
use aws_lc_rs::cipher::{
    self, DecryptingKey, DecryptionContext, EncryptingKey, EncryptionContext, UnboundCipherKey,
};
use aws_lc_rs::iv::FixedLength;
use aws_lc_rs::{digest, hmac};

mod pkey;

/// aws-lc-rs does not report its own crate version at run time; this is the minor
/// version Cargo.toml asks for.
const CRATE_VERSION: &str = "aws-lc-rs 1.19";

pub struct AwsLc;

impl Implementation for AwsLc {
    fn name(&self) -> &str {
        "aws-lc"
    }

    fn version(&self) -> String {
        format!("{CRATE_VERSION} (AWS-LC {})", aws_lc_rs::awslc_version())
    }

    fn support(&self, alg: Algorithm) -> Support {
        if alg.is_legacy() {
            return Support::No(
                "aws-lc-rs exposes no DES or RC4 (AWS-LC keeps DES only in its C API, for old callers)".into(),
            );
        }
        if crate::impls::pkey::dsa::dsa_bits(alg).is_some() {
            return Support::No(
                "aws-lc-rs exposes no DSA (AWS-LC keeps it only in its C API, for old callers)"
                    .into(),
            );
        }
        if alg.kind().is_public_key() && !pkey::offers(alg) {
            return Support::No((crate::impls::pkey::not_offered("aws-lc", alg)).to_string());
        }
        Support::Yes
    }

    fn notes(&self, alg: Algorithm, direction: Direction) -> Vec<String> {
        if alg.kind() == Kind::Cipher && direction == Direction::Dec {
            vec![format!(
                "aws-lc-rs decrypts {alg} only in place (cipher::DecryptingKey; its out-of-place \
                 streaming keys run the key schedule per message), so every timed dec call \
                 first copies the ciphertext into the output buffer"
            )]
        } else {
            Vec::new()
        }
    }

    fn details(&self) -> super::details::Details {
        super::details::Details {
            crate_version: Some(CRATE_VERSION.into()),
            crate_version_note: Some("aws-lc-rs exposes no crate version at run time; this is the minor version Cargo.toml requires".into()),
            awslc_version: Some(aws_lc_rs::awslc_version().to_string()),
            ..Default::default()
        }
    }
    fn public_key_ops(&self) -> Option<&dyn PublicKeyOps> {
        Some(&PkeyFns(pkey::key_pair, pkey::public_key))
    }
}

impl Symmetric for AwsLc {
    fn prepare(&self, alg: Algorithm, direction: Direction, key: &[u8]) -> Prepared {
        // The catch-all arms below would otherwise run AES for a legacy cipher.
        self.support(alg).check()?;
        match alg.kind() {
            Kind::Aead => {
                let algorithm = match alg {
                    Algorithm::Aes128Gcm => &aead::AES_128_GCM,
                    Algorithm::Aes192Gcm => &aead::AES_192_GCM,
                    Algorithm::Aes256Gcm => &aead::AES_256_GCM,
                    _ => &aead::CHACHA20_POLY1305,
                };
                let unbound = UnboundKey::new(algorithm, key).map_err(|_| alg.wrong_key(key))?;
                Ok(Box::new(AeadOp {
                    key: LessSafeKey::new(unbound),
                    direction,
                }))
            }
            Kind::Cipher => {
                let algorithm = match alg {
                    Algorithm::Aes128Cbc | Algorithm::Aes128Ctr => &cipher::AES_128,
                    Algorithm::Aes192Cbc | Algorithm::Aes192Ctr => &cipher::AES_192,
                    _ => &cipher::AES_256,
                };
                let cbc = matches!(
                    alg,
                    Algorithm::Aes128Cbc | Algorithm::Aes192Cbc | Algorithm::Aes256Cbc
                );
                let unbound =
                    UnboundCipherKey::new(algorithm, key).map_err(|_| alg.wrong_key(key))?;
                let failed = |_| anyhow!("aws-lc-rs could not set up the {alg} key");
                let key = match (direction, cbc) {
                    (Direction::Enc, true) => {
                        CipherKey::Enc(EncryptingKey::cbc(unbound).map_err(failed)?)
                    }
                    (Direction::Enc, false) => {
                        CipherKey::Enc(EncryptingKey::ctr(unbound).map_err(failed)?)
                    }
                    (_, true) => CipherKey::Dec(DecryptingKey::cbc(unbound).map_err(failed)?),
                    (_, false) => CipherKey::Dec(DecryptingKey::ctr(unbound).map_err(failed)?),
                };
                Ok(Box::new(CipherOp { key, cbc }))
            }
            Kind::Hash => {
                let algorithm = match alg {
                    Algorithm::Sha1 => &digest::SHA1_FOR_LEGACY_USE_ONLY,
                    Algorithm::Sha256 => &digest::SHA256,
                    _ => &digest::SHA512,
                };
                Ok(Box::new(OneShot(move |msg: &[u8]| {
                    digest::digest(algorithm, msg)
                })))
            }
            Kind::Mac => Ok(Box::new(MacOp {
                key: hmac::Key::new(hmac::HMAC_SHA256, key),
            })),
            Kind::Signature | Kind::Agreement | Kind::Kem => Err(anyhow!(
                "{alg} is a public-key algorithm: use key_pair and public_key"
            )),
        }
    }
}

/// `buf[..len]` and the 16 bytes after it, where a seal puts the tag.
fn data_and_tag(buf: &mut [u8], len: usize) -> anyhow::Result<(&mut [u8], &mut [u8])> {
    let end = sealed_len(len)?;
    let all = buf.get_mut(..end).ok_or_else(too_small)?;
    Ok(all.split_at_mut(len))
}

struct AeadOp {
    key: LessSafeKey,
    direction: Direction,
}

impl Operation for AeadOp {
    fn process(&mut self, nonce: &[u8], aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        let nonce = Nonce::try_assume_unique_for_key(nonce)
            .map_err(|_| anyhow!("the nonce must be 12 bytes, got {}", nonce.len()))?;
        let aad = Aad::from(aad);
        match self.direction {
            Direction::Enc => {
                let n = io.input_len();
                let res = match io {
                    Io::InPlace { buf, len } => {
                        let (data, tag) = data_and_tag(buf, len)?;
                        self.key.seal_in_place_scatter(nonce, aad, data, &[], tag)
                    }
                    Io::Separate { input, output } => {
                        let (ct, tag) = data_and_tag(output, n)?;
                        self.key
                            .seal_out_of_place_scatter(nonce, aad, input, ct, &[], tag)
                    }
                };
                res.map_err(|_| "aws-lc-rs refused to seal the message".to_string())
                    .map_err(anyhow::Error::msg)?;
                Ok(n + TAG_LEN)
            }
            _ => {
                let n = opened_len(io.input_len())?;
                let res = match io {
                    Io::InPlace { buf, len } => {
                        let data = buf.get_mut(..len).ok_or_else(too_small)?;
                        let (ct, tag) = data.split_at_mut(n);
                        self.key
                            .open_in_place_separate_tag(nonce, aad, tag, ct)
                            .map(|_| ())
                    }
                    Io::Separate { input, output } => {
                        let (ct, tag) = input.split_at(n);
                        let out = output.get_mut(..n).ok_or_else(too_small)?;
                        self.key.open_separate_gather(nonce, aad, ct, tag, out)
                    }
                };
                res.map_err(|_| "tag verification failed".to_string())
                    .map_err(anyhow::Error::msg)?;
                Ok(n)
            }
        }
    }
}

enum CipherKey {
    Enc(EncryptingKey),
    Dec(DecryptingKey),
}

struct CipherOp {
    key: CipherKey,
    cbc: bool,
}

impl Operation for CipherOp {
    fn process(&mut self, nonce: &[u8], _aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        let iv: [u8; 16] = nonce
            .try_into()
            .map_err(|_| anyhow!("the IV must be 16 bytes, got {}", nonce.len()))?;
        let n = io.input_len();
        if self.cbc && !n.is_multiple_of(16) {
            return Err(anyhow!(
                "CBC without padding needs whole 16-byte blocks; {n} is not a multiple of 16"
            ));
        }
        if let Io::Separate { output, .. } = &io {
            if output.len() < n {
                return Err(too_small());
            }
        }
        // The only entry points without padding work in place: a Separate call pays a
        // copy here (noted for dec in `notes`).
        let (buf, len) = io.into_in_place();
        let data = buf.get_mut(..len).ok_or_else(too_small)?;
        let iv = FixedLength::from(iv);
        match &self.key {
            CipherKey::Enc(k) => k
                .less_safe_encrypt(data, EncryptionContext::Iv128(iv))
                .map(|_| ()),
            CipherKey::Dec(k) => k.decrypt(data, DecryptionContext::Iv128(iv)).map(|_| ()),
        }
        .map_err(|_| "aws-lc-rs refused the message".to_string())
        .map_err(anyhow::Error::msg)?;
        Ok(n)
    }
}

struct MacOp {
    key: hmac::Key,
}

impl Operation for MacOp {
    fn process(&mut self, _nonce: &[u8], _aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        let (msg, out) = io.split();
        let tag = hmac::sign_to_buffer(&self.key, msg, out)
            .map_err(|_| "output buffer too small for the HMAC".to_string())
            .map_err(anyhow::Error::msg)?;
        Ok(tag.len())
    }
}
