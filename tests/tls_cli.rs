//! Runs the real `cryptobench tls`: real nginx, wrk and h2load on loopback, short
//! sweeps of about 1 s per point. Speeds are never asserted; what every request
//! negotiated, byte counts, the shares' arithmetic and cleanup are.
//!
//! Needs nginx, wrk and nghttp2-client (scripts/deps/tls.sh, run by .ci/run).

mod common;
use common::tls::{
    descendants, expected_negotiated, f, json_run, lines, listening, run_temp_dirs, running,
    signal_and_wait, spawn_tls, stat, temp_file, u,
};
use common::{run, stderr};

use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// Every field of the tls record contract is present with its type.
fn check_record_shape(r: &Value) {
    assert_eq!(r["kind"], "record");
    assert_eq!(r["schema"], 2);
    assert_eq!(r["workload"], "tls");
    assert_eq!(r["impl"], "nginx");
    assert!(
        r["impl_version"]
            .as_str()
            .is_some_and(|v| v.starts_with("nginx/")),
        "{r}"
    );
    // The label names the point's suite (or the mix) in tables.
    assert_eq!(r["label"], r["suite"]);
    for k in [
        "run_id",
        "suite",
        "protocol",
        "negotiated",
        "generator",
        "cert",
        "content",
    ] {
        assert!(r[k].is_string(), "{k} in {r}");
    }
    for k in [
        "file_size",
        "concurrency",
        "requests",
        "errors",
        "bytes",
        "server_requests",
        "server_bytes",
        "server_body_bytes",
        "server_connections",
        "negotiated_requests",
        "server_workers",
        "client_threads",
    ] {
        assert!(r[k].is_u64(), "{k} in {r}");
    }
    for k in [
        "duration_s",
        "wall_s",
        "requests_per_s",
        "throughput_bps",
        "server_cpu_s",
        "cpu_user_s",
        "cpu_sys_s",
        "server_cpu_pct",
        "client_cpu_s",
        "client_cpu_user_s",
        "client_cpu_sys_s",
        "client_cpu_pct",
        "cpu_s_per_gb",
        "cpu_ms_per_request",
    ] {
        assert!(r[k].is_number(), "{k} in {r}");
    }
    assert!(r["handshake"].is_boolean() && r["generator_bound"].is_boolean());
    assert!(r["ports"].as_array().is_some_and(|p| !p.is_empty()));
    assert!(r["server_cpus"].is_array() && r["client_cpus"].is_array() && r["notes"].is_array());
    // Every point names what held it back, with the figures (as vpn's points do).
    let limit = &r["limit"];
    assert!(
        ["server", "generator", "cpus", "none"].contains(&limit["kind"].as_str().unwrap_or("")),
        "{r}"
    );
    assert!(
        limit["evidence"].as_str().is_some_and(|e| e.contains('%')),
        "{r}"
    );
    if r["suite"] != "mix" {
        let l = &r["latency_ms"];
        for k in ["p50", "p75", "p90", "p99", "p999", "max", "mean"] {
            assert!(l[k].is_number(), "latency {k} in {r}");
        }
        assert!(f(&l["p50"]) <= f(&l["p99"]) && f(&l["p99"]) <= f(&l["max"]) + 1e-9);
    }
}

fn check_every_request(r: &Value, au: &str) {
    let suite = r["suite"].as_str().unwrap();
    assert_eq!(r["negotiated"], expected_negotiated(suite, au), "{r}");
    let requests = u(&r["requests"]);
    assert!(requests > 0, "{r}");
    // The point is kept only if every logged request used the suite.
    assert_eq!(r["negotiated_requests"], r["server_requests"]);
    assert!(u(&r["server_requests"]) >= requests, "{r}");
    assert!(f(&r["server_cpu_s"]) > 0.0, "{r}");
    assert!(f(&r["client_cpu_s"]) > 0.0, "{r}");
}

/// Bytes the generator received: every completed response is the file plus headers,
/// and at most one partial response per connection comes on top.
fn check_bytes(r: &Value) {
    let size = u(&r["file_size"]);
    let n = u(&r["requests"]);
    let c = u(&r["concurrency"]);
    let bytes = u(&r["bytes"]);
    assert!(bytes >= n * size, "bytes {bytes} < {n} x {size}: {r}");
    assert!(
        bytes <= (n + c) * (size + 1024),
        "bytes {bytes} > ({n} + {c}) x ({size} + headers): {r}"
    );
    let body = u(&r["server_body_bytes"]);
    assert!(
        body >= n * size,
        "nginx sent {body} body bytes for {n} x {size}"
    );
    assert!(u(&r["server_bytes"]) > body);
    let tput = f(&r["throughput_bps"]);
    let expect = bytes as f64 / f(&r["wall_s"]);
    assert!(
        (tput - expect).abs() <= expect * 1e-6 + 1.0,
        "{tput} vs {expect}"
    );
}

#[test]
fn a_sweep_checks_every_request_and_computes_the_crypto_share() {
    let out = temp_file("sweep.jsonl");
    let v = json_run(
        &[
            "--suites",
            "aes128gcm,tls12-chacha,null,http",
            "--files",
            "4k,100k",
            "--concurrency",
            "1,8",
            "--duration",
            "1",
        ],
        &out,
    );
    assert_eq!(v["schema"], 2);
    assert_eq!(v["environment"]["kind"], "environment");
    let libs: Vec<&str> = v["environment"]["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["impl"].as_str().unwrap())
        .collect();
    for l in ["nginx", "openssl", "wrk", "h2load"] {
        assert!(
            libs.contains(&l),
            "{l} version in the environment: {libs:?}"
        );
    }
    assert_eq!(
        v["exclusions"].as_array().unwrap().len(),
        0,
        "{}",
        v["exclusions"]
    );
    let recs = v["records"].as_array().unwrap();
    assert_eq!(recs.len(), 4 * 2 * 2);
    for r in recs {
        check_record_shape(r);
        check_every_request(r, "RSA");
        check_bytes(r);
        assert_eq!(r["generator"], "wrk");
        assert_eq!(r["handshake"], false);
    }
    // Keep-alive: one connection per client connection, not per request.
    for r in recs {
        assert!(
            u(&r["server_connections"]) <= u(&r["concurrency"]) + 1,
            "{r}"
        );
    }

    // The JSON Lines file: the environment, the same records, then the end line with
    // the cipher-alone timings the shares used.
    let jl = lines(&out);
    assert_eq!(jl[0]["kind"], "environment");
    assert_eq!(jl.len(), 2 + recs.len());
    for (a, b) in jl[1..=recs.len()].iter().zip(recs) {
        check_record_shape(a);
        assert_eq!(a, b);
    }
    let end = jl.last().unwrap();
    assert_eq!(end["kind"], "end");
    assert_eq!(
        (end["interrupted"].as_bool(), u(&end["points"])),
        (Some(false), recs.len() as u64)
    );
    let alone = end["analysis_inputs"]
        .as_array()
        .expect("cipher-alone timings");
    assert!(
        alone.iter().any(|a| a["suite"] == "TLS_AES_128_GCM_SHA256"),
        "{end}"
    );

    // A share per suite and file (and pooled), from the null suite of the same run.
    let shares = v["analysis"]["shares"].as_array().unwrap();
    for suite in ["TLS_AES_128_GCM_SHA256", "ECDHE-RSA-CHACHA20-POLY1305"] {
        for size in [4096u64, 102400] {
            let s = shares
                .iter()
                .find(|s| s["suite"] == suite && s["file_size"] == size)
                .unwrap_or_else(|| panic!("share of {suite} at {size}"));
            // The suite's CPU per GB over its points, and the null's at the same points
            // weighted by the suite's bytes at each.
            let at = |name: &str, c: u64| {
                recs.iter()
                    .find(|r| r["suite"] == name && r["file_size"] == size && r["concurrency"] == c)
                    .unwrap()
            };
            let (mut cpu, mut bytes, mut null_w) = (0.0, 0u64, 0.0);
            for c in [1u64, 8] {
                let (r, n) = (at(suite, c), at("null", c));
                cpu += f(&r["server_cpu_s"]);
                bytes += u(&r["server_bytes"]);
                let n_per_gb = f(&n["server_cpu_s"]) / (u(&n["server_bytes"]) as f64 / 1e9);
                null_w += n_per_gb * u(&r["server_bytes"]) as f64;
            }
            let (cs, cn) = (cpu / (bytes as f64 / 1e9), null_w / bytes as f64);
            let share = (cs - cn) / cs;
            assert!((f(&s["share"]) - share).abs() < 1e-9, "{s}");
            assert!((f(&s["ceiling_speedup"]) - 1.0 / (1.0 - share)).abs() < 1e-6);
            assert!(
                s["cipher_alone_s_per_gb"].as_f64().is_some_and(|x| x > 0.0),
                "{s}"
            );
        }
        assert!(shares
            .iter()
            .any(|s| s["suite"] == suite && s["file_size"].is_null()));
    }
    assert!(!shares
        .iter()
        .any(|s| s["suite"] == "http" || s["suite"] == "null"));
    let refs = v["analysis"]["references"].as_array().unwrap();
    assert!(refs.iter().any(|r| r["suite"] == "null"));
    assert!(refs.iter().any(|r| r["suite"] == "http"));
    let _ = std::fs::remove_file(&out);
}

/// `--handshake`: the rate of handshakes beside the certificate's signature and X25519
/// timed alone, with the arithmetic of the record's own counters.
fn check_handshake_cost(r: &Value, sign_alg: &str) {
    let h = &r["handshake_cost"];
    assert!(h.is_object(), "handshake_cost: {r}");
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1.0);
    assert!(
        close(f(&h["handshakes_per_s"]), f(&r["requests_per_s"])),
        "{h}"
    );
    let per_cpu = u(&r["server_requests"]) as f64 / f(&r["server_cpu_s"]);
    assert!(close(f(&h["handshakes_per_server_cpu_s"]), per_cpu), "{h}");
    let prims = h["primitives"].as_array().unwrap();
    let shape: Vec<(&str, &str)> = prims
        .iter()
        .map(|p| (p["alg"].as_str().unwrap(), p["direction"].as_str().unwrap()))
        .collect();
    // OpenSSL 3's first default group, as nginx logged it for every request.
    assert_eq!(r["key_exchange"], "X25519", "{r}");
    assert_eq!(shape, [(sign_alg, "sign"), ("x25519", "derive")], "{h}");
    for p in prims {
        let ops = f(&p["ops_per_cpu_s"]);
        assert!(ops.is_finite() && ops > 0.0, "{p}");
        assert!(close(f(&p["handshake_pct"]), per_cpu / ops * 100.0), "{p}");
    }
    // Every full handshake signs once: the server cannot finish handshakes faster per
    // CPU-second than it signs alone (15% for machine noise).
    let sign = f(&prims[0]["handshake_pct"]);
    assert!(
        sign > 0.0 && sign < 115.0,
        "handshake rate {sign}% of the signing rate: {h}"
    );
    assert!(
        h["implementation"]
            .as_str()
            .unwrap()
            .starts_with("openssl "),
        "{h}"
    );
}

#[test]
fn h2load_handshake_mode_with_ecdsa_opens_a_connection_per_request() {
    let out = temp_file("h2load.jsonl");
    let v = json_run(
        &[
            "--generator",
            "h2load",
            "--handshake",
            "--cert",
            "ecdsa",
            "--suites",
            "aes256gcm,null",
            "--files",
            "4k",
            "--concurrency",
            "4",
            "--duration",
            "1",
        ],
        &out,
    );
    let recs = v["records"].as_array().unwrap();
    assert_eq!(recs.len(), 2, "{}", v["exclusions"]);
    for r in recs {
        check_record_shape(r);
        check_every_request(r, "ECDSA");
        check_bytes(r);
        assert_eq!(r["generator"], "h2load");
        assert_eq!(r["handshake"], true);
        assert_eq!(r["cert"], "ecdsa-p256");
        // Every request on its own connection (full handshake; no resumption).
        let (conns, reqs) = (u(&r["server_connections"]), u(&r["server_requests"]));
        assert_eq!(conns, reqs, "{r}");
        check_handshake_cost(r, "ecdsa-p256");
    }
    assert!(v["analysis"]["shares"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["suite"] == "TLS_AES_256_GCM_SHA384"));
    // The report puts the handshake rate beside the signing rate, one line per point.
    let o = run(&["report", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let line = text
        .lines()
        .find(|l| {
            l.contains("TLS_AES_256_GCM_SHA384") && l.contains("the server's handshake rate is")
        })
        .unwrap_or_else(|| panic!("no handshake line: {text}"));
    assert!(line.contains("of its ecdsa-p256 signing rate"), "{line}");
    let _ = std::fs::remove_file(&out);
}

#[test]
fn a_mix_splits_connections_on_one_server_and_compares_with_each_suite() {
    let out = temp_file("mix.jsonl");
    let o = run(&[
        "tls",
        "--suites",
        "http",
        "--mix",
        "chacha=25%,aes128gcm=75%",
        "--files",
        "4k",
        "--concurrency",
        "1,4",
        "--duration",
        "1",
        "--output",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains(
            "Mixed connections (--mix TLS_CHACHA20_POLY1305_SHA256=25%,TLS_AES_128_GCM_SHA256=75%)"
        ),
        "{table}"
    );
    assert!(table.contains("mix 25%/75%"), "{table}");
    assert!(
        table.contains("a mix needs at least 2 connections"),
        "{table}"
    );
    let all = lines(&out);
    let recs: Vec<Value> = all
        .iter()
        .filter(|l| l["kind"] == "record")
        .cloned()
        .collect();
    // The mix at c=1 is not measured, and the end line says why.
    let end = all.last().unwrap();
    assert_eq!(end["kind"], "end");
    let excl = end["exclusions"].as_array().unwrap();
    assert_eq!(excl.len(), 1, "{end}");
    assert_eq!(
        (
            &excl[0]["workload"],
            &excl[0]["impl"],
            &excl[0]["suite"],
            &excl[0]["concurrency"],
            &excl[0]["kind"]
        ),
        (
            &Value::from("tls"),
            &Value::from("nginx"),
            &Value::from("mix"),
            &Value::from(1),
            &Value::from("skipped")
        )
    );
    // http, chacha and aes128gcm at c=1 and c=4, and the mix at c=4.
    assert_eq!(recs.len(), 7);
    let m = recs
        .iter()
        .find(|r| r["suite"] == "mix")
        .expect("mix record");
    check_record_shape(m);
    let parts = m["mix"].as_array().unwrap();
    assert_eq!(parts[0]["suite"], "TLS_CHACHA20_POLY1305_SHA256");
    assert_eq!(
        parts[0]["negotiated"],
        "TLSv1.3 TLS_CHACHA20_POLY1305_SHA256"
    );
    assert_eq!(parts[1]["negotiated"], "TLSv1.3 TLS_AES_128_GCM_SHA256");
    assert_eq!(
        (u(&parts[0]["connections"]), u(&parts[1]["connections"])),
        (1, 3)
    );
    let total: u64 = parts.iter().map(|p| u(&p["requests"])).sum();
    assert_eq!(total, u(&m["requests"]));
    for p in parts {
        assert!(u(&p["server_requests"]) >= u(&p["requests"]));
        assert!(u(&p["requests"]) > 0);
    }
    assert_ne!(parts[0]["port"], parts[1]["port"]);
    let _ = std::fs::remove_file(&out);
}

#[test]
fn csv_and_markdown_render_the_points_and_the_shares() {
    let o = run(&[
        "tls",
        "--suites",
        "aes128gcm,null",
        "--files",
        "4k",
        "--concurrency",
        "2",
        "--duration",
        "1",
        "--format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = String::from_utf8_lossy(&o.stdout);
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 3, "{csv}");
    let head: Vec<&str> = rows[0].split(',').collect();
    assert!(head.contains(&"negotiated") && head.contains(&"cpu_s_per_gb"));
    for r in &rows[1..] {
        assert_eq!(r.split(',').count(), head.len(), "{r}");
    }
    let o = run(&[
        "tls",
        "--suites",
        "aes128gcm,null",
        "--files",
        "4k",
        "--concurrency",
        "2",
        "--duration",
        "1",
        "--format",
        "markdown",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(md.contains("| TLS_AES_128_GCM_SHA256 | 4k | 2 |"), "{md}");
    assert!(
        md.contains("| suite | file | s/GB | null s/GB | share |"),
        "{md}"
    );
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let cases: &[(&[&str], &str)] = &[
        (&["tls", "--concurrency", "0"], "concurrency"),
        (&["tls", "--concurrency", "1,10001"], "concurrency"),
        (&["tls", "--duration", "0.5"], "--time 0.5"),
        (&["tls", "--time", "1.5"], "whole seconds"),
        (&["tls", "--files", "0"], "--files '0'"),
        (&["tls", "--files", "4k,,1m"], "empty item"),
        (&["tls", "--files", "4k,2g"], "1g"),
        (&["tls", "--suites", "RC4-MD5"], "valid suites here"),
        (
            &["tls", "--suites", "ECDHE-ECDSA-AES128-GCM-SHA256"],
            "ECDHE-RSA-AES128-GCM-SHA256",
        ),
        (&["tls", "--mix", "chacha=10%"], "--mix"),
        (&["tls", "--dut-address", "10.0.0.1"], "use it with --dut"),
        (&["tls", "--nginx", "/nonexistent/nginx"], "package nginx"),
        (&["tls", "--format", "openssl"], "offered by speed only"),
        (&["tls", "--output", "/"], "is a directory"),
    ];
    common::refused_in_one_line(cases);
    // Generators missing from PATH: the package to install is named.
    for (gen, pkg) in [("wrk", "package wrk"), ("h2load", "package nghttp2-client")] {
        let o = common::command()
            .args(["tls", "--generator", gen, "--nginx", "/usr/sbin/nginx"])
            .env("PATH", "/nonexistent")
            .output()
            .unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
        assert!(e.contains(pkg), "{e}");
    }
    let list = run(&["tls", "--list"]);
    assert!(list.status.success());
    let l = String::from_utf8_lossy(&list.stdout);
    assert!(
        l.contains("TLS_AES_128_GCM_SHA256") && l.contains("null"),
        "{l}"
    );
}

#[test]
fn sigint_mid_run_leaves_no_process_temp_dir_or_port() {
    let out = temp_file("sigint.jsonl");
    let (mut child, mut err, first) = spawn_tls(&[
        "--suites",
        "aes128gcm,null,http",
        "--files",
        "100k",
        "--concurrency",
        "4",
        "--duration",
        "3",
        "--output",
        out.to_str().unwrap(),
    ]);
    let pid = child.id() as i32;
    // The first stderr line names the ports of the run.
    let ports: Vec<String> = first
        .trim()
        .rsplit_once("ports ")
        .expect("ports on the first line")
        .1
        .split(',')
        .map(str::to_string)
        .collect();
    assert_eq!(ports.len(), 3, "{first}");
    // Wait until the first point is finished (its record written), so that the one
    // interrupted is a later one.
    let start = Instant::now();
    while !std::fs::read_to_string(&out).is_ok_and(|t| t.contains("\"kind\":\"record\"")) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no point finished"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Wait until nginx and wrk run, and remember exactly which processes they are.
    let procs = running(pid, "nginx and wrk", |d| {
        d.iter().any(|p| p.2 == "wrk") && d.iter().filter(|p| p.2 == "nginx").count() >= 2
    });
    assert!(
        ports.iter().any(|p| listening(p)),
        "nginx listens during the run"
    );
    let dir = run_temp_dirs(pid);
    assert_eq!(dir.len(), 1, "the run's temp dir exists while it runs");
    // Only its owner may read the dir and the server's private key.
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| {
        format!(
            "{:o}",
            std::fs::metadata(p).unwrap().permissions().mode() & 0o777
        )
    };
    assert_eq!(mode(&dir[0]), "700", "the mode of {}", dir[0].display());
    assert_eq!(mode(&dir[0].join("key.pem")), "600", "the mode of key.pem");
    std::thread::sleep(Duration::from_millis(300));
    let status = signal_and_wait(&mut child, nix::sys::signal::Signal::SIGINT);
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut err, &mut rest);
    assert_eq!(status.code(), Some(130), "{rest}");
    // The finished point is shown too (stdout was empty once).
    let mut shown = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut shown).unwrap();
    assert!(shown.contains("TLS_AES_128_GCM_SHA256"), "stdout: {shown}");
    for (p, start, name) in &procs {
        let still = stat(*p).is_some_and(|(_, s, _)| s == *start);
        assert!(!still, "{name} (pid {p}) is still running");
    }
    assert!(descendants(pid).is_empty());
    for p in &ports {
        assert!(!listening(p), "port {p} still listening");
    }
    assert!(
        run_temp_dirs(pid).is_empty(),
        "temp dir left: {:?}",
        run_temp_dirs(pid)
    );
    // The finished point was kept and flushed, complete; the end line says interrupted
    // and names the two points never finished.
    let jl = lines(&out);
    assert_eq!(jl[0]["kind"], "environment");
    let recs: Vec<&serde_json::Value> = jl.iter().filter(|l| l["kind"] == "record").collect();
    assert_eq!(recs.len(), 1, "{jl:?}");
    assert_eq!(recs[0]["suite"], "TLS_AES_128_GCM_SHA256", "{}", recs[0]);
    assert!(recs[0]["requests"].as_u64().unwrap() > 0, "{}", recs[0]);
    assert_eq!(recs[0]["errors"], 0, "{}", recs[0]);
    let end = jl.last().unwrap();
    assert_eq!(end["kind"], "end", "{end}");
    assert_eq!(end["interrupted"], true, "{end}");
    assert_eq!(end["points"], 1, "{end}");
    // The point never reached (http) is listed; the one cut short (null) is neither a
    // record nor an exclusion.
    let never: Vec<&Value> = end["exclusions"].as_array().unwrap().iter().collect();
    assert_eq!(never.len(), 1, "{end}");
    assert_eq!(never[0]["kind"], "not_reached", "{end}");
    assert_eq!(never[0]["suite"], "http", "{end}");
    // The file compared with itself: one trial a side claims no interval (null), and
    // the table says why (the unit test's claim, on a real tls file).
    let o = run(&[
        "compare",
        out.to_str().unwrap(),
        out.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let c: Value = serde_json::from_slice(&o.stdout).unwrap();
    let pair = &c["pairs"][0];
    assert_eq!(
        (&pair["base_trials"], &pair["new_trials"]),
        (&1.into(), &1.into()),
        "{c}"
    );
    assert!(
        pair["ratio_ci"].is_null(),
        "one trial a side has no interval, yet ratio_ci is {}",
        pair["ratio_ci"]
    );
    let o = run(&["compare", out.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("one trial on each side have no interval"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let _ = std::fs::remove_file(&out);
}
