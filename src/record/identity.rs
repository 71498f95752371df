//! What makes two records the same point, in every workload: the key `compare` pairs
//! points by and the reader counts a run's point once by.

use super::any::AnyRecord;
pub use super::any::KeyValue;
use serde::Serialize;
use std::collections::BTreeMap;

/// What makes two records the same point: the workload, the implementation label and the
/// workload's own coordinates, in a fixed order (speed: alg, direction, size, threads;
/// tls: suite, content, file size, concurrency, handshake; vpn: tunnel, cipher, protocol,
/// direction, streams).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Identity {
    pub workload: String,
    #[serde(rename = "impl")]
    pub label: String,
    #[serde(flatten)]
    pub keys: BTreeMap<&'static str, KeyValue>,
}

impl Identity {
    /// The coordinates as "aes-128-gcm enc 16k x1" for a table.
    pub fn point(&self) -> String {
        let mut parts = Vec::new();
        for (k, v) in &self.keys {
            parts.push(match (*k, v) {
                ("size" | "file_size", KeyValue::Num(n)) => crate::units::size_label(*n),
                ("threads" | "streams", KeyValue::Num(n)) => format!("x{n}"),
                ("concurrency", KeyValue::Num(n)) => format!("c{n}"),
                ("packet_size", KeyValue::Num(n)) => format!("{n} B packets"),
                ("handshake", KeyValue::Text(t)) => {
                    if t == "true" {
                        "handshake".into()
                    } else {
                        continue;
                    }
                }
                _ => v.to_string(),
            });
        }
        parts.join(" ")
    }
}

/// The identity of a record. `label` replaces the record's own label (to match two
/// different labels with `--a`/`--b`).
pub fn identity(rec: &AnyRecord, label: Option<&str>) -> Identity {
    let (own, keys) = rec.identity_keys(label);
    Identity {
        workload: rec.workload().name().into(),
        label: label.unwrap_or(own).to_string(),
        keys: keys.into_iter().collect(),
    }
}

/// The label a record is selected by with `--a`/`--b`.
pub fn label_of(rec: &AnyRecord) -> &str {
    rec.selection_label()
}

/// The millisecond a run started within its second, from its id ("secs-pid-SSSRRRRR": the
/// stamp's top 12 bits); 0 for ids without one. Runs of one second are ordered by it, not
/// by their ids' pids, which sort as text ("9998" after "10002").
pub fn start_ms(run_id: &str) -> u32 {
    run_id
        .split('-')
        .nth(2)
        .filter(|s| s.len() == 8)
        .and_then(|s| u32::from_str_radix(s, 16).ok())
        .map_or(0, |stamp| stamp >> 20)
}
