//! The `engine=NAME` variants: libcrypto's EVP calls routed through `afalg` (the kernel
//! crypto API over AF_ALG) or `devcrypto` (/dev/crypto). This is study 1's exact stack:
//! application → libcrypto → engine → kernel → driver. Each message is the base
//! instance's AES-CBC call, on a context keyed through the engine.

use super::instance::{Engine, Mode, OpenSsl};
use crate::algorithms::Algorithm;
use crate::impls::implementation::Support;
use crate::kernel;
use anyhow::anyhow;
use std::ffi::CString;
use std::sync::Arc;

/// Engines this variant knows, and the kernel interface each one reaches.
const ENGINES: &[(&str, &str)] = &[("afalg", "AF_ALG"), ("devcrypto", "/dev/crypto")];

/// The `engine=` spec of a variant: the engine's id, if `spec` is one.
pub(super) fn engine_id(spec: &str) -> Option<&str> {
    spec.strip_prefix("engine=").filter(|e| !e.is_empty())
}

/// OpenSSL's afalg engine sends a whole message (sendmsg) before it reads the result
/// (AIO), and the kernel's AF_ALG socket blocks a sender once it holds its send buffer:
/// `sk_sndbuf` (net.core.wmem_default) rounded down to pages. A longer message would
/// hang; None where the sysctl cannot be read.
fn afalg_max_message(wmem_default: &str) -> Option<usize> {
    let b: usize = wmem_default.trim().parse().ok()?;
    Some(b / 4096 * 4096)
}

impl OpenSsl {
    /// This library with engine `id` initialised. Err says why this machine cannot offer
    /// it (the engine's kernel interface, or the engine itself).
    pub(super) fn engine_variant(&self, id: &str) -> anyhow::Result<OpenSsl> {
        let Some(&(_, path_kind)) = ENGINES.iter().find(|(e, _)| *e == id) else {
            let names: Vec<&str> = ENGINES.iter().map(|(e, _)| *e).collect();
            return Err(anyhow!(
                "unknown engine '{id}': use one of {}",
                names.join(", ")
            ));
        };
        // The engine only works where its kernel interface does: say so with probe's reason.
        let status = if id == "afalg" {
            kernel::af_alg_status("skcipher", &kernel::KernelConfig::read())
        } else {
            kernel::cryptodev_status()
        };
        if !status.usable {
            return Err(anyhow!("engine {id} needs {path_kind}: {}", status.reason));
        }
        let api = &self.api;
        let Some(calls) = &api.engine else {
            return Err(anyhow!(
                "{} has no ENGINE_by_id: an engine needs OpenSSL 1.1 or 3.x with engine support",
                self.path().display()
            ));
        };
        let cid = CString::new(id)
            .map_err(|_| "engine name has a NUL byte".to_string())
            .map_err(anyhow::Error::msg)?;
        // SAFETY: ENGINE_by_id takes a C string; it loads a dynamic engine from the
        // engines directory when the id is not built in.
        let ptr = unsafe { (calls.by_id)(cid.as_ptr()) };
        if ptr.is_null() {
            // SAFETY: clearing this thread's error queue has no preconditions.
            unsafe { (api.err_clear_error)() };
            return Err(anyhow!(
                "OpenSSL cannot load engine {id} (no {id}.so in its engines directory; OPENSSL_ENGINES overrides it)"
            ));
        }
        // SAFETY: ptr is a valid ENGINE reference from ENGINE_by_id.
        if unsafe { (calls.init)(ptr) } != 1 {
            // SAFETY: as above; the structural reference is released.
            unsafe {
                (calls.free)(ptr);
                (api.err_clear_error)();
            }
            return Err(anyhow!(
                "engine {id} loaded but would not initialise ({path_kind} refused it)"
            ));
        }
        Ok(OpenSsl {
            api: Arc::clone(api),
            mode: Mode::Engine(Arc::new(Engine {
                api: Arc::clone(api),
                ptr,
                id: id.into(),
                max_message: if id == "afalg" {
                    std::fs::read_to_string("/proc/sys/net/core/wmem_default")
                        .ok()
                        .and_then(|s| afalg_max_message(&s))
                } else {
                    None
                },
            })),
        })
    }
}

/// Engines take over AES-CBC only.
pub(super) fn engine_support(engine: &Engine, alg: Algorithm) -> Support {
    match alg {
        Algorithm::Aes128Cbc | Algorithm::Aes256Cbc => Support::Yes,
        _ => Support::No(format!("engine {} offers only AES-CBC", engine.id)),
    }
}

/// The kernel driver behind the afalg engine.
pub(super) fn engine_driver(engine: &Engine, alg: Algorithm) -> Option<String> {
    match (engine.id.as_str(), alg) {
        ("afalg", Algorithm::Aes128Cbc | Algorithm::Aes256Cbc) => {
            kernel::chosen_driver(&kernel::proc_crypto(), "cbc(aes)").map(|e| e.driver.clone())
        }
        _ => None,
    }
}

pub(super) fn engine_note(engine: &Engine) -> String {
    format!(
        "libcrypto EVP through engine {}: every message crosses libcrypto, the engine and the kernel; \
         each call re-sets the IV (EVP_CipherInit_ex with no key), then Update and Final",
        engine.id
    )
}

#[cfg(test)]
mod limit_tests {
    #[test]
    fn the_afalg_limit_is_the_send_buffer_in_whole_pages() {
        assert_eq!(super::afalg_max_message("212992\n"), Some(212992));
        assert_eq!(super::afalg_max_message("5000"), Some(4096));
        assert_eq!(super::afalg_max_message("x"), None);
    }
}
