//! The studies on OpenSSL builds (scripts/build-openssl, cached under
//! ~/.cache/cryptobench): study 5 (router-vpn) comparing two builds end to end with its
//! application claim measured, and study aesni putting a no-asm build beside the ISA-off
//! path. Apart from tests/openssl_builds.rs, whose other tests they would wait behind:
//! these two are the longest. They need root (CI runs as root).

mod common;

use common::openssl::{json, refused, temp_dir, tunnel_possible};
use common::{cryptobench as run, stderr};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The install dir of `scripts/build-openssl 3.5 [flags]` (None: its skip reported).
fn build(flags: &[&str]) -> Option<PathBuf> {
    common::openssl::build("3.5", flags)
}

/// The cells of a table row (columns are two spaces or more apart).
fn cells(line: &str) -> Vec<&str> {
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

/// Study 5 end to end on two builds: each one's `openssl speed` table, an OpenVPN tunnel
/// on each (and on the system's libcrypto, the baseline), and the conclusion per pair.
#[test]
fn study_router_vpn_compares_two_builds_table_tunnel_and_conclusion() {
    if !tunnel_possible() {
        return;
    }
    let (Some(asm), Some(no_asm)) = (build(&[]), build(&["--no-asm"])) else {
        return;
    };
    let (a, n) = (asm.to_str().unwrap(), no_asm.to_str().unwrap());
    let o = run(&[
        "study",
        "router-vpn",
        "--quick",
        "--openssl",
        a,
        "--openssl",
        n,
    ]);
    let out = common::stdout(&o);
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    let rows: Vec<Vec<&str>> = out.lines().map(cells).collect();
    for build in ["openssl 3.5.5", "openssl 3.5.5 no-asm"] {
        // Its speed table row, and its tunnel's Mbit/s.
        assert!(
            rows.iter()
                .any(|r| r.len() == 7 && r[0] == "aes-256-cbc" && r[1] == build),
            "no aes-256-cbc row for {build}: {out}"
        );
        let tunnel = rows
            .iter()
            .find(|r| r.len() == 4 && r[0] == build)
            .unwrap_or_else(|| panic!("no tunnel row for {build}: {out}"));
        assert!(tunnel[1].parse::<f64>().unwrap() > 0.0, "{tunnel:?}");
    }
    let (_, c) = out.split_once("Conclusion").expect("a conclusion");
    assert!(
        c.contains("the baseline is the system's libcrypto (openssl 3.0."),
        "{c}"
    );
    // The no-asm build's AES is slower: the direction, not a number.
    let line = c
        .lines()
        .find(|l| {
            l.starts_with(
                "openssl 3.5.5 no-asm against openssl 3.5.5: the build changed AES-256-CBC by -",
            )
        })
        .unwrap_or_else(|| panic!("no conclusion for the pair: {c}"));
    assert!(line.contains("and the OpenVPN tunnel by "), "{line}");
    assert!(
        line.contains("by Amdahl from the sampled crypto share")
            || line.contains("the crypto share was not sampled"),
        "{line}"
    );
    no_asm_tunnel_is_slower(a, n);
}

/// Study 5's application claim, where the data can decide it: the study's one round a
/// build cannot, so the tunnel runs 3 rounds a build here. Either `compare` (the interval
/// analyse::decide uses) calls the no-asm build's throughput lower, or every no-asm round
/// spent more of the tunnel's CPU per GB than every stock round (3 against 3: one order in
/// 20 by chance). The CPU is the cause of the slowdown on a CPU-bound tunnel, and it holds
/// beside another test: with one CPU of two busy here, throughput fell to 27-32 and 19-20
/// Mbit/s but CPU per GB stayed 27-32 against 47-51 s (alone: 23-27 against 45-50). In CI
/// the other lane's load came and went, and three pairs of throughput alone left 1 inside
/// the interval ([0.47, 1.97], [0.26, 1.34], [0.54, 1.12]). A faster or cheaper no-asm
/// tunnel fails at once; a pair that decides neither way is measured again, up to 3 times,
/// then reported as a skip (CI fails it), never a pass.
fn no_asm_tunnel_is_slower(asm: &str, no_asm: &str) {
    let dir = temp_dir("tunnel-rounds");
    let mut undecided = Vec::new();
    let mut decided = false;
    for attempt in 0..3 {
        let (p, cpu) = tunnel_pair(&dir, attempt, asm, no_asm);
        let max = |v: &[f64]| v.iter().copied().fold(f64::MIN, f64::max);
        let min = |v: &[f64]| v.iter().copied().fold(f64::MAX, f64::min);
        assert!(
            max(&cpu.no_asm) >= min(&cpu.asm),
            "every no-asm round took less tunnel CPU per GB: {cpu:?}"
        );
        match p["verdict"].as_str() {
            Some("regressed") => {
                let hi = p["ratio_ci"][1].as_f64().expect("an interval");
                assert!(hi < 1.0, "{p}");
                decided = true;
            }
            Some("unchanged") => decided = min(&cpu.no_asm) > max(&cpu.asm),
            _ => panic!("the no-asm build's tunnel measured faster: {p}"),
        }
        if decided {
            break;
        }
        undecided.push(format!("{p} {cpu:?}"));
    }
    let _ = std::fs::remove_dir_all(&dir);
    if !decided {
        common::skip(&format!(
            "3 pairs of 3 rounds a build decided neither the tunnel's throughput nor its CPU per GB: {undecided:?}"
        ));
    }
}

/// The tunnel's CPU seconds per GB in each round, by build.
#[derive(Debug)]
struct CpuPerGb {
    asm: Vec<f64>,
    no_asm: Vec<f64>,
}

/// One pair: the tunnel on each build, 3 rounds each, `compare`'s one pair of them and
/// each round's CPU per GB.
fn tunnel_pair(dir: &Path, attempt: usize, asm: &str, no_asm: &str) -> (Value, CpuPerGb) {
    let file = |b: &str| {
        dir.join(format!("{b}-{attempt}.jsonl"))
            .display()
            .to_string()
    };
    let [asm_cpu, no_asm_cpu] = [("asm", asm), ("no-asm", no_asm)].map(|(b, build)| {
        let args = format!("vpn --no-store --tunnels openvpn --ciphers AES-256-CBC --streams 1 --directions up --duration 2 --rounds 3 --openssl {build} --output {}", file(b));
        let o = run(&args.split(' ').collect::<Vec<_>>());
        assert!(o.status.success(), "{b}: {}", stderr(&o));
        let rounds: Vec<f64> = common::dut_lab::records(Path::new(&file(b)))
            .iter()
            .map(|r| r["cpu_s_per_gb"].as_f64().unwrap_or_else(|| panic!("{r}")))
            .collect();
        assert_eq!(rounds.len(), 3, "{b}: {rounds:?}");
        rounds
    });
    let cpu = CpuPerGb {
        asm: asm_cpu,
        no_asm: no_asm_cpu,
    };
    let o = run(&[
        "compare",
        &file("asm"),
        &file("no-asm"),
        "--a",
        "openvpn [openssl 3.5.5]",
        "--b",
        "openvpn [openssl 3.5.5 no-asm]",
        "--format",
        "json",
    ]);
    let pairs = json(&o, "compare")["pairs"].clone();
    assert_eq!(pairs.as_array().map(Vec::len), Some(1), "{pairs}");
    let p = pairs[0].clone();
    assert_eq!(
        (p["base_trials"].as_u64(), p["new_trials"].as_u64()),
        (Some(3), Some(3)),
        "{p}"
    );
    (p, cpu)
}

/// study aesni with a no-asm build: the build beside the stock one and its ISA-off path.
#[test]
fn study_aesni_puts_a_no_asm_build_beside_the_isa_off_path() {
    if !tunnel_possible() {
        return;
    }
    let Some(no_asm) = build(&["--no-asm"]) else {
        return;
    };
    let n = no_asm.to_str().unwrap();
    // The same build twice would share one label: refused before anything runs.
    refused(
        &["study", "aesni", "--openssl", n, "--openssl", n],
        "the same build (openssl 3.5.5 no-asm)",
    );
    let o = run(&["study", "aesni", "--quick", "--openssl", n]);
    let out = common::stdout(&o);
    assert!(o.status.success(), "{out}\n{}", stderr(&o));
    let (_, c) = out.split_once("Conclusion").expect("a conclusion");
    let line = c
        .lines()
        .find(|l| l.starts_with("openssl 3.5.5 no-asm against the stock build (openssl 3.0."))
        .unwrap_or_else(|| panic!("no line for the build: {c}"));
    // No assembly at all is slower than the stock build's AES-NI code.
    assert!(
        line.contains("AES-256-GCM at 16 KiB 0.") && line.contains("x the stock build's (slower)"),
        "{line}"
    );
    assert!(line.contains("the ISA-off path's"), "{line}");
    assert!(line.contains("the OpenVPN tunnel "), "{line}");
}
