//! `vpn --packet-sizes`, the round trips and the limit, through real tunnels between two
//! namespaces (the bare veth, OpenVPN in user space, wireguard-go): packets per second
//! that agree with what iperf3 received, irtt's round trips idle and under load on every
//! point, a named limit with its evidence on every point, and bad input refused.

mod common;
use common::{run, stderr};
use serde_json::Value;

const LIMITS: &[&str] = &["thread", "softirq", "cpus", "generator", "rate_cap", "none"];

fn ready() -> bool {
    if !common::is_root() {
        common::skip("cryptobench vpn needs root (CI runs the tests as root)");
        return false;
    }
    let irtt = std::process::Command::new("irtt").arg("version").output();
    if !irtt.is_ok_and(|o| o.status.success()) {
        common::skip("irtt is missing: run scripts/deps/vpn.sh");
        return false;
    }
    true
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Percentiles in order and enough probes: at least half of one per 10 ms of `seconds`.
fn assert_rtt(r: &Value, seconds: f64, what: &str) {
    let (p50, p90, p99) = (f(&r["p50"]), f(&r["p90"]), f(&r["p99"]));
    assert!(0.0 < p50 && p50 <= p90 && p90 <= p99, "{what}: {r}");
    let probes = r["probes"].as_u64().unwrap() as f64;
    assert!(probes >= seconds * 100.0 * 0.5, "{what}: {r}");
    assert!(r["lost"].as_u64().unwrap() as f64 <= probes, "{what}: {r}");
}

#[test]
fn packets_round_trips_and_the_limit_on_every_point() {
    if !ready() {
        return;
    }
    let dir = common::tempdir(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")), "vpn-pps");
    let file = dir.join("run.jsonl");
    let args = [
        "vpn",
        "--tunnels",
        "none,openvpn,wireguard-go",
        "--ciphers",
        "AES-128-GCM",
        "--streams",
        "1",
        "--direction",
        "up",
        "--packet-sizes",
        "64,1400",
        "--time",
        "2",
        "--no-store",
        "--format",
        "json",
        "--output",
        file.to_str().unwrap(),
    ];
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let recs = v["records"].as_array().unwrap();
    // Three tunnels, each with TCP and two packet sizes.
    assert_eq!(recs.len(), 9, "{}", stderr(&o));
    for r in recs {
        let what = format!("{} {} {}", r["label"], r["protocol"], r["packet_size"]);
        match r["packet_size"].as_u64() {
            Some(size) => {
                assert!([64, 1400].contains(&size), "{what}");
                assert_eq!(r["protocol"], "udp", "{what}");
                // Datagrams received per second: iperf3's payload over its time.
                let want = f(&r["bytes"]) / size as f64 / f(&r["transfer_s"]);
                assert!(f(&r["pps"]) > 0.0, "{what}: {r}");
                assert!((f(&r["pps"]) / want - 1.0).abs() < 1e-9, "{what}: {r}");
                let loss = f(&r["loss_pct"]);
                assert!((0.0..=100.0).contains(&loss), "{what}: {r}");
            }
            None => {
                assert_eq!(r["protocol"], "tcp", "{what}");
                assert!(r.get("pps").is_none(), "{what}: {r}");
            }
        }
        assert_rtt(&r["rtt_idle_ms"], 1.0, &format!("{what} idle"));
        assert_rtt(&r["rtt_loaded_ms"], 2.0 * 0.8, &format!("{what} loaded"));
        let limit = &r["limit"];
        assert!(
            LIMITS.contains(&limit["kind"].as_str().unwrap()),
            "{what}: {limit}"
        );
        assert!(
            limit["evidence"].as_str().unwrap().len() > 20,
            "{what}: {limit}"
        );
        // Null where this machine shows no clock, else whether it fell.
        assert!(
            r["throttled"].is_null() || r["throttled"].is_boolean(),
            "{what}"
        );
    }
    // Through a tunnel, a bulk TCP load queues the probes behind it. (The bare veth's
    // round trip can be shorter under load: busy CPUs wake no idle core for a probe;
    // 0.11 ms idle against 0.06 ms loaded here.)
    for r in recs
        .iter()
        .filter(|r| r["tunnel"] != "none" && r["protocol"] == "tcp")
    {
        assert!(
            f(&r["rtt_loaded_ms"]["p50"]) >= f(&r["rtt_idle_ms"]["p50"]),
            "{}: {} idle, {} loaded",
            r["label"],
            r["rtt_idle_ms"],
            r["rtt_loaded_ms"]
        );
    }
    // The report of those records shows the table and each limit's evidence.
    let o = run(&["report", file.to_str().unwrap()]);
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("Packets per second"), "{table}");
    assert!(table.contains("udp 64 B up x1"), "{table}");
    assert_eq!(table.matches("Limit of ").count(), 9, "{table}");
}

#[test]
fn bad_packet_sizes_are_refused_in_one_line() {
    if !ready() {
        return;
    }
    for bad in ["8", "9000", "64,abc", ""] {
        let o = run(&[
            "vpn",
            "--tunnels",
            "none",
            "--packet-sizes",
            bad,
            "--time",
            "1",
            "--no-store",
        ]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{bad:?}: {err}");
        assert!(err.contains("--packet-sizes"), "{bad:?}: {err}");
    }
}
