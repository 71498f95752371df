//! `report --format json`: one document, written as it is serialized. Records go straight
//! from their types to the output (no serde_json::Value per record, no whole-document
//! string), so memory stays that of the records read. Keys keep the order the document
//! has always had (sorted, as a serde_json map sorts them).

use crate::record::read::{Loaded, Run};
use crate::record::{Exclusion, SCHEMA};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Map, Value};
use std::io::Write;

/// Every record of every run, in file order.
struct Records<'a>(&'a Loaded);

impl Serialize for Records<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.runs.iter().flat_map(|r| &r.records))
    }
}

/// One run's entry of `runs`: what it says about itself and its analysis.
struct RunEntry<'a> {
    run: &'a Run,
    analysis: &'a Map<String, Value>,
}

impl Serialize for RunEntry<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (run, end) = (self.run, self.run.end.as_ref());
        let none: &[crate::record::Unavailable] = &[];
        let mut m = s.serialize_map(Some(8))?;
        m.serialize_entry("analysis", self.analysis)?;
        m.serialize_entry("environment", &run.environment)?;
        m.serialize_entry(
            "exclusions",
            end.map(|e| e.exclusions.as_slice()).unwrap_or(&[]),
        )?;
        m.serialize_entry("finished", &end.is_some())?;
        m.serialize_entry("interrupted", &end.map(|e| e.interrupted))?;
        m.serialize_entry("records", &run.records.len())?;
        m.serialize_entry("run_id", &run.run_id)?;
        m.serialize_entry(
            "unavailable",
            end.map(|e| e.unavailable.as_slice()).unwrap_or(none),
        )?;
        m.end()
    }
}

struct Runs<'a>(&'a [(&'a Run, Map<String, Value>)]);

impl Serialize for Runs<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(
            self.0
                .iter()
                .map(|(run, analysis)| RunEntry { run, analysis }),
        )
    }
}

/// The document: `runs` lists every run with its own environment and analysis; with one
/// run, its environment and analysis are also at the top level (the shape `--format json`
/// has always had). Absent values are left out at the top level.
struct Document<'a> {
    doc: &'a Loaded,
    runs: &'a [(&'a Run, Map<String, Value>)],
}

impl Serialize for Document<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let doc = self.doc;
        let one = (self.runs.len() == 1).then(|| &self.runs[0]);
        let analysis = match one {
            Some((_, a)) if a.len() == 1 => a.values().next().cloned(),
            Some((_, a)) => Some(Value::Object(a.clone())),
            None => None,
        };
        let exclusions: Vec<&Exclusion> = doc
            .runs
            .iter()
            .flat_map(|r| r.end.iter().flat_map(|e| &e.exclusions))
            .collect();
        let unavailable: Vec<&crate::record::Unavailable> = doc
            .runs
            .iter()
            .flat_map(|r| r.end.iter().flat_map(|e| &e.unavailable))
            .collect();
        let skipped: Vec<Value> = doc
            .skipped
            .iter()
            .map(|s| json!({"file": s.file.to_string_lossy(), "line": s.line, "reason": s.reason}))
            .collect();
        let mut m = s.serialize_map(None)?;
        if let Some(a) = analysis.filter(|a| !a.is_null()) {
            m.serialize_entry("analysis", &a)?;
        }
        if let Some(e) = one.and_then(|(r, _)| r.environment.as_ref()) {
            m.serialize_entry("environment", e)?;
        }
        m.serialize_entry("exclusions", &exclusions)?;
        m.serialize_entry(
            "interrupted",
            &doc.runs
                .iter()
                .any(|r| r.end.as_ref().is_some_and(|e| e.interrupted)),
        )?;
        m.serialize_entry("records", &Records(doc))?;
        m.serialize_entry("runs", &Runs(self.runs))?;
        m.serialize_entry("schema", &SCHEMA)?;
        m.serialize_entry("skipped_lines", &skipped)?;
        m.serialize_entry("unavailable", &unavailable)?;
        m.end()
    }
}

/// Writes the document (pretty, with a final newline) to `out`.
pub fn write(
    doc: &Loaded,
    runs: &[(&Run, Map<String, Value>)],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::with_capacity(1 << 16, out);
    Document { doc, runs }
        .serialize(&mut serde_json::Serializer::pretty(&mut w))
        .map_err(std::io::Error::other)?;
    w.write_all(b"\n")?;
    w.flush()
}
