//! scripts/package-openwrt: the OpenWrt packages of the lean musl builds. Each .ipk is read
//! back as opkg reads it: the outer gzipped tar of debian-binary, data.tar.gz and
//! control.tar.gz (GNU tar lists and unpacks each), and the control file's fields, checked
//! against what the binary is (Architecture, Depends against what it links, Installed-Size
//! against the data). No opkg here (neither Debian nor any registry reachable has it), so
//! it is installed as opkg installs it: data.tar.gz unpacked into an empty root, beside
//! the musl loader that its one Depends (OpenWrt's `libc`) brings; the binary there, the
//! very bytes scripts/build-musl made, runs under qemu-user with that root (`--version`,
//! and verify on one algorithm: tests/musl_emulated.rs runs the whole gate on the same
//! bytes). The 25.12 tarball holds the same files; a second run writes the same bytes.
//!
//! CI (scripts/test) builds armv7 and mipsel (dynamic), so those two run there; aarch64
//! and x86_64 are scripts/release's, which runs them with `--include-ignored`. A second or
//! two each once the builds are there. An architecture unknown or not built: exit 2, one
//! line.

mod common;

use common::musl::{self, Build};
use std::path::{Path, PathBuf};
use std::process::Command;

const VERSION: &str = env!("CARGO_PKG_VERSION");

#[test]
fn an_architecture_unknown_or_not_built_is_refused_in_one_line() {
    common::package_refusals(
        "package-openwrt",
        &[
            ("mipsel_24kc", "no mipsel_24kc binary at"),
            ("mips_24kc", "unknown OpenWrt architecture 'mips_24kc'"),
        ],
    );
}

fn sh(cmd: &str) -> String {
    let o = Command::new("sh").args(["-c", cmd]).output().unwrap();
    assert!(o.status.success(), "{cmd}: {}", common::stderr(&o));
    common::stdout(&o)
}

/// `archive` (a gzipped tar) unpacked into the new directory `into`.
fn unpack(archive: &Path, into: &Path) {
    std::fs::create_dir(into).unwrap();
    sh(&format!(
        "tar -C {} -xzf {}",
        into.display(),
        archive.display()
    ));
}

/// `tar -tvzf`: each member's mode, owner and name.
fn members(archive: &Path) -> Vec<(String, String, String)> {
    sh(&format!("tar --numeric-owner -tvzf {}", archive.display()))
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].to_string(), f[1].to_string(), f[5].to_string())
        })
        .collect()
}

/// A control file's fields as opkg parses them (libopkg/pkg_parse.c): `Name: value`, and
/// lines that start with a space continue the description.
fn fields(control: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in control.lines() {
        if let Some(more) = line.strip_prefix(' ') {
            let (name, value) = out.last_mut().expect("a field before a continuation");
            assert_eq!(
                name, "Description",
                "only the description continues: {line}"
            );
            value.push('\n');
            value.push_str(more);
        } else {
            let (name, value) = line.split_once(": ").unwrap_or_else(|| panic!("{line}"));
            out.push((name.to_string(), value.trim().to_string()));
        }
    }
    out
}

/// Packages the build `b` for `arch`, reads it back, installs it into an empty root and
/// runs it from there.
fn packaged_installed_and_run(arch: &str, b: &Build) {
    let Some(bin) = musl::ready(b) else { return };
    // $OUT/musl/<triple>-dynamic/cryptobench: the script reads $OUT.
    let target = bin.ancestors().nth(3).unwrap();
    let dir = common::tempdir(
        Path::new(env!("CARGO_TARGET_TMPDIR")),
        &format!("package-openwrt-{arch}"),
    );
    let made = |dist: &Path| -> Vec<PathBuf> {
        let o = common::package_script("package-openwrt", &[arch], target, dist);
        assert!(o.status.success(), "{arch}: {}", common::stderr(&o));
        common::stdout(&o).lines().map(PathBuf::from).collect()
    };
    let files = made(&dir.join("dist"));
    let name = format!("cryptobench_{VERSION}_{arch}");
    assert_eq!(
        files,
        [
            dir.join(format!("dist/{name}.ipk")),
            dir.join(format!("dist/{name}.tar.gz"))
        ]
    );
    let (ipk, tarball) = (&files[0], &files[1]);
    let again = made(&dir.join("again"));
    for (a, b) in files.iter().zip(&again) {
        assert!(
            std::fs::read(a).unwrap() == std::fs::read(b).unwrap(),
            "{} differs from a second run's",
            a.display()
        );
    }

    // The outer archive, as OpenWrt's ipkg-build writes it.
    let outer: Vec<String> = members(ipk).into_iter().map(|m| m.2).collect();
    assert_eq!(
        outer,
        ["./debian-binary", "./data.tar.gz", "./control.tar.gz"]
    );
    let parts = dir.join("ipk");
    unpack(ipk, &parts);
    assert_eq!(
        std::fs::read_to_string(parts.join("debian-binary")).unwrap(),
        "2.0\n"
    );
    let data = parts.join("data.tar.gz");
    assert_eq!(
        members(&data),
        [
            ("drwxr-xr-x", "0/0", "./usr/"),
            ("drwxr-xr-x", "0/0", "./usr/bin/"),
            ("-rwxr-xr-x", "0/0", "./usr/bin/cryptobench"),
        ]
        .map(|(m, o, n)| (m.to_string(), o.to_string(), n.to_string()))
    );
    assert!(
        std::fs::read(tarball).unwrap() == std::fs::read(&data).unwrap(),
        "the 25.12 tarball is the package's data"
    );
    let control_tar = parts.join("control.tar.gz");
    let in_control: Vec<String> = members(&control_tar).into_iter().map(|m| m.2).collect();
    assert_eq!(in_control, ["./control"]);
    let control = sh(&format!("tar -xzOf {} ./control", control_tar.display()));
    let f = fields(&control);
    let field = |name: &str| -> &str {
        let found: Vec<&str> = f
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(found.len(), 1, "{name} once in {control}");
        found[0]
    };
    assert_eq!(field("Package"), "cryptobench");
    assert_eq!(field("Version"), VERSION);
    assert_eq!(field("Architecture"), arch);
    // What the binary links, OpenWrt's libc gives, and nothing else: it asks for the
    // loader OpenWrt's musl installs.
    let dynamic = sh(&format!("readelf -d {}", bin.display()));
    let needed: Vec<&str> = dynamic.lines().filter(|l| l.contains("(NEEDED)")).collect();
    assert!(
        needed.len() == 1 && needed[0].contains("[libc.so]"),
        "{needed:?}"
    );
    assert_eq!(field("Depends"), "libc");
    let headers = sh(&format!("readelf -l {}", bin.display()));
    assert!(
        headers.contains(&format!("[Requesting program interpreter: /{}]", b.loader)),
        "{headers}"
    );
    assert_eq!(field("Recommends"), "libopenssl3");
    let suggests: Vec<&str> = field("Suggests").split(", ").collect();
    for tool in [
        "iperf3",
        "irtt",
        "ip-full",
        "openvpn-openssl",
        "wireguard-tools",
    ] {
        assert!(suggests.contains(&tool), "{tool} in {suggests:?}");
    }
    // In bytes, as ipkg-build counts it (opkg checks the free space against it).
    let size = sh(&format!("gzip -dc {} | wc -c", data.display()));
    assert_eq!(field("Installed-Size"), size.trim());
    assert!(field("Description").lines().count() > 1, "{control}");

    // Installed as opkg installs it, into a root with OpenWrt's libc (the loader).
    let root = dir.join("root");
    unpack(&data, &root);
    let loader = root.join(b.loader);
    std::fs::create_dir_all(loader.parent().unwrap()).unwrap();
    std::fs::copy(musl::sysroot(b).join(b.loader), &loader).unwrap();
    let installed = root.join("usr/bin/cryptobench");
    assert!(
        std::fs::read(&installed).unwrap() == std::fs::read(&bin).unwrap(),
        "the package holds scripts/build-musl's binary"
    );
    let run = |args: &[&str]| {
        musl::command_in(b, &installed, &root)
            .args(args)
            .output()
            .expect("the installed binary starts")
    };
    let version = common::stdout(&run(&["--version"]));
    assert!(
        version.starts_with(&format!("cryptobench {VERSION} ("))
            && version.contains("musl, dynamic"),
        "{arch}: --version says {version}"
    );
    let o = run(&["verify", "--impl", "ring", "--alg", "aes-128-gcm"]);
    let said = format!("{}{}", common::stdout(&o), common::stderr(&o));
    assert!(
        o.status.success() && said.contains("aes-128-gcm"),
        "{arch}: verify: {said}"
    );
}

#[test]
fn arm_cortex_a7_package_installs_and_runs() {
    packaged_installed_and_run("arm_cortex-a7_neon-vfpv4", &musl::ARMV7_DYNAMIC);
}

/// The MT7621's: soft-float, under qemu-mipsel -cpu 24Kc (no FPU).
#[test]
fn mipsel_24kc_package_installs_and_runs() {
    packaged_installed_and_run("mipsel_24kc", &musl::MIPSEL_DYNAMIC);
}

#[test]
#[ignore = "release-only build: scripts/build-musl, then --include-ignored"]
fn aarch64_cortex_a53_package_installs_and_runs() {
    packaged_installed_and_run("aarch64_cortex-a53", &musl::AARCH64_DYNAMIC);
}

#[test]
#[ignore = "release-only build: scripts/build-musl, then --include-ignored"]
fn x86_64_package_installs_and_runs() {
    packaged_installed_and_run("x86_64", &musl::X86_64_DYNAMIC);
}
