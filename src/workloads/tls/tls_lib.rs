//! `--tls-lib`: the libssl/libcrypto a TLS server runs on. Each name is found before
//! anything starts (Debian's OpenSSL, a scripts/build-openssl build loaded through
//! LD_LIBRARY_PATH, or HAProxy built against AWS-LC or wolfSSL by scripts/build-haproxy), and every
//! point proves from the server process's maps that it ran on that library: a point whose
//! server mapped another is refused, never recorded under the asked name.

use crate::failure::Failure;
use crate::impls::openssl::build::{self, Build, OpenSslBuild};
use crate::record::tls::{TlsLib as Recorded, TlsLibProof};
use crate::sys::program::{cache_dir, cached_builds};
use crate::units::shown_path;
use anyhow::anyhow;
use std::path::{Path, PathBuf};

/// The libraries `--tls-lib` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LibName {
    /// Debian's OpenSSL 3.0, which Debian's nginx and haproxy link.
    System,
    #[value(name = "openssl-3.5")]
    Openssl35,
    #[value(name = "openssl-3.6")]
    Openssl36,
    #[value(name = "openssl-4.0")]
    Openssl40,
    /// HAProxy 3.0 built against AWS-LC (scripts/build-haproxy --lib aws-lc).
    AwsLc,
    /// HAProxy 3.0 built against wolfSSL (scripts/build-haproxy --lib wolfssl).
    #[value(name = "wolfssl")]
    WolfSsl,
}

impl LibName {
    pub fn name(self) -> &'static str {
        match self {
            LibName::System => "system",
            LibName::Openssl35 => "openssl-3.5",
            LibName::Openssl36 => "openssl-3.6",
            LibName::Openssl40 => "openssl-4.0",
            LibName::AwsLc => "aws-lc",
            LibName::WolfSsl => "wolfssl",
        }
    }

    /// Why `server` cannot run on this library, if it cannot: known before anything is
    /// found or built.
    pub fn refusal(self, server: &str) -> Option<String> {
        let own = self.own()?;
        (server == "nginx").then(|| {
            format!(
                "--tls-lib {}: nginx cannot run on {} (its {} is not ABI-compatible with the libssl.so.3 Debian's nginx links; only HAProxy is built against it): use --server haproxy",
                self.name(),
                own.shown,
                own.ssl_file()
            )
        })
    }

    /// A library only the HAProxy scripts/build-haproxy built against it runs on.
    fn own(self) -> Option<&'static Own> {
        OWN.iter().find(|o| o.lib == self)
    }

    /// "3.5" for openssl-3.5.
    fn series(self) -> Option<&'static str> {
        self.name().strip_prefix("openssl-")
    }
}

/// A library that Debian's servers cannot load, with the HAProxy scripts/build-haproxy
/// built against it: what tells each apart.
pub struct Own {
    pub lib: LibName,
    /// How its project writes it: "AWS-LC", "wolfSSL" (its version string starts so).
    pub shown: &'static str,
    /// The file in its lib/ whose version string is the library's (its libcrypto): the
    /// proof's `libcrypto`.
    pub file: &'static str,
    /// Its libssl, when it is another file; else `file` is the libssl too (wolfSSL's one
    /// libwolfssl). OpenSSL's libssl.so and libcrypto.so, when not its own names, must
    /// not be mapped at all.
    pub libssl: Option<&'static str>,
    /// What builds it and its HAProxy.
    pub scripts: &'static str,
    /// Why it serves no NULL-cipher suite.
    pub no_null: &'static str,
}

impl Own {
    /// Its libssl's file name: "libssl.so", "libwolfssl.so".
    fn ssl_file(&self) -> &'static str {
        self.libssl.unwrap_or(self.file)
    }
}

const OWN: [Own; 2] = [
    Own {
        lib: LibName::AwsLc,
        shown: "AWS-LC",
        file: "libcrypto.so",
        libssl: Some("libssl.so"),
        scripts: "scripts/build-aws-lc && scripts/build-haproxy --lib aws-lc",
        no_null: "AWS-LC has no NULL-cipher suite",
    },
    Own {
        lib: LibName::WolfSsl,
        shown: "wolfSSL",
        file: "libwolfssl.so",
        libssl: None,
        scripts: "scripts/build-wolfssl && scripts/build-haproxy --lib wolfssl",
        no_null: "wolfSSL is built without NULL ciphers (--enable-nullcipher)",
    },
];

/// HAProxy built against AWS-LC or wolfSSL, as scripts/build-haproxy left it.
#[derive(Clone, Debug)]
pub struct OwnHaproxy {
    pub lib: LibName,
    /// The library's install dir (scripts/build-aws-lc's, scripts/build-wolfssl's), whose
    /// lib/ HAProxy's rpath names.
    pub dir: PathBuf,
    pub haproxy: PathBuf,
}

impl OwnHaproxy {
    fn own(&self) -> &'static Own {
        self.lib.own().expect("an OwnHaproxy is of a library in OWN")
    }
}

#[derive(Clone, Debug)]
pub enum Kind {
    System,
    /// An OpenSSL build, loaded through LD_LIBRARY_PATH (`--openssl DIR`, openssl-X.Y).
    Build(Build),
    /// AWS-LC or wolfSSL, under the HAProxy built against it.
    Own(OwnHaproxy),
}

/// A library a server runs on: its name as asked, its version (as its file says it) and
/// where it is.
#[derive(Clone, Debug)]
pub struct TlsLib {
    pub name: String,
    pub version: String,
    pub kind: Kind,
}

impl TlsLib {
    /// The library `name` as found here; a library not built is bad input naming the
    /// script that builds it.
    pub fn find(name: LibName) -> Result<TlsLib, Failure> {
        TlsLib::locate(name)
            .map_err(|why| Failure::input(format!("--tls-lib {}: {why}", name.name())))
    }

    /// `find`, with why not in words that follow the name.
    fn locate(name: LibName) -> Result<TlsLib, String> {
        let not_built = |script: String| format!("not built here: run {script}");
        match name {
            LibName::System => TlsLib::system().map_err(|e| e.to_string()),
            _ if name.own().is_some() => {
                own_haproxy(name).ok_or_else(|| not_built(name.own().map_or("", |o| o.scripts).into()))
            }
            _ => {
                let series = name.series().unwrap_or_default();
                let dir = cached_openssl(series)
                    .ok_or_else(|| not_built(format!("scripts/build-openssl {series}")))?;
                let b = Build::open(&dir, true).map_err(|e| e.to_string())?;
                match other_soname(&b.lib_dir) {
                    Some(why) => Err(why),
                    None => Ok(TlsLib::build(b)),
                }
            }
        }
    }

    pub fn system() -> Result<TlsLib, Failure> {
        Ok(TlsLib {
            name: LibName::System.name().into(),
            version: build::system_version().map_err(Failure::unavailable)?,
            kind: Kind::System,
        })
    }

    /// An OpenSSL build (`--openssl DIR`, or openssl-X.Y found in the cache), named by its
    /// series: "openssl-3.5", "openssl-3.5 no-asm".
    pub fn build(b: Build) -> TlsLib {
        let number = crate::units::short_version(&b.version);
        let series: Vec<&str> = number.split('.').take(2).collect();
        let name = match &b.flags {
            Some(f) => format!("openssl-{} {f}", series.join(".")),
            None => format!("openssl-{}", series.join(".")),
        };
        TlsLib {
            name,
            version: b.version.clone(),
            kind: Kind::Build(b),
        }
    }

    pub fn as_build(&self) -> Option<&Build> {
        match &self.kind {
            Kind::Build(b) => Some(b),
            _ => None,
        }
    }

    /// The HAProxy program that runs on this library, when it is not Debian's.
    pub fn haproxy(&self) -> Option<&Path> {
        match &self.kind {
            Kind::Own(a) => Some(&a.haproxy),
            _ => None,
        }
    }

    /// The server's environment: a build's library path, or nothing.
    pub fn env(&self) -> Vec<(&'static str, &Path)> {
        self.as_build().map(Build::env).unwrap_or_default()
    }

    /// How the implementation names it: None for the system's, "openssl 3.5.5",
    /// "aws-lc 5.12.0", "wolfssl 5.7.2".
    pub fn label(&self) -> Option<String> {
        match &self.kind {
            Kind::System => None,
            Kind::Build(b) => Some(b.name()),
            Kind::Own(a) => Some(self.version.replacen(a.own().shown, a.lib.name(), 1)),
        }
    }

    /// Why this library cannot serve `suite`, if it cannot: AWS-LC and this wolfSSL have
    /// no NULL cipher.
    pub fn suite_refusal(&self, suite: &super::suites::Suite) -> Option<String> {
        match &self.kind {
            Kind::Own(a) if suite.null => Some(format!(
                "{}: {}, so no null ceiling on it",
                self.version,
                a.own().no_null
            )),
            _ => None,
        }
    }

    /// Proves, from /proc/PID/maps, that process `pid` (`what`) runs on this library: the
    /// record's field, and an OpenSSL build's own record (`openssl_build`); or why the
    /// point must be refused.
    pub fn prove(&self, pid: i32, what: &str) -> anyhow::Result<(Recorded, Option<OpenSslBuild>)> {
        let maps = crate::sys::procfs::mapped_files(pid)
            .map_err(|e| anyhow!("{what} (pid {pid}): cannot read its maps: {e}"))?;
        let proof = self.judge(&maps, pid, what, &build::version_in_file)?;
        let on_build = self.as_build().map(|b| OpenSslBuild {
            dir: b.dir.clone(),
            libcrypto: proof.proof.libcrypto.clone(),
            libssl: proof.proof.libssl.clone(),
            version: b.version.clone(),
            name: b.name(),
        });
        Ok((proof, on_build))
    }

    /// The proof from `maps`, the files process `pid` mapped: its libcrypto and libssl
    /// must be this library's files, and the libcrypto's version (`version_of`) this one's.
    fn judge(
        &self,
        maps: &[PathBuf],
        pid: i32,
        what: &str,
        version_of: &dyn Fn(&Path) -> Option<String>,
    ) -> anyhow::Result<Recorded> {
        let (libcrypto, libssl) = match &self.kind {
            Kind::Build(b) => b.mapped_pair(maps, pid, what)?,
            Kind::System => {
                let elsewhere = "not the system's library (under /usr/lib): is LD_LIBRARY_PATH set?";
                build::mapped_pair(maps, (pid, what), &crate::sys::system_library, elsewhere)?
            }
            Kind::Own(a) => own_files(a, maps, (pid, what))?,
        };
        let found = version_of(&libcrypto).unwrap_or_else(|| "no version string".into());
        if found != self.version {
            return Err(anyhow!(
                "{what} (pid {pid}) mapped {}, which is {found}, not {} ({})",
                shown_path(&libcrypto),
                self.version,
                self.name
            ));
        }
        Ok(Recorded {
            name: self.name.clone(),
            version: found,
            proof: TlsLibProof {
                process: format!("{what} (pid {pid})"),
                libcrypto,
                libssl,
            },
        })
    }
}

/// The newest scripts/build-openssl build of `series` ("3.5") for this machine, with
/// assembly and no extra options' flags, in its cache: not the tests' builds without
/// apps at -O0, which would measure a server on unoptimised code.
/// The default OpenSSL builds in the cache, one per series `--tls-lib` names (in
/// process, a libssl's soname does not matter): what `advise` measures beside the
/// system's libcrypto.
pub fn cached_openssl_builds() -> Vec<PathBuf> {
    use clap::ValueEnum;
    LibName::value_variants()
        .iter()
        .filter_map(|n| cached_openssl(n.series()?))
        .collect()
}

fn cached_openssl(series: &str) -> Option<PathBuf> {
    build::cached().1.into_iter().find(|d| {
        d.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| is_default_build(n, series))
            && build::flags_of(d).is_none()
    })
}

/// scripts/build-openssl's name for a build of `series` with assembly, for this machine:
/// "3.5.5-asm-x86_64-unknown-linux-gnu-HASH" (not "...-no-asm-...", nor another target).
fn is_default_build(name: &str, series: &str) -> bool {
    let target = format!("asm-{}-unknown-linux-gnu-", std::env::consts::ARCH);
    name.strip_prefix(series)
        .and_then(|r| r.strip_prefix('.'))
        .and_then(|r| r.split_once('-'))
        .is_some_and(|(patch, rest)| patch.parse::<u32>().is_ok() && rest.starts_with(&target))
}

/// The libcrypto and libssl files of the proof, from `maps`, the files process `pid`
/// (`what`) mapped: the library's own files must be inside its install dir (its
/// versioned file at least mapped), and OpenSSL's, when they are not its own names, not
/// mapped at all. wolfSSL's one file is both.
fn own_files(
    a: &OwnHaproxy,
    maps: &[PathBuf],
    who: (i32, &str),
) -> anyhow::Result<(PathBuf, Option<PathBuf>)> {
    let (own, lib) = (a.own(), a.lib.name());
    let inside = |p: &Path| p.starts_with(&a.dir);
    let elsewhere = format!(
        "not {}'s in {}: was HAProxy built against it (scripts/build-haproxy --lib {lib})?",
        own.shown,
        shown_path(&a.dir)
    );
    let nowhere = |_: &Path| false;
    let openssl = format!("an OpenSSL library: HAProxy on {} must map none", own.shown);
    for prefix in ["libcrypto.so", "libssl.so"] {
        if prefix != own.file && Some(prefix) != own.libssl {
            build::mapped(maps, who, prefix, &nowhere, &openssl)?;
        }
    }
    let file = build::mapped(maps, who, own.file, &inside, &elsewhere)?.ok_or_else(|| {
        anyhow!(
            "{} (pid {}) mapped no {}*: it does not run on {}",
            who.1,
            who.0,
            own.file,
            own.shown
        )
    })?;
    let libssl = match own.libssl {
        Some(prefix) => build::mapped(maps, who, prefix, &inside, &elsewhere)?,
        None => Some(file.clone()),
    };
    Ok((file, libssl))
}

/// The newest HAProxy scripts/build-haproxy built against `lib` (AWS-LC, wolfSSL), and
/// the library's version as its file says it.
fn own_haproxy(lib: LibName) -> Option<TlsLib> {
    let own = lib.own()?;
    let cache = cache_dir("haproxy", "CRYPTOBENCH_HAPROXY_CACHE")?;
    let key = format!("lib={} ", lib.name());
    cached_builds(&cache).into_iter().find_map(|d| {
        let info = std::fs::read_to_string(d.join("cryptobench-build")).ok()?;
        let dir = info.lines().find_map(|l| l.strip_prefix(key.as_str()))?;
        let dir = PathBuf::from(dir.trim()).canonicalize().ok()?;
        let version = build::version_in_file(&dir.join("lib").join(own.file))?;
        let haproxy = d.join("sbin/haproxy");
        haproxy.is_file().then(|| TlsLib {
            name: lib.name().into(),
            version,
            kind: Kind::Own(OwnHaproxy { lib, dir, haproxy }),
        })
    })
}

/// The soname Debian's nginx and haproxy link: a build with another one is not what the
/// loader gives them through LD_LIBRARY_PATH (each point's proof would refuse it).
const SERVERS_LIBSSL: &str = "libssl.so.3";

/// Why a build in `lib_dir` cannot be put under Debian's servers: its libssl has another
/// soname (OpenSSL 4.0's libssl.so.4), so they would run on the system's.
fn other_soname(lib_dir: &Path) -> Option<String> {
    if lib_dir.join(SERVERS_LIBSSL).exists() {
        return None;
    }
    let theirs = std::fs::read_dir(lib_dir)
        .ok()?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .find(|n| n.starts_with("libssl.so."))?;
    Some(format!(
        "its {theirs} is not the {SERVERS_LIBSSL} Debian's nginx and haproxy link, so they would run on the system's OpenSSL (a server built against it is needed)"
    ))
}

/// The libraries built here (the system's always, if its OpenSSL is found), in
/// `--tls-lib`'s order: what `advise --stacks` puts under the servers.
pub fn found() -> Vec<LibName> {
    use clap::ValueEnum;
    LibName::value_variants()
        .iter()
        .copied()
        .filter(|&n| TlsLib::locate(n).is_ok())
        .collect()
}

/// `--list`: every library, found (with its version and the servers that run on it), or
/// why not and how to build it.
pub fn list() -> Vec<String> {
    use clap::ValueEnum;
    LibName::value_variants()
        .iter()
        .map(|&n| match TlsLib::locate(n) {
            Ok(TlsLib {
                kind: Kind::Own(a),
                version,
                ..
            }) => format!(
                "{}: {version} (haproxy only: its {} is not the ABI Debian's nginx links)",
                n.name(),
                a.own().ssl_file()
            ),
            Ok(l) => format!("{}: {} (nginx, haproxy)", n.name(), l.version),
            Err(why) => format!("{}: {why}", n.name()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_with_another_libssl_soname_is_not_offered() {
        let dir = std::env::temp_dir().join(format!("cbench-soname-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("libssl.so.4"), b"").unwrap();
        let why = other_soname(&dir).expect("libssl.so.4 is refused");
        assert!(why.contains("libssl.so.4 is not the libssl.so.3"), "{why}");
        std::fs::write(dir.join("libssl.so.3"), b"").unwrap();
        assert_eq!(other_soname(&dir), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn own_at(lib: LibName, version: &str, dir: &str) -> TlsLib {
        TlsLib {
            name: lib.name().into(),
            version: version.into(),
            kind: Kind::Own(OwnHaproxy {
                lib,
                dir: dir.into(),
                haproxy: "/c/haproxy/sbin/haproxy".into(),
            }),
        }
    }

    fn aws_lc_at(dir: &str) -> TlsLib {
        own_at(LibName::AwsLc, "AWS-LC 5.12.0", dir)
    }

    /// A server that mapped the system's libraries when AWS-LC was asked is refused, and so
    /// is one whose mapped AWS-LC file says another version; the right files pass.
    #[test]
    fn a_server_on_another_library_is_refused() {
        let lib = aws_lc_at("/c/aws-lc/5.12.0-x");
        let system = [
            PathBuf::from("/usr/sbin/haproxy"),
            PathBuf::from("/usr/lib/x86_64-linux-gnu/libssl.so.3"),
            PathBuf::from("/usr/lib/x86_64-linux-gnu/libcrypto.so.3"),
        ];
        let says = |v: &'static str| move |_: &Path| Some(v.to_string());
        let e = lib
            .judge(&system, 7, "haproxy", &says("OpenSSL 3.0.19 27 Jan 2026"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("libcrypto.so.3, not AWS-LC's in /c/aws-lc/5.12.0-x"), "{e}");
        let ours = [
            PathBuf::from("/c/aws-lc/5.12.0-x/lib/libssl.so"),
            PathBuf::from("/c/aws-lc/5.12.0-x/lib/libcrypto.so"),
        ];
        let e = lib
            .judge(&ours, 7, "haproxy", &says("AWS-LC 5.11.0"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("which is AWS-LC 5.11.0, not AWS-LC 5.12.0"), "{e}");
        let ok = lib
            .judge(&ours, 7, "haproxy", &says("AWS-LC 5.12.0"))
            .unwrap();
        assert_eq!(ok.proof.libcrypto, ours[1]);
        assert_eq!(ok.proof.libssl.as_ref(), Some(&ours[0]));
        assert_eq!(ok.proof.process, "haproxy (pid 7)");
        // The system library asked: a build's files are not it.
        let system_lib = TlsLib {
            name: "system".into(),
            version: "OpenSSL 3.0.19 27 Jan 2026".into(),
            kind: Kind::System,
        };
        assert!(system_lib
            .judge(&ours, 7, "nginx worker", &says("OpenSSL 3.0.19 27 Jan 2026"))
            .is_err());
        assert!(system_lib
            .judge(&system, 7, "nginx worker", &says("OpenSSL 3.0.19 27 Jan 2026"))
            .is_ok());
    }

    /// wolfSSL's one file is its libcrypto and libssl; a server that mapped OpenSSL beside
    /// it, or another libwolfssl, or one of another version, is refused.
    #[test]
    fn a_server_on_wolfssl_maps_its_one_file_and_no_openssl() {
        let lib = own_at(LibName::WolfSsl, "wolfSSL 5.7.2", "/c/wolfssl/5.7.2-x");
        let says = |v: &'static str| move |_: &Path| Some(v.to_string());
        let ours = PathBuf::from("/c/wolfssl/5.7.2-x/lib/libwolfssl.so.42.2.0");
        let ok = lib
            .judge(std::slice::from_ref(&ours), 7, "haproxy", &says("wolfSSL 5.7.2"))
            .unwrap();
        assert_eq!((&ok.proof.libcrypto, ok.proof.libssl.as_ref()), (&ours, Some(&ours)));
        // Each case: what the server mapped, the version its file says, why it is refused.
        let openssl = PathBuf::from("/usr/lib/x86_64-linux-gnu/libcrypto.so.3");
        let debians = PathBuf::from("/usr/lib/x86_64-linux-gnu/libwolfssl.so.35");
        for (maps, says_v, why) in [
            (vec![ours.clone(), openssl], "wolfSSL 5.7.2", "libcrypto.so.3, an OpenSSL library: HAProxy on wolfSSL must map none"),
            (vec![debians], "wolfSSL 5.5.4", "not wolfSSL's in /c/wolfssl/5.7.2-x"),
            (vec![ours.clone()], "wolfSSL 5.7.0", "which is wolfSSL 5.7.0, not wolfSSL 5.7.2"),
            (vec![], "wolfSSL 5.7.2", "mapped no libwolfssl.so*"),
        ] {
            let e = lib.judge(&maps, 7, "haproxy", &says(says_v)).unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
        assert_eq!(lib.label().as_deref(), Some("wolfssl 5.7.2"));
    }

    #[test]
    fn the_default_build_of_a_series_is_found_by_its_name() {
        let a = std::env::consts::ARCH;
        assert!(is_default_build(&format!("3.5.5-asm-{a}-unknown-linux-gnu-5b4"), "3.5"));
        assert!(!is_default_build(&format!("3.5.5-no-asm-{a}-unknown-linux-gnu-5b4"), "3.5"));
        assert!(!is_default_build(&format!("3.6.3-asm-{a}-unknown-linux-gnu-5b4"), "3.5"));
        assert!(!is_default_build("3.5.5-asm-armv7-unknown-linux-musleabihf-5b4", "3.5"));
        assert!(!is_default_build(&format!("3.55.1-asm-{a}-unknown-linux-gnu-5b4"), "3.5"));
    }

    #[test]
    fn nginx_is_refused_on_aws_lc_and_wolfssl_only() {
        let no = LibName::AwsLc.refusal("nginx");
        assert!(no.is_some_and(|r| r.contains("use --server haproxy")));
        assert!(LibName::AwsLc.refusal("haproxy").is_none());
        let no = LibName::WolfSsl.refusal("nginx").unwrap_or_default();
        assert!(no.starts_with("--tls-lib wolfssl: nginx cannot run on wolfSSL (its libwolfssl.so is not"), "{no}");
        assert!(LibName::WolfSsl.refusal("haproxy").is_none());
        assert!(LibName::Openssl35.refusal("nginx").is_none());
        assert_eq!(aws_lc_at("/c/x").label().as_deref(), Some("aws-lc 5.12.0"));
    }
}
