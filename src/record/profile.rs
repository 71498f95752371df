//! A record's `profile` field: where the point's CPU time went, as `profile` sampled it.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A record's `profile` field (docs/records.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ProfileField {
    Measured(Profile),
    /// perf missing or not permitted: the point was measured without a profile.
    Unavailable {
        unavailable: String,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub samples: u64,
    pub event: String,
    /// Samples of idle CPUs (the idle task in its idle loop), left out of `samples` and
    /// the shares: system-wide sampling sees every CPU, and an idle one is not the
    /// point's cost.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub idle_samples: u64,
    /// Only the categories that got samples, by name.
    pub categories: BTreeMap<String, Share>,
    pub unknown_share: f64,
    /// All cipher, MAC and hash categories together.
    pub crypto: Share,
    /// 1 / (1 - crypto share): the most free crypto could speed the point up.
    pub amdahl_ceiling: f64,
    /// Throughput measured while sampling (the record's own is without): the overhead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_bps: Option<f64>,
    /// The flame graph, where --profile-dir was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flame_graph: Option<PathBuf>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A share with its 95% interval and the samples behind it. The one `Share`: it is part of
/// the record, so it is defined here; `analyse::share` makes it (`Share::of`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Share {
    pub share: f64,
    pub ci: [f64; 2],
    pub samples: u64,
}
