//! The legacy ciphers from the RustCrypto crates `des` (DES, Triple DES) and `rc4`.
//!
//! DES and Triple DES go through the same CBC operations as AES, with an 8-byte block.
//! RC4 has no IV, so each call is an independent message keyed afresh (its 256-step key
//! schedule per message), as the openssl implementation does.

use super::modes::{inout, CbcDec, CbcEnc};
use crate::algorithms::Algorithm;
use crate::impls::implementation::Operation;
use crate::impls::io::Io;
use aes::cipher::{KeyInit, StreamCipher};
use anyhow::anyhow;

pub(super) fn prepare(alg: Algorithm, dec: bool, key: &[u8]) -> anyhow::Result<Box<dyn Operation>> {
    alg.check_key(key)?;
    let bad_key = |_| anyhow!("{alg} rejected the key");
    Ok(match alg {
        Algorithm::DesCbc if dec => {
            Box::new(CbcDec(des::Des::new_from_slice(key).map_err(bad_key)?))
        }
        Algorithm::DesCbc => Box::new(CbcEnc(des::Des::new_from_slice(key).map_err(bad_key)?)),
        Algorithm::DesEde3Cbc if dec => {
            Box::new(CbcDec(des::TdesEde3::new_from_slice(key).map_err(bad_key)?))
        }
        Algorithm::DesEde3Cbc => {
            Box::new(CbcEnc(des::TdesEde3::new_from_slice(key).map_err(bad_key)?))
        }
        Algorithm::Rc4 => Box::new(Rc4Op(key.to_vec())),
        other => return Err(anyhow!("{other} is not a legacy cipher")),
    })
}

/// RC4 keyed from scratch for every message (encryption and decryption are the same).
struct Rc4Op(Vec<u8>);

impl Operation for Rc4Op {
    fn process(&mut self, _nonce: &[u8], _aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        let buf = inout(io)?;
        let n = buf.len();
        let mut rc4 =
            rc4::Rc4::new_from_slice(&self.0).map_err(|_| anyhow!("RC4 rejected the key"))?;
        rc4.apply_keystream_inout(buf);
        Ok(n)
    }
}
