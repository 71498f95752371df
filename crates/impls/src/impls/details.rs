//! Where an implementation's code came from: the facts each provider, tool and server
//! reports about itself, kept in the environment's `libraries[].details`. One struct for
//! all of them: every field is optional, each reporter fills the ones it has, and the
//! JSON keys are the ones earlier versions wrote (docs/records.md).

use crate::kernel::Usable;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Details {
    /// The shared object, program or server binary the code was loaded or run from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// A note on how to read these facts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,

    // Rust crates and vendored C libraries.
    /// The crate's version as Cargo.toml requires it (no crate exposes it at run time).
    #[serde(rename = "crate", skip_serializing_if = "Option::is_none")]
    pub crate_version: Option<String>,
    /// Several crates' versions (RustCrypto).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crates: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crate_version_note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub awslc_version: Option<String>,
    /// BoringSSL's BORINGSSL_API_VERSION.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_version: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Which CPU paths the code picks at run time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backends: Option<String>,
    /// libsodium: crypto_aead_aes256gcm_is_available().
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aes256gcm_available: Option<bool>,

    // A libcrypto's own OpenSSL_version() strings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_num: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cflags: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub built_on: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub openssldir: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modulesdir: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bn_options: Option<String>,
    /// The capability vector libcrypto chose at load (OPENSSL_ia32cap / armcap).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_info: Option<String>,
    /// The switch this instance was loaded with (`--variant`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<VariantDetails>,

    // Kernel interfaces (AF_ALG, /dev/crypto).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interface: Option<String>,
    /// AF_ALG: each socket type, and whether it can be used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub types: Option<BTreeMap<String, Usable>>,
    /// The driver forced with `--variant driver=NAME`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_implements: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zerocopy: Option<bool>,
    /// The driver serving each algorithm offered (null: not known).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drivers: Option<BTreeMap<String, Option<String>>>,
    /// /dev/crypto: which cryptodev ABI the module speaks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub abi: Option<String>,

    // Servers and programs.
    /// nginx: the OpenSSL it was built with (`nginx -V`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub openssl: Option<String>,
    /// A program's extra environment (`openssl enc` under an ISA mask).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub env: Option<Vec<(String, String)>>,
}

impl Details {
    /// Facts with only a path.
    pub fn at(path: impl Into<String>) -> Details {
        Details {
            path: Some(path.into()),
            ..Details::default()
        }
    }
}

/// An OpenSSL instance loaded with a switch: an ISA mask, `openssl speed`'s call
/// pattern, or an engine.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct VariantDetails {
    /// As given to --variant ("isa=no-aesni", "speed-loop", "engine=devcrypto").
    pub spec: String,
    /// OPENSSL_ia32cap or OPENSSL_armcap.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variable: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turns_off: Option<String>,
    /// Capability bits on in the base library and off in this copy ("a:b").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cleared_bits: Option<String>,
    /// The base library's CPUINFO, for comparison (3.x only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_cpu_info: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loaded_from: Option<String>,
    /// speed-loop: the calls made per counted operation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_call: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// The mask itself, under the variable's name in lower case (`openssl_ia32cap`).
    #[serde(flatten)]
    pub mask: BTreeMap<String, String>,
}
