//! One results file written by a tiny speed, a tiny tls and a tiny vpn run (real
//! OpenSSL, nginx and wrk, OpenVPN in namespaces): `report` renders all three, each run
//! under its own heading, and its JSON holds every record in the shared envelope.
//! Needs root (vpn) and nginx, wrk, openvpn, iperf3 (scripts/deps/*.sh).

mod common;
use common::run;

use serde_json::Value;
use std::process::Output;

fn ok(o: &Output, what: &str) -> String {
    assert!(
        o.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn one_file_of_speed_tls_and_vpn_runs_renders_all_three() {
    if !common::is_root() {
        return common::skip("the vpn run needs root (CI runs the tests as root)");
    }
    let out = std::env::temp_dir().join(format!("cryptobench-report-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&out);
    let file = out.to_str().unwrap();
    ok(
        &run(&[
            "speed",
            "--impl",
            "openssl",
            "--alg",
            "aes-128-gcm",
            "--sizes",
            "16,1k",
            "--time",
            "0.05",
            "--output",
            file,
        ]),
        "speed",
    );
    ok(
        &run(&[
            "tls",
            "--suites",
            "aes128gcm,null",
            "--files",
            "4k",
            "--concurrency",
            "2",
            "--time",
            "1",
            "--output",
            file,
        ]),
        "tls",
    );
    ok(
        &run(&[
            "vpn",
            "--tunnels",
            "none",
            "--streams",
            "1",
            "--direction",
            "up",
            "--time",
            "1",
            "--output",
            file,
        ]),
        "vpn",
    );

    let text = ok(&run(&["report", file]), "report");
    // Three runs, kept apart under their own headings, each with its workload's tables.
    let headings: Vec<&str> = text.lines().filter(|l| l.starts_with("Run ")).collect();
    assert_eq!(headings.len(), 3, "{text}");
    for (h, w) in headings.iter().zip(["speed", "tls", "vpn"]) {
        assert!(h.ends_with(w), "{h} is the {w} run");
    }
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("'{needle}' in {text}"))
    };
    let (tls_at, vpn_at) = (at(headings[1]), at(headings[2]));
    let speed_grid = at("Throughput in MB/s");
    let negotiated = at("Negotiated (nginx's log, every request checked):");
    let shares = at("Crypto share of the server's CPU per GB");
    let tools = at("Tools: ");
    assert!(speed_grid < tls_at && tls_at < negotiated && negotiated < shares && shares < vpn_at);
    assert!(vpn_at < tools, "{text}");
    assert!(text.contains("TLS_AES_128_GCM_SHA256"), "{text}");
    let veth = |l: &&str| l.split_whitespace().take(2).eq(["none", "veth"]);
    assert!(
        text[vpn_at..].lines().any(|l| veth(&l)),
        "the veth's row: {text}"
    );

    let v: Value = serde_json::from_str(&ok(&run(&["report", file, "--format", "json"]), "json"))
        .expect("one JSON document");
    let recs = v["records"].as_array().unwrap();
    let mut seen: Vec<&str> = Vec::new();
    for r in recs {
        let w = r["workload"].as_str().expect("workload");
        assert!(r["impl"].is_string(), "{r}");
        assert!(r["throughput_bps"].as_f64().is_some_and(|x| x > 0.0), "{r}");
        assert_eq!(r["schema"], 2);
        if !seen.contains(&w) {
            seen.push(w);
        }
    }
    assert_eq!(seen, ["speed", "tls", "vpn"]);
    // 2 sizes x 2 directions, 2 suites, 1 tunnel.
    assert_eq!(recs.len(), 4 + 2 + 1, "{recs:?}");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    for r in runs {
        assert_eq!(r["finished"], true);
        assert_eq!(r["interrupted"], false);
    }
    assert!(runs[1]["analysis"]["tls"]["shares"]
        .as_array()
        .is_some_and(|s| !s.is_empty()));
    let _ = std::fs::remove_file(&out);
}
