//! The `isa=` variants: the same libcrypto loaded again with OPENSSL_ia32cap (x86) or
//! OPENSSL_armcap (ARM) set.

use super::ffi::*;
use super::instance::{IsaVariant, Mode, OpenSsl};
use anyhow::anyhow;
use libloading::Library;
use std::path::PathBuf;
use std::sync::Arc;

/// The variable libcrypto's constructor reads its CPU capability mask from, once, when the
/// library is loaded (OPENSSL_ia32cap(3)).
pub(super) const IA32CAP_ENV: &str = "OPENSSL_ia32cap";

/// A named `isa=` variant: the OPENSSL_ia32cap value it sets and what that turns off.
pub(super) struct NamedIsa {
    pub(super) name: &'static str,
    pub(super) mask: &'static str,
    pub(super) turns_off: &'static str,
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
pub(super) const NAMED_ISA: [NamedIsa; 3] = [
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

/// On ARM, libcrypto's constructor reads OPENSSL_armcap instead: one number (strtoul, any
/// base) that replaces the capabilities it found; there is no `~` form.
pub(super) const ARMCAP_ENV: &str = "OPENSSL_armcap";

/// Bits of OPENSSL_armcap_P (crypto/arm_arch.h, 3.0).
pub(super) const ARMV7_NEON: u64 = 1 << 0;
pub(super) const ARMV8_AES: u64 = 1 << 2;
pub(super) const ARMV8_SHA1: u64 = 1 << 3;
pub(super) const ARMV8_SHA256: u64 = 1 << 4;
pub(super) const ARMV8_PMULL: u64 = 1 << 5;
pub(super) const ARMV8_SHA512: u64 = 1 << 6;
pub(super) const ARMV8_SHA3: u64 = 1 << 11;

/// A named `isa=` variant on ARM: the bits it clears from what libcrypto found.
pub(super) struct NamedArmcap {
    pub(super) name: &'static str,
    pub(super) clear: u64,
    pub(super) turns_off: &'static str,
}

/// Study 5's "stock against NEON build" is `--libcrypto` plus these.
pub(super) const NAMED_ARMCAP: [NamedArmcap; 3] = [
    NamedArmcap {
        name: "no-neon",
        clear: ARMV7_NEON,
        turns_off: "NEON off (ARMV7_NEON): OpenSSL's NEON code (bit-sliced AES, ChaCha20, Poly1305, GHASH, SHA-256/512) gives way to its scalar code; the ARMv8 crypto instructions have their own bits",
    },
    NamedArmcap {
        name: "no-aes",
        clear: ARMV8_AES | ARMV8_PMULL,
        turns_off: "the ARMv8 AES and PMULL instructions off (AES, and GHASH for GCM)",
    },
    NamedArmcap {
        name: "no-sha",
        clear: ARMV8_SHA1 | ARMV8_SHA256 | ARMV8_SHA512 | ARMV8_SHA3,
        turns_off: "the ARMv8 SHA-1, SHA-256, SHA-512 and SHA-3 instructions off",
    },
];

/// What `isa=VALUE` sets on ARM: the OPENSSL_armcap value and what it turns off. A name
/// clears its bits from `base`, the capabilities the loaded libcrypto reported.
pub(super) fn armcap_request(value: &str, base: Option<u64>) -> anyhow::Result<(String, String)> {
    let hint =
        "use isa=no-neon, isa=no-aes, isa=no-sha or isa=<OPENSSL_armcap value>, e.g. isa=0x1";
    if let Some(n) = NAMED_ARMCAP.iter().find(|n| n.name == value) {
        let base = base.ok_or_else(|| {
            format!("isa={value}: libcrypto does not report the capabilities it found (OpenSSL 1.1?), so there is nothing to clear bits from: give the whole value, e.g. isa=0x1 (NEON only)")
        }).map_err(anyhow::Error::msg)?;
        return Ok((format!("{:#x}", base & !n.clear), n.turns_off.into()));
    }
    match parse_c_number(value) {
        Some(_) => Ok((
            value.to_string(),
            format!("the OPENSSL_armcap value {value} as given, in place of what libcrypto found"),
        )),
        None => Err(anyhow!(
            "isa={value}: not a known name nor an OPENSSL_armcap number: {hint}"
        )),
    }
}

/// What `isa=VALUE` sets on this build's architecture: the variable (OPENSSL_ia32cap on
/// x86, OPENSSL_armcap on ARM), its value and what that turns off. `base` is the
/// capabilities libcrypto reported, which ARM's names clear bits from.
pub(super) fn cap_request(
    value: &str,
    base: Option<u64>,
) -> anyhow::Result<(&'static str, (String, String))> {
    if cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
        Ok((IA32CAP_ENV, isa_request(value)?))
    } else if cfg!(any(target_arch = "aarch64", target_arch = "arm")) {
        Ok((ARMCAP_ENV, armcap_request(value, base)?))
    } else {
        Err(anyhow!(
            "isa= needs OPENSSL_ia32cap (x86) or OPENSSL_armcap (ARM); this machine is {}",
            std::env::consts::ARCH
        ))
    }
}

/// Checks an `isa=` value's form before anything is loaded (any base will do for that).
pub(crate) fn check_request(value: &str) -> anyhow::Result<()> {
    cap_request(value, Some(0)).map(|_| ())
}

/// One word of an OPENSSL_ia32cap value: `~` (clear these bits) or not (use this value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct CapWord {
    pub(super) complement: bool,
    pub(super) value: u64,
}

/// An OPENSSL_ia32cap value, `[~]N[:[~]N]` or `:[~]N`: the first word, the second word.
/// A missing first word keeps the CPU's; a missing second word makes OpenSSL zero it.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Ia32cap(pub(super) Option<CapWord>, pub(super) Option<CapWord>);

/// A number the way OpenSSL reads one here: 0x hex, 0 octal, else decimal. Stricter than
/// OpenSSL, which silently stops at the first bad digit.
pub(super) fn parse_c_number(s: &str) -> Option<u64> {
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

pub(super) fn parse_ia32cap(s: &str) -> anyhow::Result<Ia32cap> {
    let word = |w: &str| -> anyhow::Result<CapWord> {
        let (complement, num) = match w.strip_prefix('~') {
            Some(rest) => (true, rest),
            None => (false, w),
        };
        parse_c_number(num)
            .map(|value| CapWord { complement, value })
            .ok_or_else(|| anyhow!("'{w}' is not [~]NUMBER (0x hex, 0 octal or decimal)"))
    };
    let (first, second) = match s.split_once(':') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    if first.is_empty() && second.is_none() {
        return Err(anyhow!("the mask is empty"));
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
pub fn isa_request(value: &str) -> anyhow::Result<(String, String)> {
    if let Some(n) = NAMED_ISA.iter().find(|n| n.name == value) {
        return Ok((n.mask.into(), n.turns_off.into()));
    }
    let hint = "use isa=no-aesni, isa=no-avx512, isa=no-avx2 or isa=<OPENSSL_ia32cap mask>, e.g. isa=~0x200000200000000:~0";
    let m = parse_ia32cap(value).map_err(|e| {
        anyhow!("isa={value}: not a known name nor an OPENSSL_ia32cap mask ({e}): {hint}")
    })?;
    let mut what = format!("the OPENSSL_ia32cap mask {value} as given");
    if m.1.is_none() {
        what.push_str(
            ", which has no second word, so OpenSSL zeroes that word (AVX2, AVX-512, SHA-NI, BMI and ADX off too)",
        );
    }
    Ok((value.to_string(), what))
}

/// The two capability words in libcrypto's `CPUINFO: OPENSSL_ia32cap=0x...:0x... env:...`;
/// on ARM, `CPUINFO: OPENSSL_armcap=0x...` gives one word (the second is 0).
pub fn caps_of(cpu_info: &str) -> Option<(u64, u64)> {
    if let Some(rest) = cpu_info.split("OPENSSL_armcap=").nth(1) {
        let word = rest.split_whitespace().next()?;
        return Some((u64::from_str_radix(word.strip_prefix("0x")?, 16).ok()?, 0));
    }
    let rest = cpu_info.split("OPENSSL_ia32cap=").nth(1)?;
    let (a, b) = rest.split_whitespace().next()?.split_once(':')?;
    let hex = |x: &str| u64::from_str_radix(x.strip_prefix("0x")?, 16).ok();
    Some((hex(a)?, hex(b)?))
}

/// OPENSSL_ia32cap's second word: AVX512F, and VAES with VPCLMULQDQ (CPUID leaf 7, ECX
/// bits 9 and 10, in the word's upper half).
const AVX512F: u64 = 1 << 16;
const VAES_VPCLMULQDQ: u64 = (1 << 41) | (1 << 42);

/// True when libcrypto reports no AVX-512F and the mask cleared VAES/VPCLMULQDQ alone: a
/// Zen 3 under no-avx512, whose AVX-512 bits were never there.
fn only_wide_aes_cleared(base: (u64, u64), cleared: (u64, u64)) -> bool {
    base.1 & AVX512F == 0 && cleared.0 == 0 && cleared.1 != 0 && cleared.1 & !VAES_VPCLMULQDQ == 0
}

/// Serialises the loads that set OPENSSL_ia32cap: the environment is process-wide.
pub(super) static IA32CAP_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A directory only we can enter (mode 0700), removed with its content when dropped.
pub(super) struct PrivateDir(PathBuf);

impl PrivateDir {
    pub(super) fn new() -> anyhow::Result<PrivateDir> {
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
                    return Err(anyhow!(
                        "cannot create a private directory in {}: {} (set TMPDIR to a writable directory)",
                        base.display(),
                        one_line(&e.to_string())
                    ))
                }
            }
        }
        Err(anyhow!(
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
pub(super) struct EnvOverride {
    pub(super) name: &'static str,
    pub(super) old: Option<std::ffi::OsString>,
}

impl EnvOverride {
    pub(super) fn set(name: &'static str, value: &str) -> EnvOverride {
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
    /// This library loaded again with OPENSSL_ia32cap (x86) or OPENSSL_armcap (ARM) set
    /// for `isa=VALUE`.
    ///
    /// The environment is changed only while the copy's constructors run, under a lock;
    /// like any setenv it races with C code reading the environment on other threads,
    /// so variants are made while the registry is built, before any worker exists.
    pub(super) fn isa_variant(&self, spec: &str, value: &str) -> anyhow::Result<OpenSsl> {
        let base_cpu_info = self.version_info(OPENSSL_CPU_INFO);
        let base = base_cpu_info.as_deref().and_then(caps_of).map(|c| c.0);
        let (variable, (mask, turns_off)) = cap_request(value, base)?;
        let src = self.path();
        if !src.is_absolute() {
            return Err(anyhow!(
                "cannot copy libcrypto: the loader did not say which file {} is",
                src.display()
            ));
        }
        let (api, cpu_info, loaded_from) = {
            let _lock = IA32CAP_LOCK.lock().unwrap_or_else(|e| e.into_inner());
            let dir = PrivateDir::new()?;
            let name = src
                .file_name()
                .unwrap_or(std::ffi::OsStr::new("libcrypto.so"));
            let copy = dir.0.join(name);
            std::fs::copy(src, &copy).map_err(|e| {
                anyhow!(
                    "cannot copy {} to {}: {}",
                    src.display(),
                    dir.0.display(),
                    one_line(&e.to_string())
                )
            })?;
            let _env = EnvOverride::set(variable, &mask);
            // SAFETY: a byte-for-byte copy of the library the base instance loaded; as in
            // `load_system`, loading runs only OpenSSL's own initialisers, which now read
            // the mask we set.
            let lib = unsafe { Library::new(&copy) }
                .map_err(|e| {
                    let shown = copy.display().to_string();
                    format!(
                    "cannot load the copy {shown}: {} (a noexec temporary directory? set TMPDIR)",
                    dl_reason(&e, &shown)
                )
                })
                .map_err(anyhow::Error::msg)?;
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
        let mut wide_aes_note = None;
        let cleared = match (base_caps, caps) {
            (Some(b), Some(c)) => {
                let (on0, on1) = (c.0 & !b.0, c.1 & !b.1);
                if on0 != 0 || on1 != 0 {
                    return Err(anyhow!(
                        "{variable}={mask} turns on capabilities this CPU does not report (bits {on0:#x}:{on1:#x}): OpenSSL could run instructions the CPU lacks; clear bits instead"
                    ));
                }
                if c == b {
                    return Err(anyhow!(
                        "changes nothing on this CPU: with {variable}={mask} libcrypto reports the capabilities it has without it ({:#x}:{:#x})",
                        b.0, b.1
                    ));
                }
                let cleared = (b.0 & !c.0, b.1 & !c.1);
                if variable == IA32CAP_ENV && only_wide_aes_cleared(b, cleared) {
                    let version = self.api.version_num;
                    if (0x3000_0000..0x3050_0000).contains(&version) {
                        return Err(anyhow!(
                            "changes nothing on this CPU: it has no AVX-512 (libcrypto reports {:#x}:{:#x}), and the mask removes only VAES/VPCLMULQDQ here, which OpenSSL before 3.5 uses only together with AVX-512 (aes-gcm-avx512): the variant would run the base's code",
                            b.0, b.1
                        ));
                    }
                    wide_aes_note = Some(format!(
                        "{spec}: this CPU has no AVX-512; the mask removes only VAES/VPCLMULQDQ here"
                    ));
                }
                Some(cleared)
            }
            _ => None,
        };
        Ok(OpenSsl {
            api: Arc::new(api),
            mode: Mode::Isa(Box::new(IsaVariant {
                spec: spec.to_string(),
                variable,
                mask,
                turns_off,
                base_cpu_info,
                cleared,
                loaded_from,
                wide_aes_note,
            })),
        })
    }
}
