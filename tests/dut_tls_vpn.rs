//! `tls --dut` end to end with real components (the lab of tests/common/dut_lab.rs):
//! nginx on the DUT (its namespace, CPU 0), wrk on the controller (its namespace, the
//! last CPU), the data over the veth between them. Records arrive in the controller's
//! file and store; nothing is left in either namespace after a normal exit, SIGINT, or
//! sshd killed mid-run.

mod common;

use common::dut_lab::*;
use common::{skip, tls_lacks};
use std::path::Path;
use std::process::Child;

/// One tls point (or two, with `suites`), from the lab's controller to its DUT.
fn tls_args<'a>(url: &'a str, suites: &'a str, time: &'a str, sinks: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "tls",
        "--dut",
        url,
        "--suites",
        suites,
        "--files",
        "100k",
        "--concurrency",
        "10",
        "--time",
        time,
    ];
    args.extend_from_slice(sinks);
    args
}

fn tls_possible() -> bool {
    if let Some(why) = tls_lacks() {
        skip(&format!("tls --dut: {why}"));
        return false;
    }
    lab_possible()
}

/// Waits (bounded) until nginx runs in the DUT's namespace and wrk in the controller's:
/// the server's side is the DUT's, the load's the controller's.
fn wait_for_split(lab: &Lab, child: &mut Child) {
    let on = |ns: &str, name: &str| Lab::pids(ns).into_iter().any(|p| comm(p) == name);
    poll_while_running(
        child,
        90,
        "nginx on the DUT and wrk here never ran at once",
        || {
            let both = on(&lab.duts[0].ns, "nginx") && on(&lab.ctl_ns, "wrk");
            both.then(|| assert!(!on(&lab.ctl_ns, "nginx") && !on(&lab.duts[0].ns, "wrk")))
        },
    )
}

/// nginx served from the DUT, wrk loaded it from the controller: the record arrives in
/// the controller's file and store, marked with the DUT, with the server's CPUs the
/// DUT's, the generator's the controller's, the side that limited it, and the agent's CPU.
#[test]
fn tls_point_served_by_the_dut_loaded_from_the_controller() {
    if !tls_possible() {
        return;
    }
    let lab = Lab::new(PATH_PLAIN);
    let url = lab.url();
    let sinks = lab.sinks("tls");
    let (out, store) = (&sinks.out, &sinks.store);
    let mut child = lab.start(&tls_args(&url, "tls12-aes128gcm", "2", &sinks.args()));
    wait_for_split(&lab, &mut child);
    let (code, err) = wait_exit(&mut child, 180);
    assert_eq!(code, Some(0), "{err}");
    let recs = records(out);
    assert_eq!(recs.len(), 1, "{err}");
    let r = &recs[0];
    assert_eq!(r["dut"], url.as_str(), "{r}");
    assert_eq!(r["suite"], "ECDHE-RSA-AES128-GCM-SHA256", "{r}");
    assert!(r["requests_per_s"].as_f64().unwrap() > 0.0, "{r}");
    assert!(
        r["server_requests"].as_u64() >= r["requests"].as_u64(),
        "{r}"
    );
    assert_eq!(r["server_cpus"], serde_json::json!([0]), "{r}");
    assert_eq!(r["client_cpus"], serde_json::json!([lab.ctl_cpu]), "{r}");
    assert!(r["server_cpu_s"].as_f64().unwrap() > 0.0, "{r}");
    assert!(r["client_cpu_s"].as_f64().unwrap() > 0.0, "{r}");
    assert!(
        ["server", "generator", "cpus", "none"]
            .contains(&r["limit"]["kind"].as_str().unwrap_or("")),
        "{r}"
    );
    let agent = r["dut_agent_cpu_pct"].as_f64().expect("agent CPU");
    eprintln!(
        "tls --dut: {:.0} req/s, server {:.0}% CPU, wrk {:.0}% CPU, agent {agent:.2}% of one core, limit {}",
        r["requests_per_s"].as_f64().unwrap(),
        r["server_cpu_pct"].as_f64().unwrap(),
        r["client_cpu_pct"].as_f64().unwrap(),
        r["limit"]
    );
    // The agent's CPU time over the point's wall time: the goal is under 1% of one core
    // (0.18% tls, 0.20-0.21% vpn measured here).
    assert!((0.0..1.0).contains(&agent), "{r}");
    // The run's environment is the DUT's.
    let env = lines(out)
        .into_iter()
        .find(|v| v["kind"] == "environment")
        .unwrap();
    assert_eq!(env["hostname"], lab.duts[0].host.as_str());
    assert_stored(store, &env);
    lab.assert_clean(10);

    // --nginx names a path on the DUT: one it lacks is exit 2, one line, saying where.
    let o = lab.run(&[
        "tls",
        "--dut",
        &url,
        "--nginx",
        "/nonexistent/sbin/nginx",
        "--no-store",
    ]);
    refused(&o, "no such path on the DUT");
    lab.assert_clean(5);
}

/// HAProxy on the DUT as nginx is: full handshakes loaded from the controller, on the
/// system's OpenSSL and on AWS-LC from the DUT's own cache (`--tls-lib`, proven from
/// HAProxy's maps there), each with its keep-alive control, and nothing left.
#[test]
fn haproxy_served_by_the_dut() {
    if !tls_possible() {
        return;
    }
    if !common::has_program("haproxy") {
        return common::skip("haproxy not found (scripts/deps/tls.sh installs it)");
    }
    let lab = Lab::new(PATH_PLAIN);
    let url = lab.url();
    let sinks = lab.sinks("tls-haproxy");
    // The lab's DUT is this machine: its cache is the DUT's.
    let listed = common::stdout(&common::run(&["tls", "--list"]));
    if !listed.contains("aws-lc: AWS-LC") {
        return common::skip(
            "AWS-LC not built (scripts/build-aws-lc, scripts/build-haproxy --lib aws-lc)",
        );
    }
    let mut args = tls_args(&url, "aes128gcm", "2", &sinks.args());
    args.extend([
        "--server",
        "haproxy",
        "--handshake",
        "--tls-lib",
        "system,aws-lc",
    ]);
    let mut child = lab.start(&args);
    let (code, err) = wait_exit(&mut child, 180);
    assert_eq!(code, Some(0), "{err}");
    let recs = records(&sinks.out);
    assert_eq!(
        recs.len(),
        4,
        "a handshake point and its keep-alive control per library: {err}"
    );
    let libs: Vec<&str> = recs
        .iter()
        .map(|r| r["tls_lib"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(libs, ["system", "system", "aws-lc", "aws-lc"], "{err}");
    for r in &recs {
        assert_eq!(r["dut"], url.as_str(), "{r}");
        assert_eq!(r["server"]["name"], "haproxy", "{r}");
        assert!(
            r["tls_lib"]["proof"]["process"]
                .as_str()
                .unwrap_or("")
                .starts_with("haproxy"),
            "{r}"
        );
        assert_eq!(r["client_cpus"], serde_json::json!([lab.ctl_cpu]), "{r}");
        assert!(r["requests_per_s"].as_f64().unwrap() > 0.0, "{r}");
    }
    let hs = recs
        .iter()
        .find(|r| r["handshake"] == true)
        .expect("a handshake point");
    assert!(hs["handshakes_per_s"].as_f64().unwrap() > 0.0, "{hs}");
    lab.assert_clean(10);
}

/// The records of a run stopped in its middle, and what the controller said.
fn stopped_run(lab: &Lab, out: &Path, stop: impl FnOnce(&Lab, &Child)) -> (Option<i32>, String) {
    let url = lab.url();
    let sinks = ["--output", out.to_str().unwrap(), "--no-store"];
    let mut child = lab.start(&tls_args(
        &url,
        "tls12-aes128gcm,tls12-aes256gcm",
        "3",
        &sinks,
    ));
    wait_for_split(lab, &mut child);
    stop(lab, &child);
    wait_exit(&mut child, 90)
}

/// SIGINT on the controller mid-point: the run ends as interrupted, nginx and the agent
/// are gone from the DUT, wrk from the controller.
#[test]
fn tls_dut_sigint_leaves_nothing() {
    if !tls_possible() {
        return;
    }
    let lab = Lab::new(PATH_PLAIN);
    let out = lab.dir.join("int.jsonl");
    let (code, err) = stopped_run(&lab, &out, |_, child| interrupt(child));
    assert_interrupted(&out, code, &err);
    lab.assert_clean(20);
}

/// sshd killed mid-point: the agent sees EOF and stops nginx; the controller says the
/// connection dropped, stops wrk and exits 1; nothing is left.
#[test]
fn tls_dut_sshd_killed_leaves_nothing() {
    if !tls_possible() {
        return;
    }
    let lab = Lab::new(PATH_PLAIN);
    let out = lab.dir.join("drop.jsonl");
    let (code, err) = stopped_run(&lab, &out, |lab, _| lab.kill_sshd());
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("connection dropped"), "{err}");
    lab.assert_clean(30);
}

/// `study router-vpn --quick --dut`: the study runs on the DUT (its tunnels in the DUT's
/// namespace) and its table and conclusions come back; --output is refused with --dut.
#[test]
fn router_vpn_study_runs_on_the_dut() {
    if let Some(why) = common::vpn_lacks(true) {
        skip(&format!("study router-vpn --dut: {why}"));
        return;
    }
    if !lab_possible() {
        return;
    }
    let lab = Lab::new(PATH_PLAIN);
    let url = lab.url();
    let o = lab.run(&["study", "router-vpn", "--quick", "--dut", &url]);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{err}");
    // The claim itself: the DUT measured its tunnel (this DUT can run OpenVPN, so a "cannot
    // be observed here" is a failure), and its library table came back.
    let (_, c) = out
        .split_once("Conclusion\n==========\n")
        .unwrap_or_else(|| panic!("no Conclusion heading: {out}"));
    assert!(c.contains("OpenVPN's best"), "{c}");
    assert!(c.contains("aes-256-cbc at 8 KiB: openssl "), "{c}");
    assert!(!out.contains("cannot be observed here"), "{out}");
    // Its steps' runs went to the DUT session's store (the lab's), not root's.
    let store = lab.dir.join("data0/cryptobench/results.db");
    assert!(store.is_file(), "no DUT store at {}", store.display());
    lab.assert_clean(10);
    let o = lab.run(&["study", "scaling", "--dut", &url, "--output", "x.jsonl"]);
    refused(&o, "records stay on the DUT");
}

/// `advise --quick --dut` against a lean DUT: the DUT's `cryptobench` (first on its PATH)
/// refuses `advise` and `disk` as the router build does, and logs what it was asked.
/// Advise runs here and sends each step with its own --dut: the DUT ran probe, speed, vpn,
/// ssh and tls, never advise; the verdicts come back with intervals (or say why not), every
/// record is the DUT's, and the shared row holds no user, host name, address or key.
#[test]
fn advise_quick_composes_lean_steps_on_the_dut() {
    let ssh_lacks = || {
        ["dropbear", "dropbearkey", "ssh-keygen", "unshare"]
            .into_iter()
            .find(|p| !common::has_program(p))
            .map(|p| format!("{p} is missing (the ssh step): run scripts/deps/ssh.sh"))
    };
    if let Some(why) = common::vpn_lacks(true)
        .or_else(tls_lacks)
        .or_else(ssh_lacks)
    {
        skip(&format!("advise --dut: {why}"));
        return;
    }
    if !lab_possible() {
        return;
    }
    let lean = std::env::temp_dir().join(format!("cbench-lean-{}", std::process::id()));
    std::fs::create_dir_all(&lean).unwrap();
    let log = lean.join("asked");
    let wrapper = lean.join("cryptobench");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$*\" >> {}\ncase \"$1\" in advise|disk) echo \"cryptobench: '$1' is not in this (lean) build\" >&2; exit 2;; esac\nexec {} \"$@\"\n",
            log.display(),
            common::BIN
        ),
    )
    .unwrap();
    ok(&format!("chmod 755 {}", wrapper.display()));
    let lab = Lab::new(&format!("{}:{PATH_PLAIN}", lean.display()));
    let url = lab.url();
    let (out, share) = (lab.dir.join("advise.jsonl"), lab.dir.join("share.json"));
    let t = std::time::Instant::now();
    let o = lab.run(&[
        "advise",
        "--quick",
        "--dut",
        &url,
        "--no-store",
        "--format",
        "json",
        "--output",
        out.to_str().unwrap(),
        "--share",
        share.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    eprintln!(
        "advise --quick --dut took {:.0} s",
        t.elapsed().as_secs_f64()
    );
    assert_eq!(o.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    // The DUT was asked for the lean steps only.
    let asked = std::fs::read_to_string(&log).unwrap_or_default();
    let first: Vec<&str> = asked.lines().filter_map(|l| l.split(' ').next()).collect();
    for step in ["probe", "speed", "vpn", "ssh", "tls"] {
        assert!(first.contains(&step), "the DUT never ran {step}: {asked}");
    }
    assert!(!first.contains(&"advise"), "{asked}");
    // The verdicts: intervals, or "no difference" / "cannot decide", or a limit's evidence.
    let verdicts = v["verdicts"].as_array().unwrap();
    assert!(
        verdicts
            .iter()
            .any(|x| x["question"] == "Which tunnel is fastest here?"),
        "{v}"
    );
    // The DUT's own SSH servers, each answered.
    for server in ["openssh", "dropbear"] {
        let q = format!("Which SSH cipher here? ({server})");
        assert!(
            verdicts.iter().any(|x| x["question"] == q.as_str()),
            "{q}: {v}"
        );
    }
    for x in verdicts {
        let a = x["answer"].as_str().unwrap();
        let undecided = a.contains("no difference beyond the noise") || a.contains("cannot decide");
        let limit = x["question"].as_str().unwrap().starts_with("What limits");
        assert!(
            (x["ci"].is_array() && x["ratio"].is_number()) || undecided || limit,
            "{x}"
        );
    }
    let unavailable = v["unavailable"].to_string();
    assert!(unavailable.contains("IPsec with --dut"), "{unavailable}");
    // Every run in the records is the DUT's, started by a step, never by advise.
    let envs: Vec<serde_json::Value> = lines(&out)
        .into_iter()
        .filter(|l| l["kind"] == "environment")
        .collect();
    assert!(envs.len() >= 6, "{err}");
    for e in &envs {
        assert_eq!(e["dut"], url.as_str(), "{e}");
        assert_eq!(e["hostname"], lab.duts[0].host.as_str(), "{e}");
        // The program, then the step (the program's path may hold any word).
        let step = e["command_line"][1].as_str().unwrap_or("");
        assert!(["speed", "vpn", "ssh", "tls"].contains(&step), "{e}");
    }
    // The DUT's row: its facts, none of its user, host name, address or port, no key.
    let row = std::fs::read_to_string(&share).expect("--share wrote the row");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&row).unwrap(),
        v["share"]
    );
    let low = row.to_lowercase();
    let d = &lab.duts[0];
    for s in [
        d.addr.clone(),
        d.host.to_lowercase(),
        format!(":{}", d.port),
    ] {
        assert!(!low.contains(&s), "the row holds {s}: {row}");
    }
    let words: Vec<&str> = low.split(|c: char| !c.is_alphanumeric()).collect();
    assert!(!words.contains(&"root"), "{row}");
    for key in ["ssh-", "begin ", "private"] {
        assert!(!low.contains(key), "{key}: {row}");
    }
    lab.assert_clean(10);
    let _ = std::fs::remove_dir_all(&lean);
}
