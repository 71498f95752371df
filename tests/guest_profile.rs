//! `speed --profile` on AF_ALG inside the guest (the host kernel has no AF_ALG): perf,
//! packed into the initramfs by guest/setup from the host's linux-perf, samples the
//! whole guest while cryptobench drives the kernel's cbc(aes) through its socket.
//! Where the time of one call goes must follow the size: at 16 bytes the kernel's
//! per-call work (syscall, AF_ALG buffers and scatterlists) dominates and AES is a
//! sliver; at 64 KiB the AES share is larger. One boot (about 25 s under TCG).

mod common;

use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Everything the kernel does for a call that is not the cipher itself.
const KERNEL_SIDE: [&str; 5] = [
    "syscall",
    "crypto-api",
    "memcpy",
    "kernel-other",
    "kernel-net",
];

fn share(p: &Value, cat: &str) -> f64 {
    p["categories"][cat]["share"].as_f64().unwrap_or(0.0)
}

fn ci(p: &Value, cat: &str) -> (f64, f64) {
    let c = &p["categories"][cat]["ci"];
    (c[0].as_f64().unwrap_or(0.0), c[1].as_f64().unwrap_or(0.0))
}

/// The profile of the record at `size`, checked for internal consistency.
fn profile_at(report: &Value, size: u64) -> Value {
    let rec = report["records"]
        .as_array()
        .expect("records")
        .iter()
        .find(|r| r["size"].as_u64() == Some(size))
        .unwrap_or_else(|| panic!("no record at {size} B: {report}"));
    let p = rec["profile"].clone();
    let n = common::check_profile(&p);
    assert!(n >= 200, "only {n} busy samples at {size} B: {p}");
    p
}

#[test]
fn af_alg_per_call_overhead_is_kernel_side_at_16_bytes_and_aes_grows_with_size() {
    if !common::guest_enabled() {
        return;
    }
    if !Path::new("/usr/bin/perf").exists() {
        return common::skip(
            "no /usr/bin/perf on the host for guest/setup to pack (scripts/deps/profile.sh)",
        );
    }
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("guest/run");
    let o = Command::new(&run)
        .args([
            "cryptobench",
            "speed",
            "--impl",
            "af_alg",
            "--alg",
            "aes-128-cbc",
            "--direction",
            "enc",
            "--sizes",
            "16,64k",
            "--time",
            "1",
            "--profile",
            "--format",
            "json",
        ])
        .env("CRYPTOBENCH_BIN", env!("CARGO_BIN_EXE_cryptobench"))
        .env("GUEST_TIMEOUT", "300")
        .env_remove("GUEST_VERBOSE")
        .output()
        .unwrap_or_else(|e| panic!("{} does not start: {e}", run.display()));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "guest/run failed: {err}");
    let report: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("no JSON report ({e}); stderr: {err}"));
    let small = profile_at(&report, 16);
    let large = profile_at(&report, 65536);
    eprintln!("16 B: {small}\n64 KiB: {large}");

    // 16 B: the kernel's side of the call dominates, the cipher is a sliver of it. Not a
    // fixed share (0.5 read 0.46-0.49 on a loaded host): larger than any other category.
    let kernel: f64 = KERNEL_SIDE.iter().map(|c| share(&small, c)).sum();
    let crypto = small["crypto"]["share"].as_f64().unwrap();
    let categories = small["categories"].as_object().expect("categories");
    let (other, most) = categories
        .keys()
        .filter(|c| !KERNEL_SIDE.contains(&c.as_str()))
        .map(|c| (c.as_str(), share(&small, c)))
        .fold(("", 0.0), |m, (c, s)| if s > m.1 { (c, s) } else { m });
    assert!(
        kernel > most,
        "kernel side {kernel} at 16 B, {other} {most}: {small}"
    );
    assert!(
        kernel > 5.0 * crypto,
        "kernel side {kernel} vs crypto {crypto}"
    );
    // AF_ALG's own per-call work is named as such, and with the syscall it is a large part
    // of the call. No order between the two is asserted: on a Zen 3 they measured 21.7%
    // [20.6-22.8] and 22.7% [21.6-23.8], intervals that overlap.
    let (api_lo, _) = ci(&small, "crypto-api");
    assert!(
        api_lo > 0.1,
        "crypto-api {:?} at 16 B: {small}",
        ci(&small, "crypto-api")
    );
    let per_call = share(&small, "crypto-api") + share(&small, "syscall");
    assert!(per_call > 0.3, "crypto-api + syscall {per_call} at 16 B");

    // 64 KiB: AES's share is larger, beyond both intervals.
    let (_, small_hi) = ci(&small, "aes");
    let (large_lo, _) = ci(&large, "aes");
    assert!(
        large_lo > small_hi,
        "aes at 64 KiB {:?} vs at 16 B {:?}",
        ci(&large, "aes"),
        ci(&small, "aes")
    );
}
