//! JSON. A command's document is one value. A report's is written run by run as the runs
//! are read: records go straight from their types to the output (no serde_json::Value
//! per record, no whole-document string), and only the run at hand is held: each run's
//! entry of `runs` waits in a spool (an unlinked temporary file, and the few `kernel_crypto`
//! texts its entries share) until every record is written, and what needs every run (the
//! single run's analysis and environment, exclusions, skipped lines) comes last.

use super::parts::Document;
use crate::record::environment::{written_as, KernelCryptoText};
use crate::record::read::Run;
use crate::record::{Exclusion, Unavailable, SCHEMA};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use std::io::{BufReader, BufWriter, Read, Seek, Write};
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
    spool: Option<Spool>,
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
/// Distinct `kernel_crypto` values kept rendered, and kept out of the spool: a few machines,
/// and the reader's threads.
const KERNEL_CRYPTO_KEPT: usize = 8;

/// The runs' entries, until every record is written. A machine's runs share one
/// `kernel_crypto` text (30 KB, most of an entry): the spool keeps the first few distinct
/// texts once, in memory, and only notes where each goes; the file holds the rest of the
/// entries, and the texts are put back in place when it is copied out. A year of short runs
/// wrote 180 MB through the file and read it back.
struct Spool {
    file: BufWriter<std::fs::File>,
    /// Bytes written into `file`.
    at: u64,
    /// Where in `file` each text left out goes, in order.
    splices: Vec<Splice>,
    /// The distinct texts left out.
    kept: Vec<Arc<RawValue>>,
}

impl Spool {
    fn new() -> std::io::Result<Spool> {
        Ok(Spool {
            file: BufWriter::with_capacity(1 << 16, tempfile::tempfile()?),
            at: 0,
            splices: Vec::new(),
            kept: Vec::new(),
        })
    }

    /// A writer into the spool that leaves `text` out wherever it is written whole, if
    /// the spool keeps it.
    fn leaving_out(&mut self, text: Option<&Arc<RawValue>>) -> SpoolWriter<'_> {
        let text = text.filter(|t| self.keeps(t)).cloned();
        SpoolWriter { text, spool: self }
    }

    /// Whether `text` is one of the kept texts, made one while there is room.
    fn keeps(&mut self, text: &Arc<RawValue>) -> bool {
        if self.kept.iter().any(|k| Arc::ptr_eq(k, text)) {
            return true;
        }
        if self.kept.len() == KERNEL_CRYPTO_KEPT {
            return false;
        }
        self.kept.push(Arc::clone(text));
        true
    }

    /// Everything written, texts back in place.
    fn copy_to(self, out: &mut dyn Write) -> anyhow::Result<()> {
        let mut file = self.file.into_inner().map_err(|e| e.into_error())?;
        file.rewind()?;
        let mut file = BufReader::with_capacity(1 << 16, file);
        let mut from = 0;
        for (at, text) in &self.splices {
            std::io::copy(&mut (&mut file).take(at - from), &mut *out)?;
            out.write_all(text.get().as_bytes())?;
            from = *at;
        }
        std::io::copy(&mut file, out)?;
        Ok(())
    }
}

/// A text left out of the spool's file, and where in the file it goes.
type Splice = (u64, Arc<RawValue>);

/// The spool as an entry's writer. serde_json writes a raw value's text in one piece, from
/// where it is held: that piece is noted, not written.
struct SpoolWriter<'a> {
    spool: &'a mut Spool,
    text: Option<Arc<RawValue>>,
}

impl Write for SpoolWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let spool = &mut *self.spool;
        match &self.text {
            Some(t) if std::ptr::eq(t.get().as_bytes(), buf) => {
                spool.splices.push((spool.at, Arc::clone(t)));
                Ok(buf.len())
            }
            _ => {
                let n = spool.file.write(buf)?;
                spool.at += n as u64;
                Ok(n)
            }
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.spool.file.flush()
    }
}

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
    fn spool(&mut self) -> anyhow::Result<&mut Spool> {
        if self.spool.is_none() {
            self.out.write_all(b"{\n  \"records\": [")?;
            self.spool = Some(Spool::new()?);
        }
        Ok(self.spool.as_mut().expect("made above"))
    }

    /// One run of the report, with its analysis: its records now, its entry of `runs`
    /// after every record.
    pub fn run(&mut self, run: &Run, analysis: Map<String, Value>) -> anyhow::Result<()> {
        let first = self.r.runs == 0;
        self.spool()?;
        let spool = self.spool.as_mut().expect("made above");
        spool
            .leaving_out(None)
            .write_all(if first { b"\n    " } else { b",\n    " })?;
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

/// A run's entry of `runs` into the spool, its environment's `kernel_crypto` written from
/// its text in `rendered` (rendered there first when new), or left for the spool to put in.
fn write_entry(
    rendered: &mut Vec<KernelCryptoText>,
    entry: &RunEntry,
    spool: &mut Spool,
) -> anyhow::Result<()> {
    let mut text = None;
    if let Some(k) = entry.run.environment.as_ref().map(|e| &e.kernel_crypto) {
        let at = match rendered
            .iter()
            .position(|(shared, _)| Arc::ptr_eq(shared, k))
        {
            Some(at) => at,
            None => {
                let mut text = Vec::new();
                pretty_at(&mut text, KERNEL_CRYPTO_DEPTH, &**k)?;
                let text = RawValue::from_string(String::from_utf8(text)?)?;
                if rendered.len() == KERNEL_CRYPTO_KEPT {
                    rendered.remove(0);
                }
                rendered.push((Arc::clone(k), text.into()));
                rendered.len() - 1
            }
        };
        text = Some(Arc::clone(&rendered[at].1));
    }
    let out = spool.leaving_out(text.as_ref());
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
    spool.copy_to(&mut *out)?;
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

    /// A run on a machine whose kernel is `release`.
    fn run(id: &str, release: &str) -> Run {
        let line = format!(
            r#"{{"kind":"environment","schema":2,"run_id":"{id}","cryptobench_version":"0.1.0","started_unix":1,"command_line":["cryptobench","speed"],"hostname":"h","kernel":"{release}","kernel_crypto":{{"release":"{release}","af_alg":{{"aead":{{"usable":false,"reason":"no"}}}},"proc_crypto":[{{"name":"gcm(aes)","chosen":"gcm-aesni","drivers":[{{"name":"gcm(aes)","driver":"gcm-aesni","priority":400}},{{"name":"gcm(aes)","driver":"gcm-generic","priority":100}}]}}]}}}}"#
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

    /// `runs` through the spool and copied out, as serializing every entry writes them,
    /// and the spool's texts left out of its file and the bytes written into it.
    fn spooled_and_plain(runs: &[Run]) -> (Vec<u8>, Vec<u8>, Vec<Splice>, u64) {
        let analysis = Map::new();
        let (mut rendered, mut spool) = (Vec::new(), Spool::new().unwrap());
        let mut plain = Vec::new();
        for r in runs {
            let entry = RunEntry {
                run: r,
                analysis: &analysis,
            };
            pretty_at(&mut plain, ENTRY_DEPTH, &entry).unwrap();
            write_entry(&mut rendered, &entry, &mut spool).unwrap();
        }
        let (left_out, at) = (spool.splices.clone(), spool.at);
        let mut out = Vec::new();
        spool.copy_to(&mut out).unwrap();
        (out, plain, left_out, at)
    }

    /// Runs of one machine share their `kernel_crypto` (read once): its text is rendered
    /// once, kept out of the spool's file, and put back in place byte for byte as
    /// serializing each entry writes it (the text rendered at the depth it lands at).
    #[test]
    fn a_shared_kernel_crypto_is_written_as_serializing_writes_it() {
        let runs = [run("r1", "6.1"), run("r2", "6.1")];
        let shared = |r: &Run| Arc::clone(&r.environment.as_ref().unwrap().kernel_crypto);
        assert!(
            Arc::ptr_eq(&shared(&runs[0]), &shared(&runs[1])),
            "read once, shared"
        );
        let (out, plain, left_out, at) = spooled_and_plain(&runs);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            String::from_utf8(plain.clone()).unwrap()
        );
        assert_eq!(left_out.len(), 2, "left out of the file in both entries");
        assert!(Arc::ptr_eq(&left_out[0].1, &left_out[1].1), "one text");
        let text = left_out[0].1.get().len();
        assert_eq!(
            at as usize,
            plain.len() - 2 * text,
            "the file holds the rest"
        );
    }

    /// Past the few texts the spool keeps in memory (a file of many machines), the others'
    /// go through the file, and the output is still what serializing writes.
    #[test]
    fn texts_beyond_the_kept_few_go_through_the_file() {
        let runs: Vec<Run> = (0..KERNEL_CRYPTO_KEPT + 3)
            .flat_map(|k| [run("a", &format!("6.{k}")), run("b", &format!("6.{k}"))])
            .collect();
        let (out, plain, left_out, _) = spooled_and_plain(&runs);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            String::from_utf8(plain).unwrap()
        );
        assert_eq!(
            left_out.len(),
            2 * KERNEL_CRYPTO_KEPT,
            "only the kept texts"
        );
    }
}
