//! HAProxy as the TLS server: one frontend per suite, each terminating TLS and answering
//! with the file itself (`http-request return ... file`), so no backend hop is measured.
//! HAProxy serves such a response from one buffer: `tune.bufsize` is set to fit the
//! largest file asked, up to `MAX_FILE`; a larger file is not offered (its points are
//! excluded with the reason before any load). One process, `nbthread` threads, each
//! pinned (`cpu-map`) to a server CPU; every request logged to its stdout as nginx logs
//! it, prefixed by the frontend, so that point.rs checks HAProxy's requests as nginx's.

use super::server::{self, Config, Content, Running};
use super::suites::{Proto, Suite};
use super::tls_lib::TlsLib;
use crate::sys;
use crate::sys::guard::Guard;
use anyhow::anyhow;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The largest file HAProxy is asked to serve from one buffer: tune.bufsize grows with
/// it, and every connection may hold two buffers (1 MiB: 100 connections, about 200 MB).
pub const MAX_FILE: u64 = 1 << 20;
/// HAProxy's header-rewrite reserve (tune.maxrewrite) and the room for the status line
/// and headers of the response.
const MAXREWRITE: u64 = 1024;
const HEADERS: u64 = 1024;

/// The HAProxy program, its version and the library it runs on.
pub struct Haproxy {
    pub path: PathBuf,
    /// "2.6.12-1+deb12u4", from `haproxy -v`.
    pub version: String,
    /// "built with OpenSSL 3.0.22 ..., running on OpenSSL 3.0.19 ...", from `haproxy -vv`.
    pub ssl: String,
    pub lib: TlsLib,
}

/// Debian's haproxy, on PATH or in /usr/sbin; None when missing.
pub fn find() -> Option<PathBuf> {
    sys::program::find_program("haproxy", None)
}

/// HAProxy `path` on `lib`: its version and SSL library as it reports them there.
pub fn probe(path: &Path, lib: TlsLib) -> Haproxy {
    let vv = sys::program::output_with(path, &["-vv"], &lib.env()).unwrap_or_default();
    let version = vv
        .lines()
        .find_map(|l| l.strip_prefix("HAProxy version "))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or("unknown")
        .to_string();
    // HAProxy 2.6 says "OpenSSL version", 3.0 "SSL library version".
    let ssl = ["Built with", "Running on"]
        .iter()
        .filter_map(|p| {
            vv.lines().find_map(|l| {
                let rest = l.strip_prefix(p)?.trim_start();
                let rest = rest.strip_prefix("OpenSSL version").or_else(|| rest.strip_prefix("SSL library version"))?;
                rest.trim_start().strip_prefix(": ")
            })
        })
        .collect::<Vec<_>>();
    let ssl = match ssl[..] {
        [built, running] => format!("built with {built}, running on {running}"),
        _ => "no OpenSSL".into(),
    };
    Haproxy {
        path: path.to_path_buf(),
        version,
        ssl,
        lib,
    }
}

/// Why HAProxy cannot serve `content`, if it cannot.
pub fn refusal(content: Content) -> Option<String> {
    match content {
        Content::Random(n) if n > MAX_FILE => Some(format!(
            "haproxy serves a file from one buffer (http-request return): {} is over the {} cap on tune.bufsize here",
            crate::units::size_label(n),
            crate::units::size_label(MAX_FILE)
        )),
        Content::Random(_) => None,
        _ => Some("haproxy: --gzip is nginx's only".into()),
    }
}

/// tune.bufsize for the largest file served (at least HAProxy's default 16384).
pub fn bufsize(largest: u64) -> u64 {
    (largest.min(MAX_FILE) + HEADERS + MAXREWRITE)
        .max(16384)
        .div_ceil(16)
        * 16
}

pub fn log_file(dir: &Path) -> PathBuf {
    dir.join("logs").join("haproxy.log")
}

/// The frontend's lines of the log, without the frontend: nginx's LOG_FORMAT fields.
pub fn log_text(dir: &Path, suite: usize) -> String {
    let text = std::fs::read_to_string(log_file(dir)).unwrap_or_default();
    let prefix = format!("s{suite} ");
    let mut out = String::new();
    // A hole left by truncating the log under HAProxy (see `start`) reads as NULs.
    let lines = text.lines().map(|l| l.trim_start_matches('\0'));
    for l in lines.filter_map(|l| l.strip_prefix(&prefix)) {
        // No response (%ST -1: the client closed first) is what nginx logs as 499.
        let f: Vec<&str> = l.split(' ').collect();
        match f.get(2) {
            Some(&"-1") => out.push_str(&[&f[..2], &["499"], &f[3..]].concat().join(" ")),
            _ => out.push_str(l),
        }
        out.push('\n');
    }
    out
}

/// haproxy.cfg: one frontend per suite its library `offered` on its own port, `threads`
/// threads pinned to `cpus` (cycled) when given, answering every file of `contents` it
/// can serve. (A suite the library lacks would fail the whole configuration: its port is
/// bound without TLS.)
pub fn config(c: &Config, contents: &[Content], offered: &dyn Fn(&Suite) -> bool) -> String {
    let d = c.dir.display();
    let served: Vec<u64> = contents
        .iter()
        .filter(|x| refusal(**x).is_none())
        .map(|x| x.size())
        .collect();
    let mut s = String::from("# Generated by cryptobench tls; throwaway.\nglobal\n");
    let _ = writeln!(s, "    nbthread {}", c.workers);
    if let Some(cpus) = c.worker_cpus {
        for (t, cpu) in cpus.iter().cycle().take(c.workers).enumerate() {
            let _ = writeln!(s, "    cpu-map 1/{} {cpu}", t + 1);
        }
    }
    let _ = writeln!(s, "    maxconn {}", c.worker_connections);
    let _ = writeln!(
        s,
        "    tune.bufsize {}\n    tune.maxrewrite {MAXREWRITE}",
        bufsize(served.iter().copied().max().unwrap_or(0))
    );
    // Every new connection is a full handshake: no session cache, no tickets (per bind).
    let _ = writeln!(s, "    tune.ssl.cachesize 0\ndefaults\n    mode http");
    let _ = writeln!(
        s,
        "    timeout client 30s\n    timeout connect 5s\n    timeout server 30s"
    );
    if c.handshake {
        let _ = writeln!(s, "    option httpclose");
    } else {
        let _ = writeln!(
            s,
            "    option http-keep-alive\n    timeout http-keep-alive 75s"
        );
    }
    // nginx's LOG_FORMAT, field for field: an empty fetch (plain HTTP) logs "-"; the
    // client's port stands for the connection; HAProxy 2.6 has no fetch for the group.
    let _ = writeln!(s, "    option dontlognull\n    log stdout format raw local0\n    log-format \"%f %[ssl_fc_protocol] %[ssl_fc_cipher] %ST %B %[var(txn.cl,0)] %cp - -\"");
    for (i, (suite, port)) in c.suites.iter().zip(c.ports).enumerate() {
        let _ = writeln!(s, "# {}\nfrontend s{i}", suite.name);
        if !offered(suite) {
            // Its port held (so that the server is ready when every port accepts), its
            // suite never configured: no point of it is planned.
            let _ = writeln!(s, "    bind {}:{port}\n    http-request return status 503", sys::net::url_host(c.host));
            continue;
        }
        let mut bind = format!("{}:{port}", sys::net::url_host(c.host));
        match (&suite.cipher, suite.proto) {
            (Some(cipher), Proto::Tls13) => {
                let _ = write!(bind, " ssl crt {d}/haproxy.pem no-tls-tickets ssl-min-ver TLSv1.3 ssl-max-ver TLSv1.3 ciphersuites {cipher}");
            }
            (Some(cipher), _) => {
                let sec = if suite.null { ":@SECLEVEL=0" } else { "" };
                let _ = write!(bind, " ssl crt {d}/haproxy.pem no-tls-tickets ssl-min-ver TLSv1.2 ssl-max-ver TLSv1.2 ciphers {cipher}{sec}");
            }
            _ => {}
        }
        if let Some(g) = suite.group.as_deref().and_then(super::groups::find) {
            let _ = write!(bind, " curves {}", g.openssl);
        }
        let _ = writeln!(s, "    bind {bind}");
        let _ = writeln!(
            s,
            "    http-after-response set-var(txn.cl) res.hdr(content-length)"
        );
        for &n in &served {
            let path = Content::Random(n).path();
            let _ = writeln!(s, "    http-request return status 200 content-type application/octet-stream file {d}/www{path} if {{ path {path} }}");
        }
        let _ = writeln!(s, "    http-request return status 404");
    }
    s
}

/// The certificate and key in one file, as `crt` takes them (mode 0600, like the key).
pub fn write_pem(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let read = |f: &str| std::fs::read(dir.join(f)).map_err(|e| anyhow!("{f}: {e}"));
    let pem = [read("cert.pem")?, read("key.pem")?].concat();
    let path = dir.join("haproxy.pem");
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| anyhow!("{}: {e}", path.display()))?;
    std::io::Write::write_all(&mut f, &pem).map_err(|e| anyhow!("{}: {e}", path.display()))
}

/// Starts haproxy in the foreground (`-db`) on dir/haproxy.cfg, its log on its stdout,
/// and waits until every port accepts. On failure, HAProxy's own first alert line.
pub fn start(
    guard: &Guard,
    h: &Haproxy,
    dir: &Path,
    (host, ports): (&str, &[u16]),
    cpus: Option<&[usize]>,
    env: &[(&str, &Path)],
) -> anyhow::Result<Running> {
    let logs = dir.join("logs");
    let _ = std::fs::remove_dir_all(&logs);
    std::fs::create_dir_all(&logs)?;
    // Appending, so that truncating the log (after a sizing run) leaves no hole.
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log_file(dir))?;
    let err_path = dir.join("haproxy.err");
    let mut cmd = Command::new(&h.path);
    cmd.arg("-f")
        .arg(dir.join("haproxy.cfg"))
        .arg("-db")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(std::fs::File::create(&err_path)?);
    let pid = sys::spawn::start(guard, &mut cmd, "haproxy", cpus)?;
    let fail = |why: &str| {
        let err = std::fs::read_to_string(&err_path).unwrap_or_default();
        match err.lines().find(|l| l.contains("[ALERT]")) {
            Some(l) => format!("{why}: {}", l.trim()),
            None => why.to_string(),
        }
    };
    server::wait_ready(guard, "haproxy", pid, 0, (host, ports), fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_has_one_frontend_per_suite_and_fits_the_files() {
        let suites = server::tests::three_suites();
        let c = config(
            &Config {
                dir: Path::new("/tmp/x"),
                suites: &suites,
                ports: &[1001, 1002, 1003],
                workers: 3,
                worker_cpus: Some(&[2, 3]),
                worker_connections: 1000,
                host: "127.0.0.1",
                handshake: true,
                gzip: false,
                as_root: false,
            },
            &[Content::Random(4096), Content::Random(10 << 20)],
            &|_| true,
        );
        assert_eq!(c.matches("\nfrontend s").count(), 3, "{c}");
        assert!(
            c.contains("nbthread 3\n    cpu-map 1/1 2\n    cpu-map 1/2 3\n    cpu-map 1/3 2\n"),
            "{c}"
        );
        assert!(c.contains("bind 127.0.0.1:1001 ssl crt /tmp/x/haproxy.pem no-tls-tickets ssl-min-ver TLSv1.3 ssl-max-ver TLSv1.3 ciphersuites TLS_AES_128_GCM_SHA256\n"), "{c}");
        assert!(
            c.contains("ciphers ECDHE-RSA-NULL-SHA:@SECLEVEL=0\n"),
            "{c}"
        );
        assert!(c.contains("bind 127.0.0.1:1003\n"), "{c}");
        assert!(c.contains("option httpclose"), "{c}");
        // 10m does not fit a buffer: only 4k is served, from a default-sized buffer.
        assert!(
            c.contains("file /tmp/x/www/4k.bin if { path /4k.bin }"),
            "{c}"
        );
        assert!(!c.contains("10m.bin"), "{c}");
        assert!(c.contains("tune.bufsize 16384\n"), "{c}");
        assert_eq!(bufsize(MAX_FILE), MAX_FILE + 2048);
        assert!(refusal(Content::Random(MAX_FILE)).is_none());
        assert!(refusal(Content::Random(MAX_FILE + 1)).is_some_and(|r| r.contains("1m cap")));
    }

    #[test]
    fn the_log_is_split_by_frontend_into_nginx_fields() {
        let dir = std::env::temp_dir().join(format!("cbench-haproxy-log-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("logs")).unwrap();
        std::fs::write(
            log_file(&dir),
            "\0\0\0s0 TLSv1.3 TLS_AES_128_GCM_SHA256 200 4186 4096 40001 - -\n\
             s1 - - 200 4186 4096 40002 - -\ns1 - - -1 0 0 40003 - -\ns10 x\n",
        )
        .unwrap();
        let s = server::summarise_log(&log_text(&dir, 0));
        assert_eq!((s.requests, s.body_bytes, s.unparsed), (1, 4096, 0));
        assert_eq!(s.negotiated[0].0, "TLSv1.3 TLS_AES_128_GCM_SHA256");
        let s1 = server::summarise_log(&log_text(&dir, 1));
        assert_eq!(s1.negotiated[0].0, "- -");
        assert_eq!((s1.requests, s1.non_2xx, s1.unparsed), (2, 1, 0));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
