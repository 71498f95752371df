//! Runs the real `cryptobench ssh`: OpenSSH's sshd and Dropbear in a namespace, OpenSSH's
//! ssh in another, short transfers (64 MiB: a data phase of a few of /proc's ticks at
//! the least, for the busiest thread). Speeds are never asserted; that the bytes
//! went through each server with every default cipher it offers, the negotiation's proof,
//! the limit, the refusals and that nothing is left behind (after a run and after
//! SIGTERM) are. The measuring tests need root, sshd, ssh and dropbear (CI runs as root,
//! after scripts/deps/ssh.sh); elsewhere they say so.

mod common;
use common::{run, stderr};

use serde_json::Value;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const DEFAULT_CIPHERS: [&str; 5] = [
    "chacha20-poly1305@openssh.com",
    "aes128-gcm@openssh.com",
    "aes256-gcm@openssh.com",
    "aes128-ctr",
    "aes256-ctr",
];

/// Root and both servers and the client installed; else a skip (a failure in CI).
fn can_run() -> bool {
    if !common::is_root() {
        common::skip("cryptobench ssh needs root (CI runs the tests as root)");
        return false;
    }
    for p in ["sshd", "ssh", "ssh-keygen", "dropbear", "dropbearkey"] {
        if !common::has_program(p) {
            common::skip(&format!("{p} is missing: run scripts/deps/ssh.sh"));
            return false;
        }
    }
    true
}

/// What a run with this PID could have left behind: the lab's namespaces, its temp dirs,
/// any process whose command line names them (sshd, dropbear and ssh name the run's keys).
fn leftovers(pid: u32) -> Vec<String> {
    let mut out = Vec::new();
    let ns = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .unwrap();
    let marks = [format!("cbench-vpn-{pid}-"), format!("cbench-ssh-{pid}-")];
    for l in String::from_utf8_lossy(&ns.stdout).lines() {
        if marks.iter().any(|m| l.starts_with(m.as_str())) {
            out.push(format!("namespace {l}"));
        }
    }
    for e in std::fs::read_dir(std::env::temp_dir())
        .into_iter()
        .flatten()
        .flatten()
    {
        let n = e.file_name().to_string_lossy().to_string();
        if marks.iter().any(|m| n.starts_with(m.as_str())) {
            out.push(format!("temp dir {n}"));
        }
    }
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(raw) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&raw).replace('\0', " ");
        if marks.iter().any(|m| cmd.contains(m.as_str())) {
            out.push(format!(
                "process {}: {cmd}",
                e.file_name().to_string_lossy()
            ));
        }
    }
    out
}

/// Waits (up to `secs`) until nothing of run `pid` is left; what is left otherwise.
fn settled(pid: u32, secs: u64) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let left = leftovers(pid);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A run in the background, its stdout and stderr drained as they come (a run's JSON
/// outgrows a pipe's buffer: undrained, it would block).
struct Running {
    child: Child,
    out: std::thread::JoinHandle<Vec<u8>>,
    err: std::thread::JoinHandle<Vec<u8>>,
}

fn spawn(args: &[&str]) -> Running {
    let mut child = common::command()
        .arg("ssh")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    let drain = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut b = Vec::new();
            let _ = r.read_to_end(&mut b);
            b
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    Running { child, out, err }
}

/// A results file of this test process, not there yet.
fn results_file(name: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!(
        "cryptobench-ssh-{name}-{}.jsonl",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&p);
    p
}

/// A run whose records go to `out` as JSON Lines and to stdout as one JSON document.
fn spawn_kept(out: &std::path::Path, args: &[&str]) -> Running {
    let mut a = args.to_vec();
    a.extend(["--format", "json", "--no-store", "--output"]);
    a.push(out.to_str().unwrap());
    spawn(&a)
}

/// Its output once it exits, within `secs` (else it is killed and the test fails).
fn wait_exit(r: Running, secs: u64) -> std::process::Output {
    let Running {
        mut child,
        out,
        err,
    } = r;
    let deadline = Instant::now() + Duration::from_secs(secs);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("cryptobench ssh still ran after {secs} s: killed");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    std::process::Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

#[test]
fn bad_ssh_input_is_refused_in_one_line() {
    common::refused_in_one_line(&[
        (&["ssh", "--macs", "none"], "invalid --macs 'none'"),
        (
            &["ssh", "--macs", "hmac-sha1,none"],
            "invalid --macs 'none'",
        ),
        (&["ssh", "--ciphers", "none"], "invalid --ciphers 'none'"),
        (&["ssh", "--bytes", "lots"], "invalid --bytes 'lots'"),
        (&["ssh", "--bytes", "0"], "invalid --bytes '0'"),
        (
            &["ssh", "--direction", "sideways"],
            "invalid --direction 'sideways'",
        ),
        (
            &["ssh", "--server", "tinyssh"],
            "invalid --server 'tinyssh'",
        ),
        (&["ssh", "--ciphers", "aes128-ctr;id"], "invalid --ciphers"),
        (&["ssh", "--rounds", "0"], "--rounds"),
        (&["ssh", "--time", "0.5"], "--time"),
        (
            &["ssh", "--profile-dir", "/proc/cryptobench-no-such-dir"],
            "--profile-dir",
        ),
        // With --dut, refused before connecting (192.0.2.1 is unreachable).
        (
            &["ssh", "--dut", "ssh://root@192.0.2.1", "--profile"],
            "--profile is not offered with --dut",
        ),
        (
            &["ssh", "--dut", "ssh://root@192.0.2.1", "--time", "0.5"],
            "--time",
        ),
        (&["ssh", "--dut-address", "10.0.0.1"], "use it with --dut"),
    ]);
}

/// Without root: refused before anything starts (namespaces need it).
#[test]
fn without_root_ssh_is_refused() {
    let o = if common::is_root() {
        common::unprivileged(common::BIN)
            .args(["ssh", "--bytes", "32m", "--no-store"])
            .output()
            .unwrap()
    } else {
        run(&["ssh", "--bytes", "32m", "--no-store"])
    };
    let e = common::one_line_exit_2(&o, "ssh without root");
    assert!(e.contains("needs root"), "{e}");
}

/// Every default cipher each server offers carries the bytes both ways, the negotiation
/// proven for each point; the ones a server lacks are recorded as not offered.
#[test]
fn each_server_carries_the_bytes_with_every_default_cipher() {
    if !can_run() {
        return;
    }
    let out = results_file("all");
    let child = spawn_kept(
        &out,
        &["--bytes", "64m", "--rounds", "2", "--direction", "both"],
    );
    let pid = child.child.id();
    let o = wait_exit(child, 150);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    let recs = v["records"].as_array().unwrap();
    let excl = v["exclusions"].as_array().unwrap();
    for server in ["openssh", "dropbear"] {
        for c in DEFAULT_CIPHERS {
            for dir in ["up", "down"] {
                let r = recs.iter().find(|r| {
                    r["server"]["name"] == server && r["cipher"] == c && r["direction"] == dir
                });
                let Some(r) = r else {
                    // Only a cipher the server does not offer may be missing, and then
                    // the run says so.
                    let e = excl
                        .iter()
                        .find(|e| e["impl"] == server && e["cipher"] == c && e["direction"] == dir);
                    let e =
                        e.unwrap_or_else(|| panic!("{server} {c} {dir}: no record, no exclusion"));
                    assert_eq!(e["kind"], "not_offered", "{e}");
                    assert!(
                        server == "dropbear" && c.contains("gcm"),
                        "{server} lacks {c}: {e}"
                    );
                    continue;
                };
                let label = r["label"].as_str().unwrap();
                assert_eq!(r["workload"], "ssh");
                assert_eq!(r["bytes"], 64u64 << 20, "{label}");
                assert_eq!(r["rounds"], 2, "{label}");
                assert_eq!(r["samples_bps"].as_array().unwrap().len(), 2, "{label}");
                assert!(r["throughput_bps"].as_f64().unwrap() > 0.0, "{label}");
                assert!(!r["server"]["version"].as_str().unwrap().is_empty());
                // The proof: both directions' kex lines name the cipher (and the MAC).
                let want_from = if server == "openssh" {
                    "server"
                } else {
                    "client"
                };
                assert_eq!(r["negotiated_from"], want_from, "{label}");
                let lines = r["negotiated"].as_array().unwrap();
                assert_eq!(lines.len(), 2, "{label}: {lines:?}");
                let aead = c.contains("gcm") || c.contains("chacha");
                let mac = match aead {
                    true => {
                        assert!(r["mac"].is_null(), "{label}");
                        "<implicit>".to_string()
                    }
                    false => {
                        let want = if server == "openssh" {
                            "hmac-sha2-256-etm@openssh.com"
                        } else {
                            "hmac-sha2-256"
                        };
                        assert_eq!(r["mac"], want, "{label}");
                        want.to_string()
                    }
                };
                for l in lines {
                    let l = l.as_str().unwrap();
                    assert!(
                        l.contains(&format!("cipher: {c} MAC: {mac} ")),
                        "{label}: {l}"
                    );
                }
                // Each end's CPU, its busiest thread, and the limit.
                for end in ["client", "server"] {
                    assert!(
                        r["cpu_s_per_gb_by_end"][end].as_f64().unwrap() > 0.0,
                        "{label} {end}"
                    );
                    assert!(!r["busiest_thread"][end]["name"]
                        .as_str()
                        .unwrap()
                        .is_empty());
                }
                assert!(r["busiest_thread_pct"].as_f64().unwrap() > 0.0, "{label}");
                // OpenSSH's cipher and MAC alone on its libcrypto: a part of the
                // server's CPU per GB, never more; Dropbear's is built in.
                let alone = &r["primitive"];
                match server {
                    "openssh" => {
                        let a = alone["cpu_s_per_gb"].as_f64().unwrap_or(0.0);
                        let s = r["cpu_s_per_gb_by_end"]["server"].as_f64().unwrap();
                        assert!(
                            a > 0.0 && a < s,
                            "{label}: alone {a} against the server's {s}"
                        );
                        assert_eq!(alone["algs"].as_array().unwrap().len(), 2 - aead as usize);
                    }
                    _ => assert!(alone.is_null(), "{label}: {alone}"),
                }
                let kind = r["limit"]["kind"].as_str().unwrap();
                assert!(
                    ["thread", "softirq", "generator", "cpus", "rate_cap", "none"].contains(&kind),
                    "{label}: {kind}"
                );
                assert!(
                    !r["limit"]["evidence"].as_str().unwrap().is_empty(),
                    "{label}"
                );
            }
        }
    }
    // The records file reads back (report checks each record), and nothing is left.
    let rep = run(&["report", out.to_str().unwrap(), "--format", "csv"]);
    assert!(rep.status.success(), "{}", stderr(&rep));
    assert!(
        common::stdout(&rep).contains("openssh"),
        "report shows the ssh records"
    );
    let _ = std::fs::remove_file(&out);
    let left = settled(pid, 10);
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// --profile: one more transfer per point under perf, on both ends. The server's profile
/// (the envelope's) must hold its per-connection processes, which the listener forks
/// after perf attached: without them it would have almost no samples and no crypto.
/// Each end's crypto share is a real part of its CPU with ChaCha20-Poly1305 (OpenSSL's
/// for OpenSSH, libtomcrypt's for Dropbear); the unsampled figures stay the record's.
#[test]
fn profile_gives_each_ends_crypto_share() {
    if !can_run() || !common::perf_usable() {
        return;
    }
    let out = results_file("profile");
    let child = spawn_kept(
        &out,
        &[
            "--bytes",
            "128m",
            "--rounds",
            "1",
            "--direction",
            "up",
            "--ciphers",
            "chacha20-poly1305@openssh.com",
            "--profile",
        ],
    );
    let pid = child.child.id();
    let o = wait_exit(child, 150);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    let recs = v["records"].as_array().unwrap();
    assert_eq!(recs.len(), 2, "one record per server: {}", v["exclusions"]);
    for r in recs {
        let label = r["label"].as_str().unwrap();
        for (end, p) in [("server", &r["profile"]), ("client", &r["client_profile"])] {
            let n = common::check_profile(p);
            // 128 MiB at Dropbear's ~100 MB/s or OpenSSH's ~600: 0.2 s and more of
            // sampled CPU at 1 kHz. (perf -p on the listener gave the server 0: it does
            // not follow the connection's processes, forked after it attached.)
            assert!(n >= 100, "{label} {end}: {n} samples: {p}");
            assert!(
                p["categories"]["chacha20"]["samples"].as_u64().unwrap_or(0) > 0,
                "{label} {end}: no ChaCha20 seen: {p}"
            );
            // Dropbear's libtomcrypt names its ChaCha20 and Poly1305: half its CPU
            // here; OpenSSH's Poly1305 is its own code in a stripped binary (unknown).
            let crypto = p["crypto"]["share"].as_f64().unwrap();
            if r["server"]["name"] == "dropbear" && end == "server" {
                assert!(crypto >= 0.25, "{label} {end}: crypto share {crypto}: {p}");
            }
        }
        assert!(
            r["profile"]["throughput_bps"].as_f64().unwrap() > 0.0,
            "{label}"
        );
        assert_eq!(r["samples_bps"].as_array().unwrap().len(), 1, "{label}");
    }
    let _ = std::fs::remove_file(&out);
    let left = settled(pid, 10);
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// A cipher a server does not offer ends the run before measuring: exit 2, one line
/// with what the server offers; nothing is left behind.
#[test]
fn a_cipher_a_server_lacks_is_refused_with_what_it_offers() {
    if !can_run() {
        return;
    }
    for (server, cipher, offered) in [
        ("dropbear", "aes128-gcm@openssh.com", "aes128-ctr"),
        ("openssh", "rot13-cbc", "aes128-gcm@openssh.com"),
    ] {
        let child = spawn(&[
            "--server",
            server,
            "--ciphers",
            cipher,
            "--bytes",
            "32m",
            "--no-store",
        ]);
        let pid = child.child.id();
        let o = wait_exit(child, 60);
        let e = common::one_line_exit_2(&o, &format!("{server} {cipher}"));
        assert!(
            e.contains(cipher) && e.contains(offered) && e.contains(server),
            "{e}"
        );
        let left = settled(pid, 10);
        assert!(left.is_empty(), "left behind: {left:?}");
    }
    let o = run(&["ssh", "--list"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = common::stdout(&o);
    for want in [
        "openssh",
        "dropbear",
        "chacha20-poly1305@openssh.com",
        "ssh client",
    ] {
        assert!(text.contains(want), "--list names {want}: {text}");
    }
}

/// SIGTERM in the middle of a run: the finished points are kept, the exit is 143, and
/// no namespace, server, client or temp dir is left.
#[test]
fn sigterm_mid_run_keeps_finished_points_and_leaves_nothing() {
    if !can_run() {
        return;
    }
    let out = results_file("sigterm");
    let mut child = spawn_kept(
        &out,
        &[
            "--server",
            "openssh",
            "--bytes",
            "128m",
            "--rounds",
            "1",
            "--direction",
            "up",
        ],
    );
    let pid = child.child.id();
    // Until the first point is kept, and a transfer of the next one is under way.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(&out).unwrap_or_default();
        if text.lines().any(|l| l.contains("\"kind\":\"record\"")) {
            break;
        }
        assert!(
            child.child.try_wait().unwrap().is_none(),
            "finished before the signal"
        );
        assert!(Instant::now() < deadline, "no point finished within 60 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.child.try_wait().unwrap().is_none(),
        "finished before the signal"
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let o = wait_exit(child, 30);
    assert_eq!(o.status.code(), Some(143), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("finished points are printed");
    assert_eq!(v["interrupted"], true);
    assert!(
        !v["records"].as_array().unwrap().is_empty(),
        "the finished point is kept"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.lines()
            .last()
            .unwrap()
            .contains("\"interrupted\":true"),
        "the end line says so"
    );
    let _ = std::fs::remove_file(&out);
    let left = settled(pid, 10);
    assert!(left.is_empty(), "left behind: {left:?}");
}
