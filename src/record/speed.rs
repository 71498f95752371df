//! The speed record's own fields (flattened into the shared envelope, `crate::record::envelope::Record`).
//! Field names are a public contract: add, never rename (docs/records.md, "speed").

use crate::algorithms::{Algorithm, Direction};
pub use crate::impls::Access;
use crate::record::any::KeyValue;
use crate::record::envelope::Record;
use serde::{Deserialize, Serialize};

pub type SpeedRecord = Record<SpeedData>;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SpeedData {
    pub access: Access,
    /// The kernel driver that did the work (from /proc/crypto), for kernel paths.
    #[serde(default)]
    pub driver: Option<String>,
    /// The shared object the code came from, where that is a choice (--libcrypto).
    pub library: Option<String>,
    pub alg: Algorithm,
    pub direction: Direction,
    /// Bytes per call.
    pub size: u64,
    pub threads: u32,
    /// Coverage of `throughput_bps_ci` (e.g. 0.95; min/max of few trials cover less).
    pub ci_level: f64,
    /// Median bytes/s of each thread on its own.
    pub per_thread_bps: Vec<f64>,
    pub trials: u32,
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
    /// Per thread, in TSC reference cycles (not core clock cycles); null without a TSC.
    pub tsc_cycles_per_byte: Option<f64>,
    /// throughput / (threads x 1-thread throughput), when the 1-thread point was measured:
    /// the median over rounds of that ratio, each round's trials run back to back.
    pub scaling_efficiency: Option<f64>,
    /// CI of that median: [low, high]. Above 100 % beyond it is flagged noisy.
    #[serde(default)]
    pub scaling_efficiency_ci: Option<[f64; 2]>,
    /// (max - min) / median of the samples, in percent.
    pub spread_pct: f64,
    /// True when the spread or the CI is too wide to trust small differences.
    pub noisy: bool,
    /// Trials during which other processes used at least half a core.
    pub disturbed_trials: u32,
    /// Half-width of the CI reached, in percent of the median.
    #[serde(default)]
    pub ci_pct: Option<f64>,
    /// Why the point took no more trials: target_ci, budget, max_time or interrupted.
    #[serde(default)]
    pub stop_reason: Option<StopReason>,
    /// Median over trials of bytes per CPU-second of the measuring threads (summed over
    /// threads): what the code does while it has a CPU, whatever else runs.
    #[serde(default)]
    pub throughput_cpu_bps: Option<f64>,
    /// CI of that median: [low, high].
    #[serde(default)]
    pub throughput_cpu_bps_ci: Option<[f64; 2]>,
    /// The clock the cores that ran the point delivered (per-core mean over its trials);
    /// null where the machine has no source (the environment's frequency.source says why).
    #[serde(default)]
    pub clock: Option<crate::sys::clock::ClockReading>,
}

/// Why a point took no more trials: the stopping rule's own answer, recorded as it is.
pub use crate::measure::adaptive::StopReason;

impl crate::record::any::RecordData for SpeedData {
    fn identity_keys<'a>(
        r: &'a Record<Self>,
        _label: Option<&str>,
    ) -> (&'a str, Vec<(&'static str, KeyValue)>) {
        let text = |s: &str| KeyValue::Text(s.to_string());
        (
            &r.label,
            vec![
                ("alg", text(r.alg.name())),
                ("direction", text(r.direction.name())),
                ("size", KeyValue::Num(r.size)),
                ("threads", KeyValue::Num(r.threads as u64)),
            ],
        )
    }
    fn check(r: &Record<Self>) -> anyhow::Result<()> {
        if r.trials == 0 {
            anyhow::bail!("invalid record: trials is 0");
        }
        if r.threads == 0 {
            anyhow::bail!("invalid record: threads is 0");
        }
        // Public-key operations have no byte rate (null): their rate is ops_per_s.
        let ops = r.alg.kind().is_public_key();
        if r.throughput_bps.is_nan() != ops || ops && !(r.ops_per_s > 0.0 && r.ops_per_s < 1e12) {
            anyhow::bail!("invalid record: no rate (bytes/s, or ops/s for public keys)");
        }
        let pct = [r.cpu_load_pct, r.cpu_user_pct, r.cpu_sys_pct];
        if !pct.iter().all(|&p| p.is_finite() && p >= 0.0) {
            anyhow::bail!("invalid record: a negative or infinite CPU load");
        }
        Ok(())
    }
    fn suspect(r: &Record<Self>) -> bool {
        r.disturbed || r.noisy
    }
}

/// The settings of a speed run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SpeedSettings {
    pub time_per_point_s: f64,
    #[serde(default)]
    pub max_time_per_point_s: f64,
    #[serde(default)]
    pub min_trials: u32,
    /// The wall time a point's trials span before it may stop at its target (0 in runs
    /// before this field, whose minimum was in `min_trials` alone).
    #[serde(default)]
    pub min_window_s: f64,
    #[serde(default)]
    pub trial_s: f64,
    #[serde(default)]
    pub target_ci_pct: f64,
    #[serde(default)]
    pub sizes: Vec<usize>,
    #[serde(default)]
    pub threads: Vec<usize>,
    #[serde(default)]
    pub crossover: Option<(String, String)>,
}

/// A program timed as a whole process (`openssl enc`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ProcessSettings {
    pub program: String,
    #[serde(default)]
    pub cipher: String,
    #[serde(default)]
    pub bytes: u64,
    #[serde(default)]
    pub rounds: u32,
    #[serde(default)]
    pub dir: String,
}
