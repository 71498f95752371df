//! The clock the cores delivered while a point ran, from the best source this machine
//! has: APERF/MPERF through /dev/cpu/N/msr (the delivered clock, not the requested
//! one), perf's hardware `cycles` against busy time, or cpufreq's `scaling_cur_freq`.
//! Cores that ran the point are those busy for at least half of it (/proc/stat). Where
//! no source exists the reading is None and `detect` says why, once, for the environment.

use anyhow::anyhow;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

const MSR_MPERF: u64 = 0xE7;
const MSR_APERF: u64 = 0xE8;
const CPUS: &str = "/sys/devices/system/cpu";
/// A core ran the point when it was busy this share of the wall time.
const RAN_SHARE: f64 = 0.5;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    AperfMperf,
    PerfCycles,
    Cpufreq,
}

/// The clock during one point: per-core mean over the cores that ran it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClockReading {
    pub source: Source,
    pub mhz: f64,
    /// The cores that ran the point, and each one's clock.
    #[serde(deserialize_with = "core_keys")]
    pub per_core_mhz: BTreeMap<usize, f64>,
}

/// JSON writes the cores as string keys ("0"). serde reads those back as numbers only
/// straight from text, not through a record's flattened envelope or a `Value`, so the
/// keys are read as text and parsed here.
fn core_keys<'de, D: serde::Deserializer<'de>>(d: D) -> Result<BTreeMap<usize, f64>, D::Error> {
    BTreeMap::<String, f64>::deserialize(d)?
        .into_iter()
        .map(|(k, v)| {
            k.parse()
                .map(|core| (core, v))
                .map_err(|_| serde::de::Error::custom(format!("core {k:?} is not a number")))
        })
        .collect()
}

/// One counter value as the msr device or a perf fd gives it: 8 bytes, little-endian.
pub fn parse_counter(bytes: &[u8]) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?))
}

/// cpufreq's scaling_cur_freq (kHz) as MHz.
pub fn parse_khz(text: &str) -> Option<f64> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|k| *k > 0)
        .map(|k| k as f64 / 1e3)
}

/// Delivered MHz from APERF/MPERF deltas: MPERF ticks at the TSC rate while the core is
/// in C0, APERF at the actual clock.
pub fn aperf_mperf_mhz(d_aperf: u64, d_mperf: u64, tsc_hz: f64) -> Option<f64> {
    (d_mperf > 0).then(|| tsc_hz / 1e6 * d_aperf as f64 / d_mperf as f64)
}

/// The online CPUs listed in a sysfs `cpu` dir (cpu0, cpu1, ...).
pub fn cpus_in(root: &Path) -> Vec<usize> {
    let mut v: Vec<usize> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_prefix("cpu")?.parse().ok())
        .collect();
    v.sort_unstable();
    v
}

/// The best source under these roots (/dev/cpu and /sys/devices/system/cpu), or why
/// there is none. Each source is tried for real (a read, an open), not guessed.
pub fn detect_in(
    dev_cpu: &Path,
    sys_cpu: &Path,
    perf: impl Fn(usize) -> anyhow::Result<()>,
) -> anyhow::Result<Source> {
    let cpus = cpus_in(sys_cpu);
    let first = *cpus.first().unwrap_or(&0);
    let msr = dev_cpu.join(first.to_string()).join("msr");
    let msr_why = match read_at(&msr, MSR_APERF) {
        Ok(_) => return Ok(Source::AperfMperf),
        Err(e) => format!("{}: {e}", msr.display()),
    };
    let perf_why = match perf(first) {
        Ok(()) => return Ok(Source::PerfCycles),
        Err(e) => e,
    };
    let cur = sys_cpu.join(format!("cpu{first}/cpufreq/scaling_cur_freq"));
    match std::fs::read_to_string(&cur).ok().and_then(|t| parse_khz(&t)) {
        Some(_) => Ok(Source::Cpufreq),
        None => Err(anyhow!(
            "clock not observable: no APERF/MPERF ({msr_why}; modprobe msr), no hardware cycles counter ({perf_why}), no cpufreq ({} missing)",
            cur.display()
        )),
    }
}

/// This machine's source, found once.
pub fn detect() -> &'static Result<Source, String> {
    static FOUND: OnceLock<Result<Source, String>> = OnceLock::new();
    FOUND.get_or_init(|| {
        (detect_in(Path::new("/dev/cpu"), Path::new(CPUS), |c| {
            perf_open(c).map(drop)
        }))
        .map_err(|e| e.to_string())
    })
}

fn read_at(path: &Path, offset: u64) -> anyhow::Result<u64> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(path)?;
    let mut b = [0u8; 8];
    f.read_exact_at(&mut b, offset)?;
    parse_counter(&b).ok_or_else(|| anyhow!("short read"))
}

/// A perf fd counting hardware cycles on one CPU (all processes).
fn perf_open(cpu: usize) -> anyhow::Result<std::fs::File> {
    use std::os::fd::FromRawFd;
    // perf_event_attr, version 0 layout (64 bytes): type, size, config; the rest zero
    // (enabled, counting user and kernel).
    let mut attr = [0u8; 64];
    attr[0..4].copy_from_slice(&0u32.to_ne_bytes()); // PERF_TYPE_HARDWARE
    attr[4..8].copy_from_slice(&64u32.to_ne_bytes());
    attr[8..16].copy_from_slice(&0u64.to_ne_bytes()); // PERF_COUNT_HW_CPU_CYCLES
                                                      // SAFETY: perf_event_open reads `attr` (64 valid bytes, the size it is told).
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr.as_ptr(),
            -1i32,
            cpu as i32,
            -1i32,
            0u64,
        )
    };
    if fd < 0 {
        return Err(anyhow!(
            "perf_event_open(cycles): {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: a new fd we own.
    Ok(unsafe { std::fs::File::from_raw_fd(fd as i32) })
}

/// Counters at the start of a point.
pub struct Sampler {
    source: Source,
    t0: Instant,
    busy0: BTreeMap<usize, u64>,
    counters0: BTreeMap<usize, (u64, u64)>,
    perf: Vec<(usize, std::fs::File)>,
}

fn busy_ticks() -> BTreeMap<usize, u64> {
    crate::sys::procfs::cpu_lines()
        .into_iter()
        .filter_map(|(c, l)| Some((c?, crate::sys::cpu::busy_ticks(&l))))
        .collect()
}

fn msr_path(cpu: usize) -> PathBuf {
    PathBuf::from(format!("/dev/cpu/{cpu}/msr"))
}

impl Sampler {
    /// None where no source exists (the environment says why).
    pub fn start() -> Option<Sampler> {
        let source = *detect().as_ref().ok()?;
        let cpus = cpus_in(Path::new(CPUS));
        let mut s = Sampler {
            source,
            t0: Instant::now(),
            busy0: busy_ticks(),
            counters0: BTreeMap::new(),
            perf: Vec::new(),
        };
        match source {
            Source::AperfMperf => {
                for c in cpus {
                    if let (Ok(a), Ok(m)) = (
                        read_at(&msr_path(c), MSR_APERF),
                        read_at(&msr_path(c), MSR_MPERF),
                    ) {
                        s.counters0.insert(c, (a, m));
                    }
                }
            }
            Source::PerfCycles => {
                s.perf = cpus
                    .into_iter()
                    .filter_map(|c| Some((c, perf_open(c).ok()?)))
                    .collect();
            }
            Source::Cpufreq => {}
        }
        s.t0 = Instant::now();
        Some(s)
    }

    pub fn stop(self) -> Option<ClockReading> {
        use std::io::Read;
        let wall = self.t0.elapsed().as_secs_f64();
        let hz = crate::sys::procfs::ticks_per_s();
        let busy1 = busy_ticks();
        let busy_s =
            |c: usize| Some(busy1.get(&c)?.saturating_sub(*self.busy0.get(&c)?) as f64 / hz);
        let ran = |c: usize| busy_s(c).is_some_and(|b| b >= wall * RAN_SHARE);
        let mut per_core = BTreeMap::new();
        match self.source {
            Source::AperfMperf => {
                let tsc = tsc_hz()?;
                for (&c, &(a0, m0)) in &self.counters0 {
                    let (Ok(a1), Ok(m1)) = (
                        read_at(&msr_path(c), MSR_APERF),
                        read_at(&msr_path(c), MSR_MPERF),
                    ) else {
                        continue;
                    };
                    let busy = (m1.wrapping_sub(m0)) as f64 / (tsc * wall);
                    if busy >= RAN_SHARE {
                        if let Some(mhz) =
                            aperf_mperf_mhz(a1.wrapping_sub(a0), m1.wrapping_sub(m0), tsc)
                        {
                            per_core.insert(c, mhz);
                        }
                    }
                }
            }
            Source::PerfCycles => {
                for (c, mut f) in self.perf {
                    let mut b = [0u8; 8];
                    if f.read_exact(&mut b).is_err() || !ran(c) {
                        continue;
                    }
                    if let (Some(cycles), Some(b)) = (parse_counter(&b), busy_s(c)) {
                        per_core.insert(c, cycles as f64 / b / 1e6);
                    }
                }
            }
            Source::Cpufreq => {
                for c in cpus_in(Path::new(CPUS)).into_iter().filter(|c| ran(*c)) {
                    let p = format!("{CPUS}/cpu{c}/cpufreq/scaling_cur_freq");
                    if let Some(m) = std::fs::read_to_string(p).ok().and_then(|t| parse_khz(&t)) {
                        per_core.insert(c, m);
                    }
                }
            }
        }
        mean(self.source, per_core)
    }
}

/// The per-core mean, None when no core ran long enough to count.
pub fn mean(source: Source, per_core_mhz: BTreeMap<usize, f64>) -> Option<ClockReading> {
    if per_core_mhz.is_empty() {
        return None;
    }
    let mhz = per_core_mhz.values().sum::<f64>() / per_core_mhz.len() as f64;
    Some(ClockReading {
        source,
        mhz,
        per_core_mhz,
    })
}

/// Readings of several trials of one point, merged: the mean of each core's clocks.
pub fn merge(readings: &[ClockReading]) -> Option<ClockReading> {
    let first = readings.first()?;
    let mut sums: BTreeMap<usize, (f64, u32)> = BTreeMap::new();
    for r in readings {
        for (&c, &m) in &r.per_core_mhz {
            let e = sums.entry(c).or_default();
            e.0 += m;
            e.1 += 1;
        }
    }
    mean(
        first.source,
        sums.into_iter()
            .map(|(c, (s, n))| (c, s / n as f64))
            .collect(),
    )
}

/// The TSC rate, measured against the monotonic clock over 20 ms once per process (a
/// constant TSC does not change; measured per trial, the 20 ms sleep cost more than the
/// trial). None without a TSC.
pub fn tsc_hz() -> Option<f64> {
    static RATE: OnceLock<Option<f64>> = OnceLock::new();
    *RATE.get_or_init(measure_tsc_hz)
}

fn measure_tsc_hz() -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    {
        let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let flags = super::cpu::cpuinfo_field(&info, &["flags"]).unwrap_or_default();
        if !flags.split_whitespace().any(|f| f == "constant_tsc") {
            return None;
        }
        let (t0, c0) = (std::time::Instant::now(), read_tsc());
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (t1, c1) = (std::time::Instant::now(), read_tsc());
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

#[cfg(test)]
mod tests;
