//! Ciphers and AEADs: one keyed EVP_CIPHER_CTX per Operation.

use super::ffi::*;
use super::instance::{Engine, OpenSsl};
use crate::algorithms::{Algorithm, Direction, Kind, TAG_LEN};
use crate::impls::implementation::Operation;
use crate::impls::io::{opened_len, too_small, Io, RawIo};
use anyhow::anyhow;
use std::ffi::{c_int, c_void};
use std::sync::Arc;

impl OpenSsl {
    /// A context keyed for `alg` and `dir`, through `engine` if one is given (engines
    /// take over only the legacy ciphers, so then the getter's object is used, not a fetch).
    pub(super) fn keyed_cipher(
        &self,
        alg: Algorithm,
        dir: Direction,
        key: &[u8],
        engine: Option<&Arc<Engine>>,
    ) -> anyhow::Result<CipherOp> {
        let api = &self.api;
        let fetch = if engine.is_some() {
            None
        } else {
            api.cipher_fetch
        };
        let (cipher, owned) = self.resolve(alg, fetch)?;
        let free_cipher = || {
            if let (true, Some(free)) = (owned, api.cipher_free) {
                // SAFETY: the reference EVP_CIPHER_fetch gave us; a context keyed with it
                // holds its own.
                unsafe { free(cipher.0) };
            }
        };
        // SAFETY: EVP_CIPHER_CTX_new takes nothing and returns a new context or NULL.
        let ctx = unsafe { (api.cipher_ctx_new)() };
        if ctx.is_null() {
            free_cipher();
            return Err(anyhow::Error::msg(api.fail("EVP_CIPHER_CTX_new")));
        }
        // From here the context is owned by `op` and freed by its Drop on every path.
        let op = CipherOp {
            api: Arc::clone(api),
            ctx: Raw(ctx),
            aead: alg.kind() == Kind::Aead,
            enc: dir == Direction::Enc,
            iv_len: alg.nonce_len(),
            // RC4 has no IV: an independent message needs the key set again.
            rekey: (alg.kind() == Kind::Cipher && alg.nonce_len() == 0).then(|| key.to_vec()),
            engine: engine.cloned(),
        };
        let keyed = op.key(cipher.0, key, alg);
        free_cipher();
        keyed?;
        Ok(op)
    }
}

/// A pointer OpenSSL may read zero bytes from: an empty slice's pointer is dangling.
pub(super) fn non_dangling(b: &[u8]) -> *const u8 {
    static ONE: [u8; 1] = [0];
    if b.is_empty() {
        ONE.as_ptr()
    } else {
        b.as_ptr()
    }
}

pub(super) fn c_len(n: usize) -> anyhow::Result<c_int> {
    c_int::try_from(n).map_err(|_| anyhow!("a message of {n} bytes is too long for OpenSSL"))
}

/// AES-GCM, ChaCha20-Poly1305, AES-CBC, AES-CTR, DES-CBC, 3DES-CBC and RC4: one keyed
/// EVP_CIPHER_CTX.
pub(super) struct CipherOp {
    pub(super) api: Arc<Api>,
    pub(super) ctx: Raw,
    pub(super) aead: bool,
    pub(super) enc: bool,
    /// The IV set before every message of a non-AEAD cipher (0: none).
    pub(super) iv_len: usize,
    /// The key, set again before every message of a cipher without an IV (RC4).
    pub(super) rekey: Option<Vec<u8>>,
    /// The engine the context was keyed through, kept alive as long as the context.
    pub(super) engine: Option<Arc<Engine>>,
}

impl CipherOp {
    /// Key setup, once: cipher and key, direction, no padding for CBC.
    pub(super) fn key(
        &self,
        cipher: *mut c_void,
        key: &[u8],
        alg: Algorithm,
    ) -> anyhow::Result<()> {
        let api = &self.api;
        alg.check_key(key)?;
        // SAFETY: a live context, a cipher object that outlives the call (and that the
        // context up-references), a key of the cipher's length, no IV yet.
        let ok = unsafe {
            (api.cipher_init_ex)(
                self.ctx.0,
                cipher,
                self.engine
                    .as_ref()
                    .map_or(std::ptr::null_mut(), |e| e.ptr()),
                key.as_ptr(),
                std::ptr::null(),
                c_int::from(self.enc),
            )
        };
        api.check(ok, "EVP_CipherInit_ex with the key")?;
        if self.aead {
            self.set_nonce_len()?;
        } else if matches!(
            alg,
            Algorithm::Aes128Cbc
                | Algorithm::Aes192Cbc
                | Algorithm::Aes256Cbc
                | Algorithm::DesCbc
                | Algorithm::DesEde3Cbc
        ) {
            // Whole blocks only, no padding block. Only for CBC: OpenSSL 3.0 re-applies
            // a padding setting inside every later EVP_CipherInit_ex, a provider parameter
            // call per message that CTR, which has no padding, need not pay.
            // SAFETY: a keyed context.
            let ok = unsafe { (api.cipher_ctx_set_padding)(self.ctx.0, 0) };
            api.check(ok, "EVP_CIPHER_CTX_set_padding")?;
        }
        Ok(())
    }

    /// Sets the AEAD nonce length: 12 bytes.
    #[inline]
    pub(super) fn set_nonce_len(&self) -> anyhow::Result<()> {
        // SAFETY: a keyed AEAD context; SET_IVLEN takes its value in `arg`.
        let ok = unsafe {
            (self.api.cipher_ctx_ctrl)(
                self.ctx.0,
                EVP_CTRL_AEAD_SET_IVLEN,
                AEAD_NONCE_LEN as c_int,
                std::ptr::null_mut(),
            )
        };
        self.api.check(ok, "EVP_CTRL_AEAD_SET_IVLEN")
    }

    /// Sets the nonce or IV of the next message, keeping key and direction.
    pub(super) fn set_iv(&self, iv: &[u8], want: usize) -> anyhow::Result<()> {
        if iv.len() != want {
            return Err(anyhow!(
                "the nonce/IV must be {want} bytes, got {}",
                iv.len()
            ));
        }
        // SAFETY: a keyed context; cipher, engine and key NULL keep what it has, the IV
        // is `want` bytes (the length the context expects), enc -1 keeps the direction.
        let ok = unsafe {
            (self.api.cipher_init_ex)(
                self.ctx.0,
                std::ptr::null(),
                std::ptr::null_mut(),
                std::ptr::null(),
                iv.as_ptr(),
                -1,
            )
        };
        self.api.check(ok, "EVP_CipherInit_ex with the IV")
    }

    /// Sets the key again, keeping cipher and direction: RC4's fresh keystream.
    pub(super) fn set_key(&self, key: &[u8]) -> anyhow::Result<()> {
        // SAFETY: a keyed context; cipher and engine NULL keep what it has, the key has
        // the length it was first keyed with (checked in `key`), no IV, enc -1 keeps the
        // direction.
        let ok = unsafe {
            (self.api.cipher_init_ex)(
                self.ctx.0,
                std::ptr::null(),
                std::ptr::null_mut(),
                key.as_ptr(),
                std::ptr::null(),
                -1,
            )
        };
        self.api.check(ok, "EVP_CipherInit_ex with the key")
    }

    /// Update then Final over `n` bytes; returns the bytes written (must be `n`).
    ///
    /// # Safety
    /// `inp` is readable for `n` bytes, `out` writable for `n` bytes (plus one block of
    /// room, which every caller checks), and they are equal or do not overlap.
    pub(super) unsafe fn run(
        &self,
        inp: *const u8,
        n: usize,
        out: *mut u8,
    ) -> anyhow::Result<usize> {
        let n_c = c_len(n)?;
        let mut outl: c_int = 0;
        // SAFETY: per this function's contract.
        let ok = unsafe { (self.api.cipher_update)(self.ctx.0, out, &mut outl, inp, n_c) };
        if ok != 1 || outl < 0 || outl as usize > n {
            return Err(anyhow::Error::msg(self.api.fail("EVP_CipherUpdate")));
        }
        let mut fin: c_int = 0;
        // SAFETY: `out + outl` is within the output room; without padding Final writes
        // at most the rest of the message.
        let ok =
            unsafe { (self.api.cipher_final_ex)(self.ctx.0, out.add(outl as usize), &mut fin) };
        if ok != 1 {
            if self.aead && !self.enc {
                return Err(anyhow::Error::msg(self.tag_mismatch()));
            }
            return Err(anyhow::Error::msg(self.api.fail("EVP_CipherFinal_ex")));
        }
        let total = outl as usize + fin.max(0) as usize;
        if total != n {
            return Err(anyhow!(
                "OpenSSL wrote {total} bytes for a {n}-byte message"
            ));
        }
        Ok(total)
    }

    /// Feeds the AAD of an AEAD message.
    pub(super) fn aad(&self, aad: &[u8]) -> anyhow::Result<()> {
        if aad.is_empty() {
            return Ok(());
        }
        let len = c_len(aad.len())?;
        let mut outl: c_int = 0;
        // SAFETY: a context set up for a message; out NULL means `aad` is AAD, which is
        // `len` readable bytes.
        let ok = unsafe {
            (self.api.cipher_update)(
                self.ctx.0,
                std::ptr::null_mut(),
                &mut outl,
                aad.as_ptr(),
                len,
            )
        };
        self.api.check(ok, "EVP_CipherUpdate with the AAD")
    }
}

impl Operation for CipherOp {
    fn process(&mut self, nonce: &[u8], aad: &[u8], mut io: Io<'_>) -> anyhow::Result<usize> {
        let RawIo {
            input: inp,
            in_len,
            out,
            out_cap: room,
        } = io.raw();
        if !self.aead {
            if room < in_len + CIPHER_IV_LEN {
                return Err(too_small());
            }
            if let Some(e) = &self.engine {
                e.check_message(in_len)?;
            }
            match &self.rekey {
                Some(key) => self.set_key(key)?,
                None => self.set_iv(nonce, self.iv_len)?,
            }
            // SAFETY: `inp` has `in_len` bytes, `out` has `room` >= in_len + 16 bytes, and
            // Io gives either the same buffer or two distinct ones.
            return unsafe { self.run(inp, in_len, out) };
        }
        if self.enc {
            let n = in_len;
            if room < n + TAG_LEN {
                return Err(anyhow!(
                    "output buffer too small: {room} bytes for {n} bytes and the tag"
                ));
            }
            self.set_iv(nonce, AEAD_NONCE_LEN)?;
            self.aad(aad)?;
            // SAFETY: as above; the tag room is checked.
            unsafe { self.run(inp, n, out)? };
            // SAFETY: `out + n` has TAG_LEN writable bytes (checked above).
            unsafe { self.get_tag(out.add(n))? };
            Ok(n + TAG_LEN)
        } else {
            let n = opened_len(in_len)?;
            if room < n + TAG_LEN {
                return Err(too_small());
            }
            let mut tag = [0u8; TAG_LEN];
            // SAFETY: the input is `in_len` = n + 16 readable bytes; the tag is its last
            // 16, copied before anything is written (in place, output starts at `inp`).
            unsafe { std::ptr::copy_nonoverlapping(inp.add(n), tag.as_mut_ptr(), TAG_LEN) };
            self.set_iv(nonce, AEAD_NONCE_LEN)?;
            self.set_tag(&mut tag)?;
            self.aad(aad)?;
            // SAFETY: `inp` has n readable bytes, `out` has room >= n + 16; same buffer
            // or distinct buffers.
            unsafe { self.run(inp, n, out) }
        }
    }
}

impl Drop for CipherOp {
    fn drop(&mut self) {
        // SAFETY: we own the context (from EVP_CIPHER_CTX_new, never NULL here) and
        // nothing else refers to it.
        unsafe { (self.api.cipher_ctx_free)(self.ctx.0) };
    }
}

impl CipherOp {
    /// The error of an open whose tag did not verify; the library's error queue is
    /// emptied, since that failure is the message's, not the library's.
    pub(super) fn tag_mismatch(&self) -> String {
        // SAFETY: ERR_clear_error only empties this thread's error queue.
        unsafe { (self.api.err_clear_error)() };
        "tag verification failed".into()
    }

    /// Copies the tag the last Final computed (EVP_CTRL_AEAD_GET_TAG) to `out`.
    ///
    /// # Safety
    /// `out` is writable for TAG_LEN bytes.
    #[inline]
    pub(super) unsafe fn get_tag(&self, out: *mut u8) -> anyhow::Result<()> {
        // SAFETY: GET_TAG writes `arg` = TAG_LEN bytes to `out` (this function's contract).
        let ok = unsafe {
            (self.api.cipher_ctx_ctrl)(
                self.ctx.0,
                EVP_CTRL_AEAD_GET_TAG,
                TAG_LEN as c_int,
                out as *mut c_void,
            )
        };
        self.api.check(ok, "EVP_CTRL_AEAD_GET_TAG")
    }

    /// Sets the tag an open's Final must verify (EVP_CTRL_AEAD_SET_TAG).
    #[inline]
    pub(super) fn set_tag(&self, tag: &mut [u8; TAG_LEN]) -> anyhow::Result<()> {
        // SAFETY: SET_TAG reads `arg` = TAG_LEN bytes from `tag`.
        let ok = unsafe {
            (self.api.cipher_ctx_ctrl)(
                self.ctx.0,
                EVP_CTRL_AEAD_SET_TAG,
                TAG_LEN as c_int,
                tag.as_mut_ptr() as *mut c_void,
            )
        };
        self.api.check(ok, "EVP_CTRL_AEAD_SET_TAG")
    }

    /// EVP_EncryptFinal_ex or EVP_DecryptFinal_ex, as `openssl speed` calls them; returns
    /// the bytes written. An AEAD open whose tag does not verify is [`Self::tag_mismatch`].
    ///
    /// # Safety
    /// `out` is writable for one block.
    #[inline]
    pub(super) unsafe fn final_ex(&self, out: *mut u8) -> anyhow::Result<usize> {
        let (f, what) = if self.enc {
            (self.api.encrypt_final_ex, "EVP_EncryptFinal_ex")
        } else {
            (self.api.decrypt_final_ex, "EVP_DecryptFinal_ex")
        };
        let mut fin: c_int = 0;
        // SAFETY: per this function's contract.
        if unsafe { f(self.ctx.0, out, &mut fin) } != 1 {
            if self.aead && !self.enc {
                return Err(anyhow::Error::msg(self.tag_mismatch()));
            }
            return Err(anyhow::Error::msg(self.api.fail(what)));
        }
        Ok(fin.max(0) as usize)
    }

    /// EVP_EncryptUpdate or EVP_DecryptUpdate, as `openssl speed` calls them (not
    /// EVP_CipherUpdate); returns the bytes written.
    ///
    /// # Safety
    /// `inp` is readable for `n` bytes; `out` is NULL (then `inp` is AAD) or writable for
    /// `n` bytes plus one block, equal to `inp` or not overlapping it.
    #[inline]
    pub(super) unsafe fn update(
        &self,
        out: *mut u8,
        inp: *const u8,
        n: usize,
    ) -> anyhow::Result<usize> {
        let n_c = c_len(n)?;
        let f = if self.enc {
            self.api.encrypt_update
        } else {
            self.api.decrypt_update
        };
        let mut outl: c_int = 0;
        // SAFETY: per this function's contract.
        if unsafe { f(self.ctx.0, out, &mut outl, inp, n_c) } != 1 || outl < 0 {
            let what = if self.enc {
                "EVP_EncryptUpdate"
            } else {
                "EVP_DecryptUpdate"
            };
            return Err(anyhow::Error::msg(self.api.fail(what)));
        }
        Ok(outl as usize)
    }
}
