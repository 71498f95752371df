//! The run's Environment, captured once per run: typed, so that readers ask for a field
//! by name instead of by key. Every struct reads older files too (missing fields take
//! their defaults).

use super::any::WorkloadSettings;
use super::envelope::LineKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Captured once per run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Environment {
    #[serde(default = "environment_kind")]
    pub kind: LineKind,
    pub schema: u32,
    pub run_id: String,
    pub cryptobench_version: String,
    pub started_unix: u64,
    pub command_line: Vec<String>,
    pub hostname: String,
    /// The machine, stable across runs: /etc/machine-id and the CPU model, hashed.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub machine_id: String,
    pub kernel: String,
    #[serde(default)]
    pub cpu: Cpu,
    #[serde(default)]
    pub frequency: Frequency,
    #[serde(default)]
    pub libraries: Vec<Library>,
    #[serde(default)]
    pub unavailable: Vec<Unavailable>,
    #[serde(default)]
    pub settings: Settings,
    /// What `cryptobench probe` reports about the kernel's crypto paths: most of an
    /// environment's size, and the same in every run on one machine, so read once and
    /// shared (`interned`).
    #[serde(
        default,
        deserialize_with = "interned",
        serialize_with = "kernel_crypto_text"
    )]
    pub kernel_crypto: std::sync::Arc<crate::kernel::KernelFacts>,
    /// True under qemu-user or a qemu-system TCG guest: the CPU is emulated and the
    /// numbers are not performance.
    #[serde(default)]
    pub emulated: bool,
    /// The device under test this environment was captured on (`--dut ssh://...`), run
    /// from the controller; absent when cryptobench ran where it was started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dut: Option<String>,
    /// How speed's `others_cpu_pct` was measured (absent in runs before it was said).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cpu: Option<OthersCpuMethod>,
}

/// How other processes' CPU was measured, and the tick rate of the counters it came from.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct OthersCpuMethod {
    pub method: String,
    /// /proc/stat's clock ticks per second (USER_HZ): one reading's resolution.
    pub ticks_per_s: f64,
}

impl OthersCpuMethod {
    pub fn here() -> OthersCpuMethod {
        OthersCpuMethod {
            method: crate::measure::others::METHOD.into(),
            ticks_per_s: crate::sys::procfs::ticks_per_s(),
        }
    }
}

fn environment_kind() -> LineKind {
    LineKind::Environment
}

impl Environment {
    /// The CPU model, or empty where none was captured.
    pub fn cpu_model(&self) -> &str {
        self.cpu.model.as_deref().unwrap_or("")
    }
}

/// The CPU: what it is and which crypto instructions it has.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Cpu {
    pub arch: String,
    pub model: Option<String>,
    pub logical_cpus: u64,
    /// The crypto-relevant flags it has (x86 /proc/cpuinfo flags, or ARM HWCAP names).
    pub crypto_flags: Vec<String>,
    /// The TSC's rate, where the CPU has an invariant one.
    pub tsc_hz: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arm: Option<ArmCpu>,
    /// Why the CPU seems emulated (qemu-user), if it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emulated_by: Option<String>,
}

/// An ARM CPU as the kernel's HWCAP words and its MIDR describe it.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct ArmCpu {
    pub features: BTreeMap<String, bool>,
    pub hwcap: String,
    pub hwcap2: String,
    /// /proc/cpuinfo's Features line, where there is one.
    pub cpuinfo_features: Option<Vec<String>>,
    pub features_disagreeing_with_cpuinfo: Vec<String>,
    pub midr: Option<MidrField>,
    pub model: Option<String>,
}

/// The Main ID Register's fields, in the notation of the ARM manuals.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct MidrField {
    pub implementer: String,
    pub part: String,
    pub variant: u32,
    pub revision: u32,
    pub source: String,
}

/// Frequency facts: the governor and where (if anywhere) a live clock reading comes from.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Frequency {
    pub governor: Option<String>,
    pub cpufreq_khz: Option<u64>,
    pub cpuinfo_mhz: Option<f64>,
    pub source: FrequencySource,
}

/// The live clock source of every speed point, or why there is none.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum FrequencySource {
    Live(crate::sys::clock::Source),
    None(String),
}

impl Default for FrequencySource {
    fn default() -> Self {
        FrequencySource::None(String::new())
    }
}

impl std::fmt::Display for FrequencySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrequencySource::Live(s) => match serde_json::to_value(s) {
                Ok(serde_json::Value::String(name)) => f.write_str(&name),
                _ => write!(f, "{s:?}"),
            },
            FrequencySource::None(why) => f.write_str(why),
        }
    }
}

/// A library, server or tool the run used, and its version.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Library {
    #[serde(rename = "impl")]
    pub implementation: String,
    /// The name shown in tables, where it differs from `impl` (a variant, a build).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// How it is reached: in-process, syscall, engine, tool, process.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access: Option<String>,
    /// The implementation's own facts (paths, builds, drivers): each fills its fields.
    pub details: crate::impls::details::Details,
}

/// Something that could not be used, and why.
pub use crate::impls::Unavailable;

/// The run's settings: the workload's own, and whether a study ran it beside another
/// run (its neighbour).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Settings {
    #[serde(flatten)]
    pub workload: WorkloadSettings,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub study_neighbour: bool,
}

/// One copy of each distinct `kernel_crypto` text read by this thread: a year of nightly
/// runs on a few machines holds a few, and a value seen before is only scanned, not parsed.
fn interned<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<std::sync::Arc<crate::kernel::KernelFacts>, D::Error> {
    type Seen = Vec<(Box<str>, std::sync::Arc<crate::kernel::KernelFacts>)>;
    thread_local! {
        static SEEN: std::cell::RefCell<Seen> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let raw = Box::<serde_json::value::RawValue>::deserialize(d)?;
    let text = raw.get();
    if let Some(k) = SEEN.with_borrow(|seen| {
        seen.iter()
            .find(|(t, _)| **t == *text)
            .map(|(_, k)| k.clone())
    }) {
        return Ok(k);
    }
    let facts = std::sync::Arc::new(serde_json::from_str(text).map_err(serde::de::Error::custom)?);
    SEEN.with_borrow_mut(|seen| seen.push((text.into(), std::sync::Arc::clone(&facts))));
    Ok(facts)
}

/// A `kernel_crypto` value and its text, rendered once by a writer that writes it again
/// and again (`written_as`).
pub type KernelCryptoText = (
    std::sync::Arc<crate::kernel::KernelFacts>,
    std::sync::Arc<serde_json::value::RawValue>,
);

thread_local! {
    /// What `written_as` lends to `kernel_crypto_text` while it runs.
    static RENDERED: std::cell::RefCell<Vec<KernelCryptoText>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `write` with each `kernel_crypto` value of `rendered` (the same shared value, as
/// `interned` hands it to every run of a machine) written as its text instead of
/// serialized again: `report --format json` writes the same 30 KB in every run's
/// environment, a third of its time over a year of short runs. The text must be what
/// serializing gives at that place (pretty, at that depth).
pub fn written_as<R>(rendered: &mut Vec<KernelCryptoText>, write: impl FnOnce() -> R) -> R {
    RENDERED.with_borrow_mut(|r| std::mem::swap(r, rendered));
    let out = write();
    RENDERED.with_borrow_mut(|r| std::mem::swap(r, rendered));
    out
}

fn kernel_crypto_text<S: serde::Serializer>(
    k: &std::sync::Arc<crate::kernel::KernelFacts>,
    s: S,
) -> Result<S::Ok, S::Error> {
    RENDERED.with_borrow(|r| {
        match r
            .iter()
            .find(|(shared, _)| std::sync::Arc::ptr_eq(shared, k))
        {
            Some((_, text)) => text.serialize(s),
            None => k.serialize(s),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::speed::{ProcessSettings, SpeedSettings};
    use crate::record::tls::{TlsSettings, TlsSuiteSettings};
    use crate::record::vpn::VpnSettings;

    /// Each workload's settings come back as the same variant: the untagged enum tells
    /// them apart by the field only that workload has.
    #[test]
    fn settings_of_each_workload_round_trip_to_their_own_variant() {
        let speed = WorkloadSettings::Speed(SpeedSettings {
            time_per_point_s: 0.15,
            max_time_per_point_s: 0.6,
            min_trials: 5,
            min_window_s: 0.045,
            trial_s: 0.003,
            target_ci_pct: 1.0,
            sizes: vec![16, 1024],
            threads: vec![1, 2],
            crossover: Some(("openssl".into(), "af_alg".into())),
        });
        let vpn = WorkloadSettings::Vpn(VpnSettings {
            tunnels: vec!["openvpn AES-128-GCM".into()],
            streams: vec![1],
            directions: vec!["up".into()],
            duration_s: 3,
            rounds: 1,
            udp: false,
            kernel_wireguard: false,
            netns: vec!["a".into(), "b".into()],
            veth: vec!["c".into(), "d".into()],
            outer_addresses: vec!["10.77.0.1".into()],
        });
        let process = WorkloadSettings::Process(ProcessSettings {
            program: "openssl enc".into(),
            cipher: "aes-256-cbc".into(),
            bytes: 1 << 20,
            rounds: 3,
            dir: "tmpfs".into(),
        });
        let tls = WorkloadSettings::Tls(Box::new(TlsSettings {
            suites: vec![TlsSuiteSettings {
                suite: "http".into(),
                protocol: "http".into(),
                ..Default::default()
            }],
            files: vec![4096],
            gzip_page: false,
            concurrency: vec![1],
            duration_s: 1.0,
            generator: "wrk".into(),
            handshake: false,
            mix: None,
            cert: "rsa2048".into(),
            server_cpus: vec![0],
            generator_cpus: vec![1],
            pinned: true,
            nginx_workers: 1,
            worker_connections: 1024,
            keepalive_requests: Some(1_000_000),
            ssl_session_cache: "off".into(),
            ssl_session_tickets: "off".into(),
            ktls: false,
            sendfile: "on".into(),
            http_version: "HTTP/1.1".into(),
            nginx_restarted_per_point: true,
            temp_dir: "/tmp/x".into(),
            cipher_alone_record_bytes: 16384,
            notes: vec![],
        }));
        let disk = WorkloadSettings::Disk(crate::record::disk::DiskSettings {
            disk_ciphers: vec!["aes-xts-plain64/512".into()],
            disk_drivers: vec![],
            queues: vec!["default".into()],
            patterns: vec!["seq-read qd1".into()],
            device: "brd".into(),
            size_bytes: 64 << 20,
            duration_s: 1,
        });
        let ssh = WorkloadSettings::Ssh(crate::record::ssh::SshSettings {
            ssh_servers: vec!["openssh".into()],
            ciphers: vec!["aes128-gcm@openssh.com".into()],
            macs: vec![],
            directions: vec!["up".into()],
            bytes: 64 << 20,
            rounds: 3,
            netns: vec!["a".into(), "b".into()],
        });
        for w in [speed, vpn, process, tls, disk, ssh] {
            let s = Settings {
                workload: w,
                study_neighbour: true,
            };
            let back: Settings = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
            assert_eq!(back, s);
        }
    }

    /// The environments of the committed fixtures (schema 1 and 2, speed, tls and vpn)
    /// read into typed fields, their settings into their workload's variant.
    #[test]
    fn fixture_environments_read_into_typed_fields() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut kinds = Vec::new();
        for f in ["schema1-mixed.jsonl", "vpn-openvpn-short.jsonl"] {
            let text = std::fs::read_to_string(dir.join(f)).unwrap();
            for line in text.lines().filter(|l| l.contains("\"environment\"")) {
                let v: serde_json::Value = serde_json::from_str(line).unwrap();
                let settings: Settings = serde_json::from_value(v["settings"].clone()).unwrap();
                let cpu: Cpu = serde_json::from_value(v["cpu"].clone()).unwrap();
                assert_eq!(cpu.model.as_deref(), Some("AMD EPYC"));
                assert!(cpu.logical_cpus > 0);
                let libs: Vec<Library> = serde_json::from_value(v["libraries"].clone()).unwrap();
                assert!(libs.iter().all(|l| !l.version.is_empty()), "{libs:?}");
                kinds.push(match settings.workload {
                    WorkloadSettings::Speed(_) => "speed",
                    WorkloadSettings::Tls(_) => "tls",
                    WorkloadSettings::Vpn(_) => "vpn",
                    // The fixtures' three; a new workload's variant need not be named.
                    _ => "another",
                });
            }
        }
        kinds.sort();
        kinds.dedup();
        assert_eq!(kinds, ["speed", "tls", "vpn"]);
    }
}
