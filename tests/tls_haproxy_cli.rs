//! `cryptobench tls --server haproxy` (and `--threads`): the real HAProxy on loopback,
//! driven by wrk, about 1 s per point. As in tls_cli.rs, speeds are never asserted: what
//! every request negotiated, the handshake figures' consistency, the records' server and
//! cleanup are.
//!
//! Needs haproxy besides nginx, wrk and nghttp2-client (scripts/deps/tls.sh).

mod common;
use common::tls::{
    expected_negotiated, f, haproxy_lacks, json_run, records, temp_file, u, with, ONE_POINT,
};

/// Every default suite, served by HAProxy itself: each point kept only when every
/// request HAProxy logged negotiated the suite asked for.
#[test]
fn haproxy_serves_every_default_suite_with_the_negotiated_suite_checked() {
    match haproxy_lacks() {
        Some(why) => common::skip(&why),
        None => {
            let out = temp_file("haproxy-suites.jsonl");
            let args = ["--server", "haproxy", "--files", "4k", "--concurrency", "2"];
            json_run(&[&args[..], &["--time", "1"]].concat(), &out);
            let recs = records(&out);
            let suites: Vec<&str> = recs.iter().map(|r| r["suite"].as_str().unwrap()).collect();
            // The default suites: seven TLS suites (TLS 1.2 and 1.3), then http and null.
            assert_eq!(recs.len(), 9, "{suites:?}");
            for s in [
                "TLS_AES_128_GCM_SHA256",
                "ECDHE-RSA-AES128-SHA256",
                "http",
                "null",
            ] {
                assert!(suites.contains(&s), "{s} in {suites:?}");
            }
            for r in &recs {
                assert_eq!(r["impl"], "haproxy", "{r}");
                assert!(
                    r["impl_version"].as_str().unwrap().starts_with("haproxy/"),
                    "{r}"
                );
                assert_eq!(r["server"]["name"], "haproxy", "{r}");
                assert!(r["server"]["version"]
                    .as_str()
                    .is_some_and(|v| v.starts_with('2')));
                assert_eq!(u(&r["server"]["threads"]), 1, "{r}");
                let suite = r["suite"].as_str().unwrap();
                assert_eq!(r["negotiated"], expected_negotiated(suite, "RSA"), "{r}");
                assert!(u(&r["requests"]) > 0, "{r}");
                assert_eq!(r["negotiated_requests"], r["server_requests"], "{r}");
                assert!(u(&r["server_requests"]) >= u(&r["requests"]), "{r}");
                // HAProxy answered the file itself: every response was the whole file.
                assert!(
                    u(&r["server_body_bytes"]) >= u(&r["requests"]) * 4096,
                    "{r}"
                );
                assert!(f(&r["server_cpu_s"]) > 0.0, "{r}");
            }
            let _ = std::fs::remove_file(&out);
        }
    }
}

/// --handshake: handshakes per second and the client's percentiles per connection, the
/// server's CPU per handshake, and a keep-alive control point of the same server; by wrk
/// and by h2load, the second client a witness of the first (every request each counted
/// is one HAProxy logged: the first line after the sizing run's truncated log included).
#[test]
fn haproxy_handshakes_have_percentiles_and_a_keepalive_control() {
    let lacks = haproxy_lacks().or_else(|| {
        (!common::has_program("h2load")).then(|| "h2load not found (nghttp2-client)".into())
    });
    match lacks {
        Some(why) => common::skip(&why),
        None => {
            for generator in ["wrk", "h2load"] {
                handshakes_by(generator);
            }
        }
    }
}

fn handshakes_by(generator: &str) {
    let out = temp_file(&format!("haproxy-handshake-{generator}.jsonl"));
    json_run(
        &[
            "--server",
            "haproxy",
            "--generator",
            generator,
            "--suites",
            "aes128gcm",
            "--files",
            "4k",
            "--concurrency",
            "4",
            "--time",
            "1",
            "--handshake",
        ],
        &out,
    );
    let recs = records(&out);
    assert_eq!(recs.len(), 2, "{generator}: {recs:?}");
    let hs = recs
        .iter()
        .find(|r| r["handshake"] == true)
        .expect("a handshake point");
    assert_eq!(hs["generator"], generator, "{hs}");
    assert!(f(&hs["handshakes_per_s"]) > 0.0, "{hs}");
    let ms = &hs["handshake_ms"];
    let (p50, p90, p99, max) = (f(&ms["p50"]), f(&ms["p90"]), f(&ms["p99"]), f(&ms["max"]));
    assert!(p50 > 0.0 && p90 >= p50 && p99 >= p90 && max >= p99, "{hs}");
    assert!(f(&hs["server_cpu_per_handshake_ms"]) > 0.0, "{hs}");
    // One connection per request, as HAProxy logged them.
    let (reqs, conns) = (u(&hs["server_requests"]), u(&hs["server_connections"]));
    assert!(
        conns * 10 >= reqs * 9,
        "{generator}: {conns} connections for {reqs} requests"
    );
    let ka = recs
        .iter()
        .find(|r| r["handshake"] == false)
        .expect("a keep-alive point");
    assert_eq!(ka["server"], hs["server"]);
    assert_eq!(ka["suite"], hs["suite"]);
    assert!(ka.get("handshakes_per_s").is_none(), "{ka}");
    assert!(u(&ka["server_connections"]) <= 4, "{ka}");
    let _ = std::fs::remove_file(&out);
}

/// Both servers, one at a time, at 1 and 2 workers or threads, in 2 rounds: each record
/// names its server, threads and round, a point with more threads than server CPUs says
/// so, and the thread sweep gives each count's rate per thread and, where the threads fit
/// the server's CPUs, the efficiency with its interval over the rounds (no claim past them).
#[test]
fn both_servers_at_each_thread_count() {
    match haproxy_lacks() {
        Some(why) => common::skip(&why),
        None => {
            let out = temp_file("haproxy-threads.jsonl");
            let args = [
                "--server",
                "nginx,haproxy",
                "--threads",
                "1,2",
                "--rounds",
                "2",
            ];
            let doc = json_run(&with(&args, ONE_POINT), &out);
            let recs = records(&out);
            let seen: Vec<(String, u64, u64)> = recs
                .iter()
                .map(|r| {
                    (
                        r["server"]["name"].as_str().unwrap().to_string(),
                        u(&r["server"]["threads"]),
                        r.get("round").map_or(1, u),
                    )
                })
                .collect();
            let pass = [("nginx", 1), ("nginx", 2), ("haproxy", 1), ("haproxy", 2)];
            let want: Vec<(String, u64, u64)> = [1, 2]
                .into_iter()
                .flat_map(|round| pass.map(|(n, t)| (n.to_string(), t, round)))
                .collect();
            assert_eq!(seen, want, "one server at a time, every point once a round");
            let sweep = doc["analysis"]["threads"]
                .as_array()
                .expect("the thread sweep");
            assert_eq!(sweep.len(), 4, "{sweep:?}");
            for row in sweep {
                assert_eq!(u(&row["rounds"]), 2, "{row}");
                let (threads, rate) = (u(&row["threads"]), f(&row["requests_per_s"]));
                assert!(rate > 0.0, "{row}");
                assert!((f(&row["per_thread"]) * threads as f64 - rate).abs() < 1e-6 * rate);
                let cpus = recs[0]["server_cpus"].as_array().unwrap().len().max(1) as u64;
                let e = row.get("efficiency").map(f);
                match (threads, threads > cpus) {
                    (1, _) => assert!(e.is_none(), "{row}"),
                    (_, true) => {
                        assert_eq!(row["oversubscribed"], true, "{row}");
                        assert!(e.is_none(), "no scaling claim past the CPUs: {row}");
                        eprintln!(
                            "efficiency with an interval: not observable here ({cpus} server CPU)"
                        );
                    }
                    (_, false) => {
                        let ci = row["efficiency_ci"].as_array().expect("an interval");
                        let (e, lo, hi) = (e.unwrap(), f(&ci[0]), f(&ci[1]));
                        assert!(e > 0.0 && lo <= e && e <= hi, "{row}");
                    }
                }
            }
            for r in &recs {
                let threads = u(&r["server"]["threads"]) as usize;
                let cpus = r["server_cpus"].as_array().unwrap().len().max(1);
                let noted = r["notes"].as_array().unwrap().iter().any(|n| {
                    n.as_str()
                        .is_some_and(|n| n.contains("exceed the server's"))
                });
                assert_eq!(noted, threads > cpus, "{r}");
                // nginx runs a worker per thread, HAProxy one process.
                let procs = if r["impl"] == "nginx" {
                    threads as u64
                } else {
                    1
                };
                assert_eq!(u(&r["server_workers"]), procs, "{r}");
            }
            let _ = std::fs::remove_file(&out);
        }
    }
}

#[test]
fn haproxy_bad_input_exits_2_with_one_line() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["tls", "--server", "apache"],
            "valid servers are nginx, haproxy",
        ),
        (
            &["tls", "--server", "nginx,"],
            "valid servers are nginx, haproxy",
        ),
        (&["tls", "--threads", "0"], "--threads '0'"),
        (&["tls", "--threads", "1,1025"], "1 to 1024"),
        (
            &["tls", "--server", "haproxy", "--gzip"],
            "--gzip is measured on nginx only",
        ),
    ];
    common::refused_in_one_line(cases);
}

/// SIGTERM mid-run: HAProxy and wrk are gone, by PID, and so is the temp dir.
#[test]
fn sigterm_mid_run_leaves_no_haproxy_or_temp_dir() {
    match haproxy_lacks() {
        Some(why) => common::skip(&why),
        None => {
            let out = temp_file("haproxy-sigterm.jsonl");
            let what = "--server haproxy --suites aes128gcm,null,http --files 100k --concurrency 4 --time 3";
            let args = with(&["--output", out.to_str().unwrap()], what);
            common::tls::sigterm_leaves_nothing(&args, &["haproxy", "wrk"]);
            let _ = std::fs::remove_file(&out);
        }
    }
}
