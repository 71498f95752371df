//! The Record: one self-describing measured point, and the run's Environment.
//! Both are written as JSON Lines as soon as they exist; see docs/records.md.

use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

/// Version of the record format. Bump on any incompatible change.
pub const SCHEMA: u32 = 1;

/// One measured point. Field names are a public contract: add, never rename.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Record {
    /// Always "record" in a JSON Lines file, to tell it from the environment line.
    #[serde(default = "record_kind")]
    pub kind: String,
    pub run_id: String,
    pub workload: String,
    #[serde(rename = "impl")]
    pub implementation: String,
    pub impl_version: String,
    pub variant: Option<String>,
    pub access: String,
    /// The kernel driver that did the work (from /proc/crypto), for kernel paths.
    #[serde(default)]
    pub driver: Option<String>,
    /// The shared object the code came from, where that is a choice (--libcrypto).
    pub library: Option<String>,
    pub alg: String,
    pub direction: String,
    /// Bytes per call.
    pub size: u64,
    pub threads: u32,
    /// Median over trials of the aggregate bytes/s over all threads. Null (NaN in
    /// memory) for public-key operations, which have no bytes: see `ops_per_s`.
    #[serde(deserialize_with = "nullable::f64")]
    pub throughput_bps: f64,
    /// Confidence interval of the median: [low, high]; nulls for public-key operations.
    #[serde(deserialize_with = "nullable::pair")]
    pub throughput_bps_ci: [f64; 2],
    /// Coverage of that interval (e.g. 0.95; min/max of few trials cover less).
    pub ci_level: f64,
    /// Median bytes/s of each thread on its own.
    pub per_thread_bps: Vec<f64>,
    pub trials: u32,
    /// CPU time of the worker threads over all trials (getrusage RUSAGE_THREAD).
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    /// Wall time over all trials.
    pub wall_s: f64,
    /// Bytes processed over all trials.
    pub bytes: u64,
    /// Calls (messages) over all trials.
    pub calls: u64,
    /// Calls between two clock reads.
    pub batch: u64,
    /// Calls per second; the figure itself for public-key operations (size 0).
    pub ops_per_s: f64,
    /// Public-key operations only: the CI of `ops_per_s`, each thread's median ops/s,
    /// and every trial's aggregate ops/s (the byte-rate fields are null or empty there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_per_s_ci: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_thread_ops_per_s: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples_ops_per_s: Option<Vec<f64>>,
    /// (user + sys) / (wall x threads), in percent: 100 = the threads never waited.
    pub cpu_load_pct: f64,
    pub cpu_user_pct: f64,
    pub cpu_sys_pct: f64,
    /// CPU seconds (user + sys) per 10^9 bytes.
    pub cpu_s_per_gb: f64,
    /// Per thread, in TSC reference cycles (not core clock cycles); null without a TSC.
    pub tsc_cycles_per_byte: Option<f64>,
    /// throughput / (threads x 1-thread throughput), when the 1-thread point was measured.
    pub scaling_efficiency: Option<f64>,
    /// Aggregate bytes/s of every trial, in the order run.
    pub samples_bps: Vec<f64>,
    /// (max - min) / median of the samples, in percent.
    pub spread_pct: f64,
    /// True when the spread or the CI is too wide to trust small differences.
    pub noisy: bool,
    /// Trials during which other processes used at least half a core.
    pub disturbed_trials: u32,
    /// CPU used by everything else on the machine during the trials, in percent of all cores.
    pub others_cpu_pct: f64,
    /// Facts a reader must know to interpret the number.
    pub notes: Vec<String>,
}

/// serde_json writes a NaN as null; these read the null back as NaN.
mod nullable {
    use serde::{Deserialize, Deserializer};

    pub fn f64<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
    }

    pub fn pair<'de, D: Deserializer<'de>>(d: D) -> Result<[f64; 2], D::Error> {
        let [a, b] = <[Option<f64>; 2]>::deserialize(d)?;
        Ok([a.unwrap_or(f64::NAN), b.unwrap_or(f64::NAN)])
    }
}

fn record_kind() -> String {
    "record".into()
}

/// Captured once per run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Environment {
    #[serde(default = "environment_kind")]
    pub kind: String,
    pub schema: u32,
    pub run_id: String,
    pub cryptobench_version: String,
    pub started_unix: u64,
    pub command_line: Vec<String>,
    pub hostname: String,
    pub kernel: String,
    pub cpu: serde_json::Value,
    pub frequency: serde_json::Value,
    pub libraries: Vec<serde_json::Value>,
    pub unavailable: Vec<serde_json::Value>,
    pub settings: serde_json::Value,
    /// What `cryptobench probe` reports about the kernel's crypto paths.
    #[serde(default)]
    pub kernel_crypto: serde_json::Value,
}

fn environment_kind() -> String {
    "environment".into()
}

/// Appends JSON Lines to a file and flushes each line, so that an interrupted run keeps
/// every finished point.
pub struct JsonLinesWriter {
    file: File,
}

impl JsonLinesWriter {
    pub fn append(path: &Path) -> Result<Self, String> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| {
                format!(
                    "cannot open --output {}: {e}: give a writable file path",
                    path.display()
                )
            })?;
        Ok(JsonLinesWriter { file })
    }

    pub fn write<T: Serialize>(&mut self, value: &T) -> Result<(), String> {
        let mut line = serde_json::to_string(value).map_err(|e| e.to_string())?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.sync_data())
            .map_err(|e| format!("cannot write results: {e}"))
    }
}

/// Reads a JSON Lines results file: environments and records, in order.
/// What a JSON Lines results file holds.
pub struct SavedRun {
    pub environments: Vec<Environment>,
    /// Records of the speed workload.
    pub records: Vec<Record>,
    /// Workloads of the other records (tls, vpn), which have their own shapes.
    pub other_workloads: Vec<String>,
}

pub fn read_json_lines(path: &Path) -> Result<SavedRun, String> {
    let f = File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let (mut envs, mut recs, mut others) = (Vec::new(), Vec::new(), Vec::<String>::new());
    for (i, line) in BufReader::new(f).lines().enumerate() {
        let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&line)
            .map_err(|e| format!("{} line {}: not JSON: {e}", path.display(), i + 1))?;
        let bad = |e: serde_json::Error| format!("{} line {}: {e}", path.display(), i + 1);
        match (
            v.get("kind").and_then(|k| k.as_str()),
            v.get("workload").and_then(|w| w.as_str()),
        ) {
            (Some("environment"), _) => envs.push(serde_json::from_value(v).map_err(bad)?),
            (_, Some("speed")) => recs.push(serde_json::from_value(v).map_err(bad)?),
            (_, Some(w)) => {
                if !others.iter().any(|o| o == w) {
                    others.push(w.to_string());
                }
            }
            _ => {
                return Err(format!(
                    "{} line {}: neither an environment nor a record",
                    path.display(),
                    i + 1
                ))
            }
        }
    }
    Ok(SavedRun {
        environments: envs,
        records: recs,
        other_workloads: others,
    })
}
