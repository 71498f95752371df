//! `--variant` on the openssl implementation, through the real binary: `isa=...` (the
//! system libcrypto loaded again with OPENSSL_ia32cap set) and `speed-loop` (the per-call
//! work of `openssl speed -evp`). Deterministic facts only: labels, the CPU capabilities
//! libcrypto reports, the correctness gate, notes. Speeds are never asserted.

mod common;
use common::stderr;

use serde_json::Value;
use std::process::Output;

fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = common::command();
    c.args(args).env_remove("OPENSSL_ia32cap");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("binary runs")
}

fn json(args: &[&str], env: &[(&str, &str)]) -> Value {
    let mut a = vec![
        "speed", "--impl", "openssl", "--time", "0.02", "--format", "json",
    ];
    a.extend(args);
    let o = run(&a, env);
    assert!(o.status.success(), "{a:?} failed: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("--format json prints one JSON document")
}

/// The system openssl is what these tests vary; without it there is nothing to check.
fn have_openssl() -> bool {
    let o = run(&["speed", "--list"], &[]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let ok =
        out.lines().any(|l| l.starts_with("openssl")) && !out.contains("openssl: not available");
    if !ok {
        common::skip(&format!("no system libcrypto here: {}", out.trim()));
    }
    ok
}

fn cpu_flags() -> Vec<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    info.lines()
        .find(|l| l.starts_with("flags"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, f)| f.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

fn has_flag(f: &str) -> bool {
    cfg!(target_arch = "x86_64") && cpu_flags().iter().any(|x| x == f)
}

/// The environment's library entry with this variant (None: the base instance).
fn library<'a>(v: &'a Value, variant: Option<&str>) -> &'a Value {
    v["environment"]["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["impl"] == "openssl" && l["variant"].as_str() == variant)
        .unwrap_or_else(|| panic!("no openssl library with variant {variant:?}: {v}"))
}

fn records<'a>(v: &'a Value, variant: Option<&str>) -> Vec<&'a Value> {
    v["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["impl"] == "openssl" && r["variant"].as_str() == variant)
        .collect()
}

fn refused(v: &Value) -> Vec<&Value> {
    v["exclusions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "refused")
        .collect()
}

fn unavailable<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    v["environment"]["unavailable"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["name"] == name)
}

/// The two words of `CPUINFO: OPENSSL_ia32cap=0x...:0x...`.
fn caps(cpu_info: &Value) -> (u64, u64) {
    let s = cpu_info
        .as_str()
        .expect("cpu_info is a string (OpenSSL 3.x)");
    let words = s
        .split("OPENSSL_ia32cap=")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no capability words in {s}"));
    let (a, b) = words.split_once(':').unwrap();
    let hex = |x: &str| u64::from_str_radix(x.trim_start_matches("0x"), 16).unwrap();
    (hex(a), hex(b))
}

const AESNI: u64 = 1 << 57;
const PCLMULQDQ: u64 = 1 << 33;
const AVX2: u64 = 1 << 5;
const AVX512F: u64 = 1 << 16;
const AVX512VL: u64 = 1 << 31;

#[test]
fn isa_no_aesni_is_measured_beside_the_base_and_passes_the_gate() {
    if !have_openssl() {
        return;
    }
    let v = json(
        &[
            "--alg",
            "aes-128-gcm",
            "--sizes",
            "16,16k",
            "--variant",
            "isa=no-aesni",
        ],
        &[],
    );
    if !has_flag("aes") {
        let u = unavailable(&v, "openssl [isa=no-aesni]").expect("listed as unavailable");
        common::skip(&format!(
            "no AES-NI here, so no-aesni has nothing to turn off (listed as unavailable: {u})"
        ));
        return;
    }
    assert!(refused(&v).is_empty(), "refused: {:?}", refused(&v));
    let base = library(&v, None);
    let var = library(&v, Some("isa=no-aesni"));
    // Same file, another instance with other capabilities.
    assert_eq!(base["details"]["path"], var["details"]["path"]);
    assert_ne!(base["details"]["cpu_info"], var["details"]["cpu_info"]);
    let (b, c) = (
        caps(&base["details"]["cpu_info"]),
        caps(&var["details"]["cpu_info"]),
    );
    assert_ne!(b.0 & AESNI, 0, "base has AES-NI: {b:x?}");
    assert_eq!(
        c.0 & (AESNI | PCLMULQDQ),
        0,
        "copy has no AES-NI, PCLMULQDQ: {c:x?}"
    );
    // Only bits are cleared, and the second word is kept (AVX2 and the rest stay on).
    assert_eq!(c.0 & !b.0, 0);
    assert_eq!(c.1 & !b.1, 0);
    assert_eq!(c.1 & AVX2, b.1 & AVX2);
    let d = &var["details"]["variant"];
    assert_eq!(d["spec"], "isa=no-aesni");
    assert_eq!(d["openssl_ia32cap"], "~0x200000200000000:~0x60000000000");
    assert!(
        var["details"]["cpu_info"]
            .as_str()
            .unwrap()
            .ends_with("env:~0x200000200000000:~0x60000000000"),
        "{var}"
    );
    // The private copy is gone once loaded.
    let copy = d["loaded_from"].as_str().unwrap();
    let copy = copy.split(" (").next().unwrap();
    let dir = std::path::Path::new(copy).parent().unwrap();
    assert!(!dir.exists(), "{} still exists", dir.display());
    // Both measured at every size, labelled, with the mask in the notes.
    for variant in [None, Some("isa=no-aesni")] {
        let rs = records(&v, variant);
        assert_eq!(rs.len(), 4, "{variant:?}: enc and dec at 2 sizes");
    }
    for r in records(&v, Some("isa=no-aesni")) {
        assert_eq!(r["library"], base["details"]["path"]);
        let notes: Vec<&str> = r["notes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|n| n.as_str())
            .collect();
        assert!(
            notes.iter().any(|n| n.starts_with("isa=no-aesni: libcrypto loaded a second time with OPENSSL_ia32cap=~0x200000200000000:~0x60000000000")),
            "{notes:?}"
        );
    }
    // The table labels the variant.
    let o = run(
        &[
            "speed",
            "--impl",
            "openssl",
            "--alg",
            "aes-128-gcm",
            "--direction",
            "enc",
            "--sizes",
            "16",
            "--time",
            "0.02",
            "--variant",
            "isa=no-aesni",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("openssl [isa=no-aesni]"));
}

#[test]
fn isa_no_avx512_and_no_avx2_turn_off_what_they_say() {
    if !have_openssl() {
        return;
    }
    let v = json(
        &[
            "--alg",
            "chacha20-poly1305",
            "--direction",
            "enc",
            "--sizes",
            "1k",
            "--variant",
            "isa=no-avx512",
            "--variant",
            "isa=no-avx2",
        ],
        &[],
    );
    assert!(refused(&v).is_empty(), "refused: {:?}", refused(&v));
    let b = caps(&library(&v, None)["details"]["cpu_info"]);
    // no-avx2 turns AVX2 off on every machine of ours (all have it).
    let n2 = caps(&library(&v, Some("isa=no-avx2"))["details"]["cpu_info"]);
    assert_ne!(b.1 & AVX2, 0, "base has AVX2: {b:x?}");
    assert_eq!(n2.1 & (AVX2 | AVX512F | AVX512VL), 0, "{n2:x?}");
    assert_eq!(records(&v, Some("isa=no-avx2")).len(), 1);
    if !has_flag("avx512f") {
        // Not observable here: the tool must say that the CPU has no AVX-512 and not
        // measure the variant as if it were a difference (what it says is checked on any
        // CPU by the next test, with AVX-512 masked in the environment).
        let u = unavailable(&v, "openssl [isa=no-avx512]").unwrap_or_else(|| {
            panic!("no-avx512 on a CPU without AVX-512 is not listed as unavailable: {v}")
        });
        let reason = u["reason"].as_str().unwrap();
        assert!(reason.contains("changes nothing"), "{u}");
        assert!(records(&v, Some("isa=no-avx512")).is_empty());
        eprintln!("not observable here: this CPU has no AVX-512 ({reason})");
        return;
    }
    let n512 = caps(&library(&v, Some("isa=no-avx512"))["details"]["cpu_info"]);
    assert_ne!(b.1 & AVX512F, 0);
    // AVX512VL too: OpenSSL's ChaCha20 has a path keyed on VL alone.
    assert_eq!(n512.1 & (AVX512F | AVX512VL), 0, "{n512:x?}");
    assert_eq!(n512.1 & AVX2, b.1 & AVX2, "no-avx512 keeps AVX2");
    assert_eq!(n512.0, b.0, "no-avx512 keeps the first word");
    assert_eq!(records(&v, Some("isa=no-avx512")).len(), 1);
}

#[test]
fn isa_masks_that_cannot_work_are_unavailable_with_one_line_reasons() {
    if !have_openssl() {
        return;
    }
    // A malformed switch is bad input (exit 2, one line naming it), not a silent base run.
    for bad in ["isa=bogus", "isa=0x1:", "isa=", "isa=no-aesni=x"] {
        let o = run(&["speed", "--list", "--variant", bad], &[]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains(bad) && err.contains("OPENSSL_ia32cap mask"),
            "{err}"
        );
    }
    // A well-formed mask this CPU cannot honour is unavailable, with the reason.
    let o = run(
        &[
            "speed",
            "--list",
            "--variant",
            "isa=0xffffffffffffffff:0xffffffffffffffff",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let line = |name: &str| {
        out.lines()
            .find(|l| l.starts_with(&format!("{name}: not available: ")))
            .unwrap_or_else(|| panic!("no line for {name} in:\n{out}"))
            .to_string()
    };
    if cfg!(target_arch = "x86_64") {
        assert!(line("openssl [isa=0xffffffffffffffff:0xffffffffffffffff]")
            .contains("turns on capabilities this CPU does not report"));
    }
    // The base instance is still there and measured.
    assert!(out
        .lines()
        .any(|l| l.starts_with("openssl") && l.contains("(InProcess)")));
    // A variant nobody understands is an input error.
    let o = run(&["speed", "--list", "--variant", "warp-speed"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown --variant 'warp-speed'"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_mask_already_in_the_environment_is_not_measured_twice() {
    if !have_openssl() {
        return;
    }
    // The base instance itself already runs without AVX-512, VAES and VPCLMULQDQ (on a
    // CPU without AVX-512 the mask clears VAES/VPCLMULQDQ): the variant would add nothing.
    let v = json(
        &[
            "--alg",
            "sha256",
            "--sizes",
            "16",
            "--variant",
            "isa=no-avx512",
        ],
        &[("OPENSSL_ia32cap", ":~0x5e42dc230000")],
    );
    let u = unavailable(&v, "openssl [isa=no-avx512]").expect("listed as unavailable");
    assert!(
        u["reason"]
            .as_str()
            .unwrap()
            .contains("changes nothing on this CPU"),
        "{u}"
    );
    assert!(library(&v, None)["details"]["cpu_info"]
        .as_str()
        .unwrap()
        .contains("env::~0x5e42dc230000"));
}

/// A Zen 3 (no AVX-512, but VAES and VPCLMULQDQ), made on any of our CPUs by masking the
/// AVX-512 bits alone in the environment: no-avx512 then clears only VAES/VPCLMULQDQ, and
/// the tool must say so rather than measure a difference that cannot exist.
#[test]
fn no_avx512_on_a_cpu_without_avx512_says_so() {
    if !have_openssl() {
        return;
    }
    if !has_flag("vaes") || !has_flag("vpclmulqdq") {
        // Not observable here; every machine of ours has both (see env/README.md).
        common::skip("needs a CPU with VAES and VPCLMULQDQ");
        return;
    }
    let v = json(
        &[
            "--alg",
            "aes-128-gcm",
            "--direction",
            "enc",
            "--sizes",
            "1k",
            "--variant",
            "isa=no-avx512",
        ],
        &[("OPENSSL_ia32cap", ":~0x5842dc230000")],
    );
    let base = caps(&library(&v, None)["details"]["cpu_info"]);
    assert_eq!(base.1 & AVX512F, 0, "AVX-512 masked in the base: {base:x?}");
    assert_ne!(base.1 & (3 << 41), 0, "VAES kept in the base: {base:x?}");
    let version = v["environment"]["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["impl"] == "openssl")
        .and_then(|l| l["version"].as_str())
        .unwrap_or_default()
        .to_string();
    // "OpenSSL 3.0.19 27 Jan 2026": before 3.5 its VAES code needs AVX-512.
    let minor: u32 = version
        .strip_prefix("OpenSSL 3.")
        .and_then(|r| r.split('.').next())
        .and_then(|m| m.parse().ok())
        .unwrap_or(u32::MAX);
    let u = unavailable(&v, "openssl [isa=no-avx512]");
    assert_eq!(u.is_some(), minor < 5, "{version}: {u:?}");
    match u {
        // OpenSSL before 3.5: the same code would run.
        Some(u) => {
            let reason = u["reason"].as_str().unwrap();
            assert!(
                reason.contains("changes nothing on this CPU: it has no AVX-512")
                    && reason.contains("removes only VAES/VPCLMULQDQ"),
                "{reason}"
            );
            assert!(records(&v, Some("isa=no-avx512")).is_empty());
        }
        // A later OpenSSL: measured, with the note.
        None => {
            let rs = records(&v, Some("isa=no-avx512"));
            assert_eq!(rs.len(), 1, "{version}: {v}");
            let notes = rs[0]["notes"].to_string();
            assert!(
                notes.contains(
                    "this CPU has no AVX-512; the mask removes only VAES/VPCLMULQDQ here"
                ),
                "{notes}"
            );
        }
    }
}

#[test]
fn speed_loop_passes_the_gate_and_says_what_it_measures() {
    if !have_openssl() {
        return;
    }
    let v = json(
        &[
            "--alg",
            "aes-128-gcm,aes-256-cbc,aes-128-ctr,chacha20-poly1305,sha256",
            "--sizes",
            "16,1350,16k",
            "--variant",
            "speed-loop",
        ],
        &[],
    );
    assert!(refused(&v).is_empty(), "refused: {:?}", refused(&v));
    let sl = records(&v, Some("speed-loop"));
    for (alg, sizes) in [("aes-128-gcm", 3), ("aes-256-cbc", 2), ("aes-128-ctr", 3)] {
        for dir in ["enc", "dec"] {
            let rs: Vec<&&Value> = sl
                .iter()
                .filter(|r| r["alg"] == alg && r["direction"] == dir)
                .collect();
            assert_eq!(rs.len(), sizes, "{alg} {dir}");
            for r in rs {
                let note = r["notes"][0].as_str().unwrap();
                assert!(note.starts_with("speed-loop: "), "{note}");
            }
        }
    }
    let gcm_enc = sl
        .iter()
        .find(|r| r["alg"] == "aes-128-gcm" && r["direction"] == "enc")
        .unwrap();
    assert!(gcm_enc["notes"][0]
        .as_str()
        .unwrap()
        .contains("fetches it (EVP_CTRL_AEAD_GET_TAG, about 60 ns on 3.0: bench/extra-work-cost) once per batch"));
    let cbc = sl.iter().find(|r| r["alg"] == "aes-256-cbc").unwrap();
    assert!(cbc["notes"][0]
        .as_str()
        .unwrap()
        .contains("never re-initialised"));
    // What it cannot do the way openssl speed does is not offered, with the reason.
    let excl = v["exclusions"].as_array().unwrap();
    for alg in ["chacha20-poly1305", "sha256"] {
        let e = excl
            .iter()
            .find(|e| e["impl"].as_str().unwrap().ends_with("[speed-loop]") && e["alg"] == alg)
            .unwrap_or_else(|| panic!("no exclusion for speed-loop {alg}"));
        assert_eq!(e["kind"], "not_offered");
        assert!(
            e["reason"].as_str().unwrap().starts_with("speed-loop"),
            "{e}"
        );
    }
    // The base instance measures all of them.
    assert!(records(&v, None)
        .iter()
        .any(|r| r["alg"] == "chacha20-poly1305"));
    assert_eq!(
        library(&v, Some("speed-loop"))["details"]["variant"]["spec"],
        "speed-loop"
    );
}
