//! The musl (OpenWrt) builds: the lean feature set, static and dynamic, for armv7,
//! aarch64 and mipsel (under qemu-user, the dynamic ones with Debian's musl as the
//! sysroot; mipsel's is soft-float, built from Debian's source) and x86_64 (run here
//! natively). Each says what it is, lists every in-process implementation and passes the
//! correctness gate over everything; each dynamic router build loads a libcrypto built for
//! musl and passes the gate on the openssl path; a full build reads what the lean one
//! writes; the armv7 binary fits the flash budget.
//!
//! CI (scripts/test) builds four of them, armv7 and mipsel, each dynamic and static: the
//! router targets, mipsel dynamic being the file an MT7621 runs, with the soft-float musl
//! libcrypto it loads (study 5's openssl path on MIPS). x86_64 and aarch64 are
//! scripts/release's, and their tests are ignored here: release builds them and runs
//! `cargo test --release --test musl_emulated -- --include-ignored` before it ships
//! anything. The musl libcrypto comes
//! from scripts/build-openssl; the toolchain and sysroots from scripts/deps/musl.sh.

mod common;

use common::musl::{
    ready, run, sysroot, Build, AARCH64_DYNAMIC, AARCH64_STATIC, ARMV7_DYNAMIC, ARMV7_STATIC,
    MIPSEL_DYNAMIC, MIPSEL_STATIC, X86_64_DYNAMIC, X86_64_STATIC,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The in-process libraries of a build: ring and RustCrypto are in every one, the rest
/// are its features. openssl is checked on its own (a static build cannot load it, a
/// dynamic one loads what it is given).
fn in_process(b: &Build) -> Vec<&'static str> {
    let mut all = vec!["ring", "rustcrypto"];
    all.extend(b.features);
    all
}

/// The flash budget for the lean armv7 binary, in decimal megabytes (the stricter
/// reading): stripped, and gzipped (as packaged).
const BUDGET_STRIPPED: u64 = 6_000_000;
const BUDGET_GZIPPED: u64 = 3_000_000;

/// `args` on the build `b` are refused in one line (exit 2) saying `why`.
fn refused_saying(b: &Build, bin: &Path, args: &[&str], why: &str) {
    let e = common::one_line_exit_2(&run(b, bin, args), &args.join(" "));
    assert!(e.contains(why), "{}: {e}", args.join(" "));
}

fn json(b: &Build, bin: &Path, args: &[&str]) -> Value {
    let o = run(b, bin, args);
    assert!(
        o.status.success(),
        "{} {} {args:?}: {}",
        b.triple,
        b.mode,
        common::stderr(&o)
    );
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: {e}: {}",
            String::from_utf8_lossy(&o.stdout[..o.stdout.len().min(400)])
        )
    })
}

/// Not one FPU instruction in a soft-float MIPS build, in code that the tests run or not:
/// the MT7621 has no FPU, and a kernel built without the FPU emulator (an OpenWrt option,
/// to save flash) answers any with SIGILL (Debian's mipsel libgcc_eh.a, for one, saves
/// FPU registers).
fn has_no_fpu_instruction(b: &Build, bin: &Path) {
    let o = Command::new("mipsel-linux-gnu-objdump")
        .arg("-d")
        .arg(bin)
        .output()
        .expect("mipsel-linux-gnu-objdump runs (scripts/deps/musl.sh)");
    assert!(o.status.success(), "{}", common::stderr(&o));
    let code = String::from_utf8_lossy(&o.stdout);
    assert!(
        code.lines().count() > 100_000,
        "{}: no code?",
        bin.display()
    );
    let fpu: Vec<&str> = fpu_instructions(&code).into_iter().take(5).collect();
    assert!(fpu.is_empty(), "{} {}: FPU code: {fpu:?}", b.triple, b.mode);
}

/// The lines of objdump's MIPS disassembly that use coprocessor 1 (the FPU): loads and
/// stores (indexed too), moves (the high half too), its control registers, branches and
/// conditional moves on its condition codes, and arithmetic in any format (.s, .d, .ps,
/// and conversions from .w and .l).
fn fpu_instructions(code: &str) -> Vec<&str> {
    const OPS: [&str; 22] = [
        "lwc1", "swc1", "ldc1", "sdc1", "lwxc1", "swxc1", "ldxc1", "sdxc1", "luxc1", "suxc1",
        "mtc1", "mfc1", "mthc1", "mfhc1", "cfc1", "ctc1", "bc1t", "bc1f", "bc1tl", "bc1fl", "movf",
        "movt",
    ];
    code.lines()
        .filter(|l| {
            l.split('\t').nth(2).is_some_and(|op| {
                let op = op.trim();
                OPS.contains(&op)
                    || [".s", ".d", ".ps", ".w", ".l"]
                        .iter()
                        .any(|f| op.ends_with(f))
            })
        })
        .collect()
}

/// The scan finds every kind of FPU instruction (each assembled for MIPS32r2 and read back
/// through objdump, as the builds are) and nothing in integer code.
#[test]
fn the_fpu_scan_finds_every_fpu_instruction() {
    if !common::has_program("mipsel-linux-gnu-as") {
        common::skip("mipsel-linux-gnu-as is missing: run scripts/deps/musl.sh");
        return;
    }
    let fpu = [
        "lwc1 $f0, 0($a0)",
        "swc1 $f0, 0($a0)",
        "ldc1 $f0, 0($a0)",
        "sdc1 $f0, 0($a0)",
        "lwxc1 $f0, $a1($a0)",
        "swxc1 $f0, $a1($a0)",
        "ldxc1 $f0, $a1($a0)",
        "sdxc1 $f0, $a1($a0)",
        "mtc1 $a0, $f0",
        "mfc1 $a0, $f0",
        "mthc1 $a0, $f0",
        "mfhc1 $a0, $f0",
        "cfc1 $a0, $31",
        "ctc1 $a0, $31",
        "bc1t 0",
        "bc1f 0",
        "movf $a0, $a1, $fcc0",
        "movt $a0, $a1, $fcc0",
        "cvt.d.w $f0, $f2",
        "cvt.s.l $f0, $f2",
        "add.s $f0, $f2, $f4",
        "mul.d $f0, $f2, $f4",
        "c.lt.d $f0, $f2",
    ];
    let integer = [
        "addu $a0, $a1, $a2",
        "lw $a0, 0($a1)",
        "sw $a0, 0($a1)",
        "movn $a0, $a1, $a2",
        "movz $a0, $a1, $a2",
        "mult $a0, $a1",
        "mflo $a0",
        "beq $a0, $a1, 0",
        "jr $ra",
    ];
    let dir = common::tempdir(Path::new(env!("CARGO_TARGET_TMPDIR")), "fpu-scan");
    let disassembled = |name: &str, lines: &[&str]| {
        let src = dir.join(format!("{name}.s"));
        let text: String = lines.iter().map(|l| format!("\t{l}\n")).collect();
        std::fs::write(&src, format!("\t.text\n\t.set noreorder\n{text}")).unwrap();
        let obj = dir.join(format!("{name}.o"));
        let o = Command::new("mipsel-linux-gnu-as")
            .args(["-mips32r2", "-mfp64", "-o"])
            .arg(&obj)
            .arg(&src)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", common::stderr(&o));
        let o = Command::new("mipsel-linux-gnu-objdump")
            .arg("-d")
            .arg(&obj)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", common::stderr(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let code = disassembled("fpu", &fpu);
    let found = fpu_instructions(&code);
    assert_eq!(found.len(), fpu.len(), "missed some: {found:#?}");
    let code = disassembled("integer", &integer);
    // Each was disassembled (objdump read the object), and none is the FPU's.
    for op in integer {
        let name = op.split(' ').next().unwrap();
        assert!(code.contains(&format!("\t{name}\t")), "{name}: {code}");
    }
    assert!(fpu_instructions(&code).is_empty(), "{code}");
}

/// `--version` and `probe` say musl and the link mode; the lean build has its libraries
/// and none of the other optional features; a static build reports openssl unavailable
/// because it cannot dlopen; a MIPS build has no FPU instruction and no AWS-LC, and takes
/// nothing from the host's /proc/cpuinfo; then `--list` and the gate over everything
/// in-process.
fn says_what_it_is_and_passes_the_gate(b: &Build) {
    let Some(bin) = ready(b) else { return };
    let what = format!("{} {}", b.triple, b.mode);
    let version = common::stdout(&run(b, &bin, &["--version"]));
    assert!(
        version.contains(&format!(
            "musl, {}; features: {})",
            b.mode,
            b.features.join(", ")
        )),
        "{what}: --version says {version}"
    );
    let probe = json(b, &bin, &["probe", "--format", "json"]);
    assert_eq!(
        probe["build"]["libc"],
        format!("musl, {}", b.mode),
        "{probe}"
    );
    assert_eq!(probe["build"]["arch"], b.arch);
    assert_eq!(
        probe["build"]["features"],
        serde_json::json!(b.features),
        "{what}: the lean build has no store, PNG or flame graphs"
    );
    let reason = |name: &str| {
        probe["unavailable"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["name"] == name)
            .map(|u| u["reason"].as_str().unwrap().to_string())
    };
    if b.arch == "mips" {
        has_no_fpu_instruction(b, &bin);
        let why = reason("aws-lc").expect("no AWS-LC on MIPS");
        assert!(why.contains("does not support MIPS"), "{what}: {why}");
        // No x86 flags or model from the host's /proc/cpuinfo, which qemu-user passes on.
        let cpu = &probe["cpu"];
        assert_eq!(cpu["crypto_flags"], serde_json::json!([]), "{what}: {cpu}");
        assert!(cpu["model"].is_null(), "{what}: {cpu}");
    }
    if b.mode == "static" {
        let why = reason("openssl").expect("a static build has no openssl");
        assert!(why.contains("cannot dlopen"), "{what}: {why}");
    }
    // verify runs the known answers and round trips, and says the vectors are not here.
    let o = run(
        b,
        &bin,
        &["verify", "--impl", "ring", "--alg", "aes-128-gcm"],
    );
    assert!(o.status.success(), "{what}: verify: {}", common::stderr(&o));
    let said = format!("{}{}", common::stdout(&o), common::stderr(&o));
    assert!(
        said.contains("Wycheproof's vectors are not in this build") && said.contains("aes-128-gcm"),
        "{what}: verify says {said}"
    );
    let list = run(b, &bin, &["speed", "--list"]);
    assert!(list.status.success(), "{what}: {}", common::stderr(&list));
    let v = json(b, &bin, common::gate::SPEED_EVERYTHING);
    common::gate::check(
        &what,
        &common::stdout(&list),
        &v,
        &in_process(b),
        b.arch,
        b.qemu.is_some(),
    );
}

#[test]
#[ignore = "release-only build: scripts/build-musl, then --include-ignored"]
fn x86_64_static_passes_the_gate() {
    says_what_it_is_and_passes_the_gate(&X86_64_STATIC);
}

#[test]
#[ignore = "release-only build: scripts/build-musl, then --include-ignored"]
fn x86_64_dynamic_passes_the_gate() {
    says_what_it_is_and_passes_the_gate(&X86_64_DYNAMIC);
}

#[test]
fn armv7_dynamic_passes_the_gate() {
    says_what_it_is_and_passes_the_gate(&ARMV7_DYNAMIC);
}

#[test]
fn armv7_static_passes_the_gate() {
    says_what_it_is_and_passes_the_gate(&ARMV7_STATIC);
}

#[test]
#[ignore = "release-only build: scripts/build-musl, then --include-ignored"]
fn aarch64_dynamic_passes_the_gate() {
    says_what_it_is_and_passes_the_gate(&AARCH64_DYNAMIC);
}

#[test]
#[ignore = "release-only build: scripts/build-musl, then --include-ignored"]
fn aarch64_static_passes_the_gate() {
    says_what_it_is_and_passes_the_gate(&AARCH64_STATIC);
}

/// MIPS: OpenWrt's mipsel_24kc (MT7621), soft-float, on a CPU without an FPU.
#[test]
fn mipsel_static_passes_the_gate() {
    says_what_it_is_and_passes_the_gate(&MIPSEL_STATIC);
}

#[test]
fn mipsel_dynamic_passes_the_gate() {
    says_what_it_is_and_passes_the_gate(&MIPSEL_DYNAMIC);
}

/// The libcrypto of `scripts/build-openssl 3.5 --target <musl triple>` with GATE_ONLY's
/// options (scripts/test builds the same: the libraries are all a router's libopenssl3
/// ships), or None after reporting the skip.
fn musl_libcrypto(b: &Build) -> Option<PathBuf> {
    let flags = [&["--target", b.triple][..], &common::openssl::GATE_ONLY].concat();
    common::openssl::build("3.5", &flags).map(|d| d.join("lib/libcrypto.so.3"))
}

/// The dynamic armv7 build dlopens OpenSSL built with the musl cross compiler (what
/// OpenWrt's libopenssl3 is) and passes the gate on the openssl path; a static build
/// refuses `--libcrypto` in one line.
#[test]
fn armv7_dynamic_loads_a_musl_libcrypto_and_passes_the_gate() {
    loads_a_musl_libcrypto_and_passes_the_gate(&ARMV7_DYNAMIC, &ARMV7_STATIC);
}

/// The same on MIPS, with a soft-float OpenSSL (the libopenssl3 of an MT7621).
#[test]
fn mipsel_dynamic_loads_a_musl_libcrypto_and_passes_the_gate() {
    loads_a_musl_libcrypto_and_passes_the_gate(&MIPSEL_DYNAMIC, &MIPSEL_STATIC);
}

fn loads_a_musl_libcrypto_and_passes_the_gate(b: &Build, static_twin: &Build) {
    let Some(bin) = ready(b) else { return };
    let Some(lib) = musl_libcrypto(b) else { return };
    let lib = lib.to_str().unwrap();
    let mut args = common::gate::SPEED_EVERYTHING.to_vec();
    args.extend(["--impl", "openssl", "--libcrypto", lib]);
    let v = json(b, &bin, &args);
    let records = v["records"].as_array().unwrap();
    let mine: Vec<&Value> = records.iter().filter(|r| r["impl"] == "openssl").collect();
    assert!(
        !mine.is_empty(),
        "openssl: nothing measured: {}",
        v["unavailable"]
    );
    // The library measured is that build, OpenSSL 3.5.5, at that path.
    let loaded = v["environment"]["libraries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["impl"] == "openssl")
        .expect("openssl among the environment's libraries");
    assert!(
        loaded.to_string().contains("3.5.5") && loaded.to_string().contains(lib),
        "not the musl OpenSSL 3.5.5 at {lib}: {loaded}"
    );
    assert!(
        mine.iter().all(|r| r["impl_version"]
            .as_str()
            .is_none_or(|v| v.contains("3.5.5"))),
        "{}",
        mine[0]
    );
    let refused = common::gate::refused(&v);
    assert!(refused.is_empty(), "the gate refused: {refused:?}");
    for alg in ["aes-128-gcm", "chacha20-poly1305", "sha256", "ed25519"] {
        assert!(
            mine.iter().any(|r| r["alg"] == alg),
            "{alg} not measured through the musl libcrypto"
        );
    }
    if let Some(st) = ready(static_twin) {
        let args = ["speed", "--libcrypto", lib, "--time", "0.01"];
        refused_saying(static_twin, &st, &args, "cannot dlopen");
    }
}

/// What a lean build writes, a full build reads: `report` renders it and `compare`
/// compares it with itself. A store named to the lean build is refused in one line.
#[test]
fn lean_records_render_in_a_full_build() {
    let b = &ARMV7_STATIC;
    let Some(bin) = ready(b) else { return };
    let dir = common::tempdir(Path::new(env!("CARGO_TARGET_TMPDIR")), "musl-lean-records");
    let file = dir.join("lean.jsonl");
    let o = run(
        b,
        &bin,
        &[
            "speed",
            "--impl",
            "ring,aws-lc",
            "--alg",
            "aes-128-gcm,sha256",
            "--sizes",
            "1k",
            "--time",
            "0.02",
            "--output",
            file.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", common::stderr(&o));
    let report = common::run(&["report", "--format", "json", file.to_str().unwrap()]);
    assert!(report.status.success(), "{}", common::stderr(&report));
    let v: Value = serde_json::from_slice(&report.stdout).expect("report JSON");
    let text = v.to_string();
    for needle in ["\"ring\"", "\"aws-lc\"", "aes-128-gcm", "sha256"] {
        assert!(text.contains(needle), "{needle} in {text:.400}");
    }
    let table = common::run(&["report", file.to_str().unwrap()]);
    assert!(table.status.success(), "{}", common::stderr(&table));
    assert!(common::stdout(&table).contains("aes-128-gcm"));
    let f = file.to_str().unwrap();
    let cmp = common::run(&["compare", f, f]);
    assert!(cmp.status.success(), "{}", common::stderr(&cmp));
    // The lean build has no store: named, it is refused; by default there is none.
    let args = [
        "speed",
        "--alg",
        "sha256",
        "--time",
        "0.01",
        "--store",
        "sqlite:/tmp/x.db",
    ];
    refused_saying(b, &bin, &args, "this build has no store");
    // A router's build is a DUT, never the controller: --dut is refused in one line.
    let args = ["speed", "--dut", "root@192.0.2.1"];
    refused_saying(b, &bin, &args, "this build is a DUT's");
}

/// The lean armv7 binary, stripped and gzipped, fits OpenWrt's flash.
#[test]
fn lean_armv7_fits_the_flash_budget() {
    let b = &ARMV7_DYNAMIC;
    let Some(bin) = ready(b) else { return };
    let dir = common::tempdir(Path::new(env!("CARGO_TARGET_TMPDIR")), "musl-size");
    let stripped = dir.join("cryptobench");
    let o = Command::new("arm-linux-gnueabihf-strip")
        .arg("-o")
        .arg(&stripped)
        .arg(&bin)
        .output()
        .expect("arm-linux-gnueabihf-strip runs (scripts/deps/musl.sh)");
    assert!(o.status.success(), "{}", common::stderr(&o));
    let bytes = std::fs::read(&stripped).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    std::io::Write::write_all(&mut gz, &bytes).unwrap();
    let gzipped = gz.finish().unwrap().len() as u64;
    let size = bytes.len() as u64;
    eprintln!("lean armv7 musl dynamic: {size} bytes stripped, {gzipped} gzipped");
    assert!(
        size <= BUDGET_STRIPPED,
        "{size} bytes stripped > {BUDGET_STRIPPED}"
    );
    assert!(
        gzipped <= BUDGET_GZIPPED,
        "{gzipped} bytes gzipped > {BUDGET_GZIPPED}"
    );
}

/// `--dut` tells a little-endian MIPS from a big-endian one, for which `uname -m` says
/// "mips" alike: src/dut/facts.sh, as deploy sends it, run here under a `uname` that says
/// mips, on real ELF headers (musl's mipsel loader from the sysroot, and an object
/// assembled big-endian) and with the loader's name alone.
#[test]
fn dut_facts_tell_mipsel_from_mips() {
    let loader = sysroot(&MIPSEL_STATIC).join(MIPSEL_STATIC.loader);
    if !loader.is_file() || !common::has_program("mipsel-linux-gnu-as") {
        return common::skip("no mipsel sysroot or assembler: run scripts/deps/musl.sh");
    }
    let dir = common::tempdir(Path::new(env!("CARGO_TARGET_TMPDIR")), "dut-facts");
    let big = dir.join("big.o");
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "echo nop | mipsel-linux-gnu-as -EB -o {}",
            big.display()
        ))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::stderr(&o));
    let bin = dir.join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(bin.join("uname"), "#!/bin/sh\necho mips\n").unwrap();
    let chmod = Command::new("chmod")
        .arg("755")
        .arg(bin.join("uname"))
        .status();
    assert!(chmod.unwrap().success());
    let facts = |lib: &Path, sh: &Path| -> Vec<String> {
        let script = include_str!("../src/dut/facts.sh");
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "lib={} sh={}\n{script}",
                lib.display(),
                sh.display()
            ))
            .env("PATH", path)
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&o.stdout);
        out.lines().take(2).map(str::to_string).collect()
    };
    let bare = dir.join("lib-bare");
    std::fs::create_dir(&bare).unwrap();
    assert_eq!(facts(&bare, &loader), ["mipsel", "gnu"]);
    assert_eq!(facts(&bare, &big), ["mips", "gnu"]);
    // OpenWrt's loader's name says it, whatever the shell's header.
    let musl = dir.join("lib-musl");
    std::fs::create_dir(&musl).unwrap();
    std::os::unix::fs::symlink(&loader, musl.join("ld-musl-mipsel-sf.so.1")).unwrap();
    assert_eq!(facts(&musl, &big), ["mipsel", "musl"]);
    std::fs::remove_file(musl.join("ld-musl-mipsel-sf.so.1")).unwrap();
    std::os::unix::fs::symlink(&loader, musl.join("ld-musl-mips-sf.so.1")).unwrap();
    assert_eq!(facts(&musl, &big), ["mips", "musl"]);
}
