//! OpenSSL 3.5's post-quantum key types through the provider interface: keys by name
//! (EVP_PKEY_CTX_new_from_name), imported from their raw encodings (EVP_PKEY_fromdata and
//! OSSL_PARAM), and ML-KEM's encapsulation. Resolved only where the libcrypto has them.

use super::table::*;
use crate::algorithms::Algorithm;
use crate::impls::pkey::PublicKey;
use anyhow::anyhow;
use std::ffi::{c_int, c_uint, c_void};
use std::sync::Arc;

pub(super) const OSSL_PARAM_OCTET_STRING: c_uint = 5;
/// OSSL_PARAM_UNMODIFIED.
pub(super) const UNMODIFIED: usize = usize::MAX;
/// EVP_PKEY_fromdata selections (evp.h): EVP_PKEY_PUBLIC_KEY and EVP_PKEY_KEYPAIR.
pub(super) const SELECT_PUBLIC: c_int = 0x86;
pub(super) const SELECT_KEYPAIR: c_int = 0x87;

/// `[param(name, bytes), end]`: the array EVP_PKEY_fromdata reads; `bytes` outlives it.
pub(super) fn octet_param(name: &std::ffi::CStr, bytes: &[u8]) -> [OsslParam; 2] {
    [
        OsslParam {
            key: name.as_ptr(),
            data_type: OSSL_PARAM_OCTET_STRING,
            data: bytes.as_ptr() as *mut c_void,
            data_size: bytes.len(),
            return_size: UNMODIFIED,
        },
        OsslParam {
            key: std::ptr::null(),
            data_type: 0,
            data: std::ptr::null_mut(),
            data_size: 0,
            return_size: 0,
        },
    ]
}

/// OpenSSL's provider name of a post-quantum algorithm, and the key parameters its
/// interchange encodings are (pkey.rs's table): private, public.
pub(super) fn pq_names(
    alg: Algorithm,
) -> Option<(
    &'static std::ffi::CStr,
    &'static std::ffi::CStr,
    &'static std::ffi::CStr,
)> {
    match alg {
        // FIPS 203's decapsulation key; the encapsulation key.
        Algorithm::MlKem768 => Some((c"ML-KEM-768", c"priv", c"pub")),
        // FIPS 204's 32-byte seed; the public key.
        Algorithm::MlDsa65 => Some((c"ML-DSA-65", c"seed", c"pub")),
        // ML-KEM's decapsulation key then X25519's scalar; ek then X25519's key (TLS order).
        Algorithm::X25519MlKem768 => Some((c"X25519MLKEM768", c"priv", c"pub")),
        _ => None,
    }
}

/// A context by algorithm name with EVP_PKEY_keygen_init done once: each call one key.
pub(super) struct KeyGen {
    f: Arc<Fns>,
    ctx: Ctx,
}

impl KeyGen {
    pub(super) fn new(f: &Arc<Fns>, name: &std::ffi::CStr) -> anyhow::Result<KeyGen> {
        let pq =
            f.pq.as_ref()
                .ok_or_else(|| anyhow!("this libcrypto has no EVP_PKEY_CTX_new_from_name"))?;
        // SAFETY: a fresh context owned by Ctx; NULL library context and properties.
        let ctx = Ctx(
            unsafe {
                (pq.ctx_new_from_name)(std::ptr::null_mut(), name.as_ptr(), std::ptr::null())
            },
            f.ctx_free,
        );
        if ctx.0.is_null() || unsafe { (pq.keygen_init)(ctx.0) } != 1 {
            return Err(anyhow::Error::msg(fail(
                f,
                &format!("EVP_PKEY_keygen_init for {}", name.to_string_lossy()),
            )));
        }
        Ok(KeyGen { f: f.clone(), ctx })
    }
    pub(super) fn generate(&self) -> anyhow::Result<Key> {
        let pq = self
            .f
            .pq
            .as_ref()
            .ok_or_else(|| anyhow!("no EVP_PKEY_keygen"))?;
        let mut key: P = std::ptr::null_mut();
        // SAFETY: the context is ours and initialised; the new key goes to Key.
        if unsafe { (pq.keygen)(self.ctx.0, &mut key) } != 1 {
            return Err(anyhow::Error::msg(fail(&self.f, "EVP_PKEY_keygen")));
        }
        Key::new(&self.f, key, "EVP_PKEY_keygen")
    }
}

/// The server's side of a KEM: a context on the peer's public key with
/// EVP_PKEY_encapsulate_init done once.
pub(super) struct Encapsulator {
    f: Arc<Fns>,
    ctx: Ctx,
    // Declared after the context that uses it, so dropped after it.
    _key: Key,
}

impl Encapsulator {
    pub(super) fn new(f: Arc<Fns>, key: Key) -> anyhow::Result<Self> {
        let pq =
            f.pq.as_ref()
                .ok_or_else(|| anyhow!("no EVP_PKEY_encapsulate"))?;
        // SAFETY: a fresh context on the key, owned by Ctx; the key outlives it.
        let ctx = Ctx(
            unsafe { (f.ctx_new)(key.0, std::ptr::null_mut()) },
            f.ctx_free,
        );
        if ctx.0.is_null() || unsafe { (pq.encapsulate_init)(ctx.0, std::ptr::null()) } != 1 {
            return Err(anyhow::Error::msg(fail(&f, "EVP_PKEY_encapsulate_init")));
        }
        Ok(Encapsulator { f, ctx, _key: key })
    }
}

impl PublicKey for Encapsulator {
    fn encaps(&mut self) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
        let f = &self.f;
        let pq =
            f.pq.as_ref()
                .ok_or_else(|| anyhow!("no EVP_PKEY_encapsulate"))?;
        // ML-KEM-768: 1088 and 32 bytes; the hybrid 1120 and 64.
        let (mut ct, mut ss) = (vec![0u8; 1120], vec![0u8; 64]);
        let (mut ct_len, mut ss_len) = (ct.len(), ss.len());
        // SAFETY: both buffers are writable for the lengths passed.
        if unsafe {
            (pq.encapsulate)(
                self.ctx.0,
                ct.as_mut_ptr(),
                &mut ct_len,
                ss.as_mut_ptr(),
                &mut ss_len,
            )
        } != 1
        {
            return Err(anyhow::Error::msg(fail(f, "EVP_PKEY_encapsulate")));
        }
        ct.truncate(ct_len);
        ss.truncate(ss_len);
        Ok((ct, ss))
    }
}
