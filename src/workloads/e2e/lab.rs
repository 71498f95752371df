//! The test bed of the end-to-end workloads that need a network: two network namespaces
//! joined by a veth pair, every name unique to the run and starting with the guard's
//! PREFIX, all of it owned by one Guard. `vpn --cleanup` (vpn/cleanup.rs) removes what a
//! killed run left.

use crate::sys::guard::{Guard, Resource, PREFIX};
use anyhow::anyhow;
use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// Index of the end that runs the iperf3 server (and the tunnel's listening side).
pub const SERVER: usize = 0;
/// Index of the end that runs the iperf3 client.
pub const CLIENT: usize = 1;
pub const ENDS: [&str; 2] = ["server", "client"];

/// Addresses on the veth pair (the "outer" network of every tunnel).
pub const VETH_ADDR: [&str; 2] = ["10.77.0.1", "10.77.0.2"];

/// Namespace of one end of run `pid`: cbench-vpn-<pid>-srv / -cli.
pub fn netns_name(pid: u32, end: usize) -> String {
    format!("{PREFIX}-vpn-{pid}-{}", ["srv", "cli"][end])
}

/// An interface name of run `pid` (at most 15 bytes for any pid up to 2^22):
/// cbench<pid><kind><s|c>, kind v = veth, w = WireGuard, o = OpenVPN.
pub fn if_name(pid: u32, kind: char, end: usize) -> String {
    format!("{PREFIX}{pid}{kind}{}", ['s', 'c'][end])
}

/// The run PID in "cbench-vpn-<pid>-..." (namespaces, temp dirs).
pub fn owner_of_long_name(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(&format!("{PREFIX}-vpn-"))?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    if digits.is_empty() || !rest[digits.len()..].starts_with('-') {
        return None;
    }
    digits.parse().ok()
}

/// A process's name, or "?" when it is gone.
pub fn comm(pid: i32) -> String {
    crate::sys::procfs::stat(pid).map_or_else(|| "?".into(), |s| s.comm)
}

/// The namespaces of runs that are gone, each removed after what still runs in it (a
/// killed run's daemons, servers and load) is stopped: one line each into `report`, and
/// the namespaces of runs still going into `kept`. Every workload that uses the lab
/// cleans up through this.
pub fn remove_orphans(report: &mut Vec<String>, kept: &mut Vec<String>) {
    let list = run(&["ip", "netns", "list"]).unwrap_or_default();
    for name in list.lines().filter_map(|l| l.split_whitespace().next()) {
        let Some(owner) = owner_of_long_name(name) else {
            continue;
        };
        if crate::sys::guard::run_alive(owner) {
            kept.push(format!("namespace {name} (run {owner} is still going)"));
            continue;
        }
        let pids = run(&["ip", "netns", "pids", name]).unwrap_or_default();
        for pid in pids.lines().filter_map(|p| p.trim().parse::<i32>().ok()) {
            let c = comm(pid);
            crate::sys::guard::stop_pid(pid);
            report.push(format!("stopped process {pid} ({c}) in namespace {name}"));
        }
        match run(&["ip", "netns", "del", name]) {
            Ok(_) => report.push(format!("removed network namespace {name} (and its links)")),
            Err(e) => report.push(format!("could not remove network namespace {name}: {e}")),
        }
    }
}

/// Runs a command to completion; its stdout, or its stderr's gist as the error.
pub fn run(argv: &[&str]) -> anyhow::Result<String> {
    let out = Command::new(argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| anyhow!("cannot run {}: {e}", argv[0]))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let gist = err
            .lines()
            .map(str::trim)
            .rfind(|l| !l.is_empty())
            .unwrap_or("no message");
        Err(anyhow!("`{}` failed: {gist}", argv.join(" ")))
    }
}

/// `ip netns exec NS argv...` (ip execs the program, so the child's PID is the program's);
/// with no namespace (`vpn --dut`: this host's own network), argv itself.
pub fn in_ns(ns: Option<&str>, argv: &[&str]) -> Command {
    match ns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns]).args(argv);
            c
        }
        None => {
            let mut c = Command::new(argv[0]);
            c.args(&argv[1..]);
            c
        }
    }
}

/// `ip -n NS args...`, or `ip args...` in this host's own network.
pub fn ip(ns: Option<&str>, args: &[&str]) -> anyhow::Result<String> {
    let mut argv = vec!["ip"];
    if let Some(ns) = ns {
        argv.extend(["-n", ns]);
    }
    argv.extend_from_slice(args);
    run(&argv)
}

/// The argv of `ip(ns, args)`, for a guard's undo.
pub fn ip_argv(ns: Option<&str>, args: &[&str]) -> Vec<String> {
    let mut argv = vec!["ip".to_string()];
    if let Some(ns) = ns {
        argv.extend(["-n".to_string(), ns.to_string()]);
    }
    argv.extend(args.iter().map(|a| a.to_string()));
    argv
}

/// Starts a program inside a namespace, owned by `guard`, with stdout in `log` and stderr
/// in `err_log` (or `log` too). It gets SIGTERM if we die without cleaning up.
pub fn spawn_in_ns(
    guard: &Guard,
    ns: Option<&str>,
    argv: &[&str],
    log: &Path,
    err_log: Option<&Path>,
    name: &str,
) -> anyhow::Result<Child> {
    spawn_in_ns_env(guard, ns, argv, &[], log, err_log, name)
}

/// `spawn_in_ns` with environment variables, stdout and stderr both in `log` (an OpenSSL
/// build's library path for OpenVPN).
pub fn spawn_in_ns_with(
    guard: &Guard,
    ns: Option<&str>,
    argv: &[&str],
    env: &[(&str, &Path)],
    log: &Path,
    name: &str,
) -> anyhow::Result<Child> {
    spawn_in_ns_env(guard, ns, argv, env, log, None, name)
}

fn spawn_in_ns_env(
    guard: &Guard,
    ns: Option<&str>,
    argv: &[&str],
    env: &[(&str, &Path)],
    log: &Path,
    err_log: Option<&Path>,
    name: &str,
) -> anyhow::Result<Child> {
    let create =
        |p: &Path| File::create(p).map_err(|e| anyhow!("cannot create {}: {e}", p.display()));
    let out = create(log)?;
    let err = match err_log {
        Some(p) => create(p)?,
        None => out
            .try_clone()
            .map_err(|e| anyhow!("cannot create {}: {e}", log.display()))?,
    };
    let mut cmd = in_ns(ns, argv);
    cmd.envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err));
    crate::sys::spawn::spawn(guard, &mut cmd, name, Default::default())
}

/// Byte counters and MTU of one interface.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LinkStats {
    pub rx_bytes: u64,
    pub tx_bytes: u64,
    /// Packets the interface dropped, received and sent (full queues, no buffer).
    pub dropped: u64,
    pub mtu: u32,
}

/// Every interface of a namespace (or of this host's network), from `ip -j -s link show`.
pub fn link_stats(ns: Option<&str>) -> anyhow::Result<BTreeMap<String, LinkStats>> {
    let text = ip(ns, &["-j", "-s", "link", "show"])?;
    parse_link_stats(&text)
}

pub fn parse_link_stats(text: &str) -> anyhow::Result<BTreeMap<String, LinkStats>> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| anyhow!("ip -j link show: not JSON: {e}"))?;
    let mut out = BTreeMap::new();
    for l in v.as_array().into_iter().flatten() {
        let Some(name) = l["ifname"].as_str() else {
            continue;
        };
        let s = &l["stats64"];
        out.insert(
            name.to_string(),
            LinkStats {
                rx_bytes: s["rx"]["bytes"].as_u64().unwrap_or(0),
                tx_bytes: s["tx"]["bytes"].as_u64().unwrap_or(0),
                dropped: s["rx"]["dropped"].as_u64().unwrap_or(0)
                    + s["tx"]["dropped"].as_u64().unwrap_or(0),
                mtu: l["mtu"].as_u64().unwrap_or(0) as u32,
            },
        );
    }
    Ok(out)
}

/// UDP datagrams a namespace dropped because a socket's receive buffer was full
/// (RcvbufErrors in /proc/net/snmp).
pub fn udp_rcvbuf_errors(ns: Option<&str>) -> u64 {
    let out = in_ns(ns, &["cat", "/proc/net/snmp"])
        .stdin(Stdio::null())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    parse_rcvbuf_errors(&out).unwrap_or(0)
}

pub fn parse_rcvbuf_errors(snmp: &str) -> Option<u64> {
    let mut udp = snmp.lines().filter(|l| l.starts_with("Udp:"));
    let (head, vals) = (udp.next()?, udp.next()?);
    let i = head.split_whitespace().position(|h| h == "RcvbufErrors")?;
    vals.split_whitespace().nth(i)?.parse().ok()
}

/// Where one end of a tunnel runs: a namespace of the lab, or this host's own network
/// (`vpn --dut`: the server end on the DUT, the client end on the controller).
#[derive(Clone, Debug)]
pub struct Place {
    /// SERVER or CLIENT.
    pub end: usize,
    /// The namespace; None for this host's own network.
    pub ns: Option<String>,
    /// Private temp dir (0700): keys, certificates, configs and logs.
    pub dir: PathBuf,
    /// The run's PID, in the names of its interfaces.
    pub pid: u32,
    /// This end's address on the outer network, and the other end's.
    pub addr: String,
    pub peer: String,
    /// The interface that carries the tunnel's packets (the lab's veth).
    pub outer_if: String,
}

impl Place {
    pub fn ns(&self) -> Option<&str> {
        self.ns.as_deref()
    }

    pub fn path(&self, file: &str) -> PathBuf {
        self.dir.join(file)
    }

    /// The name of this end's interface of `kind` (see `if_name`).
    pub fn if_name(&self, kind: char) -> String {
        if_name(self.pid, kind, self.end)
    }

    /// Whether this kernel can create a WireGuard link (tried where this end runs).
    pub fn kernel_wireguard(&self) -> bool {
        let name = if_name(self.pid, 'p', self.end);
        let ok = ip(self.ns(), &["link", "add", &name, "type", "wireguard"]).is_ok();
        if ok {
            let _ = ip(self.ns(), &["link", "del", &name]);
        }
        ok
    }

    /// This host's network, seen from the address `peer` is reached at: the interface
    /// and the source address `ip route get` chooses.
    pub fn here(end: usize, dir: PathBuf, peer: &str) -> anyhow::Result<Place> {
        let out = ip(None, &["-j", "route", "get", peer])?;
        let v: serde_json::Value = serde_json::from_str(&out)
            .map_err(|e| anyhow!("ip -j route get {peer}: not JSON: {e}"))?;
        let route = &v[0];
        let (Some(dev), Some(src)) = (route["dev"].as_str(), route["prefsrc"].as_str()) else {
            return Err(anyhow!("no route to {peer} here (ip route get {peer})"));
        };
        Ok(Place {
            end,
            ns: None,
            dir,
            pid: std::process::id(),
            addr: src.to_string(),
            peer: peer.to_string(),
            outer_if: dev.to_string(),
        })
    }
}

pub struct Lab {
    /// Owns the namespaces, the veth pair and the temp dir; dropped last.
    _guard: Guard,
    pub pid: u32,
    /// Private temp dir (0700): keys, certificates, configs and logs.
    pub dir: PathBuf,
    pub ns: [String; 2],
    pub veth: [String; 2],
}

impl Lab {
    /// Two namespaces, a veth pair between them with VETH_ADDR, loopback up.
    pub fn new() -> anyhow::Result<Lab> {
        let guard = Guard::new();
        let pid = std::process::id();
        let dir = guard.temp_dir("vpn")?;
        let ns = [netns_name(pid, SERVER), netns_name(pid, CLIENT)];
        for n in &ns {
            run(&["ip", "netns", "add", n])?;
            guard.track(Resource::Netns(n.clone()));
        }
        let veth = [if_name(pid, 'v', SERVER), if_name(pid, 'v', CLIENT)];
        // Both ends are created inside the namespaces: nothing appears in the root one.
        run(&[
            "ip",
            "link",
            "add",
            &veth[SERVER],
            "netns",
            &ns[SERVER],
            "type",
            "veth",
            "peer",
            "name",
            &veth[CLIENT],
            "netns",
            &ns[CLIENT],
        ])?;
        guard.track(Resource::Undo {
            what: format!("veth {}", veth[SERVER]),
            argv: ["ip", "-n", &ns[SERVER], "link", "del", &veth[SERVER]]
                .map(String::from)
                .to_vec(),
        });
        for end in [SERVER, CLIENT] {
            let n = ns[end].as_str();
            run(&["ip", "-n", n, "link", "set", "lo", "up"])?;
            run(&[
                "ip",
                "-n",
                n,
                "addr",
                "add",
                &format!("{}/24", VETH_ADDR[end]),
                "dev",
                &veth[end],
            ])?;
            run(&["ip", "-n", n, "link", "set", &veth[end], "up"])?;
        }
        Ok(Lab {
            _guard: guard,
            pid,
            dir,
            ns,
            veth,
        })
    }

    /// One end of the lab.
    pub fn place(&self, end: usize) -> Place {
        Place {
            end,
            ns: Some(self.ns[end].clone()),
            dir: self.dir.clone(),
            pid: self.pid,
            addr: VETH_ADDR[end].into(),
            peer: VETH_ADDR[1 - end].into(),
            outer_if: self.veth[end].clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_the_kernel_limit() {
        let max_pid = 4_194_304;
        for end in [SERVER, CLIENT] {
            for k in ['v', 'w', 'o', 'p'] {
                let n = if_name(max_pid, k, end);
                assert!(n.len() <= 15, "{n}");
                assert!(n.starts_with(PREFIX));
            }
            assert!(netns_name(max_pid, end).starts_with(PREFIX));
        }
    }

    #[test]
    fn udp_receive_buffer_errors() {
        let t = "Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors\nUdp: 10 0 4 9 4 0\nUdpLite: InDatagrams\nUdpLite: 0\n";
        assert_eq!(parse_rcvbuf_errors(t), Some(4));
    }

    #[test]
    fn link_stats_from_ip_json() {
        let t = r#"[{"ifindex":1,"ifname":"lo","mtu":65536,"stats64":{"rx":{"bytes":5},"tx":{"bytes":6}}},
                    {"ifindex":2,"ifname":"cbench1vs","mtu":1500,"stats64":{"rx":{"bytes":100,"dropped":2},"tx":{"bytes":200,"dropped":1}}}]"#;
        let s = parse_link_stats(t).unwrap();
        assert_eq!(
            s["cbench1vs"],
            LinkStats {
                rx_bytes: 100,
                tx_bytes: 200,
                dropped: 3,
                mtu: 1500
            }
        );
    }
}
