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
    assert!((0.0..5.0).contains(&agent), "{r}");
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
    assert!(out.contains("OpenVPN") || out.contains("openvpn"), "{out}");
    lab.assert_clean(10);
    let o = lab.run(&["study", "scaling", "--dut", &url, "--output", "x.jsonl"]);
    refused(&o, "records stay on the DUT");
}
