//! The system OpenSSL (or any libcrypto from OpenSSL 1.1 or 3.x), loaded at run time.
//!
//! Nothing is linked: `libcrypto` is opened with `dlopen` and every function this module
//! calls is resolved once, at load time, into a table of function pointers. A library
//! that lacks one of them is not a usable libcrypto and is refused with a one-line
//! reason. The EVP algorithm getters (`EVP_aes_128_gcm`, ...) are optional: a build
//! without one simply does not offer that algorithm.
//!
//! Each [`Operation`](super::implementation::Operation) keys its context once in
//! `prepare`; every `process` call is then one independent message: set the nonce or IV
//! (`EVP_CipherInit_ex` with only the IV), feed the AAD, the data, finalise, and get or
//! check the tag. `openssl speed` counts
//! differently (it streams CBC and ChaCha20-Poly1305, and re-keys GCM per message in
//! recent 3.0 releases): `bench/vs-openssl-speed` compares the two and says how.
//!
//! Variants (`--variant`), each measured beside the base instance:
//!
//! - `isa=no-aesni`, `isa=no-avx512`, `isa=no-avx2` or `isa=<OPENSSL_ia32cap mask>` (on
//!   ARM `isa=no-neon`, `isa=no-aes`, `isa=no-sha` or `isa=<OPENSSL_armcap value>`): the
//!   same libcrypto loaded a second time with `OPENSSL_ia32cap` (`OPENSSL_armcap`) set, which libcrypto
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

use anyhow::anyhow;
pub mod build;
mod cipher;
mod digest;
mod engine;
mod ffi;
mod instance;
pub mod isa;
mod legacy;
mod load;
mod pkey;
mod speed_loop;
#[cfg(test)]
mod tests;

use super::implementation::{
    Access, Implementation, KernelDriver, Prepared, PublicKeyOps, Support, Symmetric,
};
use crate::algorithms::{Algorithm, Direction, Kind};
use engine::{engine_driver, engine_id, engine_note, engine_support};
use ffi::*;
use instance::Mode;
pub use instance::OpenSsl;
use speed_loop::*;
use std::sync::Arc;

/// Whether `spec` is a variant of openssl (for saying why it is unavailable when
/// openssl itself is).
pub fn understands_variant(spec: &str) -> bool {
    spec == SPEED_LOOP || spec.starts_with("isa=") || engine_id(spec).is_some()
}

impl Implementation for OpenSsl {
    fn name(&self) -> &str {
        "openssl"
    }

    fn version(&self) -> String {
        let v = self
            .version_info(OPENSSL_VERSION)
            .unwrap_or_else(|| format!("OpenSSL (version number {:#x})", self.version_num()));
        // A build's flags ride on its version, so that labels and records name the
        // build apart from the default one of the same release (see short_version).
        match &self.api.build_flags {
            Some(f) => format!("{v}{}{f}", crate::units::BUILD_MARK),
            None => v,
        }
    }

    fn variant(&self) -> Option<String> {
        match &self.mode {
            Mode::Base => None,
            Mode::Isa(v) => Some(v.spec.clone()),
            Mode::SpeedLoop => Some(SPEED_LOOP.into()),
            Mode::Engine(e) => Some(format!("engine={}", e.id)),
        }
    }

    fn access(&self) -> Access {
        match self.mode {
            Mode::Engine(_) => Access::Engine,
            _ => Access::InProcess,
        }
    }

    fn support(&self, alg: Algorithm) -> Support {
        match &self.mode {
            Mode::SpeedLoop => {
                if let Some(why) = speed_loop_gap(alg) {
                    return Support::No(why.into());
                }
            }
            Mode::Engine(e) => return engine_support(e, alg),
            _ => {}
        }
        let fetch = match alg.kind() {
            Kind::Aead | Kind::Cipher => (self.api.cipher_fetch, self.api.cipher_free),
            Kind::Hash | Kind::Mac => (self.api.md_fetch, self.api.md_free),
            _ => {
                if let Some(why) = pkey::Pkey::support(alg, self.api.version_num) {
                    return Support::No(why);
                }
                return match self.pkey() {
                    Ok(p) => match p.pq_gap(alg) {
                        Some(why) => Support::No(why),
                        None => Support::Yes,
                    },
                    Err(why) => Support::No(why.to_string()),
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
            Err(why) => Support::No(why.to_string()),
        }
    }

    fn notes(&self, alg: Algorithm, direction: Direction) -> Vec<String> {
        let mut notes = match &self.mode {
            Mode::SpeedLoop => return vec![speed_loop_note(alg, direction).into()],
            Mode::Engine(e) => return vec![engine_note(e)],
            _ => base_notes(alg),
        };
        if let Mode::Isa(v) = &self.mode {
            let reports = self
                .version_info(OPENSSL_CPU_INFO)
                .unwrap_or_else(|| "no CPU info (OpenSSL 1.1): the effect is not confirmed".into());
            notes.push(format!(
                "{}: libcrypto loaded a second time with {}={} ({}); it reports {reports}",
                v.spec, v.variable, v.mask, v.turns_off
            ));
            notes.extend(v.wide_aes_note.clone());
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
        if let Some(id) = engine_id(spec) {
            return Some(
                (self
                    .engine_variant(id)
                    .map(|o| Box::new(o) as Box<dyn Implementation>))
                .map_err(|e| e.to_string()),
            );
        }
        let value = spec.strip_prefix("isa=")?;
        Some(
            (self
                .isa_variant(spec, value)
                .map(|o| Box::new(o) as Box<dyn Implementation>))
            .map_err(|e| e.to_string()),
        )
    }

    fn details(&self) -> crate::impls::details::Details {
        use crate::impls::details::VariantDetails;
        let variant = match &self.mode {
            Mode::Base => None,
            Mode::Isa(v) => Some(VariantDetails {
                spec: v.spec.clone(),
                variable: Some(v.variable.into()),
                mask: [(v.variable.to_ascii_lowercase(), v.mask.clone())].into(),
                turns_off: Some(v.turns_off.clone()),
                cleared_bits: v.cleared.map(|(a, b)| format!("{a:#x}:{b:#x}")),
                base_cpu_info: v.base_cpu_info.clone(),
                loaded_from: Some(format!(
                    "{} (a private copy, deleted once loaded)",
                    v.loaded_from.display()
                )),
                ..Default::default()
            }),
            Mode::SpeedLoop => Some(VariantDetails {
                spec: SPEED_LOOP.into(),
                per_call: Some("the EVP calls `openssl speed -evp` 3.0 makes per counted operation (see each record's notes)".into()),
                ..Default::default()
            }),
            Mode::Engine(e) => Some(VariantDetails {
                spec: format!("engine={}", e.id),
                engine: Some(e.id.to_string()),
                ..Default::default()
            }),
        };
        crate::impls::details::Details {
            variant,
            ..self.library_details()
        }
    }
    fn public_key_ops(&self) -> Option<&dyn PublicKeyOps> {
        Some(self)
    }
    fn kernel_driver(&self) -> Option<&dyn KernelDriver> {
        Some(self)
    }
}

impl PublicKeyOps for OpenSsl {
    fn key_pair(
        &self,
        alg: Algorithm,
        private: Option<&[u8]>,
    ) -> anyhow::Result<Box<dyn super::pkey::KeyPair>> {
        self.support(alg).check()?;
        self.pkey()?.key_pair(alg, private)
    }

    fn public_key(
        &self,
        alg: Algorithm,
        public: &[u8],
    ) -> anyhow::Result<Box<dyn super::pkey::PublicKey>> {
        self.support(alg).check()?;
        self.pkey()?.public_key(alg, public)
    }
}

impl KernelDriver for OpenSsl {
    fn driver(&self, alg: Algorithm) -> Option<String> {
        match &self.mode {
            Mode::Engine(e) => engine_driver(e, alg),
            _ => None,
        }
    }
}

impl Symmetric for OpenSsl {
    fn prepare(&self, alg: Algorithm, direction: Direction, key: &[u8]) -> Prepared {
        match &self.mode {
            Mode::SpeedLoop => {
                if let Some(why) = speed_loop_gap(alg) {
                    return Err(anyhow!(why));
                }
                return self.prepare_speed_loop(alg, direction, key);
            }
            Mode::Engine(e) => {
                engine_support(e, alg).check()?;
                return Ok(Box::new(self.keyed_cipher(alg, direction, key, Some(e))?));
            }
            _ => {}
        }
        match alg.kind() {
            Kind::Signature | Kind::Agreement | Kind::Kem => {
                Err(anyhow!("{alg} is a public-key algorithm: use key_pair"))
            }
            Kind::Aead | Kind::Cipher => {
                Ok(Box::new(self.keyed_cipher(alg, direction, key, None)?))
            }
            Kind::Hash => self.prepare_md(alg, None),
            Kind::Mac => self.prepare_md(alg, Some(key)),
        }
    }
}

/// What the base instance does per call, for the records' notes.
fn base_notes(alg: Algorithm) -> Vec<String> {
    match alg.kind() {
        Kind::Aead => vec![
            "each call seals or opens one whole message: key set once, then per message EVP_CipherInit_ex with the nonce, AAD, data, Final and the tag ctrl (`openssl speed -evp` counts differently: see bench/vs-openssl-speed)".into(),
        ],
        Kind::Cipher if alg.nonce_len() == 0 => vec![
            "each call is one independent message: RC4 has no IV, so EVP_CipherInit_ex re-keys it (its 256-step key schedule) before Update and Final (`openssl speed -evp rc4` keys once and streams one endless keystream)".into(),
        ],
        Kind::Cipher => vec![
            "each call is one independent message: EVP_CipherInit_ex with a fresh IV, Update, Final (`openssl speed -evp` streams one endless message and never re-sets the IV)".into(),
        ],
        Kind::Hash | Kind::Mac => Vec::new(),
        Kind::Signature if crate::impls::pkey::dsa::dsa_bits(alg).is_some() => {
            vec![pkey::SIGN_NOTE.into(), crate::impls::pkey::dsa::KEY_NOTE.into()]
        }
        Kind::Signature if alg == Algorithm::MlDsa65 => vec![pkey::MLDSA_NOTE.into()],
        Kind::Signature => vec![pkey::SIGN_NOTE.into()],
        Kind::Agreement => vec![pkey::DERIVE_NOTE.into()],
        Kind::Kem => vec![pkey::KEM_NOTE.into()],
    }
}
