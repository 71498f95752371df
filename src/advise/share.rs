//! `advise --share`: one canonical row of the box (device, CPU, OS, kernel, cryptobench
//! version and the headline figures with their intervals and limits), and `--compare`'s
//! reading of other boxes' rows. The row is built from named facts only, never from the
//! run's environment (which has the host name); a field that holds the host name or the
//! user's name anyway is withheld.

use crate::analyse::advise::Figure;
use crate::failure::Failure;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The shared row. Field names are a contract (docs/advise.md): add, never rename.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
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

/// `--share FILE`, checked before anything runs: a regular file or a new name in an
/// existing directory; never a link (not followed, even dangling), a device, a FIFO or a
/// file of /proc or /sys. A temp file is made and removed beside it: the directory takes one.
pub fn check_writable(p: &Path) -> Result<(), Failure> {
    let shown = crate::units::shown_path(p);
    let bad = |why: &str, fix: &str| Failure::Input(format!("--share {shown}: {why}: {fix}"));
    // "new/" would pass as a new name, and only the rename at the end would fail.
    if p.file_name().is_none() || p.as_os_str().as_encoded_bytes().ends_with(b"/") {
        return Err(bad("names a directory", "give a file path"));
    }
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.is_symlink() => {
            return Err(bad(
                "a symbolic link (never followed)",
                "give the path of the file itself",
            ))
        }
        Ok(m) if m.is_dir() => return Err(bad("a directory", "give a file path")),
        Ok(m) if !m.is_file() => {
            return Err(bad(
                "not a regular file (a device, FIFO or socket)",
                "give a file path",
            ))
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(bad(&e.to_string(), "give another path")),
    }
    let dir = dir_of(p);
    if !dir.is_dir() {
        return Err(bad(
            "its directory does not exist",
            "create it or give another path",
        ));
    }
    if crate::sys::on_kernel_fs(dir) {
        return Err(bad(
            "on /proc or /sys, the kernel's files",
            "give a path on a disk",
        ));
    }
    temp_beside(p).map_err(|e| {
        bad(
            &format!("cannot create a file in its directory ({e})"),
            "give a writable directory",
        )
    })?;
    Ok(())
}

fn dir_of(p: &Path) -> &Path {
    p.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// A new file beside `p` (removed when dropped), for the row to be renamed into place.
fn temp_beside(p: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    use std::os::unix::fs::PermissionsExt;
    tempfile::Builder::new()
        .prefix(".cryptobench-share-")
        .permissions(std::fs::Permissions::from_mode(0o644))
        .tempfile_in(dir_of(p))
}

/// Writes the row through a temp file beside `p` and a rename: `p` is the whole row or
/// as it was, and a link put at `p` meanwhile is replaced, never followed.
pub fn write(p: &Path, r: &Row) -> Result<(), Failure> {
    use std::io::Write;
    let text = serde_json::to_string_pretty(&document(r)).map_err(Failure::runtime)? + "\n";
    let failed = |e: std::io::Error| {
        Failure::Runtime(format!(
            "--share {}: cannot write: {e}; the report above still has the row",
            crate::units::shown_path(p)
        ))
    };
    let mut t = temp_beside(p).map_err(failed)?;
    t.write_all(text.as_bytes())
        .and_then(|()| t.as_file().sync_all())
        .map_err(failed)?;
    t.persist(p).map_err(|e| failed(e.error))?;
    Ok(())
}

/// The most a `--compare` file may hold: a row is under 100 KB, advise's whole JSON
/// (whose `share` is read) a few times that.
const COMPARE_MAX_BYTES: u64 = 1 << 20;

/// `--compare FILE...`: each a file `--share` wrote (or advise's JSON, whose `share` it
/// reads), a regular file under [`COMPARE_MAX_BYTES`].
pub fn read_rows(files: &[PathBuf]) -> Result<Vec<Row>, Failure> {
    files
        .iter()
        .map(|p| {
            let shown = crate::units::shown_path(p);
            let bad = |why: String| {
                Failure::Input(format!(
                    "--compare {shown}: {why}: give a file written by advise --share"
                ))
            };
            let text = crate::sys::read_regular(p, COMPARE_MAX_BYTES)
                .map_err(|e| bad(format!("cannot read: {e}")))?;
            let v: Value =
                serde_json::from_str(&text).map_err(|e| bad(format!("not JSON ({e})")))?;
            let v = if v.get("share").is_some() {
                v["share"].clone()
            } else {
                v
            };
            row_of(&v).map_err(|why| bad(format!("not a shared row: {why}")))
        })
        .collect()
}

/// The row `v` holds, or which field is wrong and how.
fn row_of(v: &Value) -> Result<Row, String> {
    match v.get("kind") {
        Some(k) if *k == KIND => {}
        Some(k) => {
            let k = crate::units::shown(&k.to_string());
            return Err(format!("field kind is {k}, not \"{KIND}\""));
        }
        None => return Err("no field kind".into()),
    }
    let e = match serde_json::from_value::<Row>(v.clone()) {
        Ok(r) => return Ok(r),
        Err(e) => e,
    };
    // A field given with a wrong value breaks a good row when put in it (serde names
    // a missing field itself, and only once no value is wrong).
    let good = serde_json::to_value(Row::default()).unwrap_or_default();
    let field = v.as_object().into_iter().flatten().find_map(|(k, x)| {
        let mut t = good.clone();
        *t.get_mut(k)? = x.clone();
        serde_json::from_value::<Row>(t).is_err().then_some(k)
    });
    let e = crate::units::shown(&e.to_string());
    Err(match field {
        Some(f) => format!("field {f}: {e}"),
        None => e,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Not a row: the error names the field with a wrong value first, else the missing one.
    #[test]
    fn a_row_that_is_not_one_names_its_wrong_field() {
        let row = Row {
            kind: KIND.into(),
            ..Row::default()
        };
        let mut v = serde_json::to_value(row).unwrap();
        assert!(row_of(&v).is_ok());
        v.as_object_mut().unwrap().remove("arch");
        let e = row_of(&v).unwrap_err();
        assert_eq!(e, "missing field `arch`");
        v["cores"] = "four".into();
        let e = row_of(&v).unwrap_err();
        assert!(e.starts_with("field cores: invalid type"), "{e}");
        v["kind"] = "record".into();
        let e = row_of(&v).unwrap_err();
        assert!(e.starts_with("field kind is \"record\""), "{e}");
    }

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
