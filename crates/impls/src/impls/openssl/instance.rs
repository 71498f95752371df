//! One loaded libcrypto as cryptobench holds it: `OpenSsl` (its function table and which
//! instance it is: the library as loaded, an ISA variant's copy, the speed loop, or an
//! ENGINE's), what a variant holds (`IsaVariant`, `Engine`), and how an algorithm's
//! EVP object and the public-key table are found. The files beside it add what each
//! kind of operation needs (`impl OpenSsl`); the face implements the library traits.

use super::ffi::*;
use super::pkey;
use crate::algorithms::Algorithm;
use anyhow::anyhow;
use std::ffi::{c_void, CString};
use std::path::PathBuf;
use std::sync::Arc;

/// OpenSSL (libcrypto) reached through `dlopen`.
pub struct OpenSsl {
    pub(super) api: Arc<Api>,
    pub(super) mode: Mode,
}

/// Which instance this is: the library as loaded, or one of its variants.
pub(super) enum Mode {
    Base,
    /// A second copy of the library, loaded with `OPENSSL_ia32cap` set.
    Isa(Box<IsaVariant>),
    /// The per-call work of `openssl speed -evp`.
    SpeedLoop,
    /// AES-CBC keyed through an ENGINE that hands it to the kernel.
    Engine(Arc<Engine>),
}

impl OpenSsl {
    pub(super) fn digest(&self, alg: Algorithm) -> anyhow::Result<(Raw, bool)> {
        self.resolve(alg, self.api.md_fetch)
    }

    /// The EVP_CIPHER/EVP_MD for `alg`: fetched from the providers in 3.x (so that no
    /// implicit fetch happens later), else the legacy getter's static object.
    pub(super) fn resolve(
        &self,
        alg: Algorithm,
        fetch: Option<FetchFn>,
    ) -> anyhow::Result<(Raw, bool)> {
        let (getter_name, fetch_name) = evp_names(alg);
        let Some(getter) = self.api.getters[alg_index(alg)] else {
            return Err(anyhow!(
                "{} is not in this libcrypto (no {getter_name} symbol)",
                alg.name()
            ));
        };
        // SAFETY: an EVP getter takes nothing and returns a static object or NULL.
        let legacy = unsafe { getter() };
        if legacy.is_null() {
            return Err(anyhow!(
                "{getter_name}() returned NULL: disabled in this build"
            ));
        }
        if let Some(fetch) = fetch {
            let Ok(cname) = CString::new(fetch_name) else {
                return Err(anyhow!("bad algorithm name {fetch_name}"));
            };
            // SAFETY: EVP_*_fetch(libctx NULL = default, NUL-terminated name, properties
            // NULL) returns a new reference or NULL; the caller frees it.
            let get = || unsafe { fetch(std::ptr::null_mut(), cname.as_ptr(), std::ptr::null()) };
            let mut p = get();
            if p.is_null() && alg.is_legacy() {
                // Not in the default provider (single DES, RC4): load the legacy one.
                // SAFETY: ERR_clear_error only empties this thread's error queue.
                unsafe { (self.api.err_clear_error)() };
                self.api.legacy_provider()?;
                p = get();
            }
            if p.is_null() {
                let why = self.api.fail(&format!("fetching {fetch_name}"));
                return Err(anyhow!(
                    "{why}: not offered by the loaded OpenSSL providers"
                ));
            }
            return Ok((Raw(p), true));
        }
        Ok((Raw(legacy as *mut c_void), false))
    }
}

impl OpenSsl {
    /// The EVP_PKEY table of this library; the speed-loop variant covers ciphers only.
    pub(super) fn pkey(&self) -> anyhow::Result<std::sync::Arc<pkey::Pkey>> {
        if matches!(self.mode, Mode::SpeedLoop) {
            return Err(anyhow!(
                "speed-loop imitates `openssl speed -evp` for ciphers only"
            ));
        }
        pkey::for_path(&self.api.path)
    }
}

/// A second copy of a libcrypto, loaded with OPENSSL_ia32cap set.
pub(super) struct IsaVariant {
    /// "isa=no-aesni", as given to --variant.
    pub(super) spec: String,
    /// OPENSSL_ia32cap or OPENSSL_armcap.
    pub(super) variable: &'static str,
    /// The value the copy was loaded with.
    pub(super) mask: String,
    pub(super) turns_off: String,
    /// The base library's CPU info, for comparison (3.x only).
    pub(super) base_cpu_info: Option<String>,
    /// Capability bits on in the base library and off in the copy, when both are known.
    pub(super) cleared: Option<(u64, u64)>,
    /// The copy that was opened (deleted right after).
    pub(super) loaded_from: PathBuf,
    /// Said when the CPU has no AVX-512, so the mask clears only VAES/VPCLMULQDQ.
    pub(super) wide_aes_note: Option<String>,
}

/// An initialised ENGINE, finished and freed when the last context keyed with it is gone.
pub(super) struct Engine {
    pub(super) api: Arc<Api>,
    pub(super) ptr: *mut c_void,
    pub(super) id: String,
    /// The longest message the engine takes without blocking forever, where it has a
    /// limit (afalg: see `afalg_max_message`).
    pub(super) max_message: Option<usize>,
}

// SAFETY: an ENGINE is reference-counted and thread-safe in libcrypto; we only pass the
// pointer to EVP_CipherInit_ex and finish/free it once, in Drop.
unsafe impl Send for Engine {}
unsafe impl Sync for Engine {}

impl Engine {
    pub(super) fn ptr(&self) -> *mut c_void {
        self.ptr
    }
    /// Refuses a message the engine would block on forever.
    pub(super) fn check_message(&self, n: usize) -> anyhow::Result<()> {
        match self.max_message {
            Some(max) if n > max => Err(anyhow!(
                "engine {} cannot take a {n}-byte message: it writes the whole message to its AF_ALG socket before reading any of it back, and the socket holds at most {max} bytes (net.core.wmem_default in whole pages), so the call would never return",
                self.id
            )),
            _ => Ok(()),
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if let Some(e) = &self.api.engine {
            // SAFETY: ptr came from ENGINE_by_id and was initialised once.
            unsafe {
                (e.finish)(self.ptr);
                (e.free)(self.ptr);
            }
        }
    }
}
