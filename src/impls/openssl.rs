//! The system OpenSSL (or any libcrypto from OpenSSL 1.1 or 3.x), loaded at run time.
//!
//! Nothing is linked: `libcrypto` is opened with `dlopen` and every function this module
//! calls is resolved once, at load time, into a table of function pointers. A library
//! that lacks one of them is not a usable libcrypto and is refused with a one-line
//! reason. The EVP algorithm getters (`EVP_aes_128_gcm`, ...) are optional: a build
//! without one simply does not offer that algorithm.
//!
//! Each [`Operation`] keys its context once in `prepare`; every `process` call is then
//! one independent message: set the nonce or IV (`EVP_CipherInit_ex` with only the IV),
//! feed the AAD, the data, finalise, and get or check the tag. `openssl speed` counts
//! differently (it streams CBC and ChaCha20-Poly1305, and re-keys GCM per message in
//! recent 3.0 releases): `bench/vs-openssl-speed` compares the two and says how.
//!
//! Variants (`--variant`), each measured beside the base instance:
//!
//! - `isa=no-aesni`, `isa=no-avx512`, `isa=no-avx2` or `isa=<OPENSSL_ia32cap mask>`: the
//!   same libcrypto loaded a second time with `OPENSSL_ia32cap` set, which libcrypto
//!   reads once, in its ELF constructor. The file is copied into a private temporary
//!   directory (a different path is a separate instance with its own globals), opened
//!   with the variable set, and the copy is deleted at once (the mapping stays valid;
//!   Debian's libcrypto is NODELETE, others pin themselves). The CPU capabilities the
//!   copy reports (`OpenSSL_version(OPENSSL_CPU_INFO)`, 3.x) are checked against the
//!   base instance's: a mask that changes nothing here, or turns on a capability the
//!   CPU lacks, is refused.
//! - `speed-loop`: per call, exactly the EVP calls `openssl speed -evp` 3.0 makes per
//!   counted operation, where that still gives each call's true answer (see
//!   [`SpeedLoopOp`]), so that cryptobench and `openssl speed` can be compared 1:1.

use super::{Implementation, Io, Operation, Support};
use crate::algorithms::{Algorithm, Direction, Kind, TAG_LEN};
use libloading::Library;
use std::ffi::{c_char, c_int, c_uint, c_ulong, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::Arc;

// `OpenSSL_version` selectors (crypto.h). 0..=5 exist in 1.1 and 3.x; 6..=9 only in 3.x.
const OPENSSL_VERSION: c_int = 0;
const OPENSSL_CFLAGS: c_int = 1;
const OPENSSL_BUILT_ON: c_int = 2;
const OPENSSL_PLATFORM: c_int = 3;
const OPENSSL_DIR: c_int = 4;
const OPENSSL_FULL_VERSION_STRING: c_int = 7;
const OPENSSL_MODULES_DIR: c_int = 8;
const OPENSSL_CPU_INFO: c_int = 9;
/// Highest selector OpenSSL 1.1 knows (OPENSSL_ENGINES_DIR).
const LAST_1_1_SELECTOR: c_int = 5;
/// `OpenSSL_version_num()` of 3.0.0.
const V3_0_0: u64 = 0x3000_0000;

// EVP_CIPHER_CTX_ctrl commands (evp.h), the same numbers in 1.1 and 3.x.
const EVP_CTRL_AEAD_SET_IVLEN: c_int = 0x9;
const EVP_CTRL_AEAD_GET_TAG: c_int = 0x10;
const EVP_CTRL_AEAD_SET_TAG: c_int = 0x11;

/// AEAD nonce length: 96 bits for GCM and ChaCha20-Poly1305.
const AEAD_NONCE_LEN: usize = 12;
/// Block-cipher IV length.
const CIPHER_IV_LEN: usize = 16;

const HOW_TO_FIX: &str = "give the path of a libcrypto.so from OpenSSL 1.1 or 3.x";
const SYSTEM_NAMES: [&str; 3] = ["libcrypto.so.3", "libcrypto.so.1.1", "libcrypto.so"];

type VoidFn = unsafe extern "C" fn();
type VersionFn = unsafe extern "C" fn(c_int) -> *const c_char;
type VersionNumFn = unsafe extern "C" fn() -> c_ulong;
type NewFn = unsafe extern "C" fn() -> *mut c_void;
type FreeFn = unsafe extern "C" fn(*mut c_void);
type GetterFn = unsafe extern "C" fn() -> *const c_void;
type FetchFn = unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char) -> *mut c_void;
type CipherInitFn = unsafe extern "C" fn(
    *mut c_void,
    *const c_void,
    *mut c_void,
    *const u8,
    *const u8,
    c_int,
) -> c_int;
type CipherUpdateFn =
    unsafe extern "C" fn(*mut c_void, *mut u8, *mut c_int, *const u8, c_int) -> c_int;
type CipherFinalFn = unsafe extern "C" fn(*mut c_void, *mut u8, *mut c_int) -> c_int;
type DecryptInitFn =
    unsafe extern "C" fn(*mut c_void, *const c_void, *mut c_void, *const u8, *const u8) -> c_int;
type CtrlFn = unsafe extern "C" fn(*mut c_void, c_int, c_int, *mut c_void) -> c_int;
type SetPaddingFn = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;
type DigestInitFn = unsafe extern "C" fn(*mut c_void, *const c_void, *mut c_void) -> c_int;
type DigestUpdateFn = unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> c_int;
type DigestFinalFn = unsafe extern "C" fn(*mut c_void, *mut u8, *mut c_uint) -> c_int;
type HmacInitFn =
    unsafe extern "C" fn(*mut c_void, *const c_void, c_int, *const c_void, *mut c_void) -> c_int;
type HmacUpdateFn = unsafe extern "C" fn(*mut c_void, *const u8, usize) -> c_int;
type HmacFinalFn = unsafe extern "C" fn(*mut c_void, *mut u8, *mut c_uint) -> c_int;
type ErrGetFn = unsafe extern "C" fn() -> c_ulong;
type ErrStringFn = unsafe extern "C" fn(c_ulong, *mut c_char, usize);
type StrFn = unsafe extern "C" fn() -> *const c_char;

/// Every libcrypto function this module calls, resolved once. The pointers point into
/// `_lib`, which lives exactly as long as they do.
struct Api {
    path: PathBuf,
    version_num: u64,
    openssl_version: VersionFn,
    err_clear_error: VoidFn,
    err_get_error: ErrGetFn,
    err_error_string_n: ErrStringFn,
    cipher_ctx_new: NewFn,
    cipher_ctx_free: FreeFn,
    cipher_init_ex: CipherInitFn,
    cipher_update: CipherUpdateFn,
    cipher_final_ex: CipherFinalFn,
    cipher_ctx_ctrl: CtrlFn,
    cipher_ctx_set_padding: SetPaddingFn,
    // The direction-specific calls `openssl speed` makes (the speed-loop variant).
    encrypt_update: CipherUpdateFn,
    decrypt_update: CipherUpdateFn,
    encrypt_final_ex: CipherFinalFn,
    decrypt_final_ex: CipherFinalFn,
    decrypt_init_ex: DecryptInitFn,
    md_ctx_new: NewFn,
    md_ctx_free: FreeFn,
    digest_init_ex: DigestInitFn,
    digest_update: DigestUpdateFn,
    digest_final_ex: DigestFinalFn,
    hmac_ctx_new: NewFn,
    hmac_ctx_free: FreeFn,
    hmac_init_ex: HmacInitFn,
    hmac_update: HmacUpdateFn,
    hmac_final: HmacFinalFn,
    // Optional: BN_options (for the "options:" line of `openssl speed`), and the 3.x
    // explicit fetches, which avoid an implicit fetch inside every EVP_DigestInit_ex.
    bn_options: Option<StrFn>,
    cipher_fetch: Option<FetchFn>,
    cipher_free: Option<FreeFn>,
    md_fetch: Option<FetchFn>,
    md_free: Option<FreeFn>,
    /// `EVP_*` getters, indexed like `Algorithm::ALL`.
    getters: [Option<GetterFn>; Algorithm::ALL.len()],
    // Declared last, so dropped last.
    _lib: Library,
}

/// The EVP getter symbol and the 3.x fetch name of each algorithm.
fn evp_names(alg: Algorithm) -> (&'static str, &'static str) {
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
        // Public-key algorithms go through EVP_PKEY, not an EVP getter.
        _ => ("", ""),
    }
}

fn alg_index(alg: Algorithm) -> usize {
    Algorithm::ALL.iter().position(|a| *a == alg).unwrap_or(0)
}

/// Copies a C string owned by libcrypto; None for NULL.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that stays valid during the call.
unsafe fn c_string(p: *const c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        // SAFETY: non-NULL and NUL-terminated per this function's contract.
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }
}

/// One line, whatever the loader said.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The loader's own reason for a failed dlopen, without the file name it starts with.
fn dl_reason(e: &libloading::Error, name: &str) -> String {
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
unsafe fn sym<T: Copy>(lib: &Library, name: &str) -> Option<T> {
    // SAFETY: the caller guarantees `T` matches the symbol; we copy the pointer out and
    // keep `lib` alive alongside it in `Api`.
    unsafe { lib.get::<T>(name.as_bytes()).ok().map(|s| *s) }
}

impl Api {
    /// Resolves everything from an opened library. Err is the reason, without the path.
    fn resolve(lib: Library, path: PathBuf) -> Result<Api, String> {
        // SAFETY: every symbol below is looked up with its C prototype from OpenSSL's
        // headers (crypto.h, evp.h, hmac.h, err.h, bn.h), identical in 1.1 and 3.x.
        unsafe {
            let openssl_version: VersionFn = match sym(&lib, "OpenSSL_version") {
                Some(f) => f,
                None => {
                    if sym::<VersionFn>(&lib, "SSLeay_version").is_some() {
                        return Err("OpenSSL 1.0 or older (it has SSLeay_version but no OpenSSL_version), which is not supported".into());
                    }
                    return Err("not a libcrypto (no OpenSSL_version symbol)".into());
                }
            };
            macro_rules! need {
                ($name:literal) => {
                    match sym(&lib, $name) {
                        Some(f) => f,
                        None => return Err(format!("not a usable libcrypto (no {} symbol)", $name)),
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
            Ok(Api {
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
                getters,
                _lib: lib,
            })
        }
    }

    /// A failure message naming the call, with OpenSSL's first queued error if any.
    /// Empties the thread's error queue, so that a failure leaves nothing behind.
    fn fail(&self, what: &str) -> String {
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

    fn version_info(&self, t: c_int) -> Option<String> {
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
struct Raw(*mut c_void);
// SAFETY: an Operation owns its contexts exclusively and is used by one thread at a
// time (`process` takes `&mut self`); OpenSSL contexts may move between threads as long
// as they are not used concurrently. Fetched EVP_MD/EVP_CIPHER objects are immutable
// and reference counted with atomics.
unsafe impl Send for Raw {}

/// OpenSSL (libcrypto) reached through `dlopen`.
pub struct OpenSsl {
    api: Arc<Api>,
    mode: Mode,
}

/// Which instance this is: the library as loaded, or one of its variants.
enum Mode {
    Base,
    /// A second copy of the library, loaded with `OPENSSL_ia32cap` set.
    Isa(Box<IsaVariant>),
    /// The per-call work of `openssl speed -evp`.
    SpeedLoop,
}

impl OpenSsl {
    /// The system libcrypto: "libcrypto.so.3", then "libcrypto.so.1.1", then "libcrypto.so".
    pub fn load_system() -> Result<OpenSsl, String> {
        let mut tried = Vec::new();
        for name in SYSTEM_NAMES {
            // SAFETY: loading libcrypto runs only its ELF initialisers, which set up
            // OpenSSL's own state; it exports nothing that replaces symbols of ours.
            match unsafe { Library::new(name) } {
                Ok(lib) => {
                    let path = loaded_path(&lib).unwrap_or_else(|| PathBuf::from(name));
                    match Api::resolve(lib, path) {
                        Ok(api) => return Ok(OpenSsl::base(api)),
                        Err(why) => tried.push(format!("{name} ({why})")),
                    }
                }
                Err(e) => tried.push(format!("{name} ({})", dl_reason(&e, name))),
            }
        }
        Err(format!(
            "no usable system libcrypto: tried {}: install libssl3 (e.g. `apt-get install libssl3`) or pass --libcrypto PATH",
            tried.join(", ")
        ))
    }

    /// A libcrypto at a given path (an OpenSSL build beside the system one).
    pub fn load_path(path: &Path) -> Result<OpenSsl, String> {
        let shown = path.display();
        let bad = |why: &str| format!("--libcrypto {shown}: {why}: {HOW_TO_FIX}");
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(bad("cannot load (file not found)"))
            }
            Err(e) => return Err(bad(&format!("cannot load ({})", one_line(&e.to_string())))),
            Ok(m) if m.is_dir() => return Err(bad("cannot load (is a directory)")),
            Ok(_) => {}
        }
        let Some(name) = path.to_str() else {
            return Err(bad("cannot load (the path is not valid UTF-8)"));
        };
        // dlopen searches the library path for a bare name; a path with a slash is opened
        // as given, which is what the user asked for.
        let name = if name.contains('/') {
            name.to_string()
        } else {
            format!("./{name}")
        };
        // SAFETY: as in `load_system`; the user named this file as a libcrypto, and
        // anything without OpenSSL's symbols is refused before any of it is called.
        let lib = unsafe { Library::new(&name) }
            .map_err(|e| bad(&format!("cannot load ({})", dl_reason(&e, &name))))?;
        let api = Api::resolve(lib, path.to_path_buf()).map_err(|why| bad(&why))?;
        Ok(OpenSsl::base(api))
    }

    fn base(api: Api) -> OpenSsl {
        OpenSsl {
            api: Arc::new(api),
            mode: Mode::Base,
        }
    }

    /// The file the library was loaded from.
    pub fn path(&self) -> &Path {
        &self.api.path
    }

    /// `OpenSSL_version(t)`: 0 version, 1 compiler flags, 2 built on, 3 platform,
    /// 4 OPENSSLDIR, 5 ENGINESDIR; in 3.x also 6 version, 7 full version, 8 MODULESDIR,
    /// 9 CPU info. None for a selector this version does not know.
    pub fn version_info(&self, t: i32) -> Option<String> {
        self.api.version_info(t)
    }

    /// `OpenSSL_version_num()`, e.g. 0x30000130 for 3.0.19.
    pub fn version_num(&self) -> u64 {
        self.api.version_num
    }

    /// `BN_options()`, e.g. "bn(64,64)": the "options:" line of `openssl speed`.
    pub fn bn_options(&self) -> Option<String> {
        let f = self.api.bn_options?;
        // SAFETY: BN_options takes nothing and returns a static string.
        unsafe { c_string(f()) }
    }

    /// The cipher to key a context with, and whether we own a reference to it.
    fn cipher(&self, alg: Algorithm) -> Result<(Raw, bool), String> {
        self.resolve(alg, self.api.cipher_fetch)
    }

    fn digest(&self, alg: Algorithm) -> Result<(Raw, bool), String> {
        self.resolve(alg, self.api.md_fetch)
    }

    /// The EVP_CIPHER/EVP_MD for `alg`: fetched from the providers in 3.x (so that no
    /// implicit fetch happens later), else the legacy getter's static object.
    fn resolve(&self, alg: Algorithm, fetch: Option<FetchFn>) -> Result<(Raw, bool), String> {
        let (getter_name, fetch_name) = evp_names(alg);
        let Some(getter) = self.api.getters[alg_index(alg)] else {
            return Err(format!(
                "{} is not in this libcrypto (no {getter_name} symbol)",
                alg.name()
            ));
        };
        // SAFETY: an EVP getter takes nothing and returns a static object or NULL.
        let legacy = unsafe { getter() };
        if legacy.is_null() {
            return Err(format!(
                "{getter_name}() returned NULL: disabled in this build"
            ));
        }
        if let Some(fetch) = fetch {
            let Ok(cname) = CString::new(fetch_name) else {
                return Err(format!("bad algorithm name {fetch_name}"));
            };
            // SAFETY: EVP_*_fetch(libctx NULL = default, NUL-terminated name, properties
            // NULL) returns a new reference or NULL; the caller frees it.
            let p = unsafe { fetch(std::ptr::null_mut(), cname.as_ptr(), std::ptr::null()) };
            if p.is_null() {
                let why = self.api.fail(&format!("fetching {fetch_name}"));
                return Err(format!(
                    "{why}: not offered by the loaded OpenSSL providers"
                ));
            }
            return Ok((Raw(p), true));
        }
        Ok((Raw(legacy as *mut c_void), false))
    }

    fn prepare_cipher(
        &self,
        alg: Algorithm,
        dir: Direction,
        key: &[u8],
    ) -> Result<Box<dyn Operation>, String> {
        let api = &self.api;
        let (cipher, owned) = self.cipher(alg)?;
        let free_cipher = |c: &Raw| {
            if owned {
                if let Some(free) = api.cipher_free {
                    // SAFETY: `c` is the reference EVP_CIPHER_fetch gave us; a context
                    // keyed with it holds its own reference.
                    unsafe { free(c.0) };
                }
            }
        };
        // SAFETY: EVP_CIPHER_CTX_new takes nothing and returns a new context or NULL.
        let ctx = unsafe { (api.cipher_ctx_new)() };
        if ctx.is_null() {
            free_cipher(&cipher);
            return Err(api.fail("EVP_CIPHER_CTX_new"));
        }
        // From here the context is owned by `op` and freed by its Drop on every path.
        let op = CipherOp {
            api: Arc::clone(api),
            ctx: Raw(ctx),
            aead: alg.kind() == Kind::Aead,
            enc: dir == Direction::Enc,
        };
        let keyed = op.key(cipher.0, key, alg);
        free_cipher(&cipher);
        keyed?;
        Ok(Box::new(op))
    }

    /// A keyed context like `prepare_cipher`'s, driven the way `openssl speed` drives it.
    fn prepare_speed_loop(
        &self,
        alg: Algorithm,
        dir: Direction,
        key: &[u8],
    ) -> Result<Box<dyn Operation>, String> {
        let api = &self.api;
        let (cipher, owned) = self.cipher(alg)?;
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
            return Err(api.fail("EVP_CIPHER_CTX_new"));
        }
        // From here the context is owned by `op` and freed by its Drop on every path.
        let op = CipherOp {
            api: Arc::clone(api),
            ctx: Raw(ctx),
            aead: alg.kind() == Kind::Aead,
            enc: dir == Direction::Enc,
        };
        let keyed = op.key(cipher.0, key, alg);
        free_cipher();
        keyed?;
        // openssl speed turns padding off on every EVP context it sets up, GCM and CTR
        // included, and 3.0 re-applies that setting inside every later EVP_CipherInit_ex
        // (a provider parameter call per message): do the same.
        // SAFETY: a keyed context; padding changes nothing for GCM and CTR themselves.
        if unsafe { (api.cipher_ctx_set_padding)(op.ctx.0, 0) } != 1 {
            return Err(api.fail("EVP_CIPHER_CTX_set_padding"));
        }
        let kind = match alg {
            Algorithm::Aes128Gcm | Algorithm::Aes192Gcm | Algorithm::Aes256Gcm => {
                SpeedKind::Gcm { key: key.to_vec() }
            }
            Algorithm::Aes128Cbc | Algorithm::Aes192Cbc | Algorithm::Aes256Cbc => {
                // The stream starts from a zero chaining value.
                let zero = [0u8; CIPHER_IV_LEN];
                op.set_iv(&zero, CIPHER_IV_LEN)?;
                SpeedKind::Cbc { chain: zero }
            }
            Algorithm::Aes128Ctr | Algorithm::Aes192Ctr | Algorithm::Aes256Ctr => SpeedKind::Ctr,
            other => return Err(format!("speed-loop does not offer {other}")),
        };
        Ok(Box::new(SpeedLoopOp { cipher: op, kind }))
    }
}

/// The path of the object that defines `OpenSSL_version`, as the dynamic loader has it.
fn loaded_path(lib: &Library) -> Option<PathBuf> {
    // SAFETY: the symbol is only used as an address for dladdr, never called here.
    let f: VersionFn = unsafe { sym(lib, "OpenSSL_version") }?;
    let mut info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    // SAFETY: dladdr reads the loader's tables and fills `info`, which we own; the file
    // name it returns stays valid while the library is loaded (we copy it at once).
    let ok = unsafe { libc::dladdr(f as *const c_void, &mut info) };
    if ok == 0 {
        return None;
    }
    // SAFETY: dli_fname is NULL or a NUL-terminated string owned by the loader.
    let name = unsafe { c_string(info.dli_fname) }?;
    if name.is_empty() {
        None
    } else {
        Some(PathBuf::from(name))
    }
}

/// The `--variant` that makes each call do `openssl speed -evp`'s per-operation work.
const SPEED_LOOP: &str = "speed-loop";

/// The variable libcrypto's constructor reads its CPU capability mask from, once, when the
/// library is loaded (OPENSSL_ia32cap(3)).
const IA32CAP_ENV: &str = "OPENSSL_ia32cap";

/// A named `isa=` variant: the OPENSSL_ia32cap value it sets and what that turns off.
struct NamedIsa {
    name: &'static str,
    mask: &'static str,
    turns_off: &'static str,
}

/// Every mask names its second word: without one, OpenSSL zeroes that whole word, which
/// would also turn off AVX2, AVX-512, SHA-NI, BMI and ADX. Checked on 3.0.19 (AMD EPYC
/// with AVX-512) by sampling which instructions `openssl speed` runs:
/// - ChaCha20 has an AVX512VL path (EVEX on 256-bit registers) that OpenSSL takes when
///   AVX512VL is set even with AVX512F clear, so no-avx512 clears every AVX-512 bit;
/// - OpenSSL's AVX-512 ChaCha20 checks AVX512F only, not AVX2, so no-avx2 clears the
///   AVX-512 bits as well (no real CPU has AVX-512 without AVX2);
/// - VAES and VPCLMULQDQ go with AES-NI (no-aesni: no CPU has them without it) and with
///   AVX-512 (no-avx512: OpenSSL's wide GCM needs both; 3.0 has no VAES code at all).
const NAMED_ISA: [NamedIsa; 3] = [
    NamedIsa {
        name: "no-aesni",
        mask: "~0x200000200000000:~0x60000000000",
        turns_off: "AES-NI, PCLMULQDQ, VAES and VPCLMULQDQ off",
    },
    NamedIsa {
        name: "no-avx512",
        mask: ":~0x5e42dc230000",
        turns_off: "every AVX-512 extension (F DQ IFMA PF ER CD BW VL VBMI VBMI2 VNNI BITALG VPOPCNTDQ), VAES and VPCLMULQDQ off",
    },
    NamedIsa {
        name: "no-avx2",
        mask: ":~0x5e42dc230020",
        turns_off: "AVX2, every AVX-512 extension, VAES and VPCLMULQDQ off",
    },
];

/// One word of an OPENSSL_ia32cap value: `~` (clear these bits) or not (use this value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct CapWord {
    complement: bool,
    value: u64,
}

/// An OPENSSL_ia32cap value, `[~]N[:[~]N]` or `:[~]N`: the first word, the second word.
/// A missing first word keeps the CPU's; a missing second word makes OpenSSL zero it.
#[derive(Debug, PartialEq, Eq)]
struct Ia32cap(Option<CapWord>, Option<CapWord>);

/// A number the way OpenSSL reads one here: 0x hex, 0 octal, else decimal. Stricter than
/// OpenSSL, which silently stops at the first bad digit.
fn parse_c_number(s: &str) -> Option<u64> {
    let (digits, radix) = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => (h, 16),
        None if s.len() > 1 && s.starts_with('0') => (&s[1..], 8),
        None => (s, 10),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

fn parse_ia32cap(s: &str) -> Result<Ia32cap, String> {
    let word = |w: &str| -> Result<CapWord, String> {
        let (complement, num) = match w.strip_prefix('~') {
            Some(rest) => (true, rest),
            None => (false, w),
        };
        parse_c_number(num)
            .map(|value| CapWord { complement, value })
            .ok_or_else(|| format!("'{w}' is not [~]NUMBER (0x hex, 0 octal or decimal)"))
    };
    let (first, second) = match s.split_once(':') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    if first.is_empty() && second.is_none() {
        return Err("the mask is empty".into());
    }
    let first = if first.is_empty() {
        None
    } else {
        Some(word(first)?)
    };
    let second = second.map(word).transpose()?;
    Ok(Ia32cap(first, second))
}

/// What `isa=VALUE` sets: the OPENSSL_ia32cap value, and what it turns off, in words.
fn isa_request(value: &str) -> Result<(String, String), String> {
    if let Some(n) = NAMED_ISA.iter().find(|n| n.name == value) {
        return Ok((n.mask.into(), n.turns_off.into()));
    }
    let hint = "use isa=no-aesni, isa=no-avx512, isa=no-avx2 or isa=<OPENSSL_ia32cap mask>, e.g. isa=~0x200000200000000:~0";
    let m = parse_ia32cap(value).map_err(|e| {
        format!("isa={value}: not a known name nor an OPENSSL_ia32cap mask ({e}): {hint}")
    })?;
    let mut what = format!("the OPENSSL_ia32cap mask {value} as given");
    if m.1.is_none() {
        what.push_str(
            ", which has no second word, so OpenSSL zeroes that word (AVX2, AVX-512, SHA-NI, BMI and ADX off too)",
        );
    }
    Ok((value.to_string(), what))
}

/// The two capability words in libcrypto's `CPUINFO: OPENSSL_ia32cap=0x...:0x... env:...`.
fn caps_of(cpu_info: &str) -> Option<(u64, u64)> {
    let rest = cpu_info.split("OPENSSL_ia32cap=").nth(1)?;
    let (a, b) = rest.split_whitespace().next()?.split_once(':')?;
    let hex = |x: &str| u64::from_str_radix(x.strip_prefix("0x")?, 16).ok();
    Some((hex(a)?, hex(b)?))
}

/// A second copy of a libcrypto, loaded with OPENSSL_ia32cap set.
struct IsaVariant {
    /// "isa=no-aesni", as given to --variant.
    spec: String,
    /// The OPENSSL_ia32cap value the copy was loaded with.
    mask: String,
    turns_off: String,
    /// The base library's CPU info, for comparison (3.x only).
    base_cpu_info: Option<String>,
    /// Capability bits on in the base library and off in the copy, when both are known.
    cleared: Option<(u64, u64)>,
    /// The copy that was opened (deleted right after).
    loaded_from: PathBuf,
}

/// Serialises the loads that set OPENSSL_ia32cap: the environment is process-wide.
static IA32CAP_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A directory only we can enter (mode 0700), removed with its content when dropped.
struct PrivateDir(PathBuf);

impl PrivateDir {
    fn new() -> Result<PrivateDir, String> {
        use std::os::unix::fs::DirBuilderExt;
        let base = std::env::temp_dir();
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        for i in 0..64u32 {
            let p = base.join(format!(
                "cryptobench-isa-{}-{stamp:x}-{i}",
                std::process::id()
            ));
            match std::fs::DirBuilder::new().mode(0o700).create(&p) {
                Ok(()) => return Ok(PrivateDir(p)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(format!(
                        "cannot create a private directory in {}: {} (set TMPDIR to a writable directory)",
                        base.display(),
                        one_line(&e.to_string())
                    ))
                }
            }
        }
        Err(format!(
            "cannot create a private directory in {}: every name tried exists",
            base.display()
        ))
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Sets an environment variable until dropped, then restores what was there.
struct EnvOverride {
    name: &'static str,
    old: Option<std::ffi::OsString>,
}

impl EnvOverride {
    fn set(name: &'static str, value: &str) -> EnvOverride {
        let old = std::env::var_os(name);
        std::env::set_var(name, value);
        EnvOverride { name, old }
    }
}

impl Drop for EnvOverride {
    fn drop(&mut self) {
        match &self.old {
            Some(v) => std::env::set_var(self.name, v),
            None => std::env::remove_var(self.name),
        }
    }
}

impl OpenSsl {
    /// This library loaded again with OPENSSL_ia32cap set for `isa=VALUE`.
    ///
    /// The environment is changed only while the copy's constructors run, under a lock;
    /// like any setenv it races with C code reading the environment on other threads,
    /// so variants are made while the registry is built, before any worker exists.
    fn isa_variant(&self, spec: &str, value: &str) -> Result<OpenSsl, String> {
        let (mask, turns_off) = isa_request(value)?;
        if !cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
            return Err(format!(
                "OPENSSL_ia32cap applies to x86 CPUs only; this machine is {}",
                std::env::consts::ARCH
            ));
        }
        let src = self.path();
        if !src.is_absolute() {
            return Err(format!(
                "cannot copy libcrypto: the loader did not say which file {} is",
                src.display()
            ));
        }
        let base_cpu_info = self.version_info(OPENSSL_CPU_INFO);
        let (api, cpu_info, loaded_from) = {
            let _lock = IA32CAP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
            let dir = PrivateDir::new()?;
            let name = src
                .file_name()
                .unwrap_or(std::ffi::OsStr::new("libcrypto.so"));
            let copy = dir.0.join(name);
            std::fs::copy(src, &copy).map_err(|e| {
                format!(
                    "cannot copy {} to {}: {}",
                    src.display(),
                    dir.0.display(),
                    one_line(&e.to_string())
                )
            })?;
            let _env = EnvOverride::set(IA32CAP_ENV, &mask);
            // SAFETY: a byte-for-byte copy of the library the base instance loaded; as in
            // `load_system`, loading runs only OpenSSL's own initialisers, which now read
            // the mask we set.
            let lib = unsafe { Library::new(&copy) }.map_err(|e| {
                let shown = copy.display().to_string();
                format!(
                    "cannot load the copy {shown}: {} (a noexec temporary directory? set TMPDIR)",
                    dl_reason(&e, &shown)
                )
            })?;
            let api = Api::resolve(lib, src.to_path_buf())?;
            // libcrypto builds its CPU info string on the first request and appends the
            // variable's value: ask while it is still set.
            let cpu_info = api.version_info(OPENSSL_CPU_INFO);
            (api, cpu_info, copy)
            // Here `_env` puts the variable back, then `dir` deletes the copy: the
            // mapping stays valid.
        };
        let base_caps = base_cpu_info.as_deref().and_then(caps_of);
        let caps = cpu_info.as_deref().and_then(caps_of);
        let cleared = match (base_caps, caps) {
            (Some(b), Some(c)) => {
                let (on0, on1) = (c.0 & !b.0, c.1 & !b.1);
                if on0 != 0 || on1 != 0 {
                    return Err(format!(
                        "the mask {mask} turns on capabilities this CPU does not report (bits {on0:#x}:{on1:#x}): OpenSSL could run instructions the CPU lacks; clear bits with ~ instead"
                    ));
                }
                if c == b {
                    return Err(format!(
                        "changes nothing on this CPU: with OPENSSL_ia32cap={mask} libcrypto reports the capabilities it has without it ({:#x}:{:#x})",
                        b.0, b.1
                    ));
                }
                Some((b.0 & !c.0, b.1 & !c.1))
            }
            _ => None,
        };
        Ok(OpenSsl {
            api: Arc::new(api),
            mode: Mode::Isa(Box::new(IsaVariant {
                spec: spec.to_string(),
                mask,
                turns_off,
                base_cpu_info,
                cleared,
                loaded_from,
            })),
        })
    }
}

impl OpenSsl {
    /// The EVP_PKEY table of this library; the speed-loop variant covers ciphers only.
    fn pkey(&self) -> Result<Arc<super::openssl_pkey::Pkey>, String> {
        if matches!(self.mode, Mode::SpeedLoop) {
            return Err("speed-loop imitates `openssl speed -evp` for ciphers only".into());
        }
        super::openssl_pkey::for_path(&self.api.path)
    }
}

impl Implementation for OpenSsl {
    fn key_pair(
        &self,
        alg: Algorithm,
        private: Option<&[u8]>,
    ) -> Result<Box<dyn super::pkey::KeyPair>, String> {
        if let Support::No(why) = self.support(alg) {
            return Err(why);
        }
        self.pkey()?.key_pair(alg, private)
    }

    fn public_key(
        &self,
        alg: Algorithm,
        public: &[u8],
    ) -> Result<Box<dyn super::pkey::PublicKey>, String> {
        if let Support::No(why) = self.support(alg) {
            return Err(why);
        }
        self.pkey()?.public_key(alg, public)
    }

    fn name(&self) -> &str {
        "openssl"
    }

    fn version(&self) -> String {
        self.version_info(OPENSSL_VERSION)
            .unwrap_or_else(|| format!("OpenSSL (version number {:#x})", self.version_num()))
    }

    fn variant(&self) -> Option<String> {
        match &self.mode {
            Mode::Base => None,
            Mode::Isa(v) => Some(v.spec.clone()),
            Mode::SpeedLoop => Some(SPEED_LOOP.into()),
        }
    }

    fn support(&self, alg: Algorithm) -> Support {
        if matches!(self.mode, Mode::SpeedLoop) {
            if let Some(why) = speed_loop_gap(alg) {
                return Support::No(why.into());
            }
        }
        let fetch = match alg.kind() {
            Kind::Aead | Kind::Cipher => (self.api.cipher_fetch, self.api.cipher_free),
            Kind::Hash | Kind::Mac => (self.api.md_fetch, self.api.md_free),
            _ => {
                if let Some(why) = super::openssl_pkey::Pkey::support(alg, self.api.version_num) {
                    return Support::No(why);
                }
                return match self.pkey() {
                    Ok(_) => Support::Yes,
                    Err(why) => Support::No(why),
                };
            }
        };
        match self.resolve(alg, fetch.0) {
            Ok((p, owned)) => {
                if let (true, Some(free)) = (owned, fetch.1) {
                    // SAFETY: `p` is the reference the fetch just gave us.
                    unsafe { free(p.0) };
                }
                Support::Yes
            }
            Err(why) => Support::No(why),
        }
    }

    fn prepare(
        &self,
        alg: Algorithm,
        direction: Direction,
        key: &[u8],
    ) -> Result<Box<dyn Operation>, String> {
        if matches!(self.mode, Mode::SpeedLoop) {
            if let Some(why) = speed_loop_gap(alg) {
                return Err(why.into());
            }
            return self.prepare_speed_loop(alg, direction, key);
        }
        match alg.kind() {
            Kind::Signature | Kind::Agreement | Kind::Kem => {
                Err(format!("{alg} is a public-key algorithm: use key_pair"))
            }
            Kind::Aead | Kind::Cipher => self.prepare_cipher(alg, direction, key),
            Kind::Hash => {
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
                    return Err(api.fail("EVP_MD_CTX_new"));
                }
                Ok(Box::new(op))
            }
            Kind::Mac => {
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
                    return Err(api.fail("HMAC_CTX_new"));
                }
                let key_len = c_int::try_from(key.len())
                    .map_err(|_| format!("HMAC key of {} bytes is too long", key.len()))?;
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
                    return Err(api.fail("HMAC_Init_ex with the key"));
                }
                Ok(Box::new(op))
            }
        }
    }

    fn notes(&self, alg: Algorithm, direction: Direction) -> Vec<String> {
        let mut notes = match &self.mode {
            Mode::SpeedLoop => return vec![speed_loop_note(alg, direction).into()],
            _ => base_notes(alg),
        };
        if let Mode::Isa(v) = &self.mode {
            let reports = self
                .version_info(OPENSSL_CPU_INFO)
                .unwrap_or_else(|| "no CPU info (OpenSSL 1.1): the effect is not confirmed".into());
            notes.push(format!(
                "{}: libcrypto loaded a second time with OPENSSL_ia32cap={} ({}); it reports {reports}",
                v.spec, v.mask, v.turns_off
            ));
        }
        notes
    }

    fn with_variant(&self, spec: &str) -> Option<Result<Box<dyn Implementation>, String>> {
        // Variants do not combine: each is made from a base instance only.
        if !matches!(self.mode, Mode::Base) {
            return None;
        }
        if spec == SPEED_LOOP {
            return Some(Ok(Box::new(OpenSsl {
                api: Arc::clone(&self.api),
                mode: Mode::SpeedLoop,
            })));
        }
        let value = spec.strip_prefix("isa=")?;
        Some(
            self.isa_variant(spec, value)
                .map(|o| Box::new(o) as Box<dyn Implementation>),
        )
    }

    fn details(&self) -> serde_json::Value {
        let mut d = self.library_details();
        let variant = match &self.mode {
            Mode::Base => return d,
            Mode::Isa(v) => serde_json::json!({
                "spec": v.spec,
                "openssl_ia32cap": v.mask,
                "turns_off": v.turns_off,
                "cleared_bits": v.cleared.map(|(a, b)| format!("{a:#x}:{b:#x}")),
                "base_cpu_info": v.base_cpu_info,
                "loaded_from": format!("{} (a private copy, deleted once loaded)", v.loaded_from.display()),
            }),
            Mode::SpeedLoop => serde_json::json!({
                "spec": SPEED_LOOP,
                "per_call": "the EVP calls `openssl speed -evp` 3.0 makes per counted operation (see each record's notes)",
            }),
        };
        if let Some(obj) = d.as_object_mut() {
            obj.insert("variant".into(), variant);
        }
        d
    }
}

/// What the base instance does per call, for the records' notes.
fn base_notes(alg: Algorithm) -> Vec<String> {
    match alg.kind() {
        Kind::Aead => vec![
            "each call seals or opens one whole message: key set once, then per message EVP_CipherInit_ex with the nonce, AAD, data, Final and the tag ctrl (`openssl speed -evp` counts differently: see bench/vs-openssl-speed)".into(),
        ],
        Kind::Cipher => vec![
            "each call is one independent message: EVP_CipherInit_ex with a fresh IV, Update, Final (`openssl speed -evp` streams one endless message and never re-sets the IV)".into(),
        ],
        Kind::Signature => vec![super::openssl_pkey::SIGN_NOTE.into()],
        Kind::Agreement => vec![super::openssl_pkey::DERIVE_NOTE.into()],
        _ => Vec::new(),
    }
}

/// Why the speed-loop variant does not offer `alg`, if it does not.
fn speed_loop_gap(alg: Algorithm) -> Option<&'static str> {
    match alg {
        Algorithm::Chacha20Poly1305 => Some(
            "speed-loop: `openssl speed -evp` streams ChaCha20-Poly1305 (one EVP_EncryptUpdate per operation on one endless message: no nonce, AAD, Final or tag), which leaves no per-message result for the known-answer gate to check; the base openssl instance measures whole messages",
        ),
        _ if matches!(alg.kind(), Kind::Hash | Kind::Mac) => Some(
            "speed-loop covers the cipher loops of `openssl speed -evp` (AES-GCM, AES-CBC, AES-CTR); digests and HMAC are measured by the base openssl instance",
        ),
        _ => None,
    }
}

/// What the speed-loop variant does per call, for the records' notes.
fn speed_loop_note(alg: Algorithm, direction: Direction) -> &'static str {
    match (alg, direction) {
        (Algorithm::Aes128Gcm | Algorithm::Aes192Gcm | Algorithm::Aes256Gcm, Direction::Enc) => {
            "speed-loop: per call the calls `openssl speed -evp -aead` 3.0 makes per message, on a context set up like its own (padding off, which 3.0 re-applies in every EVP_CipherInit_ex): EVP_CTRL_AEAD_SET_IVLEN, EVP_CipherInit_ex with key AND nonce (key schedule and GHASH key every message), EVP_EncryptUpdate with the AAD, EVP_EncryptUpdate in place, EVP_EncryptFinal_ex; plus EVP_CTRL_AEAD_GET_TAG, which openssl speed skips but a sealed message needs"
        }
        (Algorithm::Aes128Gcm | Algorithm::Aes192Gcm | Algorithm::Aes256Gcm, Direction::Dec) => {
            "speed-loop: per call the calls `openssl speed -evp -aead -decrypt` 3.0 makes per message, on a context set up like its own (padding off, which 3.0 re-applies in every EVP_CipherInit_ex): EVP_CTRL_AEAD_SET_IVLEN, EVP_CipherInit_ex with key AND nonce, EVP_DecryptInit_ex with the nonce, EVP_CTRL_AEAD_SET_TAG, EVP_DecryptUpdate with the AAD, EVP_DecryptUpdate out of place, EVP_DecryptFinal_ex (the tag is verified)"
        }
        (Algorithm::Aes128Cbc | Algorithm::Aes192Cbc | Algorithm::Aes256Cbc, Direction::Enc) => {
            "speed-loop: one EVP_EncryptUpdate in place per call on a context that is never re-initialised or finalised, as `openssl speed -evp` streams CBC; instead of re-setting the IV, the first plaintext block is XORed with (IV xor chaining value) before the call, which makes each output exactly its own message's CBC encryption (a 16-byte XOR and copy per call that openssl speed does not do)"
        }
        (Algorithm::Aes128Cbc | Algorithm::Aes192Cbc | Algorithm::Aes256Cbc, Direction::Dec) => {
            "speed-loop: one EVP_DecryptUpdate per call on a context that is never re-initialised or finalised, as `openssl speed -evp -decrypt` streams CBC (it decrypts in place; this harness decrypts out of place); instead of re-setting the IV, the first output block is XORed with (IV xor chaining value) after the call, which makes it exactly the message's plaintext (a 16-byte XOR and copy per call that openssl speed does not do)"
        }
        (Algorithm::Aes128Ctr | Algorithm::Aes192Ctr | Algorithm::Aes256Ctr, _) => {
            "speed-loop: EVP_CipherInit_ex with the IV, then one EVP_EncryptUpdate/EVP_DecryptUpdate, no Final; `openssl speed -evp` streams CTR without ever re-setting the IV, but a continued counter cannot give a message its own answer, so this makes one IV set per call more than openssl speed"
        }
        _ => "speed-loop: not offered",
    }
}

impl OpenSsl {
    /// Where the library came from and how it was built.
    fn library_details(&self) -> serde_json::Value {
        let v = |t| self.version_info(t);
        let mut d = serde_json::json!({
            "path": self.path().display().to_string(),
            "version": v(OPENSSL_VERSION),
            "version_num": format!("{:#010x}", self.version_num()),
            "cflags": v(OPENSSL_CFLAGS),
            "built_on": v(OPENSSL_BUILT_ON),
            "platform": v(OPENSSL_PLATFORM),
            "openssldir": v(OPENSSL_DIR),
            "bn_options": self.bn_options(),
        });
        if self.version_num() >= V3_0_0 {
            if let Some(obj) = d.as_object_mut() {
                obj.insert("full_version".into(), v(OPENSSL_FULL_VERSION_STRING).into());
                obj.insert("modulesdir".into(), v(OPENSSL_MODULES_DIR).into());
                obj.insert("cpu_info".into(), v(OPENSSL_CPU_INFO).into());
            }
        }
        d
    }
}

/// A pointer OpenSSL may read zero bytes from: an empty slice's pointer is dangling.
fn non_dangling(b: &[u8]) -> *const u8 {
    static ONE: [u8; 1] = [0];
    if b.is_empty() {
        ONE.as_ptr()
    } else {
        b.as_ptr()
    }
}

/// Input pointer, input length, output pointer and output room of one message.
fn buffers(io: &mut Io<'_>) -> (*const u8, usize, *mut u8, usize) {
    let room = match io {
        Io::InPlace { buf, .. } => buf.len(),
        Io::Separate { output, .. } => output.len(),
    };
    let (inp, len, out) = io.raw();
    (inp, len, out, room)
}

fn c_len(n: usize) -> Result<c_int, String> {
    c_int::try_from(n).map_err(|_| format!("a message of {n} bytes is too long for OpenSSL"))
}

/// AES-GCM, ChaCha20-Poly1305, AES-CBC and AES-CTR: one keyed EVP_CIPHER_CTX.
struct CipherOp {
    api: Arc<Api>,
    ctx: Raw,
    aead: bool,
    enc: bool,
}

impl CipherOp {
    /// Key setup, once: cipher and key, direction, no padding for CBC.
    fn key(&self, cipher: *mut c_void, key: &[u8], alg: Algorithm) -> Result<(), String> {
        let api = &self.api;
        if key.len() != alg.key_len() {
            return Err(format!(
                "{} needs a {}-byte key, got {} bytes",
                alg.name(),
                alg.key_len(),
                key.len()
            ));
        }
        // SAFETY: a live context, a cipher object that outlives the call (and that the
        // context up-references), a key of the cipher's length, no IV yet.
        let ok = unsafe {
            (api.cipher_init_ex)(
                self.ctx.0,
                cipher,
                std::ptr::null_mut(),
                key.as_ptr(),
                std::ptr::null(),
                c_int::from(self.enc),
            )
        };
        if ok != 1 {
            return Err(api.fail("EVP_CipherInit_ex with the key"));
        }
        if self.aead {
            // SAFETY: a keyed AEAD context; SET_IVLEN takes its value in `arg`.
            let ok = unsafe {
                (api.cipher_ctx_ctrl)(
                    self.ctx.0,
                    EVP_CTRL_AEAD_SET_IVLEN,
                    AEAD_NONCE_LEN as c_int,
                    std::ptr::null_mut(),
                )
            };
            if ok != 1 {
                return Err(api.fail("EVP_CTRL_AEAD_SET_IVLEN"));
            }
        } else if matches!(
            alg,
            Algorithm::Aes128Cbc | Algorithm::Aes192Cbc | Algorithm::Aes256Cbc
        ) {
            // Whole blocks only, no padding block. Only for CBC: OpenSSL 3.0 re-applies
            // a padding setting inside every later EVP_CipherInit_ex, a provider parameter
            // call per message that CTR, which has no padding, need not pay.
            // SAFETY: a keyed context.
            let ok = unsafe { (api.cipher_ctx_set_padding)(self.ctx.0, 0) };
            if ok != 1 {
                return Err(api.fail("EVP_CIPHER_CTX_set_padding"));
            }
        }
        Ok(())
    }

    /// Sets the nonce or IV of the next message, keeping key and direction.
    fn set_iv(&self, iv: &[u8], want: usize) -> Result<(), String> {
        if iv.len() != want {
            return Err(format!(
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
        if ok != 1 {
            return Err(self.api.fail("EVP_CipherInit_ex with the IV"));
        }
        Ok(())
    }

    /// Update then Final over `n` bytes; returns the bytes written (must be `n`).
    ///
    /// # Safety
    /// `inp` is readable for `n` bytes, `out` writable for `n` bytes (plus one block of
    /// room, which every caller checks), and they are equal or do not overlap.
    unsafe fn run(&self, inp: *const u8, n: usize, out: *mut u8) -> Result<usize, String> {
        let n_c = c_len(n)?;
        let mut outl: c_int = 0;
        // SAFETY: per this function's contract.
        let ok = unsafe { (self.api.cipher_update)(self.ctx.0, out, &mut outl, inp, n_c) };
        if ok != 1 || outl < 0 || outl as usize > n {
            return Err(self.api.fail("EVP_CipherUpdate"));
        }
        let mut fin: c_int = 0;
        // SAFETY: `out + outl` is within the output room; without padding Final writes
        // at most the rest of the message.
        let ok =
            unsafe { (self.api.cipher_final_ex)(self.ctx.0, out.add(outl as usize), &mut fin) };
        if ok != 1 {
            if self.aead && !self.enc {
                // SAFETY: ERR_clear_error only empties this thread's error queue.
                unsafe { (self.api.err_clear_error)() };
                return Err("tag verification failed".into());
            }
            return Err(self.api.fail("EVP_CipherFinal_ex"));
        }
        let total = outl as usize + fin.max(0) as usize;
        if total != n {
            return Err(format!(
                "OpenSSL wrote {total} bytes for a {n}-byte message"
            ));
        }
        Ok(total)
    }

    /// Feeds the AAD of an AEAD message.
    fn aad(&self, aad: &[u8]) -> Result<(), String> {
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
        if ok != 1 {
            return Err(self.api.fail("EVP_CipherUpdate with the AAD"));
        }
        Ok(())
    }
}

impl Operation for CipherOp {
    fn process(&mut self, nonce: &[u8], aad: &[u8], mut io: Io<'_>) -> Result<usize, String> {
        let (inp, in_len, out, room) = buffers(&mut io);
        if !self.aead {
            if room < in_len + CIPHER_IV_LEN {
                return Err("output buffer too small".into());
            }
            self.set_iv(nonce, CIPHER_IV_LEN)?;
            // SAFETY: `inp` has `in_len` bytes, `out` has `room` >= in_len + 16 bytes, and
            // Io gives either the same buffer or two distinct ones.
            return unsafe { self.run(inp, in_len, out) };
        }
        if self.enc {
            let n = in_len;
            if room < n + TAG_LEN {
                return Err(format!(
                    "output buffer too small: {room} bytes for {n} bytes and the tag"
                ));
            }
            self.set_iv(nonce, AEAD_NONCE_LEN)?;
            self.aad(aad)?;
            // SAFETY: as above; the tag room is checked.
            unsafe { self.run(inp, n, out)? };
            // SAFETY: `out + n` has TAG_LEN writable bytes (checked above); GET_TAG
            // copies `arg` bytes of the tag computed by the final call.
            let ok = unsafe {
                (self.api.cipher_ctx_ctrl)(
                    self.ctx.0,
                    EVP_CTRL_AEAD_GET_TAG,
                    TAG_LEN as c_int,
                    out.add(n) as *mut c_void,
                )
            };
            if ok != 1 {
                return Err(self.api.fail("EVP_CTRL_AEAD_GET_TAG"));
            }
            Ok(n + TAG_LEN)
        } else {
            let Some(n) = in_len.checked_sub(TAG_LEN) else {
                return Err(format!(
                    "an AEAD input of {in_len} bytes is shorter than the {TAG_LEN}-byte tag"
                ));
            };
            if room < n + TAG_LEN {
                return Err("output buffer too small".into());
            }
            let mut tag = [0u8; TAG_LEN];
            // SAFETY: the input is `in_len` = n + 16 readable bytes; the tag is its last
            // 16, copied before anything is written (in place, output starts at `inp`).
            unsafe { std::ptr::copy_nonoverlapping(inp.add(n), tag.as_mut_ptr(), TAG_LEN) };
            self.set_iv(nonce, AEAD_NONCE_LEN)?;
            // SAFETY: SET_TAG reads `arg` = 16 bytes from our local `tag`.
            let ok = unsafe {
                (self.api.cipher_ctx_ctrl)(
                    self.ctx.0,
                    EVP_CTRL_AEAD_SET_TAG,
                    TAG_LEN as c_int,
                    tag.as_mut_ptr() as *mut c_void,
                )
            };
            if ok != 1 {
                return Err(self.api.fail("EVP_CTRL_AEAD_SET_TAG"));
            }
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
    /// EVP_EncryptUpdate or EVP_DecryptUpdate, as `openssl speed` calls them (not
    /// EVP_CipherUpdate); returns the bytes written.
    ///
    /// # Safety
    /// `inp` is readable for `n` bytes; `out` is NULL (then `inp` is AAD) or writable for
    /// `n` bytes plus one block, equal to `inp` or not overlapping it.
    unsafe fn update(&self, out: *mut u8, inp: *const u8, n: usize) -> Result<usize, String> {
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
            return Err(self.api.fail(what));
        }
        Ok(outl as usize)
    }
}

/// `openssl speed -evp` (3.0)'s work per counted operation, wherever that still gives each
/// call its own message's answer; see [`speed_loop_note`] for each algorithm:
///
/// - AES-GCM: the same EVP calls, re-keying every message, on a context set up the same
///   way (padding off, which 3.0 re-applies inside each EVP_CipherInit_ex); a seal also
///   fetches the tag, which openssl speed skips but the known-answer gate must see.
/// - AES-CBC: one Update per call on a context never re-initialised (openssl speed
///   streams). The IV is not re-set; the first block is corrected instead. CBC's first
///   block is E(P1 ^ IV); the stream computes E(X ^ C) where C is the chaining value (the
///   previous call's last ciphertext block), so sealing X = P1 ^ IV ^ C gives exactly
///   E(P1 ^ IV). Opening, the stream gives D(C1) ^ C, and XOR with C ^ IV gives P1. Every
///   call, the first and the second of the gate's `run_twice` alike, therefore returns
///   the message's true CBC result under the nonce passed, and the gate checks it.
/// - AES-CTR: a continued counter cannot be corrected that way, so each call sets the IV.
struct SpeedLoopOp {
    cipher: CipherOp,
    kind: SpeedKind,
}

enum SpeedKind {
    /// The key, set again with every message, as openssl speed does.
    Gcm {
        key: Vec<u8>,
    },
    /// The chaining value the stream will XOR into the next first block.
    Cbc {
        chain: [u8; CIPHER_IV_LEN],
    },
    Ctr,
}

/// `block[..16] ^= nonce ^ chain`.
///
/// The nonce is read as two 8-byte halves that the compiler may not merge: the harness
/// rewrites the nonce's last 8 bytes before each seal, and a 16-byte load right after that
/// 8-byte store cannot be forwarded from the store buffer (a stall of about 7 ns per call,
/// measured at 16 bytes, which is half of what `EVP_EncryptUpdate` itself takes).
fn xor_block(block: &mut [u8], nonce: &[u8; CIPHER_IV_LEN], chain: &[u8; CIPHER_IV_LEN]) {
    let Some(first) = block.first_chunk_mut::<CIPHER_IV_LEN>() else {
        return;
    };
    let half = |x: &[u8; CIPHER_IV_LEN], i: usize| {
        let mut h = [0u8; 8];
        h.copy_from_slice(&x[i..i + 8]);
        u64::from_ne_bytes(h)
    };
    // black_box keeps the two halves apart (else they become one 16-byte load).
    let (n0, n1) = (half(nonce, 0), std::hint::black_box(half(nonce, 8)));
    let lo = half(first, 0) ^ n0 ^ half(chain, 0);
    let hi = half(first, 8) ^ n1 ^ half(chain, 8);
    first[..8].copy_from_slice(&lo.to_ne_bytes());
    first[8..].copy_from_slice(&hi.to_ne_bytes());
}

impl SpeedLoopOp {
    fn gcm(&mut self, nonce: &[u8], aad: &[u8], mut io: Io<'_>) -> Result<usize, String> {
        let SpeedKind::Gcm { key } = &self.kind else {
            return Err("not a GCM operation".into());
        };
        let c = &self.cipher;
        let api = &c.api;
        if nonce.len() != AEAD_NONCE_LEN {
            return Err(format!(
                "the nonce must be {AEAD_NONCE_LEN} bytes, got {}",
                nonce.len()
            ));
        }
        let (inp, in_len, out, room) = buffers(&mut io);
        let n = if c.enc {
            in_len
        } else {
            in_len.checked_sub(TAG_LEN).ok_or_else(|| {
                format!("an AEAD input of {in_len} bytes is shorter than the {TAG_LEN}-byte tag")
            })?
        };
        if room < n + TAG_LEN {
            return Err(format!(
                "output buffer too small: {room} bytes for {n} bytes and the tag"
            ));
        }
        let mut tag = [0u8; TAG_LEN];
        if !c.enc {
            // SAFETY: the input is n + 16 readable bytes; the tag is its last 16, copied
            // before anything is written (in place, the output starts at `inp`).
            unsafe { std::ptr::copy_nonoverlapping(inp.add(n), tag.as_mut_ptr(), TAG_LEN) };
        }
        // SAFETY: a keyed GCM context; SET_IVLEN takes its value in `arg`.
        let ok = unsafe {
            (api.cipher_ctx_ctrl)(
                c.ctx.0,
                EVP_CTRL_AEAD_SET_IVLEN,
                AEAD_NONCE_LEN as c_int,
                std::ptr::null_mut(),
            )
        };
        if ok != 1 {
            return Err(api.fail("EVP_CTRL_AEAD_SET_IVLEN"));
        }
        // SAFETY: cipher and engine NULL keep the context's; key and nonce have the
        // lengths it expects (checked in prepare and above); -1 keeps the direction.
        let ok = unsafe {
            (api.cipher_init_ex)(
                c.ctx.0,
                std::ptr::null(),
                std::ptr::null_mut(),
                key.as_ptr(),
                nonce.as_ptr(),
                -1,
            )
        };
        if ok != 1 {
            return Err(api.fail("EVP_CipherInit_ex with key and nonce"));
        }
        if !c.enc {
            // SAFETY: as above; EVP_DecryptInit_ex with only the nonce, as openssl speed.
            let ok = unsafe {
                (api.decrypt_init_ex)(
                    c.ctx.0,
                    std::ptr::null(),
                    std::ptr::null_mut(),
                    std::ptr::null(),
                    nonce.as_ptr(),
                )
            };
            if ok != 1 {
                return Err(api.fail("EVP_DecryptInit_ex with the nonce"));
            }
            // SAFETY: SET_TAG reads `arg` = 16 bytes from our local `tag`.
            let ok = unsafe {
                (api.cipher_ctx_ctrl)(
                    c.ctx.0,
                    EVP_CTRL_AEAD_SET_TAG,
                    TAG_LEN as c_int,
                    tag.as_mut_ptr() as *mut c_void,
                )
            };
            if ok != 1 {
                return Err(api.fail("EVP_CTRL_AEAD_SET_TAG"));
            }
        }
        if !aad.is_empty() {
            // SAFETY: out NULL: `aad` is AAD, readable for its length.
            unsafe { c.update(std::ptr::null_mut(), aad.as_ptr(), aad.len())? };
        }
        // SAFETY: `inp` has n readable bytes, `out` has room >= n + 16 (checked); Io
        // gives the same buffer or two distinct ones.
        let outl = unsafe { c.update(out, inp, n)? };
        if outl > n {
            return Err(format!("OpenSSL wrote {outl} bytes for a {n}-byte message"));
        }
        let mut fin: c_int = 0;
        let final_ex = if c.enc {
            api.encrypt_final_ex
        } else {
            api.decrypt_final_ex
        };
        // SAFETY: `out + outl` is within the output room; GCM's Final writes nothing.
        if unsafe { final_ex(c.ctx.0, out.add(outl), &mut fin) } != 1 {
            if !c.enc {
                // SAFETY: ERR_clear_error only empties this thread's error queue.
                unsafe { (api.err_clear_error)() };
                return Err("tag verification failed".into());
            }
            return Err(api.fail("EVP_EncryptFinal_ex"));
        }
        if outl + fin.max(0) as usize != n {
            return Err(format!(
                "OpenSSL wrote {} bytes for a {n}-byte message",
                outl + fin.max(0) as usize
            ));
        }
        if !c.enc {
            return Ok(n);
        }
        // SAFETY: `out + n` has TAG_LEN writable bytes (checked above).
        let ok = unsafe {
            (api.cipher_ctx_ctrl)(
                c.ctx.0,
                EVP_CTRL_AEAD_GET_TAG,
                TAG_LEN as c_int,
                out.add(n) as *mut c_void,
            )
        };
        if ok != 1 {
            return Err(api.fail("EVP_CTRL_AEAD_GET_TAG"));
        }
        Ok(n + TAG_LEN)
    }

    fn cbc(&mut self, nonce: &[u8], io: Io<'_>) -> Result<usize, String> {
        let iv: &[u8; CIPHER_IV_LEN] = nonce
            .try_into()
            .map_err(|_| format!("the IV must be {CIPHER_IV_LEN} bytes, got {}", nonce.len()))?;
        let SpeedKind::Cbc { chain } = &mut self.kind else {
            return Err("not a CBC operation".into());
        };
        let c = &self.cipher;
        let n = io.input_len();
        if !n.is_multiple_of(CIPHER_IV_LEN) {
            return Err(format!("CBC takes whole 16-byte blocks; got {n} bytes"));
        }
        let room = match &io {
            Io::InPlace { buf, .. } => buf.len(),
            Io::Separate { output, .. } => output.len(),
        };
        if room < n + CIPHER_IV_LEN {
            return Err("output buffer too small".into());
        }
        if n == 0 {
            return Ok(0);
        }
        let result = if c.enc {
            // The harness seals in place; a separate input is copied here first.
            let (buf, len) = io.into_in_place();
            xor_block(&mut buf[..CIPHER_IV_LEN], iv, chain);
            let p = buf.as_mut_ptr();
            // SAFETY: `buf` has len + 16 bytes; input and output are the same buffer.
            let r = unsafe { c.update(p, p, len) };
            chain.copy_from_slice(&buf[len - CIPHER_IV_LEN..len]);
            r
        } else {
            let mut io = io;
            let (inp, len, out, _) = buffers(&mut io);
            let mut next = [0u8; CIPHER_IV_LEN];
            // SAFETY: the input has `len` >= 16 readable bytes; read before an in-place
            // call overwrites them.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    inp.add(len - CIPHER_IV_LEN),
                    next.as_mut_ptr(),
                    CIPHER_IV_LEN,
                )
            };
            // SAFETY: `inp` readable for len bytes, `out` writable for len + 16; the same
            // buffer or distinct ones.
            let r = unsafe { c.update(out, inp, len) };
            if r.is_ok() {
                // SAFETY: `out` has at least 16 written bytes, and we hold the only
                // reference to the output for the rest of this call.
                let first = unsafe { std::slice::from_raw_parts_mut(out, CIPHER_IV_LEN) };
                xor_block(first, iv, chain);
            }
            *chain = next;
            r
        };
        match result {
            Ok(written) if written == n => Ok(n),
            other => {
                // The stream's state is unknown: start it again from a zero IV.
                self.resync_cbc()?;
                match other {
                    Ok(w) => Err(format!("OpenSSL wrote {w} bytes for a {n}-byte message")),
                    Err(e) => Err(e),
                }
            }
        }
    }

    /// Re-sets the CBC stream to a known chaining value (zero).
    fn resync_cbc(&mut self) -> Result<(), String> {
        if let SpeedKind::Cbc { chain } = &mut self.kind {
            *chain = [0u8; CIPHER_IV_LEN];
            self.cipher.set_iv(chain, CIPHER_IV_LEN)?;
        }
        Ok(())
    }

    fn ctr(&mut self, nonce: &[u8], mut io: Io<'_>) -> Result<usize, String> {
        let c = &self.cipher;
        let (inp, n, out, room) = buffers(&mut io);
        if room < n + CIPHER_IV_LEN {
            return Err("output buffer too small".into());
        }
        c.set_iv(nonce, CIPHER_IV_LEN)?;
        // SAFETY: `inp` readable for n bytes, `out` writable for n + 16; the same buffer
        // or distinct ones.
        let written = unsafe { c.update(out, inp, n)? };
        if written != n {
            return Err(format!(
                "OpenSSL wrote {written} bytes for a {n}-byte message"
            ));
        }
        Ok(n)
    }
}

impl Operation for SpeedLoopOp {
    fn process(&mut self, nonce: &[u8], aad: &[u8], io: Io<'_>) -> Result<usize, String> {
        match self.kind {
            SpeedKind::Gcm { .. } => self.gcm(nonce, aad, io),
            SpeedKind::Cbc { .. } => self.cbc(nonce, io),
            SpeedKind::Ctr => self.ctr(nonce, io),
        }
    }
}

impl Drop for SpeedLoopOp {
    fn drop(&mut self) {
        if let SpeedKind::Gcm { key } = &mut self.kind {
            for b in key.iter_mut() {
                // SAFETY: a valid, aligned byte of our own Vec; volatile so the wipe stays.
                unsafe { std::ptr::write_volatile(b, 0) };
            }
        }
    }
}

/// Frees a digest we fetched (3.x); legacy digests are static.
fn free_md(api: &Api, md: &Raw, owned: bool) {
    if owned {
        if let Some(free) = api.md_free {
            // SAFETY: `md` is the reference EVP_MD_fetch gave us, freed once, after
            // every context that used it.
            unsafe { free(md.0) };
        }
    }
}

/// SHA-1, SHA-256, SHA-512: one EVP_MD_CTX, re-initialised per message.
struct DigestOp {
    api: Arc<Api>,
    ctx: Raw,
    md: Raw,
    owned: bool,
    len: usize,
}

impl Operation for DigestOp {
    fn process(&mut self, _nonce: &[u8], _aad: &[u8], io: Io<'_>) -> Result<usize, String> {
        let (input, output) = io.split();
        if output.len() < self.len {
            return Err(format!(
                "digest room too small: {} bytes for {}",
                output.len(),
                self.len
            ));
        }
        let api = &self.api;
        let mut outl: c_uint = 0;
        // SAFETY: a live EVP_MD_CTX and a digest object that `self` keeps alive; `input`
        // is readable for its length; `output` has room for the digest (checked).
        unsafe {
            if (api.digest_init_ex)(self.ctx.0, self.md.0, std::ptr::null_mut()) != 1 {
                return Err(api.fail("EVP_DigestInit_ex"));
            }
            if (api.digest_update)(self.ctx.0, input.as_ptr() as *const c_void, input.len()) != 1 {
                return Err(api.fail("EVP_DigestUpdate"));
            }
            if (api.digest_final_ex)(self.ctx.0, output.as_mut_ptr(), &mut outl) != 1 {
                return Err(api.fail("EVP_DigestFinal_ex"));
            }
        }
        if outl as usize != self.len {
            return Err(format!(
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
struct HmacOp {
    api: Arc<Api>,
    ctx: Raw,
    md: Raw,
    owned: bool,
    len: usize,
}

impl Operation for HmacOp {
    fn process(&mut self, _nonce: &[u8], _aad: &[u8], io: Io<'_>) -> Result<usize, String> {
        let (input, output) = io.split();
        if output.len() < self.len {
            return Err(format!(
                "MAC room too small: {} bytes for {}",
                output.len(),
                self.len
            ));
        }
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
                return Err(api.fail("HMAC_Init_ex"));
            }
            if (api.hmac_update)(self.ctx.0, input.as_ptr(), input.len()) != 1 {
                return Err(api.fail("HMAC_Update"));
            }
            if (api.hmac_final)(self.ctx.0, output.as_mut_ptr(), &mut outl) != 1 {
                return Err(api.fail("HMAC_Final"));
            }
        }
        if outl as usize != self.len {
            return Err(format!(
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

#[cfg(test)]
mod tests {
    use super::*;

    fn system() -> OpenSsl {
        match OpenSsl::load_system() {
            Ok(o) => o,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn known_answers_for_every_algorithm() {
        let o = system();
        for alg in Algorithm::ALL
            .into_iter()
            .filter(|a| !a.kind().is_public_key())
        {
            assert_eq!(o.support(alg), Support::Yes, "{alg}");
            if let Err(e) = crate::kat::known_answers(&o, alg) {
                panic!("{alg}: {e}");
            }
        }
    }

    #[test]
    fn round_trips_at_timed_shapes() {
        // Same library twice: catches state that leaks between messages at real sizes.
        let a = system();
        let b = system();
        for alg in Algorithm::ALL
            .into_iter()
            .filter(|a| !a.kind().is_public_key())
        {
            if let Err(e) = crate::kat::round_trip(&a, &b, alg) {
                panic!("{alg}: {e}");
            }
        }
    }

    #[test]
    fn version_and_details() {
        let o = system();
        assert!(o.version().starts_with("OpenSSL "), "{}", o.version());
        assert!(o.path().is_absolute() || o.path().to_string_lossy().starts_with("libcrypto"));
        assert!(o.version_info(OPENSSL_BUILT_ON).is_some());
        assert_eq!(o.version_info(-1), None);
        let d = o.details();
        assert!(d["path"].is_string());
        assert!(d["cflags"].is_string());
        if o.version_num() >= V3_0_0 {
            assert!(d["cpu_info"].is_string(), "{d}");
        }
    }

    #[test]
    fn load_path_of_the_system_library() {
        let sys = system();
        let again = match OpenSsl::load_path(sys.path()) {
            Ok(o) => o,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(again.version(), sys.version());
        assert!(crate::kat::known_answers(&again, Algorithm::Aes128Gcm).is_ok());
    }

    /// Further builds to check, e.g. an OpenSSL 1.1 libcrypto:
    /// `CRYPTOBENCH_TEST_LIBCRYPTO=/path/libcrypto.so.1.1:/other/libcrypto.so.3`.
    #[test]
    fn known_answers_for_other_builds_from_env() {
        let Ok(list) = std::env::var("CRYPTOBENCH_TEST_LIBCRYPTO") else {
            return;
        };
        for p in list.split(':').filter(|p| !p.is_empty()) {
            let o = match OpenSsl::load_path(Path::new(p)) {
                Ok(o) => o,
                Err(e) => panic!("{e}"),
            };
            for alg in Algorithm::ALL {
                assert_eq!(o.support(alg), Support::Yes, "{p}: {alg}");
                if let Err(e) = crate::kat::known_answers(&o, alg) {
                    panic!("{p} ({}): {alg}: {e}", o.version());
                }
                if let Err(e) = crate::kat::round_trip(&o, &system(), alg) {
                    panic!("{p} ({}) vs system: {alg}: {e}", o.version());
                }
            }
            let d = o.details();
            assert!(d["version"].is_string() && d["built_on"].is_string(), "{d}");
        }
    }

    fn one_line_error(path: &str, expect: &str) {
        let err = match OpenSsl::load_path(Path::new(path)) {
            Ok(_) => panic!("{path} loaded as a libcrypto"),
            Err(e) => e,
        };
        assert!(!err.contains('\n'), "{err}");
        assert!(err.starts_with(&format!("--libcrypto {path}: ")), "{err}");
        assert!(err.contains(expect), "{err}");
        assert!(err.ends_with(HOW_TO_FIX), "{err}");
    }

    #[test]
    fn load_path_refuses_what_is_not_a_libcrypto() {
        one_line_error("/bin/ls", "cannot load");
        one_line_error(
            "/nonexistent/libcrypto.so.3",
            "cannot load (file not found)",
        );
        one_line_error("/tmp", "cannot load (is a directory)");
        // A real shared library that is not OpenSSL.
        let libc_path = [
            "/lib/x86_64-linux-gnu/libc.so.6",
            "/usr/lib/x86_64-linux-gnu/libc.so.6",
        ]
        .into_iter()
        .find(|p| Path::new(p).exists());
        if let Some(p) = libc_path {
            one_line_error(p, "not a libcrypto (no OpenSSL_version symbol)");
        }
    }

    #[test]
    fn forged_and_short_inputs_are_errors_not_panics() {
        let o = system();
        let key = [7u8; 16];
        let nonce = [9u8; 12];
        let mut op = o
            .prepare(Algorithm::Aes128Gcm, Direction::Dec, &key)
            .unwrap();
        let mut out = [0u8; 64];
        let short = [0u8; 8];
        assert!(op
            .process(
                &nonce,
                &[],
                Io::Separate {
                    input: &short,
                    output: &mut out
                }
            )
            .is_err());
        let forged = [0u8; 32];
        assert_eq!(
            op.process(
                &nonce,
                &[],
                Io::Separate {
                    input: &forged,
                    output: &mut out
                }
            ),
            Err("tag verification failed".to_string())
        );
        // Wrong nonce length, tiny output.
        assert!(op
            .process(
                &[0u8; 8],
                &[],
                Io::Separate {
                    input: &forged,
                    output: &mut out
                }
            )
            .is_err());
        let mut tiny = [0u8; 4];
        assert!(op
            .process(
                &nonce,
                &[],
                Io::Separate {
                    input: &forged,
                    output: &mut tiny
                }
            )
            .is_err());
        // Wrong key length.
        assert!(o
            .prepare(Algorithm::Aes256Gcm, Direction::Enc, &key)
            .is_err());
        // CBC without whole blocks.
        let mut cbc = o
            .prepare(Algorithm::Aes128Cbc, Direction::Enc, &key)
            .unwrap();
        let mut buf = [0u8; 64];
        assert!(cbc
            .process(
                &[0u8; 16],
                &[],
                Io::InPlace {
                    buf: &mut buf,
                    len: 15
                }
            )
            .is_err());
        // The operation still works after errors.
        assert_eq!(
            cbc.process(
                &[0u8; 16],
                &[],
                Io::InPlace {
                    buf: &mut buf,
                    len: 32
                }
            ),
            Ok(32)
        );
    }

    // Bits of the two OPENSSL_ia32cap words (OPENSSL_ia32cap(3)). First word: CPUID.1:EDX in
    // bits 0-31, CPUID.1:ECX in bits 32-63. Second word: CPUID.(EAX=7,ECX=0):EBX in bits
    // 0-31, its ECX in bits 32-63.
    const W0_PCLMULQDQ: u64 = 1 << (32 + 1);
    const W0_AESNI: u64 = 1 << (32 + 25);
    const W1_AVX2: u64 = 1 << 5;
    /// AVX512 F, DQ, IFMA, PF, ER, CD, BW, VL (EBX) and VBMI, VBMI2, VNNI, BITALG, VPOPCNTDQ (ECX).
    const W1_AVX512: u64 = (1 << 16)
        | (1 << 17)
        | (1 << 21)
        | (1 << 26)
        | (1 << 27)
        | (1 << 28)
        | (1 << 30)
        | (1 << 31)
        | (1 << (32 + 1))
        | (1 << (32 + 6))
        | (1 << (32 + 11))
        | (1 << (32 + 12))
        | (1 << (32 + 14));
    const W1_VAES_VPCLMULQDQ: u64 = (1 << (32 + 9)) | (1 << (32 + 10));

    #[test]
    fn named_isa_masks_are_the_documented_bits() {
        let mask = |name: &str| {
            let n = NAMED_ISA.iter().find(|n| n.name == name).unwrap();
            parse_ia32cap(n.mask).unwrap()
        };
        let clear = |value| {
            Some(CapWord {
                complement: true,
                value,
            })
        };
        assert_eq!(
            mask("no-aesni"),
            Ia32cap(clear(W0_AESNI | W0_PCLMULQDQ), clear(W1_VAES_VPCLMULQDQ))
        );
        assert_eq!(
            mask("no-avx512"),
            Ia32cap(None, clear(W1_AVX512 | W1_VAES_VPCLMULQDQ))
        );
        assert_eq!(
            mask("no-avx2"),
            Ia32cap(None, clear(W1_AVX2 | W1_AVX512 | W1_VAES_VPCLMULQDQ))
        );
        // The AVX-512 bits include F (16), VL (31) and VAES/VPCLMULQDQ are ECX 9 and 10.
        assert_eq!(W1_AVX512 & (1 << 16 | 1 << 31), 1 << 16 | 1 << 31);
        assert_eq!(W1_VAES_VPCLMULQDQ, 0x600_0000_0000);
        assert_eq!(W0_AESNI | W0_PCLMULQDQ, 0x200_0002_0000_0000);
    }

    #[test]
    fn ia32cap_masks_are_parsed_strictly() {
        let w = |complement, value| Some(CapWord { complement, value });
        assert_eq!(
            parse_ia32cap("~0x200000200000000:~0"),
            Ok(Ia32cap(w(true, 0x200000200000000), w(true, 0)))
        );
        assert_eq!(parse_ia32cap(":0x20"), Ok(Ia32cap(None, w(false, 0x20))));
        assert_eq!(parse_ia32cap("17"), Ok(Ia32cap(w(false, 17), None)));
        assert_eq!(parse_ia32cap("~017"), Ok(Ia32cap(w(true, 0o17), None)));
        assert_eq!(parse_ia32cap("0X1F"), Ok(Ia32cap(w(false, 0x1f), None)));
        for bad in [
            "",
            ":",
            "~",
            "0x",
            "zz",
            "0x1:",
            "1:2:3",
            "08",
            "~~1",
            "0x1g",
            " 1",
            "0x10000000000000000",
        ] {
            let e = parse_ia32cap(bad).expect_err(bad);
            assert!(!e.contains('\n'), "{e}");
        }
        // Named variants, a raw mask, and what a mask without a second word does.
        assert_eq!(
            isa_request("no-aesni").unwrap().0,
            "~0x200000200000000:~0x60000000000"
        );
        let (m, what) = isa_request("~0x200000200000000").unwrap();
        assert_eq!(m, "~0x200000200000000");
        assert!(what.contains("zeroes that word"), "{what}");
        let e = isa_request("no-sse").unwrap_err();
        assert!(
            e.starts_with("isa=no-sse: ") && e.contains("isa=no-avx512"),
            "{e}"
        );
    }

    #[test]
    fn cpu_info_lines_give_both_capability_words() {
        assert_eq!(
            caps_of("CPUINFO: OPENSSL_ia32cap=0xfffa3203078bffff:0x405fc6f1bf07ab"),
            Some((0xfffa3203078bffff, 0x405fc6f1bf07ab))
        );
        assert_eq!(
            caps_of("CPUINFO: OPENSSL_ia32cap=0x1:0x0 env:~0x2:~0"),
            Some((1, 0))
        );
        assert_eq!(caps_of("CPUINFO: N/A"), None);
    }

    fn speed_loop() -> Box<dyn Implementation> {
        match system().with_variant("speed-loop") {
            Some(Ok(v)) => v,
            Some(Err(e)) => panic!("{e}"),
            None => panic!("speed-loop not understood"),
        }
    }

    #[test]
    fn variants_are_understood_only_by_a_base_instance() {
        let base = system();
        assert!(base.with_variant("turbo").is_none());
        assert!(base.with_variant("isa").is_none());
        // Refused before anything is loaded.
        match base.with_variant("isa=nonsense") {
            Some(Err(e)) => assert!(!e.contains('\n') && e.contains("isa=nonsense"), "{e}"),
            _ => panic!("isa=nonsense accepted"),
        }
        let sl = speed_loop();
        assert_eq!(sl.variant().as_deref(), Some("speed-loop"));
        assert_eq!(sl.details()["variant"]["spec"], "speed-loop");
        assert!(sl.with_variant("isa=no-aesni").is_none());
        assert!(sl.with_variant("speed-loop").is_none());
    }

    #[test]
    fn speed_loop_passes_known_answers_and_round_trips() {
        let sl = speed_loop();
        let base = system();
        for alg in Algorithm::ALL {
            match sl.support(alg) {
                Support::Yes => {
                    if let Err(e) = crate::kat::known_answers(sl.as_ref(), alg) {
                        panic!("{alg}: {e}");
                    }
                    if let Err(e) = crate::kat::round_trip(sl.as_ref(), &base, alg) {
                        panic!("{alg}: {e}");
                    }
                    let note = &sl.notes(alg, Direction::Enc)[0];
                    assert!(note.starts_with("speed-loop: "), "{note}");
                }
                Support::No(why) => {
                    assert!(
                        matches!(alg, Algorithm::Chacha20Poly1305)
                            || matches!(alg.kind(), Kind::Hash | Kind::Mac)
                            || alg.kind().is_public_key(),
                        "{alg}: {why}"
                    );
                    assert!(sl.prepare(alg, Direction::Enc, &[0u8; 32]).is_err());
                }
            }
        }
    }

    /// Many calls on one operation, shaped like the timed loop (seal in place over the
    /// previous output with a new nonce each time; open the same sealed message again and
    /// again) and unlike it (sizes and nonces changing, in place and out of place):
    /// every call must give exactly what a fresh per-message operation gives.
    #[test]
    fn speed_loop_gives_every_call_its_own_message_answer() {
        use crate::kat::pattern;
        let sl = speed_loop();
        let base = system();
        let algs = [
            Algorithm::Aes128Gcm,
            Algorithm::Aes256Gcm,
            Algorithm::Aes128Cbc,
            Algorithm::Aes256Cbc,
            Algorithm::Aes128Ctr,
            Algorithm::Aes256Ctr,
        ];
        for alg in algs {
            let key = pattern(alg.key_len(), 3);
            let aad = if alg.kind() == Kind::Aead {
                pattern(13, 4)
            } else {
                Vec::new()
            };
            let sizes: Vec<usize> = [16usize, 1344, 32, 16384, 48, 1350, 5, 0]
                .into_iter()
                .filter(|s| alg.size_problem(*s).is_none())
                .collect();
            let nonce_of = |k: usize| pattern(alg.nonce_len(), 40 + k as u8);
            let reference = |nonce: &[u8], msg: &[u8]| -> Vec<u8> {
                let mut op = base.prepare(alg, Direction::Enc, &key).unwrap();
                let mut b = msg.to_vec();
                b.resize(msg.len() + 64, 0);
                let n = op
                    .process(
                        nonce,
                        &aad,
                        Io::InPlace {
                            buf: &mut b,
                            len: msg.len(),
                        },
                    )
                    .unwrap();
                b.truncate(n);
                b
            };
            // Seal: one operation, the buffer keeps the previous output.
            let mut op = sl.prepare(alg, Direction::Enc, &key).unwrap();
            let mut buf = pattern(16384 + 64, 9);
            for k in 0..24 {
                let size = sizes[k % sizes.len()];
                let nonce = nonce_of(k % 5);
                let expect = reference(&nonce, &buf[..size]);
                let n = op
                    .process(
                        &nonce,
                        &aad,
                        Io::InPlace {
                            buf: &mut buf,
                            len: size,
                        },
                    )
                    .unwrap_or_else(|e| panic!("{alg} seal {k}: {e}"));
                assert_eq!(&buf[..n], &expect[..], "{alg} seal call {k} ({size} bytes)");
            }
            // Out of place too (the harness never seals that way, but it must be right).
            let msg = pattern(sizes[0], 1);
            let mut out = vec![0u8; msg.len() + 64];
            let n = op
                .process(
                    &nonce_of(7),
                    &aad,
                    Io::Separate {
                        input: &msg,
                        output: &mut out,
                    },
                )
                .unwrap();
            assert_eq!(
                &out[..n],
                &reference(&nonce_of(7), &msg)[..],
                "{alg} separate seal"
            );
            // Open: one operation, varying messages, then the same one many times.
            let mut op = sl.prepare(alg, Direction::Dec, &key).unwrap();
            for k in 0..24 {
                let size = sizes[k % sizes.len()];
                let msg = pattern(size, k as u8);
                let nonce = nonce_of(if k < 12 { k % 3 } else { 1 });
                let sealed = reference(&nonce, &msg);
                let n = if k % 2 == 0 {
                    let mut out = vec![0u8; sealed.len() + 64];
                    let n = op
                        .process(
                            &nonce,
                            &aad,
                            Io::Separate {
                                input: &sealed,
                                output: &mut out,
                            },
                        )
                        .unwrap_or_else(|e| panic!("{alg} open {k}: {e}"));
                    out.truncate(n);
                    out
                } else {
                    let mut b = sealed.clone();
                    b.resize(sealed.len() + 64, 0);
                    let n = op
                        .process(
                            &nonce,
                            &aad,
                            Io::InPlace {
                                buf: &mut b,
                                len: sealed.len(),
                            },
                        )
                        .unwrap_or_else(|e| panic!("{alg} open {k}: {e}"));
                    b.truncate(n);
                    b
                };
                assert_eq!(n, msg, "{alg} open call {k} ({size} bytes)");
            }
        }
    }

    #[test]
    fn speed_loop_refuses_forgeries_and_bad_sizes_then_carries_on() {
        use crate::kat::pattern;
        let sl = speed_loop();
        let key = [7u8; 16];
        let nonce = [9u8; 12];
        let aad = pattern(13, 1);
        let mut seal = sl
            .prepare(Algorithm::Aes128Gcm, Direction::Enc, &key)
            .unwrap();
        let mut buf = pattern(64 + 64, 2);
        let n = seal
            .process(
                &nonce,
                &aad,
                Io::InPlace {
                    buf: &mut buf,
                    len: 64,
                },
            )
            .unwrap();
        let sealed = buf[..n].to_vec();
        let mut open = sl
            .prepare(Algorithm::Aes128Gcm, Direction::Dec, &key)
            .unwrap();
        let mut out = vec![0u8; 200];
        let mut forged = sealed.clone();
        forged[n - 1] ^= 1;
        assert_eq!(
            open.process(
                &nonce,
                &aad,
                Io::Separate {
                    input: &forged,
                    output: &mut out
                }
            ),
            Err("tag verification failed".to_string())
        );
        assert!(open
            .process(
                &nonce,
                &aad,
                Io::Separate {
                    input: &sealed[..8],
                    output: &mut out
                }
            )
            .is_err());
        assert!(open
            .process(
                &[0u8; 8],
                &aad,
                Io::Separate {
                    input: &sealed,
                    output: &mut out
                }
            )
            .is_err());
        assert_eq!(
            open.process(
                &nonce,
                &aad,
                Io::Separate {
                    input: &sealed,
                    output: &mut out
                }
            ),
            Ok(64)
        );
        assert_eq!(&out[..64], &pattern(64, 2)[..]);
        // CBC: a partial block and a short IV are errors; the stream still gives the
        // right answer afterwards.
        let mut cbc = sl
            .prepare(Algorithm::Aes128Cbc, Direction::Enc, &key)
            .unwrap();
        let mut b = [0u8; 64];
        assert!(cbc
            .process(
                &[0u8; 16],
                &[],
                Io::InPlace {
                    buf: &mut b,
                    len: 15
                }
            )
            .is_err());
        assert!(cbc
            .process(
                &[0u8; 8],
                &[],
                Io::InPlace {
                    buf: &mut b,
                    len: 16
                }
            )
            .is_err());
        let mut tiny = [0u8; 20];
        assert!(cbc
            .process(
                &[0u8; 16],
                &[],
                Io::InPlace {
                    buf: &mut tiny,
                    len: 16
                }
            )
            .is_err());
        assert!(cbc
            .process(
                &[0u8; 16],
                &[],
                Io::Separate {
                    input: &[0u8; 32],
                    output: &mut tiny
                }
            )
            .is_err());
        let base = system();
        let mut reference = base
            .prepare(Algorithm::Aes128Cbc, Direction::Enc, &key)
            .unwrap();
        let mut a = [5u8; 64];
        let mut r = [5u8; 64];
        for _ in 0..3 {
            assert_eq!(
                cbc.process(
                    &[1u8; 16],
                    &[],
                    Io::InPlace {
                        buf: &mut a,
                        len: 32
                    }
                ),
                Ok(32)
            );
            reference
                .process(
                    &[1u8; 16],
                    &[],
                    Io::InPlace {
                        buf: &mut r,
                        len: 32,
                    },
                )
                .unwrap();
            assert_eq!(a, r);
        }
    }

    #[test]
    fn operations_are_send() {
        fn is_send<T: Send>(_: &T) {}
        let o = system();
        let op = o.prepare(Algorithm::Sha256, Direction::Enc, &[]).unwrap();
        is_send(&op);
        let handle = std::thread::spawn(move || {
            let mut op = op;
            let mut buf = [0u8; 3 + 64];
            buf[..3].copy_from_slice(b"abc");
            let n = op
                .process(
                    &[],
                    &[],
                    Io::InPlace {
                        buf: &mut buf,
                        len: 3,
                    },
                )
                .unwrap();
            hex::encode(&buf[3..3 + n])
        });
        assert_eq!(
            handle.join().unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
