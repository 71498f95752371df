//! Units and values as people type and read them: byte sizes with k/m/g, comma lists,
//! seconds, MB/s, and any value echoed back in a message. A leaf: imports nothing of the
//! crate, so every layer may use it.

use anyhow::anyhow;
use std::path::Path;

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
pub fn items<'a>(list: &'a str, flag: &str, example: &str) -> anyhow::Result<Vec<&'a str>> {
    let out: Vec<&str> = list.split(',').map(str::trim).collect();
    if out.iter().any(|s| s.is_empty()) {
        return Err(anyhow::Error::msg(if list.trim().is_empty() {
            format!("{flag} is empty: give a comma list, e.g. {flag} {example}")
        } else {
            format!(
                "invalid {flag} '{}': an empty item; give a comma list, e.g. {flag} {example}",
                shown(list)
            )
        }));
    }
    Ok(out)
}

/// The items of a comma list, each one of `choices` (matched without regard to case; a
/// value may have several names, the first is the one an error offers), in the list's
/// order, each once.
pub fn choices<T: Copy + PartialEq>(
    list: &str,
    flag: &str,
    example: &str,
    choices: &[(&str, T)],
) -> anyhow::Result<Vec<T>> {
    let mut out = Vec::new();
    for item in items(list, flag, example)? {
        let Some(&(_, v)) = choices.iter().find(|(n, _)| n.eq_ignore_ascii_case(item)) else {
            let mut offered: Vec<&str> = Vec::new();
            for (i, (name, v)) in choices.iter().enumerate() {
                if !choices[..i].iter().any(|(_, w)| w == v) {
                    offered.push(name);
                }
            }
            return Err(anyhow::Error::msg(format!(
                "invalid {flag} '{}': choose from {}",
                shown(item),
                offered.join(", ")
            )));
        };
        if !out.contains(&v) {
            out.push(v);
        }
    }
    Ok(out)
}

/// A comma list of whole numbers in `range`, deduplicated and sorted.
pub fn counts(
    list: &str,
    flag: &str,
    range: std::ops::RangeInclusive<u64>,
    example: &str,
) -> anyhow::Result<Vec<u64>> {
    let wanted = format!("whole numbers from {} to {}", range.start(), range.end());
    let whole = |item: &str| item.parse::<u64>().ok();
    sorted_list(list, flag, &range, example, &wanted, whole)
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
) -> anyhow::Result<Vec<u64>> {
    let wanted = format!(
        "bytes from {} to {} with an optional k, m or g suffix (binary)",
        size_label(*range.start()),
        size_label(*range.end())
    );
    sorted_list(list, flag, &range, example, &wanted, bytes)
}

/// The items of a comma list parsed by `parse` and kept in `range`, deduplicated and
/// sorted; an item that is not is named with what to give instead (`wanted`).
fn sorted_list(
    list: &str,
    flag: &str,
    range: &std::ops::RangeInclusive<u64>,
    example: &str,
    wanted: &str,
    parse: impl Fn(&str) -> Option<u64>,
) -> anyhow::Result<Vec<u64>> {
    let mut out = Vec::new();
    for item in items(list, flag, example)? {
        let n = parse(item)
            .filter(|n| range.contains(n))
            .ok_or_else(|| {
                format!(
                    "invalid {flag} '{}': give {wanted}, e.g. {flag} {example}",
                    shown(item)
                )
            })
            .map_err(anyhow::Error::msg)?;
        out.push(n);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Seconds, as typed: a finite positive number. Each workload checks its own range.
pub fn seconds(s: &str) -> anyhow::Result<f64> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0)
        .ok_or_else(|| anyhow!("'{}' is not a positive number of seconds", shown(s)))
}

/// A range check on seconds with the value named as typed (never 310 digits).
pub fn check_seconds(v: f64, flag: &str, min: f64, max: f64) -> anyhow::Result<f64> {
    if v.is_finite() && v >= min && v <= max {
        Ok(v)
    } else {
        let typed = if v.abs() >= 1e6 {
            format!("{v:e}")
        } else {
            format!("{v}")
        };
        Err(anyhow!(
            "invalid {flag} {typed}: give seconds from {min} to {max}"
        ))
    }
}

/// Whole seconds from 1 to `max` for a tool that takes no fraction (iperf3, fio): `tool`
/// says which, in the error.
pub fn whole_seconds(v: f64, flag: &str, max: f64, tool: &str) -> anyhow::Result<u32> {
    let v = check_seconds(v, flag, 1.0, max)?;
    if v.fract() != 0.0 {
        return Err(anyhow!(
            "invalid {flag} {v}: {tool} takes whole seconds, e.g. {flag} {}",
            v.round().max(1.0)
        ));
    }
    Ok(v as u32)
}

/// MB/s with a precision that suits the magnitude.
pub fn mbps(bps: f64) -> String {
    magnitude(bps / 1e6)
}

/// A figure with as many decimals as its magnitude deserves: 0 from 100, 1 from 10, else 2.
pub fn magnitude(m: f64) -> String {
    if m >= 100.0 {
        format!("{m:.0}")
    } else if m >= 10.0 {
        format!("{m:.1}")
    } else {
        format!("{m:.2}")
    }
}
/// Human size: 16, 1350, 1k, 16k, 1m, 1g.
pub fn size_label(n: u64) -> String {
    if n >= 1 << 30 && n.is_multiple_of(1 << 30) {
        format!("{}g", n >> 30)
    } else if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{}m", n >> 20)
    } else if n >= 1024 && n.is_multiple_of(1024) {
        format!("{}k", n >> 10)
    } else {
        n.to_string()
    }
}

/// "OpenSSL 3.0.19 27 Jan 2026" -> "3.0.19"; "OpenSSL 3.5.5 27 Jan 2026, build no-asm" ->
/// "3.5.5 no-asm".
pub fn short_version(v: &str) -> String {
    let (v, flags) = match v.split_once(BUILD_MARK) {
        Some((v, f)) => (v, Some(f)),
        None => (v, None),
    };
    let number = v
        .split_whitespace()
        .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .unwrap_or(v);
    match flags {
        Some(f) => format!("{number} {f}"),
        None => number.to_string(),
    }
}

/// Between a library's version and its build flags ("OpenSSL 3.5.5 27 Jan 2026, build
/// no-asm"): the short version keeps the flags ("3.5.5 no-asm").
pub const BUILD_MARK: &str = ", build ";

/// A URL or argument with the password of its `user:password@` part, and any
/// `password=` option, replaced by `***`.
pub fn masked(s: &str) -> String {
    let mut out = s.to_string();
    if let Some(scheme) = out.find("://") {
        let rest = &out[scheme + 3..];
        let auth_end = rest.find(['/', '?']).unwrap_or(rest.len());
        if let Some(at) = rest[..auth_end].rfind('@') {
            if let Some(colon) = rest[..at].find(':') {
                let start = scheme + 3 + colon + 1;
                out.replace_range(start..scheme + 3 + at, "***");
            }
        }
    }
    if let Some(i) = out.find("password=") {
        let start = i + "password=".len();
        let end = out[start..]
            .find(['&', ' '])
            .map_or(out.len(), |e| start + e);
        out.replace_range(start..end, "***");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_choice_list_keeps_order_drops_repeats_and_offers_each_value_once() {
        let c = [("none", 0), ("veth", 0), ("wireguard", 1), ("openvpn", 2)];
        assert_eq!(
            choices("OpenVPN,veth,none", "--t", "none", &c).unwrap(),
            [2, 0]
        );
        let e = choices("none,ipsec", "--t", "none", &c)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "invalid --t 'ipsec': choose from none, wireguard, openvpn"
        );
        assert!(choices("none,", "--t", "none", &c).is_err());
    }

    #[test]
    fn passwords_are_masked() {
        assert_eq!(
            masked("postgresql://bench:s3cret@db.example:5432/runs"),
            "postgresql://bench:***@db.example:5432/runs"
        );
        assert_eq!(
            masked("--store=postgres://u:p@h/d?password=x&sslmode=require"),
            "--store=postgres://u:***@h/d?password=***&sslmode=require"
        );
        assert_eq!(masked("postgresql://u@h/d"), "postgresql://u@h/d");
        assert_eq!(masked("speed"), "speed");
    }

    #[test]
    fn lists_name_the_flag_and_the_item() {
        assert_eq!(
            counts("4, 1,2,2", "--threads", 1..=64, "1,2").unwrap(),
            [1, 2, 4]
        );
        let e = counts("1,-1", "--threads", 1..=64, "1,2").unwrap_err();
        assert!(
            e.to_string().contains("--threads '-1'") && e.to_string().contains("1 to 64"),
            "{e}"
        );
        let e = counts("", "--streams", 1..=128, "1,4").unwrap_err();
        assert!(e.to_string().contains("--streams is empty"), "{e}");
        let e = counts("1,,2", "--streams", 1..=128, "1,4").unwrap_err();
        assert!(e.to_string().contains("empty item"), "{e}");
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
        assert!(e.to_string().contains("'99g'"), "{e}");
    }

    #[test]
    fn long_values_are_cut() {
        let long = "x".repeat(100_000);
        let s = shown(&long);
        assert!(s.len() < 100 && s.contains("100000 bytes"), "{s}");
        assert_eq!(shown("a\u{1b}[31mb"), "a?[31mb");
        let e = check_seconds(1e308, "--time", 0.01, 600.0).unwrap_err();
        assert!(e.to_string().len() < 80, "{e}");
    }
}
