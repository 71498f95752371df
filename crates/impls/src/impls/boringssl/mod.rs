//! BoringSSL through boring-sys (built from the BoringSSL sources vendored in the
//! crate): every algorithm of the catalogue.
//!
//! AEADs use `EVP_AEAD`: one `EVP_AEAD_CTX` per prepared key, then
//! `EVP_AEAD_CTX_seal_scatter` (tag written straight after the ciphertext) and
//! `EVP_AEAD_CTX_open_gather` (separate input and output) per message, so neither
//! direction copies. CBC and CTR keep one `EVP_CIPHER_CTX` with the expanded key and
//! only set a new IV per message (`EVP_CipherInit_ex` with a NULL cipher and key).
//! HMAC rewinds a keyed `HMAC_CTX` per message (`HMAC_Init_ex` with a NULL key).
//! Public-key operations are in pkey.rs.

use super::implementation::{
    Implementation, Operation, PkeyFns, Prepared, PublicKeyOps, Support, Symmetric,
};
use super::io::{opened_len, Io, RawIo};
use crate::algorithms::{Algorithm, Direction, Kind, TAG_LEN};
use anyhow::anyhow;
use boring_sys as bssl;
use std::ffi::CStr;
use std::ptr;

pub mod pkey;

/// boring-sys does not report its own crate version at run time; this is the major
/// version Cargo.toml asks for.
const CRATE_VERSION: &str = "boring-sys 5";

pub struct BoringSsl;

impl Implementation for BoringSsl {
    fn name(&self) -> &str {
        "boringssl"
    }

    fn version(&self) -> String {
        bssl::init();
        // SAFETY: OpenSSL_version returns a static NUL-terminated string.
        let name = unsafe { CStr::from_ptr(bssl::OpenSSL_version(bssl::OPENSSL_VERSION as _)) };
        // BoringSSL has no releases; its API version is the closest thing to one.
        format!(
            "{} (API version {}, {CRATE_VERSION})",
            name.to_string_lossy(),
            bssl::BORINGSSL_API_VERSION
        )
    }

    fn support(&self, alg: Algorithm) -> Support {
        if alg.is_legacy() {
            return Support::No(
                "cryptobench does not reach BoringSSL's DES and RC4 (kept there for old callers only)".into(),
            );
        }
        if alg.kind().is_public_key() && !pkey::offers(alg) {
            return Support::No(format!("cryptobench does not reach BoringSSL's {alg} yet"));
        }
        Support::Yes
    }

    fn notes(&self, alg: Algorithm, _direction: Direction) -> Vec<String> {
        match alg.kind() {
            Kind::Signature => vec![pkey::SIGN_NOTE.into()],
            Kind::Agreement => vec![pkey::DERIVE_NOTE.into()],
            Kind::Kem => vec![pkey::KEM_NOTE.into()],
            _ => Vec::new(),
        }
    }

    fn details(&self) -> crate::impls::details::Details {
        crate::impls::details::Details {
            crate_version: Some(CRATE_VERSION.into()),
            api_version: Some(bssl::BORINGSSL_API_VERSION as u64),
            source: Some(
                "BoringSSL sources vendored in boring-sys, built by its build script".into(),
            ),
            ..Default::default()
        }
    }
    fn public_key_ops(&self) -> Option<&dyn PublicKeyOps> {
        Some(&PkeyFns(pkey::key_pair, pkey::public_key))
    }
}

impl Symmetric for BoringSsl {
    fn prepare(&self, alg: Algorithm, direction: Direction, key: &[u8]) -> Prepared {
        // The catch-all arms below would otherwise run AES for a legacy cipher.
        self.support(alg).check()?;
        bssl::init();
        match alg.kind() {
            Kind::Aead => {
                alg.check_key(key)?;
                // SAFETY: these return static method tables.
                let aead = unsafe {
                    match alg {
                        Algorithm::Aes128Gcm => bssl::EVP_aead_aes_128_gcm(),
                        Algorithm::Aes192Gcm => bssl::EVP_aead_aes_192_gcm(),
                        Algorithm::Aes256Gcm => bssl::EVP_aead_aes_256_gcm(),
                        _ => bssl::EVP_aead_chacha20_poly1305(),
                    }
                };
                // SAFETY: key is valid for key.len() bytes; the context is freed on drop.
                let ctx = unsafe { bssl::EVP_AEAD_CTX_new(aead, key.as_ptr(), key.len(), TAG_LEN) };
                if ctx.is_null() {
                    return Err(anyhow!("EVP_AEAD_CTX_new failed for {alg}"));
                }
                Ok(Box::new(AeadOp { ctx, direction }))
            }
            Kind::Cipher => {
                alg.check_key(key)?;
                // SAFETY: these return static method tables.
                let cipher = unsafe {
                    match alg {
                        Algorithm::Aes128Cbc => bssl::EVP_aes_128_cbc(),
                        Algorithm::Aes192Cbc => bssl::EVP_aes_192_cbc(),
                        Algorithm::Aes256Cbc => bssl::EVP_aes_256_cbc(),
                        Algorithm::Aes128Ctr => bssl::EVP_aes_128_ctr(),
                        Algorithm::Aes192Ctr => bssl::EVP_aes_192_ctr(),
                        _ => bssl::EVP_aes_256_ctr(),
                    }
                };
                // SAFETY: a fresh context, freed on drop (also on the error paths).
                let op = CipherOp {
                    ctx: unsafe { bssl::EVP_CIPHER_CTX_new() },
                    cbc: matches!(
                        alg,
                        Algorithm::Aes128Cbc | Algorithm::Aes192Cbc | Algorithm::Aes256Cbc
                    ),
                };
                if op.ctx.is_null() {
                    return Err(anyhow!("EVP_CIPHER_CTX_new failed"));
                }
                let enc = (direction == Direction::Enc) as _;
                // SAFETY: key has the cipher's key length; the IV is set per message.
                let ok = unsafe {
                    bssl::EVP_CipherInit_ex(
                        op.ctx,
                        cipher,
                        ptr::null_mut(),
                        key.as_ptr(),
                        ptr::null(),
                        enc,
                    ) == 1
                        && bssl::EVP_CIPHER_CTX_set_padding(op.ctx, 0) == 1
                };
                if !ok {
                    return Err(anyhow!("EVP_CipherInit_ex failed for {alg}"));
                }
                Ok(Box::new(op))
            }
            Kind::Hash => {
                // SAFETY: these return static method tables.
                let md = unsafe {
                    match alg {
                        Algorithm::Sha1 => bssl::EVP_sha1(),
                        Algorithm::Sha256 => bssl::EVP_sha256(),
                        _ => bssl::EVP_sha512(),
                    }
                };
                Ok(Box::new(HashOp { md }))
            }
            Kind::Mac => {
                // SAFETY: a fresh context, freed on drop.
                let op = MacOp {
                    ctx: unsafe { bssl::HMAC_CTX_new() },
                };
                if op.ctx.is_null() {
                    return Err(anyhow!("HMAC_CTX_new failed"));
                }
                // HMAC_Init_ex treats a NULL key as "rewind the previous key"; a slice
                // pointer is never NULL, even for an empty key.
                // SAFETY: key is valid for key.len() bytes.
                let ok = unsafe {
                    bssl::HMAC_Init_ex(
                        op.ctx,
                        key.as_ptr().cast(),
                        key.len(),
                        bssl::EVP_sha256(),
                        ptr::null_mut(),
                    )
                };
                if ok != 1 {
                    return Err(anyhow!("HMAC_Init_ex failed"));
                }
                Ok(Box::new(op))
            }
            _ => Err(anyhow!("{alg} is a public-key algorithm")),
        }
    }
}

struct AeadOp {
    ctx: *mut bssl::EVP_AEAD_CTX,
    direction: Direction,
}

// SAFETY: the context is owned by this Operation and only used through &mut self.
unsafe impl Send for AeadOp {}

impl Drop for AeadOp {
    fn drop(&mut self) {
        // SAFETY: ctx came from EVP_AEAD_CTX_new and is freed once.
        unsafe { bssl::EVP_AEAD_CTX_free(self.ctx) }
    }
}

impl Operation for AeadOp {
    fn process(&mut self, nonce: &[u8], aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        if nonce.len() != 12 {
            return Err(anyhow!("the nonce must be 12 bytes, got {}", nonce.len()));
        }
        match self.direction {
            Direction::Enc => {
                let RawIo {
                    input,
                    in_len: n,
                    out,
                    ..
                } = io.raw_for(|n| n.checked_add(TAG_LEN))?;
                let mut tag_len = 0usize;
                // SAFETY: `raw_for` checked n readable bytes at input and n + 16 writable at
                // out; input == out or they are disjoint; the tag does not alias either.
                let ok = unsafe {
                    bssl::EVP_AEAD_CTX_seal_scatter(
                        self.ctx,
                        out,
                        out.add(n),
                        &mut tag_len,
                        TAG_LEN,
                        nonce.as_ptr(),
                        nonce.len(),
                        input,
                        n,
                        ptr::null(),
                        0,
                        aad.as_ptr(),
                        aad.len(),
                    )
                };
                if ok != 1 || tag_len != TAG_LEN {
                    return Err(anyhow!("EVP_AEAD_CTX_seal_scatter failed"));
                }
                Ok(n + TAG_LEN)
            }
            _ => {
                let n = opened_len(io.input_len())?;
                let RawIo { input, out, .. } = io.raw_for(|n| n.checked_sub(TAG_LEN))?;
                // SAFETY: as for enc; the tag is the 16 bytes after the ciphertext.
                let ok = unsafe {
                    bssl::EVP_AEAD_CTX_open_gather(
                        self.ctx,
                        out,
                        nonce.as_ptr(),
                        nonce.len(),
                        input,
                        n,
                        input.add(n),
                        TAG_LEN,
                        aad.as_ptr(),
                        aad.len(),
                    )
                };
                if ok != 1 {
                    // SAFETY: clears the error queue of this thread.
                    unsafe { bssl::ERR_clear_error() };
                    return Err(anyhow!("tag verification failed"));
                }
                Ok(n)
            }
        }
    }
}

struct CipherOp {
    ctx: *mut bssl::EVP_CIPHER_CTX,
    cbc: bool,
}

// SAFETY: the context is owned by this Operation and only used through &mut self.
unsafe impl Send for CipherOp {}

impl Drop for CipherOp {
    fn drop(&mut self) {
        // SAFETY: ctx came from EVP_CIPHER_CTX_new (NULL is accepted) and is freed once.
        unsafe { bssl::EVP_CIPHER_CTX_free(self.ctx) }
    }
}

impl Operation for CipherOp {
    fn process(&mut self, nonce: &[u8], _aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        if nonce.len() != 16 {
            return Err(anyhow!("the IV must be 16 bytes, got {}", nonce.len()));
        }
        let n = io.input_len();
        if self.cbc && !n.is_multiple_of(16) {
            return Err(anyhow!(
                "CBC without padding needs whole 16-byte blocks; {n} is not a multiple of 16"
            ));
        }
        let RawIo {
            input,
            in_len: n,
            out,
            ..
        } = io.raw_for(Some)?;
        let (mut done, mut last) = (0usize, 0usize);
        // SAFETY: the context holds the key schedule from prepare; only the IV is set
        // here. n bytes are readable at input and writable at out (equal or disjoint).
        let ok = unsafe {
            bssl::EVP_CipherInit_ex(
                self.ctx,
                ptr::null(),
                ptr::null_mut(),
                ptr::null(),
                nonce.as_ptr(),
                -1,
            ) == 1
                && bssl::EVP_CipherUpdate_ex(self.ctx, out, &mut done, n, input, n) == 1
                && bssl::EVP_CipherFinal_ex2(
                    self.ctx,
                    out.add(done),
                    &mut last,
                    n.saturating_sub(done),
                ) == 1
        };
        if !ok || done + last != n {
            // SAFETY: clears the error queue of this thread.
            unsafe { bssl::ERR_clear_error() };
            return Err(anyhow!("BoringSSL refused the message"));
        }
        Ok(n)
    }
}

struct HashOp {
    md: *const bssl::EVP_MD,
}

// SAFETY: md points to a static, immutable method table.
unsafe impl Send for HashOp {}

impl Operation for HashOp {
    fn process(&mut self, _nonce: &[u8], _aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        // SAFETY: md is a static method table.
        let len = unsafe { bssl::EVP_MD_size(self.md) };
        let (msg, out) = io.digest_room(len)?;
        let mut written = 0;
        // SAFETY: msg is readable; out has room for the digest.
        let ok = unsafe {
            bssl::EVP_Digest(
                msg.as_ptr().cast(),
                msg.len(),
                out.as_mut_ptr(),
                &mut written,
                self.md,
                ptr::null_mut(),
            )
        };
        if ok != 1 || written as usize != len {
            return Err(anyhow!("EVP_Digest failed"));
        }
        Ok(len)
    }
}

struct MacOp {
    ctx: *mut bssl::HMAC_CTX,
}

// SAFETY: the context is owned by this Operation and only used through &mut self.
unsafe impl Send for MacOp {}

impl Drop for MacOp {
    fn drop(&mut self) {
        // SAFETY: ctx came from HMAC_CTX_new (NULL is accepted) and is freed once.
        unsafe { bssl::HMAC_CTX_free(self.ctx) }
    }
}

impl Operation for MacOp {
    fn process(&mut self, _nonce: &[u8], _aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        let (msg, out) = io.digest_room(32)?;
        let mut written = 0;
        // SAFETY: a NULL key and md rewind the keyed context from prepare; msg is
        // readable; out has 32 bytes.
        let ok = unsafe {
            bssl::HMAC_Init_ex(self.ctx, ptr::null(), 0, ptr::null(), ptr::null_mut()) == 1
                && bssl::HMAC_Update(self.ctx, msg.as_ptr(), msg.len()) == 1
                && bssl::HMAC_Final(self.ctx, out.as_mut_ptr(), &mut written) == 1
        };
        if !ok || written != 32 {
            return Err(anyhow!("HMAC failed"));
        }
        Ok(32)
    }
}
