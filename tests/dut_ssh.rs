//! `ssh --dut` end to end with real components (the lab of tests/common/dut_lab.rs): the
//! run's sshd and Dropbear on the DUT (its namespace, CPU 0), OpenSSH's ssh on the
//! controller (its namespace, the last CPU), the data over the veth between them. Records
//! arrive in the controller's file and store, marked with the DUT; nothing is left in
//! either namespace, in the DUT's temp dir or in the controller's after a normal exit,
//! SIGINT, or the DUT's sshd killed mid-run.

mod common;

use common::dut_lab::*;
use common::skip;
use std::path::Path;
use std::process::Child;

const CHACHA: &str = "chacha20-poly1305@openssh.com";

/// Root, the lab, and both servers and the client installed; else a skip.
fn ssh_possible() -> bool {
    if !lab_possible() {
        return false;
    }
    for p in [
        "sshd",
        "ssh",
        "ssh-keygen",
        "dropbear",
        "dropbearkey",
        "unshare",
    ] {
        if !common::has_program(p) {
            skip(&format!(
                "ssh --dut: {p} is missing: run scripts/deps/ssh.sh"
            ));
            return false;
        }
    }
    true
}

fn cmdline(pid: i32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

/// The run's servers in a namespace: sshd started with our options (not the lab's own
/// sshd and its sessions), or Dropbear.
fn servers_in(ns: &str) -> Vec<String> {
    Lab::pids(ns)
        .into_iter()
        .filter(|p| {
            let (c, line) = (comm(*p), cmdline(*p));
            c == "dropbear" || (c == "sshd" && line.contains("-f /dev/null"))
        })
        .map(comm)
        .collect()
}

/// The run's ssh clients in a namespace: OpenSSH's ssh with the run's key (not the
/// controller's connection to the DUT).
fn clients_in(ns: &str) -> usize {
    Lab::pids(ns)
        .into_iter()
        .filter(|p| comm(*p) == "ssh" && cmdline(*p).contains("client_ed25519"))
        .count()
}

/// Waits (bounded) until a server of the run runs in the DUT's namespace while a client
/// of it runs in the controller's, and never the other way round.
fn wait_for_split(lab: &Lab, child: &mut Child) {
    let dut = &lab.duts[0].ns;
    poll_while_running(
        child,
        120,
        "the DUT's server and the controller's ssh never ran at once",
        || {
            let both = !servers_in(dut).is_empty() && clients_in(&lab.ctl_ns) > 0;
            both.then(|| {
                assert!(
                    servers_in(&lab.ctl_ns).is_empty(),
                    "a server on the controller"
                );
                assert_eq!(clients_in(dut), 0, "a client on the DUT");
            })
        },
    )
}

/// Nothing of the run left in the controller's temp dir (its client key, its files), and
/// no mount of the run's home in the DUT's mount namespace.
fn assert_nothing_left(lab: &Lab) {
    lab.assert_clean(20);
    let left: Vec<_> = std::fs::read_dir(lab.ctl_tmp())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "left on the controller: {left:?}");
    // The DUT's mount namespace is its sshd's (gone with it when killed).
    let sshd = lab.duts[0].sshd_pid().unwrap();
    if let Ok(mounts) = std::fs::read_to_string(format!("/proc/{sshd}/mounts")) {
        assert!(!mounts.contains("cbench-ssh"), "{mounts}");
    }
}

fn ssh_args<'a>(
    url: &'a str,
    ciphers: &'a str,
    bytes: &'a str,
    direction: &'a str,
    sinks: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "ssh",
        "--dut",
        url,
        "--server",
        "openssh,dropbear",
        "--ciphers",
        ciphers,
        "--bytes",
        bytes,
        "--rounds",
        "1",
        "--direction",
        direction,
    ];
    args.extend_from_slice(sinks);
    args
}

/// Both servers on the DUT, the client here: a record per server and direction in the controller's
/// file and store, marked with the DUT, the negotiation proven (sshd's log on the DUT,
/// Dropbear's through the client's), each end's CPU, the limit, the agent's CPU.
#[test]
fn ssh_served_by_the_dut_from_the_controller() {
    if !ssh_possible() {
        return;
    }
    let lab = Lab::new(PATH_PLAIN);
    let url = lab.url();
    let sinks = lab.sinks("ssh");
    let (out, store) = (&sinks.out, &sinks.store);
    let t = std::time::Instant::now();
    let mut child = lab.start(&ssh_args(&url, CHACHA, "256m", "both", &sinks.args()));
    wait_for_split(&lab, &mut child);
    let (code, err) = wait_exit(&mut child, 300);
    eprintln!("ssh --dut took {:.0} s", t.elapsed().as_secs_f64());
    assert_eq!(code, Some(0), "{err}");
    let recs = records(out);
    assert_eq!(recs.len(), 4, "{err}");
    let expected = [
        ("openssh", "up", "server"),
        ("openssh", "down", "server"),
        ("dropbear", "up", "client"),
        ("dropbear", "down", "client"),
    ];
    for (r, (name, direction, from)) in recs.iter().zip(expected) {
        assert_eq!(r["direction"], direction, "{r}");
        assert_eq!(r["dut"], url.as_str(), "{r}");
        assert_eq!(r["workload"], "ssh", "{r}");
        assert_eq!(r["server"]["name"], name, "{r}");
        assert_eq!(r["cipher"], CHACHA, "{r}");
        assert_eq!(r["negotiated_from"], from, "{r}");
        let negotiated = r["negotiated"].to_string();
        assert!(negotiated.matches(CHACHA).count() == 2, "{r}");
        assert!(r["throughput_bps"].as_f64().unwrap() > 0.0, "{r}");
        for end in ["client", "server"] {
            assert!(r["cpu_s_per_gb_by_end"][end].as_f64().unwrap() > 0.0, "{r}");
        }
        // The kinds ssh's limit rules give (tests/ssh_cli.rs), "thread" among them: a
        // DUT's sshd at 90% of a core was once refused here.
        let kind = r["limit"]["kind"].as_str().unwrap_or("");
        assert!(
            ["thread", "softirq", "generator", "cpus", "rate_cap", "none"].contains(&kind),
            "{r}"
        );
        assert!(
            r["limit"]["evidence"].is_string() || r["limit"]["evidence"].is_array(),
            "{r}"
        );
        assert!(r["dut_agent_cpu_pct"].as_f64().is_some(), "{r}");
        let notes = r["notes"].to_string();
        assert!(
            notes.contains("the client (OpenSSH's ssh) on the controller"),
            "{r}"
        );
        eprintln!(
            "ssh --dut {name} {direction}: {:.0} MB/s, server {:.2} CPU-s/GB (DUT), client {:.2} CPU-s/GB (controller), busiest {}, agent {}% of a core, limit {}",
            r["throughput_bps"].as_f64().unwrap() / 1e6,
            r["cpu_s_per_gb_by_end"]["server"].as_f64().unwrap(),
            r["cpu_s_per_gb_by_end"]["client"].as_f64().unwrap(),
            r["busiest_thread"],
            r["dut_agent_cpu_pct"],
            r["limit"]
        );
    }
    // The run's environment is the DUT's.
    let env = lines(out)
        .into_iter()
        .find(|v| v["kind"] == "environment")
        .unwrap();
    assert_eq!(env["hostname"], lab.duts[0].host.as_str());
    assert_stored(store, &env);
    assert_nothing_left(&lab);
}

/// A run of two points per server stopped by `stop` once the first point is in: what the
/// controller said, and its records.
fn stopped_run(lab: &Lab, out: &Path, stop: impl FnOnce(&Lab, &Child)) -> (Option<i32>, String) {
    let url = lab.url();
    let sinks = ["--output", out.to_str().unwrap(), "--no-store"];
    let ciphers = format!("{CHACHA},aes128-ctr");
    let mut child = lab.start(&ssh_args(&url, &ciphers, "512m", "up", &sinks));
    poll_while_running(&mut child, 180, "no point arrived", || {
        (!records(out).is_empty()).then_some(())
    });
    wait_for_split(lab, &mut child);
    stop(lab, &child);
    wait_exit(&mut child, 90)
}

/// SIGINT on the controller once the first point is in: the run ends as interrupted, the
/// finished point kept; the servers and the agent are gone from the DUT, the client and
/// its key from the controller.
#[test]
fn ssh_dut_sigint_keeps_finished_points_and_leaves_nothing() {
    if !ssh_possible() {
        return;
    }
    let lab = Lab::new(PATH_PLAIN);
    let out = lab.dir.join("int.jsonl");
    let (code, err) = stopped_run(&lab, &out, |_, child| interrupt(child));
    assert_interrupted(&out, code, &err);
    let recs = records(&out);
    assert!(!recs.is_empty() && recs.len() < 4, "{err}");
    assert!(
        recs.iter().all(|r| r["dut"] == lab.url().as_str()),
        "{recs:?}"
    );
    assert_nothing_left(&lab);
}

/// The DUT's sshd killed mid-run: the agent sees EOF and stops the servers; the
/// controller says the connection dropped, keeps the finished point and exits 1; nothing
/// is left on either side.
#[test]
fn ssh_dut_sshd_killed_leaves_nothing() {
    if !ssh_possible() {
        return;
    }
    let lab = Lab::new(PATH_PLAIN);
    let out = lab.dir.join("drop.jsonl");
    let (code, err) = stopped_run(&lab, &out, |lab, _| lab.kill_sshd());
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("connection dropped"), "{err}");
    assert!(!records(&out).is_empty(), "{err}");
    assert_nothing_left(&lab);
}
