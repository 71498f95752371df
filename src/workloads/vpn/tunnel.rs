//! The tunnels between the two namespaces: none (the bare veth), WireGuard (kernel or
//! wireguard-go) and OpenVPN (TLS mode, one data cipher at a time, or none; its data
//! channel in user space or in the kernel's ovpn-dco module).

use super::iperf::{wait_for, LoadError};
use super::lab::{self, run, Lab, CLIENT, ENDS, SERVER, VETH_ADDR};
use crate::sys::guard::{Guard, Resource};
use anyhow::anyhow;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Tunnel addresses (inside the tunnels).
const WG_ADDR: [&str; 2] = ["10.77.1.1", "10.77.1.2"];
const OVPN_ADDR: [&str; 2] = ["10.77.2.1", "10.77.2.2"];
const WG_PORT: &str = "51820";
const OVPN_PORT: &str = "1194";

/// WireGuard's one cipher suite.
pub const WIREGUARD_CIPHER: &str = "CHACHA20-POLY1305";

/// What to bring up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Spec {
    /// The bare veth pair.
    Bare,
    WireGuard {
        kernel: bool,
    },
    OpenVpn {
        cipher: String,
        /// Data-channel offload: the kernel's ovpn-dco module carries the packets.
        dco: bool,
    },
}

/// Whether an OpenVPN data cipher authenticates by itself (AEAD) or needs an HMAC.
pub fn is_aead(cipher: &str) -> bool {
    let c = cipher.to_ascii_uppercase();
    c.ends_with("-GCM") || c == "CHACHA20-POLY1305"
}

/// The HMAC OpenVPN uses with non-AEAD ciphers: SHA1, what study 1's board ran.
pub const LEGACY_AUTH: &str = "SHA1";

impl Spec {
    pub fn tunnel(&self) -> &'static str {
        match self {
            Spec::Bare => "none",
            Spec::WireGuard { .. } => "wireguard",
            Spec::OpenVpn { dco: false, .. } => "openvpn",
            Spec::OpenVpn { dco: true, .. } => "openvpn-dco",
        }
    }

    pub fn cipher(&self) -> String {
        match self {
            Spec::Bare => "none".into(),
            Spec::WireGuard { .. } => WIREGUARD_CIPHER.into(),
            Spec::OpenVpn { cipher, .. } => cipher.clone(),
        }
    }

    /// The packet authentication beside the cipher: None for AEADs (the tag is the
    /// authentication) and for the bare veth.
    pub fn auth(&self) -> Option<String> {
        match self {
            Spec::OpenVpn { cipher, .. } if cipher == "none" => Some("none".into()),
            Spec::OpenVpn { cipher, .. } if !is_aead(cipher) => Some(format!("HMAC-{LEGACY_AUTH}")),
            _ => None,
        }
    }

    /// For messages: "openvpn AES-256-CBC+HMAC-SHA1".
    pub fn label(&self) -> String {
        match self {
            Spec::Bare => "none (bare veth)".into(),
            Spec::WireGuard { kernel: true } => "wireguard (kernel)".into(),
            Spec::WireGuard { kernel: false } => "wireguard (wireguard-go)".into(),
            Spec::OpenVpn { cipher, .. } => match self.auth() {
                Some(a) if cipher != "none" => format!("{} {cipher}+{a}", self.tunnel()),
                _ => format!("{} {cipher}", self.tunnel()),
            },
        }
    }
}

/// Paths and versions of the programs a tunnel needs.
#[derive(Clone, Debug, Default)]
pub struct Programs {
    pub iperf3: String,
    pub wg: Option<PathBuf>,
    pub wireguard_go: Option<PathBuf>,
    pub wireguard_go_version: String,
    pub openvpn: Option<PathBuf>,
    pub openvpn_version: String,
    pub openssl: Option<PathBuf>,
    /// --openssl DIR: the build OpenVPN runs on.
    pub openssl_build: Option<crate::impls::openssl::build::Build>,
}

/// A tunnel that is up. Dropping it stops its daemons and removes its links.
pub struct Tunnel {
    pub guard: Guard,
    pub spec: Spec,
    /// "veth", "kernel", "wireguard-go 0.0.20250522", "OpenVPN 2.6.14".
    pub implementation: String,
    /// Where the iperf3 server listens (its end of the tunnel).
    pub server_addr: String,
    /// The interface each end's traffic crosses (the tunnel device, or the veth).
    pub ifname: [String; 2],
    /// The tunnel's own processes: (end, pid).
    pub procs: Vec<(String, i32)>,
    children: Vec<Child>,
    /// Kernel WireGuard or OpenVPN DCO: CPU time can only be approximated from their
    /// crypto kworkers.
    pub kernel: bool,
    /// What the daemons said they negotiated (OpenVPN's "Data Channel" line).
    pub negotiated: Option<String>,
    /// --openssl DIR: the build both OpenVPN ends mapped (checked when it came up).
    pub openssl_build: Option<crate::record::OpenSslBuild>,
    pub notes: Vec<String>,
}

impl Tunnel {
    /// An error if one of the tunnel's processes has exited.
    pub fn check_alive(&mut self) -> anyhow::Result<()> {
        for (i, c) in self.children.iter_mut().enumerate() {
            if let Ok(Some(status)) = c.try_wait() {
                let (end, pid) = &self.procs[i];
                return Err(anyhow!(
                    "the {end} {} (pid {pid}) exited ({status})",
                    self.spec.tunnel()
                ));
            }
        }
        Ok(())
    }
}

pub fn up(lab: &Lab, progs: &Programs, spec: &Spec) -> Result<Tunnel, LoadError> {
    let t = Tunnel {
        guard: Guard::new(),
        spec: spec.clone(),
        implementation: String::new(),
        server_addr: String::new(),
        ifname: lab.veth.clone(),
        procs: Vec::new(),
        children: Vec::new(),
        kernel: false,
        negotiated: None,
        openssl_build: None,
        notes: Vec::new(),
    };
    match spec {
        Spec::Bare => Ok(Tunnel {
            implementation: "veth".into(),
            server_addr: VETH_ADDR[SERVER].into(),
            notes: vec!["bare veth: no tunnel process; the kernel's work is in softirq_s".into()],
            ..t
        }),
        Spec::WireGuard { kernel } => wireguard(lab, progs, *kernel, t),
        Spec::OpenVpn { cipher, dco } => openvpn(lab, progs, cipher, *dco, t),
    }
}

fn failed(e: impl std::fmt::Display) -> LoadError {
    LoadError::Failed(e.to_string())
}

/// `wg genkey` and `wg pubkey`: a fresh key pair, the private key in a 0600 file.
fn wg_keys(wg: &Path, dir: &Path, name: &str) -> anyhow::Result<(PathBuf, String)> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let out = Command::new(wg)
        .arg("genkey")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| anyhow!("wg genkey: {e}"))?;
    if !out.status.success() {
        return Err(anyhow!("wg genkey failed"));
    }
    let private = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let path = dir.join(format!("{name}.key"));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
    writeln!(f, "{private}").map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
    let mut child = Command::new(wg)
        .arg("pubkey")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| anyhow!("wg pubkey: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = writeln!(stdin, "{private}");
    }
    let out = child
        .wait_with_output()
        .map_err(|e| anyhow!("wg pubkey: {e}"))?;
    let public = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if public.is_empty() {
        return Err(anyhow!("wg pubkey printed nothing"));
    }
    Ok((path, public))
}

fn wireguard(
    lab: &Lab,
    progs: &Programs,
    kernel: bool,
    mut t: Tunnel,
) -> Result<Tunnel, LoadError> {
    let wg = progs.wg.as_deref().ok_or_else(|| failed("wg not found"))?;
    let ifs = [
        lab::if_name(lab.pid, 'w', SERVER),
        lab::if_name(lab.pid, 'w', CLIENT),
    ];
    let mut keys = Vec::new();
    for end in [SERVER, CLIENT] {
        keys.push(wg_keys(wg, &lab.dir, &format!("wg-{}", ENDS[end])).map_err(failed)?);
    }
    for end in [SERVER, CLIENT] {
        let ns = lab.ns[end].as_str();
        let ifname = ifs[end].as_str();
        if kernel {
            run(&["ip", "-n", ns, "link", "add", ifname, "type", "wireguard"]).map_err(failed)?;
            t.guard.track(Resource::Undo {
                what: format!("wireguard link {ifname}"),
                argv: ["ip", "-n", ns, "link", "del", ifname]
                    .map(String::from)
                    .to_vec(),
            });
        } else {
            let go = progs
                .wireguard_go
                .as_deref()
                .ok_or_else(|| failed("wireguard-go not found"))?;
            // Tracked before the daemon, so it is undone after the daemon stops.
            let sock = format!("/var/run/wireguard/{ifname}.sock");
            t.guard.track(Resource::Undo {
                what: format!("socket {sock}"),
                argv: ["rm", "-f", &sock].map(String::from).to_vec(),
            });
            let log = lab.path(&format!("wireguard-go-{}.log", ENDS[end]));
            let go_s = go.to_string_lossy();
            let mut child = lab::spawn_in_ns(
                &t.guard,
                ns,
                &[&go_s, "-f", ifname],
                &log,
                None,
                "wireguard-go",
            )
            .map_err(failed)?;
            let pid = child.id() as i32;
            let ready = wait_for(&mut child, Duration::from_secs(10), "wireguard-go", || {
                Path::new(&sock).exists()
            });
            t.procs.push((ENDS[end].into(), pid));
            t.children.push(child);
            if let Err(LoadError::Failed(m)) = ready {
                let gist =
                    super::iperf::last_line(&std::fs::read_to_string(&log).unwrap_or_default());
                return Err(failed(format!("{m}: {gist}")));
            }
            ready?;
        }
    }
    for end in [SERVER, CLIENT] {
        let peer = 1 - end;
        let ns = lab.ns[end].as_str();
        let key = keys[end].0.to_string_lossy().to_string();
        let wg_s = wg.to_string_lossy();
        let allowed = format!("{}/32", WG_ADDR[peer]);
        let endpoint = format!("{}:{WG_PORT}", VETH_ADDR[peer]);
        let status = lab::in_ns(
            ns,
            &[
                &wg_s,
                "set",
                &ifs[end],
                "private-key",
                &key,
                "listen-port",
                WG_PORT,
                "peer",
                &keys[peer].1,
                "allowed-ips",
                &allowed,
                "endpoint",
                &endpoint,
            ],
        )
        .stdin(Stdio::null())
        .output()
        .map_err(|e| failed(format!("wg set: {e}")))?;
        if !status.status.success() {
            return Err(failed(format!(
                "wg set {} failed: {}",
                ifs[end],
                super::iperf::last_line(&String::from_utf8_lossy(&status.stderr))
            )));
        }
        run(&[
            "ip",
            "-n",
            ns,
            "addr",
            "add",
            &format!("{}/24", WG_ADDR[end]),
            "dev",
            &ifs[end],
        ])
        .map_err(failed)?;
        run(&["ip", "-n", ns, "link", "set", &ifs[end], "up"]).map_err(failed)?;
    }
    t.kernel = kernel;
    t.implementation = if kernel {
        "kernel".into()
    } else {
        progs.wireguard_go_version.clone()
    };
    t.server_addr = WG_ADDR[SERVER].into();
    t.ifname = ifs;
    t.notes.push(if kernel {
        "kernel WireGuard: its CPU time is in softirq (not attributable to the tunnel alone; see softirq_s) and in the wg-crypt kworkers, whose time is tunnel_cpu_s (approximate: a kworker's name shows the last work queue it ran)".into()
    } else {
        "wireguard-go: WireGuard in user space".into()
    });
    Ok(t)
}

/// A throwaway CA, server and client certificate (P-256), made once per run.
pub fn make_certs(openssl: &Path, dir: &Path) -> anyhow::Result<()> {
    let o = openssl.to_string_lossy().to_string();
    let p = |f: &str| dir.join(f).to_string_lossy().to_string();
    let key_args = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    let mut ca = vec![o.as_str(), "req", "-x509"];
    ca.extend(key_args);
    let (ca_key, ca_crt) = (p("ca.key"), p("ca.crt"));
    ca.extend([
        "-keyout",
        &ca_key,
        "-out",
        &ca_crt,
        "-days",
        "2",
        "-subj",
        "/CN=cryptobench-vpn-ca",
    ]);
    run(&ca)?;
    for end in ENDS {
        let (key, csr, crt) = (
            p(&format!("{end}.key")),
            p(&format!("{end}.csr")),
            p(&format!("{end}.crt")),
        );
        let subj = format!("/CN={end}");
        let mut req = vec![o.as_str(), "req"];
        req.extend(key_args);
        req.extend(["-keyout", &key, "-out", &csr, "-subj", &subj]);
        run(&req)?;
        let serial = p("ca.srl");
        run(&[
            &o,
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &ca_crt,
            "-CAkey",
            &ca_key,
            "-CAserial",
            &serial,
            "-CAcreateserial",
            "-out",
            &crt,
            "-days",
            "2",
        ])?;
    }
    Ok(())
}

/// OpenVPN's log line naming the data channel's cipher: "Data Channel: cipher 'X'".
pub fn data_channel(log: &str) -> Option<String> {
    log.lines().rev().find_map(|l| {
        l.split_once("Data Channel: ")
            .map(|(_, r)| r.trim().to_string())
    })
}

/// Whether the negotiated data channel is the one asked for.
pub fn negotiated_matches(line: &str, cipher: &str) -> bool {
    if cipher == "none" {
        return line.contains("[null-cipher]");
    }
    line.to_ascii_uppercase()
        .contains(&format!("CIPHER '{}'", cipher.to_ascii_uppercase()))
}

fn openvpn(
    lab: &Lab,
    progs: &Programs,
    cipher: &str,
    dco: bool,
    mut t: Tunnel,
) -> Result<Tunnel, LoadError> {
    if dco && !is_aead(cipher) {
        return Err(failed(format!(
            "OpenVPN DCO takes AEAD ciphers only (AES-GCM, CHACHA20-POLY1305), not {cipher}"
        )));
    }
    let ovpn = progs
        .openvpn
        .as_deref()
        .ok_or_else(|| failed("openvpn not found"))?;
    if !lab.path("client.crt").exists() {
        let openssl = progs
            .openssl
            .as_deref()
            .ok_or_else(|| failed("openssl not found"))?;
        make_certs(openssl, &lab.dir).map_err(failed)?;
    }
    let ifs = [
        lab::if_name(lab.pid, 'o', SERVER),
        lab::if_name(lab.pid, 'o', CLIENT),
    ];
    let auth = if cipher == "none" {
        "none"
    } else {
        LEGACY_AUTH
    };
    let mut logs = Vec::new();
    for end in [SERVER, CLIENT] {
        let peer = 1 - end;
        let f = |n: &str| lab.path(n).to_string_lossy().to_string();
        let (ca, crt, key) = (
            f("ca.crt"),
            f(&format!("{}.crt", ENDS[end])),
            f(&format!("{}.key", ENDS[end])),
        );
        let o = ovpn.to_string_lossy().to_string();
        let mut argv: Vec<&str> = vec![
            &o,
            "--dev-type",
            "tun",
            "--dev",
            &ifs[end],
            "--proto",
            "udp",
            "--ca",
            &ca,
            "--cert",
            &crt,
            "--key",
            &key,
            "--data-ciphers",
            cipher,
            "--data-ciphers-fallback",
            cipher,
            "--auth",
            auth,
            "--reneg-bytes",
            "0",
            "--reneg-sec",
            "0",
            "--ifconfig",
            OVPN_ADDR[end],
            OVPN_ADDR[peer],
            "--verb",
            "3",
            "--mute-replay-warnings",
        ];
        // OpenVPN 2.6 offloads by itself wherever it can: user space must say no.
        if !dco {
            argv.push("--disable-dco");
        }
        if end == SERVER {
            argv.extend([
                "--tls-server",
                "--dh",
                "none",
                "--local",
                VETH_ADDR[SERVER],
                "--lport",
                OVPN_PORT,
            ]);
        } else {
            argv.extend([
                "--tls-client",
                "--remote",
                VETH_ADDR[SERVER],
                OVPN_PORT,
                "--nobind",
                "--verify-x509-name",
                "server",
                "name",
            ]);
        }
        let log = lab.path(&format!(
            "openvpn-{}-{}.log",
            ENDS[end],
            cipher.to_ascii_lowercase()
        ));
        let env = progs
            .openssl_build
            .as_ref()
            .map(|b| b.env())
            .unwrap_or_default();
        let child = lab::spawn_in_ns_with(&t.guard, &lab.ns[end], &argv, &env, &log, "openvpn")
            .map_err(failed)?;
        t.procs.push((ENDS[end].into(), child.id() as i32));
        t.children.push(child);
        logs.push(log);
    }
    for end in [SERVER, CLIENT] {
        let log = logs[end].clone();
        // The handshake's public-key work runs first: an emulated guest CPU on a busy host
        // takes tens of seconds for it.
        let res = wait_for(
            &mut t.children[end],
            Duration::from_secs(60),
            "openvpn",
            || {
                std::fs::read_to_string(&log)
                    .map(|s| s.contains("Initialization Sequence Completed"))
                    .unwrap_or(false)
            },
        );
        if let Err(LoadError::Failed(m)) = res {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let gist = text
                .lines()
                .rev()
                .find(|l| l.to_ascii_lowercase().contains("error"))
                .map(str::to_string)
                .unwrap_or_else(|| super::iperf::last_line(&text));
            return Err(failed(format!("{} {m}: {gist}", ENDS[end])));
        }
        res?;
    }
    // The data channel line follows "Initialization Sequence Completed" closely.
    let mut negotiated = None;
    for _ in 0..100 {
        negotiated = std::fs::read_to_string(&logs[SERVER])
            .ok()
            .and_then(|s| data_channel(&s));
        if negotiated.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if let Some(n) = &negotiated {
        if !negotiated_matches(n, cipher) {
            return Err(failed(format!(
                "asked for data cipher {cipher}, OpenVPN negotiated {n}"
            )));
        }
    }
    // On an --openssl build, both ends must have mapped it: otherwise the tunnel
    // would be measured on another library.
    if let Some(build) = &progs.openssl_build {
        for (end, pid) in &t.procs {
            t.openssl_build = Some(
                build
                    .check_maps(*pid, &format!("the {end} openvpn"))
                    .map_err(failed)?,
            );
        }
    }
    if dco {
        check_dco(lab, &logs, &ifs).map_err(failed)?;
        t.kernel = true;
    }
    t.negotiated = negotiated;
    t.implementation = progs.openvpn_version.clone();
    t.server_addr = OVPN_ADDR[SERVER].into();
    t.ifname = ifs;
    t.notes.push(if dco {
        "OpenVPN data channel in the kernel (ovpn-dco: \"DCO device ... opened\", link kind ovpn-dco), UDP between the namespaces; its CPU time is in softirq and the ovpn-crypto kworkers, whose time is tunnel_cpu_s".into()
    } else {
        "OpenVPN data channel in user space (--disable-dco), UDP between the namespaces".into()
    });
    if cipher == "none" {
        t.notes
            .push("no encryption and no authentication: the ceiling for the crypto share".into());
    }
    Ok(t)
}

/// DCO really in use: both ends' logs say the DCO device was opened, and both tunnel
/// links are of kind ovpn-dco (not tun); otherwise why not.
fn check_dco(lab: &Lab, logs: &[PathBuf], ifs: &[String; 2]) -> anyhow::Result<()> {
    for end in [SERVER, CLIENT] {
        let log = std::fs::read_to_string(&logs[end]).unwrap_or_default();
        let opened = log
            .lines()
            .any(|l| l.contains("DCO device") && l.contains("opened"));
        if !opened {
            let said = log
                .lines()
                .find(|l| l.to_ascii_lowercase().contains("dco"))
                .map(|l| format!(": OpenVPN said \"{}\"", l.trim()))
                .unwrap_or_default();
            let k = crate::kernel::offload_paths(&crate::kernel::KernelConfig::read());
            return Err(anyhow!(
                "OpenVPN DCO requested but not used on the {} end{said} (ovpn-dco: {})",
                ENDS[end],
                k.ovpn_dco.reason
            ));
        }
        let kind = link_kind(&lab.ns[end], &ifs[end]);
        if kind.as_deref() != Some("ovpn-dco") {
            return Err(anyhow!(
                "OpenVPN DCO requested, but {} is a {} link, not ovpn-dco",
                ifs[end],
                kind.as_deref().unwrap_or("missing")
            ));
        }
    }
    Ok(())
}

/// `ip -d -j link show`'s linkinfo kind of one interface ("ovpn-dco", "tun", ...).
fn link_kind(ns: &str, ifname: &str) -> Option<String> {
    let out = run(&["ip", "-n", ns, "-d", "-j", "link", "show", "dev", ifname]).ok()?;
    let v: serde_json::Value = serde_json::from_str(&out).ok()?;
    v[0]["linkinfo"]["info_kind"].as_str().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_follows_the_cipher() {
        let s = |c: &str| Spec::OpenVpn {
            cipher: c.into(),
            dco: false,
        };
        assert_eq!(s("AES-128-GCM").auth(), None);
        assert_eq!(s("CHACHA20-POLY1305").auth(), None);
        assert_eq!(s("AES-256-CBC").auth().as_deref(), Some("HMAC-SHA1"));
        assert_eq!(s("none").auth().as_deref(), Some("none"));
        assert_eq!(s("AES-256-CBC").label(), "openvpn AES-256-CBC+HMAC-SHA1");
    }

    #[test]
    fn negotiated_cipher_from_the_log() {
        let log = "x\n2026-11-22 12:27:32 Data Channel: cipher 'AES-128-GCM', peer-id: 0\n";
        let l = data_channel(log).unwrap();
        assert!(negotiated_matches(&l, "AES-128-GCM"));
        assert!(!negotiated_matches(&l, "AES-256-GCM"));
        let l = data_channel("Data Channel: cipher '[null-cipher]', auth '[null-digest]'").unwrap();
        assert!(negotiated_matches(&l, "none"));
    }
}
