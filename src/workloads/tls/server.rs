//! The server side: a throwaway certificate, generated files, one nginx configuration
//! with a server block per suite, and one nginx started afresh for every point.

use super::suites::{CertKind, Proto, Suite};
use crate::sys;
use crate::sys::guard::Guard;
use anyhow::anyhow;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a point serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Content {
    /// Incompressible bytes of this size.
    Random(u64),
    /// The HTML page, without and with gzip on the fly.
    Html,
    HtmlGzip,
}

/// Size of the generated HTML page.
pub const HTML_SIZE: u64 = 100 << 10;

impl Content {
    pub fn label(self) -> &'static str {
        match self {
            Content::Random(_) => "random",
            Content::Html => "html",
            Content::HtmlGzip => "html+gzip",
        }
    }
    pub fn size(self) -> u64 {
        match self {
            Content::Random(n) => n,
            _ => HTML_SIZE,
        }
    }
    pub fn path(self) -> String {
        match self {
            Content::Random(n) => format!("/{}.bin", crate::units::size_label(n)),
            _ => "/page.html".into(),
        }
    }
    pub fn gzip(self) -> bool {
        self == Content::HtmlGzip
    }
    /// For display: "4k", "html", "html+gzip".
    pub fn short(self) -> String {
        match self {
            Content::Random(n) => crate::units::size_label(n),
            c => c.label().into(),
        }
    }
}

/// Fills `buf` with xorshift64* output: incompressible, fast, reproducible.
fn fill_random(buf: &mut [u8], state: &mut u64) {
    for chunk in buf.chunks_mut(8) {
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        let v = state.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
}

fn write_random(path: &Path, size: u64, seed: u64) -> anyhow::Result<()> {
    let f = std::fs::File::create(path).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    let mut state = seed | 1;
    let mut buf = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        let n = left.min(buf.len() as u64) as usize;
        fill_random(&mut buf[..n], &mut state);
        w.write_all(&buf[..n])
            .map_err(|e| anyhow!("{}: {e}", path.display()))?;
        left -= n as u64;
    }
    w.flush().map_err(|e| anyhow!("{}: {e}", path.display()))
}

/// A static HTML page of HTML_SIZE bytes that compresses like a real one (about 4:1).
pub fn html_page() -> Vec<u8> {
    const WORDS: &[&str] = &[
        "cipher",
        "record",
        "nginx",
        "handshake",
        "server",
        "client",
        "latency",
        "suite",
        "throughput",
        "kernel",
        "buffer",
        "session",
        "ticket",
        "certificate",
        "request",
        "response",
        "gzip",
        "header",
        "worker",
        "connection",
        "loopback",
        "measure",
    ];
    let mut s = String::from(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>cryptobench</title></head>\n<body><table>\n",
    );
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut row = 0u64;
    while (s.len() as u64) < HTML_SIZE - 64 {
        let mut r = [0u8; 8];
        fill_random(&mut r, &mut state);
        let w = |i: usize| WORDS[r[i] as usize % WORDS.len()];
        let _ = writeln!(
            s,
            "<tr class=\"r{}\"><td>{row}</td><td>{} {} {}</td><td>{}</td></tr>",
            row % 2,
            w(0),
            w(1),
            w(2),
            u32::from_le_bytes([r[3], r[4], r[5], 0])
        );
        row += 1;
    }
    s.push_str("</table></body></html>\n");
    let mut b = s.into_bytes();
    b.resize(HTML_SIZE as usize, b'\n');
    b
}

/// The files of a run, under `www`.
pub fn write_files(www: &Path, contents: &[Content]) -> anyhow::Result<()> {
    std::fs::create_dir_all(www).map_err(|e| anyhow!("{}: {e}", www.display()))?;
    for (i, c) in contents.iter().enumerate() {
        let path = www.join(c.path().trim_start_matches('/'));
        if path.exists() {
            continue;
        }
        match c {
            Content::Random(n) => write_random(&path, *n, 0x5eed + i as u64)?,
            _ => std::fs::write(&path, html_page())
                .map_err(|e| anyhow!("{}: {e}", path.display()))?,
        }
    }
    Ok(())
}

/// A throwaway key (mode 0600) and self-signed certificate for localhost.
pub fn make_cert(guard: &Guard, dir: &Path, openssl: &Path, kind: CertKind) -> anyhow::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let key = dir.join("key.pem");
    let cert = dir.join("cert.pem");
    let keyopt: &[&str] = match kind {
        CertKind::Rsa => &["-newkey", "rsa:2048"],
        CertKind::Ecdsa => &["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"],
    };
    // Created empty with 0600 first, so that the key is never readable by others.
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(0o600)
        .open(&key)
        .map_err(|e| anyhow!("{}: {e}", key.display()))?;
    let key_s = key.to_string_lossy().to_string();
    let cert_s = cert.to_string_lossy().to_string();
    let openssl_s = openssl.to_string_lossy().to_string();
    let mut argv: Vec<&str> = vec![&openssl_s, "req", "-x509"];
    argv.extend_from_slice(keyopt);
    argv.extend_from_slice(&[
        "-nodes",
        "-sha256",
        "-days",
        "2",
        "-subj",
        "/CN=localhost",
        "-keyout",
        &key_s,
        "-out",
        &cert_s,
    ]);
    let (code, _, err) = sys::spawn::run_bounded(guard, dir, &argv, &[], Duration::from_secs(60))?;
    if code != Some(0) {
        return Err(anyhow!(
            "openssl req could not make a {} certificate: {}",
            kind.label(),
            err.lines().next().unwrap_or("no message")
        ));
    }
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| anyhow!("{}: {e}", key.display()))?;
    Ok(())
}

/// Everything the configuration depends on.
pub struct Config<'a> {
    pub dir: &'a Path,
    pub suites: &'a [Suite],
    pub ports: &'a [u16],
    pub workers: usize,
    /// One CPU per worker (nginx `worker_cpu_affinity`), when pinned.
    pub worker_cpus: Option<&'a [usize]>,
    pub worker_connections: u64,
    /// The address every server block listens on.
    pub host: &'a str,
    pub handshake: bool,
    pub gzip: bool,
    pub as_root: bool,
}

pub fn log_path(dir: &Path, suite: usize) -> PathBuf {
    dir.join("logs").join(format!("suite-{suite}.log"))
}

/// The log line: checked for every request of a point.
pub const LOG_FORMAT: &str =
    "$ssl_protocol $ssl_cipher $status $bytes_sent $body_bytes_sent $connection $gzip_ratio $ssl_curve";

/// nginx.conf with one server block per suite on its own port of `host`.
pub fn config(c: &Config) -> String {
    let d = c.dir.display();
    let mut s = String::new();
    let _ = writeln!(s, "# Generated by cryptobench tls; throwaway.");
    let _ = writeln!(s, "daemon off;\nmaster_process on;");
    let _ = writeln!(s, "worker_processes {};", c.workers);
    if let Some(cpus) = c.worker_cpus {
        if cpus.iter().all(|&x| x < 64) {
            let masks: Vec<String> = cpus
                .iter()
                .map(|&cpu| format!("1{}", "0".repeat(cpu)))
                .collect();
            let _ = writeln!(s, "worker_cpu_affinity {};", masks.join(" "));
        }
    }
    let _ = writeln!(s, "worker_rlimit_nofile {};", c.worker_connections * 2 + 64);
    let _ = writeln!(s, "pid {d}/nginx.pid;\nerror_log {d}/error.log warn;");
    if c.as_root {
        // Workers would switch to `nobody`, who cannot read our 0700 directory.
        let _ = writeln!(s, "user root;");
    }
    let _ = writeln!(
        s,
        "events {{\n    worker_connections {};\n}}",
        c.worker_connections
    );
    let _ = writeln!(s, "http {{");
    for t in ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"] {
        let _ = writeln!(s, "    {t}_temp_path {d}/tmp/{t};");
    }
    let _ = writeln!(
        s,
        "    types {{ application/octet-stream bin; text/html html; }}\n    default_type application/octet-stream;"
    );
    let _ = writeln!(s, "    log_format cbench '{LOG_FORMAT}';");
    // Plain HTTP may use sendfile (zero copy); TLS only through kernel TLS (+ktls
    // suites: SSL_sendfile), otherwise OpenSSL reads and encrypts the file.
    let _ = writeln!(s, "    sendfile on;\n    tcp_nopush on;");
    if c.handshake {
        let _ = writeln!(s, "    keepalive_timeout 0;");
    } else {
        let _ = writeln!(
            s,
            "    keepalive_timeout 75s;\n    keepalive_requests 1000000;"
        );
    }
    if c.gzip {
        let _ = writeln!(
            s,
            "    gzip on;\n    gzip_types text/html;\n    gzip_comp_level 1;\n    gzip_min_length 1000;"
        );
    }
    // Every new connection is a full handshake: no session cache, no tickets.
    let _ = writeln!(
        s,
        "    ssl_session_cache off;\n    ssl_session_tickets off;\n    ssl_certificate {d}/cert.pem;\n    ssl_certificate_key {d}/key.pem;"
    );
    for (i, (suite, port)) in c.suites.iter().zip(c.ports).enumerate() {
        let _ = writeln!(s, "    # {}", suite.name);
        let _ = writeln!(s, "    server {{");
        let tls = suite.cipher.is_some();
        let _ = writeln!(
            s,
            "        listen {}:{port}{};",
            sys::net::url_host(c.host),
            if tls { " ssl" } else { "" }
        );
        let _ = writeln!(s, "        root {d}/www;");
        let _ = writeln!(
            s,
            "        access_log {} cbench;",
            log_path(c.dir, i).display()
        );
        match (&suite.cipher, suite.proto) {
            (Some(cipher), Proto::Tls13) => {
                let _ = writeln!(
                    s,
                    "        ssl_protocols TLSv1.3;\n        ssl_conf_command Ciphersuites {cipher};"
                );
            }
            (Some(cipher), _) => {
                let sec = if suite.null { ":@SECLEVEL=0" } else { "" };
                let _ = writeln!(
                    s,
                    "        ssl_protocols TLSv1.2;\n        ssl_ciphers {cipher}{sec};\n        ssl_prefer_server_ciphers on;"
                );
            }
            _ => {}
        }
        if suite.ktls {
            let _ = writeln!(s, "        ssl_conf_command Options KTLS;");
        }
        if let Some(g) = suite.group.as_deref().and_then(super::groups::find) {
            let _ = writeln!(s, "        ssl_ecdh_curve {};", g.openssl);
        }
        let _ = writeln!(s, "    }}");
    }
    let _ = writeln!(s, "}}");
    s
}

/// An OpenSSL configuration that makes a client offer exactly this suite (for wrk,
/// which takes no cipher options; through OPENSSL_CONF).
pub fn client_openssl_conf(suite: &Suite) -> Option<String> {
    let cipher = suite.cipher.as_ref()?;
    let mut s = String::from(
        "# Generated by cryptobench tls: the client offers only the suite under test.\n\
         openssl_conf = cbench_conf\n[cbench_conf]\nssl_conf = cbench_ssl\n[cbench_ssl]\n\
         system_default = cbench_client\n[cbench_client]\n",
    );
    if let Some(g) = suite.group.as_deref().and_then(super::groups::find) {
        let _ = writeln!(s, "Groups = {}", g.openssl);
    }
    match suite.proto {
        Proto::Tls13 => {
            let _ = writeln!(
                s,
                "MinProtocol = TLSv1.3\nMaxProtocol = TLSv1.3\nCiphersuites = {cipher}"
            );
        }
        _ => {
            let sec = if suite.null { ":@SECLEVEL=0" } else { "" };
            let _ = writeln!(
                s,
                "MinProtocol = TLSv1.2\nMaxProtocol = TLSv1.2\nCipherString = {cipher}{sec}"
            );
        }
    }
    Some(s)
}

/// A running server: the process we started and its workers (nginx's forked workers;
/// HAProxy's one process, whose threads do the work).
pub struct Running {
    pub master: i32,
    pub workers: Vec<(i32, u64)>,
}

impl Running {
}

/// The nginx program and how to start it.
pub struct Program<'a> {
    pub path: &'a Path,
    /// nginx >= 1.19.5 takes `-e` (the error log before the configuration is read).
    pub has_e_flag: bool,
    /// Its environment beyond ours: an --openssl build's library path.
    pub env: &'a [(&'a str, &'a Path)],
}

/// Starts nginx on the configuration in `dir` and waits until every port of `host`
/// accepts and every worker runs. On failure, the reason from nginx's error log.
pub fn start(
    guard: &Guard,
    nginx: &Program,
    dir: &Path,
    host: &str,
    ports: &[u16],
    workers: usize,
    cpus: Option<&[usize]>,
) -> anyhow::Result<Running> {
    let logs = dir.join("logs");
    let _ = std::fs::remove_dir_all(&logs);
    std::fs::create_dir_all(&logs)?;
    let _ = std::fs::remove_file(dir.join("error.log"));
    let _ = std::fs::remove_file(dir.join("nginx.pid"));
    let mut cmd = Command::new(nginx.path);
    cmd.arg("-p").arg(dir).arg("-c").arg(dir.join("nginx.conf"));
    if nginx.has_e_flag {
        cmd.arg("-e").arg(dir.join("error.log"));
    }
    cmd.envs(nginx.env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let master = sys::spawn::start(guard, &mut cmd, "nginx", cpus)?;
    let fail = |why: &str| {
        let log = std::fs::read_to_string(dir.join("error.log")).unwrap_or_default();
        let last = log
            .lines()
            .rev()
            .find(|l| l.contains("[emerg]") || l.contains("[alert]") || l.contains("[crit]"))
            .unwrap_or("")
            .to_string();
        if last.is_empty() {
            why.to_string()
        } else {
            format!("{why}: {last}")
        }
    };
    wait_ready(guard, "nginx", master, workers, (host, ports), fail)
}

/// Waits until the server process `pid` has `children` children and every port of
/// `host` accepts; then its children are its workers (none: the process itself is the
/// worker). On failure, `fail` makes the reason from the server's own error output.
pub fn wait_ready(
    guard: &Guard,
    name: &str,
    pid: i32,
    children: usize,
    (host, ports): (&str, &[u16]),
    fail: impl Fn(&str) -> String,
) -> anyhow::Result<Running> {
    let start = Instant::now();
    loop {
        if sys::spawn::try_exit(guard, pid).is_some() {
            return Err(anyhow::Error::msg(fail(&format!("{name} exited at start"))));
        }
        let kids = sys::procfs::children(pid);
        let ready = kids.len() >= children
            && ports.iter().all(|&p| {
                std::net::ToSocketAddrs::to_socket_addrs(&(host, p))
                    .ok()
                    .and_then(|mut a| a.next())
                    .is_some_and(|a| {
                        std::net::TcpStream::connect_timeout(&a, Duration::from_millis(200)).is_ok()
                    })
            });
        if ready {
            let workers = match children {
                0 => sys::procfs::stat(pid)
                    .map(|s| vec![(pid, s.starttime)])
                    .unwrap_or_default(),
                _ => kids,
            };
            return Ok(Running {
                master: pid,
                workers,
            });
        }
        if start.elapsed() > Duration::from_secs(10) || crate::measure::stopped() {
            guard.stop_process(pid);
            return Err(anyhow::Error::msg(fail(&format!(
                "{name} did not become ready within 10 s"
            ))));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Stops the server (SIGTERM to the master, which stops its workers and waits for them),
/// then makes sure that no worker outlived it.
pub fn stop(guard: &Guard, r: &Running) {
    guard.stop_process(r.master);
    for &(pid, since) in &r.workers {
        if sys::procfs::alive_since(pid, since) {
            // A worker orphaned by a master that had to be killed: ours, by PID.
            // SAFETY: signalling a process our nginx forked, checked by start time.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// One access-log line.
#[derive(Clone, Debug, PartialEq)]
pub struct LogLine {
    pub negotiated: String,
    pub status: u16,
    pub bytes_sent: u64,
    pub body_bytes: u64,
    pub connection: u64,
    pub gzip: bool,
    /// `$ssl_curve`: the key-exchange group ("X25519", "prime256v1"); None for "-".
    pub group: Option<String>,
}

pub fn parse_log_line(l: &str) -> Option<LogLine> {
    let f: Vec<&str> = l.split_whitespace().collect();
    if f.len() < 7 {
        return None;
    }
    Some(LogLine {
        negotiated: format!("{} {}", f[0], f[1]),
        status: f[2].parse().ok()?,
        bytes_sent: f[3].parse().ok()?,
        body_bytes: f[4].parse().ok()?,
        connection: f[5].parse().ok()?,
        gzip: f[6] != "-",
        group: f.get(7).filter(|g| **g != "-").map(|g| g.to_string()),
    })
}

/// What nginx logged for one server block during one point.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogSummary {
    pub requests: u64,
    pub bytes_sent: u64,
    pub body_bytes: u64,
    pub connections: u64,
    /// Requests per `$ssl_protocol $ssl_cipher`, in order of first appearance.
    pub negotiated: Vec<(String, u64)>,
    /// Requests per `$ssl_curve` group, in order of first appearance (none for "-").
    pub groups: Vec<(String, u64)>,
    pub non_2xx: u64,
    pub gzipped: u64,
    pub unparsed: u64,
}

pub fn summarise_log(text: &str) -> LogSummary {
    let mut s = LogSummary::default();
    let mut conns = std::collections::HashSet::new();
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        let Some(x) = parse_log_line(l) else {
            s.unparsed += 1;
            continue;
        };
        s.requests += 1;
        s.bytes_sent += x.bytes_sent;
        s.body_bytes += x.body_bytes;
        conns.insert(x.connection);
        if !(200..300).contains(&x.status) {
            s.non_2xx += 1;
        }
        if x.gzip {
            s.gzipped += 1;
        }
        match s.negotiated.iter_mut().find(|(n, _)| *n == x.negotiated) {
            Some((_, k)) => *k += 1,
            None => s.negotiated.push((x.negotiated, 1)),
        }
        if let Some(g) = x.group {
            match s.groups.iter_mut().find(|(n, _)| *n == g) {
                Some((_, k)) => *k += 1,
                None => s.groups.push((g, 1)),
            }
        }
    }
    s.connections = conns.len() as u64;
    s
}

/// Waits (up to 2 s) until the files stop growing for 150 ms.
pub fn settle(files: &[PathBuf]) {
    let size = || -> u64 {
        files
            .iter()
            .map(|f| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0))
            .sum()
    };
    let start = Instant::now();
    let (mut last, mut since) = (size(), Instant::now());
    while start.elapsed() < Duration::from_secs(2) && since.elapsed() < Duration::from_millis(150) {
        std::thread::sleep(Duration::from_millis(25));
        let now = size();
        if now != last {
            last = now;
            since = Instant::now();
        }
    }
}

/// nginx's version as numbers (`nginx/1.22.1` or `1.22.1`), 0 where a part is missing.
pub(super) fn version_tuple(v: &str) -> (u32, u32, u32) {
    let n: Vec<u32> = v
        .trim_start_matches("nginx/")
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|x| x.parse().ok())
        .collect();
    (
        n.first().copied().unwrap_or(0),
        n.get(1).copied().unwrap_or(0),
        n.get(2).copied().unwrap_or(0),
    )
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::suites::{parse_ciphers, Catalogue};
    use super::*;

    #[test]
    fn nginx_versions_are_read() {
        assert_eq!(version_tuple("nginx/1.22.1"), (1, 22, 1));
        assert_eq!(version_tuple("1.19.10"), (1, 19, 10));
    }

    #[test]
    fn files_are_incompressible_and_the_page_is_not() {
        let mut b = vec![0u8; 1 << 16];
        let mut st = 7;
        fill_random(&mut b, &mut st);
        let gz = |d: &[u8]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(d).unwrap();
            e.finish().unwrap().len()
        };
        assert!(gz(&b) > b.len() * 99 / 100);
        let page = html_page();
        assert_eq!(page.len() as u64, HTML_SIZE);
        let r = page.len() as f64 / gz(&page) as f64;
        assert!(r > 2.5 && r < 12.0, "ratio {r}");
    }

    /// TLS_AES_128_GCM_SHA256, null and http, from a catalogue of two ciphers.
    pub(in super::super) fn three_suites() -> Vec<Suite> {
        let cat = Catalogue::new(
            parse_ciphers(
                "TLS_AES_128_GCM_SHA256 TLSv1.3 Kx=any Au=any Enc=AESGCM(128) Mac=AEAD\n\
                 ECDHE-RSA-NULL-SHA TLSv1 Kx=ECDH Au=RSA Enc=None Mac=SHA1\n",
            ),
            CertKind::Rsa,
        );
        cat.select(Some(&Catalogue::names("aes128gcm,null,http"))).unwrap().0
    }

    #[test]
    fn config_has_one_block_per_suite() {
        let suites = three_suites();
        let c = config(&Config {
            dir: Path::new("/tmp/x"),
            suites: &suites,
            ports: &[1001, 1002, 1003],
            workers: 1,
            worker_cpus: Some(&[2]),
            worker_connections: 1000,
            host: "127.0.0.1",
            handshake: false,
            gzip: false,
            as_root: false,
        });
        assert_eq!(c.matches("server {").count(), 3);
        assert!(c.contains("listen 127.0.0.1:1001 ssl;"));
        assert!(c.contains("ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256;"));
        assert!(c.contains("ssl_ciphers ECDHE-RSA-NULL-SHA:@SECLEVEL=0;"));
        assert!(c.contains("listen 127.0.0.1:1003;"));
        assert!(c.contains("worker_cpu_affinity 100;"));
        assert!(!c.contains("user root"));
        let client = client_openssl_conf(&suites[1]).unwrap();
        assert!(client.contains("CipherString = ECDHE-RSA-NULL-SHA:@SECLEVEL=0"));
        assert!(client_openssl_conf(&suites[2]).is_none());
    }

    /// `--groups`: the server block and the client restricted to the one group.
    #[test]
    fn a_group_restricts_both_ends() {
        let cat = Catalogue::new(
            parse_ciphers(
                "TLS_AES_128_GCM_SHA256 TLSv1.3 Kx=any Au=any Enc=AESGCM(128) Mac=AEAD\n",
            ),
            CertKind::Rsa,
        );
        let (suites, _) = cat.select(Some(&Catalogue::names("aes128gcm"))).unwrap();
        let suites = [suites[0].with_group("x25519mlkem768")];
        let c = config(&Config {
            dir: Path::new("/tmp/x"),
            suites: &suites,
            ports: &[1001],
            workers: 1,
            worker_cpus: None,
            worker_connections: 100,
            host: "127.0.0.1",
            handshake: true,
            gzip: false,
            as_root: false,
        });
        assert!(c.contains("ssl_ecdh_curve X25519MLKEM768;"), "{c}");
        let client = client_openssl_conf(&suites[0]).unwrap();
        assert!(client.contains("Groups = X25519MLKEM768"), "{client}");
        assert_eq!(suites[0].shown(), "TLS_AES_128_GCM_SHA256 x25519mlkem768");
    }

    #[test]
    fn logs_summarise() {
        let log = "TLSv1.3 TLS_AES_128_GCM_SHA256 200 4340 4096 1 - X25519\n\
                   TLSv1.3 TLS_AES_128_GCM_SHA256 200 4340 4096 1 - X25519\n\
                   TLSv1.2 ECDHE-RSA-NULL-SHA 404 300 150 2 - prime256v1\n\
                   - - 200 1000 800 3 4.10 -\n";
        let s = summarise_log(log);
        assert_eq!(s.requests, 4);
        assert_eq!(s.connections, 3);
        assert_eq!(s.bytes_sent, 4340 * 2 + 300 + 1000);
        assert_eq!(
            s.negotiated[0],
            ("TLSv1.3 TLS_AES_128_GCM_SHA256".into(), 2)
        );
        assert_eq!(s.negotiated[2].0, "- -");
        assert_eq!((s.non_2xx, s.gzipped), (1, 1));
        // $ssl_curve per request; plain HTTP logs "-", which is no group.
        assert_eq!(
            s.groups,
            [("X25519".to_string(), 2), ("prime256v1".to_string(), 1)]
        );
    }
}
