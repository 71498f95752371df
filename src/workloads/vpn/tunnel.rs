//! The tunnels between the two namespaces: none (the bare veth), WireGuard (kernel or
//! wireguard-go) and OpenVPN (TLS mode, one data cipher at a time, or none; its data
//! channel in user space or in the kernel's ovpn-dco module).

use super::iperf::{wait_for, LoadError};
use crate::sys::guard::{Guard, Resource};
use crate::workloads::e2e::lab::{self, run, Lab, Place, CLIENT, ENDS, SERVER};
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
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
    /// The kernel's ESP in tunnel mode (super::ipsec), with an OpenVPN cipher name.
    Ipsec {
        cipher: String,
        spread: super::ipsec::Spread,
        /// --ipsec-driver: the /proc/crypto driver asked for (None: the kernel's choice).
        driver: Option<String>,
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
    /// The kernel work queues that do this tunnel's crypto when the kernel carries it, by
    /// their kworker names for interface `ifname`: where its CPU time is seen. IPsec has
    /// none: ESP runs in the softirq of the CPU that received the packet.
    pub fn crypto_queues(&self, ifname: &str) -> Vec<String> {
        match self {
            Spec::WireGuard { .. } => vec![format!("wg-crypt-{ifname}")],
            Spec::OpenVpn { dco: true, .. } => vec![format!("ovpn-crypto-wq-{ifname}")],
            Spec::Bare | Spec::OpenVpn { .. } | Spec::Ipsec { .. } => Vec::new(),
        }
    }

    pub fn tunnel(&self) -> &'static str {
        match self {
            Spec::Bare => "none",
            Spec::WireGuard { .. } => "wireguard",
            Spec::OpenVpn { dco: false, .. } => "openvpn",
            Spec::OpenVpn { dco: true, .. } => "openvpn-dco",
            Spec::Ipsec { .. } => "ipsec",
        }
    }

    pub fn cipher(&self) -> String {
        match self {
            Spec::Bare => "none".into(),
            Spec::WireGuard { .. } => WIREGUARD_CIPHER.into(),
            Spec::OpenVpn { cipher, .. } | Spec::Ipsec { cipher, .. } => cipher.clone(),
        }
    }

    /// The packet authentication beside the cipher: None for AEADs (the tag is the
    /// authentication) and for the bare veth.
    pub fn auth(&self) -> Option<String> {
        match self {
            Spec::OpenVpn { cipher, .. } if cipher == "none" => Some("none".into()),
            Spec::OpenVpn { cipher, .. } if !is_aead(cipher) => Some(format!("HMAC-{LEGACY_AUTH}")),
            Spec::Ipsec { cipher, .. } if !is_aead(cipher) => Some(super::ipsec::AUTH.into()),
            _ => None,
        }
    }

    /// The record's ipsec_spread: None for other tunnels.
    pub fn ipsec_spread(&self) -> Option<String> {
        match self {
            Spec::Ipsec { spread, .. } => Some(spread.name().into()),
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
            Spec::Ipsec {
                cipher,
                spread,
                driver,
            } => super::ipsec::label(cipher, self.auth(), *spread, driver.as_deref()),
        }
    }
}

/// Paths and versions of the programs a tunnel needs.
#[derive(Clone, Debug, Default)]
pub struct Programs {
    pub iperf3: String,
    /// irtt, for the round trips; without it they are not measured (said in the notes).
    pub irtt: Option<PathBuf>,
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
    /// The interface that carries each end's tunnel packets (the veth in the lab).
    pub outer_if: [String; 2],
    /// The tunnel's own processes: (end, pid).
    pub procs: Vec<(String, i32)>,
    children: Vec<Child>,
    /// Kernel WireGuard or OpenVPN DCO: CPU time can only be approximated from their
    /// crypto kworkers.
    pub kernel: bool,
    /// What the daemons said they negotiated (OpenVPN's "Data Channel" line).
    pub negotiated: Option<String>,
    /// IPsec: the crypto driver the SAs bound, from /proc/crypto, and how it is known.
    pub kernel_driver: Option<crate::kernel::BoundDriver>,
    /// IPsec: the SAs' SPIs, [server to client, client to server].
    pub sa_spis: Option<[u32; 2]>,
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
    let places = [lab.place(SERVER), lab.place(CLIENT)];
    let mut t = Tunnel::new(spec, &places);
    match spec {
        Spec::Bare => {}
        Spec::WireGuard { kernel } => {
            let wg = progs.wg.as_deref().ok_or_else(|| failed("wg not found"))?;
            let keys = [SERVER, CLIENT]
                .map(|end| wg_keys(wg, &lab.dir, &format!("wg-{}", ENDS[end])).map_err(failed));
            let [server_key, client_key] = keys;
            let keys = [server_key?, client_key?];
            for p in &places {
                let peer_public = &keys[1 - p.end].1;
                wireguard_end(&mut t, p, progs, *kernel, &keys[p.end].0, peer_public, true)?;
            }
            wireguard_done(&mut t, progs, *kernel);
        }
        Spec::OpenVpn { cipher, dco } => {
            if !lab.dir.join("client.crt").exists() {
                let openssl = progs
                    .openssl
                    .as_deref()
                    .ok_or_else(|| failed("openssl not found"))?;
                make_certs(openssl, &lab.dir).map_err(failed)?;
            }
            let mut logs = Vec::new();
            for p in &places {
                logs.push(openvpn_start(&mut t, p, progs, cipher, *dco)?);
            }
            for (i, p) in places.iter().enumerate() {
                openvpn_wait(&mut t, i, p, &logs[i])?;
            }
            openvpn_done(&mut t, &places[SERVER], &logs[SERVER], progs)?;
            if *dco {
                for (p, log) in places.iter().zip(&logs) {
                    check_dco(p, log, &t.ifname[p.end]).map_err(failed)?;
                }
            }
        }
        Spec::Ipsec {
            cipher,
            spread,
            driver,
        } => {
            use super::ipsec;
            let binding =
                ipsec::prepare(&t.guard, cipher, *spread, driver.as_deref()).map_err(failed)?;
            let keys = ipsec::Keys::new(cipher).map_err(failed)?;
            for p in &places {
                ipsec::end_up(&t.guard, p, cipher, &keys, lab::VETH_ADDR).map_err(failed)?;
            }
            ipsec_done(&mut t, &binding, &keys)?;
        }
    }
    Ok(t)
}

/// IPsec's ends are up: the driver bound here, proven, and the SAs whose counters prove
/// the points.
pub fn ipsec_done(
    t: &mut Tunnel,
    binding: &super::ipsec::Binding,
    keys: &super::ipsec::Keys,
) -> Result<(), LoadError> {
    let (bound, note) = binding.proven().map_err(failed)?;
    t.kernel = true;
    t.implementation = "kernel".into();
    t.kernel_driver = Some(bound);
    t.sa_spis = Some(keys.spis);
    t.notes.push(note);
    Ok(())
}

impl Tunnel {
    /// A tunnel not up yet, whose ends run at `places` (both, or one with `vpn --dut`):
    /// the bare veth until its ends are brought up.
    pub fn new(spec: &Spec, places: &[Place]) -> Tunnel {
        let mut ifname = [String::new(), String::new()];
        let mut outer_if = [String::new(), String::new()];
        let mut server_addr = String::new();
        for p in places {
            ifname[p.end] = p.outer_if.clone();
            outer_if[p.end] = p.outer_if.clone();
            // iperf3's server listens at the server end of the tunnel, or of the veth.
            server_addr = match spec {
                Spec::Bare if p.end == SERVER => p.addr.clone(),
                Spec::Bare => p.peer.clone(),
                Spec::WireGuard { .. } => WG_ADDR[SERVER].into(),
                Spec::OpenVpn { .. } => OVPN_ADDR[SERVER].into(),
                Spec::Ipsec { .. } => super::ipsec::INNER_ADDR[SERVER].into(),
            };
        }
        let mut t = Tunnel {
            guard: Guard::new(),
            spec: spec.clone(),
            implementation: "veth".into(),
            server_addr,
            ifname,
            outer_if,
            procs: Vec::new(),
            children: Vec::new(),
            kernel: false,
            negotiated: None,
            kernel_driver: None,
            sa_spis: None,
            openssl_build: None,
            notes: Vec::new(),
        };
        if *spec == Spec::Bare {
            t.notes
                .push("bare veth: no tunnel process; the kernel's work is in softirq_s".into());
        }
        t
    }
}

fn failed(e: impl std::fmt::Display) -> LoadError {
    LoadError::Failed(e.to_string())
}

/// `wg genkey` and `wg pubkey`: a fresh key pair, the private key in a 0600 file.
pub fn wg_keys(wg: &Path, dir: &Path, name: &str) -> anyhow::Result<(PathBuf, String)> {
    use std::io::Write;
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
    write_private(&path, &format!("{private}\n"))?;
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

/// Writes a key (or anything secret) readable by us alone (0600).
pub fn write_private(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
    f.write_all(text.as_bytes())
        .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))
}

/// One end of a WireGuard tunnel at `p`: its link (kernel) or wireguard-go, its key, the
/// peer and addresses. `to_peer`: give the peer's endpoint (the other end then learns
/// ours from the first packet).
pub fn wireguard_end(
    t: &mut Tunnel,
    p: &Place,
    progs: &Programs,
    kernel: bool,
    key: &Path,
    peer_public: &str,
    to_peer: bool,
) -> Result<(), LoadError> {
    let wg = progs.wg.as_deref().ok_or_else(|| failed("wg not found"))?;
    let end = p.end;
    let ns = p.ns();
    let ifname = p.if_name('w');
    if kernel {
        lab::ip(ns, &["link", "add", &ifname, "type", "wireguard"]).map_err(failed)?;
        t.guard.track(Resource::Undo {
            what: format!("wireguard link {ifname}"),
            argv: lab::ip_argv(ns, &["link", "del", &ifname]),
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
        let log = p.path(&format!("wireguard-go-{}.log", ENDS[end]));
        let go_s = go.to_string_lossy();
        let mut child = lab::spawn_in_ns(
            &t.guard,
            ns,
            &[&go_s, "-f", &ifname],
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
            let gist = super::iperf::last_line(&std::fs::read_to_string(&log).unwrap_or_default());
            return Err(failed(format!("{m}: {gist}")));
        }
        ready?;
    }
    let key = key.to_string_lossy().to_string();
    let wg_s = wg.to_string_lossy();
    let allowed = format!("{}/32", WG_ADDR[1 - end]);
    let endpoint = format!("{}:{WG_PORT}", p.peer);
    let mut argv: Vec<&str> = vec![
        &wg_s,
        "set",
        &ifname,
        "private-key",
        &key,
        "listen-port",
        WG_PORT,
        "peer",
        peer_public,
        "allowed-ips",
        &allowed,
    ];
    if to_peer {
        argv.extend(["endpoint", &endpoint]);
    }
    let status = lab::in_ns(ns, &argv)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| failed(format!("wg set: {e}")))?;
    if !status.status.success() {
        return Err(failed(format!(
            "wg set {ifname} failed: {}",
            super::iperf::last_line(&String::from_utf8_lossy(&status.stderr))
        )));
    }
    let addr = format!("{}/24", WG_ADDR[end]);
    lab::ip(ns, &["addr", "add", &addr, "dev", &ifname]).map_err(failed)?;
    lab::ip(ns, &["link", "set", &ifname, "up"]).map_err(failed)?;
    t.ifname[end] = ifname;
    Ok(())
}

/// The WireGuard tunnel's description, once its ends are up.
pub fn wireguard_done(t: &mut Tunnel, progs: &Programs, kernel: bool) {
    t.kernel = kernel;
    t.implementation = if kernel {
        "kernel".into()
    } else {
        progs.wireguard_go_version.clone()
    };
    t.notes.push(if kernel {
        "kernel WireGuard: its CPU time is in softirq (not attributable to the tunnel alone; see softirq_s) and in the wg-crypt kworkers, whose time is tunnel_cpu_s (approximate: a kworker's name shows the last work queue it ran)".into()
    } else {
        "wireguard-go: WireGuard in user space".into()
    });
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

/// Starts one OpenVPN end at `p` (its certificates in `p.dir`); returns its log, which
/// `openvpn_wait` reads.
pub fn openvpn_start(
    t: &mut Tunnel,
    p: &Place,
    progs: &Programs,
    cipher: &str,
    dco: bool,
) -> Result<PathBuf, LoadError> {
    if dco && !is_aead(cipher) {
        return Err(failed(format!(
            "OpenVPN DCO takes AEAD ciphers only (AES-GCM, CHACHA20-POLY1305), not {cipher}"
        )));
    }
    let ovpn = progs
        .openvpn
        .as_deref()
        .ok_or_else(|| failed("openvpn not found"))?;
    let end = p.end;
    let ifname = p.if_name('o');
    let auth = if cipher == "none" {
        "none"
    } else {
        LEGACY_AUTH
    };
    let peer = 1 - end;
    let f = |n: &str| p.path(n).to_string_lossy().to_string();
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
        &ifname,
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
            &p.addr,
            "--lport",
            OVPN_PORT,
        ]);
    } else {
        argv.extend([
            "--tls-client",
            "--remote",
            &p.peer,
            OVPN_PORT,
            "--nobind",
            "--verify-x509-name",
            "server",
            "name",
        ]);
    }
    let log = p.path(&format!(
        "openvpn-{}-{}.log",
        ENDS[end],
        cipher.to_ascii_lowercase()
    ));
    let env = progs
        .openssl_build
        .as_ref()
        .map(|b| b.env())
        .unwrap_or_default();
    let child =
        lab::spawn_in_ns_with(&t.guard, p.ns(), &argv, &env, &log, "openvpn").map_err(failed)?;
    t.procs.push((ENDS[end].into(), child.id() as i32));
    t.children.push(child);
    t.ifname[end] = ifname;
    Ok(log)
}

/// Waits until the OpenVPN end started `i`-th says it is up, or says why not.
pub fn openvpn_wait(t: &mut Tunnel, i: usize, p: &Place, log: &Path) -> Result<(), LoadError> {
    // The handshake's public-key work runs first: an emulated guest CPU on a busy host
    // takes tens of seconds for it, and more than a minute beside a build (it failed
    // twice at 60 s so): four minutes there, one on real hardware.
    let emulated = crate::environment::emulation(
        &std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default(),
    )
    .is_some();
    let res = wait_for(
        &mut t.children[i],
        Duration::from_secs(if emulated { 240 } else { 60 }),
        "openvpn",
        || {
            std::fs::read_to_string(log)
                .map(|s| s.contains("Initialization Sequence Completed"))
                .unwrap_or(false)
        },
    );
    if let Err(LoadError::Failed(m)) = res {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let gist = text
            .lines()
            .rev()
            .find(|l| l.to_ascii_lowercase().contains("error"))
            .map(str::to_string)
            .unwrap_or_else(|| super::iperf::last_line(&text));
        return Err(failed(format!("{} {m}: {gist}", ENDS[p.end])));
    }
    res
}

/// What the OpenVPN tunnel negotiated, checked, once both ends are up: the server end
/// at `server` with its log (this host's); its notes and description.
pub fn openvpn_done(
    t: &mut Tunnel,
    server: &Place,
    server_log: &Path,
    progs: &Programs,
) -> Result<(), LoadError> {
    let Spec::OpenVpn { cipher, dco } = t.spec.clone() else {
        return Ok(());
    };
    // The data channel line follows "Initialization Sequence Completed" closely.
    let mut negotiated = None;
    for _ in 0..100 {
        negotiated = std::fs::read_to_string(server_log)
            .ok()
            .and_then(|s| data_channel(&s));
        if negotiated.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    if let Some(n) = &negotiated {
        if !negotiated_matches(n, &cipher) {
            return Err(failed(format!(
                "asked for data cipher {cipher}, OpenVPN negotiated {n}"
            )));
        }
    }
    // On an --openssl build, every end here must have mapped it: otherwise the tunnel
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
    t.kernel = dco;
    t.negotiated = negotiated;
    t.implementation = progs.openvpn_version.clone();
    let between = if server.ns.is_some() {
        "between the namespaces"
    } else {
        "between the controller and the DUT"
    };
    t.notes.push(if dco {
        format!("OpenVPN data channel in the kernel (ovpn-dco: \"DCO device ... opened\", link kind ovpn-dco), UDP {between}; its CPU time is in softirq and the ovpn-crypto kworkers, whose time is tunnel_cpu_s")
    } else {
        format!("OpenVPN data channel in user space (--disable-dco), UDP {between}")
    });
    if cipher == "none" {
        t.notes
            .push("no encryption and no authentication: the ceiling for the crypto share".into());
    }
    Ok(())
}

/// DCO really in use at one end: its log says the DCO device was opened, and its tunnel
/// link is of kind ovpn-dco (not tun); otherwise why not.
pub fn check_dco(p: &Place, log: &Path, ifname: &str) -> anyhow::Result<()> {
    let log = std::fs::read_to_string(log).unwrap_or_default();
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
            ENDS[p.end],
            k.ovpn_dco.reason
        ));
    }
    let kind = link_kind(p.ns(), ifname);
    if kind.as_deref() != Some("ovpn-dco") {
        let kind = kind.map_or("of no kind (or missing)".into(), |k| format!("a {k} link"));
        return Err(anyhow!(
            "OpenVPN DCO requested, but {ifname} is {kind}, not ovpn-dco"
        ));
    }
    Ok(())
}

/// `ip -d -j link show`'s linkinfo kind of one interface ("ovpn-dco", "tun", ...).
fn link_kind(ns: Option<&str>, ifname: &str) -> Option<String> {
    let out = lab::ip(ns, &["-d", "-j", "link", "show", "dev", ifname]).ok()?;
    let v: serde_json::Value = serde_json::from_str(&out).ok()?;
    v[0]["linkinfo"]["info_kind"].as_str().map(str::to_string)
}

#[cfg(test)]
mod tests;
