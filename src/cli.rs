//! What every subcommand shares on its command line: the common flags, and one parser for
//! comma lists (with binary units), so that every flag reports bad input the same way.

use crate::render::Format;
use std::path::{Path, PathBuf};

/// The flags every measuring workload has, flattened into each subcommand's args.
#[derive(clap::Args, Clone, Debug)]
pub struct CommonArgs {
    /// Output format on stdout (openssl: the `openssl speed` layout, speed only).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Append JSON Lines (the environment, then one record per point, flushed) to FILE.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Seconds measured per point [speed: 0.15; tls and vpn: 5].
    #[arg(allow_negative_numbers = true, long, visible_alias = "duration", value_name = "SECONDS", value_parser = seconds)]
    pub time: Option<f64>,
    /// Also keep the run in this store: sqlite:PATH or postgresql://USER@HOST/DB
    /// [default: $CRYPTOBENCH_STORE, else sqlite:$XDG_DATA_HOME/cryptobench/results.db].
    #[arg(long, value_name = "URL", conflicts_with = "no_store")]
    pub store: Option<String>,
    /// Keep the run in no store (only --output, if given).
    #[arg(long)]
    pub no_store: bool,
}

impl CommonArgs {
    /// Checks what can be checked before anything runs: the output path (nothing is
    /// created or touched) and that the format is offered by `workload`.
    pub fn check(&self, workload: &str) -> Result<(), String> {
        if self.format == Format::Openssl && workload != "speed" {
            return Err(format!(
                "--format openssl is the `openssl speed` layout, offered by speed only: for {workload} use table, markdown, csv or json"
            ));
        }
        if self.format == Format::Html {
            return Err(format!(
                "--format html is for saved records: run {workload} with --output FILE, then `cryptobench report FILE --format html`"
            ));
        }
        if let Some(p) = &self.output {
            crate::record::JsonLinesWriter::check(p)?;
        }
        self.store_url().map(|_| ())
    }

    /// The store this run writes to, if any (`--store`, `--no-store`, `CRYPTOBENCH_STORE`).
    pub fn store_url(&self) -> Result<Option<crate::store::StoreUrl>, String> {
        crate::store::StoreUrl::choose(self.store.as_deref(), self.no_store)
    }
}

/// `--direction`, spelled `--directions` before (kept as a hidden alias).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct DirectionArg {
    /// Directions, comma-separated [speed: enc,dec; vpn: up,down].
    #[arg(long = "direction", alias = "directions", value_name = "LIST")]
    pub direction: Option<String>,
}

/// Longest value echoed back in an error message.
const SHOWN_MAX: usize = 60;

/// A value as typed, shortened for an error message (a 100 KB value is not echoed whole).
pub fn shown(value: &str) -> String {
    let clean: String = value
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if clean.chars().count() <= SHOWN_MAX {
        return clean;
    }
    let head: String = clean.chars().take(SHOWN_MAX).collect();
    format!("{head}... ({} bytes)", value.len())
}

/// A path for a message: lossy where it is not UTF-8, shortened where it is long.
pub fn shown_path(path: &Path) -> String {
    shown(&path.to_string_lossy())
}

/// The items of a comma list, trimmed. Empty items are an error that names the flag.
pub fn items<'a>(list: &'a str, flag: &str, example: &str) -> Result<Vec<&'a str>, String> {
    let out: Vec<&str> = list.split(',').map(str::trim).collect();
    if out.iter().any(|s| s.is_empty()) {
        return Err(if list.trim().is_empty() {
            format!("{flag} is empty: give a comma list, e.g. {flag} {example}")
        } else {
            format!(
                "invalid {flag} '{}': an empty item; give a comma list, e.g. {flag} {example}",
                shown(list)
            )
        });
    }
    Ok(out)
}

/// A comma list of whole numbers in `range`, deduplicated and sorted.
pub fn counts(
    list: &str,
    flag: &str,
    range: std::ops::RangeInclusive<u64>,
    example: &str,
) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    for item in items(list, flag, example)? {
        let n = item
            .parse::<i128>()
            .ok()
            .filter(|n| *n >= *range.start() as i128 && *n <= *range.end() as i128)
            .ok_or_else(|| {
                format!(
                    "invalid {flag} '{}': give whole numbers from {} to {}, e.g. {flag} {example}",
                    shown(item),
                    range.start(),
                    range.end()
                )
            })?;
        out.push(n as u64);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// One byte count with an optional binary unit: 16, 1k, 1350, 64k, 1m, 1g (also kb, kib).
pub fn bytes(item: &str) -> Option<u64> {
    let t = item.trim().to_ascii_lowercase();
    let t = t
        .strip_suffix("ib")
        .or_else(|| t.strip_suffix('b'))
        .unwrap_or(&t);
    let (num, shift) = match t.chars().last()? {
        'k' => (&t[..t.len() - 1], 10),
        'm' => (&t[..t.len() - 1], 20),
        'g' => (&t[..t.len() - 1], 30),
        _ => (t, 0),
    };
    num.parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// A comma list of byte counts with units, in `range`, deduplicated and sorted.
pub fn byte_list(
    list: &str,
    flag: &str,
    range: std::ops::RangeInclusive<u64>,
    example: &str,
) -> Result<Vec<u64>, String> {
    let mut out = Vec::new();
    for item in items(list, flag, example)? {
        let n = bytes(item).filter(|n| range.contains(n)).ok_or_else(|| {
            format!(
                "invalid {flag} '{}': give bytes from {} to {} with an optional k, m or g suffix (binary), e.g. {flag} {example}",
                shown(item),
                crate::render::size_label(*range.start()),
                crate::render::size_label(*range.end()),
            )
        })?;
        out.push(n);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Seconds, as typed: a finite positive number. Each workload checks its own range.
fn seconds(s: &str) -> Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| format!("'{}' is not a positive number of seconds", shown(s)))
}

/// A range check on seconds with the value named as typed (never 310 digits).
pub fn check_seconds(v: f64, flag: &str, min: f64, max: f64) -> Result<f64, String> {
    if v.is_finite() && v >= min && v <= max {
        Ok(v)
    } else {
        let typed = if v.abs() >= 1e6 {
            format!("{v:e}")
        } else {
            format!("{v}")
        };
        Err(format!(
            "invalid {flag} {typed}: give seconds from {min} to {max}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_name_the_flag_and_the_item() {
        assert_eq!(
            counts("4, 1,2,2", "--threads", 1..=64, "1,2").unwrap(),
            [1, 2, 4]
        );
        let e = counts("1,-1", "--threads", 1..=64, "1,2").unwrap_err();
        assert!(e.contains("--threads '-1'") && e.contains("1 to 64"), "{e}");
        let e = counts("", "--streams", 1..=128, "1,4").unwrap_err();
        assert!(e.contains("--streams is empty"), "{e}");
        let e = counts("1,,2", "--streams", 1..=128, "1,4").unwrap_err();
        assert!(e.contains("empty item"), "{e}");
    }

    #[test]
    fn byte_units() {
        assert_eq!(bytes("16"), Some(16));
        assert_eq!(bytes("1k"), Some(1024));
        assert_eq!(bytes("64KiB"), Some(65536));
        assert_eq!(bytes("1m"), Some(1 << 20));
        assert_eq!(bytes("-16"), None);
        assert_eq!(bytes("k"), None);
        assert_eq!(
            byte_list("1k,16,1k", "--sizes", 1..=1 << 26, "16,1k").unwrap(),
            [16, 1024]
        );
        let e = byte_list("99g", "--sizes", 1..=1 << 26, "16,1k").unwrap_err();
        assert!(e.contains("'99g'"), "{e}");
    }

    #[test]
    fn long_values_are_cut() {
        let long = "x".repeat(100_000);
        let s = shown(&long);
        assert!(s.len() < 100 && s.contains("100000 bytes"), "{s}");
        assert_eq!(shown("a\u{1b}[31mb"), "a?[31mb");
        let e = check_seconds(1e308, "--time", 0.01, 600.0).unwrap_err();
        assert!(e.len() < 80, "{e}");
    }
}
