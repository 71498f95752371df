//! The RustCrypto crates (pure Rust, CPU features detected at run time): every
//! algorithm of the catalogue.
//!
//! AEADs use `AeadInOut`, so a dec call reads the input and writes the output without a
//! copy. CBC and CTR keep one expanded AES key (`Aes128Enc`, `Aes256Dec`, ...) from
//! `prepare` and borrow it for each message (`cbc::Encryptor<&Aes128Enc>`,
//! `CtrCore<&Aes128Enc, _>`), so no key schedule runs per message. HMAC keeps the keyed
//! state from `prepare` and clones it per message.

use super::implementation::{
    Implementation, Operation, PkeyFns, Prepared, PublicKeyOps, Support, Symmetric,
};
use super::io::{opened_len, sealed_len, too_small, Io};
use crate::algorithms::{Algorithm, Direction, TAG_LEN};
use aes::cipher::array::Array;
use aes::cipher::{InOutBuf, KeyInit};
use aes::{Aes128Dec, Aes128Enc, Aes192, Aes192Dec, Aes192Enc, Aes256Dec, Aes256Enc};
use aes_gcm::aead::{AeadCore, AeadInOut};
use aes_gcm::{Aes128Gcm, Aes256Gcm, AesGcm};
use anyhow::anyhow;
use chacha20poly1305::ChaCha20Poly1305;
use hmac::{Hmac, Mac};
use modes::{CbcDec, CbcEnc, Ctr};
use sha2::Digest;

mod legacy;
mod modes;
mod pkey;

/// The RustCrypto crates are versioned one by one and report no version at run time;
/// these are the versions Cargo.toml asks for.
const VERSION: &str = "RustCrypto: aes 0.9, aes-gcm 0.11, chacha20poly1305 0.11, cbc 0.2, ctr 0.10, sha1 0.11, sha2 0.11, hmac 0.13; rsa 0.9, p256 0.13, p384 0.13, ed25519-dalek 2, x25519-dalek 2, ml-kem 0.2, ml-dsa 0.1; des 0.9, rc4 0.2";

pub struct RustCrypto;

impl Implementation for RustCrypto {
    fn name(&self) -> &str {
        "rustcrypto"
    }

    fn version(&self) -> String {
        VERSION.to_string()
    }

    fn support(&self, _alg: Algorithm) -> Support {
        Support::Yes
    }

    fn details(&self) -> super::details::Details {
        super::details::Details {
            crates: Some(VERSION.into()),
            version_note: Some("the crates expose no version at run time; these are the versions Cargo.toml requires".into()),
            backends: Some("aes, ghash/polyval, chacha20 and sha2 pick AES-NI/CLMUL/AVX2/SHA-NI at run time when the CPU has them".into()),
            ..Default::default()
        }
    }
    fn public_key_ops(&self) -> Option<&dyn PublicKeyOps> {
        Some(&PkeyFns(pkey::key_pair, pkey::public_key))
    }
}

impl Symmetric for RustCrypto {
    fn prepare(&self, alg: Algorithm, direction: Direction, key: &[u8]) -> Prepared {
        let bad_key = |_| alg.wrong_key(key);
        let dec = direction == Direction::Dec;
        Ok(match alg {
            Algorithm::Aes128Gcm => aead_op(Aes128Gcm::new_from_slice(key).map_err(bad_key)?, dec),
            Algorithm::Aes192Gcm => aead_op(
                AesGcm::<Aes192, aes_gcm::aead::consts::U12>::new_from_slice(key)
                    .map_err(bad_key)?,
                dec,
            ),
            Algorithm::Aes256Gcm => aead_op(Aes256Gcm::new_from_slice(key).map_err(bad_key)?, dec),
            Algorithm::Chacha20Poly1305 => {
                aead_op(ChaCha20Poly1305::new_from_slice(key).map_err(bad_key)?, dec)
            }
            Algorithm::Aes128Cbc if dec => {
                Box::new(CbcDec(Aes128Dec::new_from_slice(key).map_err(bad_key)?))
            }
            Algorithm::Aes128Cbc => {
                Box::new(CbcEnc(Aes128Enc::new_from_slice(key).map_err(bad_key)?))
            }
            Algorithm::Aes192Cbc if dec => {
                Box::new(CbcDec(Aes192Dec::new_from_slice(key).map_err(bad_key)?))
            }
            Algorithm::Aes192Cbc => {
                Box::new(CbcEnc(Aes192Enc::new_from_slice(key).map_err(bad_key)?))
            }
            Algorithm::Aes256Cbc if dec => {
                Box::new(CbcDec(Aes256Dec::new_from_slice(key).map_err(bad_key)?))
            }
            Algorithm::Aes256Cbc => {
                Box::new(CbcEnc(Aes256Enc::new_from_slice(key).map_err(bad_key)?))
            }
            // CTR decrypts by encrypting: only the forward key schedule is needed.
            Algorithm::Aes128Ctr => Box::new(Ctr(Aes128Enc::new_from_slice(key).map_err(bad_key)?)),
            Algorithm::Aes192Ctr => Box::new(Ctr(Aes192Enc::new_from_slice(key).map_err(bad_key)?)),
            Algorithm::Aes256Ctr => Box::new(Ctr(Aes256Enc::new_from_slice(key).map_err(bad_key)?)),
            Algorithm::Sha1 => Box::new(HashOp::<sha1::Sha1>(Default::default())),
            Algorithm::Sha256 => Box::new(HashOp::<sha2::Sha256>(Default::default())),
            Algorithm::Sha512 => Box::new(HashOp::<sha2::Sha512>(Default::default())),
            // HMAC takes a key of any length.
            Algorithm::HmacSha256 => Box::new(HmacOp(
                <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(key)
                    .map_err(|_| "HMAC-SHA-256 rejected the key".to_string())
                    .map_err(anyhow::Error::msg)?,
            )),
            Algorithm::DesCbc | Algorithm::DesEde3Cbc | Algorithm::Rc4 => {
                return legacy::prepare(alg, dec, key)
            }
            a => return Err(anyhow!("{a} is a public-key algorithm: use key_pair")),
        })
    }
}

fn aead_op<A: AeadInOut + Send + 'static>(cipher: A, dec: bool) -> Box<dyn Operation> {
    if dec {
        Box::new(AeadOpen(cipher))
    } else {
        Box::new(AeadSeal(cipher))
    }
}

fn nonce_of<A: AeadCore>(nonce: &[u8]) -> anyhow::Result<&Array<u8, A::NonceSize>> {
    nonce
        .try_into()
        .map_err(|_| anyhow!("the nonce must be 12 bytes, got {}", nonce.len()))
}

struct AeadSeal<A>(A);

impl<A: AeadInOut + Send> Operation for AeadSeal<A> {
    fn process(&mut self, nonce: &[u8], aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        let nonce = nonce_of::<A>(nonce)?;
        let n = io.input_len();
        let end = sealed_len(n)?;
        let (tag, tag_out) = match io {
            Io::InPlace { buf, len } => {
                let (data, tag_out) = buf.get_mut(..end).ok_or_else(too_small)?.split_at_mut(len);
                (
                    self.0.encrypt_inout_detached(nonce, aad, data.into()),
                    tag_out,
                )
            }
            Io::Separate { input, output } => {
                let (ct, tag_out) = output.get_mut(..end).ok_or_else(too_small)?.split_at_mut(n);
                let buf = InOutBuf::new(input, ct).map_err(|_| too_small())?;
                (self.0.encrypt_inout_detached(nonce, aad, buf), tag_out)
            }
        };
        let tag = tag
            .map_err(|_| "the message or AAD is too long".to_string())
            .map_err(anyhow::Error::msg)?;
        if tag.len() != TAG_LEN {
            return Err(anyhow!("unexpected {}-byte tag", tag.len()));
        }
        tag_out.copy_from_slice(&tag);
        Ok(end)
    }
}

struct AeadOpen<A>(A);

impl<A: AeadInOut + Send> Operation for AeadOpen<A> {
    fn process(&mut self, nonce: &[u8], aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        let nonce = nonce_of::<A>(nonce)?;
        let n = opened_len(io.input_len())?;
        let res = match io {
            Io::InPlace { buf, len } => {
                let (ct, tag) = buf.get_mut(..len).ok_or_else(too_small)?.split_at_mut(n);
                let tag: &Array<u8, A::TagSize> = (&*tag)
                    .try_into()
                    .map_err(|_| "malformed tag".to_string())
                    .map_err(anyhow::Error::msg)?;
                self.0.decrypt_inout_detached(nonce, aad, ct.into(), tag)
            }
            Io::Separate { input, output } => {
                let (ct, tag) = input.split_at(n);
                let tag: &Array<u8, A::TagSize> = tag
                    .try_into()
                    .map_err(|_| "malformed tag".to_string())
                    .map_err(anyhow::Error::msg)?;
                let out = output.get_mut(..n).ok_or_else(too_small)?;
                let buf = InOutBuf::new(ct, out).map_err(|_| too_small())?;
                self.0.decrypt_inout_detached(nonce, aad, buf, tag)
            }
        };
        res.map_err(|_| "tag verification failed".to_string())
            .map_err(anyhow::Error::msg)?;
        Ok(n)
    }
}

struct HashOp<D>(std::marker::PhantomData<fn() -> D>);

impl<D: Digest> Operation for HashOp<D> {
    fn process(&mut self, _nonce: &[u8], _aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        io.put_digest(|msg| D::digest(msg))
    }
}

struct HmacOp(Hmac<sha2::Sha256>);

impl Operation for HmacOp {
    fn process(&mut self, _nonce: &[u8], _aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        io.put_digest(|msg| {
            // The keyed state (inner and outer pads already absorbed) is kept from prepare.
            let mut mac = self.0.clone();
            mac.update(msg);
            mac.finalize().into_bytes()
        })
    }
}
