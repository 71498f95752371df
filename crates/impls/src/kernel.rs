//! What the kernel offers for crypto: /proc/crypto, its build config, and whether
//! AF_ALG and /dev/crypto can be used, with the reason when they cannot.

use crate::sys::errno;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::Read;

/// One entry of /proc/crypto.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct CryptoEntry {
    pub name: String,
    pub driver: String,
    pub module: String,
    pub priority: i64,
    #[serde(rename = "type")]
    pub kind: String,
    pub selftest: String,
    pub internal: bool,
    /// References held (an SA's rise proves what it bound); not part of the record.
    #[serde(skip)]
    pub refcnt: u64,
}

/// Parses /proc/crypto text: blank-line-separated blocks of `key : value`.
pub fn parse_proc_crypto(text: &str) -> Vec<CryptoEntry> {
    text.split("\n\n")
        .filter_map(|block| {
            let get = |k: &str| {
                block.lines().find_map(|l| {
                    let (key, v) = l.split_once(':')?;
                    (key.trim() == k).then(|| v.trim().to_string())
                })
            };
            Some(CryptoEntry {
                name: get("name")?,
                driver: get("driver")?,
                module: get("module").unwrap_or_default(),
                priority: get("priority").and_then(|p| p.parse().ok()).unwrap_or(0),
                kind: get("type").unwrap_or_default(),
                selftest: get("selftest").unwrap_or_default(),
                internal: get("internal").as_deref() == Some("yes"),
                refcnt: get("refcnt").and_then(|p| p.parse().ok()).unwrap_or(0),
            })
        })
        .collect()
}

pub fn proc_crypto() -> Vec<CryptoEntry> {
    parse_proc_crypto(&fs::read_to_string("/proc/crypto").unwrap_or_default())
}

/// How the driver a kernel user bound is known (records' `kernel_driver_proof`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DriverProof {
    /// Its reference count rose while the user was made (or it appeared, in use), and
    /// every other driver of the name that rose is inside it (pcrypt(X) holds X): proven.
    Refcount,
    /// Nothing proves it: no count rose (a module reloaded, the count was read too late),
    /// or two unrelated drivers rose. The kernel's choice by priority, as it would pick.
    Priority,
}

impl DriverProof {
    /// How the driver is known, as a note says it.
    pub fn how(self) -> &'static str {
        match self {
            DriverProof::Refcount => "its reference count rose in /proc/crypto",
            DriverProof::Priority => {
                "the highest priority in /proc/crypto: no reference count rose to prove it"
            }
        }
    }
}

/// The driver a kernel user (an IPsec SA, a dm-crypt mapping) bound, and how it is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundDriver {
    pub driver: String,
    pub proof: DriverProof,
}

/// The driver a kernel user bound to `instance`, from /proc/crypto `before` and `after`
/// it was made. Proven (`Refcount`) when the drivers of that name whose count rose (or
/// that appeared holding more than their registration's reference) are one driver and
/// the ones it wraps; otherwise only the highest priority, marked `Priority`.
pub fn bound_driver(
    before: &[CryptoEntry],
    after: &[CryptoEntry],
    instance: &str,
) -> Option<BoundDriver> {
    let rose: Vec<&CryptoEntry> = after
        .iter()
        .filter(|e| e.name == instance)
        .filter(|e| match before.iter().find(|b| b.driver == e.driver) {
            Some(b) => e.refcnt > b.refcnt,
            // A registered algorithm holds one reference of its own.
            None => e.refcnt > 1,
        })
        .collect();
    let outer = rose.iter().find(|e| {
        rose.iter()
            .all(|o| o.driver == e.driver || e.driver.contains(&format!("({})", o.driver)))
    });
    match outer {
        Some(e) => Some(BoundDriver {
            driver: e.driver.clone(),
            proof: DriverProof::Refcount,
        }),
        None => chosen_driver(after, instance).map(|e| BoundDriver {
            driver: e.driver.clone(),
            proof: DriverProof::Priority,
        }),
    }
}

/// The driver the kernel picks for `name`: the highest priority among the entries that
/// passed their self-test and are not internal.
pub fn chosen_driver<'a>(entries: &'a [CryptoEntry], name: &str) -> Option<&'a CryptoEntry> {
    entries
        .iter()
        .filter(|e| {
            e.name == name && !e.internal && e.selftest != "unknown" && e.selftest != "failed"
        })
        .max_by_key(|e| e.priority)
}

/// The kernel build config, from /proc/config.gz or /boot/config-<release>.
pub struct KernelConfig {
    text: Option<String>,
    pub source: Option<String>,
}

/// How a config option is set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigValue {
    BuiltIn,
    Module,
    NotSet,
    /// No config file could be read.
    Unknown,
}

impl KernelConfig {
    pub fn read() -> KernelConfig {
        if let Ok(f) = fs::File::open("/proc/config.gz") {
            let mut s = String::new();
            if flate2::read::GzDecoder::new(f)
                .read_to_string(&mut s)
                .is_ok()
            {
                return KernelConfig {
                    text: Some(s),
                    source: Some("/proc/config.gz".into()),
                };
            }
        }
        let release = fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        let path = format!("/boot/config-{}", release.trim());
        match fs::read_to_string(&path) {
            Ok(s) => KernelConfig {
                text: Some(s),
                source: Some(path),
            },
            Err(_) => KernelConfig {
                text: None,
                source: None,
            },
        }
    }

    #[cfg(test)]
    pub fn from_text(text: &str) -> KernelConfig {
        KernelConfig {
            text: Some(text.into()),
            source: Some("text".into()),
        }
    }

    pub fn get(&self, option: &str) -> ConfigValue {
        let Some(t) = &self.text else {
            return ConfigValue::Unknown;
        };
        for l in t.lines() {
            if let Some(v) = l.strip_prefix(option).and_then(|r| r.strip_prefix('=')) {
                return match v.trim() {
                    "y" => ConfigValue::BuiltIn,
                    "m" => ConfigValue::Module,
                    _ => ConfigValue::NotSet,
                };
            }
            if l.trim() == format!("# {option} is not set") {
                return ConfigValue::NotSet;
            }
        }
        ConfigValue::NotSet
    }
}

/// The AF_ALG socket types, the config option and module behind each, and an
/// algorithm every kernel with that type has.
pub const AF_ALG_TYPES: &[(&str, &str, &str, &str)] = &[
    (
        "skcipher",
        "CONFIG_CRYPTO_USER_API_SKCIPHER",
        "algif_skcipher",
        "cbc(aes)",
    ),
    (
        "aead",
        "CONFIG_CRYPTO_USER_API_AEAD",
        "algif_aead",
        "gcm(aes)",
    ),
    (
        "hash",
        "CONFIG_CRYPTO_USER_API_HASH",
        "algif_hash",
        "sha256",
    ),
];

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Usable {
    pub usable: bool,
    pub reason: String,
}

/// Opens an AF_ALG socket bound to (type, name). Returns the bound fd or the errno.
pub fn af_alg_bind(kind: &str, name: &str) -> Result<std::os::fd::OwnedFd, i32> {
    use std::os::fd::FromRawFd;
    // SAFETY: plain socket(2); the fd is owned below.
    let fd = unsafe { libc::socket(libc::AF_ALG, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: fd is a fresh socket we own.
    let owned = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
    // SAFETY: sockaddr_alg is plain data; zeroed is a valid value.
    let mut sa: libc::sockaddr_alg = unsafe { std::mem::zeroed() };
    sa.salg_family = libc::AF_ALG as libc::sa_family_t;
    if kind.len() >= sa.salg_type.len() || name.len() >= sa.salg_name.len() {
        return Err(libc::ENAMETOOLONG);
    }
    sa.salg_type[..kind.len()].copy_from_slice(kind.as_bytes());
    sa.salg_name[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: sa is a valid sockaddr_alg of the size we pass.
    let r = unsafe {
        libc::bind(
            fd,
            &sa as *const libc::sockaddr_alg as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_alg>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(errno());
    }
    Ok(owned)
}

fn module_loaded(name: &str) -> bool {
    fs::metadata(format!("/sys/module/{name}")).is_ok()
}

/// Why an AF_ALG socket of `kind` can or cannot be used here.
pub fn af_alg_status(kind: &str, config: &KernelConfig) -> Usable {
    let Some(&(_, option, module, probe_alg)) = AF_ALG_TYPES.iter().find(|t| t.0 == kind) else {
        return Usable {
            usable: false,
            reason: format!("unknown AF_ALG type {kind}"),
        };
    };
    match af_alg_bind(kind, probe_alg) {
        Ok(_) => Usable {
            usable: true,
            reason: format!("bound {kind} socket to {probe_alg}"),
        },
        Err(e) if e == libc::EAFNOSUPPORT => {
            let reason = match config.get("CONFIG_CRYPTO_USER_API") {
                _ if config.get(option) == ConfigValue::NotSet => {
                    format!("kernel built without {option} (socket(AF_ALG) fails: EAFNOSUPPORT)")
                }
                ConfigValue::NotSet => "kernel built without CONFIG_CRYPTO_USER_API (no AF_ALG sockets)".to_string(),
                ConfigValue::Module => "module af_alg not loaded (modprobe af_alg)".to_string(),
                ConfigValue::BuiltIn => "socket(AF_ALG) refused (EAFNOSUPPORT) although CONFIG_CRYPTO_USER_API=y: blocked by a security policy?".to_string(),
                ConfigValue::Unknown => "socket(AF_ALG) failed with EAFNOSUPPORT, and no kernel config is readable (/proc/config.gz, /boot/config-*)".to_string(),
            };
            Usable {
                usable: false,
                reason,
            }
        }
        Err(e) if e == libc::ENOENT => {
            let reason = match config.get(option) {
                ConfigValue::NotSet => format!("kernel built without {option}"),
                ConfigValue::Module if !module_loaded(module) => format!("module {module} not loaded (modprobe {module})"),
                ConfigValue::Unknown => format!("bind to {kind}/{probe_alg} failed (ENOENT): no {module}, or no {probe_alg}; kernel config not readable"),
                _ => format!("{kind} is there, but no {probe_alg} algorithm (ENOENT)"),
            };
            Usable {
                usable: false,
                reason,
            }
        }
        Err(e) => Usable {
            usable: false,
            reason: format!("AF_ALG {kind}: {}", std::io::Error::from_raw_os_error(e)),
        },
    }
}

/// Whether /dev/crypto (the out-of-tree cryptodev module) can be opened.
pub fn cryptodev_status() -> Usable {
    match fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/crypto")
    {
        Ok(_) => Usable {
            usable: true,
            reason: "opened /dev/crypto".into(),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Usable {
            usable: false,
            reason: if module_loaded("cryptodev") {
                "module cryptodev is loaded but /dev/crypto is missing (no devtmpfs/udev?)".into()
            } else {
                "no /dev/crypto: the cryptodev module is not loaded (it is out of tree: cryptodev-linux, not packaged by Debian)".into()
            },
        },
        Err(e) => Usable {
            usable: false,
            reason: format!("/dev/crypto: {e}"),
        },
    }
}

/// Kernel TLS's counters, /proc/net/tls_stat (present once the `tls` module is loaded):
/// TlsTxSw/TlsRxSw count the sockets ever switched to software kTLS, TlsCurrTxSw those
/// open now, TlsDecryptError the records that failed to decrypt.
pub fn tls_stat() -> Option<std::collections::BTreeMap<String, u64>> {
    let text = fs::read_to_string("/proc/net/tls_stat").ok()?;
    Some(parse_tls_stat(&text))
}

pub fn parse_tls_stat(text: &str) -> std::collections::BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some((f.next()?.to_string(), f.next()?.parse().ok()?))
        })
        .collect()
}

/// Whether this kernel can load a module at all (a sandbox kernel may not).
fn loads_modules(config: &KernelConfig) -> bool {
    config.get("CONFIG_MODULES") != ConfigValue::NotSet && fs::metadata("/proc/modules").is_ok()
}

/// The module file `file` (e.g. "wireguard.ko") as modules.dep of the running kernel
/// lists it.
fn module_file(file: &str) -> Option<String> {
    let release = fs::read_to_string("/proc/sys/kernel/osrelease").ok()?;
    let dep = fs::read_to_string(format!("/lib/modules/{}/modules.dep", release.trim())).ok()?;
    dep.lines()
        .filter_map(|l| l.split(':').next())
        .find(|p| p.rsplit('/').next() == Some(file))
        .map(str::to_string)
}

/// Kernel TLS: asking a TCP socket for the "tls" upper-layer protocol loads the module
/// (tcp-ulp-tls) where it can; ENOENT means there is none. The socket is never
/// connected, so the kernel refuses the switch itself (ENOTCONN) once it found `tls`.
pub fn ktls_status(config: &KernelConfig) -> Usable {
    // SAFETY: plain socket(2); the fd is owned below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Usable {
            usable: false,
            reason: format!("socket(AF_INET): {}", crate::sys::os_err(errno())),
        };
    }
    // SAFETY: fd is a fresh socket we own.
    let _owned = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    const TCP_ULP: libc::c_int = 31;
    let name = b"tls";
    // SAFETY: setsockopt reads name.len() bytes of name.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            TCP_ULP,
            name.as_ptr().cast(),
            name.len() as libc::socklen_t,
        )
    };
    let e = if r == 0 { 0 } else { errno() };
    match e {
        0 | libc::ENOTCONN => Usable {
            usable: true,
            reason: format!(
                "the kernel has the tls upper-layer protocol{}",
                if fs::metadata("/proc/net/tls_stat").is_ok() {
                    " (/proc/net/tls_stat counts its sockets)"
                } else {
                    ""
                }
            ),
        },
        libc::ENOENT => Usable {
            usable: false,
            reason: match config.get("CONFIG_TLS") {
                ConfigValue::NotSet => "kernel built without CONFIG_TLS (no kernel TLS)".into(),
                ConfigValue::Module if !loads_modules(config) => {
                    "CONFIG_TLS=m, but this kernel cannot load modules".into()
                }
                _ => "no tls module (setsockopt TCP_ULP \"tls\": ENOENT; modprobe tls)".into(),
            },
        },
        e => Usable {
            usable: false,
            reason: format!("setsockopt TCP_ULP \"tls\": {}", crate::sys::os_err(e)),
        },
    }
}

/// A network module's path: loaded, built in, or loadable from /lib/modules.
fn module_status(config: &KernelConfig, module: &str, file: &str, option: Option<&str>) -> Usable {
    let usable = |reason: String| Usable {
        usable: true,
        reason,
    };
    let not = |reason: String| Usable {
        usable: false,
        reason,
    };
    if module_loaded(module) {
        return usable(format!("module {module} loaded"));
    }
    let built = option.map(|o| config.get(o));
    if built == Some(ConfigValue::BuiltIn) {
        return usable(format!(
            "built into the kernel ({}=y)",
            option.unwrap_or("")
        ));
    }
    if !loads_modules(config) {
        return not(match (option, built) {
            (Some(o), Some(ConfigValue::NotSet)) => format!("kernel built without {o}"),
            _ => format!("module {module} not loaded, and this kernel cannot load modules"),
        });
    }
    match module_file(file) {
        Some(path) => usable(format!("module {module} loads on demand ({path})")),
        None => not(match (option, built) {
            (Some(o), Some(ConfigValue::NotSet)) => format!("kernel built without {o}"),
            _ => format!("no module {file} for this kernel in /lib/modules"),
        }),
    }
}

/// The paths that move a whole data path into the kernel: kernel TLS, kernel WireGuard
/// and OpenVPN's data-channel offload (the out-of-tree ovpn-dco-v2 that OpenVPN 2.6
/// drives; Debian builds it with openvpn-dco-dkms).
pub fn offload_paths(config: &KernelConfig) -> OffloadPaths {
    OffloadPaths {
        ktls: ktls_status(config),
        wireguard: module_status(
            config,
            "wireguard",
            "wireguard.ko",
            Some("CONFIG_WIREGUARD"),
        ),
        ovpn_dco: module_status(config, "ovpn_dco_v2", "ovpn-dco-v2.ko", None),
        ipsec: ipsec_status(config),
        dm_crypt: module_status(config, "dm_crypt", "dm-crypt.ko", Some("CONFIG_DM_CRYPT")),
    }
}

/// IPsec (the kernel's ESP, configured over xfrm netlink): esp4 and xfrm_user both.
fn ipsec_status(config: &KernelConfig) -> Usable {
    let esp = module_status(config, "esp4", "esp4.ko", Some("CONFIG_INET_ESP"));
    let user = module_status(
        config,
        "xfrm_user",
        "xfrm_user.ko",
        Some("CONFIG_XFRM_USER"),
    );
    Usable {
        usable: esp.usable && user.usable,
        reason: format!("ESP: {}; xfrm_user: {}", esp.reason, user.reason),
    }
}

/// What the kernel offers for crypto: each AF_ALG socket type, /dev/crypto, and
/// /proc/crypto grouped by algorithm name (part of every run's environment).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct KernelFacts {
    pub release: String,
    pub config_source: Option<String>,
    pub af_alg: std::collections::BTreeMap<String, Usable>,
    pub cryptodev: Usable,
    /// The paths that move a whole data path into the kernel.
    pub offload: OffloadPaths,
    pub proc_crypto: Vec<ProcCryptoName>,
}

/// Kernel TLS, kernel WireGuard and OpenVPN's data-channel offload: usable or not, and
/// why.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct OffloadPaths {
    pub ktls: Usable,
    pub wireguard: Usable,
    pub ovpn_dco: Usable,
    /// The kernel's ESP (IPsec), configured with `ip xfrm`.
    pub ipsec: Usable,
    /// dm-crypt, the disk encryption target (`cryptobench disk`).
    pub dm_crypt: Usable,
}

/// One algorithm name of /proc/crypto: every driver, by priority, and the one the kernel
/// picks.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct ProcCryptoName {
    pub name: String,
    pub chosen: Option<String>,
    pub drivers: Vec<CryptoEntry>,
}

fn proc_crypto_by_name(entries: &[CryptoEntry]) -> Vec<ProcCryptoName> {
    let mut names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let mut drivers: Vec<CryptoEntry> =
                entries.iter().filter(|e| e.name == name).cloned().collect();
            drivers.sort_by_key(|e| std::cmp::Reverse(e.priority));
            ProcCryptoName {
                name: name.into(),
                chosen: chosen_driver(entries, name).map(|e| e.driver.clone()),
                drivers,
            }
        })
        .collect()
}

/// The kernel part: AF_ALG per socket type, /dev/crypto, /proc/crypto.
pub fn facts() -> KernelFacts {
    let config = KernelConfig::read();
    let af_alg = AF_ALG_TYPES
        .iter()
        .map(|(kind, ..)| (kind.to_string(), af_alg_status(kind, &config)))
        .collect();
    KernelFacts {
        release: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim()
            .into(),
        config_source: config.source.clone(),
        af_alg,
        cryptodev: cryptodev_status(),
        offload: offload_paths(&config),
        proc_crypto: proc_crypto_by_name(&proc_crypto()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "name         : cbc(aes)\ndriver       : cbc-aes-aesni\nmodule       : aesni_intel\npriority     : 400\nrefcnt       : 1\nselftest     : passed\ninternal     : no\ntype         : skcipher\n\nname         : cbc(aes)\ndriver       : cbc(aes-generic)\nmodule       : kernel\npriority     : 100\nrefcnt       : 1\nselftest     : passed\ninternal     : no\ntype         : skcipher\n\nname         : __cbc(aes)\ndriver       : __cbc-aes-aesni\nmodule       : aesni_intel\npriority     : 400\nrefcnt       : 1\nselftest     : passed\ninternal     : yes\ntype         : skcipher\n";

    #[test]
    fn parses_and_picks_by_priority() {
        let e = parse_proc_crypto(SAMPLE);
        assert_eq!(e.len(), 3);
        assert_eq!(
            chosen_driver(&e, "cbc(aes)").unwrap().driver,
            "cbc-aes-aesni"
        );
        assert!(chosen_driver(&e, "gcm(aes)").is_none());
    }

    /// /proc/crypto's entries of one name: (driver, priority, refcnt).
    fn snapshot(name: &str, drivers: &[(&str, i64, u64)]) -> Vec<CryptoEntry> {
        drivers
            .iter()
            .map(|&(driver, priority, refcnt)| CryptoEntry {
                name: name.into(),
                driver: driver.into(),
                priority,
                refcnt,
                selftest: "passed".into(),
                ..CryptoEntry::default()
            })
            .collect()
    }

    #[test]
    fn a_driver_is_proven_only_by_a_count_that_rose() {
        let name = "rfc4106(gcm(aes))";
        let bound = |before: &[(&str, i64, u64)], after: &[(&str, i64, u64)]| {
            let b = bound_driver(&snapshot(name, before), &snapshot(name, after), name)
                .expect("an entry of the name");
            (b.driver, b.proof)
        };
        let (aesni, generic) = (
            "rfc4106-gcm-aesni",
            "rfc4106(gcm_base(ctr(aes-generic),ghash-generic))",
        );
        use DriverProof::*;
        // A rise: the lower priority one, proven.
        assert_eq!(
            bound(
                &[(aesni, 400, 1), (generic, 100, 1)],
                &[(aesni, 400, 1), (generic, 100, 2)]
            ),
            (generic.into(), Refcount)
        );
        // No rise: the kernel's choice, not proven.
        assert_eq!(
            bound(
                &[(aesni, 400, 1), (generic, 100, 1)],
                &[(aesni, 400, 1), (generic, 100, 1)]
            ),
            (aesni.into(), Priority)
        );
        // Two unrelated rises (another user at the same time): not proven.
        assert_eq!(
            bound(
                &[(aesni, 400, 1), (generic, 100, 1)],
                &[(aesni, 400, 2), (generic, 100, 2)]
            ),
            (aesni.into(), Priority)
        );
        // pcrypt holds the driver it wraps: both rise, the outer one is proven.
        let pcrypt = "pcrypt(rfc4106-gcm-aesni)";
        assert_eq!(
            bound(&[(aesni, 400, 1)], &[(aesni, 400, 2), (pcrypt, 500, 2)]),
            (pcrypt.into(), Refcount)
        );
        // A module that reloaded between the reads: its entries are new, idle ones hold
        // only their own reference, so nothing is proven...
        assert_eq!(
            bound(&[(aesni, 400, 3)], &[(aesni, 400, 1), (generic, 100, 1)]),
            (aesni.into(), Priority)
        );
        // ...and a count back where it was is no rise either.
        assert_eq!(
            bound(&[(aesni, 400, 2)], &[(aesni, 400, 2)]),
            (aesni.into(), Priority)
        );
        // An instance the user made (absent before), in use: proven.
        assert_eq!(
            bound(&[(aesni, 400, 1)], &[(aesni, 400, 1), (generic, 100, 2)]),
            (generic.into(), Refcount)
        );
    }

    #[test]
    fn reads_config_values() {
        let c = KernelConfig::from_text("CONFIG_A=y\nCONFIG_B=m\n# CONFIG_C is not set\n");
        assert_eq!(c.get("CONFIG_A"), ConfigValue::BuiltIn);
        assert_eq!(c.get("CONFIG_B"), ConfigValue::Module);
        assert_eq!(c.get("CONFIG_C"), ConfigValue::NotSet);
        assert_eq!(c.get("CONFIG_D"), ConfigValue::NotSet);
    }

    #[test]
    fn tls_stat_parses() {
        let t = "TlsCurrTxSw                     \t2\nTlsTxSw                         \t7\nbad\n";
        let m = parse_tls_stat(t);
        assert_eq!(m["TlsCurrTxSw"], 2);
        assert_eq!(m["TlsTxSw"], 7);
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn this_host_explains_offload_paths() {
        let c = KernelConfig::read();
        let v = offload_paths(&c);
        for (k, u) in [
            ("ktls", &v.ktls),
            ("wireguard", &v.wireguard),
            ("ovpn_dco", &v.ovpn_dco),
            ("ipsec", &v.ipsec),
            ("dm_crypt", &v.dm_crypt),
        ] {
            assert!(!u.reason.is_empty(), "{k}: {v:?}");
        }
    }

    #[test]
    fn this_host_explains_af_alg() {
        // Whatever this kernel offers, every type gets a non-empty reason.
        let c = KernelConfig::read();
        for (kind, ..) in AF_ALG_TYPES {
            assert!(!af_alg_status(kind, &c).reason.is_empty());
        }
    }
}
