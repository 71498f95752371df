//! `probe` on this host, and the analysis that `speed` adds to its output.

mod common;
use common::run;

use serde_json::Value;

fn json(args: &[&str]) -> Value {
    let o = run(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("JSON")
}

#[test]
fn probe_explains_every_kernel_path() {
    let v = json(&["probe", "--format", "json"]);
    let k = &v["kernel"];
    for kind in ["skcipher", "aead", "hash"] {
        let s = &k["af_alg"][kind];
        let usable = s["usable"].as_bool().expect("usable is a bool");
        let reason = s["reason"].as_str().unwrap();
        assert!(!reason.is_empty());
        if !usable && k["config_source"].is_string() {
            // With the kernel config readable, the reason names the option or the module.
            assert!(
                reason.contains("CONFIG_CRYPTO_USER_API") || reason.contains("module"),
                "{reason}"
            );
        }
    }
    assert!(k["cryptodev"]["usable"].is_boolean());
    assert!(!k["cryptodev"]["reason"].as_str().unwrap().is_empty());
    let pc = k["proc_crypto"].as_array().unwrap();
    assert!(!pc.is_empty(), "/proc/crypto is always there");
    for e in pc {
        let drivers = e["drivers"].as_array().unwrap();
        assert!(!drivers.is_empty());
        if let Some(chosen) = e["chosen"].as_str() {
            let top = drivers
                .iter()
                .filter(|d| d["internal"] == false)
                .map(|d| d["priority"].as_i64().unwrap())
                .max()
                .unwrap();
            let c = drivers.iter().find(|d| d["driver"] == chosen).unwrap();
            assert_eq!(
                c["priority"].as_i64().unwrap(),
                top,
                "chosen driver is the highest priority"
            );
        }
    }
    assert!(v["cpu"]["features"].is_object());
    assert!(v["openssl"]["version"]
        .as_str()
        .unwrap()
        .contains("OpenSSL"));
    // The table says the same in words.
    let t = String::from_utf8(run(&["probe"]).stdout).unwrap();
    assert!(
        t.contains("AF_ALG skcipher") && t.contains("/dev/crypto"),
        "{t}"
    );
}

#[test]
fn speed_json_carries_fits_and_crossovers() {
    let v = json(&[
        "speed",
        "--time",
        "0.03",
        "--impl",
        "openssl,aws-lc",
        "--alg",
        "aes-128-cbc",
        "--direction",
        "enc",
        "--sizes",
        "16,256,4k,16k",
        "--format",
        "json",
        "--crossover",
        "openssl,aws-lc",
    ]);
    let fits = v["analysis"]["fits"].as_array().unwrap();
    assert_eq!(fits.len(), 2, "{fits:?}");
    for f in fits {
        let a = f["overhead_s"].as_f64().unwrap();
        let b = f["bandwidth_bps"].as_f64().unwrap();
        let ab = f["overhead_s_bounds"].as_array().unwrap();
        assert!(
            ab[0].as_f64().unwrap() <= a && a <= ab[1].as_f64().unwrap(),
            "{f}"
        );
        assert!(b > 0.0);
        assert_eq!(f["points"], 4);
    }
    let cs = v["analysis"]["crossovers"].as_array().unwrap();
    assert_eq!(cs.len(), 1);
    let c = &cs[0];
    assert!(
        c["size_bytes"].is_null() || c["size_bytes"].as_f64().unwrap() > 0.0,
        "{c}"
    );
    assert!(c["faster_below"] == "openssl" || c["faster_below"] == "aws-lc");
    // Every record says which environment it belongs to, and the environment has the probe.
    assert!(v["environment"]["kernel_crypto"]["af_alg"]["skcipher"]["usable"].is_boolean());
}

#[test]
fn crossover_needs_two_measured_paths() {
    for spec in ["openssl", "openssl,nosuch", "a,b,c"] {
        let o = run(&[
            "speed",
            "--impl",
            "openssl",
            "--alg",
            "sha256",
            "--crossover",
            spec,
        ]);
        assert_eq!(o.status.code(), Some(2), "{spec}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    }
}

#[test]
fn a_kernel_path_this_machine_lacks() {
    let probe = json(&["probe", "--format", "json"]);
    let kernel = &probe["kernel"];
    let af_alg_usable = ["skcipher", "aead", "hash"]
        .iter()
        .any(|k| kernel["af_alg"][k]["usable"] == true);
    // AF_ALG where this kernel lacks it, else /dev/crypto (out of tree, rarely loaded).
    let (path, reason) = if !af_alg_usable {
        ("af_alg", &kernel["af_alg"]["skcipher"]["reason"])
    } else if kernel["cryptodev"]["usable"] == false {
        ("cryptodev", &kernel["cryptodev"]["reason"])
    } else {
        common::skip("this machine has both AF_ALG and /dev/crypto: no kernel path is missing");
        return;
    };
    let reason = reason.as_str().unwrap().to_string();
    // Alone: exit 2 with the probe's reason.
    let o = run(&["speed", "--impl", path]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(e.contains(&reason), "{e} lacks the probe's reason {reason}");
    // Beside another path: the run goes on and lists it as unavailable.
    let v = json(&[
        "speed",
        "--impl",
        &format!("{path},ring"),
        "--alg",
        "sha256",
        "--sizes",
        "64",
        "--time",
        "0.02",
        "--format",
        "json",
    ]);
    assert!(v["records"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["impl"] == "ring"));
    let u = v["unavailable"].as_array().unwrap();
    assert!(
        u.iter()
            .any(|u| u["name"] == path && u["reason"].as_str().unwrap().contains(&reason)),
        "{u:?}"
    );
    // Its variants, too, are unavailable rather than unknown.
    let variant = if path == "af_alg" {
        "zerocopy"
    } else {
        "engine=devcrypto"
    };
    let o = run(&["speed", "--impl", path, "--variant", variant]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("unknown --variant"));
}

/// probe lists the OpenSSL builds scripts/build-openssl cached, each as `--openssl DIR`
/// checks it: here a cache of two, one holding the system's libcrypto (a real OpenSSL,
/// so no build is needed) and one with none, which says why.
#[test]
fn probe_lists_the_cached_openssl_builds() {
    let cache = common::tempdir(
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")),
        "probe-builds",
    );
    let libcrypto = cryptobench_impls::testing::system_libcrypto().expect("the system libcrypto");
    let lib = cache.join("3.x-asm-here-0000/lib");
    std::fs::create_dir_all(&lib).unwrap();
    std::os::unix::fs::symlink(&libcrypto, lib.join(libcrypto.file_name().unwrap())).unwrap();
    std::fs::create_dir_all(cache.join("3.x-broken-0000")).unwrap();
    let probe = |format: &[&str]| {
        let o = common::command()
            .arg("probe")
            .args(format)
            .env("CRYPTOBENCH_OPENSSL_CACHE", &cache)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", common::stderr(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    let v: Value = serde_json::from_str(&probe(&["--format", "json"])).unwrap();
    let builds = v["openssl_builds"]["builds"]
        .as_array()
        .expect("openssl_builds");
    assert_eq!(builds.len(), 2, "{builds:?}");
    assert_eq!(builds[0]["name"], "3.x-asm-here-0000");
    assert!(
        builds[0]["version"]
            .as_str()
            .unwrap()
            .starts_with("OpenSSL 3"),
        "{builds:?}"
    );
    assert!(
        builds[1]["reason"]
            .as_str()
            .unwrap()
            .contains("no libcrypto.so.N"),
        "{builds:?}"
    );
    let t = probe(&[]);
    assert!(t.contains("OpenSSL builds (--openssl DIR) in "), "{t}");
    assert!(t.contains("  3.x-broken-0000  NOT usable here: "), "{t}");
}
