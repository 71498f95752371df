//! The last line of a run (`RunEnd`): whether it finished, what was not measured and why
//! (`Exclusion`, its kind and the point's coordinates), and what the workload's analysis
//! needs beyond the records.

use super::any::Workload;
use super::envelope::LineKind;
use super::environment::Unavailable;
use super::tls;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
