//! Runs the real `cryptobench vpn`: short real tunnels (about 2 s per point) between two
//! network namespaces. Speeds are never asserted; that traffic went through each tunnel,
//! the records, the crypto share, cleanup after signals and --cleanup are.
//! The tunnel tests need root (CI runs as root); elsewhere they say so and pass.

mod common;
use common::{run, stderr};

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> bool {
    let yes = common::is_root();
    if !yes {
        common::skip("cryptobench vpn needs root (CI runs the tests as root)");
    }
    yes
}

fn temp_file(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("cryptobench-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

fn json_run(args: &[&str]) -> Value {
    let mut a = vec!["vpn"];
    a.extend(args);
    a.extend(["--format", "json"]);
    let o = run(&a);
    assert!(o.status.success(), "{a:?} failed: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("--format json prints one JSON document")
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// Everything a run with this PID could have left behind.
fn leftovers(pid: u32) -> Vec<String> {
    leftovers_in(pid, &std::env::temp_dir())
}

/// `leftovers`, with the run's temp dirs looked for in `tmp`.
fn leftovers_in(pid: u32, tmp: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let ns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    for l in String::from_utf8_lossy(&ns.stdout).lines() {
        if l.starts_with(&format!("cbench-vpn-{pid}-")) {
            out.push(format!("namespace {l}"));
        }
    }
    let links = Command::new("ip")
        .args(["-o", "link", "show"])
        .output()
        .unwrap();
    for l in String::from_utf8_lossy(&links.stdout).lines() {
        if l.contains(&format!("cbench{pid}")) {
            out.push(format!("link {l}"));
        }
    }
    for dir in [tmp.to_path_buf(), PathBuf::from("/var/run/wireguard")] {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let n = e.file_name().to_string_lossy().to_string();
            if n.starts_with(&format!("cbench-vpn-{pid}-"))
                || n.starts_with(&format!("cbench{pid}"))
            {
                out.push(format!("file {}", e.path().display()));
            }
        }
    }
    // Any process whose command line names this run.
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(raw) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&raw).replace('\0', " ");
        if cmd.contains(&format!("cbench-vpn-{pid}-")) || cmd.contains(&format!("cbench{pid}")) {
            out.push(format!(
                "process {}: {cmd}",
                e.file_name().to_string_lossy()
            ));
        }
    }
    out
}

fn netns_pids(ns: &str) -> Vec<i32> {
    let o = Command::new("ip")
        .args(["netns", "pids", ns])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

fn comm(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Waits until a process named `name` runs in the run's server namespace.
fn wait_for_daemon(child: &mut Child, name: &str) -> Vec<i32> {
    let ns = format!("cbench-vpn-{}-srv", child.id());
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let pids: Vec<i32> = netns_pids(&ns)
            .into_iter()
            .filter(|p| comm(*p) == name)
            .collect();
        if !pids.is_empty() {
            return pids;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "cryptobench exited before {name} started"
        );
        assert!(Instant::now() < deadline, "{name} never started");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn signal(child: &Child, sig: nix::sys::signal::Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), sig).unwrap();
}

fn wait_exit(child: &mut Child, secs: u64) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(Instant::now() < deadline, "cryptobench did not stop");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn gone(pid: i32) -> bool {
    // Our grandchildren are reaped by cryptobench, or by init once it is gone.
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    state.is_empty()
        || state
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
}

#[test]
fn bad_input_exits_2_with_one_line() {
    // Each names the flag as the shared parser does (old spellings still accepted).
    let cases: &[(&[&str], &str)] = &[
        (&["vpn", "--streams", "0"], "--streams '0'"),
        (&["vpn", "--streams", "1,129"], "--streams '129'"),
        (&["vpn", "--streams", "1,,4"], "empty item"),
        (&["vpn", "--duration", "0.5"], "--time 0.5"),
        (&["vpn", "--time", "1.5"], "whole seconds"),
        (&["vpn", "--tunnels", "none,l2tp"], "--tunnels 'l2tp'"),
        (
            &["vpn", "--directions", "sideways"],
            "--direction 'sideways'",
        ),
        (&["vpn", "--direction", "up,"], "empty item"),
        (&["vpn", "--format", "openssl"], "offered by speed only"),
        (&["vpn", "--output", "/"], "is a directory"),
        (&["vpn", "--rounds", "0"], "--rounds"),
    ];
    common::refused_in_one_line(cases);
    // An unknown cipher: the one line lists what this OpenVPN supports.
    let o = run(&[
        "vpn",
        "--tunnels",
        "openvpn",
        "--ciphers",
        "AES-128-GCM,ROT13",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(
        e.contains("ROT13") && e.contains("AES-256-GCM") && e.contains("CHACHA20-POLY1305"),
        "{e}"
    );
    // A missing tool: the one line names its package.
    let o = common::command()
        .args(["vpn", "--tunnels", "none"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(
        e.contains("ip not found") && e.contains("package iproute2"),
        "{e}"
    );
    let ip = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"]
        .into_iter()
        .find(|p| Path::new(p).exists());
    if let Some(ip) = ip {
        let dir = temp_file("path");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::symlink(ip, dir.join("ip")).unwrap();
        let o = common::command()
            .args(["vpn", "--tunnels", "none"])
            .env("PATH", &dir)
            .output()
            .unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(
            e.contains("iperf3 not found") && e.contains("package iperf3"),
            "{e}"
        );
    }
}

/// DCO's refusals, where DCO can be asked for but not had: a CBC cipher (DCO takes AEAD
/// only) on any host, and, on a kernel without ovpn-dco, the AEAD point too, with what
/// OpenVPN said and why the module is not there. Nothing measured: exit 1.
#[test]
fn dco_refuses_a_non_aead_cipher_and_a_kernel_without_ovpn_dco() {
    if !root() {
        return;
    }
    let dco: Value = serde_json::from_slice(&run(&["probe", "--format", "json"]).stdout).unwrap();
    let dco = &dco["kernel"]["offload"]["ovpn_dco"];
    let o = run(&[
        "vpn",
        "--tunnels",
        "openvpn-dco",
        "--ciphers",
        "AES-128-GCM,AES-128-CBC",
        "--time",
        "1",
        "--streams",
        "1",
        "--direction",
        "up",
        "--no-store",
    ]);
    // The reasons are in the table's notes (and on stderr when nothing was measured).
    let (out, e) = (common::stdout(&o), stderr(&o));
    assert!(
        out.contains("openvpn-dco AES-128-CBC+HMAC-SHA1: OpenVPN DCO takes AEAD ciphers only (AES-GCM, CHACHA20-POLY1305), not AES-128-CBC"),
        "{out}{e}"
    );
    if dco["usable"] == true {
        // Here the AEAD point is measured (guest_offload checks that it ran in the kernel).
        assert!(o.status.success(), "{out}{e}");
    } else {
        assert_eq!(o.status.code(), Some(1), "{out}{e}");
        let reason = dco["reason"].as_str().unwrap();
        assert!(
            out.contains(
                "openvpn-dco AES-128-GCM: OpenVPN DCO requested but not used on the server end: OpenVPN said"
            ) && out.contains(&format!("(ovpn-dco: {reason})"))
                && e.contains("nothing was measured"),
            "{out}{e}"
        );
    }
}

#[test]
fn every_tunnel_carries_traffic_through_its_interface() {
    if !root() {
        return;
    }
    let out = temp_file("vpn.jsonl");
    let out_s = out.to_string_lossy().to_string();
    // Default tunnels and ciphers: none, WireGuard, OpenVPN x 4 ciphers + none.
    let v = json_run(&[
        "--streams",
        "1",
        "--directions",
        "up",
        "--duration",
        "2",
        "--output",
        &out_s,
    ]);
    assert_eq!(v["schema"], 2);
    assert_eq!(v["interrupted"], false);
    let recs = v["records"].as_array().unwrap();
    let excl = v["exclusions"].as_array().unwrap();
    assert!(excl.is_empty(), "nothing may fail here: {excl:?}");
    let names: Vec<(String, String)> = recs
        .iter()
        .map(|r| {
            (
                r["tunnel"].as_str().unwrap().to_string(),
                r["cipher"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want = [
        ("none", "none"),
        ("wireguard", "CHACHA20-POLY1305"),
        ("openvpn", "AES-128-GCM"),
        ("openvpn", "AES-256-GCM"),
        ("openvpn", "CHACHA20-POLY1305"),
        ("openvpn", "AES-256-CBC"),
        ("openvpn", "none"),
    ];
    assert_eq!(
        names,
        want.map(|(a, b)| (a.to_string(), b.to_string())).to_vec()
    );
    for r in recs {
        let what = format!("{} {}", r["tunnel"], r["cipher"]);
        assert_eq!(r["kind"], "record");
        assert_eq!(r["schema"], 2);
        assert_eq!(r["workload"], "vpn");
        // The envelope: impl is the tunnel, its version what ran it, the label both.
        assert_eq!(r["impl"], r["tunnel"], "{what}");
        let label = r["label"].as_str().unwrap();
        match r["tunnel"].as_str().unwrap() {
            "none" => assert_eq!(label, "veth"),
            "openvpn" => assert!(
                label.starts_with("openvpn ") && label.contains(r["cipher"].as_str().unwrap()),
                "{label}"
            ),
            t => assert_eq!(label, t),
        }
        assert_eq!(r["run_id"], v["environment"]["run_id"]);
        assert_eq!(
            (r["protocol"].as_str(), r["direction"].as_str()),
            (Some("tcp"), Some("up"))
        );
        assert_eq!(r["streams"], 1);
        let bytes = u(&r["bytes"]);
        assert!(
            bytes > 0 && f(&r["throughput_bps"]) > 0.0,
            "{what}: no throughput"
        );
        assert!(r["retransmits"].is_u64(), "{what}");
        assert!(u(&r["mtu"]) >= 1280 && u(&r["outer_mtu"]) >= 1280, "{what}");
        // The traffic went through the tunnel: its interfaces counted at least the payload
        // (plus IP and TCP headers), and the veth carried at least that again.
        let (tx, rx) = (u(&r["tunnel_tx_bytes"]), u(&r["tunnel_rx_bytes"]));
        assert!(
            tx >= bytes && rx >= bytes,
            "{what}: tunnel counted {tx}/{rx} < {bytes}"
        );
        assert!(u(&r["outer_tx_bytes"]) >= tx, "{what}");
        let ifs: Vec<&str> = r["tunnel_if"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        let kind = match r["tunnel"].as_str().unwrap() {
            "none" => 'v',
            "wireguard" => 'w',
            _ => 'o',
        };
        for i in &ifs {
            assert!(i.starts_with("cbench") && i.contains(kind), "{what}: {i}");
        }
        if r["tunnel"] == "none" {
            assert!(
                r["tunnel_cpu_s"].is_null() && r["cpu_user_s"].is_null(),
                "bare veth has no tunnel process"
            );
            continue;
        }
        let (user, sys) = (f(&r["cpu_user_s"]), f(&r["cpu_sys_s"]));
        assert!((user + sys - f(&r["tunnel_cpu_s"])).abs() < 1e-6, "{what}");
        // Encapsulation costs bytes on the veth.
        assert!(
            u(&r["outer_tx_bytes"]) > tx,
            "{what}: no encapsulation overhead"
        );
        assert!(f(&r["tunnel_cpu_s"]) > 0.0, "{what}");
        assert!(f(&r["cpu_s_per_gb"]) > 0.0, "{what}");
        let busiest = f(&r["busiest_thread_cpu_pct"]);
        assert!(
            busiest > 0.0 && busiest <= f(&r["tunnel_cpu_pct"]) + 1e-9,
            "{what}"
        );
        assert!(u(&r["threads_used"]) >= 1, "{what}");
        let threads = r["thread_cpu"].as_array().unwrap();
        assert!(!threads.is_empty(), "{what}");
        assert!((f(&threads[0]["cpu_pct"]) - busiest).abs() < 1e-9, "{what}");
        let procs = r["processes"].as_array().unwrap();
        if r["tunnel"] == "openvpn" {
            assert_eq!(
                r["impl_version"].as_str().unwrap().split(' ').next(),
                Some("OpenVPN")
            );
            assert_eq!(procs.len(), 2, "{what}: one openvpn at each end");
            assert!(procs.iter().all(|p| p["name"] == "openvpn"));
            assert!(r["negotiated"].as_str().is_some(), "{what}");
        } else {
            let imp = r["impl_version"].as_str().unwrap();
            assert!(imp == "kernel" || imp.starts_with("wireguard-go "), "{imp}");
        }
    }
    assert_eq!(
        recs[5]["auth"], "HMAC-SHA1",
        "the legacy cipher runs with HMAC-SHA1"
    );
    assert_eq!(recs[6]["auth"], "none");

    // Crypto share and Amdahl ceiling: one per OpenVPN cipher, against OpenVPN none.
    let none_gb = f(&recs[6]["cpu_s_per_gb"]);
    let shares = v["analysis"]["shares"].as_array().unwrap();
    assert_eq!(shares.len(), 4);
    for (s, r) in shares.iter().zip(&recs[2..6]) {
        assert_eq!(s["cipher"], r["cipher"]);
        let c = f(&r["cpu_s_per_gb"]);
        let share = f(&s["crypto_share"]);
        assert!((share - (1.0 - none_gb / c)).abs() < 1e-9);
        // Not profiled: the per-byte estimate is the share, and says why.
        assert_eq!(
            s["share_source"],
            "per-byte estimate (no profile: run without --profile)"
        );
        assert_eq!(s["per_byte_share"], s["crypto_share"]);
        let speedup = f(&s["max_speedup"]);
        assert!((speedup - 1.0 / (1.0 - share.clamp(0.0, 0.999))).abs() < 1e-9);
        assert!(speedup >= 1.0);
        assert!((f(&s["ceiling_bps"]) - f(&r["throughput_bps"]) * speedup).abs() < 1e-3);
        assert_eq!(s["none_throughput_bps"], recs[6]["throughput_bps"]);
    }

    // The same records, appended as JSON Lines: the environment (with tool versions), one
    // line per point, then the end line.
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2 + recs.len());
    assert_eq!(lines.last().unwrap()["kind"], "end");
    assert_eq!(lines.last().unwrap()["interrupted"], false);
    assert_eq!(lines[0]["kind"], "environment");
    let tools: Vec<&str> = lines[0]["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["impl"].as_str().unwrap())
        .collect();
    for t in ["iperf3", "openvpn", "wg"] {
        assert!(tools.contains(&t), "{t} missing from {tools:?}");
    }
    assert_eq!(&lines[1..=recs.len()], &recs[..]);
    let _ = std::fs::remove_file(&out);
}

#[test]
fn directions_streams_udp_and_formats() {
    if !root() {
        return;
    }
    let v = json_run(&[
        "--tunnels",
        "wireguard",
        "--streams",
        "2",
        "--directions",
        "down",
        "--udp",
        "--duration",
        "2",
    ]);
    let recs = v["records"].as_array().unwrap();
    assert_eq!(recs.len(), 2, "{recs:?}");
    for (r, proto) in recs.iter().zip(["tcp", "udp"]) {
        assert_eq!(r["protocol"], proto);
        assert_eq!(r["direction"], "down");
        assert_eq!(r["streams"], 2);
        assert!(f(&r["throughput_bps"]) > 0.0);
        assert!(u(&r["tunnel_rx_bytes"]) >= u(&r["bytes"]));
    }
    assert!(recs[0]["retransmits"].is_u64() && recs[0]["lost_pct"].is_null());
    assert!(recs[1]["retransmits"].is_null() && recs[1]["lost_pct"].is_f64());
    assert!(v["analysis"]["shares"].as_array().unwrap().is_empty());

    // The other formats, on the bare veth.
    let base = [
        "vpn",
        "--tunnels",
        "none",
        "--streams",
        "1",
        "--directions",
        "up",
        "--duration",
        "1",
    ];
    let mut a = base.to_vec();
    a.extend(["--format", "csv"]);
    let o = run(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = String::from_utf8_lossy(&o.stdout).into_owned();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 2, "{csv}");
    assert!(rows[0].starts_with("workload,tunnel,implementation,cipher"));
    assert!(rows[1].starts_with("vpn,none,veth,none"));
    let mut a = base.to_vec();
    a.extend(["--format", "markdown"]);
    let o = run(&a);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        md.contains("| tunnel | implementation |") && md.contains("| none | veth |"),
        "{md}"
    );
    let o = run(&base);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        table.contains("busiest thread") && table.contains("Tools: "),
        "{table}"
    );
}

#[test]
fn rounds_interleave_tunnels_and_shares_use_medians() {
    if !root() {
        return;
    }
    let v = json_run(&[
        "--tunnels",
        "openvpn",
        "--ciphers",
        "AES-128-GCM,none",
        "--streams",
        "1",
        "--directions",
        "up",
        "--duration",
        "1",
        "--rounds",
        "2",
    ]);
    let recs = v["records"].as_array().unwrap();
    let order: Vec<(&str, u64)> = recs
        .iter()
        .map(|r| (r["cipher"].as_str().unwrap(), u(&r["round"])))
        .collect();
    assert_eq!(
        order,
        [
            ("AES-128-GCM", 1),
            ("none", 1),
            ("AES-128-GCM", 2),
            ("none", 2)
        ]
    );
    let s = &v["analysis"]["shares"][0];
    assert_eq!(s["rounds"], 2);
    let median = |c: &str| {
        let x: Vec<f64> = recs
            .iter()
            .filter(|r| r["cipher"] == c)
            .map(|r| f(&r["cpu_s_per_gb"]))
            .collect();
        (x[0] + x[1]) / 2.0
    };
    assert!((f(&s["cpu_s_per_gb"]) - median("AES-128-GCM")).abs() < 1e-9);
    assert!((f(&s["none_cpu_s_per_gb"]) - median("none")).abs() < 1e-9);
}

fn interrupted_run_leaves_nothing(tunnels: &str, daemon: &str, sig: nix::sys::signal::Signal) {
    let mut child = common::command()
        .args([
            "vpn",
            "--tunnels",
            tunnels,
            "--ciphers",
            "AES-128-GCM,none",
            "--streams",
            "1",
            "--directions",
            "up,down",
            "--duration",
            "3",
            "--format",
            "json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let daemons = wait_for_daemon(&mut child, daemon);
    // Into the first point: iperf3 runs in the client namespace.
    let ns = format!("cbench-vpn-{pid}-cli");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !netns_pids(&ns).into_iter().any(|p| comm(p) == "iperf3") {
        assert!(Instant::now() < deadline, "iperf3 never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "finished before the signal"
    );
    signal(&child, sig);
    let status = wait_exit(&mut child, 30);
    let out = child.wait_with_output().unwrap();
    // 128 + the signal, as a shell reports it (130 for SIGINT, 143 for SIGTERM).
    assert_eq!(status.code(), Some(128 + sig as i32), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("finished points are printed");
    assert_eq!(v["interrupted"], true);
    for d in daemons {
        assert!(gone(d), "{daemon} {d} still runs");
    }
    let left = leftovers(pid);
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn sigint_mid_run_leaves_no_namespace_veth_daemon_or_file() {
    if !root() {
        return;
    }
    interrupted_run_leaves_nothing("openvpn", "openvpn", nix::sys::signal::Signal::SIGINT);
}

#[test]
fn sigterm_mid_run_leaves_nothing_either() {
    if !root() {
        return;
    }
    let daemon = if Path::new("/sys/module/wireguard").exists() {
        // Kernel WireGuard has no daemon: take OpenVPN's.
        return interrupted_run_leaves_nothing(
            "openvpn",
            "openvpn",
            nix::sys::signal::Signal::SIGTERM,
        );
    } else {
        "wireguard-go"
    };
    interrupted_run_leaves_nothing("wireguard", daemon, nix::sys::signal::Signal::SIGTERM);
}

#[test]
fn cleanup_removes_what_a_killed_run_left() {
    if !root() {
        return;
    }
    // A TMPDIR of its own: another test's run starting meanwhile sweeps the dead run's
    // temp dir from the shared one (its owner is gone), and cleanup would find nothing.
    let tmp = std::env::temp_dir().join(format!("cbt-cleanup-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut child = common::command()
        .env("TMPDIR", &tmp)
        .args([
            "vpn",
            "--tunnels",
            "openvpn",
            "--ciphers",
            "none",
            "--streams",
            "1",
            "--directions",
            "up",
            "--duration",
            "5",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    wait_for_daemon(&mut child, "openvpn");
    // A crash: no cleanup at all.
    signal(&child, nix::sys::signal::Signal::SIGKILL);
    let _ = child.wait();
    let ns = format!("cbench-vpn-{pid}-srv");
    // A daemon that outlived it inside its namespace (ours only die with their parent
    // because cryptobench asks the kernel to: this one stands in for one that did not).
    let o = Command::new("sh")
        .args([
            "-c",
            &format!("ip netns exec {ns} sleep 300 >/dev/null 2>&1 & echo $!"),
        ])
        .output()
        .unwrap();
    let stray: i32 = String::from_utf8_lossy(&o.stdout).trim().parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !netns_pids(&ns).contains(&stray) {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !leftovers_in(pid, &tmp).is_empty(),
        "a killed run leaves things behind"
    );

    let cleanup = || {
        common::command()
            .env("TMPDIR", &tmp)
            .args(["vpn", "--cleanup"])
            .output()
            .unwrap()
    };
    let o = cleanup();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(gone(stray), "the stray daemon was stopped");
    assert!(
        text.contains(&format!("removed network namespace cbench-vpn-{pid}-srv")),
        "{text}"
    );
    assert!(
        text.contains(&format!("removed network namespace cbench-vpn-{pid}-cli")),
        "{text}"
    );
    assert!(text.contains(&format!("stopped process {stray}")), "{text}");
    assert!(
        text.contains(&format!("cbench-vpn-{pid}-0")),
        "temp dir: {text}"
    );
    let left = leftovers_in(pid, &tmp);
    assert!(left.is_empty(), "left behind: {left:?}");
    let again = cleanup();
    let text = String::from_utf8_lossy(&again.stdout).into_owned();
    assert!(!text.contains(&format!("cbench-vpn-{pid}")), "{text}");
    std::fs::remove_dir(&tmp).unwrap();
}
