//! Digests and HMAC: one EVP_MD_CTX or HMAC_CTX per Operation.

use super::cipher::non_dangling;
use super::ffi::*;
use super::instance::OpenSsl;
use crate::algorithms::Algorithm;
use crate::impls::implementation::Operation;
use crate::impls::io::Io;
use anyhow::anyhow;
use std::ffi::{c_int, c_uint, c_void};
use std::sync::Arc;

impl OpenSsl {
    pub(super) fn prepare_digest(&self, alg: Algorithm) -> anyhow::Result<Box<dyn Operation>> {
        let api = &self.api;
        let (md, owned) = self.digest(alg)?;
        // SAFETY: EVP_MD_CTX_new takes nothing and returns a new context or NULL.
        let ctx = unsafe { (api.md_ctx_new)() };
        // `op` owns the context and the digest from here; Drop frees both.
        let op = DigestOp {
            api: Arc::clone(api),
            ctx: Raw(ctx),
            md,
            owned,
            len: alg.digest_len(),
        };
        if ctx.is_null() {
            return Err(anyhow::Error::msg(api.fail("EVP_MD_CTX_new")));
        }
        Ok(Box::new(op))
    }

    pub(super) fn prepare_hmac(
        &self,
        alg: Algorithm,
        key: &[u8],
    ) -> anyhow::Result<Box<dyn Operation>> {
        let api = &self.api;
        let (md, owned) = self.digest(alg)?;
        // SAFETY: HMAC_CTX_new takes nothing and returns a new context or NULL.
        let ctx = unsafe { (api.hmac_ctx_new)() };
        let op = HmacOp {
            api: Arc::clone(api),
            ctx: Raw(ctx),
            md,
            owned,
            len: alg.digest_len(),
        };
        if ctx.is_null() {
            return Err(anyhow::Error::msg(api.fail("HMAC_CTX_new")));
        }
        let key_len = c_int::try_from(key.len())
            .map_err(|_| anyhow!("HMAC key of {} bytes is too long", key.len()))?;
        // SAFETY: a live HMAC_CTX, a key of `key_len` readable bytes, and a
        // digest that `op` keeps alive for as long as the context.
        let ok = unsafe {
            (api.hmac_init_ex)(
                op.ctx.0,
                non_dangling(key) as *const c_void,
                key_len,
                op.md.0,
                std::ptr::null_mut(),
            )
        };
        if ok != 1 {
            return Err(anyhow::Error::msg(api.fail("HMAC_Init_ex with the key")));
        }
        Ok(Box::new(op))
    }
}

/// Frees a digest we fetched (3.x); legacy digests are static.
pub(super) fn free_md(api: &Api, md: &Raw, owned: bool) {
    if owned {
        if let Some(free) = api.md_free {
            // SAFETY: `md` is the reference EVP_MD_fetch gave us, freed once, after
            // every context that used it.
            unsafe { free(md.0) };
        }
    }
}

/// SHA-1, SHA-256, SHA-512: one EVP_MD_CTX, re-initialised per message.
pub(super) struct DigestOp {
    pub(super) api: Arc<Api>,
    pub(super) ctx: Raw,
    pub(super) md: Raw,
    pub(super) owned: bool,
    pub(super) len: usize,
}

impl Operation for DigestOp {
    fn process(&mut self, _nonce: &[u8], _aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        let (input, output) = io.digest_room(self.len)?;
        let api = &self.api;
        let mut outl: c_uint = 0;
        // SAFETY: a live EVP_MD_CTX and a digest object that `self` keeps alive; `input`
        // is readable for its length; `output` has room for the digest (checked).
        unsafe {
            if (api.digest_init_ex)(self.ctx.0, self.md.0, std::ptr::null_mut()) != 1 {
                return Err(anyhow::Error::msg(api.fail("EVP_DigestInit_ex")));
            }
            if (api.digest_update)(self.ctx.0, input.as_ptr() as *const c_void, input.len()) != 1 {
                return Err(anyhow::Error::msg(api.fail("EVP_DigestUpdate")));
            }
            if (api.digest_final_ex)(self.ctx.0, output.as_mut_ptr(), &mut outl) != 1 {
                return Err(anyhow::Error::msg(api.fail("EVP_DigestFinal_ex")));
            }
        }
        if outl as usize != self.len {
            return Err(anyhow!(
                "OpenSSL gave a {outl}-byte digest, expected {}",
                self.len
            ));
        }
        Ok(self.len)
    }
}

impl Drop for DigestOp {
    fn drop(&mut self) {
        if !self.ctx.0.is_null() {
            // SAFETY: we own the context and nothing else refers to it.
            unsafe { (self.api.md_ctx_free)(self.ctx.0) };
        }
        free_md(&self.api, &self.md, self.owned);
    }
}

/// HMAC-SHA256: one HMAC_CTX keyed in `prepare`, reset without a key per message.
pub(super) struct HmacOp {
    pub(super) api: Arc<Api>,
    pub(super) ctx: Raw,
    pub(super) md: Raw,
    pub(super) owned: bool,
    pub(super) len: usize,
}

impl Operation for HmacOp {
    fn process(&mut self, _nonce: &[u8], _aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        let (input, output) = io.digest_room(self.len)?;
        let api = &self.api;
        let mut outl: c_uint = 0;
        // SAFETY: a keyed HMAC_CTX; key NULL and md NULL reuse the key and digest it has;
        // `input` is readable for its length; `output` has room for the MAC (checked).
        unsafe {
            if (api.hmac_init_ex)(
                self.ctx.0,
                std::ptr::null(),
                0,
                std::ptr::null(),
                std::ptr::null_mut(),
            ) != 1
            {
                return Err(anyhow::Error::msg(api.fail("HMAC_Init_ex")));
            }
            if (api.hmac_update)(self.ctx.0, input.as_ptr(), input.len()) != 1 {
                return Err(anyhow::Error::msg(api.fail("HMAC_Update")));
            }
            if (api.hmac_final)(self.ctx.0, output.as_mut_ptr(), &mut outl) != 1 {
                return Err(anyhow::Error::msg(api.fail("HMAC_Final")));
            }
        }
        if outl as usize != self.len {
            return Err(anyhow!(
                "OpenSSL gave a {outl}-byte MAC, expected {}",
                self.len
            ));
        }
        Ok(self.len)
    }
}

impl Drop for HmacOp {
    fn drop(&mut self) {
        if !self.ctx.0.is_null() {
            // SAFETY: we own the context and nothing else refers to it.
            unsafe { (self.api.hmac_ctx_free)(self.ctx.0) };
        }
        free_md(&self.api, &self.md, self.owned);
    }
}
