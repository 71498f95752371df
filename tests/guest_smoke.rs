//! guest/run: boots a Debian kernel under qemu and runs a command there (AF_ALG works in
//! the guest even where the host kernel has none). Each boot takes about 8 s; .ci/run
//! installs qemu and fetches the kernel first (scripts/deps/guest.sh).

mod common;

use std::path::Path;
use std::process::{Command, Output};

fn guest(args: &[&str]) -> Output {
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("guest/run");
    Command::new(run)
        .args(args)
        .env("CRYPTOBENCH_BIN", env!("CARGO_BIN_EXE_cryptobench"))
        .env("GUEST_TIMEOUT", "300")
        .env_remove("GUEST_VERBOSE")
        .output()
        .expect("guest/run starts")
}

#[test]
fn guest_run_passes_exit_status_and_exact_stdout() {
    if !common::guest_enabled() {
        return;
    }
    let o = guest(&["sh", "-c", "exit 3"]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "stderr: {}",
        common::utf8(&o.stderr)
    );
    assert!(o.stdout.is_empty());

    let o = guest(&["echo", "a  b", "it's \"q\"", "$(x)"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "stderr: {}",
        common::utf8(&o.stderr)
    );
    assert_eq!(common::utf8(&o.stdout), "a  b it's \"q\" $(x)\n");
}

#[test]
fn guest_has_af_alg_and_cryptobench() {
    if !common::guest_enabled() {
        return;
    }
    let o = guest(&[
        "sh",
        "-c",
        "ls /sys/module | grep algif; echo ---; cryptobench speed --list; echo oops >&2",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "stderr: {}",
        common::utf8(&o.stderr)
    );
    let out = common::utf8(&o.stdout);
    let (modules, list) = out.split_once("---\n").expect("marker line");
    for m in ["algif_aead", "algif_hash", "algif_skcipher"] {
        assert!(modules.lines().any(|l| l == m), "{m} not loaded: {modules}");
    }
    assert!(
        list.contains("openssl"),
        "speed --list in the guest: {list}"
    );
    // The command's stderr comes back on stderr, without kernel messages.
    assert_eq!(common::utf8(&o.stderr), "oops\n");

    let o = guest(&["cryptobench", "probe", "--format", "json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "stderr: {}",
        common::utf8(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .expect("probe --format json in the guest prints one JSON document");
    assert!(v.to_string().contains("af_alg"), "{v}");
}

#[test]
fn probe_in_the_guest_lists_af_alg_usable_with_drivers() {
    if !common::guest_enabled() {
        return;
    }
    let o = guest(&["cryptobench", "probe", "--format", "json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "stderr: {}",
        common::utf8(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("probe prints JSON");
    for kind in ["skcipher", "aead", "hash"] {
        assert_eq!(
            v["kernel"]["af_alg"][kind]["usable"], true,
            "{kind}: {}",
            v["kernel"]["af_alg"][kind]
        );
    }
    let pc = v["kernel"]["proc_crypto"].as_array().unwrap();
    // The bare cipher has both the AES-NI and the generic driver; templates such as
    // cbc(aes) are instantiated on demand.
    let aes = pc
        .iter()
        .find(|e| e["name"] == "aes")
        .expect("aes in /proc/crypto");
    let chosen = aes["chosen"].as_str().expect("a chosen driver");
    assert_eq!(chosen, "aes-aesni", "{aes}");
    let drivers = aes["drivers"].as_array().unwrap();
    assert!(drivers.len() >= 2, "aesni and generic drivers: {drivers:?}");
    let best = drivers
        .iter()
        .filter(|d| d["internal"] == false)
        .map(|d| d["priority"].as_i64().unwrap())
        .max()
        .unwrap();
    let c = drivers.iter().find(|d| d["driver"] == chosen).unwrap();
    assert_eq!(c["priority"].as_i64().unwrap(), best);
}
