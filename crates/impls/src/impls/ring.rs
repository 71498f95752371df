//! ring: the AEADs, SHA-1/256/512 and HMAC-SHA-256. ring deliberately offers no
//! unauthenticated cipher modes, so CBC and CTR are unsupported.
//!
//! AEADs use `aead::LessSafeKey` (key schedule once, in `prepare`). ring has no
//! out-of-place open: a dec call copies the ciphertext into the output buffer and opens
//! it there.

use super::implementation::{
    Implementation, OneShot, Operation, PkeyFns, Prepared, PublicKeyOps, Support, Symmetric,
};
use super::io::{opened_len, sealed_len, too_small, Io};
use crate::algorithms::{Algorithm, Direction, Kind, TAG_LEN};
use anyhow::anyhow;
use ring::aead::{self, Aad, LessSafeKey, Nonce, Tag, UnboundKey};
use ring::{digest, hmac};

mod pkey;

/// ring does not report its version at run time; this is the minor version Cargo.toml
/// asks for.
const VERSION: &str = concat!("ring ", "0.17");

pub struct Ring;

impl Implementation for Ring {
    fn name(&self) -> &str {
        "ring"
    }

    fn version(&self) -> String {
        VERSION.to_string()
    }

    fn support(&self, alg: Algorithm) -> Support {
        match alg {
            Algorithm::Aes128Cbc | Algorithm::Aes192Cbc | Algorithm::Aes256Cbc => {
                Support::No("ring offers no unauthenticated AES-CBC".into())
            }
            Algorithm::Aes128Ctr | Algorithm::Aes192Ctr | Algorithm::Aes256Ctr => {
                Support::No("ring offers no unauthenticated AES-CTR".into())
            }
            Algorithm::Aes192Gcm => Support::No("ring offers no AES-192".into()),
            Algorithm::DesCbc | Algorithm::DesEde3Cbc | Algorithm::Rc4 => {
                Support::No("ring offers no legacy ciphers (DES, RC4)".into())
            }
            _ => match pkey::support(alg) {
                Some(why) => Support::No(why),
                None => Support::Yes,
            },
        }
    }

    fn notes(&self, alg: Algorithm, direction: Direction) -> Vec<String> {
        if direction == Direction::Derive {
            return vec![pkey::DERIVE_NOTE.into()];
        }
        if alg.kind() == Kind::Aead && direction == Direction::Dec {
            vec![
                "ring's AEAD open works only in place, so every timed dec call first copies the \
                 ciphertext into the output buffer"
                    .into(),
            ]
        } else {
            Vec::new()
        }
    }

    fn details(&self) -> super::details::Details {
        super::details::Details {
            crate_version: Some(VERSION.into()),
            version_note: Some("ring exposes no version at run time; this is the minor version Cargo.toml requires".into()),
            ..Default::default()
        }
    }
    fn public_key_ops(&self) -> Option<&dyn PublicKeyOps> {
        Some(&PkeyFns(pkey::key_pair, pkey::public_key))
    }
}

impl Symmetric for Ring {
    fn prepare(&self, alg: Algorithm, direction: Direction, key: &[u8]) -> Prepared {
        self.support(alg).check()?;
        match alg.kind() {
            Kind::Aead => {
                let algorithm = match alg {
                    Algorithm::Aes128Gcm => &aead::AES_128_GCM,
                    Algorithm::Aes256Gcm => &aead::AES_256_GCM,
                    _ => &aead::CHACHA20_POLY1305,
                };
                let unbound = UnboundKey::new(algorithm, key).map_err(|_| alg.wrong_key(key))?;
                Ok(Box::new(AeadOp {
                    key: LessSafeKey::new(unbound),
                    direction,
                }))
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
            Kind::Mac => {
                let key = hmac::Key::new(hmac::HMAC_SHA256, key);
                Ok(Box::new(OneShot(move |msg: &[u8]| hmac::sign(&key, msg))))
            }
            _ => Err(anyhow!("ring does not offer {alg} here")),
        }
    }
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
                let end = sealed_len(n)?;
                if let Io::Separate { output, .. } = &io {
                    if output.len() < end {
                        return Err(too_small());
                    }
                }
                // Enc is timed in place, where this is free; a Separate seal copies.
                let (buf, len) = io.into_in_place();
                let (data, tag_out) = buf.get_mut(..end).ok_or_else(too_small)?.split_at_mut(len);
                let tag = self
                    .key
                    .seal_in_place_separate_tag(nonce, aad, data)
                    .map_err(|_| "ring refused to seal the message".to_string())
                    .map_err(anyhow::Error::msg)?;
                tag_out.copy_from_slice(tag.as_ref());
                Ok(end)
            }
            _ => {
                let n = opened_len(io.input_len())?;
                if let Io::Separate { output, .. } = &io {
                    if output.len() < n + TAG_LEN {
                        return Err(too_small());
                    }
                }
                // No out-of-place open in ring: a Separate call pays a copy here.
                let (buf, len) = io.into_in_place();
                let (ct, tag) = buf.get_mut(..len).ok_or_else(too_small)?.split_at_mut(n);
                let tag = Tag::try_from(&*tag)
                    .map_err(|_| "malformed tag".to_string())
                    .map_err(anyhow::Error::msg)?;
                self.key
                    .open_in_place_separate_tag(nonce, aad, tag, ct, 0..)
                    .map_err(|_| "tag verification failed".to_string())
                    .map_err(anyhow::Error::msg)?;
                Ok(n)
            }
        }
    }
}
