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
    /// A digest (`hmac_key` None) or an HMAC keyed here with `hmac_key`.
    pub(super) fn prepare_md(
        &self,
        alg: Algorithm,
        hmac_key: Option<&[u8]>,
    ) -> anyhow::Result<Box<dyn Operation>> {
        let api = &self.api;
        let (md, owned) = self.digest(alg)?;
        let hmac = hmac_key.is_some();
        // SAFETY: EVP_MD_CTX_new and HMAC_CTX_new take nothing and return a new context
        // or NULL.
        let ctx = unsafe {
            (if hmac {
                api.hmac_ctx_new
            } else {
                api.md_ctx_new
            })()
        };
        // `op` owns the context and the digest from here; Drop frees both.
        let op = MdOp {
            api: Arc::clone(api),
            ctx: Raw(ctx),
            md,
            owned,
            len: alg.digest_len(),
            hmac,
        };
        if ctx.is_null() {
            let what = if hmac {
                "HMAC_CTX_new"
            } else {
                "EVP_MD_CTX_new"
            };
            return Err(anyhow::Error::msg(api.fail(what)));
        }
        if let Some(key) = hmac_key {
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
            api.check(ok, "HMAC_Init_ex with the key")?;
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

/// SHA-1, SHA-256, SHA-512: one EVP_MD_CTX, re-initialised per message; HMAC-SHA256:
/// one HMAC_CTX keyed in `prepare_md`, reset without a key per message.
pub(super) struct MdOp {
    api: Arc<Api>,
    ctx: Raw,
    md: Raw,
    owned: bool,
    len: usize,
    hmac: bool,
}

impl Operation for MdOp {
    fn process(&mut self, _nonce: &[u8], _aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        let (input, output) = io.digest_room(self.len)?;
        let (api, ctx) = (&self.api, self.ctx.0);
        let mut outl: c_uint = 0;
        // SAFETY: a live EVP_MD_CTX and a digest object that `self` keeps alive, or a
        // keyed HMAC_CTX, where key NULL and md NULL reuse the key and digest it has;
        // `input` is readable for its length; `output` has room for the digest (checked).
        unsafe {
            if self.hmac {
                let null = std::ptr::null();
                let ok = (api.hmac_init_ex)(ctx, null, 0, null, std::ptr::null_mut());
                api.check(ok, "HMAC_Init_ex")?;
                let ok = (api.hmac_update)(ctx, input.as_ptr(), input.len());
                api.check(ok, "HMAC_Update")?;
                let ok = (api.hmac_final)(ctx, output.as_mut_ptr(), &mut outl);
                api.check(ok, "HMAC_Final")?;
            } else {
                let ok = (api.digest_init_ex)(ctx, self.md.0, std::ptr::null_mut());
                api.check(ok, "EVP_DigestInit_ex")?;
                let ok = (api.digest_update)(ctx, input.as_ptr() as *const c_void, input.len());
                api.check(ok, "EVP_DigestUpdate")?;
                let ok = (api.digest_final_ex)(ctx, output.as_mut_ptr(), &mut outl);
                api.check(ok, "EVP_DigestFinal_ex")?;
            }
        }
        if outl as usize != self.len {
            let what = if self.hmac { "MAC" } else { "digest" };
            return Err(anyhow!(
                "OpenSSL gave a {outl}-byte {what}, expected {}",
                self.len
            ));
        }
        Ok(self.len)
    }
}

impl Drop for MdOp {
    fn drop(&mut self) {
        if !self.ctx.0.is_null() {
            let free = if self.hmac {
                self.api.hmac_ctx_free
            } else {
                self.api.md_ctx_free
            };
            // SAFETY: we own the context and nothing else refers to it.
            unsafe { free(self.ctx.0) };
        }
        free_md(&self.api, &self.md, self.owned);
    }
}
