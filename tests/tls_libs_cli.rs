//! `cryptobench tls --tls-lib`: the servers on the system OpenSSL, on an OpenSSL 3.5 build
//! (scripts/build-openssl) and HAProxy on AWS-LC and on wolfSSL (scripts/build-aws-lc,
//! scripts/build-wolfssl, scripts/build-haproxy), each record naming the library with the
//! proof from the server process's maps. Speeds are never asserted; about 1 s per point.
//!
//! Needs haproxy, nginx and wrk (scripts/deps/tls.sh) and the builds' tools
//! (scripts/deps/openssl.sh, scripts/deps/haproxy.sh); the builds are cached.

mod common;
use common::openssl::built;
use common::tls::{haproxy_lacks, json_run, records, temp_file, u, with, ONE_POINT};
use serde_json::Value;

/// The records of `tls ARGS` at one short point per server and library.
fn run_on(args: &[&str], name: &str) -> Vec<Value> {
    let out = temp_file(name);
    json_run(&with(args, ONE_POINT), &out);
    let recs = records(&out);
    let _ = std::fs::remove_file(&out);
    recs
}

/// The record on library `lib`, checked: its proof names a libcrypto of that version,
/// and it served every request on the suite asked for.
fn on<'a>(recs: &'a [Value], lib: &str, version: &str) -> &'a Value {
    let r = recs
        .iter()
        .find(|r| r["tls_lib"]["name"] == lib)
        .unwrap_or_else(|| panic!("no record on {lib}: {recs:?}"));
    let l = &r["tls_lib"];
    assert!(
        l["version"]
            .as_str()
            .is_some_and(|v| v.starts_with(version)),
        "{l}"
    );
    // wolfSSL's one file is its libcrypto.
    let file = match lib {
        "wolfssl" => "/libwolfssl.so",
        _ => "/libcrypto.so",
    };
    let libcrypto = l["proof"]["libcrypto"].as_str().unwrap();
    assert!(libcrypto.contains(file), "{l}");
    assert!(
        l["proof"]["process"].as_str().unwrap().contains("(pid "),
        "{l}"
    );
    assert_eq!(r["negotiated"], "TLSv1.3 TLS_AES_128_GCM_SHA256", "{r}");
    assert!(u(&r["requests"]) > 0 && r["negotiated_requests"] == r["server_requests"]);
    r
}

/// HAProxy on the system OpenSSL, on an OpenSSL 3.5 build and on AWS-LC, in one run.
#[test]
fn haproxy_runs_on_system_openssl_3_5_and_aws_lc_with_the_proof() {
    if let Some(why) = haproxy_lacks() {
        return common::skip(&why);
    }
    let (Some(ossl), Some(aws), Some(_)) = (
        built("build-openssl", &["3.5"]),
        built("build-aws-lc", &[]),
        built("build-haproxy", &["--lib", "aws-lc"]),
    ) else {
        return;
    };
    let recs = run_on(
        &[
            "--server",
            "haproxy",
            "--tls-lib",
            "system,openssl-3.5,aws-lc",
        ],
        "libs-haproxy.jsonl",
    );
    assert_eq!(recs.len(), 3, "{recs:?}");
    let system = on(&recs, "system", "OpenSSL 3.0.");
    assert_eq!(system["impl"], "haproxy");
    assert!(system["tls_lib"]["proof"]["libcrypto"]
        .as_str()
        .is_some_and(|p| p.starts_with("/usr/lib") || p.starts_with("/lib")));
    let r35 = on(&recs, "openssl-3.5", "OpenSSL 3.5.");
    assert_eq!(r35["impl"], "haproxy [openssl 3.5.5]");
    // The newest build of 3.5 with assembly in scripts/build-openssl's cache.
    let p = r35["tls_lib"]["proof"]["libssl"].as_str().unwrap();
    let cache = ossl.parent().unwrap().to_str().unwrap();
    assert!(
        p.starts_with(&format!("{cache}/3.5.")) && !p.contains("no-asm"),
        "{p} in {cache}"
    );
    assert_eq!(r35["openssl_build"]["name"], "openssl 3.5.5");
    let a = on(&recs, "aws-lc", "AWS-LC ");
    assert!(
        a["impl"].as_str().unwrap().starts_with("haproxy [aws-lc "),
        "{a}"
    );
    // HAProxy 3.0, built against AWS-LC; the libraries mapped are that build's.
    assert!(
        a["server"]["version"].as_str().unwrap().starts_with("3.0"),
        "{a}"
    );
    let p = a["tls_lib"]["proof"]["libssl"].as_str().unwrap();
    assert!(p.starts_with(aws.to_str().unwrap()), "{p} in {aws:?}");
    assert!(a.get("openssl_build").is_none(), "{a}");
    // Each library's points are apart in comparisons: the implementation names it.
    let mut names: Vec<&str> = recs.iter().map(|r| r["impl"].as_str().unwrap()).collect();
    names.dedup();
    assert_eq!(names.len(), 3, "{names:?}");
}

/// HAProxy on wolfSSL, with --handshake: the handshake point and its keep-alive control,
/// each proven from HAProxy's maps (its one libwolfssl, from scripts/build-wolfssl's dir).
#[test]
fn haproxy_runs_on_wolfssl_with_the_proof() {
    if let Some(why) = haproxy_lacks() {
        return common::skip(&why);
    }
    let (Some(wolf), Some(_)) = (
        built("build-wolfssl", &[]),
        built("build-haproxy", &["--lib", "wolfssl"]),
    ) else {
        return;
    };
    let recs = run_on(
        &["--server", "haproxy", "--tls-lib", "wolfssl", "--handshake"],
        "libs-wolfssl.jsonl",
    );
    assert_eq!(recs.len(), 2, "{recs:?}");
    let handshake = recs.iter().filter(|r| r["handshake"] == true).count();
    assert_eq!(
        handshake, 1,
        "one handshake point and one keep-alive: {recs:?}"
    );
    for r in &recs {
        let w = on(std::slice::from_ref(r), "wolfssl", "wolfSSL 5.");
        assert!(
            w["impl"]
                .as_str()
                .unwrap()
                .starts_with("haproxy [wolfssl 5."),
            "{w}"
        );
        assert!(
            w["server"]["version"].as_str().unwrap().starts_with("3.0"),
            "{w}"
        );
        let p = &w["tls_lib"]["proof"];
        assert!(
            p["libcrypto"]
                .as_str()
                .unwrap()
                .starts_with(wolf.to_str().unwrap()),
            "{p}"
        );
        assert_eq!(p["libssl"], p["libcrypto"], "{p}");
        assert!(w.get("openssl_build").is_none(), "{w}");
    }
}

/// HAProxy on AWS-LC alone, with --handshake: the handshake operations are timed on
/// AWS-LC in this process (aws-lc-rs, the tree HAProxy's AWS-LC is built from), not on the
/// system OpenSSL; on wolfSSL, which this process cannot load, on the system's.
#[test]
fn the_handshake_operations_are_timed_on_the_servers_library() {
    if let Some(why) = haproxy_lacks() {
        return common::skip(&why);
    }
    let (Some(_), Some(_)) = (
        built("build-aws-lc", &[]),
        built("build-haproxy", &["--lib", "aws-lc"]),
    ) else {
        return;
    };
    let recs = run_on(
        &["--server", "haproxy", "--tls-lib", "aws-lc", "--handshake"],
        "libs-aws-lc-ops.jsonl",
    );
    let h = recs
        .iter()
        .find(|r| r["handshake"] == true)
        .unwrap_or_else(|| panic!("no handshake point: {recs:?}"));
    let cost = &h["handshake_cost"];
    assert!(
        cost["implementation"]
            .as_str()
            .is_some_and(|i| i.starts_with("aws-lc ") && i.contains("AWS-LC ")),
        "{h}"
    );
    assert!(!cost["primitives"].as_array().unwrap().is_empty(), "{h}");
}

/// nginx on the OpenSSL 3.5 build, named by --tls-lib (found in the build cache).
#[test]
fn nginx_runs_on_openssl_3_5() {
    if let Some(why) = common::tls_lacks() {
        return common::skip(&why);
    }
    if built("build-openssl", &["3.5"]).is_none() {
        return;
    }
    let recs = run_on(&["--tls-lib", "openssl-3.5"], "libs-nginx.jsonl");
    assert_eq!(recs.len(), 1, "{recs:?}");
    let r = on(&recs, "openssl-3.5", "OpenSSL 3.5.");
    assert_eq!(r["impl"], "nginx [openssl 3.5.5]");
    assert_eq!(r["openssl_build"]["name"], "openssl 3.5.5");
}

/// `--list` names every library, found with its version or how to build it.
#[test]
fn list_names_every_library() {
    if let Some(why) = common::tls_lacks() {
        return common::skip(&why);
    }
    let o = common::run(&["tls", "--list"]);
    let text = common::stdout(&o);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let libs = &text[text
        .find("Libraries (--tls-lib):")
        .expect("a libraries section")..];
    for name in [
        "system",
        "openssl-3.5",
        "openssl-3.6",
        "openssl-4.0",
        "aws-lc",
        "wolfssl",
    ] {
        let line = libs
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{name}: ")))
            .unwrap_or_else(|| panic!("{name} in {libs}"));
        assert!(
            line.contains("OpenSSL ")
                || line.contains("AWS-LC ")
                || line.contains("wolfSSL ")
                || line.contains("scripts/build-"),
            "{line}"
        );
    }
}

#[test]
fn bad_libraries_exit_2_with_one_line() {
    common::refused_in_one_line(&[
        (
            &["tls", "--tls-lib", "boringssl"],
            "[possible values: system, openssl-3.5, openssl-3.6, openssl-4.0, aws-lc, wolfssl]",
        ),
        (
            &["tls", "--server", "nginx", "--tls-lib", "aws-lc"],
            "nginx cannot run on AWS-LC",
        ),
        (
            &["tls", "--server", "nginx", "--tls-lib", "wolfssl"],
            "nginx cannot run on wolfSSL",
        ),
        (
            &["tls", "--tls-lib", "openssl-3.5", "--openssl", "/tmp"],
            "cannot be used with",
        ),
    ]);
    // A library not built names the script that builds it.
    for (lib, script, env) in [
        (
            "aws-lc",
            "run scripts/build-aws-lc && scripts/build-haproxy --lib aws-lc",
            "CRYPTOBENCH_HAPROXY_CACHE",
        ),
        (
            "wolfssl",
            "run scripts/build-wolfssl && scripts/build-haproxy --lib wolfssl",
            "CRYPTOBENCH_HAPROXY_CACHE",
        ),
        (
            "openssl-4.0",
            "run scripts/build-openssl 4.0",
            "CRYPTOBENCH_OPENSSL_CACHE",
        ),
    ] {
        let o = common::command()
            .args(["tls", "--server", "haproxy", "--tls-lib", lib])
            .env(env, "/nonexistent/cache")
            .output()
            .unwrap();
        let e = common::one_line_exit_2(&o, lib);
        assert!(
            e.contains(&format!("--tls-lib {lib}: not built here: {script}")),
            "{e}"
        );
    }
}

/// SIGTERM mid-run on AWS-LC: HAProxy, wrk and the temp dir are gone.
#[test]
fn sigterm_on_aws_lc_leaves_nothing() {
    if let Some(why) = haproxy_lacks() {
        return common::skip(&why);
    }
    if built("build-haproxy", &["--lib", "aws-lc"]).is_none() {
        return;
    }
    let out = temp_file("libs-sigterm.jsonl");
    let what = "--server haproxy --tls-lib aws-lc --suites aes128gcm,chacha --files 100k --concurrency 2 --time 3";
    let args = with(&["--output", out.to_str().unwrap()], what);
    common::tls::sigterm_leaves_nothing(&args, &["haproxy", "wrk"]);
    let _ = std::fs::remove_file(&out);
}
