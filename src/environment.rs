//! What the machine is: captured once per run, written before the first record.

use crate::record::{Environment, SCHEMA};
use serde_json::{json, Value};
use std::fs;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

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
pub const ARM_CRYPTO_FLAGS: &[&str] = &["aes", "pmull", "sha1", "sha2", "sha512", "asimd", "neon"];

/// The flag list for this build's architecture.
pub fn crypto_flag_names() -> &'static [&'static str] {
    if cfg!(target_arch = "x86_64") {
        X86_CRYPTO_FLAGS
    } else {
        ARM_CRYPTO_FLAGS
    }
}

fn cpuinfo_field(cpuinfo: &str, keys: &[&str]) -> Option<String> {
    cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        keys.contains(&k.trim()).then(|| v.trim().to_string())
    })
}

pub fn cpu() -> Value {
    let info = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags: Vec<String> = cpuinfo_field(&info, &["flags", "Features"])
        .unwrap_or_default()
        .split_whitespace()
        .filter(|f| crypto_flag_names().contains(f))
        .map(str::to_string)
        .collect();
    json!({
        "arch": std::env::consts::ARCH,
        "model": cpuinfo_field(&info, &["model name", "Model", "Hardware"]),
        "logical_cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "crypto_flags": flags,
        "tsc_hz": tsc_hz(),
    })
}

/// Frequency facts: the governor and where (if anywhere) a live clock reading comes from.
pub fn frequency() -> Value {
    let gov = fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
        .ok()
        .map(|s| s.trim().to_string());
    let cur = fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    let info = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let mhz = cpuinfo_field(&info, &["cpu MHz"]).and_then(|s| s.parse::<f64>().ok());
    let source = if cur.is_some() {
        "cpufreq scaling_cur_freq".to_string()
    } else {
        "none: no cpufreq in /sys (virtual machine?); /proc/cpuinfo MHz is the nominal clock"
            .to_string()
    };
    json!({ "governor": gov, "cpufreq_khz": cur, "cpuinfo_mhz": mhz, "source": source })
}

/// The TSC rate, measured against the monotonic clock over 20 ms. None without a TSC.
pub fn tsc_hz() -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        let info = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let flags = cpuinfo_field(&info, &["flags"]).unwrap_or_default();
        if !flags.split_whitespace().any(|f| f == "constant_tsc") {
            return None;
        }
        let (t0, c0) = (Instant::now(), read_tsc());
        std::thread::sleep(Duration::from_millis(20));
        let (t1, c1) = (Instant::now(), read_tsc());
        Some((c1 - c0) as f64 / (t1 - t0).as_secs_f64())
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

#[cfg(target_arch = "x86_64")]
fn read_tsc() -> u64 {
    // SAFETY: rdtsc has no preconditions on x86_64.
    unsafe { core::arch::x86_64::_rdtsc() }
}

fn kernel() -> String {
    let rel = fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let ver = fs::read_to_string("/proc/sys/kernel/version").unwrap_or_default();
    format!("{} {}", rel.trim(), ver.trim())
}

pub fn capture(libraries: Vec<Value>, unavailable: Vec<Value>, settings: Value) -> Environment {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    Environment {
        kind: "environment".into(),
        schema: SCHEMA,
        run_id: format!("{}-{}", now.as_secs(), std::process::id()),
        cryptobench_version: env!("CARGO_PKG_VERSION").into(),
        started_unix: now.as_secs(),
        command_line: std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        hostname: fs::read_to_string("/proc/sys/kernel/hostname")
            .unwrap_or_default()
            .trim()
            .into(),
        kernel: kernel(),
        cpu: cpu(),
        frequency: frequency(),
        libraries,
        unavailable,
        settings,
        kernel_crypto: std::sync::Arc::new(crate::workloads::probe::kernel_facts()),
    }
}
