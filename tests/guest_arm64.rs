//! Study 1's question on ARM: the arm64 kernel's cbc(aes) drivers (generic C, NEON
//! bit-sliced, ARMv8 crypto extensions) through AF_ALG, side by side with libcrypto, in
//! Debian's arm64 kernel under qemu-system-aarch64 (`GUEST_ARCH=arm64 guest/run`).
//! Timings under TCG mean nothing; the drivers, fields and analysis are checked.

mod common;

use serde_json::Value;
use std::path::Path;
use std::process::Command;

const DRIVERS: [&str; 3] = ["cbc(aes-generic)", "cbc-aes-neonbs", "cbc-aes-ce"];

#[test]
fn arm64_kernel_cbc_aes_drivers_side_by_side_with_libcrypto() {
    if !common::guest_enabled() {
        return;
    }
    let Some(bin) = common::cross_binary("aarch64-unknown-linux-gnu") else {
        return;
    };
    let variants: String = DRIVERS
        .iter()
        .map(|d| format!(" --variant 'driver={d}'"))
        .collect();
    let script = format!(
        "cryptobench probe --format json; echo '=====8<====='; \
         cryptobench speed --impl openssl,af_alg --alg aes-128-cbc{variants} \
         --crossover openssl,af_alg --sizes 16,4k --time 0.02 --format json"
    );
    let o = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("guest/run"))
        .args(["sh", "-c", &script])
        .env("GUEST_ARCH", "arm64")
        .env("CRYPTOBENCH_BIN", &bin)
        .env("GUEST_TIMEOUT", "600")
        .env_remove("GUEST_VERBOSE")
        .output()
        .expect("guest/run starts");
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}\n{out}",
        String::from_utf8_lossy(&o.stderr)
    );
    let (probe, speed) = out.split_once("=====8<=====").expect("both outputs");
    let probe: Value = serde_json::from_str(probe).expect("probe JSON");
    let speed: Value = serde_json::from_str(speed).expect("speed JSON");

    // -cpu max: the ARMv8 crypto extensions, read from HWCAP in a real arm64 kernel.
    assert_eq!(probe["cpu"]["arch"], "aarch64");
    for f in ["asimd", "aes", "pmull", "sha1", "sha2"] {
        assert_eq!(probe["cpu"]["features"][f], true, "{}", probe["cpu"]);
    }
    assert_eq!(probe["kernel"]["af_alg"]["skcipher"]["usable"], true);
    let cbc = probe["kernel"]["proc_crypto"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "cbc(aes)")
        .expect("cbc(aes) in /proc/crypto");
    let listed: Vec<&str> = cbc["drivers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["driver"].as_str().unwrap())
        .collect();
    for d in ["cbc-aes-neonbs", "cbc-aes-ce"] {
        assert!(listed.contains(&d), "{d} not registered: {listed:?}");
    }
    assert_eq!(
        cbc["chosen"], "cbc-aes-ce",
        "the CE driver has the top priority"
    );

    // Each requested driver did the work of its own records, both directions, each size.
    let recs = speed["records"].as_array().unwrap();
    for d in DRIVERS {
        let variant = format!("driver={d}");
        let mine: Vec<&Value> = recs.iter().filter(|r| r["variant"] == variant).collect();
        assert_eq!(mine.len(), 4, "{d}: enc+dec at 16 and 4k: {mine:?}");
        for r in mine {
            assert_eq!(r["driver"], d, "{r}");
            assert!(
                r["cpu_sys_s"].as_f64().unwrap() > 0.0,
                "kernel work is sys time"
            );
        }
    }
    assert!(
        recs.iter()
            .any(|r| r["impl"] == "openssl"
                && r["library"].as_str().unwrap_or("").contains("aarch64"))
    );
    // The crossover against libcrypto is reported for every kernel path.
    let text = speed["analysis"].to_string();
    for d in DRIVERS {
        assert!(
            text.contains(&format!("af_alg [driver={d}]")),
            "{d}: {text}"
        );
    }
}
