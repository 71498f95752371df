//! `advise --share`: one canonical row of the box (device, CPU, OS, kernel, cryptobench
//! version and the headline figures with their intervals and limits), and `--compare`'s
//! reading of other boxes' rows. The row is built from named facts only, never from the
//! run's environment (which has the host name); a field that holds the host name or the
//! user's name anyway is withheld.

use crate::analyse::advise::Figure;
use crate::workloads::Failure;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The shared row. Field names are a contract (docs/advise.md): add, never rename.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Row {
    /// Always "cryptobench-advise-share".
    pub kind: String,
    pub schema: u32,
    pub device: String,
    pub cpu: String,
    pub cores: u64,
    pub arch: String,
    pub os: String,
    pub kernel: String,
    pub cryptobench: String,
    pub figures: Vec<Figure>,
}

const KIND: &str = "cryptobench-advise-share";

/// The box's row from its probe's facts (this machine's, or the DUT's) and the headline
/// figures, scrubbed of this host's name and user and of `secrets` (the DUT's).
pub fn row(facts: &Value, figures: &[Figure], secrets: &[String]) -> Row {
    let text = |v: &Value, none: &str| v.as_str().unwrap_or(none).to_string();
    let row = Row {
        kind: KIND.into(),
        schema: 1,
        device: text(&facts["host"]["device"], "unknown"),
        cpu: text(&facts["cpu"]["model"], "unknown"),
        cores: facts["cpu"]["logical_cpus"].as_u64().unwrap_or(0),
        arch: text(&facts["build"]["arch"], "unknown"),
        os: text(&facts["host"]["os"], "unknown"),
        kernel: text(&facts["kernel"]["release"], "?"),
        cryptobench: text(&facts["build"]["version"], "?"),
        figures: figures.to_vec(),
    };
    let mut secrets = secrets.to_vec();
    secrets.extend(
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|h| h.trim().to_string()),
    );
    for var in ["USER", "LOGNAME", "HOSTNAME"] {
        secrets.extend(std::env::var(var).ok());
    }
    scrub(row, &secrets)
}

/// Withholds every text field that contains one of `secrets` (case-insensitive; names
/// under 3 characters would withhold too much by accident and are not looked for).
pub fn scrub(mut row: Row, secrets: &[String]) -> Row {
    let secrets: Vec<String> = secrets
        .iter()
        .map(|s| s.trim().to_lowercase())
        .filter(|s| s.len() >= 3)
        .collect();
    let clean = |s: &mut String| {
        let low = s.to_lowercase();
        if secrets.iter().any(|x| low.contains(x.as_str())) {
            *s = "(withheld: it named this host or user)".into();
        }
    };
    for f in [
        &mut row.device,
        &mut row.cpu,
        &mut row.os,
        &mut row.kernel,
        &mut row.arch,
    ] {
        clean(f);
    }
    for f in &mut row.figures {
        clean(&mut f.what);
        clean(&mut f.path);
    }
    row
}

/// A figure as shown: "905 Mbit/s [880, 930] (cpus)".
pub fn figure_text(f: &Figure) -> String {
    let n = |x: f64| {
        if x >= 100.0 {
            format!("{x:.0}")
        } else {
            format!("{x:.1}")
        }
    };
    let ci =
        f.ci.map(|[l, h]| format!(" [{}, {}]", n(l), n(h)))
            .unwrap_or_default();
    let limit = f
        .limit
        .as_ref()
        .map(|l| format!(" ({l})"))
        .unwrap_or_default();
    format!("{} {}{ci}{limit}", n(f.value), f.unit)
}

/// The columns of a table of rows: the box's facts, then each headline figure any row has.
pub fn columns(rows: &[&Row]) -> Vec<String> {
    let mut cols: Vec<String> = ["device", "CPU", "cores", "OS", "kernel", "cryptobench"]
        .map(String::from)
        .to_vec();
    for r in rows {
        for f in &r.figures {
            if !cols.contains(&f.what) {
                cols.push(f.what.clone());
            }
        }
    }
    cols
}

/// A row's cells under `columns`.
pub fn cells(r: &Row, columns: &[String]) -> Vec<String> {
    let mut out = vec![
        r.device.clone(),
        r.cpu.clone(),
        r.cores.to_string(),
        r.os.clone(),
        r.kernel.clone(),
        r.cryptobench.clone(),
    ];
    for c in &columns[out.len()..] {
        out.push(
            r.figures
                .iter()
                .find(|f| &f.what == c)
                .map(|f| format!("{}: {}", f.path, figure_text(f)))
                .unwrap_or_else(|| "-".into()),
        );
    }
    out
}

/// The row as one Markdown table line (with its header line) for a forum post or a
/// table of devices.
pub fn markdown(r: &Row) -> (String, String) {
    let cols = columns(&[r]);
    let line = |cells: Vec<String>| {
        let cells: Vec<String> = cells.into_iter().map(|c| c.replace('|', "\\|")).collect();
        format!("| {} |", cells.join(" | "))
    };
    (line(cols.clone()), line(cells(r, &cols)))
}

/// The file written: the row, with its Markdown header and line.
pub fn document(r: &Row) -> Value {
    let (header, line) = markdown(r);
    let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
    v["markdown_header"] = header.into();
    v["markdown"] = line.into();
    v
}

pub fn check_writable(p: &Path) -> Result<(), Failure> {
    let shown = crate::units::shown_path(p);
    if p.is_dir() {
        return Err(Failure::Input(format!(
            "--share {shown}: a directory: give a file path"
        )));
    }
    let parent = p.parent().filter(|d| !d.as_os_str().is_empty());
    if parent.is_some_and(|d| !d.is_dir()) {
        return Err(Failure::Input(format!(
            "--share {shown}: its directory does not exist: create it or give another path"
        )));
    }
    Ok(())
}

pub fn write(p: &Path, r: &Row) -> Result<(), Failure> {
    let text = serde_json::to_string_pretty(&document(r)).map_err(Failure::runtime)?;
    std::fs::write(p, text + "\n").map_err(|e| {
        Failure::Runtime(format!(
            "--share {}: cannot write: {e}",
            crate::units::shown_path(p)
        ))
    })
}

/// `--compare FILE...`: each a file `--share` wrote (or advise's JSON, whose `share` it
/// reads).
pub fn read_rows(files: &[PathBuf]) -> Result<Vec<Row>, Failure> {
    files
        .iter()
        .map(|p| {
            let shown = crate::units::shown_path(p);
            let text = std::fs::read_to_string(p)
                .map_err(|e| Failure::Input(format!("--compare {shown}: cannot read: {e}")))?;
            let v: Value = serde_json::from_str(&text).map_err(|e| {
                Failure::Input(format!(
                    "--compare {shown}: not JSON ({e}): give a file written by advise --share"
                ))
            })?;
            let v = if v.get("share").is_some() {
                v["share"].clone()
            } else {
                v
            };
            serde_json::from_value::<Row>(v)
                .ok()
                .filter(|r| r.kind == KIND)
                .ok_or_else(|| {
                    Failure::Input(format!(
                        "--compare {shown}: not a shared row: give a file written by advise --share"
                    ))
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device model or figure path holding the host's name or the user's is withheld;
    /// the rest stays.
    #[test]
    fn a_field_naming_the_host_or_user_is_withheld() {
        let r = Row {
            kind: KIND.into(),
            schema: 1,
            device: "Secret-Host router".into(),
            cpu: "ARM Cortex-A53".into(),
            cores: 4,
            arch: "aarch64".into(),
            os: "OpenWrt 23.05".into(),
            kernel: "6.1.0-alice".into(),
            cryptobench: "0.1.0".into(),
            figures: Vec::new(),
        };
        let s = scrub(r, &["secret-host".into(), "alice".into(), "x".into()]);
        assert!(s.device.starts_with("(withheld") && s.kernel.starts_with("(withheld"));
        assert_eq!(
            (s.cpu.as_str(), s.os.as_str()),
            ("ARM Cortex-A53", "OpenWrt 23.05")
        );
        let text = serde_json::to_string(&document(&s)).unwrap().to_lowercase();
        assert!(
            !text.contains("secret-host") && !text.contains("alice"),
            "{text}"
        );
    }
}
