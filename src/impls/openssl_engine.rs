//! OpenSSL with an engine: libcrypto's EVP calls routed through `afalg` (the kernel
//! crypto API over AF_ALG) or `devcrypto` (/dev/crypto). This is study 1's exact stack:
//! application → libcrypto → engine → kernel → driver. Measured as implementation
//! "openssl" with variant "engine=NAME".

use super::{Access, Implementation, Io, Operation, Support};
use crate::algorithms::{Algorithm, Direction};
use crate::kernel;
use libloading::Library;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::Arc;

type VersionFn = unsafe extern "C" fn(c_int) -> *const c_char;
type ByIdFn = unsafe extern "C" fn(*const c_char) -> *mut c_void;
type EngineFn = unsafe extern "C" fn(*mut c_void) -> c_int;
type NewFn = unsafe extern "C" fn() -> *mut c_void;
type FreeFn = unsafe extern "C" fn(*mut c_void);
type GetterFn = unsafe extern "C" fn() -> *const c_void;
type InitFn = unsafe extern "C" fn(
    *mut c_void,
    *const c_void,
    *mut c_void,
    *const u8,
    *const u8,
    c_int,
) -> c_int;
type UpdateFn = unsafe extern "C" fn(*mut c_void, *mut u8, *mut c_int, *const u8, c_int) -> c_int;
type FinalFn = unsafe extern "C" fn(*mut c_void, *mut u8, *mut c_int) -> c_int;
type PaddingFn = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;
type ErrClearFn = unsafe extern "C" fn();

/// The libcrypto entry points an engine path needs, resolved once.
struct Api {
    _lib: Library,
    version: VersionFn,
    engine_finish: EngineFn,
    engine_free: EngineFn,
    ctx_new: NewFn,
    ctx_free: FreeFn,
    aes_128_cbc: GetterFn,
    aes_256_cbc: GetterFn,
    init: InitFn,
    update: UpdateFn,
    fin: FinalFn,
    padding: PaddingFn,
    err_clear: ErrClearFn,
}

/// An initialised ENGINE, finished and freed when the last Operation is gone.
struct Engine {
    api: Arc<Api>,
    ptr: *mut c_void,
}

// SAFETY: an ENGINE is reference-counted and thread-safe in libcrypto; we only pass the
// pointer to EVP_CipherInit_ex and finish/free it once, in Drop.
unsafe impl Send for Engine {}
unsafe impl Sync for Engine {}

impl Drop for Engine {
    fn drop(&mut self) {
        // SAFETY: ptr came from ENGINE_by_id and was initialised once.
        unsafe {
            (self.api.engine_finish)(self.ptr);
            (self.api.engine_free)(self.ptr);
        }
    }
}

pub struct OpensslEngine {
    engine: Arc<Engine>,
    id: String,
    version: String,
}

/// Engines this implementation knows, and the kernel interface each one reaches.
const ENGINES: &[(&str, &str)] = &[("afalg", "AF_ALG"), ("devcrypto", "/dev/crypto")];

/// `engine=NAME` specs are ours.
pub fn understands_variant(spec: &str) -> bool {
    spec.strip_prefix("engine=").is_some_and(|e| !e.is_empty())
}

unsafe fn sym<T: Copy>(lib: &Library, name: &str) -> Result<T, String> {
    // SAFETY: the caller names the C type of the symbol.
    unsafe { lib.get::<T>(name.as_bytes()).map(|s| *s) }.map_err(|_| {
        format!("libcrypto has no {name}: an engine needs OpenSSL 1.1 or 3.x with engine support")
    })
}

impl OpensslEngine {
    /// Loads the system libcrypto and initialises engine `id`. Err says why this
    /// machine cannot offer it (the engine's kernel interface, or the engine itself).
    pub fn load(id: &str) -> Result<OpensslEngine, String> {
        let Some(&(_, path_kind)) = ENGINES.iter().find(|(e, _)| *e == id) else {
            let names: Vec<&str> = ENGINES.iter().map(|(e, _)| *e).collect();
            return Err(format!(
                "unknown engine '{id}': use one of {}",
                names.join(", ")
            ));
        };
        // The engine only works where its kernel interface does: say so with probe's reason.
        if id == "afalg" {
            let config = kernel::KernelConfig::read();
            let s = kernel::af_alg_status("skcipher", &config);
            if !s.usable {
                return Err(format!("engine afalg needs {path_kind}: {}", s.reason));
            }
        } else {
            let s = kernel::cryptodev_status();
            if !s.usable {
                return Err(format!("engine devcrypto needs {path_kind}: {}", s.reason));
            }
        }
        let lib = ["libcrypto.so.3", "libcrypto.so.1.1"]
            .iter()
            .find_map(|n| {
                // SAFETY: loading the system libcrypto runs only its own initialisers.
                unsafe { Library::new(*n) }.ok()
            })
            .ok_or("no system libcrypto (libcrypto.so.3 or .so.1.1): install libssl3")?;
        // SAFETY: each symbol is looked up with its documented C signature.
        let (api, by_id, engine_init) = unsafe {
            let by_id: ByIdFn = sym(&lib, "ENGINE_by_id")?;
            let engine_init: EngineFn = sym(&lib, "ENGINE_init")?;
            let api = Api {
                version: sym(&lib, "OpenSSL_version")?,
                engine_finish: sym(&lib, "ENGINE_finish")?,
                engine_free: sym(&lib, "ENGINE_free")?,
                ctx_new: sym(&lib, "EVP_CIPHER_CTX_new")?,
                ctx_free: sym(&lib, "EVP_CIPHER_CTX_free")?,
                aes_128_cbc: sym(&lib, "EVP_aes_128_cbc")?,
                aes_256_cbc: sym(&lib, "EVP_aes_256_cbc")?,
                init: sym(&lib, "EVP_CipherInit_ex")?,
                update: sym(&lib, "EVP_CipherUpdate")?,
                fin: sym(&lib, "EVP_CipherFinal_ex")?,
                padding: sym(&lib, "EVP_CIPHER_CTX_set_padding")?,
                err_clear: sym(&lib, "ERR_clear_error")?,
                _lib: lib,
            };
            (Arc::new(api), by_id, engine_init)
        };
        let cid = CString::new(id).map_err(|_| "engine name has a NUL byte".to_string())?;
        // SAFETY: ENGINE_by_id takes a C string; it loads a dynamic engine from the
        // engines directory when the id is not built in.
        let ptr = unsafe { by_id(cid.as_ptr()) };
        if ptr.is_null() {
            // SAFETY: clearing the error queue has no preconditions.
            unsafe { (api.err_clear)() };
            return Err(format!(
                "OpenSSL cannot load engine {id} (no {id}.so in its engines directory; OPENSSL_ENGINES overrides it)"
            ));
        }
        // SAFETY: ptr is a valid ENGINE reference from ENGINE_by_id.
        if unsafe { engine_init(ptr) } != 1 {
            // SAFETY: as above; the structural reference is released.
            unsafe {
                (api.engine_free)(ptr);
                (api.err_clear)();
            }
            return Err(format!(
                "engine {id} loaded but would not initialise ({path_kind} refused it)"
            ));
        }
        // SAFETY: OpenSSL_version(0) returns a static string.
        let version = unsafe { CStr::from_ptr((api.version)(0)) }
            .to_string_lossy()
            .into_owned();
        Ok(OpensslEngine {
            engine: Arc::new(Engine { api, ptr }),
            id: id.into(),
            version,
        })
    }
}

struct EngineOp {
    engine: Arc<Engine>,
    ctx: *mut c_void,
}

// SAFETY: each EVP_CIPHER_CTX is used by one thread at a time (the one owning the op).
unsafe impl Send for EngineOp {}

impl Drop for EngineOp {
    fn drop(&mut self) {
        // SAFETY: ctx came from EVP_CIPHER_CTX_new and is freed once.
        unsafe { (self.engine.api.ctx_free)(self.ctx) };
    }
}

impl Operation for EngineOp {
    fn process(&mut self, nonce: &[u8], _aad: &[u8], mut io: Io<'_>) -> Result<usize, String> {
        let api = &self.engine.api;
        if nonce.len() != 16 {
            return Err(format!("AES-CBC needs a 16-byte IV, got {}", nonce.len()));
        }
        let (input, n, output) = io.raw();
        let len = c_int::try_from(n).map_err(|_| "message too large for one EVP call")?;
        let (mut out1, mut out2) = (0 as c_int, 0 as c_int);
        // SAFETY: ctx holds the key (set in prepare); input and output point at n bytes
        // (in place or separate, which EVP allows); a NULL key keeps the key and the
        // engine, and only the IV is reset for this message.
        let ok = unsafe {
            (api.init)(
                self.ctx,
                std::ptr::null(),
                std::ptr::null_mut(),
                std::ptr::null(),
                nonce.as_ptr(),
                -1,
            ) == 1
                && (api.update)(self.ctx, output, &mut out1, input, len) == 1
                && (api.fin)(self.ctx, output.add(out1 as usize), &mut out2) == 1
        };
        if !ok {
            // SAFETY: clearing the error queue has no preconditions.
            unsafe { (api.err_clear)() };
            return Err("the engine refused the message".into());
        }
        Ok((out1 + out2) as usize)
    }
}

impl Implementation for OpensslEngine {
    fn name(&self) -> &str {
        "openssl"
    }
    fn version(&self) -> String {
        self.version.clone()
    }
    fn variant(&self) -> Option<String> {
        Some(format!("engine={}", self.id))
    }
    fn access(&self) -> Access {
        Access::Engine
    }
    fn support(&self, alg: Algorithm) -> Support {
        match alg {
            Algorithm::Aes128Cbc | Algorithm::Aes256Cbc => Support::Yes,
            _ => Support::No(format!("engine {} offers only AES-CBC", self.id)),
        }
    }
    fn prepare(
        &self,
        alg: Algorithm,
        direction: Direction,
        key: &[u8],
    ) -> Result<Box<dyn Operation>, String> {
        let api = &self.engine.api;
        let cipher = match alg {
            // SAFETY: the legacy getters return static EVP_CIPHER tables; engines only
            // take over legacy ciphers, not fetched providers' ones.
            Algorithm::Aes128Cbc => unsafe { (api.aes_128_cbc)() },
            Algorithm::Aes256Cbc => unsafe { (api.aes_256_cbc)() },
            _ => return Err(format!("engine {} offers only AES-CBC", self.id)),
        };
        if key.len() != alg.key_len() {
            return Err(format!("{alg} needs a {}-byte key", alg.key_len()));
        }
        // SAFETY: a fresh context, initialised with the engine, cipher and key; freed in Drop.
        let ctx = unsafe { (api.ctx_new)() };
        if ctx.is_null() {
            return Err("EVP_CIPHER_CTX_new failed".into());
        }
        let op = EngineOp {
            engine: self.engine.clone(),
            ctx,
        };
        let enc = c_int::from(direction == Direction::Enc);
        // SAFETY: ctx is valid; the engine pointer is initialised; key has the cipher's length.
        let ok = unsafe {
            (api.init)(
                ctx,
                cipher,
                self.engine.ptr,
                key.as_ptr(),
                std::ptr::null(),
                enc,
            ) == 1
                && (api.padding)(ctx, 0) == 1
        };
        if !ok {
            // SAFETY: clearing the error queue has no preconditions.
            unsafe { (api.err_clear)() };
            return Err(format!("engine {} would not take the {alg} key", self.id));
        }
        Ok(Box::new(op))
    }
    fn driver(&self, alg: Algorithm) -> Option<String> {
        match (self.id.as_str(), alg) {
            ("afalg", Algorithm::Aes128Cbc | Algorithm::Aes256Cbc) => {
                kernel::chosen_driver(&kernel::proc_crypto(), "cbc(aes)").map(|e| e.driver.clone())
            }
            _ => None,
        }
    }
    fn notes(&self, _alg: Algorithm, _direction: Direction) -> Vec<String> {
        vec![format!(
            "libcrypto EVP through engine {}: every message crosses libcrypto, the engine and the kernel; \
             each call re-sets the IV (EVP_CipherInit_ex with no key), then Update and Final",
            self.id
        )]
    }
    fn details(&self) -> serde_json::Value {
        serde_json::json!({ "engine": self.id })
    }
}
