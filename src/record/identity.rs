//! What makes two records the same point, in every workload: the key `compare` pairs
//! points by and the reader counts a run's point once by.

use super::read::AnyRecord;
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

/// A coordinate: numbers sort as numbers (16 before 1024).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(untagged)]
pub enum KeyValue {
    Num(u64),
    Text(String),
}

impl std::fmt::Display for KeyValue {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            KeyValue::Num(n) => write!(f, "{n}"),
            KeyValue::Text(s) => f.write_str(s),
        }
    }
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
    let text = |s: &str| KeyValue::Text(s.to_string());
    let (workload, own, keys): (&str, &str, Vec<(&'static str, KeyValue)>) = match rec {
        AnyRecord::Speed(r) => (
            "speed",
            &r.label,
            vec![
                ("alg", text(r.alg.name())),
                ("direction", text(r.direction.name())),
                ("size", KeyValue::Num(r.size)),
                ("threads", KeyValue::Num(r.threads as u64)),
            ],
        ),
        AnyRecord::Tls(r) => (
            "tls",
            &r.implementation,
            vec![
                // A tls record's label is its suite (or mix): a renamed side is paired by
                // the name it is given.
                ("suite", text(label.unwrap_or(&r.suite))),
                ("content", text(&r.content)),
                ("file_size", KeyValue::Num(r.file_size)),
                ("concurrency", KeyValue::Num(r.concurrency as u64)),
                ("handshake", text(&r.handshake.to_string())),
            ],
        ),
        AnyRecord::Vpn(r) => (
            "vpn",
            &r.implementation,
            vec![
                ("tunnel", text(&r.tunnel)),
                ("cipher", text(&r.cipher)),
                ("protocol", text(&r.protocol)),
                ("direction", text(&r.direction)),
                ("streams", KeyValue::Num(r.streams as u64)),
            ],
        ),
    };
    Identity {
        workload: workload.into(),
        label: label.unwrap_or(own).to_string(),
        keys: keys.into_iter().collect(),
    }
}

/// The label a record is selected by with `--a`/`--b`.
pub fn label_of(rec: &AnyRecord) -> &str {
    match rec {
        AnyRecord::Speed(r) => &r.label,
        AnyRecord::Tls(r) => &r.label,
        AnyRecord::Vpn(r) => &r.implementation,
    }
}
