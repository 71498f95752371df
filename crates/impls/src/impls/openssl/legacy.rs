//! OpenSSL 3's legacy provider, which alone holds single DES and RC4 there (Triple DES
//! stays in the default provider).
//!
//! Loading any provider explicitly stops OpenSSL from loading the default one by itself,
//! so `default` is loaded first, then `legacy` (`openssl speed` needs `-provider legacy
//! -provider default` for the same reason). Both stay loaded for the life of the process;
//! the legacy provider is tried only when a legacy cipher the default provider lacks is
//! first asked for, so that no other measurement runs with it loaded.

use super::ffi::*;
use anyhow::anyhow;
use std::ffi::CString;

impl Api {
    /// Loads the legacy provider once (OpenSSL 3 only: 1.1 fetches nothing). Err is the
    /// reason, with how to fix it.
    pub(super) fn legacy_provider(&self) -> anyhow::Result<()> {
        (self
            .legacy_loaded
            .get_or_init(|| self.load_legacy_provider().map_err(|e| e.to_string()))
            .clone())
        .map_err(anyhow::Error::msg)
    }

    fn load_legacy_provider(&self) -> anyhow::Result<()> {
        let Some(load) = self.provider_load else {
            return Err(anyhow!("this OpenSSL 3 libcrypto has no OSSL_PROVIDER_load, so its legacy provider (DES, RC4) cannot be loaded"));
        };
        for name in ["default", "legacy"] {
            let cname = CString::new(name).expect("no NUL in a provider name");
            // SAFETY: OSSL_PROVIDER_load(NULL = the default library context, a
            // NUL-terminated name) returns a provider handle or NULL; the handle is kept
            // loaded on purpose for the life of the process, so it is not unloaded.
            let p = unsafe { load(std::ptr::null_mut(), cname.as_ptr()) };
            if p.is_null() {
                let why = self.fail(&format!("OSSL_PROVIDER_load(NULL, \"{name}\")"));
                let dir = std::env::var("OPENSSL_MODULES")
                    .map(|d| format!("{d} (from OPENSSL_MODULES)"))
                    .ok()
                    .or_else(|| self.version_info(OPENSSL_MODULES_DIR))
                    .unwrap_or_else(|| "its MODULESDIR".into());
                return Err(anyhow!(
                    "OpenSSL's {name} provider is not loadable ({why}; looked in {dir}): OpenSSL 3 has single DES and RC4 only in legacy.so; install it (Debian: package libssl3) or set OPENSSL_MODULES to its directory"
                ));
            }
        }
        Ok(())
    }
}
