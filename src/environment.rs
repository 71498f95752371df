//! What the machine is: captured once per run, written before the first record.

use crate::record::environment::{Cpu, Frequency, FrequencySource};
use crate::record::{Environment, Library, Settings, Unavailable, WorkloadSettings, SCHEMA};
use std::fs;
use std::time::{SystemTime, UNIX_EPOCH};

pub mod arm;

/// CPU flags that decide which code path a crypto library takes, per architecture.
pub const X86_CRYPTO_FLAGS: &[&str] = &[
    "aes",
    "pclmulqdq",
    "vaes",
    "vpclmulqdq",
    "avx",
    "avx2",
    "avx512f",
    "avx512vl",
    "avx512bw",
    "avx512dq",
    "avx512ifma",
    "sha_ni",
    "ssse3",
    "sse4_1",
    "bmi2",
    "adx",
];

/// The flag list for this build's architecture (ARM's from arm.rs, per AArch32/AArch64).
/// MIPS has none: no crypto instructions that any of the libraries uses.
pub fn crypto_flag_names() -> Vec<&'static str> {
    match arm::ArmArch::of_build() {
        Some(a) => a.feature_names(),
        None if cfg!(any(target_arch = "x86_64", target_arch = "x86")) => X86_CRYPTO_FLAGS.to_vec(),
        None => Vec::new(),
    }
}

/// The family /proc/cpuinfo is written for on this build's architecture, as
/// arm::cpuinfo_family names them.
fn family_of_build() -> Option<&'static str> {
    if cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
        Some("x86")
    } else if cfg!(any(target_arch = "aarch64", target_arch = "arm")) {
        Some("arm")
    } else if cfg!(any(target_arch = "mips", target_arch = "mips64")) {
        Some("mips")
    } else {
        None
    }
}

pub fn cpu() -> Cpu {
    let info = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    // On ARM the kernel's HWCAP words say what user space may use; /proc/cpuinfo may be
    // another machine's (qemu-user passes the host's through).
    let arm = arm::this_cpu(&info);
    let crypto_flags: Vec<String> = match &arm {
        Some(a) => a
            .features
            .iter()
            .filter(|(_, on)| **on)
            .map(|(f, _)| f.clone())
            .collect(),
        None => crate::sys::cpu::cpuinfo_field(&info, &["flags"])
            .unwrap_or_default()
            .split_whitespace()
            .filter(|f| crypto_flag_names().contains(f))
            .map(str::to_string)
            .collect(),
    };
    // Not the model of another machine's /proc/cpuinfo (qemu-user's host).
    let foreign = arm::cpuinfo_family(&info).is_some_and(|f| Some(f) != family_of_build());
    let model = match &arm {
        Some(a) => a.model.clone(),
        None if foreign => None,
        None => {
            crate::sys::cpu::cpuinfo_field(&info, &["model name", "Model", "Hardware", "cpu model"])
        }
    };
    Cpu {
        arch: std::env::consts::ARCH.into(),
        model,
        logical_cpus: std::thread::available_parallelism()
            .map(|n| n.get() as u64)
            .unwrap_or(1),
        crypto_flags,
        tsc_hz: crate::sys::clock::tsc_hz(),
        arm,
        emulated_by: emulation(&info),
    }
}

/// What to tell a reader of numbers measured under emulation.
pub const EMULATED_NOTE: &str =
    "emulated CPU (qemu): these numbers are not the performance of any real CPU";

/// Why this process seems to run under qemu-user, or None. qemu-user answers for
/// /proc/self/{maps,exe,cmdline,auxv} itself, but not for /proc/thread-self/maps (the
/// kernel's view, where the qemu binary is mapped), and qemu before 8.1 passes the
/// host's /proc/cpuinfo through, which then describes another architecture.
pub fn emulation(cpuinfo: &str) -> Option<String> {
    let ours = family_of_build()?;
    if let Some(theirs) = arm::cpuinfo_family(cpuinfo).filter(|f| *f != ours) {
        return Some(format!(
            "qemu-user: /proc/cpuinfo describes an {theirs} CPU, this program is built for {}",
            std::env::consts::ARCH
        ));
    }
    let maps = fs::read_to_string("/proc/thread-self/maps").unwrap_or_default();
    if let Some(path) = qemu_mapping(&maps) {
        return Some(format!("qemu-user: {path} is mapped into this process"));
    }
    let dmi = |f: &str| fs::read_to_string(format!("/sys/class/dmi/id/{f}")).unwrap_or_default();
    let clocks =
        fs::read_to_string("/sys/devices/system/clocksource/clocksource0/available_clocksource")
            .unwrap_or_default();
    tcg(cpuinfo, &dmi("sys_vendor"), &clocks)
}

/// A whole machine emulated by qemu-system (TCG, as guest/run boots it): its CPU model
/// says so ("QEMU TCG CPU"), or the board is QEMU's without the paravirtual clock that
/// every KVM guest has.
fn tcg(cpuinfo: &str, sys_vendor: &str, clocksources: &str) -> Option<String> {
    let model = crate::sys::cpu::cpuinfo_field(cpuinfo, &["model name"]).unwrap_or_default();
    if model.contains("TCG") {
        return Some(format!("qemu-system TCG: the CPU model is '{model}'"));
    }
    (sys_vendor.trim() == "QEMU" && !clocksources.contains("kvm-clock")).then(|| {
        "qemu-system TCG: a QEMU machine (DMI) without kvm-clock, so not accelerated by KVM"
            .to_string()
    })
}

/// The qemu-user binary among the file mappings of a /proc/PID/maps text.
fn qemu_mapping(maps: &str) -> Option<&str> {
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|path| {
            let name = path.rsplit('/').next().unwrap_or("");
            name.starts_with("qemu-") && !name.starts_with("qemu-system")
        })
}

/// Frequency facts: the governor and where (if anywhere) a live clock reading comes from.
pub fn frequency() -> Frequency {
    let gov = fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
        .ok()
        .map(|s| s.trim().to_string());
    let cur = fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    let info = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let mhz =
        crate::sys::cpu::cpuinfo_field(&info, &["cpu MHz"]).and_then(|s| s.parse::<f64>().ok());
    // The live clock source of every speed point, or why there is none (said once here;
    // each record then has "clock": null).
    let source = match crate::sys::clock::detect() {
        Ok(s) => FrequencySource::Live(*s),
        Err(why) => FrequencySource::None(format!(
            "none: {why}; /proc/cpuinfo MHz is the nominal clock"
        )),
    };
    Frequency {
        governor: gov,
        cpufreq_khz: cur,
        cpuinfo_mhz: mhz,
        source,
    }
}

fn kernel() -> String {
    let rel = fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let ver = fs::read_to_string("/proc/sys/kernel/version").unwrap_or_default();
    format!("{} {}", rel.trim(), ver.trim())
}

pub fn capture(
    libraries: Vec<Library>,
    unavailable: Vec<Unavailable>,
    settings: WorkloadSettings,
) -> Environment {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let cpu = cpu();
    Environment {
        kind: crate::record::LineKind::Environment,
        schema: SCHEMA,
        run_id: run_id(now),
        cryptobench_version: env!("CARGO_PKG_VERSION").into(),
        started_unix: now.as_secs(),
        // A store URL's password never reaches a results file.
        command_line: std::env::args_os()
            .map(|a| crate::units::masked(&a.to_string_lossy()))
            .collect(),
        hostname: fs::read_to_string("/proc/sys/kernel/hostname")
            .unwrap_or_default()
            .trim()
            .into(),
        machine_id: crate::sys::machine_id(cpu.model.as_deref().unwrap_or("")),
        kernel: kernel(),
        cpu,
        frequency: frequency(),
        libraries,
        unavailable,
        settings: Settings {
            workload: settings,
            study_neighbour: false,
        },
        emulated: emulation(&fs::read_to_string("/proc/cpuinfo").unwrap_or_default()).is_some(),
        kernel_crypto: std::sync::Arc::new(crate::kernel::facts()),
        dut: None,
        others_cpu: Some(crate::record::environment::OthersCpuMethod::here()),
    }
}

/// secs-pid-stamp, and a counter after the first run of a process (a study runs several
/// workloads in one process within a second). The stamp (8 hex digits: the millisecond
/// of the start, then 20 random bits drawn once per process) keeps apart runs that share
/// the second and the PID (containers, the identical DUTs of a fleet) and sorts the runs
/// of one second by their start, as the store and trend do. Seconds and millisecond come
/// from the one clock reading that is `started_unix`: read apart, a run started at .999
/// took the next second's millisecond and sorted first (trend_cli saw 3 library changes).
fn run_id(now: std::time::Duration) -> String {
    static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    static RANDOM: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    let random = RANDOM.get_or_init(|| {
        // Where the OS random generator fails, the clock's nanoseconds still differ.
        crate::impls::pkey::random_bytes(4)
            .ok()
            .and_then(|b| b.try_into().ok())
            .map_or(now.subsec_nanos(), u32::from_le_bytes)
    });
    let base = format!(
        "{}-{}-{:08x}",
        now.as_secs(),
        std::process::id(),
        stamp(now, *random)
    );
    match RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) {
        0 => base,
        n => format!("{base}-{n}"),
    }
}

fn stamp(now: std::time::Duration, random: u32) -> u32 {
    (now.subsec_millis() << 20) | (random & 0xf_ffff)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_stamp_carries_the_millisecond_of_started_unix() {
        let late = std::time::Duration::new(1_700_000_000, 999_600_000);
        let id = format!("1700000000-1-{:08x}", super::stamp(late, u32::MAX));
        assert_eq!(crate::record::identity::start_ms(&id), 999);
        let early = std::time::Duration::new(1_700_000_000, 7_000_000);
        let id = format!("1700000000-1-{:08x}", super::stamp(early, 0));
        assert_eq!(crate::record::identity::start_ms(&id), 7);
    }

    #[test]
    fn qemu_mapping_finds_the_user_emulator_only() {
        let maps = "5555-5556 r-xp 00000000 fd:01 123 /usr/bin/qemu-aarch64\n\
                    7f00-7f01 r--p 00000000 fd:01 9 /usr/lib/x86_64-linux-gnu/libc.so.6\n";
        assert_eq!(super::qemu_mapping(maps), Some("/usr/bin/qemu-aarch64"));
        let host = "5555-5556 r-xp 00000000 fd:01 123 /usr/bin/qemu-system-x86_64\n7f00-7f01 rw-p 00000000 00:00 0\n";
        assert_eq!(super::qemu_mapping(host), None);
    }

    #[test]
    fn tcg_is_told_from_kvm() {
        // As the guest of guest/run reports itself (qemu-system-x86_64 -accel tcg -cpu max).
        let tcg = "processor\t: 0\nmodel name\t: QEMU TCG CPU version 2.5+\n";
        assert!(super::tcg(tcg, "QEMU\n", "tsc hpet acpi_pm \n").is_some());
        let other = "model name\t: Intel(R) Xeon(R) Gold 6248\n";
        assert!(super::tcg(other, "QEMU\n", "tsc hpet acpi_pm \n").is_some());
        assert!(super::tcg(other, "QEMU\n", "kvm-clock tsc hpet acpi_pm \n").is_none());
        assert!(super::tcg(other, "Dell Inc.\n", "tsc hpet\n").is_none());
    }
}
