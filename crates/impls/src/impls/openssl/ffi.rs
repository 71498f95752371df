//! The libcrypto function table: every function this module calls, resolved once.

use crate::algorithms::Algorithm;
use anyhow::anyhow;
use libloading::Library;
use std::ffi::{c_char, c_int, c_uint, c_ulong, c_void, CStr};
use std::path::{Path, PathBuf};

// `OpenSSL_version` selectors (crypto.h). 0..=5 exist in 1.1 and 3.x; 6..=9 only in 3.x.
pub(super) const OPENSSL_VERSION: c_int = 0;
pub(super) const OPENSSL_CFLAGS: c_int = 1;
pub(super) const OPENSSL_BUILT_ON: c_int = 2;
pub(super) const OPENSSL_PLATFORM: c_int = 3;
pub(super) const OPENSSL_DIR: c_int = 4;
pub(super) const OPENSSL_FULL_VERSION_STRING: c_int = 7;
pub(super) const OPENSSL_MODULES_DIR: c_int = 8;
pub(super) const OPENSSL_CPU_INFO: c_int = 9;
/// Highest selector OpenSSL 1.1 knows (OPENSSL_ENGINES_DIR).
pub(super) const LAST_1_1_SELECTOR: c_int = 5;
/// `OpenSSL_version_num()` of 3.0.0.
pub(super) const V3_0_0: u64 = 0x3000_0000;

/// The file scripts/build-openssl writes into each install dir: `version=`, `flags=`, ...
pub(super) const BUILD_INFO: &str = "cryptobench-build";

/// The non-default flags of the build whose libcrypto is `libcrypto` (lib/../cryptobench-build,
/// written by scripts/build-openssl): "no-asm", or None for the default build.
pub(super) fn flags_beside(libcrypto: &Path) -> Option<String> {
    let info = libcrypto.parent()?.parent()?.join(BUILD_INFO);
    let text = std::fs::read_to_string(info).ok()?;
    let flags = text.lines().find_map(|l| l.strip_prefix("flags="))?.trim();
    let rest: Vec<&str> = flags.split_whitespace().filter(|f| *f != "asm").collect();
    (!rest.is_empty()).then(|| rest.join(" "))
}

// EVP_CIPHER_CTX_ctrl commands (evp.h), the same numbers in 1.1 and 3.x.
pub(super) const EVP_CTRL_AEAD_SET_IVLEN: c_int = 0x9;
pub(super) const EVP_CTRL_AEAD_GET_TAG: c_int = 0x10;
pub(super) const EVP_CTRL_AEAD_SET_TAG: c_int = 0x11;

/// AEAD nonce length: 96 bits for GCM and ChaCha20-Poly1305.
pub(super) const AEAD_NONCE_LEN: usize = 12;
/// AES's IV length (the speed-loop variant's CBC correction works on one AES block).
pub(super) const CIPHER_IV_LEN: usize = 16;

pub(super) const HOW_TO_FIX: &str = "give the path of a libcrypto.so from OpenSSL 1.1 or 3.x";
pub(super) const SYSTEM_NAMES: [&str; 3] = ["libcrypto.so.3", "libcrypto.so.1.1", "libcrypto.so"];

pub(super) type VoidFn = unsafe extern "C" fn();
pub(super) type VersionFn = unsafe extern "C" fn(c_int) -> *const c_char;
pub(super) type VersionNumFn = unsafe extern "C" fn() -> c_ulong;
pub(super) type NewFn = unsafe extern "C" fn() -> *mut c_void;
pub(super) type FreeFn = unsafe extern "C" fn(*mut c_void);
pub(super) type GetterFn = unsafe extern "C" fn() -> *const c_void;
pub(super) type FetchFn =
    unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char) -> *mut c_void;
pub(super) type CipherInitFn = unsafe extern "C" fn(
    *mut c_void,
    *const c_void,
    *mut c_void,
    *const u8,
    *const u8,
    c_int,
) -> c_int;
pub(super) type CipherUpdateFn =
    unsafe extern "C" fn(*mut c_void, *mut u8, *mut c_int, *const u8, c_int) -> c_int;
pub(super) type CipherFinalFn = unsafe extern "C" fn(*mut c_void, *mut u8, *mut c_int) -> c_int;
pub(super) type DecryptInitFn =
    unsafe extern "C" fn(*mut c_void, *const c_void, *mut c_void, *const u8, *const u8) -> c_int;
pub(super) type CtrlFn = unsafe extern "C" fn(*mut c_void, c_int, c_int, *mut c_void) -> c_int;
pub(super) type SetPaddingFn = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;
pub(super) type DigestInitFn =
    unsafe extern "C" fn(*mut c_void, *const c_void, *mut c_void) -> c_int;
pub(super) type DigestUpdateFn = unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> c_int;
pub(super) type DigestFinalFn = unsafe extern "C" fn(*mut c_void, *mut u8, *mut c_uint) -> c_int;
pub(super) type HmacInitFn =
    unsafe extern "C" fn(*mut c_void, *const c_void, c_int, *const c_void, *mut c_void) -> c_int;
pub(super) type HmacUpdateFn = unsafe extern "C" fn(*mut c_void, *const u8, usize) -> c_int;
pub(super) type HmacFinalFn = unsafe extern "C" fn(*mut c_void, *mut u8, *mut c_uint) -> c_int;
pub(super) type ErrGetFn = unsafe extern "C" fn() -> c_ulong;
pub(super) type ErrStringFn = unsafe extern "C" fn(c_ulong, *mut c_char, usize);
pub(super) type StrFn = unsafe extern "C" fn() -> *const c_char;
pub(super) type EngineByIdFn = unsafe extern "C" fn(*const c_char) -> *mut c_void;
pub(super) type EngineFn = unsafe extern "C" fn(*mut c_void) -> c_int;
pub(super) type ProviderLoadFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;

/// The ENGINE calls of the `engine=` variants; a build with `no-engine` has none.
pub(super) struct EngineApi {
    pub by_id: EngineByIdFn,
    pub init: EngineFn,
    pub finish: EngineFn,
    pub free: EngineFn,
}

/// Every libcrypto function this module calls, resolved once. The pointers point into
/// `_lib`, which lives exactly as long as they do.
pub(super) struct Api {
    pub(super) path: PathBuf,
    /// The non-default flags of a scripts/build-openssl build ("no-asm"), which labels show.
    pub(super) build_flags: Option<String>,
    pub(super) version_num: u64,
    pub(super) openssl_version: VersionFn,
    pub(super) err_clear_error: VoidFn,
    pub(super) err_get_error: ErrGetFn,
    pub(super) err_error_string_n: ErrStringFn,
    pub(super) cipher_ctx_new: NewFn,
    pub(super) cipher_ctx_free: FreeFn,
    pub(super) cipher_init_ex: CipherInitFn,
    pub(super) cipher_update: CipherUpdateFn,
    pub(super) cipher_final_ex: CipherFinalFn,
    pub(super) cipher_ctx_ctrl: CtrlFn,
    pub(super) cipher_ctx_set_padding: SetPaddingFn,
    // The direction-specific calls `openssl speed` makes (the speed-loop variant).
    pub(super) encrypt_update: CipherUpdateFn,
    pub(super) decrypt_update: CipherUpdateFn,
    pub(super) encrypt_final_ex: CipherFinalFn,
    pub(super) decrypt_final_ex: CipherFinalFn,
    pub(super) decrypt_init_ex: DecryptInitFn,
    pub(super) md_ctx_new: NewFn,
    pub(super) md_ctx_free: FreeFn,
    pub(super) digest_init_ex: DigestInitFn,
    pub(super) digest_update: DigestUpdateFn,
    pub(super) digest_final_ex: DigestFinalFn,
    pub(super) hmac_ctx_new: NewFn,
    pub(super) hmac_ctx_free: FreeFn,
    pub(super) hmac_init_ex: HmacInitFn,
    pub(super) hmac_update: HmacUpdateFn,
    pub(super) hmac_final: HmacFinalFn,
    // Optional: BN_options (for the "options:" line of `openssl speed`), and the 3.x
    // explicit fetches, which avoid an implicit fetch inside every EVP_DigestInit_ex.
    pub(super) bn_options: Option<StrFn>,
    pub(super) cipher_fetch: Option<FetchFn>,
    pub(super) cipher_free: Option<FreeFn>,
    pub(super) md_fetch: Option<FetchFn>,
    pub(super) md_free: Option<FreeFn>,
    pub(super) engine: Option<EngineApi>,
    /// `OSSL_PROVIDER_load` (3.x): the legacy provider holds DES and RC4.
    pub(super) provider_load: Option<ProviderLoadFn>,
    /// Whether the legacy provider loaded, tried once, on the first legacy cipher asked for.
    pub(super) legacy_loaded: std::sync::OnceLock<Result<(), String>>,
    /// `EVP_*` getters, indexed like `Algorithm::ALL`.
    pub(super) getters: [Option<GetterFn>; Algorithm::ALL.len()],
    // Declared last, so dropped last.
    pub(super) _lib: Library,
}

/// The EVP getter symbol and the 3.x fetch name of each algorithm.
pub(super) fn evp_names(alg: Algorithm) -> (&'static str, &'static str) {
    match alg {
        Algorithm::Aes128Gcm => ("EVP_aes_128_gcm", "AES-128-GCM"),
        Algorithm::Aes256Gcm => ("EVP_aes_256_gcm", "AES-256-GCM"),
        Algorithm::Chacha20Poly1305 => ("EVP_chacha20_poly1305", "ChaCha20-Poly1305"),
        Algorithm::Aes128Cbc => ("EVP_aes_128_cbc", "AES-128-CBC"),
        Algorithm::Aes256Cbc => ("EVP_aes_256_cbc", "AES-256-CBC"),
        Algorithm::Aes128Ctr => ("EVP_aes_128_ctr", "AES-128-CTR"),
        Algorithm::Aes256Ctr => ("EVP_aes_256_ctr", "AES-256-CTR"),
        Algorithm::Sha1 => ("EVP_sha1", "SHA1"),
        Algorithm::Sha256 | Algorithm::HmacSha256 => ("EVP_sha256", "SHA256"),
        Algorithm::Sha512 => ("EVP_sha512", "SHA512"),
        Algorithm::Aes192Gcm => ("EVP_aes_192_gcm", "AES-192-GCM"),
        Algorithm::Aes192Cbc => ("EVP_aes_192_cbc", "AES-192-CBC"),
        Algorithm::Aes192Ctr => ("EVP_aes_192_ctr", "AES-192-CTR"),
        Algorithm::DesCbc => ("EVP_des_cbc", "DES-CBC"),
        Algorithm::DesEde3Cbc => ("EVP_des_ede3_cbc", "DES-EDE3-CBC"),
        Algorithm::Rc4 => ("EVP_rc4", "RC4"),
        // Public-key algorithms go through EVP_PKEY (pkey.rs), not an EVP getter.
        _ => ("", ""),
    }
}

pub(super) fn alg_index(alg: Algorithm) -> usize {
    Algorithm::ALL.iter().position(|a| *a == alg).unwrap_or(0)
}

/// Copies a C string owned by libcrypto; None for NULL.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that stays valid during the call.
pub(super) unsafe fn c_string(p: *const c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        // SAFETY: non-NULL and NUL-terminated per this function's contract.
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }
}

/// One line, whatever the loader said.
pub(super) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The loader's own reason for a failed dlopen, without the file name it starts with.
pub(super) fn dl_reason(e: &libloading::Error, name: &str) -> String {
    let text = match std::error::Error::source(e) {
        Some(src) => src.to_string(),
        None => e.to_string(),
    };
    let text = one_line(&text);
    match text.strip_prefix(name).and_then(|t| t.strip_prefix(": ")) {
        Some(rest) => rest.to_string(),
        None => text,
    }
}

/// Resolves one symbol as a value of type `T` (a function pointer type).
///
/// # Safety
/// `T` must be the true type of the symbol `name`.
pub(super) unsafe fn sym<T: Copy>(lib: &Library, name: &str) -> Option<T> {
    // SAFETY: the caller guarantees `T` matches the symbol; we copy the pointer out and
    // keep `lib` alive alongside it in `Api`.
    unsafe { lib.get::<T>(name.as_bytes()).ok().map(|s| *s) }
}

impl Api {
    /// Resolves everything from an opened library. Err is the reason, without the path.
    pub(super) fn resolve(lib: Library, path: PathBuf) -> anyhow::Result<Api> {
        // SAFETY: every symbol below is looked up with its C prototype from OpenSSL's
        // headers (crypto.h, evp.h, hmac.h, err.h, bn.h), identical in 1.1 and 3.x.
        unsafe {
            let openssl_version: VersionFn = match sym(&lib, "OpenSSL_version") {
                Some(f) => f,
                None => {
                    if sym::<VersionFn>(&lib, "SSLeay_version").is_some() {
                        return Err(anyhow!("OpenSSL 1.0 or older (it has SSLeay_version but no OpenSSL_version), which is not supported"));
                    }
                    return Err(anyhow!("not a libcrypto (no OpenSSL_version symbol)"));
                }
            };
            macro_rules! need {
                ($name:literal) => {
                    match sym(&lib, $name) {
                        Some(f) => f,
                        None => return Err(anyhow!("not a usable libcrypto (no {} symbol)", $name)),
                    }
                };
            }
            let version_num_fn: VersionNumFn = need!("OpenSSL_version_num");
            let version_num = version_num_fn() as u64;
            let mut getters: [Option<GetterFn>; Algorithm::ALL.len()] =
                [None; Algorithm::ALL.len()];
            for (i, alg) in Algorithm::ALL.into_iter().enumerate() {
                if !alg.kind().is_public_key() {
                    getters[i] = sym(&lib, evp_names(alg).0);
                }
            }
            let (cipher_fetch, cipher_free, md_fetch, md_free) = if version_num >= V3_0_0 {
                (
                    sym(&lib, "EVP_CIPHER_fetch"),
                    sym(&lib, "EVP_CIPHER_free"),
                    sym(&lib, "EVP_MD_fetch"),
                    sym(&lib, "EVP_MD_free"),
                )
            } else {
                (None, None, None, None)
            };
            // A fetch is only usable with its free.
            let (cipher_fetch, cipher_free) = match (cipher_fetch, cipher_free) {
                (Some(a), Some(b)) => (Some(a), Some(b)),
                _ => (None, None),
            };
            let (md_fetch, md_free) = match (md_fetch, md_free) {
                (Some(a), Some(b)) => (Some(a), Some(b)),
                _ => (None, None),
            };
            let engine = match (
                sym(&lib, "ENGINE_by_id"),
                sym(&lib, "ENGINE_init"),
                sym(&lib, "ENGINE_finish"),
                sym(&lib, "ENGINE_free"),
            ) {
                (Some(by_id), Some(init), Some(finish), Some(free)) => Some(EngineApi {
                    by_id,
                    init,
                    finish,
                    free,
                }),
                _ => None,
            };
            Ok(Api {
                build_flags: flags_beside(&path),
                path,
                version_num,
                openssl_version,
                err_clear_error: need!("ERR_clear_error"),
                err_get_error: need!("ERR_get_error"),
                err_error_string_n: need!("ERR_error_string_n"),
                cipher_ctx_new: need!("EVP_CIPHER_CTX_new"),
                cipher_ctx_free: need!("EVP_CIPHER_CTX_free"),
                cipher_init_ex: need!("EVP_CipherInit_ex"),
                cipher_update: need!("EVP_CipherUpdate"),
                cipher_final_ex: need!("EVP_CipherFinal_ex"),
                cipher_ctx_ctrl: need!("EVP_CIPHER_CTX_ctrl"),
                cipher_ctx_set_padding: need!("EVP_CIPHER_CTX_set_padding"),
                encrypt_update: need!("EVP_EncryptUpdate"),
                decrypt_update: need!("EVP_DecryptUpdate"),
                encrypt_final_ex: need!("EVP_EncryptFinal_ex"),
                decrypt_final_ex: need!("EVP_DecryptFinal_ex"),
                decrypt_init_ex: need!("EVP_DecryptInit_ex"),
                md_ctx_new: need!("EVP_MD_CTX_new"),
                md_ctx_free: need!("EVP_MD_CTX_free"),
                digest_init_ex: need!("EVP_DigestInit_ex"),
                digest_update: need!("EVP_DigestUpdate"),
                digest_final_ex: need!("EVP_DigestFinal_ex"),
                hmac_ctx_new: need!("HMAC_CTX_new"),
                hmac_ctx_free: need!("HMAC_CTX_free"),
                hmac_init_ex: need!("HMAC_Init_ex"),
                hmac_update: need!("HMAC_Update"),
                hmac_final: need!("HMAC_Final"),
                bn_options: sym(&lib, "BN_options"),
                cipher_fetch,
                cipher_free,
                md_fetch,
                md_free,
                engine,
                provider_load: if version_num >= V3_0_0 {
                    sym(&lib, "OSSL_PROVIDER_load")
                } else {
                    None
                },
                legacy_loaded: std::sync::OnceLock::new(),
                getters,
                _lib: lib,
            })
        }
    }

    /// A failure message naming the call, with OpenSSL's first queued error if any.
    /// Empties the thread's error queue, so that a failure leaves nothing behind.
    pub(super) fn fail(&self, what: &str) -> String {
        // SAFETY: ERR_get_error and ERR_clear_error take no arguments and only touch
        // this thread's error queue; the buffer passed to ERR_error_string_n is ours,
        // 256 bytes, and the length we pass is its size (it always NUL-terminates).
        unsafe {
            let code = (self.err_get_error)();
            let detail = if code != 0 {
                let mut buf = [0 as c_char; 256];
                (self.err_error_string_n)(code, buf.as_mut_ptr(), buf.len());
                c_string(buf.as_ptr()).map(|s| format!(" ({s})"))
            } else {
                None
            };
            (self.err_clear_error)();
            format!("{what} failed{}", detail.unwrap_or_default())
        }
    }

    /// Ok when a libcrypto call returned 1, else the failure as `fail` words it.
    #[inline]
    pub(super) fn check(&self, ok: c_int, what: &str) -> anyhow::Result<()> {
        if ok == 1 {
            Ok(())
        } else {
            Err(anyhow::Error::msg(self.fail(what)))
        }
    }

    pub(super) fn version_info(&self, t: c_int) -> Option<String> {
        if t < 0 || (self.version_num < V3_0_0 && t > LAST_1_1_SELECTOR) {
            return None;
        }
        // SAFETY: OpenSSL_version returns a pointer to a static string (or "not
        // available" for a selector it does not know), valid for the library's life.
        let s = unsafe { c_string((self.openssl_version)(t)) }?;
        if s == "not available" {
            None
        } else {
            Some(s)
        }
    }
}

/// A raw libcrypto object pointer (EVP_CIPHER_CTX, EVP_MD_CTX, HMAC_CTX, EVP_MD).
pub(super) struct Raw(pub(super) *mut c_void);
// SAFETY: an Operation owns its contexts exclusively and is used by one thread at a
// time (`process` takes `&mut self`); OpenSSL contexts may move between threads as long
// as they are not used concurrently. Fetched EVP_MD/EVP_CIPHER objects are immutable
// and reference counted with atomics.
unsafe impl Send for Raw {}
