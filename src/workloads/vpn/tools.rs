//! The programs a run needs, where they are, which package brings each, and their versions.

use anyhow::anyhow;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The pinned wireguard-go that scripts/deps/vpn.sh installs.
pub const WIREGUARD_GO_MODULE: &str =
    "golang.zx2c4.com/wireguard@v0.0.0-20260522210424-ecfc5a8d5446";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    Ip,
    Iperf3,
    Irtt,
    Openvpn,
    Openssl,
    Wg,
    WireguardGo,
}

impl Tool {
    pub fn command(self) -> &'static str {
        match self {
            Tool::Ip => "ip",
            Tool::Iperf3 => "iperf3",
            Tool::Irtt => "irtt",
            Tool::Openvpn => "openvpn",
            Tool::Openssl => "openssl",
            Tool::Wg => "wg",
            Tool::WireguardGo => "wireguard-go",
        }
    }

    /// What to install, said the way a user acts on it.
    pub fn package(self) -> String {
        match self {
            Tool::Ip => "the Debian package iproute2".into(),
            Tool::Iperf3 => "the Debian package iperf3".into(),
            Tool::Irtt => "the Debian package irtt".into(),
            Tool::Openvpn => "the Debian package openvpn".into(),
            Tool::Openssl => "the Debian package openssl".into(),
            Tool::Wg => "the Debian package wireguard-tools".into(),
            Tool::WireguardGo => format!(
                "wireguard-go (this kernel has no WireGuard module): `go install {WIREGUARD_GO_MODULE}` and put the binary on PATH as wireguard-go"
            ),
        }
    }

    fn version_args(self) -> &'static [&'static str] {
        match self {
            Tool::Ip => &["-V"],
            Tool::Openssl | Tool::Irtt => &["version"],
            _ => &["--version"],
        }
    }
}

/// Where a tool is: on PATH (the namespaces' commands run `ip` by name), and for
/// wireguard-go also where `go install` and scripts/deps/vpn.sh put it.
pub fn find(tool: Tool) -> Option<PathBuf> {
    let mut more = Vec::new();
    if tool == Tool::WireguardGo {
        more.push(PathBuf::from("/usr/local/bin"));
        if let Some(home) = std::env::var_os("HOME") {
            more.push(Path::new(&home).join("go/bin"));
        }
        more.push(PathBuf::from("/root/go/bin"));
    }
    crate::sys::program::find_in(tool.command(), &more)
}

/// A missing tool as a one-line message naming its package.
pub fn require(tool: Tool) -> anyhow::Result<PathBuf> {
    find(tool).ok_or_else(|| anyhow!("{} not found: install {}", tool.command(), tool.package()))
}

/// First non-empty line of `tool --version` (stdout or stderr; some exit non-zero).
pub fn version(path: &Path, tool: Tool) -> String {
    crate::sys::program::version_line(path, tool.version_args(), |_| true)
}

/// "OpenVPN 2.6.14 x86_64-pc-linux-gnu [SSL (OpenSSL)] ..." -> "OpenVPN 2.6.14";
/// "wireguard-go v0.0.20250522" -> "wireguard-go 0.0.20250522".
pub fn short_version(line: &str) -> String {
    let mut words = line.split_whitespace();
    match (words.next(), words.next()) {
        (Some(a), Some(b)) => format!("{a} {}", b.trim_start_matches('v')),
        (Some(a), None) => a.to_string(),
        _ => line.to_string(),
    }
}

/// For the environment's `libraries`: one entry per tool used.
pub fn describe(tool: Tool, path: &Path) -> crate::record::Library {
    crate::record::Library {
        implementation: tool.command().into(),
        label: Some(tool.command().into()),
        version: version(path, tool),
        access: Some("tool".into()),
        details: crate::impls::details::Details::at(path.display().to_string()),
        ..Default::default()
    }
}

/// Ciphers `openvpn --show-ciphers` lists (upper case), plus "none".
pub fn openvpn_ciphers(openvpn: &Path) -> anyhow::Result<Vec<String>> {
    let out = Command::new(openvpn)
        .arg("--show-ciphers")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| anyhow!("cannot run {}: {e}", openvpn.display()))?;
    let mut v = parse_openvpn_ciphers(&String::from_utf8_lossy(&out.stdout));
    if v.is_empty() {
        return Err(anyhow!("openvpn --show-ciphers listed no ciphers"));
    }
    v.push("none".into());
    Ok(v)
}

pub fn parse_openvpn_ciphers(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let (name, rest) = l.split_once("  (")?;
            let name = name.trim();
            (rest.contains("bit key") && !name.is_empty() && !name.contains(' '))
                .then(|| name.to_ascii_uppercase())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cipher_list() {
        let t = "The following ciphers ...\nwith OpenVPN.  Each cipher shown below may be\n\nAES-128-CBC  (128 bit key, 128 bit block)\nAES-128-GCM  (128 bit key, 128 bit block, TLS client/server mode only)\nCHACHA20-POLY1305  (256 bit key, stream cipher, TLS client/server mode only)\n";
        assert_eq!(
            parse_openvpn_ciphers(t),
            ["AES-128-CBC", "AES-128-GCM", "CHACHA20-POLY1305"]
        );
    }

    #[test]
    fn short_versions() {
        assert_eq!(
            short_version("OpenVPN 2.6.14 x86_64-pc-linux-gnu [SSL (OpenSSL)]"),
            "OpenVPN 2.6.14"
        );
        assert_eq!(
            short_version("wireguard-go v0.0.20250522"),
            "wireguard-go 0.0.20250522"
        );
    }
}
