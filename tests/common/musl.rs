//! The musl (OpenWrt) builds scripts/build-musl makes, as the tests run them: which qemu-user
//! and CPU, which sysroot and loader, and where each binary is (tests/musl_emulated.rs,
//! tests/package_openwrt.rs).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// One of scripts/build-musl's builds, a target in a link mode.
pub struct Build {
    pub triple: &'static str,
    /// "static" or "dynamic", as scripts/build-musl names them.
    pub mode: &'static str,
    /// qemu-user and the CPU it emulates; None: this machine runs it.
    pub qemu: Option<(&'static str, &'static str)>,
    /// The sysroot's name: Debian's for the architecture (mipsel-sf: soft-float).
    pub debian_arch: &'static str,
    /// std::env::consts::ARCH of the build.
    pub arch: &'static str,
    /// musl's dynamic loader, as the dynamic build names it.
    pub loader: &'static str,
    /// The build's optional libraries, as --version lists them: the lean set, but for
    /// MIPS, which AWS-LC does not support.
    pub features: &'static [&'static str],
}

pub const fn build(triple: &'static str, mode: &'static str) -> Build {
    // By the first letters (a const fn compares no strings): x86_64, aarch64, armv7, mipsel.
    let lean: &[&str] = &["aws-lc", "libsodium"];
    let (qemu, debian_arch, arch, loader) = match triple.as_bytes() {
        [b'x', ..] => (None, "amd64", "x86_64", "lib/ld-musl-x86_64.so.1"),
        // The 24Kc, as OpenWrt's mipsel_24kc: no FPU, which the soft-float build must not
        // need (an FPU instruction stops it with SIGILL under qemu-user). Its musl is built
        // soft-float (scripts/sysroot-musl-softfloat).
        [b'm', ..] => (
            Some(("qemu-mipsel", "24Kc")),
            "mipsel-sf",
            "mips",
            "lib/ld-musl-mipsel-sf.so.1",
        ),
        [b'a', b'a', ..] => (
            Some(("qemu-aarch64", "cortex-a53")),
            "arm64",
            "aarch64",
            "lib/ld-musl-aarch64.so.1",
        ),
        _ => (
            Some(("qemu-arm", "cortex-a7")),
            "armhf",
            "arm",
            "lib/ld-musl-armhf.so.1",
        ),
    };
    let features: &[&str] = match triple.as_bytes() {
        [b'm', ..] => &["libsodium"],
        _ => lean,
    };
    Build {
        triple,
        mode,
        qemu,
        debian_arch,
        arch,
        loader,
        features,
    }
}

pub const X86_64_STATIC: Build = build("x86_64-unknown-linux-musl", "static");
pub const X86_64_DYNAMIC: Build = build("x86_64-unknown-linux-musl", "dynamic");
pub const ARMV7_DYNAMIC: Build = build("armv7-unknown-linux-musleabihf", "dynamic");
pub const ARMV7_STATIC: Build = build("armv7-unknown-linux-musleabihf", "static");
pub const AARCH64_DYNAMIC: Build = build("aarch64-unknown-linux-musl", "dynamic");
pub const AARCH64_STATIC: Build = build("aarch64-unknown-linux-musl", "static");
pub const MIPSEL_STATIC: Build = build("mipsel-unknown-linux-musl", "static");
pub const MIPSEL_DYNAMIC: Build = build("mipsel-unknown-linux-musl", "dynamic");

/// The repository.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Where scripts/deps/musl.sh keeps the sysroots.
pub fn musl_cache() -> PathBuf {
    std::env::var_os("CRYPTOBENCH_MUSL_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| super::arm_cache().with_file_name("musl"))
}

/// The build's musl (its loader and libc.so), for qemu-user's `-L`.
pub fn sysroot(b: &Build) -> PathBuf {
    musl_cache().join(format!("sysroot-{}", b.debian_arch))
}

/// The binary of a build, or None after reporting the skip.
pub fn ready(b: &Build) -> Option<PathBuf> {
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target"));
    let bin = target_dir
        .join("musl")
        .join(format!("{}-{}", b.triple, b.mode))
        .join("cryptobench");
    if !bin.is_file() {
        super::skip(&format!(
            "{} is not built: run scripts/deps/musl.sh, then scripts/build-musl",
            bin.display()
        ));
        return None;
    }
    let loader = b.loader;
    let runnable = match b.qemu {
        Some((qemu, _)) => {
            Command::new(qemu).arg("--version").output().is_ok()
                && (b.mode == "static" || sysroot(b).join(loader).exists())
        }
        // The dynamic x86_64 build runs on this machine's musl (musl-tools brings it).
        None => b.mode == "static" || Path::new("/").join(loader).exists(),
    };
    if !runnable {
        super::skip(&format!(
            "qemu-user or musl's loader /{loader} is missing for {} {}: run scripts/deps/musl.sh",
            b.triple, b.mode
        ));
        return None;
    }
    Some(bin)
}

/// The build `b`'s binary `bin`, under qemu-user with the build's sysroot (its musl) where
/// this machine does not run it.
pub fn command(b: &Build, bin: &Path) -> Command {
    command_in(b, bin, &sysroot(b))
}

/// The same with another root for qemu-user's `-L`: where the loader and libraries are.
pub fn command_in(b: &Build, bin: &Path, root: &Path) -> Command {
    let mut c = match b.qemu {
        Some((qemu, cpu)) => {
            let mut c = Command::new(qemu);
            c.arg("-L").arg(root).args(["-cpu", cpu]).arg(bin);
            c
        }
        None => Command::new(bin),
    };
    if b.arch == "mips" {
        // anyhow's errors then take a backtrace: the unwinder runs too, and must need no
        // FPU either.
        c.env("RUST_BACKTRACE", "1");
    }
    c.env("XDG_DATA_HOME", super::data_home())
        .env_remove("CRYPTOBENCH_STORE")
        .env_remove("OPENSSL_CONF");
    c
}

/// `args` on the build; its output, whatever the exit code.
pub fn run(b: &Build, bin: &Path, args: &[&str]) -> Output {
    command(b, bin)
        .args(args)
        .output()
        .expect("the musl build starts")
}
