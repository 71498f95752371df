//! JSON. A command's document is one value. A report's is written run by run as the runs
//! are read: records go straight from their types to the output (no serde_json::Value
//! per record, no whole-document string), and only the run at hand is held: each run's
//! entry of `runs` waits in an unlinked temporary file until every record is written, and
//! what needs every run (the single run's analysis and environment, exclusions, skipped
//! lines) comes last.

use super::Document;
use crate::record::environment::{written_as, KernelCryptoText};
use crate::record::read::Run;
use crate::record::{Exclusion, Unavailable, SCHEMA};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::io::{Seek, Write};
use std::sync::Arc;

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

/// JSON: a command's one value, or the report's layout, written run by run.
pub struct Json<'a> {
    out: &'a mut dyn Write,
    value: bool,
    /// The report's runs' entries, from its first run on.
    spool: Option<std::io::BufWriter<std::fs::File>>,
    /// What the report's end says of all its runs.
    r: Runs,
    /// The run at hand's records, rendered.
    text: Vec<u8>,
    /// The last few distinct `kernel_crypto` values, rendered where a run's entry has them.
    kernel_crypto: Vec<KernelCryptoText>,
}

/// How deep `runs`' entries are written, and the `kernel_crypto` in their environments.
const ENTRY_DEPTH: usize = 2;
const KERNEL_CRYPTO_DEPTH: usize = ENTRY_DEPTH + 2;
/// Distinct `kernel_crypto` values kept rendered: a few machines, and the reader's threads.
const KERNEL_CRYPTO_KEPT: usize = 8;

#[derive(Default)]
struct Runs {
    records: usize,
    runs: usize,
    exclusions: Vec<Exclusion>,
    unavailable: Vec<Unavailable>,
    interrupted: bool,
    only: Option<(Option<crate::record::Environment>, Map<String, Value>)>,
}

impl Json<'_> {
    /// A whole document: `v`, pretty, with a final newline.
    pub fn value<T: Serialize + ?Sized>(&mut self, v: &T) -> anyhow::Result<()> {
        serde_json::to_writer_pretty(&mut *self.out, v)?;
        self.out.write_all(b"\n")?;
        self.value = true;
        Ok(())
    }

    /// The report's spool: made, and the document opened, at its first run.
    fn spool(&mut self) -> anyhow::Result<&mut std::io::BufWriter<std::fs::File>> {
        if self.spool.is_none() {
            self.out.write_all(b"{\n  \"records\": [")?;
            let file = tempfile::tempfile()?;
            self.spool = Some(std::io::BufWriter::with_capacity(1 << 16, file));
        }
        Ok(self.spool.as_mut().expect("made above"))
    }

    /// One run of the report, with its analysis: its records now, its entry of `runs`
    /// after every record.
    pub fn run(&mut self, run: &Run, analysis: Map<String, Value>) -> anyhow::Result<()> {
        let first = self.r.runs == 0;
        self.spool()?;
        let spool = self.spool.as_mut().expect("made above");
        spool.write_all(if first { b"\n    " } else { b",\n    " })?;
        let entry = RunEntry {
            run,
            analysis: &analysis,
        };
        write_entry(&mut self.kernel_crypto, &entry, spool)?;
        let r = &mut self.r;
        // The run's records rendered into memory, then written at once: serde's many small
        // writes go to a Vec, not each through `out`'s dynamic dispatch.
        let text = &mut self.text;
        text.clear();
        for rec in &run.records {
            let sep = if r.records == 0 { "\n    " } else { ",\n    " };
            text.extend_from_slice(sep.as_bytes());
            pretty_at(&mut *text, ENTRY_DEPTH, rec)?;
            r.records += 1;
        }
        self.out.write_all(text)?;
        if let Some(end) = &run.end {
            r.exclusions.extend(end.exclusions.iter().cloned());
            r.unavailable.extend(end.unavailable.iter().cloned());
            r.interrupted |= end.interrupted;
        }
        r.only = first.then(|| (run.environment.clone(), analysis));
        r.runs += 1;
        Ok(())
    }
}

/// A run's entry of `runs`, its environment's `kernel_crypto` written from its text in
/// `rendered` (rendered there first when new).
fn write_entry(
    rendered: &mut Vec<KernelCryptoText>,
    entry: &RunEntry,
    out: impl Write,
) -> anyhow::Result<()> {
    if let Some(k) = entry.run.environment.as_ref().map(|e| &e.kernel_crypto) {
        if !rendered.iter().any(|(shared, _)| Arc::ptr_eq(shared, k)) {
            let mut text = Vec::new();
            pretty_at(&mut text, KERNEL_CRYPTO_DEPTH, &**k)?;
            let text = RawValue::from_string(String::from_utf8(text)?)?;
            if rendered.len() == KERNEL_CRYPTO_KEPT {
                rendered.remove(0);
            }
            rendered.push((Arc::clone(k), text));
        }
    }
    written_as(rendered, || pretty_at(out, ENTRY_DEPTH, entry))?;
    Ok(())
}

/// A command's one value, or the report's layout: the runs' entries, then what needs
/// every run (the single run's analysis and environment, exclusions, skipped lines).
pub fn write(doc: &mut dyn Document, whole: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut json = Json {
        out,
        value: false,
        spool: None,
        r: Runs::default(),
        text: Vec::new(),
        kernel_crypto: Vec::new(),
    };
    doc.parts(whole, &mut |part| part.json(&mut json))?;
    if json.value {
        return Ok(());
    }
    json.spool()?;
    let (out, spool, r) = (json.out, json.spool.take().expect("made"), json.r);
    out.write_all(if r.records == 0 { b"]" } else { b"\n  ]" })?;
    out.write_all(b",\n  \"runs\": [")?;
    let mut spooled = spool.into_inner().map_err(|e| e.into_error())?;
    spooled.rewind()?;
    std::io::copy(&mut spooled, &mut *out)?;
    out.write_all(if r.runs == 0 { b"]" } else { b"\n  ]" })?;
    // With one run, its analysis and environment are also at the top level (the shape
    // `--format json` has always had). Absent values are left out.
    let mut tail = Map::new();
    if let Some((environment, analysis)) = r.only {
        let analysis = match analysis.len() {
            1 => analysis.into_iter().next().map(|(_, a)| a),
            _ => Some(Value::Object(analysis)),
        };
        if let Some(a) = analysis.filter(|a| !a.is_null()) {
            tail.insert("analysis".into(), a);
        }
        if let Some(e) = environment {
            tail.insert("environment".into(), serde_json::to_value(e)?);
        }
    }
    tail.insert("exclusions".into(), serde_json::to_value(&r.exclusions)?);
    tail.insert("interrupted".into(), json!(r.interrupted));
    tail.insert("schema".into(), json!(SCHEMA));
    let skipped: Vec<Value> = doc
        .skipped()
        .iter()
        .map(|s| json!({"file": s.file.to_string_lossy(), "line": s.line, "reason": s.reason}))
        .collect();
    tail.insert("skipped_lines".into(), json!(skipped));
    // skipped_lines lists the first few; this counts them all.
    tail.insert("skipped_lines_total".into(), json!(doc.skipped().total()));
    tail.insert("unavailable".into(), serde_json::to_value(&r.unavailable)?);
    for (key, value) in &tail {
        write!(out, ",\n  {}: ", Value::String(key.clone()))?;
        pretty_at(&mut *out, 1, value)?;
    }
    out.write_all(b"\n}\n")?;
    Ok(())
}

/// `value` pretty-printed `depth` levels in, straight into `out`.
fn pretty_at<W: Write>(out: W, depth: usize, value: &impl Serialize) -> std::io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(
        out,
        PrettyAt {
            depth,
            has_value: false,
        },
    );
    value.serialize(&mut ser).map_err(std::io::Error::other)
}

/// serde_json's `PrettyFormatter` (two spaces a level), starting `depth` levels in: a
/// value written inside a document that is itself written piece by piece.
struct PrettyAt {
    depth: usize,
    has_value: bool,
}

impl PrettyAt {
    fn open<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> std::io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(bracket)
    }
    fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> std::io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            self.newline(w, true)?;
        }
        w.write_all(bracket)
    }
    /// One write per line break: a write per level of indentation was most of the time
    /// `report --format json` spent beyond reading (100,000 records are 7 million lines).
    fn newline<W: ?Sized + Write>(&self, w: &mut W, first: bool) -> std::io::Result<()> {
        const BREAK: &[u8; 66] =
            b",\n                                                                ";
        let from = if first { 1 } else { 0 };
        match BREAK.get(from..2 + 2 * self.depth) {
            Some(line) => w.write_all(line),
            None => {
                w.write_all(&BREAK[from..2])?;
                (0..self.depth).try_for_each(|_| w.write_all(b"  "))
            }
        }
    }
}

impl serde_json::ser::Formatter for PrettyAt {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"[")
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"]")
    }
    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.newline(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"{")
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"}")
    }
    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.newline(w, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::read::{parse_line, Line};

    fn run(id: &str) -> Run {
        let line = format!(
            r#"{{"kind":"environment","schema":2,"run_id":"{id}","cryptobench_version":"0.1.0","started_unix":1,"command_line":["cryptobench","speed"],"hostname":"h","kernel":"6.1","kernel_crypto":{{"release":"6.1","af_alg":{{"aead":{{"usable":false,"reason":"no"}}}},"proc_crypto":[{{"name":"gcm(aes)","chosen":"gcm-aesni","drivers":[{{"name":"gcm(aes)","driver":"gcm-aesni","priority":400}},{{"name":"gcm(aes)","driver":"gcm-generic","priority":100}}]}}]}}}}"#
        );
        let Line::Environment(env) = parse_line(&line).unwrap() else {
            panic!("not an environment")
        };
        Run {
            run_id: id.into(),
            environment: Some(*env),
            ..Run::default()
        }
    }

    /// Runs of one machine share their `kernel_crypto` (read once); each run's entry is
    /// written from its text rendered once, and must be byte for byte what serializing
    /// the entry writes (the text rendered at the depth it lands at).
    #[test]
    fn a_shared_kernel_crypto_is_written_as_serializing_writes_it() {
        let (a, b) = (run("r1"), run("r2"));
        let shared = |r: &Run| Arc::clone(&r.environment.as_ref().unwrap().kernel_crypto);
        assert!(Arc::ptr_eq(&shared(&a), &shared(&b)), "read once, shared");
        let analysis = Map::new();
        let mut rendered = Vec::new();
        for r in [&a, &b] {
            let entry = RunEntry {
                run: r,
                analysis: &analysis,
            };
            let (mut plain, mut lent) = (Vec::new(), Vec::new());
            pretty_at(&mut plain, ENTRY_DEPTH, &entry).unwrap();
            write_entry(&mut rendered, &entry, &mut lent).unwrap();
            assert_eq!(
                String::from_utf8(lent).unwrap(),
                String::from_utf8(plain).unwrap()
            );
        }
        assert_eq!(rendered.len(), 1, "one text for both runs");
    }
}
