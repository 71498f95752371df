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
                getters[i] = sym(&lib, evp_names(alg).0);
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
                        Ok(api) => return Ok(OpenSsl { api: Arc::new(api) }),
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
        Ok(OpenSsl { api: Arc::new(api) })
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

impl Implementation for OpenSsl {
    fn name(&self) -> &str {
        "openssl"
    }

    fn version(&self) -> String {
        self.version_info(OPENSSL_VERSION)
            .unwrap_or_else(|| format!("OpenSSL (version number {:#x})", self.version_num()))
    }

    fn support(&self, alg: Algorithm) -> Support {
        let fetch = match alg.kind() {
            Kind::Aead | Kind::Cipher => (self.api.cipher_fetch, self.api.cipher_free),
            Kind::Hash | Kind::Mac => (self.api.md_fetch, self.api.md_free),
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
        match alg.kind() {
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

    fn notes(&self, alg: Algorithm, _direction: Direction) -> Vec<String> {
        match alg.kind() {
            Kind::Aead => vec![
                "each call seals or opens one whole message: key set once, then per message EVP_CipherInit_ex with the nonce, AAD, data, Final and the tag ctrl (`openssl speed -evp` counts differently: see bench/vs-openssl-speed)".into(),
            ],
            Kind::Cipher => vec![
                "each call is one independent message: EVP_CipherInit_ex with a fresh IV, Update, Final (`openssl speed -evp` streams one endless message and never re-sets the IV)".into(),
            ],
            Kind::Hash | Kind::Mac => Vec::new(),
        }
    }

    fn details(&self) -> serde_json::Value {
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
        } else {
            // SAFETY: a keyed context; padding only matters for CBC and is off for all.
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
        for alg in Algorithm::ALL {
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
        for alg in Algorithm::ALL {
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
