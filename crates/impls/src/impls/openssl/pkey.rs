//! OpenSSL's public-key operations through EVP_PKEY, from the same libcrypto as the
//! ciphers (dlopen'd again by path: the loader hands back the same mapping).
//!
//! Per call, as `openssl speed` does its own loops: RSA, DSA and ECDSA sign and verify a
//! SHA-256 (SHA-384) digest with `EVP_PKEY_sign`/`EVP_PKEY_verify` on a context set up
//! once (the digest of the 64-byte message is computed inside the call, which `openssl
//! speed` skips: it signs a fixed 36- or 20-byte buffer); Ed25519 uses `EVP_DigestSign`/
//! `EVP_DigestVerify` on a context initialised once; derive parses the peer's public key,
//! then `EVP_PKEY_derive_set_peer` and `EVP_PKEY_derive` on a context initialised once
//! (`openssl speed` derives with one fixed peer key, set once).
//!
//! From OpenSSL 3.5, ML-KEM-768, ML-DSA-65 and the TLS hybrid X25519MLKEM768 come from
//! the default provider by name (EVP_PKEY_CTX_new_from_name): keys are imported with
//! EVP_PKEY_fromdata, KEMs use EVP_PKEY_encapsulate/decapsulate, ML-DSA the same
//! EVP_DigestSign/Verify as Ed25519. The hybrid is OpenSSL's own X25519MLKEM768 key type,
//! the one libssl uses for the TLS group, not a composition of its parts.

use crate::algorithms::Algorithm;
use crate::impls::pkey::dsa::{dsa_bits, shared_dsa_pkcs8};
use crate::impls::pkey::{self, KeyPair, PublicKey};
use anyhow::anyhow;
use libloading::Library;
use std::ffi::{c_char, c_int, c_long};
use std::path::Path;
use std::sync::Arc;

mod pq;
mod sign;
mod table;
use pq::*;
use sign::*;
use table::*;

pub const SIGN_NOTE: &str = "each call hashes the 64-byte message (EVP_Digest, SHA-256; SHA-384 for P-384) and signs or verifies the digest with EVP_PKEY_sign/EVP_PKEY_verify on a context set up once; Ed25519 uses EVP_DigestSign/EVP_DigestVerify on a context initialised once (from OpenSSL 3.4, which refuses a second EVP_DigestSign on one context, EVP_PKEY_sign/EVP_PKEY_verify of the message after EVP_PKEY_sign_message_init once)";
pub const KEM_NOTE: &str = "OpenSSL's provider key types by name (EVP_PKEY_CTX_new_from_name): keygen is EVP_PKEY_keygen on a context initialised once; encaps is EVP_PKEY_encapsulate to a public key imported once (EVP_PKEY_fromdata), as libssl's server answers a key share; decaps is EVP_PKEY_decapsulate on a context initialised once; X25519MLKEM768 is OpenSSL's own hybrid key type, the one libssl negotiates";
pub const MLDSA_NOTE: &str = "ML-DSA-65: EVP_PKEY_sign_message_init (verify_message_init) once, then EVP_PKEY_sign/EVP_PKEY_verify of the 64-byte message per call (pure ML-DSA, empty context, hedged signing: OpenSSL's default); the key is imported from its 32-byte seed with EVP_PKEY_fromdata";
pub const DERIVE_NOTE: &str = "each call parses a fresh peer's public key (ECDH P-256 as libssl takes a key share: EVP_PKEY_copy_parameters from our key, EVP_PKEY_set1_encoded_public_key; X25519 with EVP_PKEY_new_raw_public_key), then EVP_PKEY_derive_set_peer (which checks the peer key) and EVP_PKEY_derive on a context initialised once (`openssl speed` derives with one fixed peer, set once)";

const EVP_PKEY_RSA: c_int = 6;
const EVP_PKEY_X25519: c_int = 1034;
const EVP_PKEY_ED25519: c_int = 1087;

/// DER prefixes that make an SPKI of an uncompressed P-256 / P-384 point.
const SPKI_P256: &str = "3059301306072a8648ce3d020106082a8648ce3d030107034200";
const SPKI_P384: &str = "3076301006072a8648ce3d020106052b81040022036200";

/// The EVP_PKEY functions of one libcrypto, or why it has none usable.
pub struct Pkey(Arc<Fns>);

/// The table for the libcrypto at `path`, resolved on first use and kept for the run.
pub fn for_path(path: &Path) -> anyhow::Result<Arc<Pkey>> {
    type Tables = Vec<(std::path::PathBuf, Result<Arc<Pkey>, String>)>;
    static TABLES: std::sync::Mutex<Tables> = std::sync::Mutex::new(Vec::new());
    let mut t = TABLES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, r)) = t.iter().find(|(p, _)| p == path) {
        return r.clone().map_err(anyhow::Error::msg);
    }
    let r = Pkey::load(path).map(Arc::new).map_err(|e| e.to_string());
    t.push((path.to_path_buf(), r.clone()));
    r.map_err(anyhow::Error::msg)
}

impl Pkey {
    /// Err: why this libcrypto offers no public-key operations here (e.g. 1.1, whose
    /// EVP_PKEY_CTX_set_* are macros, not symbols).
    pub fn load(path: &Path) -> anyhow::Result<Pkey> {
        // SAFETY: the library is already loaded by the caller; dlopen returns it again.
        let lib = unsafe { Library::new(path) }
            .map_err(|e| anyhow!("cannot reopen {}: {e}", path.display()))?;
        macro_rules! f {
            ($($name:literal)|+) => {{
                let mut found = None;
                // SAFETY: each field's type is the symbol's C prototype (OpenSSL 3 evp.h,
                // x509.h, err.h).
                $( if found.is_none() { found = unsafe { lib.get(concat!($name, "\0").as_bytes()).ok().map(|s| *s) }; } )+
                found.ok_or_else(|| anyhow!("this libcrypto has no {} (public-key operations need OpenSSL 3.0 or later)", [$($name),+].join(" or ")))?
            }};
        }
        let fns = Fns {
            d2i_auto_private_key: f!("d2i_AutoPrivateKey"),
            d2i_public_key: f!("d2i_PublicKey"),
            d2i_pubkey: f!("d2i_PUBKEY"),
            i2d_public_key: f!("i2d_PublicKey"),
            i2d_pubkey: f!("i2d_PUBKEY"),
            new_raw_private: f!("EVP_PKEY_new_raw_private_key"),
            new_raw_public: f!("EVP_PKEY_new_raw_public_key"),
            get_raw_public: f!("EVP_PKEY_get_raw_public_key"),
            pkey_free: f!("EVP_PKEY_free"),
            pkey_size: f!("EVP_PKEY_get_size" | "EVP_PKEY_size"),
            ctx_new: f!("EVP_PKEY_CTX_new"),
            ctx_free: f!("EVP_PKEY_CTX_free"),
            sign_init: f!("EVP_PKEY_sign_init"),
            sign: f!("EVP_PKEY_sign"),
            verify_init: f!("EVP_PKEY_verify_init"),
            verify: f!("EVP_PKEY_verify"),
            set_signature_md: f!("EVP_PKEY_CTX_set_signature_md"),
            set_rsa_padding: f!("EVP_PKEY_CTX_set_rsa_padding"),
            set_rsa_pss_saltlen: f!("EVP_PKEY_CTX_set_rsa_pss_saltlen"),
            digest: f!("EVP_Digest"),
            sha256: Md(std::ptr::null_mut()),
            sha384: Md(std::ptr::null_mut()),
            md_ctx_new: f!("EVP_MD_CTX_new"),
            md_ctx_free: f!("EVP_MD_CTX_free"),
            digest_sign_init: f!("EVP_DigestSignInit"),
            digest_sign: f!("EVP_DigestSign"),
            digest_verify_init: f!("EVP_DigestVerifyInit"),
            digest_verify: f!("EVP_DigestVerify"),
            derive_init: f!("EVP_PKEY_derive_init"),
            derive_set_peer: f!("EVP_PKEY_derive_set_peer"),
            derive: f!("EVP_PKEY_derive"),
            pkey_new: f!("EVP_PKEY_new"),
            copy_parameters: f!("EVP_PKEY_copy_parameters"),
            set1_encoded_public_key: f!(
                "EVP_PKEY_set1_encoded_public_key" | "EVP_PKEY_set1_tls_encodedpoint"
            ),
            err_get_error: f!("ERR_get_error"),
            err_error_string_n: f!("ERR_error_string_n"),
            // SAFETY: as f! above (OpenSSL 3.4 evp.h prototypes).
            message_init: unsafe {
                lib.get(b"EVP_PKEY_sign_message_init\0")
                    .ok()
                    .map(|s| *s)
                    .zip(lib.get(b"EVP_PKEY_verify_message_init\0").ok().map(|s| *s))
            },
            pq: (|| {
                macro_rules! g {
                    ($name:literal) => {
                        // SAFETY: as f! above (OpenSSL 3 evp.h, params.h prototypes).
                        unsafe { lib.get(concat!($name, "\0").as_bytes()).ok().map(|s| *s) }?
                    };
                }
                Some(PqFns {
                    ctx_new_from_name: g!("EVP_PKEY_CTX_new_from_name"),
                    fromdata_init: g!("EVP_PKEY_fromdata_init"),
                    fromdata: g!("EVP_PKEY_fromdata"),
                    keygen_init: g!("EVP_PKEY_keygen_init"),
                    keygen: g!("EVP_PKEY_keygen"),
                    encapsulate_init: g!("EVP_PKEY_encapsulate_init"),
                    encapsulate: g!("EVP_PKEY_encapsulate"),
                    decapsulate_init: g!("EVP_PKEY_decapsulate_init"),
                    decapsulate: g!("EVP_PKEY_decapsulate"),
                    get_octet_string_param: g!("EVP_PKEY_get_octet_string_param"),
                })
            })(),
            _lib: lib,
        };
        let mut fns = fns;
        type Fetch = unsafe extern "C" fn(P, *const c_char, *const c_char) -> P;
        type Getter = unsafe extern "C" fn() -> P;
        // SAFETY: EVP_MD_fetch(libctx, name, properties) and the EVP_sha* getters, by
        // their prototypes in evp.h; a fetched method stays valid while the library is
        // loaded (this table holds a reference and never frees it).
        unsafe {
            let fetch: Option<Fetch> = fns._lib.get(b"EVP_MD_fetch\0").ok().map(|s| *s);
            for (name, getter, slot) in [
                (c"SHA256", &b"EVP_sha256\0"[..], &mut fns.sha256),
                (c"SHA384", &b"EVP_sha384\0"[..], &mut fns.sha384),
            ] {
                let fetched = fetch
                    .map(|f| f(std::ptr::null_mut(), name.as_ptr(), std::ptr::null()))
                    .filter(|p| !p.is_null());
                let md = match fetched {
                    Some(p) => p,
                    None => {
                        let g: Getter = *fns._lib.get(getter)?;
                        g()
                    }
                };
                *slot = Md(md);
            }
        }
        Ok(Pkey(Arc::new(fns)))
    }

    pub fn support(alg: Algorithm, version_num: u64) -> Option<String> {
        let what = match alg {
            Algorithm::MlKem768 => "ML-KEM",
            Algorithm::MlDsa65 => "ML-DSA",
            Algorithm::X25519MlKem768 => "X25519MLKEM768",
            _ => return None,
        };
        (version_num < 0x3050_0000).then(|| {
            format!("OpenSSL before 3.5 has no {what} (measure a 3.5 build with --libcrypto)")
        })
    }

    /// Why this (3.5 or later) libcrypto cannot give `alg` after all: a missing call, or
    /// a provider without the algorithm (a build configured `no-ml-kem`); None when it can.
    pub fn pq_gap(&self, alg: Algorithm) -> Option<String> {
        let (name, _, _) = pq_names(alg)?;
        let Some(pq) = &self.0.pq else {
            return Some("this libcrypto lacks EVP_PKEY_CTX_new_from_name, EVP_PKEY_fromdata or EVP_PKEY_encapsulate".into());
        };
        // SAFETY: a context by name (NULL library context and properties), freed at once.
        let ctx = unsafe {
            (pq.ctx_new_from_name)(std::ptr::null_mut(), name.as_ptr(), std::ptr::null())
        };
        if ctx.is_null() {
            let why = fail(&self.0, "EVP_PKEY_CTX_new_from_name");
            return Some(format!(
                "the loaded providers offer no {}: {why}",
                name.to_string_lossy()
            ));
        }
        // SAFETY: the context just made.
        unsafe { (self.0.ctx_free)(ctx) };
        None
    }

    pub fn key_pair(
        &self,
        alg: Algorithm,
        private: Option<&[u8]>,
    ) -> anyhow::Result<Box<dyn KeyPair>> {
        let f = &self.0;
        if let Some((name, private_param, _)) = pq_names(alg) {
            let key = match private {
                Some(p) => Key::from_data(f, name, private_param, p, SELECT_KEYPAIR)?,
                None => Key::generate(f, name)?,
            };
            return Ok(Box::new(OsslKeyPair::new(f.clone(), key, alg)?));
        }
        let key = match (alg, private) {
            (Algorithm::Ed25519 | Algorithm::X25519, p) => {
                let raw = match p {
                    Some(p) => p.to_vec(),
                    None => pkey::random_bytes(32)?,
                };
                let ty = if alg == Algorithm::Ed25519 {
                    EVP_PKEY_ED25519
                } else {
                    EVP_PKEY_X25519
                };
                // SAFETY: raw is valid for its length; NULL engine.
                Key::new(
                    f,
                    unsafe {
                        (f.new_raw_private)(ty, std::ptr::null_mut(), raw.as_ptr(), raw.len())
                    },
                    "EVP_PKEY_new_raw_private_key",
                )?
            }
            (Algorithm::EcdsaP256 | Algorithm::EcdsaP384 | Algorithm::EcdhP256, p) => {
                let len = if alg == Algorithm::EcdsaP384 { 48 } else { 32 };
                let der = match p {
                    // PKCS#8 (ECDSA interchange) is a SEQUENCE too; raw scalars are wrapped.
                    Some(d) if d.len() != len => d.to_vec(),
                    Some(s) => sec1(s, alg),
                    None => sec1(&pkey::random_bytes(len)?, alg),
                };
                Key::private_der(f, &der)?
            }
            (Algorithm::Dsa2048 | Algorithm::Dsa3072, p) => {
                let der = match p {
                    Some(d) => d.to_vec(),
                    None => {
                        shared_dsa_pkcs8(alg).ok_or_else(|| pkey::not_offered("openssl", alg))?
                    }
                };
                Key::private_der(f, &der)?
            }
            (a, p) => {
                let (_, der) = pkey::rsa_key("openssl", a, p)?;
                Key::private_der(f, &der)?
            }
        };
        Ok(Box::new(OsslKeyPair::new(f.clone(), key, alg)?))
    }

    pub fn public_key(&self, alg: Algorithm, public: &[u8]) -> anyhow::Result<Box<dyn PublicKey>> {
        let key = match pq_names(alg) {
            Some((name, _, param)) => Key::from_data(&self.0, name, param, public, SELECT_PUBLIC)?,
            None => Key::public(&self.0, alg, public)?,
        };
        if alg.kind() == crate::algorithms::Kind::Kem {
            return Ok(Box::new(Encapsulator::new(self.0.clone(), key)?));
        }
        Ok(Box::new(OsslPublic::new(self.0.clone(), key, alg)?))
    }
}

/// SEC1 ECPrivateKey DER of a raw scalar on the algorithm's curve.
fn sec1(scalar: &[u8], alg: Algorithm) -> Vec<u8> {
    let oid: &[u8] = if alg == Algorithm::EcdsaP384 {
        &[0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22]
    } else {
        &[0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07]
    };
    let mut body = vec![0x02, 0x01, 0x01, 0x04, scalar.len() as u8];
    body.extend_from_slice(scalar);
    body.extend_from_slice(&[0xa0, oid.len() as u8]);
    body.extend_from_slice(oid);
    let mut der = vec![0x30, body.len() as u8];
    der.extend(body);
    der
}

impl Key {
    fn private_der(f: &Arc<Fns>, der: &[u8]) -> anyhow::Result<Key> {
        let mut p = der.as_ptr();
        // SAFETY: p and len describe `der`.
        Key::new(
            f,
            unsafe { (f.d2i_auto_private_key)(std::ptr::null_mut(), &mut p, der.len() as c_long) },
            "d2i_AutoPrivateKey",
        )
    }
    /// A provider key by name from one octet-string parameter (`selection`: the key
    /// pair, or only the public key).
    fn from_data(
        f: &Arc<Fns>,
        name: &std::ffi::CStr,
        param: &std::ffi::CStr,
        bytes: &[u8],
        selection: c_int,
    ) -> anyhow::Result<Key> {
        let pq =
            f.pq.as_ref()
                .ok_or_else(|| anyhow!("this libcrypto has no EVP_PKEY_fromdata"))?;
        let mut params = octet_param(param, bytes);
        // SAFETY: a fresh context owned by Ctx; `params` (and `bytes` it points into)
        // outlive the call, which copies what it keeps.
        let ctx = Ctx(
            unsafe {
                (pq.ctx_new_from_name)(std::ptr::null_mut(), name.as_ptr(), std::ptr::null())
            },
            f.ctx_free,
        );
        let mut key: P = std::ptr::null_mut();
        if ctx.0.is_null()
            || unsafe { (pq.fromdata_init)(ctx.0) } != 1
            || unsafe { (pq.fromdata)(ctx.0, &mut key, selection, params.as_mut_ptr()) } != 1
        {
            return Err(anyhow::Error::msg(fail(
                f,
                &format!(
                    "importing the {} key ({} bytes)",
                    name.to_string_lossy(),
                    bytes.len()
                ),
            )));
        }
        Key::new(f, key, "EVP_PKEY_fromdata")
    }
    /// A fresh provider key by name (EVP_PKEY_keygen).
    fn generate(f: &Arc<Fns>, name: &std::ffi::CStr) -> anyhow::Result<Key> {
        let g = KeyGen::new(f, name)?;
        g.generate()
    }
    fn public(f: &Arc<Fns>, alg: Algorithm, public: &[u8]) -> anyhow::Result<Key> {
        // SAFETY (all arms): pointers and lengths describe the caller's slices.
        let p = match alg {
            Algorithm::Ed25519 | Algorithm::X25519 => {
                let ty = if alg == Algorithm::Ed25519 {
                    EVP_PKEY_ED25519
                } else {
                    EVP_PKEY_X25519
                };
                unsafe {
                    (f.new_raw_public)(ty, std::ptr::null_mut(), public.as_ptr(), public.len())
                }
            }
            // The SubjectPublicKeyInfo carries the domain parameters with the key.
            Algorithm::Dsa2048 | Algorithm::Dsa3072 => {
                let mut p = public.as_ptr();
                unsafe { (f.d2i_pubkey)(std::ptr::null_mut(), &mut p, public.len() as c_long) }
            }
            Algorithm::EcdsaP256 | Algorithm::EcdsaP384 | Algorithm::EcdhP256 => {
                let prefix = if alg == Algorithm::EcdsaP384 {
                    SPKI_P384
                } else {
                    SPKI_P256
                };
                let mut der = hex::decode(prefix).expect("constant hex");
                der.extend_from_slice(public);
                let mut p = der.as_ptr();
                unsafe { (f.d2i_pubkey)(std::ptr::null_mut(), &mut p, der.len() as c_long) }
            }
            _ => {
                let mut p = public.as_ptr();
                unsafe {
                    (f.d2i_public_key)(
                        EVP_PKEY_RSA,
                        std::ptr::null_mut(),
                        &mut p,
                        public.len() as c_long,
                    )
                }
            }
        };
        Key::new(f, p, "parsing the public key")
    }
    fn encoded_public(&self, alg: Algorithm) -> Vec<u8> {
        let f = &self.1;
        // SAFETY: the first calls ask for the length, the second fill a buffer of it.
        if let (Some((_, _, public)), Some(pq)) = (pq_names(alg), &f.pq) {
            // The hybrid's key management exports its public key only encoded (the TLS
            // key share), not as "pub".
            let param = if alg == Algorithm::X25519MlKem768 {
                c"encoded-pub-key"
            } else {
                public
            };
            let mut out = vec![0u8; 4096];
            let mut len = 0usize;
            // SAFETY: out is writable for its length; the parameter name is NUL-terminated.
            let ok = unsafe {
                (pq.get_octet_string_param)(
                    self.0,
                    param.as_ptr(),
                    out.as_mut_ptr(),
                    out.len(),
                    &mut len,
                )
            };
            out.truncate(if ok == 1 { len } else { 0 });
            return out;
        }
        // SAFETY: as above.
        unsafe {
            if matches!(alg, Algorithm::Ed25519 | Algorithm::X25519) {
                let mut out = [0u8; 32];
                let mut len = out.len();
                if (f.get_raw_public)(self.0, out.as_mut_ptr(), &mut len) == 1 {
                    return out[..len].to_vec();
                }
                return Vec::new();
            }
            // DSA's bare public key (y) means nothing without p, q and g: SPKI.
            let encode = if dsa_bits(alg).is_some() {
                f.i2d_pubkey
            } else {
                f.i2d_public_key
            };
            let n = encode(self.0, std::ptr::null_mut());
            if n <= 0 {
                return Vec::new();
            }
            let mut out = vec![0u8; n as usize];
            let mut p = out.as_mut_ptr();
            encode(self.0, &mut p);
            out
        }
    }
}

// SAFETY: the contexts are used by one thread at a time; `md` is a static method table.
unsafe impl Send for Signer {}

struct OsslKeyPair {
    f: Arc<Fns>,
    alg: Algorithm,
    signer: Option<Signer>,
    /// Key agreement: a context with EVP_PKEY_derive_init done once; each call sets a
    /// new peer on it.
    deriver: Option<Ctx>,
    /// KEM: a context with EVP_PKEY_decapsulate_init done once, and a key generator.
    decapsulator: Option<Ctx>,
    keygen: Option<KeyGen>,
    // Declared after the contexts that use it, so dropped after them.
    key: Key,
}

impl OsslKeyPair {
    fn new(f: Arc<Fns>, key: Key, alg: Algorithm) -> anyhow::Result<Self> {
        let signer = match alg.kind() {
            crate::algorithms::Kind::Signature => Some(signer(&f, &key, alg, true)?),
            _ => None,
        };
        let deriver = match alg.kind() {
            crate::algorithms::Kind::Agreement => {
                // SAFETY: a fresh context on our key, owned by Ctx.
                let ctx = Ctx(
                    unsafe { (f.ctx_new)(key.0, std::ptr::null_mut()) },
                    f.ctx_free,
                );
                if ctx.0.is_null() || unsafe { (f.derive_init)(ctx.0) } != 1 {
                    return Err(anyhow::Error::msg(fail(&f, "EVP_PKEY_derive_init")));
                }
                Some(ctx)
            }
            _ => None,
        };
        let (decapsulator, keygen) = match (alg.kind(), pq_names(alg), &f.pq) {
            (crate::algorithms::Kind::Kem, Some((name, _, _)), Some(pq)) => {
                // SAFETY: a fresh context on our key, owned by Ctx.
                let ctx = Ctx(
                    unsafe { (f.ctx_new)(key.0, std::ptr::null_mut()) },
                    f.ctx_free,
                );
                if ctx.0.is_null() || unsafe { (pq.decapsulate_init)(ctx.0, std::ptr::null()) } != 1
                {
                    return Err(anyhow::Error::msg(fail(&f, "EVP_PKEY_decapsulate_init")));
                }
                (Some(ctx), Some(KeyGen::new(&f, name)?))
            }
            _ => (None, None),
        };
        Ok(OsslKeyPair {
            f,
            alg,
            signer,
            deriver,
            decapsulator,
            keygen,
            key,
        })
    }
}

impl KeyPair for OsslKeyPair {
    fn public_key(&self) -> Vec<u8> {
        self.key.encoded_public(self.alg)
    }
    fn sign(&mut self, msg: &[u8]) -> anyhow::Result<Vec<u8>> {
        let f = &self.f;
        match &self.signer {
            Some(Signer::Digest { pctx, md, max }) => {
                let (d, n) = digest(f, *md, msg)?;
                pkey_sign(f, pctx, *max, &d[..n])
            }
            Some(Signer::Message { pctx, max }) => pkey_sign(f, pctx, *max, msg),
            Some(Signer::OneShot { mctx, max }) => {
                let mut sig = vec![0u8; *max];
                let mut len = sig.len();
                // SAFETY: sig has EVP_PKEY_get_size bytes (64 for Ed25519).
                if unsafe {
                    (f.digest_sign)(mctx.0, sig.as_mut_ptr(), &mut len, msg.as_ptr(), msg.len())
                } != 1
                {
                    return Err(anyhow::Error::msg(fail(f, "EVP_DigestSign")));
                }
                sig.truncate(len);
                Ok(sig)
            }
            None => Err(anyhow!("{} does not sign", self.alg)),
        }
    }
    fn decaps(&mut self, ciphertext: &[u8]) -> anyhow::Result<Vec<u8>> {
        let f = &self.f;
        let (Some(ctx), Some(pq)) = (&self.decapsulator, &f.pq) else {
            return Err(anyhow!("{} does not decapsulate", self.alg));
        };
        // ML-KEM's secret is 32 bytes, the hybrid's 64.
        let mut out = vec![0u8; 64];
        let mut len = out.len();
        // SAFETY: the context is ours and initialised; out and ciphertext are live slices.
        if unsafe {
            (pq.decapsulate)(
                ctx.0,
                out.as_mut_ptr(),
                &mut len,
                ciphertext.as_ptr(),
                ciphertext.len(),
            )
        } != 1
        {
            return Err(anyhow::Error::msg(fail(f, "EVP_PKEY_decapsulate")));
        }
        out.truncate(len);
        Ok(out)
    }
    fn keygen(&mut self) -> anyhow::Result<()> {
        match &self.keygen {
            Some(g) => g.generate().map(drop),
            None => Err(anyhow!("{} has no keygen operation", self.alg)),
        }
    }
    fn derive(&mut self, peer: &[u8]) -> anyhow::Result<Vec<u8>> {
        let f = &self.f;
        let ctx = self
            .deriver
            .as_ref()
            .ok_or_else(|| anyhow!("{} does not agree keys", self.alg))?;
        let peer = if self.alg == Algorithm::EcdhP256 {
            // As libssl takes a TLS key share: our key's group, then the peer's point. The
            // SPKI decoder (d2i_PUBKEY) goes through 3.0's decoder framework, which costs
            // several times the ECDH itself and is not what a handshake pays.
            // SAFETY: a fresh EVP_PKEY owned by Key; our key outlives the calls; `peer` is
            // readable for its length.
            let k = Key::new(f, unsafe { (f.pkey_new)() }, "EVP_PKEY_new")?;
            if unsafe { (f.copy_parameters)(k.0, self.key.0) } != 1 {
                return Err(anyhow::Error::msg(fail(f, "EVP_PKEY_copy_parameters")));
            }
            if unsafe { (f.set1_encoded_public_key)(k.0, peer.as_ptr(), peer.len()) } != 1 {
                return Err(anyhow::Error::msg(fail(
                    f,
                    "EVP_PKEY_set1_encoded_public_key",
                )));
            }
            k
        } else {
            Key::public(f, self.alg, peer)?
        };
        // SAFETY: the context is ours and initialised; the peer key outlives the derive.
        unsafe {
            if (f.derive_set_peer)(ctx.0, peer.0) != 1 {
                return Err(anyhow::Error::msg(fail(f, "EVP_PKEY_derive_set_peer")));
            }
            let mut out = vec![0u8; 32];
            let mut len = out.len();
            if (f.derive)(ctx.0, out.as_mut_ptr(), &mut len) != 1 {
                return Err(anyhow::Error::msg(fail(f, "EVP_PKEY_derive")));
            }
            out.truncate(len);
            Ok(out)
        }
    }
}

struct OsslPublic {
    f: Arc<Fns>,
    verifier: Signer,
    _key: Key,
}

impl OsslPublic {
    fn new(f: Arc<Fns>, key: Key, alg: Algorithm) -> anyhow::Result<Self> {
        if alg.kind() != crate::algorithms::Kind::Signature {
            return Err(anyhow!("openssl has no {alg} public-key operation here"));
        }
        let verifier = signer(&f, &key, alg, false)?;
        Ok(OsslPublic {
            f,
            verifier,
            _key: key,
        })
    }
}

impl PublicKey for OsslPublic {
    fn verify(&mut self, msg: &[u8], sig: &[u8]) -> anyhow::Result<()> {
        let f = &self.f;
        // SAFETY: every pointer and length describes a live slice.
        let ok = unsafe {
            match &self.verifier {
                Signer::Digest { pctx, md, .. } => {
                    let (d, n) = digest(f, *md, msg)?;
                    (f.verify)(pctx.0, sig.as_ptr(), sig.len(), d.as_ptr(), n)
                }
                Signer::Message { pctx, .. } => {
                    (f.verify)(pctx.0, sig.as_ptr(), sig.len(), msg.as_ptr(), msg.len())
                }
                Signer::OneShot { mctx, .. } => {
                    (f.digest_verify)(mctx.0, sig.as_ptr(), sig.len(), msg.as_ptr(), msg.len())
                }
            }
        };
        if ok != 1 {
            // Drain the queue so a failed verify leaves nothing for the next call.
            let _ = fail(f, "verify");
            return Err(anyhow!("openssl: the signature does not verify"));
        }
        Ok(())
    }
}
