//! The block cipher modes over any block cipher, keyed once (CBC with AES, DES or Triple
//! DES; CTR with AES), and the message as the in/out buffer they and the stream ciphers
//! work on.

use crate::impls::implementation::Operation;
use crate::impls::io::{too_small, Io};
use aes::cipher::array::{Array, ArraySize};
use aes::cipher::consts::U16;
use aes::cipher::{
    BlockCipherDecrypt, BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt, BlockSizeUser,
    InOutBuf, InnerIvInit, StreamCipher, StreamCipherCoreWrapper,
};
use anyhow::anyhow;

/// The message as an in/out buffer of n bytes, whichever way it came.
pub(super) fn inout<'a>(io: Io<'a>) -> anyhow::Result<InOutBuf<'a, 'a, u8>> {
    match io {
        Io::InPlace { buf, len } => Ok(buf.get_mut(..len).ok_or_else(too_small)?.into()),
        Io::Separate { input, output } => {
            let out = output.get_mut(..input.len()).ok_or_else(too_small)?;
            InOutBuf::new(input, out).map_err(|_| too_small())
        }
    }
}

/// The IV of one block of `N` bytes (16 for AES, 8 for DES).
pub(super) fn iv_of<N: ArraySize>(nonce: &[u8]) -> anyhow::Result<&Array<u8, N>> {
    nonce
        .try_into()
        .map_err(|_| anyhow!("the IV must be {} bytes, got {}", N::USIZE, nonce.len()))
}

/// Whole blocks of `N` bytes, or an error for a partial last block.
pub(super) fn blocks<'a, N: ArraySize>(
    buf: InOutBuf<'a, 'a, u8>,
) -> anyhow::Result<InOutBuf<'a, 'a, Array<u8, N>>> {
    let n = buf.len();
    let (blocks, tail) = buf.into_chunks::<N>();
    if !tail.is_empty() {
        let b = N::USIZE;
        return Err(anyhow!(
            "CBC without padding needs whole {b}-byte blocks; {n} is not a multiple of {b}"
        ));
    }
    Ok(blocks)
}

/// CBC with any block cipher (AES, DES, Triple DES), keyed once: `$name` runs `$mode`,
/// the same code both ways but for the cipher's direction.
macro_rules! cbc {
    ($name:ident, $cipher:ident, $mode:ident, $blocks:ident) => {
        pub(super) struct $name<C>(pub(super) C);

        impl<C: $cipher + Send> Operation for $name<C> {
            fn process(&mut self, nonce: &[u8], _aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
                let iv = iv_of(nonce)?;
                let buf = inout(io)?;
                let n = buf.len();
                cbc::$mode::<&C>::inner_iv_init(&self.0, iv).$blocks(blocks(buf)?);
                Ok(n)
            }
        }
    };
}
cbc!(CbcEnc, BlockCipherEncrypt, Encryptor, encrypt_blocks_inout);
cbc!(CbcDec, BlockCipherDecrypt, Decryptor, decrypt_blocks_inout);

pub(super) struct Ctr<C>(pub(super) C);

impl<C> Operation for Ctr<C>
where
    C: BlockCipherEncrypt + BlockSizeUser<BlockSize = U16> + Send,
{
    fn process(&mut self, nonce: &[u8], _aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        let iv = iv_of(nonce)?;
        let buf = inout(io)?;
        let n = buf.len();
        let core = ctr::CtrCore::<&C, ctr::flavors::Ctr128BE>::inner_iv_init(&self.0, iv);
        StreamCipherCoreWrapper::from_core(core)
            .try_apply_keystream_inout(buf)
            .map_err(|_| "the message is longer than the CTR keystream".to_string())
            .map_err(anyhow::Error::msg)?;
        Ok(n)
    }
}
