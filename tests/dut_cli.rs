//! `--dut ssh://...` end to end with real components: a DUT network namespace with its own
//! veth address running Debian's sshd (`sshd -D -f <test config>` on a test port), a key
//! pair and known_hosts made here, and the controller in a second namespace. The DUT's
//! processes are pinned to CPU 0, the controller's to the last CPU. Nothing listens
//! outside the namespaces, and each test checks that nothing is left in either.

mod common;

use common::dut_lab::*;
use common::BIN;
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Bad input needs no DUT: exit 2 and one line each.
#[test]
fn bad_dut_input_exits_2_with_one_line() {
    let dir = std::env::temp_dir().join(format!("cbench-dut-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let empty = dir.join("empty");
    std::fs::write(&empty, "# no hosts here\n\n").unwrap();
    let missing = dir.join("missing");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--dut".into(), "http://board".into()],
            "not an ssh:// URL",
        ),
        (
            vec!["--dut".into(), "ssh://root@board:70000".into()],
            "out of range",
        ),
        (vec!["--dut".into(), "ssh://board:0".into()], "out of range"),
        (
            vec!["--dut-file".into(), missing.display().to_string()],
            "give a file of ssh:// URLs",
        ),
        (
            vec!["--dut-file".into(), empty.display().to_string()],
            "names no DUT",
        ),
        (
            vec![
                "--dut".into(),
                "ssh://b".into(),
                "--ssh-option".into(),
                "nokey".into(),
            ],
            "KEY=VALUE",
        ),
    ];
    for cmd in ["speed", "probe", "verify", "tls"] {
        for (args, want) in &cases {
            let o = Command::new(BIN).arg(cmd).args(args).output().unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{cmd} {args:?}: {err}");
            assert_eq!(err.trim().lines().count(), 1, "{cmd} {args:?}: {err}");
            assert!(err.contains(want), "{cmd} {args:?}: {err}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The DUT has no cryptobench: it gets this binary, runs speed, and the records come
/// back into the controller's file and store, marked with the DUT; probe and verify run
/// there too; a --libcrypto that exists only here is refused; nothing is left behind.
#[test]
fn speed_probe_and_verify_run_on_the_dut() {
    if !lab_possible() {
        return;
    }
    let lab = Lab::new(PATH_PLAIN);
    let url = lab.url();
    let out = lab.dir.join("out.jsonl");
    let store = format!("sqlite:{}", lab.dir.join("store.db").display());
    let o = lab.run(&[
        "speed",
        "--dut",
        &url,
        "--impl",
        "openssl",
        "--alg",
        "aes-128-gcm",
        "--direction",
        "enc",
        "--sizes",
        "16,1k",
        "--time",
        "0.05",
        "--format",
        "json",
        "--output",
        out.to_str().unwrap(),
        "--store",
        &store,
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let all = lines(&out);
    let env = all
        .iter()
        .find(|v| v["kind"] == "environment")
        .expect("environment");
    assert_eq!(env["dut"], url.as_str(), "{env}");
    let recs = records(&out);
    assert_eq!(recs.len(), 2, "{} lines", all.len());
    for r in &recs {
        assert_eq!(r["dut"], url.as_str());
        assert_eq!(r["run_id"], env["run_id"]);
        assert!(r["throughput_bps"].as_f64().unwrap() > 0.0);
    }
    assert!(all
        .iter()
        .any(|v| v["kind"] == "end" && v["interrupted"] == false));
    // The agent ran as root's session on the DUT: its command line was the upload's.
    let cmd: Vec<&str> = env["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(cmd[0].contains("/cbench-dut."), "{cmd:?}");
    assert!(
        cmd.contains(&"--agent") && !cmd.contains(&"--output"),
        "{cmd:?}"
    );
    // Stdout: the controller rendered the run.
    let shown: Value = serde_json::from_slice(&o.stdout).expect("json on stdout");
    assert!(shown.to_string().contains("aes-128-gcm"));
    // The store kept it.
    assert_stored(&store, env);
    lab.assert_clean(5);

    // probe: the DUT's facts, as JSON, passed through.
    let o = lab.run(&["probe", "--dut", &url, "--format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let facts: Value = serde_json::from_slice(&o.stdout).expect("probe json");
    assert!(facts["cpu"].is_object(), "{facts}");

    // verify on the DUT: exit 0 and its table.
    let o = lab.run(&[
        "verify",
        "--dut",
        &url,
        "--impl",
        "openssl",
        "--alg",
        "aes-128-gcm",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("aes-128-gcm"));

    // A --libcrypto that exists only on the controller (the controller's namespace sees
    // the same files, so name one that exists nowhere, and one only the DUT lacks is the
    // same refusal): exit 2, one line, saying where the path must be.
    let o = lab.run(&[
        "speed",
        "--dut",
        &url,
        "--libcrypto",
        "/nonexistent/libcrypto.so.3",
        "--time",
        "0.05",
    ]);
    refused(&o, "no such path on the DUT");
    lab.assert_clean(5);
}

/// The DUT says it is another architecture (a `uname` wrapper first on its PATH) for
/// which there is no binary: exit 2 naming it and how to build one. A host key that is
/// not in known_hosts is refused with OpenSSH's reason.
#[test]
fn unknown_architecture_and_unknown_host_key_are_refused() {
    if !lab_possible() {
        return;
    }
    let fake = std::env::temp_dir().join(format!("cbench-dutfake-{}", std::process::id()));
    std::fs::create_dir_all(&fake).unwrap();
    let uname = fake.join("uname");
    std::fs::write(
        &uname,
        "#!/bin/sh\n[ \"$1\" = -m ] && { echo mips64; exit 0; }\nexec /bin/uname \"$@\"\n",
    )
    .unwrap();
    ok(&format!("chmod 755 {}", uname.display()));
    let lab = Lab::new(&format!("{}:{PATH_PLAIN}", fake.display()));
    let url = lab.url();
    let o = lab.run(&["speed", "--dut", &url, "--time", "0.05"]);
    refused(&o, "mips64");
    refused(&o, "scripts/release");
    lab.assert_clean(5);

    // Unknown host key: an empty known_hosts.
    std::fs::write(lab.dir.join("known_hosts"), "").unwrap();
    let o = lab.run(&["probe", "--dut", &url]);
    refused(&o, "Host key verification failed");
    lab.assert_clean(5);
    let _ = std::fs::remove_dir_all(&fake);
}

/// A long speed run on the DUT, stopped once points have arrived.
fn start_long_run(lab: &Lab, out: &Path) -> Child {
    let url = lab.url();
    let child = lab
        .controller(&[
            "speed",
            "--dut",
            &url,
            "--impl",
            "openssl,ring",
            "--alg",
            "aes-128-gcm,sha256",
            "--sizes",
            "16,256,1k,4k,16k,64k",
            "--time",
            "0.3",
            "--no-store",
            "--output",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while records(out).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no point arrived"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The agent runs in the DUT's namespace, from the upload.
    let agent = Lab::pids(&lab.duts[0].ns)
        .into_iter()
        .find(|&p| comm(p) == "cryptobench")
        .expect("an agent in the DUT namespace");
    let exe = std::fs::read_link(format!("/proc/{agent}/exe")).unwrap();
    assert!(exe.to_string_lossy().contains("/cbench-dut."), "{exe:?}");
    child
}

/// SIGINT or SIGTERM on the controller: the DUT finishes its point, the run ends as
/// interrupted with every finished point kept, and nothing is left in either namespace.
fn interrupted_run_keeps_points_and_leaves_nothing(sig: i32) {
    if !lab_possible() {
        return;
    }
    let lab = Lab::new(PATH_PLAIN);
    let out = lab.dir.join("int.jsonl");
    let mut child = start_long_run(&lab, &out);
    // The controller is `ip netns exec ... taskset ... cryptobench`: exec all the way.
    // SAFETY: signalling the process this test started.
    unsafe { libc::kill(child.id() as i32, sig) };
    let (code, err) = wait_exit(&mut child, 30);
    assert_eq!(code, Some(128 + sig), "{err}");
    let all = lines(&out);
    let end = all
        .iter()
        .find(|v| v["kind"] == "end")
        .expect("end line relayed");
    assert_eq!(end["interrupted"], true);
    let n = records(&out).len();
    assert!((1..24).contains(&n), "{n} points");
    assert_eq!(end["points"], n);
    lab.assert_clean(10);
}

#[test]
fn sigint_keeps_finished_points_and_leaves_nothing() {
    interrupted_run_keeps_points_and_leaves_nothing(libc::SIGINT);
}

#[test]
fn sigterm_keeps_finished_points_and_leaves_nothing() {
    interrupted_run_keeps_points_and_leaves_nothing(libc::SIGTERM);
}

/// sshd killed mid-run (listener and the session's process): the agent sees EOF and stops,
/// removes its upload; the controller keeps the finished points, says the connection
/// dropped, exits 1; nothing is left.
#[test]
fn sshd_killed_mid_run_keeps_points_and_leaves_nothing() {
    if !lab_possible() {
        return;
    }
    let lab = Lab::new(PATH_PLAIN);
    let out = lab.dir.join("drop.jsonl");
    let mut child = start_long_run(&lab, &out);
    for p in Lab::pids(&lab.duts[0].ns) {
        if comm(p) == "sshd" {
            // SAFETY: killing the test's own sshd processes.
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
    }
    let (code, err) = wait_exit(&mut child, 60);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("connection dropped"), "{err}");
    assert!(err.contains("finished point"), "{err}");
    let n = records(&out).len();
    assert!(n >= 1, "{n}");
    let start = Instant::now();
    loop {
        let left: Vec<String> = [&lab.duts[0].ns, &lab.ctl_ns]
            .iter()
            .flat_map(|ns| Lab::pids(ns))
            .map(|p| format!("{p} {}", comm(p)))
            .chain(
                lab.duts[0]
                    .uploads()
                    .into_iter()
                    .map(|d| d.display().to_string()),
            )
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "left: {left:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `speed` of one small point (openssl aes-128-gcm enc, 1 KiB) with `duts` and `sinks`.
fn speed_args<'a>(duts: &[&'a str], sinks: &[&'a str]) -> Vec<&'a str> {
    let point = [
        "--impl",
        "openssl",
        "--alg",
        "aes-128-gcm",
        "--direction",
        "enc",
        "--sizes",
        "1k",
        "--time",
        "0.05",
    ];
    let mut args = vec!["speed"];
    args.extend_from_slice(duts);
    args.extend_from_slice(&point);
    args.extend_from_slice(sinks);
    args
}

/// A fleet of three DUTs, two named by --dut and one by --dut-file, two at a time: each
/// DUT's run arrives in the controller's file and store, marked with its DUT and carrying
/// the DUT's hostname, and `report --machines` shows all three side by side.
#[test]
fn a_fleet_of_three_into_one_store() {
    if !lab_possible() {
        return;
    }
    let lab = Lab::fleet(3, PATH_PLAIN);
    let list = lab.dir.join("duts");
    std::fs::write(&list, format!("# the third board\n{}\n", lab.duts[2].url())).unwrap();
    let out = lab.dir.join("fleet.jsonl");
    let store = format!("sqlite:{}", lab.dir.join("fleet.db").display());
    let (u0, u1) = (lab.duts[0].url(), lab.duts[1].url());
    let o = lab.run(&speed_args(
        &[
            "--dut",
            &u0,
            "--dut",
            &u1,
            "--dut-file",
            list.to_str().unwrap(),
            "--parallel",
            "2",
        ],
        &["--output", out.to_str().unwrap(), "--store", &store],
    ));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let all = lines(&out);
    for d in &lab.duts {
        let env = all
            .iter()
            .find(|v| v["kind"] == "environment" && v["dut"] == d.url().as_str())
            .unwrap_or_else(|| panic!("no run of {}", d.url()));
        assert_eq!(env["hostname"], d.host.as_str());
        let recs: Vec<&Value> = all
            .iter()
            .filter(|v| v["kind"] == "record" && v["run_id"] == env["run_id"])
            .collect();
        assert_eq!(recs.len(), 1, "{}", d.url());
        assert_eq!(recs[0]["dut"], d.url().as_str());
        // One progress line per DUT and point, with the DUT's name.
        assert!(err.contains(&format!("{}: ", d.url())), "{err}");
    }
    let hosts: Vec<&str> = lab.duts.iter().map(|d| d.host.as_str()).collect();
    let r = Command::new(BIN)
        .args(["report", "--machines", &hosts.join(","), "--store", &store])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&r.stdout);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    for h in &hosts {
        assert!(shown.contains(h), "{h} missing: {shown}");
    }
    lab.assert_clean(5);

    // One DUT down (its sshd stopped): one line for it, the others measured, exit 1.
    // SAFETY: stopping the test's own sshd.
    unsafe { libc::kill(lab.duts[1].sshd_pid().unwrap(), libc::SIGKILL) };
    let out2 = lab.dir.join("fleet2.jsonl");
    let o = lab.run(&speed_args(
        &["--dut", &u0, "--dut", &u1],
        &["--output", out2.to_str().unwrap(), "--no-store"],
    ));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let about_u1: Vec<&str> = err.lines().filter(|l| l.contains(&u1)).collect();
    assert_eq!(about_u1.len(), 1, "{err}");
    assert_eq!(records(&out2).len(), 1, "{err}");
    assert_eq!(records(&out2)[0]["dut"], u0.as_str());
}

/// What a crashed run left on the DUT (an upload no agent runs from, a workload's temp dir
/// whose process is gone) is removed by `cleanup --dut`, which leaves nothing of its own.
#[test]
fn cleanup_on_the_dut_removes_what_a_crashed_run_left() {
    if !lab_possible() {
        return;
    }
    let lab = Lab::new(PATH_PLAIN);
    let tmp = &lab.duts[0].tmp;
    let upload = tmp.join("cbench-dut.crash1");
    std::fs::create_dir_all(&upload).unwrap();
    std::fs::write(upload.join("cryptobench"), "left by a killed session").unwrap();
    ok(&format!("touch -d '10 minutes ago' {}", upload.display()));
    // A pid no process can have (above pid_max).
    let run_dir = tmp.join("cbench-tls-2147483646-0");
    std::fs::create_dir_all(&run_dir).unwrap();
    std::fs::write(run_dir.join("key.pem"), "a private key").unwrap();
    // Its lock file, which no process holds any more (the run's guard held it).
    std::fs::write(run_dir.join(".cbench-lock"), "").unwrap();
    let url = lab.url();
    let o = lab.run(&["cleanup", "--dut", &url]);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{err}");
    assert!(out.contains("removed upload"), "{out}");
    assert!(out.contains("removed temp dir"), "{out}");
    assert!(!upload.exists() && !run_dir.exists());
    lab.assert_clean(5);
}

/// A fleet of three DUTs into one PostgreSQL (a real server, in the controller's
/// namespace): every DUT's run is in it, and `report --machines` shows all three.
#[test]
fn a_fleet_of_three_into_postgresql() {
    if !lab_possible() {
        return;
    }
    let lab = Lab::fleet(3, PATH_PLAIN);
    // Dropped before the lab (which empties the namespace).
    let Some(pg) = common::postgres::Server::start_in("dutfleet", Some(&lab.ctl_ns)) else {
        return;
    };
    let store = pg.url();
    let urls: Vec<String> = lab.duts.iter().map(|d| d.url()).collect();
    let mut duts: Vec<&str> = Vec::new();
    for u in &urls {
        duts.extend(["--dut", u.as_str()]);
    }
    let o = lab.run(&speed_args(&duts, &["--store", &store]));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let hosts: Vec<&str> = lab.duts.iter().map(|d| d.host.as_str()).collect();
    let r = Command::new("ip")
        .args(["netns", "exec", &lab.ctl_ns, BIN, "report", "--machines"])
        .arg(hosts.join(","))
        .args(["--store", &store])
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&r.stdout);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    eprintln!("{shown}");
    for h in &hosts {
        assert!(shown.contains(h), "{h} missing: {shown}");
    }
    drop(pg);
    lab.assert_clean(5);
}
