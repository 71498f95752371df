//! disk's flags, and what they are parsed into: the dm-crypt ciphers and drivers, the
//! queue options, fio's loads, the RAM disk's size and the time per load.

use anyhow::anyhow;
use crate::shell::args::{CommonArgs, List};

#[derive(clap::Args)]
pub struct DiskArgs {
    /// dm-crypt ciphers, comma-separated, each with an optional /BITS key size
    /// (default 512 for XTS, else 256); Adiantum's name keeps its comma.
    #[arg(
        long,
        value_name = "LIST",
        default_value = "aes-xts-plain64/256,aes-xts-plain64/512,aes-cbc-essiv:sha256,xchacha12,aes-adiantum-plain64",
        value_parser = |s: &str| parse_ciphers(s).map(List)
    )]
    pub ciphers: List<Cipher>,
    /// Crypto API drivers to bind besides the kernel's choice, in dm-crypt's capi: syntax
    /// (e.g. capi:xts(ecb(aes-generic))-plain64), comma-separated; each is measured for the
    /// ciphers of its algorithm.
    #[arg(long, value_name = "NAME[,NAME...]", value_parser = |s: &str| parse_drivers(s).map(List))]
    pub disk_driver: Option<List<Cipher>>,
    /// dm-crypt's queue options, comma-separated: default, no-workqueue
    /// (no_read_workqueue no_write_workqueue), same-cpu (same_cpu_crypt).
    #[arg(long, value_name = "LIST", default_value = "default", value_parser = |s: &str| parse_queues(s).map(List))]
    pub queues: List<&'static str>,
    /// fio patterns, comma-separated: seq-read and seq-write (1 MiB blocks, queue depth
    /// 1), rand-read and rand-write (4 KiB blocks, queue depths 1 and 32).
    #[arg(
        long,
        value_name = "LIST",
        default_value = "seq-read,seq-write,rand-read,rand-write",
        value_parser = |s: &str| parse_patterns(s).map(List)
    )]
    pub patterns: List<Load>,
    /// Size of the RAM disk (e.g. 64m, 1g).
    #[arg(long, value_name = "SIZE", default_value = "512m", value_parser = parse_size)]
    pub size: u64,
    /// Sample the whole system with perf during each point (the crypto share).
    #[arg(long)]
    pub profile: bool,
    /// Find and remove what a crashed run left behind (mappings, loop devices, the RAM
    /// disk it loaded), say what was removed, and exit.
    #[arg(long)]
    pub cleanup: bool,
    // --time: seconds of fio per pattern (default 5).
    #[command(flatten)]
    pub common: CommonArgs,
    /// With --dut: the run happens on the DUT (as root), its records come back here.
    #[command(flatten)]
    pub dut: crate::dut::DutArgs,
}

const MAX_DURATION: f64 = 3600.0;
pub(super) const DEFAULT_DURATION: f64 = 5.0;
/// The RAM disk: at least 16 MiB (fio's verify pass), at most 64 GiB.
const SIZES: std::ops::RangeInclusive<u64> = (16 << 20)..=(64 << 30);

/// A dm-crypt cipher as the table takes it, its key size, and the kernel's name of the
/// algorithm under it (what AF_ALG binds and /proc/crypto lists).
#[derive(Clone, Debug, PartialEq)]
pub struct Cipher {
    /// The table's cipher field: "aes-xts-plain64" or "capi:xts(aes-generic)-plain64".
    pub spec: String,
    pub key_bits: u32,
    /// "xts(aes)", "essiv(cbc(aes),sha256)", "adiantum(xchacha12,aes)"; for a capi:
    /// spec, the instance it names ("xts(aes-generic)").
    pub kernel_name: String,
    /// The IV mode ("plain64", "essiv:sha256").
    pub iv_mode: String,
    /// Bytes of IV the algorithm takes (Adiantum's tweak is 32).
    pub iv_len: usize,
}

impl Cipher {
    /// Parses `cipher-chainmode-ivmode[:ivopts]` (dm-crypt's form) or `capi:NAME-ivmode`.
    fn parse(spec: &str, key_bits: Option<u32>) -> anyhow::Result<Cipher> {
        let bad = || {
            anyhow!(
                "invalid cipher '{}': give dm-crypt's cipher-chainmode-ivmode (e.g. aes-xts-plain64) or capi:NAME-ivmode (e.g. capi:xts(ecb(aes-generic))-plain64)",
                crate::units::shown(spec)
            )
        };
        let (kernel_name, iv_mode) = if let Some(capi) = spec.strip_prefix("capi:") {
            capi_grammar(spec)?;
            let (name, iv) = capi.rsplit_once('-').ok_or_else(bad)?;
            if !name.ends_with(')') || iv.is_empty() {
                return Err(bad());
            }
            (name.to_string(), iv.to_string())
        } else {
            let mut parts = spec.splitn(3, '-');
            let (Some(c), Some(chain), Some(iv)) = (parts.next(), parts.next(), parts.next())
            else {
                return Err(bad());
            };
            let word = |s: &str| {
                !s.is_empty()
                    && s.chars()
                        .all(|ch| ch.is_ascii_alphanumeric() || "_,:".contains(ch))
            };
            if !word(c) || !word(chain) || !word(iv) {
                return Err(bad());
            }
            let name = match iv.split_once(':') {
                Some(("essiv", hash)) => format!("essiv({chain}({c}),{hash})"),
                _ => format!("{chain}({c})"),
            };
            (name, iv.to_string())
        };
        let xts = kernel_name.starts_with("xts(");
        let key_bits = key_bits.unwrap_or(if xts { 512 } else { 256 });
        Ok(Cipher {
            spec: spec.to_string(),
            key_bits,
            iv_len: if kernel_name.starts_with("adiantum(") {
                32
            } else {
                16
            },
            kernel_name,
            iv_mode,
        })
    }
}

/// The longest capi: spec taken: the kernel's own names stop at 128 bytes
/// (CRYPTO_MAX_ALG_NAME), and a table field no longer than that is all dm-crypt reads.
const CAPI_MAX: usize = 128;

/// A capi: spec goes into the table dmsetup reads, whose fields are split at whitespace
/// and whose lines are targets: only the characters of the kernel's algorithm names
/// and IV modes, parentheses balanced, within CAPI_MAX. The refusal names the character.
fn capi_grammar(spec: &str) -> anyhow::Result<()> {
    let shown = crate::units::shown(spec);
    let fix = "a capi: name takes letters, digits and _(),:- with balanced parentheses, e.g. capi:xts(ecb(aes-generic))-plain64";
    let mut depth = 0i32;
    for (at, ch) in spec.char_indices() {
        if !(ch.is_ascii_alphanumeric() || "_(),:-".contains(ch)) {
            return Err(anyhow!(
                "invalid cipher '{shown}': {} at byte {at} is not allowed; {fix}",
                char_named(ch)
            ));
        }
        depth += match ch {
            '(' => 1,
            ')' => -1,
            _ => 0,
        };
        if depth < 0 {
            return Err(anyhow!(
                "invalid cipher '{shown}': ')' at byte {at} closes nothing; {fix}"
            ));
        }
    }
    if depth != 0 {
        return Err(anyhow!(
            "invalid cipher '{shown}': {depth} '(' not closed; {fix}"
        ));
    }
    if spec.len() > CAPI_MAX {
        return Err(anyhow!(
            "invalid cipher '{shown}': longer than {CAPI_MAX} bytes; {fix}"
        ));
    }
    Ok(())
}

/// A character as a message names it: printable ones quoted, the rest by code point.
fn char_named(ch: char) -> String {
    if ch.is_ascii_graphic() {
        format!("'{ch}'")
    } else {
        format!("U+{:04X}", ch as u32)
    }
}

/// `--ciphers`: a comma list whose Adiantum items ("xchacha12,aes-adiantum-plain64") keep
/// their comma; each item may end in /BITS.
fn parse_ciphers(s: &str) -> anyhow::Result<Vec<Cipher>> {
    let items = crate::units::items(s, "--ciphers", "aes-xts-plain64/512")?;
    let mut out: Vec<Cipher> = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let mut item = items[i].to_string();
        if matches!(items[i], "xchacha12" | "xchacha20") && i + 1 < items.len() {
            item = format!("{},{}", items[i], items[i + 1]);
            i += 1;
        }
        i += 1;
        let (spec, bits) = match item.rsplit_once('/') {
            Some((_, b)) if !b.chars().all(|c| c.is_ascii_digit()) => {
                return Err(anyhow!(
                    "invalid --ciphers item '{}': only a key size in bits may follow '/', e.g. aes-xts-plain64/512",
                    crate::units::shown(&item)
                ))
            }
            Some((spec, b)) => {
                let bits = b
                    .parse::<u32>()
                    .ok()
                    .filter(|b| (128..=1024).contains(b) && b % 64 == 0)
                    .ok_or_else(|| {
                        anyhow!(
                            "invalid --ciphers key size '{}': give bits, a multiple of 64 from 128 to 1024 (e.g. aes-xts-plain64/512)",
                            crate::units::shown(b)
                        )
                    })?;
                (spec.to_string(), Some(bits))
            }
            None => (item, None),
        };
        let c = Cipher::parse(&spec, bits).map_err(|e| anyhow!("--ciphers: {e}"))?;
        if !out.contains(&c) {
            out.push(c);
        }
    }
    Ok(out)
}

/// `--disk-driver`: capi: specs (their names may hold commas inside parentheses).
fn parse_drivers(s: &str) -> anyhow::Result<Vec<Cipher>> {
    let mut out: Vec<Cipher> = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    let mut items = Vec::new();
    for (i, ch) in s.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&s[start..]);
    for item in items.into_iter().map(str::trim) {
        if !item.starts_with("capi:") {
            return Err(anyhow!(
                "invalid --disk-driver '{}': give dm-crypt's capi: form naming the driver, e.g. capi:xts(ecb(aes-generic))-plain64",
                crate::units::shown(item)
            ));
        }
        let c = Cipher::parse(item, None).map_err(|e| anyhow!("--disk-driver: {e}"))?;
        if !out.contains(&c) {
            out.push(c);
        }
    }
    Ok(out)
}

/// `--queues`: the dm-crypt optional parameters of each option, as the kernel names them.
fn parse_queues(s: &str) -> anyhow::Result<Vec<&'static str>> {
    crate::units::choices(
        s,
        "--queues",
        "default,no-workqueue",
        &[
            ("default", ""),
            ("no-workqueue", "no_read_workqueue no_write_workqueue"),
            ("same-cpu", "same_cpu_crypt"),
        ],
    )
}

/// One fio load: its pattern name, fio's rw, block size and queue depth.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Load {
    pub pattern: &'static str,
    pub rw: &'static str,
    pub block_size: u64,
    pub iodepth: u32,
}

fn parse_patterns(s: &str) -> anyhow::Result<Vec<Load>> {
    type Pattern = (&'static str, &'static str, u64, &'static [u32]);
    let patterns: [(&str, Pattern); 4] = [
        ("seq-read", ("seq-read", "read", 1 << 20, &[1])),
        ("seq-write", ("seq-write", "write", 1 << 20, &[1])),
        ("rand-read", ("rand-read", "randread", 4096, &[1, 32])),
        ("rand-write", ("rand-write", "randwrite", 4096, &[1, 32])),
    ];
    let chosen = crate::units::choices(s, "--patterns", "seq-read,rand-write", &patterns)?;
    let mut out = Vec::new();
    for (pattern, rw, block_size, depths) in chosen {
        for &iodepth in depths {
            out.push(Load {
                pattern,
                rw,
                block_size,
                iodepth,
            });
        }
    }
    Ok(out)
}

fn parse_size(s: &str) -> anyhow::Result<u64> {
    crate::units::bytes(s)
        .filter(|n| SIZES.contains(n) && n % (1 << 20) == 0)
        .ok_or_else(|| {
            anyhow!(
                "invalid --size '{}': give whole MiB from 16m to 64g, e.g. --size 512m",
                crate::units::shown(s)
            )
        })
}

pub(super) fn parse_duration(d: f64) -> anyhow::Result<u32> {
    crate::units::whole_seconds(d, "--time", MAX_DURATION, "fio (its runtime)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ciphers_parse_into_the_kernels_names() {
        let c = parse_ciphers(
            "aes-xts-plain64/256,aes-xts-plain64,aes-cbc-essiv:sha256,xchacha12,aes-adiantum-plain64",
        )
        .unwrap();
        let names: Vec<(&str, u32, usize)> = c
            .iter()
            .map(|c| (c.kernel_name.as_str(), c.key_bits, c.iv_len))
            .collect();
        assert_eq!(
            names,
            [
                ("xts(aes)", 256, 16),
                ("xts(aes)", 512, 16),
                ("essiv(cbc(aes),sha256)", 256, 16),
                ("adiantum(xchacha12,aes)", 256, 32)
            ]
        );
        assert_eq!(c[3].spec, "xchacha12,aes-adiantum-plain64");
        assert!(parse_ciphers("aes").is_err());
        assert!(parse_ciphers("aes-xts-plain64/100").is_err());
        assert!(parse_ciphers("aes-xts-plain64 --x").is_err());
        let d = parse_drivers(
            "capi:xts(aes-generic)-plain64,capi:adiantum(xchacha12,aes-generic)-plain64",
        )
        .unwrap();
        assert_eq!(d[0].kernel_name, "xts(aes-generic)");
        assert_eq!(d[0].iv_mode, "plain64");
        assert_eq!(d[1].kernel_name, "adiantum(xchacha12,aes-generic)");
        assert!(parse_drivers("xts-aes-aesni").is_err());
        let d = parse_drivers("capi:xts(ecb(aes-generic))-plain64").unwrap();
        assert_eq!(d[0].kernel_name, "xts(ecb(aes-generic))");
    }

    #[test]
    fn a_capi_spec_keeps_to_the_kernels_grammar() {
        let key = "0".repeat(128);
        let injection = format!("capi:xts(aes)-plain64 {key} 0 /dev/sda 0 0\n131072 1 error");
        for (bad, named) in [
            (injection.as_str(), "U+0020 at byte 21"),
            ("capi:xts(aes)-plain64\n131072 1 error", "U+000A"),
            ("capi:xts(aes)-plain64;reboot", "';'"),
            ("capi:xts(aes)|x-plain64", "'|'"),
            ("capi:xts(aes)\t-plain64", "U+0009"),
            ("capi:xts(aes\u{1b})-plain64", "U+001B"),
            ("capi:xts(aés)-plain64", "U+00E9"),
            ("capi:xts(aes-plain64", "not closed"),
            ("capi:xts(aes))(-plain64", "closes nothing"),
        ] {
            let e = parse_drivers(bad).unwrap_err().to_string();
            assert!(
                e.contains("--disk-driver") && e.contains(named),
                "{bad:?}: {e}"
            );
            assert_eq!(e.lines().count(), 1, "{e}");
            let e = parse_ciphers(bad).unwrap_err().to_string();
            assert!(e.contains("--ciphers"), "{bad:?}: {e}");
        }
        let long = format!("capi:xts({})-plain64", "a".repeat(2500));
        let e = parse_drivers(&long).unwrap_err().to_string();
        assert!(e.contains("longer than 128 bytes") && e.len() < 400, "{e}");
        // What the kernel names still parses.
        let ok = parse_drivers("capi:essiv(cbc(aes-aesni),sha256)-essiv:sha256").unwrap();
        assert_eq!(ok[0].kernel_name, "essiv(cbc(aes-aesni),sha256)");
        assert_eq!(ok[0].iv_mode, "essiv:sha256");
        let e = parse_ciphers("aes-xts-plain64/passwd")
            .unwrap_err()
            .to_string();
        assert!(e.contains("only a key size in bits may follow '/'"), "{e}");
    }

    #[test]
    fn other_inputs() {
        assert!(parse_size("0").is_err());
        assert!(parse_size("1m").is_err());
        assert_eq!(parse_size("64m").unwrap(), 64 << 20);
        assert!(parse_queues("bogus").is_err());
        assert_eq!(
            parse_queues("default,no-workqueue").unwrap(),
            ["", "no_read_workqueue no_write_workqueue"]
        );
        assert!(parse_patterns("x").is_err());
        assert_eq!(parse_patterns("rand-read").unwrap().len(), 2);
        assert!(parse_duration(0.5).is_err());
    }
}
