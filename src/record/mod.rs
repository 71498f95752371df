//! The Record: one self-describing measured point, and the run's Environment.
//! Both are written as JSON Lines as soon as they exist; see docs/records.md.

use anyhow::anyhow;
pub mod any;
pub mod disk;
pub mod environment;
pub mod identity;
pub mod profile;
pub mod speed;
pub mod ssh;
pub mod tls;
pub mod vpn;
pub mod window;

pub use any::{Head, Listed, RecordData};
pub use environment::{Environment, Library, Settings, Unavailable};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

/// Version of the record format. Bump on any incompatible change; the reader upgrades
/// older files (see `read`).
pub const SCHEMA: u32 = 2;

/// One measured point of any workload: the identity and metrics every workload shares,
/// with the workload's own fields (`D`) flattened in. Field names are a public contract:
/// add, never rename (docs/records.md).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Record<D> {
    /// Always `record` in a JSON Lines file, to tell it from the environment line.
    pub kind: LineKind,
    pub schema: u32,
    pub run_id: String,
    pub workload: Workload,
    /// What did the work: a library ("openssl"), a server ("nginx"), a tunnel ("openvpn").
    #[serde(rename = "impl")]
    pub implementation: String,
    pub impl_version: String,
    /// A switch on the implementation (ISA mask, kernel driver, mode): part of the identity.
    pub variant: Option<String>,
    /// The name shown in tables, unique within a run.
    pub label: String,
    /// Median payload bytes per second; null where bytes do not apply (public-key
    /// operations count `ops_per_s` instead).
    #[serde(with = "nullable_f64")]
    pub throughput_bps: f64,
    /// Confidence interval of `throughput_bps`: [low, high]; null from a single trial.
    pub throughput_bps_ci: Option<[f64; 2]>,
    /// `throughput_bps` of every trial (round), in the order run.
    pub samples_bps: Vec<f64>,
    /// Wall time of the measured window(s), in seconds.
    pub wall_s: f64,
    /// CPU seconds of what was measured (worker threads, server, tunnel); null where the
    /// work cannot be attributed to processes (a bare veth).
    pub cpu_user_s: Option<f64>,
    pub cpu_sys_s: Option<f64>,
    /// (cpu_user_s + cpu_sys_s) per 10^9 payload bytes.
    pub cpu_s_per_gb: Option<f64>,
    /// CPU used by everything else during the point, in percent of all cores (0-100).
    pub others_cpu_pct: f64,
    /// Other work took enough CPU during the point to move the number.
    pub disturbed: bool,
    /// Facts a reader must know to interpret the number.
    pub notes: Vec<String>,
    /// Where the CPU time went (--profile), or why it could not be sampled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<Box<profile::ProfileField>>,
    /// The device under test the point was measured on (`--dut ssh://...`); absent when
    /// measured where cryptobench was started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dut: Option<String>,
    /// `--dut` tls and vpn points: the CPU the agent (cryptobench on the DUT) used during
    /// the measured window, in percent of one core; absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dut_agent_cpu_pct: Option<f64>,
    /// The workload's own fields.
    #[serde(flatten)]
    pub data: D,
}

impl<D> std::ops::Deref for Record<D> {
    type Target = D;
    fn deref(&self) -> &D {
        &self.data
    }
}

impl<D> std::ops::DerefMut for Record<D> {
    fn deref_mut(&mut self) -> &mut D {
        &mut self.data
    }
}

impl<D> Record<D> {
    /// The interval, or [x, x] for a single trial.
    pub fn ci(&self) -> [f64; 2] {
        self.throughput_bps_ci
            .unwrap_or([self.throughput_bps, self.throughput_bps])
    }
}

/// What a line of a results file is: its `kind` field.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LineKind {
    Environment,
    Record,
    /// The run's last line (`RunEnd`).
    End,
}

/// A percentage as a record holds it: 0 to 100, and the float rounding of a share of
/// summed times past either end (a machine 100% busy was written as 100.00000000002).
pub const PERCENT: std::ops::RangeInclusive<f64> = -1e-9..=100.0 + 1e-9;

// The workloads: one line each. A new workload adds its line here, its data type in its
// own file beside these (with `RecordData`), and its settings variant below.
any::workload_list! {
    Speed(speed::SpeedData) = "speed",
    Tls(tls::TlsData) = "tls",
    Vpn(vpn::VpnData) = "vpn",
    Disk(disk::DiskData) = "disk",
    Ssh(ssh::SshData) = "ssh",
}

/// Each workload's settings, told apart by the fields only it has.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum WorkloadSettings {
    Speed(environment::SpeedSettings),
    Vpn(environment::VpnSettings),
    Process(environment::ProcessSettings),
    Tls(Box<environment::TlsSettings>),
    Disk(disk::DiskSettings),
    Ssh(ssh::SshSettings),
    /// Settings this version does not know: not kept. Only a workload this version does
    /// not know writes them, and its records cannot be read either.
    Other {},
}

impl Default for WorkloadSettings {
    fn default() -> Self {
        WorkloadSettings::Other {}
    }
}

impl std::fmt::Display for Workload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq<&str> for Workload {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

/// Why a point was not measured: an exclusion's `kind`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ExclusionKind {
    /// The library does not offer the algorithm.
    NotOffered,
    /// It offers it, but gave a wrong answer: never timed.
    Refused,
    /// The size does not fit the algorithm (CBC needs whole blocks).
    SizeUnsupported,
    /// Not applicable (a tls mix of one suite).
    Skipped,
    /// Went wrong while measuring.
    Failed,
    /// Never reached: the run was interrupted first.
    NotReached,
}

impl ExclusionKind {
    pub fn name(self) -> &'static str {
        match self {
            ExclusionKind::NotOffered => "not_offered",
            ExclusionKind::Refused => "refused",
            ExclusionKind::SizeUnsupported => "size_unsupported",
            ExclusionKind::Skipped => "skipped",
            ExclusionKind::Failed => "failed",
            ExclusionKind::NotReached => "not_reached",
        }
    }
}

/// A number that is null in JSON where it does not apply (NaN in memory).
mod nullable_f64 {
    use serde::{Deserialize, Deserializer, Serializer};
    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else {
            s.serialize_none()
        }
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
    }
}

pub use crate::impls::openssl::build::OpenSslBuild;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Exclusion {
    pub workload: Workload,
    /// The implementation (speed), server (tls) or tunnel (vpn) concerned.
    #[serde(rename = "impl")]
    pub implementation: String,
    pub kind: ExclusionKind,
    pub reason: String,
    /// The point's coordinates (speed: alg, size, direction; tls: suite, content,
    /// file_size, concurrency; vpn: tunnel, load).
    #[serde(flatten)]
    pub point: BTreeMap<String, Coordinate>,
}

/// One coordinate of an excluded point: a name, a count, or null where it does not apply.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Coordinate {
    Count(u64),
    Name(String),
    Null,
}

impl Coordinate {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Coordinate::Name(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Coordinate::Count(n) => Some(*n),
            _ => None,
        }
    }
}

impl From<&str> for Coordinate {
    fn from(s: &str) -> Self {
        Coordinate::Name(s.to_string())
    }
}

impl From<String> for Coordinate {
    fn from(s: String) -> Self {
        Coordinate::Name(s)
    }
}

impl From<u64> for Coordinate {
    fn from(n: u64) -> Self {
        Coordinate::Count(n)
    }
}

impl<T: Into<Coordinate>> From<Option<T>> for Coordinate {
    fn from(v: Option<T>) -> Self {
        v.map_or(Coordinate::Null, Into::into)
    }
}

/// The last line of a run in a JSON Lines file: whether it finished, and what was not
/// measured. A run without one was killed (or is still running).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunEnd {
    /// Always `end`.
    pub kind: LineKind,
    pub run_id: String,
    pub interrupted: bool,
    /// Records the run wrote.
    pub points: usize,
    pub exclusions: Vec<Exclusion>,
    pub unavailable: Vec<Unavailable>,
    /// What the workload's analysis needs beyond the records (tls: each suite's cipher
    /// timed in-process), so that `report` computes the same analysis as the run did.
    #[serde(default, deserialize_with = "AnalysisInputs::lenient")]
    pub analysis_inputs: AnalysisInputs,
}

/// What a workload's analysis needs beyond its records; null for most.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum AnalysisInputs {
    #[default]
    None,
    /// tls: each suite's record protection timed alone.
    TlsCipherAlone(Vec<tls::CipherAlone>),
}

impl AnalysisInputs {
    /// Inputs of a shape this version does not know are left out: the report then lacks
    /// only what needed them, not the whole run.
    fn lenient<'de, D: serde::Deserializer<'de>>(d: D) -> Result<AnalysisInputs, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        Ok(AnalysisInputs::deserialize(v).unwrap_or_default())
    }
    pub fn tls_cipher_alone(&self) -> Vec<tls::CipherAlone> {
        match self {
            AnalysisInputs::TlsCipherAlone(a) => a.clone(),
            _ => Vec::new(),
        }
    }
}

/// Appends JSON Lines to a file and flushes each line, so that an interrupted run keeps
/// every finished point. Lines are synced to disk only where that means something (a
/// regular file); a pipe, FIFO or /dev/null just gets the bytes.
pub struct JsonLinesWriter {
    file: File,
    shown: String,
    sync: bool,
}

impl JsonLinesWriter {
    /// Refuses what can never be a results file, without creating or touching anything:
    /// call before any other work, then `append` when the run starts.
    pub fn check(path: &Path) -> anyhow::Result<()> {
        let shown = crate::units::shown_path(path);
        if path.as_os_str() == "-" {
            return Err(anyhow!(
                "--output -: give a file path (for results on stdout use --format json)"
            ));
        }
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => {
                Err(anyhow!("--output {shown} is a directory: give a file path"))
            }
            Ok(_) => Ok(()),
            Err(_) => {
                let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
                match parent.map(std::fs::metadata) {
                    Some(Ok(m)) if !m.is_dir() => Err(anyhow!(
                        "--output {shown}: {} is not a directory: give a writable file path",
                        crate::units::shown_path(parent.unwrap_or(path))
                    )),
                    Some(Err(e)) => Err(anyhow!(
                        "--output {shown}: {e}: give a file path in an existing directory"
                    )),
                    _ => Ok(()),
                }
            }
        }
    }

    pub fn append(path: &Path) -> anyhow::Result<Self> {
        Self::check(path)?;
        let shown = crate::units::shown_path(path);
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)
            .or_else(|_| OpenOptions::new().create(true).append(true).open(path))
            .map_err(|e| anyhow!("cannot open --output {shown}: {e}: give a writable file path"))?;
        let meta = file
            .metadata()
            .map_err(|e| anyhow!("cannot open --output {shown}: {e}"))?;
        let sync = meta.is_file();
        // A run killed mid-line leaves a partial last line: start ours on a fresh one.
        if sync && meta.len() > 0 {
            use std::io::{Read, Seek, SeekFrom};
            let mut last = [0u8; 1];
            let ends_clean = file.seek(SeekFrom::End(-1)).is_ok()
                && file.read_exact(&mut last).is_ok()
                && last[0] == b'\n';
            if !ends_clean {
                file.write_all(b"\n")
                    .map_err(|e| anyhow!("cannot write --output {shown}: {e}"))?;
            }
        }
        Ok(JsonLinesWriter { file, shown, sync })
    }

    /// Lines on standard output (an agent's, read by its controller).
    pub fn stdout() -> anyhow::Result<Self> {
        use std::os::fd::AsFd;
        let fd = std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| anyhow!("cannot write to stdout: {e}"))?;
        Ok(JsonLinesWriter {
            file: File::from(fd),
            shown: "stdout".into(),
            sync: false,
        })
    }

    pub fn write<T: Serialize>(&mut self, value: &T) -> anyhow::Result<()> {
        let mut line = serde_json::to_string(value)?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| {
                if self.sync {
                    self.file.sync_data()
                } else {
                    Ok(())
                }
            })
            .map_err(|e| anyhow!("cannot write --output {}: {e}", self.shown))
    }
}

pub mod read;

/// Where a run's lines go as they are made: the `--output` file and the store.
pub trait Sink {
    fn environment(&mut self, env: &Environment) -> anyhow::Result<()>;
    fn record(&mut self, record: &read::AnyRecord) -> anyhow::Result<()>;
    fn end(&mut self, end: &RunEnd) -> anyhow::Result<()>;
}

impl Sink for JsonLinesWriter {
    fn environment(&mut self, env: &Environment) -> anyhow::Result<()> {
        self.write(env)
    }
    fn record(&mut self, record: &read::AnyRecord) -> anyhow::Result<()> {
        self.write(record)
    }
    fn end(&mut self, end: &RunEnd) -> anyhow::Result<()> {
        self.write(end)
    }
}
