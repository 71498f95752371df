//! One line of a results file parsed: an environment, a run's end or a record of a known
//! workload, any schema up to ours (schema 1 upgraded), over-long strings cut, and each
//! record checked for values no measurement can produce.

use super::strict;
use crate::record::any::{AnyRecord, Workload};
use crate::record::end::RunEnd;
use crate::record::envelope::SCHEMA;
use crate::record::environment::Environment;
use anyhow::anyhow;
use serde_json::{json, Map, Value};

pub enum Line {
    Environment(Box<Environment>),
    End(Box<RunEnd>),
    Record(Box<AnyRecord>),
}

/// One JSON Lines line: an environment or a record of a known workload, any schema up to
/// ours. Records are checked for values no measurement can produce.
pub fn parse_line(text: &str) -> anyhow::Result<Line> {
    // A schema-2 record as this version writes it (nearly every line of a big file) goes
    // straight from text to its type: a serde_json::Value first made reading the main
    // cost of `report`. The guess from the line's start is checked by the typed parse and
    // the workload it finds; anything else takes the general path.
    // A line with an over-long string takes the general path, which cuts it.
    let long = has_long_string(text);
    if let Some(mut rec) = typed_record(text).filter(|_| !long) {
        upgrade(&mut rec);
        check(&rec)?;
        return Ok(Line::Record(Box::new(rec)));
    }
    // An environment (about 11 KB, most of it the kernel's crypto list) too: through a
    // Value it was a third of reading a file of many short runs.
    if !long && text.starts_with("{\"kind\":\"environment\"") {
        if let Ok(env) = serde_json::from_str::<Environment>(text) {
            if env.schema <= SCHEMA {
                return Ok(Line::Environment(Box::new(env)));
            }
        }
    }
    let mut v = strict::from_str(text).map_err(|e| anyhow!("not JSON: {e}"))?;
    if long {
        cut_long_strings(&mut v);
    }
    let schema = v.get("schema").and_then(Value::as_u64).unwrap_or(1);
    if schema > SCHEMA as u64 {
        return Err(anyhow!(
            "schema {schema} is newer than this cryptobench reads ({SCHEMA}): upgrade cryptobench"
        ));
    }
    match v.get("kind").and_then(Value::as_str) {
        Some("environment") => serde_json::from_value(v)
            .map(|e| Line::Environment(Box::new(e)))
            .map_err(|e| anyhow!("environment: {e}")),
        Some("end") => serde_json::from_value(v)
            .map(|e| Line::End(Box::new(e)))
            .map_err(|e| anyhow!("end of run: {e}")),
        Some("record") => {
            if schema < 2 {
                upgrade_v1(&mut v)?;
            }
            let workload = v.get("workload").and_then(Value::as_str).unwrap_or("");
            let Some(workload) = Workload::ALL.iter().find(|w| w.name() == workload) else {
                return Err(anyhow!("unknown workload {workload:?}"));
            };
            let mut rec =
                AnyRecord::from_value(*workload, v).map_err(|e| anyhow!("record: {e}"))?;
            upgrade(&mut rec);
            check(&rec)?;
            Ok(Line::Record(Box::new(rec)))
        }
        _ => Err(anyhow!("neither an environment nor a record")),
    }
}

fn typed_record(text: &str) -> Option<AnyRecord> {
    let head = text.strip_prefix("{\"kind\":\"record\",\"schema\":2,")?;
    let head = head.get(..head.len().min(200)).unwrap_or(head);
    let name = &head[head.find("\"workload\":\"")? + "\"workload\":\"".len()..];
    let name = &name[..name.find('"')?];
    let workload = Workload::ALL.iter().find(|w| w.name() == name)?;
    let rec = AnyRecord::from_text(*workload, text).ok()?;
    (rec.workload() == *workload).then_some(rec)
}

/// The longest string a record keeps, in characters: a run writes evidence lines and
/// notes of a few hundred; a longer one (a hand-made or damaged record) is cut, so that
/// no view prints 100,000 characters in one cell.
pub const STRING_MAX: usize = 4096;

/// Whether a JSON text holds a string (or key) of more than STRING_MAX bytes: one pass
/// over the bytes, escapes skipped, so that the typed fast path need not look inside.
fn has_long_string(text: &str) -> bool {
    if text.len() <= STRING_MAX {
        return false;
    }
    let (mut start, mut escaped) = (None::<usize>, false);
    for (i, b) in text.bytes().enumerate() {
        match start {
            None if b == b'"' => start = Some(i),
            None => {}
            Some(_) if escaped => escaped = false,
            Some(_) if b == b'\\' => escaped = true,
            Some(s) if b == b'"' => {
                if i - s - 1 > STRING_MAX {
                    return true;
                }
                start = None;
            }
            Some(_) => {}
        }
    }
    false
}

/// Cuts every string value over STRING_MAX characters, saying how long it was.
fn cut_long_strings(v: &mut Value) {
    match v {
        Value::String(s) if s.chars().count() > STRING_MAX => {
            let head: String = s.chars().take(STRING_MAX).collect();
            *s = format!("{head}... (cut on read: {} bytes)", s.len());
        }
        Value::Array(items) => items.iter_mut().for_each(cut_long_strings),
        Value::Object(fields) => fields.values_mut().for_each(cut_long_strings),
        _ => {}
    }
}

/// What changed within schema 2, read as this version writes it.
fn upgrade(rec: &mut AnyRecord) {
    if let AnyRecord::Disk(r) = rec {
        crate::record::disk::upgrade_others(r);
    }
}

/// Values that no run can produce: a record holding them is damaged or hand-made.
fn check(rec: &AnyRecord) -> anyhow::Result<()> {
    rec.check()?;
    let (bps, ci, others) = (
        rec.throughput_bps(),
        rec.throughput_bps_ci(),
        rec.others_cpu_pct(),
    );
    // 100 TB/s: beyond any machine's memory bandwidth.
    let rate = |x: f64| x > 0.0 && x < 1e14;
    // Null (NaN) where bytes do not apply: public-key operations, checked by speed.
    if bps.is_nan() && rec.workload() != Workload::Speed || !bps.is_nan() && !rate(bps) {
        return Err(anyhow!(
            "invalid record: throughput_bps not in (0, 1e14) bytes/s"
        ));
    }
    if let Some([lo, hi]) = ci {
        if !(lo >= 0.0 && lo <= hi && hi.is_finite()) {
            return Err(anyhow!("invalid record: an inverted or negative interval"));
        }
        let slack = 1e-9 * hi;
        if bps < lo - slack || bps > hi + slack {
            return Err(anyhow!(
                "invalid record: throughput_bps outside its interval"
            ));
        }
    }
    if rec.samples_bps().iter().any(|&x| !(0.0..1e14).contains(&x)) {
        return Err(anyhow!(
            "invalid record: a samples_bps value not in [0, 1e14)"
        ));
    }
    let time = |x: f64| x.is_finite() && x >= 0.0;
    if !time(rec.wall_s()) || !rec.cpu_s().iter().flatten().all(|&x| time(x)) {
        return Err(anyhow!(
            "invalid record: a negative or infinite wall or CPU time"
        ));
    }
    if others.is_some_and(|x| !crate::record::envelope::PERCENT.contains(&x)) {
        return Err(anyhow!("invalid record: others_cpu_pct outside 0-100"));
    }
    Ok(())
}

/// Schema 1 (issues 2-5) to schema 2: the shared envelope's fields, with the workloads'
/// old names mapped onto them. Nothing measured is invented: a value schema 1 did not
/// have becomes null, or is derived from fields it did have.
pub(super) fn upgrade_v1(v: &mut Value) -> anyhow::Result<()> {
    let o = v
        .as_object_mut()
        .ok_or_else(|| anyhow!("a record must be a JSON object"))?;
    o.insert("schema".into(), json!(SCHEMA));
    let workload = o
        .get("workload")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let num = |o: &Map<String, Value>, k: &str| o.get(k).and_then(Value::as_f64);
    // Schema 1 could compute others_cpu_pct over 100 (a bug): keep the record, say so.
    if let Some(others) = num(o, "others_cpu_pct").filter(|x| *x > 100.0) {
        o.insert("others_cpu_pct".into(), json!(100.0));
        if let Some(Value::Array(notes)) = o.get_mut("notes") {
            notes.push(json!(format!(
                "others_cpu_pct was {others:.0} in this schema-1 record (over 100%, a bug of that version): shown as 100"
            )));
        }
    }
    match workload.as_str() {
        "speed" => {
            let label = match o.get("variant").and_then(Value::as_str) {
                Some(var) => format!("{} [{var}]", str_of(o, "impl")),
                None => str_of(o, "impl"),
            };
            o.entry("label").or_insert(json!(label));
            let disturbed = o
                .get("disturbed_trials")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                > 0;
            o.entry("disturbed").or_insert(json!(disturbed));
        }
        "tls" => {
            o.insert("impl".into(), json!("nginx"));
            o.entry("impl_version").or_insert(json!(""));
            o.entry("variant").or_insert(Value::Null);
            let label = str_of(o, "suite");
            o.insert("label".into(), json!(label));
            rename(o, "server_cpu_user_s", "cpu_user_s");
            rename(o, "server_cpu_sys_s", "cpu_sys_s");
            let bps = num(o, "throughput_bps");
            o.insert(
                "samples_bps".into(),
                json!(bps.into_iter().collect::<Vec<_>>()),
            );
            o.insert("throughput_bps_ci".into(), Value::Null);
        }
        "vpn" => {
            rename(o, "implementation", "impl_version");
            let tunnel = str_of(o, "tunnel");
            o.insert("impl".into(), json!(tunnel));
            o.entry("variant").or_insert(Value::Null);
            let label = crate::record::vpn::label(
                &tunnel,
                &str_of(o, "cipher"),
                o.get("auth").and_then(Value::as_str),
            );
            o.insert("label".into(), json!(label));
            rename(o, "tunnel_cpu_user_s", "cpu_user_s");
            rename(o, "tunnel_cpu_sys_s", "cpu_sys_s");
            rename(o, "tunnel_cpu_s_per_gb", "cpu_s_per_gb");
            let bps = num(o, "throughput_bps");
            o.insert(
                "samples_bps".into(),
                json!(bps.into_iter().collect::<Vec<_>>()),
            );
            o.insert("throughput_bps_ci".into(), Value::Null);
            let disturbed =
                crate::record::window::disturbed(num(o, "others_cpu_pct").unwrap_or(0.0));
            o.entry("disturbed").or_insert(json!(disturbed));
            let wall = num(o, "transfer_s").unwrap_or(0.0);
            o.entry("wall_s").or_insert(json!(wall));
        }
        other => return Err(anyhow!("unknown workload {other:?}")),
    }
    Ok(())
}

fn str_of(o: &Map<String, Value>, k: &str) -> String {
    o.get(k).and_then(Value::as_str).unwrap_or("").to_string()
}

fn rename(o: &mut Map<String, Value>, from: &str, to: &str) {
    if let Some(v) = o.remove(from) {
        o.insert(to.into(), v);
    }
}
