//! The function table: one libcrypto's EVP_PKEY functions, resolved once (`Fns`, with
//! the digests and the provider calls it holds), its error text, and the handles those
//! functions work on (`Key`, `Ctx`). pkey.rs resolves it and uses it; pq.rs and sign.rs
//! call through it.

use libloading::Library;
use std::ffi::{c_char, c_int, c_long, c_uint, c_ulong, c_void};
use std::sync::Arc;

pub(super) type P = *mut c_void;

pub(super) struct Fns {
    pub(super) pkey_new: unsafe extern "C" fn() -> P,
    pub(super) copy_parameters: unsafe extern "C" fn(P, P) -> c_int,
    pub(super) set1_encoded_public_key: unsafe extern "C" fn(P, *const u8, usize) -> c_int,
    pub(super) d2i_auto_private_key: unsafe extern "C" fn(*mut P, *mut *const u8, c_long) -> P,
    pub(super) d2i_public_key: unsafe extern "C" fn(c_int, *mut P, *mut *const u8, c_long) -> P,
    pub(super) d2i_pubkey: unsafe extern "C" fn(*mut P, *mut *const u8, c_long) -> P,
    pub(super) i2d_public_key: unsafe extern "C" fn(P, *mut *mut u8) -> c_int,
    pub(super) i2d_pubkey: unsafe extern "C" fn(P, *mut *mut u8) -> c_int,
    pub(super) new_raw_private: unsafe extern "C" fn(c_int, P, *const u8, usize) -> P,
    pub(super) new_raw_public: unsafe extern "C" fn(c_int, P, *const u8, usize) -> P,
    pub(super) get_raw_public: unsafe extern "C" fn(P, *mut u8, *mut usize) -> c_int,
    pub(super) pkey_free: unsafe extern "C" fn(P),
    pub(super) pkey_size: unsafe extern "C" fn(P) -> c_int,
    pub(super) ctx_new: unsafe extern "C" fn(P, P) -> P,
    pub(super) ctx_free: unsafe extern "C" fn(P),
    pub(super) sign_init: unsafe extern "C" fn(P) -> c_int,
    pub(super) sign: unsafe extern "C" fn(P, *mut u8, *mut usize, *const u8, usize) -> c_int,
    pub(super) verify_init: unsafe extern "C" fn(P) -> c_int,
    pub(super) verify: unsafe extern "C" fn(P, *const u8, usize, *const u8, usize) -> c_int,
    pub(super) set_signature_md: unsafe extern "C" fn(P, P) -> c_int,
    pub(super) set_rsa_padding: unsafe extern "C" fn(P, c_int) -> c_int,
    pub(super) set_rsa_pss_saltlen: unsafe extern "C" fn(P, c_int) -> c_int,
    pub(super) digest: unsafe extern "C" fn(*const u8, usize, *mut u8, *mut c_uint, P, P) -> c_int,
    /// SHA-256 and SHA-384, fetched once (3.x) so that no call pays an implicit fetch;
    /// the legacy getters where there is no EVP_MD_fetch.
    pub(super) sha256: Md,
    pub(super) sha384: Md,
    pub(super) md_ctx_new: unsafe extern "C" fn() -> P,
    pub(super) md_ctx_free: unsafe extern "C" fn(P),
    pub(super) digest_sign_init: unsafe extern "C" fn(P, *mut P, P, P, P) -> c_int,
    pub(super) digest_sign: unsafe extern "C" fn(P, *mut u8, *mut usize, *const u8, usize) -> c_int,
    pub(super) digest_verify_init: unsafe extern "C" fn(P, *mut P, P, P, P) -> c_int,
    pub(super) digest_verify: unsafe extern "C" fn(P, *const u8, usize, *const u8, usize) -> c_int,
    pub(super) derive_init: unsafe extern "C" fn(P) -> c_int,
    pub(super) derive_set_peer: unsafe extern "C" fn(P, P) -> c_int,
    pub(super) derive: unsafe extern "C" fn(P, *mut u8, *mut usize) -> c_int,
    pub(super) err_get_error: unsafe extern "C" fn() -> c_ulong,
    pub(super) err_error_string_n: unsafe extern "C" fn(c_ulong, *mut c_char, usize),
    /// The provider calls of ML-KEM, ML-DSA and the hybrid (OpenSSL 3.0 has them all,
    /// but only 3.5 has the algorithms); None where one is missing, so that such a
    /// libcrypto still loads.
    pub(super) pq: Option<PqFns>,
    /// EVP_PKEY_sign_message_init and EVP_PKEY_verify_message_init (3.4 and later).
    pub(super) message_init: Option<(MessageInit, MessageInit)>,
    // Declared last, so dropped last.
    pub(super) _lib: Library,
}

pub(super) type MessageInit = unsafe extern "C" fn(P, P, *const OsslParam) -> c_int;

pub(super) fn fail(f: &Fns, what: &str) -> String {
    // SAFETY: this thread's error queue; the buffer is ours and its size is passed.
    unsafe {
        let code = (f.err_get_error)();
        let mut buf = [0 as c_char; 256];
        if code != 0 {
            (f.err_error_string_n)(code, buf.as_mut_ptr(), buf.len());
        }
        while (f.err_get_error)() != 0 {}
        let detail = std::ffi::CStr::from_ptr(buf.as_ptr()).to_string_lossy();
        if detail.is_empty() {
            format!("openssl: {what} failed")
        } else {
            format!("openssl: {what} failed ({detail})")
        }
    }
}

/// An owned EVP_PKEY.
pub(super) struct Key(pub(super) P, pub(super) Arc<Fns>);

// SAFETY: an EVP_PKEY used by one thread at a time; OpenSSL refcounts it atomically.
unsafe impl Send for Key {}

impl Drop for Key {
    fn drop(&mut self) {
        // SAFETY: owned, freed once.
        unsafe { (self.1.pkey_free)(self.0) }
    }
}

impl Key {
    pub(super) fn new(f: &Arc<Fns>, p: P, what: &str) -> anyhow::Result<Key> {
        if p.is_null() {
            return Err(anyhow::Error::msg(fail(f, what)));
        }
        Ok(Key(p, f.clone()))
    }
}

/// An owned context: EVP_PKEY_CTX or EVP_MD_CTX.
pub(super) struct Ctx(pub(super) P, pub(super) unsafe extern "C" fn(P));

// SAFETY: used by one thread at a time.
unsafe impl Send for Ctx {}

impl Drop for Ctx {
    fn drop(&mut self) {
        // SAFETY: owned, freed once with its own free function.
        unsafe { (self.1)(self.0) }
    }
}

/// A message digest method, valid while its library is loaded.
pub(super) struct Md(pub(super) P);

// SAFETY: EVP_MD methods are immutable and shared between threads by OpenSSL itself.
unsafe impl Send for Md {}
unsafe impl Sync for Md {}

/// One OSSL_PARAM (core.h): a named octet string here.
#[repr(C)]
pub(super) struct OsslParam {
    pub(super) key: *const c_char,
    pub(super) data_type: c_uint,
    pub(super) data: *mut c_void,
    pub(super) data_size: usize,
    pub(super) return_size: usize,
}

pub(super) struct PqFns {
    pub(super) ctx_new_from_name: unsafe extern "C" fn(P, *const c_char, *const c_char) -> P,
    pub(super) fromdata_init: unsafe extern "C" fn(P) -> c_int,
    pub(super) fromdata: unsafe extern "C" fn(P, *mut P, c_int, *mut OsslParam) -> c_int,
    pub(super) keygen_init: unsafe extern "C" fn(P) -> c_int,
    pub(super) keygen: unsafe extern "C" fn(P, *mut P) -> c_int,
    pub(super) encapsulate_init: unsafe extern "C" fn(P, *const OsslParam) -> c_int,
    pub(super) encapsulate:
        unsafe extern "C" fn(P, *mut u8, *mut usize, *mut u8, *mut usize) -> c_int,
    pub(super) decapsulate_init: unsafe extern "C" fn(P, *const OsslParam) -> c_int,
    pub(super) decapsulate: unsafe extern "C" fn(P, *mut u8, *mut usize, *const u8, usize) -> c_int,
    pub(super) get_octet_string_param:
        unsafe extern "C" fn(P, *const c_char, *mut u8, usize, *mut usize) -> c_int,
}
