//! Putting cryptobench on a DUT: ask its architecture and C library, use its own
//! cryptobench when it is this version, otherwise upload the matching binary into a
//! private temp dir (removed when the session ends) and check its SHA-256.

use super::ssh::{quote, Session};
use crate::failure::Failure;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The cryptobench that runs on the DUT.
#[derive(Clone, Debug)]
pub struct Deployed {
    /// The program to run on the DUT: "cryptobench" (its own) or the uploaded path.
    pub program: String,
}

/// The Rust target triple scripts/release names a binary for `uname -m` and libc.
pub fn triple(arch: &str, libc: &str) -> String {
    let arm32 = arch.starts_with("armv7") || arch == "armv8l";
    match (arch, libc) {
        ("aarch64" | "arm64", l) => format!("aarch64-unknown-linux-{l}"),
        (_, "gnu") if arm32 => "armv7-unknown-linux-gnueabihf".into(),
        (_, "musl") if arm32 => "armv7-unknown-linux-musleabihf".into(),
        ("amd64", l) => format!("x86_64-unknown-linux-{l}"),
        (a, l) => format!("{a}-unknown-linux-{l}"),
    }
}

/// The triple this binary was built for.
fn own_triple() -> String {
    let libc = if cfg!(target_env = "musl") {
        "musl"
    } else {
        "gnu"
    };
    triple(std::env::consts::ARCH, libc)
}

/// Whether a DUT's `cryptobench --version` line is this release built from this source:
/// only then are its records this build's (the same version number is not enough).
fn same_build(version_line: &str) -> bool {
    let mut words = version_line.split_whitespace();
    words.next() == Some("cryptobench")
        && words.next() == Some(env!("CARGO_PKG_VERSION"))
        && version_line.contains(&format!("(source {};", env!("CRYPTOBENCH_SOURCE")))
}

/// The `uname -m` family an ELF file's machine belongs to, to refuse a --dut-binary
/// built for another architecture before it is uploaded.
fn elf_arch(bytes: &[u8]) -> Option<&'static str> {
    use object::{Architecture, Object};
    let file = object::File::parse(bytes).ok()?;
    Some(match file.architecture() {
        Architecture::X86_64 => "x86_64",
        Architecture::Aarch64 => "aarch64",
        Architecture::Arm => "arm",
        Architecture::I386 => "i686",
        Architecture::Riscv64 => "riscv64",
        Architecture::Mips if file.is_little_endian() => "mipsel",
        Architecture::Mips => "mips",
        _ => return None,
    })
}

fn same_family(uname: &str, elf: &str) -> bool {
    match elf {
        "aarch64" => matches!(uname, "aarch64" | "arm64"),
        "arm" => uname.starts_with("arm") && uname != "arm64",
        "x86_64" => matches!(uname, "x86_64" | "amd64"),
        "i686" => matches!(uname, "i386" | "i486" | "i586" | "i686"),
        e => uname == e,
    }
}

/// Where a binary for `triple` may be: a release's in dist/ here and in dist/ of the
/// source tree this binary was built in (target/release/../../dist), then a cross build's
/// beside this one (target/<triple>/release, scripts/build-arm).
fn dist_candidates(triple: &str) -> Vec<PathBuf> {
    let name = format!("cryptobench-{}-{triple}", env!("CARGO_PKG_VERSION"));
    let mut found = vec![PathBuf::from("dist").join(&name)];
    if let Some(target) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent()?.parent().map(Path::to_path_buf))
    {
        if let Some(tree) = target.parent() {
            found.push(tree.join("dist").join(&name));
        }
        found.push(target.join(triple).join("release/cryptobench"));
    }
    found
}

/// The binary to upload: --dut-binary, this very binary when the DUT is like this
/// machine, or a release binary from dist/.
fn choose_binary(
    url: &str,
    arch: &str,
    libc: &str,
    explicit: Option<&Path>,
) -> Result<PathBuf, Failure> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    let want = triple(arch, libc);
    if want == own_triple() {
        if let Ok(me) = std::env::current_exe() {
            return Ok(me);
        }
    }
    dist_candidates(&want)
        .into_iter()
        .find(|p| p.is_file())
        .ok_or_else(|| {
            Failure::Input(format!(
                "{url} is {arch} ({libc} libc): no cryptobench binary for {want}: build one with scripts/release (dist/cryptobench-{}-{want}) or `cargo build --release --target {want}`, or give --dut-binary PATH",
                env!("CARGO_PKG_VERSION")
            ))
        })
}

/// Asks the DUT what it is and puts this version of cryptobench there.
pub fn deploy(session: &Session, explicit: Option<&Path>) -> Result<Deployed, Failure> {
    let url = session.url.to_string();
    // One round trip: what the DUT is, a line each: its architecture, its C library, its
    // own cryptobench if any. facts.sh reads `lib` (where its loaders are) and `sh` (a
    // program of its own). A glibc loader wins: a glibc system with musl installed beside
    // it (Debian's musl package) runs the glibc build, the full one. `uname -m` says "mips"
    // on both byte orders: a little-endian one (OpenWrt's MT7621) is told by its musl
    // loader's name (ld-musl-mipsel-sf.so.1) or by the byte order of sh's ELF header (byte
    // 5: 1 little-endian, 2 big-endian). The script has no comments: it ships in the
    // router's binary. tests/musl_emulated.rs runs it on the real builds' ELF headers.
    let script = concat!("lib=/lib sh=/bin/sh\n", include_str!("facts.sh"));
    let facts = session.run(script, None)?;
    let text = String::from_utf8_lossy(&facts.stdout);
    let mut lines = text.lines().map(str::trim);
    let (Some(arch), Some(libc)) = (lines.next(), lines.next()) else {
        return Err(Failure::Runtime(format!(
            "{url}: cannot tell the DUT's architecture (`uname -m` said nothing): {}",
            String::from_utf8_lossy(&facts.stderr).trim()
        )));
    };
    let (arch, libc) = (arch.to_string(), libc.to_string());
    let theirs = lines.next().unwrap_or("none");
    if explicit.is_none() && same_build(theirs) {
        return Ok(Deployed {
            program: "cryptobench".into(),
        });
    }
    let binary = choose_binary(&url, &arch, &libc, explicit)?;
    let shown = crate::units::shown_path(&binary);
    let bytes = std::fs::read(&binary).map_err(|e| {
        Failure::Input(format!(
            "--dut-binary {shown}: {e}: give the path of a cryptobench binary built for {arch}"
        ))
    })?;
    match elf_arch(&bytes) {
        Some(elf) if same_family(&arch, elf) => {}
        Some(elf) => {
            return Err(Failure::Input(format!(
                "--dut-binary {shown} is built for {elf}, but {url} is {arch}: give a binary for {}",
                triple(&arch, &libc)
            )))
        }
        None => {
            return Err(Failure::Input(format!(
                "--dut-binary {shown}: not a Linux executable this cryptobench can read: give a cryptobench binary built for {arch}"
            )))
        }
    }
    let sum = hex::encode(Sha256::digest(&bytes));
    // mktemp -d makes the directory 0700; the binary is its owner's only.
    let made = session.run(
        "umask 077 && d=$(mktemp -d \"${TMPDIR:-/tmp}/cbench-dut.XXXXXX\") && echo \"$d\"",
        None,
    )?;
    let dir = String::from_utf8_lossy(&made.stdout).trim().to_string();
    if !made.status.success() || !dir.starts_with('/') {
        return Err(Failure::Runtime(format!(
            "{url}: cannot make a temp dir on the DUT: {}",
            String::from_utf8_lossy(&made.stderr).trim()
        )));
    }
    let qdir = quote(&dir);
    session.on_close("the upload on the DUT", &format!("rm -rf {qdir}"));
    let program = format!("{dir}/cryptobench");
    let qprog = quote(&program);
    let sent = session.run(
        &format!("cat > {qprog} && chmod 700 {qprog} && sha256sum {qprog}"),
        Some(&bytes),
    )?;
    let said = String::from_utf8_lossy(&sent.stdout);
    let theirs = said.split_whitespace().next().unwrap_or("");
    if !sent.status.success() || theirs != sum {
        return Err(Failure::Runtime(format!(
            "{url}: the upload of {shown} to {dir} did not arrive whole (SHA-256 {} there, {sum} here){}",
            if theirs.is_empty() { "unknown" } else { theirs },
            match String::from_utf8_lossy(&sent.stderr).trim() {
                "" => String::new(),
                e => format!(": {e}"),
            }
        )));
    }
    eprintln!(
        "cryptobench: {url} is {arch} ({libc} libc): uploaded {shown} to {dir}, SHA-256 checked"
    );
    Ok(Deployed { program })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_source_is_the_same_build() {
        let ours = format!("cryptobench {}", crate::workloads::probe::version_line());
        assert!(same_build(&ours));
        assert!(!same_build(&format!(
            "cryptobench {}",
            env!("CARGO_PKG_VERSION")
        )));
        assert!(!same_build(&format!(
            "cryptobench {} (source 0000000000000000; x86_64 gnu; features: none)",
            env!("CARGO_PKG_VERSION")
        )));
        assert!(!same_build("none"));
    }

    #[test]
    fn release_names_follow_uname_and_libc() {
        assert_eq!(triple("x86_64", "gnu"), "x86_64-unknown-linux-gnu");
        assert_eq!(triple("aarch64", "gnu"), "aarch64-unknown-linux-gnu");
        assert_eq!(triple("armv7l", "gnu"), "armv7-unknown-linux-gnueabihf");
        assert_eq!(triple("armv7l", "musl"), "armv7-unknown-linux-musleabihf");
        assert_eq!(triple("mips", "musl"), "mips-unknown-linux-musl");
        // deploy's own name for a little-endian "mips" (OpenWrt's MT7621).
        assert_eq!(triple("mipsel", "musl"), "mipsel-unknown-linux-musl");
        assert!(same_family("mipsel", "mipsel") && !same_family("mips", "mipsel"));
        // scripts/release's musl names: the plain one is the dynamic build, which can
        // load the router's libcrypto; the loader-less one is "-static" and never picked.
        assert_eq!(triple("aarch64", "musl"), "aarch64-unknown-linux-musl");
        assert_eq!(triple("x86_64", "musl"), "x86_64-unknown-linux-musl");
        let name = dist_candidates(&triple("armv7l", "musl"))[0].clone();
        assert_eq!(
            name,
            Path::new("dist").join(format!(
                "cryptobench-{}-armv7-unknown-linux-musleabihf",
                env!("CARGO_PKG_VERSION")
            ))
        );
        assert!(same_family("armv7l", "arm") && !same_family("aarch64", "arm"));
    }

    #[test]
    fn this_binary_is_recognised_as_this_architecture() {
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let arch = elf_arch(&me).unwrap();
        assert!(same_family(std::env::consts::ARCH, arch), "{arch}");
        assert_eq!(elf_arch(b"#!/bin/sh\n"), None);
    }
}
