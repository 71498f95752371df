//! Opening a libcrypto: the system one or one at a given path.

use super::ffi::*;
use super::instance::{Mode, OpenSsl};
use anyhow::anyhow;
use libloading::Library;
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::Arc;

impl OpenSsl {
    /// The system libcrypto: "libcrypto.so.3", then "libcrypto.so.1.1", then "libcrypto.so".
    pub fn load_system() -> anyhow::Result<OpenSsl> {
        if let Some(why) = crate::sys::cannot_dlopen() {
            return Err(anyhow!(why));
        }
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
        Err(anyhow!(
            "no usable system libcrypto: tried {}: install libssl3 (e.g. `apt-get install libssl3`) or pass --libcrypto PATH",
            tried.join(", ")
        ))
    }

    /// A libcrypto at a given path (an OpenSSL build beside the system one).
    pub fn load_path(path: &Path) -> anyhow::Result<OpenSsl> {
        let shown = path.display();
        let bad = |why: &str| format!("--libcrypto {shown}: {why}: {HOW_TO_FIX}");
        if let Some(why) = crate::sys::cannot_dlopen() {
            return Err(anyhow!("--libcrypto {shown}: {why}"));
        }
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(anyhow::Error::msg(bad("cannot load (file not found)")))
            }
            Err(e) => {
                return Err(anyhow::Error::msg(bad(&format!(
                    "cannot load ({})",
                    one_line(&e.to_string())
                ))))
            }
            Ok(m) if m.is_dir() => {
                return Err(anyhow::Error::msg(bad("cannot load (is a directory)")))
            }
            // A FIFO or device would block or mislead dlopen: only regular files.
            Ok(m) if !m.is_file() => {
                return Err(anyhow::Error::msg(bad("cannot load (not a regular file)")))
            }
            Ok(_) => {}
        }
        let Some(name) = path.to_str() else {
            return Err(anyhow::Error::msg(bad(
                "cannot load (the path is not valid UTF-8)",
            )));
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
            .map_err(|e| bad(&format!("cannot load ({})", dl_reason(&e, &name))))
            .map_err(anyhow::Error::msg)?;
        // libssl (or any library linked against a libcrypto) resolves OpenSSL's symbols
        // through its dependency: measuring it would measure that other file.
        if let Some(real) = loaded_path(&lib) {
            let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
                (Ok(a), Ok(b)) => a == b,
                _ => a == b,
            };
            if !same(&real, path) {
                return Err(anyhow::Error::msg(bad(&format!(
                    "its OpenSSL functions come from {} (it is not a libcrypto itself)",
                    real.display()
                ))));
            }
        }
        let api = Api::resolve(lib, path.to_path_buf())
            .map_err(|why| bad(&why.to_string()))
            .map_err(anyhow::Error::msg)?;
        Ok(OpenSsl::base(api))
    }

    pub(super) fn base(api: Api) -> OpenSsl {
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
}

/// The path of the object that defines `OpenSSL_version`, as the dynamic loader has it.
pub(super) fn loaded_path(lib: &Library) -> Option<PathBuf> {
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

impl OpenSsl {
    /// Where the library came from and how it was built.
    pub(super) fn library_details(&self) -> crate::impls::details::Details {
        let v = |t| self.version_info(t);
        let v3 = |t| v(t).filter(|_| self.version_num() >= V3_0_0);
        crate::impls::details::Details {
            path: Some(self.path().display().to_string()),
            version: v(OPENSSL_VERSION),
            version_num: Some(format!("{:#010x}", self.version_num())),
            cflags: v(OPENSSL_CFLAGS),
            built_on: v(OPENSSL_BUILT_ON),
            platform: v(OPENSSL_PLATFORM),
            openssldir: v(OPENSSL_DIR),
            bn_options: self.bn_options(),
            full_version: v3(OPENSSL_FULL_VERSION_STRING),
            modulesdir: v3(OPENSSL_MODULES_DIR),
            cpu_info: v3(OPENSSL_CPU_INFO),
            ..Default::default()
        }
    }
}
