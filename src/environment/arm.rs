//! ARM CPU facts: the crypto features the kernel says user space may use (HWCAP/HWCAP2
//! from getauxval, the source of truth: qemu-user sets them for the emulated CPU), the
//! Features line of /proc/cpuinfo beside them, and the CPU model from the MIDR
//! implementer and part. The parsers take text so that they are tested on any host.

use crate::record::environment::{ArmCpu, MidrField};
use std::collections::BTreeMap;

/// The instruction sets a 32-bit or a 64-bit ARM kernel reports in its own words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArmArch {
    Aarch32,
    Aarch64,
}

/// (name as in /proc/cpuinfo, HWCAP word 1 or 2, bit), from the kernel's uapi asm/hwcap.h.
const AARCH64_FEATURES: &[(&str, u8, u32)] = &[
    ("asimd", 1, 1),
    ("aes", 1, 3),
    ("pmull", 1, 4),
    ("sha1", 1, 5),
    ("sha2", 1, 6),
    ("sha3", 1, 17),
    ("sha512", 1, 21),
];
const AARCH32_FEATURES: &[(&str, u8, u32)] = &[
    ("neon", 1, 12),
    ("aes", 2, 0),
    ("pmull", 2, 1),
    ("sha1", 2, 2),
    ("sha2", 2, 3),
];
/// aarch64 HWCAP_CPUID: the kernel emulates MRS of the ID registers (MIDR_EL1) at EL0.
const AARCH64_HWCAP_CPUID: u64 = 1 << 11;

impl ArmArch {
    pub fn of_build() -> Option<ArmArch> {
        if cfg!(target_arch = "aarch64") {
            Some(ArmArch::Aarch64)
        } else if cfg!(target_arch = "arm") {
            Some(ArmArch::Aarch32)
        } else {
            None
        }
    }

    fn table(self) -> &'static [(&'static str, u8, u32)] {
        match self {
            ArmArch::Aarch64 => AARCH64_FEATURES,
            ArmArch::Aarch32 => AARCH32_FEATURES,
        }
    }

    /// The crypto feature names this architecture can report.
    pub fn feature_names(self) -> Vec<&'static str> {
        self.table().iter().map(|(n, ..)| *n).collect()
    }

    /// Each crypto feature, on or off, from the two HWCAP words.
    pub fn features_from_hwcap(self, hwcap: u64, hwcap2: u64) -> BTreeMap<&'static str, bool> {
        self.table()
            .iter()
            .map(|&(name, word, bit)| {
                let w = if word == 1 { hwcap } else { hwcap2 };
                (name, w & (1u64 << bit) != 0)
            })
            .collect()
    }
}

/// The Features line of the first CPU in /proc/cpuinfo, if it is an ARM one.
pub fn cpuinfo_features(cpuinfo: &str) -> Option<Vec<String>> {
    field(cpuinfo, "Features").map(|v| v.split_whitespace().map(str::to_string).collect())
}

fn field<'a>(cpuinfo: &'a str, key: &str) -> Option<&'a str> {
    cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim())
    })
}

/// The identity a MIDR register encodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Midr {
    pub implementer: u32,
    pub variant: u32,
    pub part: u32,
    pub revision: u32,
}

impl Midr {
    pub fn from_register(midr: u64) -> Midr {
        Midr {
            implementer: ((midr >> 24) & 0xff) as u32,
            variant: ((midr >> 20) & 0xf) as u32,
            part: ((midr >> 4) & 0xfff) as u32,
            revision: (midr & 0xf) as u32,
        }
    }

    /// From the first CPU of /proc/cpuinfo (on big.LITTLE the others may differ).
    pub fn from_cpuinfo(cpuinfo: &str) -> Option<Midr> {
        let num = |key| {
            let v = field(cpuinfo, key)?;
            match v.strip_prefix("0x") {
                Some(h) => u32::from_str_radix(h, 16).ok(),
                None => v.parse().ok(),
            }
        };
        Some(Midr {
            implementer: num("CPU implementer")?,
            variant: num("CPU variant").unwrap_or(0),
            part: num("CPU part")?,
            revision: num("CPU revision").unwrap_or(0),
        })
    }

    /// "ARM Cortex-A9 r2p10"; an unknown pair keeps its numbers.
    pub fn model(&self) -> String {
        let vendor = IMPLEMENTERS
            .iter()
            .find(|(i, _)| *i == self.implementer)
            .map(|(_, n)| n.to_string())
            .unwrap_or_else(|| format!("implementer {:#04x}", self.implementer));
        let part = PARTS
            .iter()
            .find(|(i, p, _)| *i == self.implementer && *p == self.part)
            .map(|(.., n)| n.to_string())
            .unwrap_or_else(|| format!("part {:#05x}", self.part));
        format!("{vendor} {part} r{}p{}", self.variant, self.revision)
    }
}

const IMPLEMENTERS: &[(u32, &str)] = &[
    // 0 is reserved for software use; QEMU's `-cpu max` reports it.
    (0x00, "QEMU"),
    (0x41, "ARM"),
    (0x42, "Broadcom"),
    (0x43, "Cavium"),
    (0x48, "HiSilicon"),
    (0x4e, "NVIDIA"),
    (0x51, "Qualcomm"),
    (0x53, "Samsung"),
    (0x56, "Marvell"),
    (0x61, "Apple"),
    (0x69, "Intel"),
    (0xc0, "Ampere"),
];

/// (implementer, part, name): the cores of the studies' boards and routers, and the
/// common ARMv8 ones.
const PARTS: &[(u32, u32, &str)] = &[
    (0x00, 0x051, "max"),
    (0x41, 0xc05, "Cortex-A5"),
    (0x41, 0xc07, "Cortex-A7"),
    (0x41, 0xc08, "Cortex-A8"),
    (0x41, 0xc09, "Cortex-A9"),
    (0x41, 0xc0d, "Cortex-A12"),
    (0x41, 0xc0e, "Cortex-A17"),
    (0x41, 0xc0f, "Cortex-A15"),
    (0x41, 0xd03, "Cortex-A53"),
    (0x41, 0xd04, "Cortex-A35"),
    (0x41, 0xd05, "Cortex-A55"),
    (0x41, 0xd07, "Cortex-A57"),
    (0x41, 0xd08, "Cortex-A72"),
    (0x41, 0xd09, "Cortex-A73"),
    (0x41, 0xd0a, "Cortex-A75"),
    (0x41, 0xd0b, "Cortex-A76"),
    (0x41, 0xd0c, "Neoverse-N1"),
    (0x41, 0xd0d, "Cortex-A77"),
    (0x41, 0xd40, "Neoverse-V1"),
    (0x41, 0xd41, "Cortex-A78"),
    (0x41, 0xd44, "Cortex-X1"),
    (0x41, 0xd46, "Cortex-A510"),
    (0x41, 0xd47, "Cortex-A710"),
    (0x41, 0xd49, "Neoverse-N2"),
    (0x41, 0xd4f, "Neoverse-V2"),
    (0x42, 0x00f, "Brahma-B15"),
    (0x42, 0x100, "Brahma-B53"),
    (0x48, 0xd01, "TaiShan v110"),
    (0x51, 0x00f, "Scorpion"),
    (0x51, 0x02d, "Scorpion"),
    (0x51, 0x04d, "Krait"),
    (0x51, 0x06f, "Krait"),
    (0x51, 0x201, "Kryo"),
    (0x51, 0x211, "Kryo"),
    (0x51, 0x800, "Kryo 2xx/3xx Gold"),
    (0x51, 0x801, "Kryo 2xx/3xx Silver"),
    (0x56, 0x581, "PJ4/PJ4B"),
    (0x56, 0x584, "PJ4B-MP"),
];

/// Which architecture family a /proc/cpuinfo text describes: "arm" or "x86"; None when
/// it says neither (an empty or unfamiliar file).
pub fn cpuinfo_family(cpuinfo: &str) -> Option<&'static str> {
    if field(cpuinfo, "CPU implementer").is_some() || field(cpuinfo, "Features").is_some() {
        Some("arm")
    } else if field(cpuinfo, "vendor_id").is_some() || field(cpuinfo, "flags").is_some() {
        Some("x86")
    } else if field(cpuinfo, "cpu model").is_some() || field(cpuinfo, "isa").is_some() {
        Some("mips")
    } else {
        None
    }
}

/// AT_HWCAP and AT_HWCAP2 of this process.
pub fn hwcaps() -> (u64, u64) {
    // SAFETY: getauxval only reads the auxiliary vector; 0 for an absent entry.
    unsafe {
        (
            libc::getauxval(libc::AT_HWCAP) as u64,
            libc::getauxval(libc::AT_HWCAP2) as u64,
        )
    }
}

/// MIDR_EL1 through the kernel's emulation of MRS at EL0 (aarch64 only).
fn midr_register(hwcap: u64) -> Option<u64> {
    #[cfg(target_arch = "aarch64")]
    if hwcap & AARCH64_HWCAP_CPUID != 0 {
        let midr: u64;
        // SAFETY: HWCAP_CPUID says the kernel traps and emulates this read at EL0.
        unsafe { core::arch::asm!("mrs {}, midr_el1", out(reg) midr) };
        return Some(midr);
    }
    let _ = (hwcap, AARCH64_HWCAP_CPUID);
    None
}

/// Everything `probe` and the environment say about an ARM CPU, from these inputs.
pub fn describe(
    arch: ArmArch,
    hwcap: u64,
    hwcap2: u64,
    midr_register: Option<u64>,
    cpuinfo: &str,
) -> ArmCpu {
    let features = arch.features_from_hwcap(hwcap, hwcap2);
    let from_cpuinfo = cpuinfo_features(cpuinfo);
    // Features the two sources disagree on (an old kernel names fewer, or the cpuinfo
    // is another machine's, as under qemu-user).
    let disagree: Vec<&str> = match &from_cpuinfo {
        Some(list) => features
            .iter()
            .filter(|(n, on)| list.iter().any(|f| f == *n) != **on)
            .map(|(n, _)| *n)
            .collect(),
        None => Vec::new(),
    };
    let (midr, midr_source) = match midr_register {
        Some(r) => (
            Some(Midr::from_register(r)),
            "MIDR_EL1 (mrs at EL0, answered by the kernel)",
        ),
        None => (
            Midr::from_cpuinfo(cpuinfo),
            "/proc/cpuinfo CPU implementer and part",
        ),
    };
    ArmCpu {
        features: features
            .iter()
            .map(|(n, on)| (n.to_string(), *on))
            .collect(),
        hwcap: format!("{hwcap:#x}"),
        hwcap2: format!("{hwcap2:#x}"),
        cpuinfo_features: from_cpuinfo,
        features_disagreeing_with_cpuinfo: disagree.iter().map(|f| f.to_string()).collect(),
        midr: midr.map(|m| MidrField {
            implementer: format!("{:#04x}", m.implementer),
            part: format!("{:#05x}", m.part),
            variant: m.variant,
            revision: m.revision,
            source: midr_source.into(),
        }),
        model: midr.map(|m| m.model()),
    }
}

/// This process's CPU, when the build is for ARM.
pub fn this_cpu(cpuinfo: &str) -> Option<ArmCpu> {
    let arch = ArmArch::of_build()?;
    let (hwcap, hwcap2) = hwcaps();
    Some(describe(arch, hwcap, hwcap2, midr_register(hwcap), cpuinfo))
}

#[cfg(test)]
mod tests;
