//! An OpenSSL build directory (`--openssl DIR`, e.g. what scripts/build-openssl prints):
//! its libcrypto and libssl pair, checked before anything runs, and the check that a
//! running process really mapped that pair (from /proc/PID/maps).

use super::ffi::{flags_beside, OPENSSL_VERSION};
use super::OpenSsl;
use crate::units::shown_path;
use anyhow::anyhow;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

const FIX: &str =
    "give the install dir of an OpenSSL 3.x build (scripts/build-openssl VERSION prints it)";

/// A build's libraries, found and checked.
#[derive(Clone, Debug)]
pub struct Build {
    /// The directory as given, made absolute and canonical.
    pub dir: PathBuf,
    /// Where the libraries are (DIR/lib or DIR/lib64): the loader's search path.
    pub lib_dir: PathBuf,
    pub libcrypto: PathBuf,
    /// `OpenSSL_version(OPENSSL_VERSION)` of the libcrypto, e.g. "OpenSSL 3.5.5 27 Jan 2026".
    pub version: String,
    /// The non-default build flags scripts/build-openssl recorded (e.g. "no-asm").
    pub flags: Option<String>,
}

impl Build {
    /// The build in `dir`: a libcrypto.so.N (and, with `need_libssl`, its libssl.so.N)
    /// in DIR/lib or DIR/lib64, of this machine's architecture, that loads, and a libssl
    /// of the same release series as the libcrypto. Errors are one line: the problem and
    /// the fix.
    pub fn open(dir: &Path, need_libssl: bool) -> anyhow::Result<Build> {
        let bad = |why: String| format!("--openssl {}: {why}: {FIX}", shown_path(dir));
        if !dir.is_dir() {
            return Err(anyhow::Error::msg(bad("not a directory".into())));
        }
        let dir = dir
            .canonicalize()
            .map_err(|e| bad(format!("cannot resolve ({e})")))
            .map_err(anyhow::Error::msg)?;
        let found = ["lib", "lib64"].iter().find_map(|l| {
            let lib_dir = dir.join(l);
            Some((lib_dir.clone(), versioned(&lib_dir, "libcrypto.so.")?))
        });
        let Some((lib_dir, libcrypto)) = found else {
            return Err(anyhow::Error::msg(bad(
                "no libcrypto.so.N in its lib or lib64 directory".into(),
            )));
        };
        let libssl = versioned(&lib_dir, "libssl.so.");
        if need_libssl && libssl.is_none() {
            return Err(anyhow::Error::msg(bad(format!(
                "no libssl.so.N beside {}",
                shown_path(&libcrypto)
            ))));
        }
        for lib in std::iter::once(&libcrypto).chain(libssl.as_ref()) {
            check_machine(lib)
                .map_err(|e| bad(e.to_string()))
                .map_err(anyhow::Error::msg)?;
        }
        // The system libcrypto first: the loader hands a later dlopen("libcrypto.so.3")
        // whatever object of that soname is loaded already, and the system one must stay
        // the system one (the registry loads it first for the same reason).
        let _ = OpenSsl::load_system();
        let openssl = OpenSsl::load_path(&libcrypto)
            .map_err(|e| anyhow!("--openssl {}: {e}", shown_path(&dir)))?;
        let version = openssl
            .version_info(OPENSSL_VERSION)
            .unwrap_or_else(|| format!("OpenSSL {:#x}", openssl.version_num()));
        if let Some(ssl) = &libssl {
            let (c, s) = (newest_node(&libcrypto), newest_node(ssl));
            if let (Some(c), Some(s)) = (&c, &s) {
                if series(c) != series(s) {
                    return Err(anyhow::Error::msg(bad(format!(
                        "mismatched pair: {} is from OpenSSL {} but {} is from {}; a libssl needs the libcrypto of its own build",
                        shown_path(ssl),
                        series(s),
                        shown_path(&libcrypto),
                        series(c)
                    ))));
                }
            }
        }
        Ok(Build {
            flags: flags_beside(&libcrypto),
            dir,
            lib_dir,
            libcrypto,
            version,
        })
    }

    /// "openssl 3.5.5" or "openssl 3.5.5 no-asm": how labels name the build.
    pub fn name(&self) -> String {
        let number = crate::units::short_version(&self.version);
        match &self.flags {
            Some(f) => format!("openssl {number} {f}"),
            None => format!("openssl {number}"),
        }
    }

    /// The loader's search path that makes a program load this build's pair.
    pub fn env(&self) -> Vec<(&'static str, &Path)> {
        vec![("LD_LIBRARY_PATH", &self.lib_dir)]
    }

    /// Checks, from /proc/PID/maps, that process `pid` (`what`, for messages) mapped this
    /// build's libcrypto (and its libssl, when it mapped one) and no other: what it
    /// mapped, for the record, or why the point must be refused.
    pub fn check_maps(&self, pid: i32, what: &str) -> anyhow::Result<OpenSslBuild> {
        let maps = crate::sys::procfs::mapped_files(pid)
            .map_err(|e| anyhow!("{what} (pid {pid}): cannot read its maps: {e}"))?;
        let (libcrypto, libssl) = self.mapped_pair(&maps, pid, what)?;
        Ok(OpenSslBuild {
            dir: self.dir.clone(),
            libcrypto,
            libssl,
            version: self.version.clone(),
            name: self.name(),
        })
    }

    /// The libcrypto and libssl in `maps` (process `pid`'s), which must be this build's.
    pub fn mapped_pair(
        &self,
        maps: &[PathBuf],
        pid: i32,
        what: &str,
    ) -> anyhow::Result<(PathBuf, Option<PathBuf>)> {
        let inside = |p: &Path| p.starts_with(&self.dir) || p.starts_with(&self.lib_dir);
        let elsewhere = format!(
            "not the build in {}: the loader did not take --openssl's library (is {what} linked with an rpath, or setuid?)",
            shown_path(&self.dir)
        );
        mapped_pair(maps, (pid, what), &inside, &elsewhere)
    }
}

/// The libcrypto (required) and the libssl (when there is one) in `maps`, the files process
/// `pid` (`what`) mapped, each of which must be `inside` (canonical paths); otherwise why
/// not, naming the file and ending with `elsewhere`.
pub fn mapped_pair(
    maps: &[PathBuf],
    who: (i32, &str),
    inside: &dyn Fn(&Path) -> bool,
    elsewhere: &str,
) -> anyhow::Result<(PathBuf, Option<PathBuf>)> {
    let (pid, what) = who;
    let libcrypto = mapped(maps, who, "libcrypto.so", inside, elsewhere)?.ok_or_else(|| {
        anyhow!("{what} (pid {pid}) mapped no libcrypto.so*: it does not use OpenSSL's libcrypto")
    })?;
    Ok((
        libcrypto,
        mapped(maps, who, "libssl.so", inside, elsewhere)?,
    ))
}

/// The first file in `maps` (the files process `pid`, `what`, mapped) whose name starts
/// with `prefix`, if any; every such file must be `inside` (canonical paths), otherwise
/// why not, naming the file and ending with `elsewhere`.
pub fn mapped(
    maps: &[PathBuf],
    (pid, what): (i32, &str),
    prefix: &str,
    inside: &dyn Fn(&Path) -> bool,
    elsewhere: &str,
) -> anyhow::Result<Option<PathBuf>> {
    let libs: Vec<&PathBuf> = maps
        .iter()
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
        })
        .collect();
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    if let Some(other) = libs.iter().find(|p| !inside(&canonical(p))) {
        return Err(anyhow!(
            "{what} (pid {pid}) mapped {}, {elsewhere}",
            shown_path(other)
        ));
    }
    Ok(libs.first().map(|p| (*p).clone()))
}

/// The library's version as written in its file: the first string "AWS-LC N..." (an
/// AWS-LC libcrypto, whose OpenSSL-compatible text says "OpenSSL 1.1.1 (compatible;
/// AWS-LC N)"), else the first "wolfSSL N..." (libwolfssl's OPENSSL_VERSION_TEXT: "wolfSSL
/// 5.7.2"), else the first "OpenSSL N..." (OPENSSL_VERSION_TEXT: "OpenSSL 3.0.19 27 Jan
/// 2026", what `OpenSSL_version` returns). None when it holds none.
pub fn version_in_file(lib: &Path) -> Option<String> {
    version_in_bytes(&std::fs::read(lib).ok()?)
}

fn version_in_bytes(bytes: &[u8]) -> Option<String> {
    let strings = || {
        bytes
            .split(|&b| b == 0)
            .filter_map(|s| std::str::from_utf8(s).ok())
    };
    let starts = |s: &str, p: &str| {
        s.strip_prefix(p)
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    };
    strings()
        .find(|s| starts(s, "AWS-LC "))
        .or_else(|| strings().find(|s| starts(s, "wolfSSL ")))
        .or_else(|| strings().find(|s| starts(s, "OpenSSL ")))
        .map(str::to_string)
}

/// The system libcrypto's `OpenSSL_version(OPENSSL_VERSION)`: "OpenSSL 3.0.19 27 Jan 2026".
pub fn system_version() -> anyhow::Result<String> {
    let o = OpenSsl::load_system()?;
    Ok(o.version_info(OPENSSL_VERSION)
        .unwrap_or_else(|| format!("OpenSSL {:#x}", o.version_num())))
}

/// The flags beyond the defaults that scripts/build-openssl recorded for the build in
/// `dir` ("no-asm", "no-apps -O0"); None for a build made as it makes them by default.
pub fn flags_of(dir: &Path) -> Option<String> {
    flags_beside(&dir.join("lib").join("libcrypto.so"))
}

/// The builds scripts/build-openssl cached, newest first: its cache dir's entries, named as
/// it names them (VERSION-asm-TARGET-HASH).
pub fn cached() -> (Option<PathBuf>, Vec<PathBuf>) {
    let cache = crate::sys::program::cache_dir("openssl", "CRYPTOBENCH_OPENSSL_CACHE");
    let dirs = cache
        .as_deref()
        .map(crate::sys::program::cached_builds)
        .unwrap_or_default();
    (cache, dirs)
}

/// What records name as the implementation when `program` (nginx, openvpn) runs on the
/// build named `build` ("openssl 3.5.5"): "nginx [openssl 3.5.5]".
pub fn on_build(program: &str, build: &str) -> String {
    format!("{program} [{build}]")
}

/// `prefix` + a version in `dir` (libcrypto.so.3, not the unversioned dev symlink).
fn versioned(dir: &Path, prefix: &str) -> Option<PathBuf> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix(prefix))
                .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit()))
        })
        .collect();
    names.sort();
    names.into_iter().next()
}

/// ELF machine numbers (e_machine) by name, for messages.
fn machine_name(m: u16) -> String {
    match m {
        3 => "i386".into(),
        40 => "arm".into(),
        62 => "x86_64".into(),
        183 => "aarch64".into(),
        243 => "riscv".into(),
        other => format!("ELF machine {other}"),
    }
}

/// (EI_CLASS, e_machine) of an ELF file; None when it is not one.
fn elf_machine(path: &Path) -> Option<(u8, u16)> {
    use std::io::Read;
    let mut head = [0u8; 20];
    std::fs::File::open(path).ok()?.read_exact(&mut head).ok()?;
    if &head[..4] != b"\x7fELF" {
        return None;
    }
    let machine = if head[5] == 2 {
        u16::from_be_bytes([head[18], head[19]])
    } else {
        u16::from_le_bytes([head[18], head[19]])
    };
    Some((head[4], machine))
}

/// A library of another architecture cannot be loaded here: say which it is.
fn check_machine(lib: &Path) -> anyhow::Result<()> {
    let Some(ours) = elf_machine(Path::new("/proc/self/exe")) else {
        return Ok(());
    };
    match elf_machine(lib) {
        None => Err(anyhow!("{} is not an ELF library", shown_path(lib))),
        Some(theirs) if theirs != ours => Err(anyhow!(
            "{} is built for {} ({}-bit), this machine runs {} ({}-bit)",
            shown_path(lib),
            machine_name(theirs.1),
            if theirs.0 == 2 { 64 } else { 32 },
            machine_name(ours.1),
            if ours.0 == 2 { 64 } else { 32 },
        )),
        Some(_) => Ok(()),
    }
}

/// The newest OpenSSL symbol-version node a library names ("OPENSSL_3.5.0"): libssl and
/// libcrypto of one build share their release series (3.5), and a libssl names the
/// libcrypto nodes it needs.
fn newest_node(lib: &Path) -> Option<(u32, u32, u32)> {
    let bytes = std::fs::read(lib).ok()?;
    let needle = b"OPENSSL_";
    let mut best = None;
    let mut i = 0;
    while let Some(at) = bytes[i..].windows(needle.len()).position(|w| w == needle) {
        let start = i + at + needle.len();
        let end = bytes[start..]
            .iter()
            .position(|&b| !(b.is_ascii_digit() || b == b'.'))
            .map_or(bytes.len(), |n| start + n);
        let parts: Vec<u32> = std::str::from_utf8(&bytes[start..end])
            .unwrap_or("")
            .split('.')
            .filter_map(|p| p.parse().ok())
            .collect();
        if let [a, b, c] = parts[..] {
            best = best.max(Some((a, b, c)));
        }
        i = end.max(start);
    }
    best
}

/// "3.5" of a node (3, 5, 0).
fn series(node: &(u32, u32, u32)) -> String {
    format!("{}.{}", node.0, node.1)
}

/// A point that was not measured, and why: any workload. The point's identity (speed:
/// `alg`, `size`; tls: `suite`, `content`, `file_size`, `concurrency`; vpn: `tunnel`,
/// `load`) is flattened in.
/// The OpenSSL build a server or tunnel ran on (`--openssl DIR` of tls and vpn), as the
/// running process mapped it (/proc/PID/maps): a point is kept only when both libraries
/// it mapped are inside `dir`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct OpenSslBuild {
    /// The build's directory, canonical.
    pub dir: std::path::PathBuf,
    /// The libcrypto (and libssl, when the program uses one) the process mapped.
    pub libcrypto: std::path::PathBuf,
    pub libssl: Option<std::path::PathBuf>,
    /// `OpenSSL_version()` of the libcrypto, e.g. "OpenSSL 3.5.5 27 Jan 2026".
    pub version: String,
    /// How labels name it: "openssl 3.5.5", "openssl 3.5.5 no-asm".
    pub name: String,
}

#[cfg(test)]
mod tests {
    use super::super::ffi::BUILD_INFO;
    use super::*;

    #[test]
    fn flags_come_from_the_build_info_beside_the_library() {
        let dir = std::env::temp_dir().join(format!("cryptobench-build-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("lib")).unwrap();
        let lib = dir.join("lib/libcrypto.so.3");
        assert_eq!(flags_beside(&lib), None);
        std::fs::write(dir.join(BUILD_INFO), "version=3.5.5\nflags=asm\n").unwrap();
        assert_eq!(flags_beside(&lib), None);
        std::fs::write(dir.join(BUILD_INFO), "flags=no-asm\n").unwrap();
        assert_eq!(flags_beside(&lib).as_deref(), Some("no-asm"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn short_versions_keep_a_builds_flags() {
        use crate::units::{short_version, BUILD_MARK};
        let v = format!("OpenSSL 3.5.5 27 Jan 2026{BUILD_MARK}no-asm");
        assert_eq!(short_version(&v), "3.5.5 no-asm");
        assert_eq!(short_version("OpenSSL 3.0.19 27 Jan 2026"), "3.0.19");
    }

    #[test]
    fn the_version_is_read_from_the_file() {
        let aws = b"x\0OpenSSL 1.1.1 (compatible; AWS-LC 5.12.0)\0AWS-LC 5.12.0\0";
        assert_eq!(version_in_bytes(aws).as_deref(), Some("AWS-LC 5.12.0"));
        let ossl = b"OpenSSL default\0OpenSSL 3.5.5 27 Jan 2026\0";
        assert_eq!(
            version_in_bytes(ossl).as_deref(),
            Some("OpenSSL 3.5.5 27 Jan 2026")
        );
        let wolf = b"5.7.2\0OpenSSL\0wolfSSL 5.7.2\0";
        assert_eq!(version_in_bytes(wolf).as_deref(), Some("wolfSSL 5.7.2"));
        assert_eq!(version_in_bytes(b"libz 1.2\0"), None);
    }

    #[test]
    fn the_system_libcrypto_names_its_series() {
        let lib = Path::new("/usr/lib/x86_64-linux-gnu/libcrypto.so.3");
        if lib.exists() {
            let n = newest_node(lib).unwrap();
            assert_eq!(series(&n), "3.0");
        }
    }
}
