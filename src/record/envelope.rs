//! The envelope of every record: the identity and metrics every workload shares
//! (`Record<D>`, its workload's own fields `D` flattened in), what a line of a results
//! file is (`LineKind`), the format's version, and how a percentage is held.

use super::any::Workload;
use super::profile;
use serde::{Deserialize, Serialize};

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
    /// CPU used by everything else during the point, in percent of all cores (0-100);
    /// null where it is not observable (disk: the work runs in shared kernel threads).
    pub others_cpu_pct: Option<f64>,
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
