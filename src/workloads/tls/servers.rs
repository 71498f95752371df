//! The TLS servers `cryptobench tls` runs (`--server`): one interface over nginx
//! (server.rs) and HAProxy (haproxy.rs), for what differs between them: the
//! configuration, starting and waiting until ready, the processes whose CPU is the
//! server's, the request log, and the files each can serve.

use super::haproxy::{self, Haproxy};
use super::server::{self, Config, Content, Running};
use super::tls_lib::TlsLib;
use crate::sys::guard::Guard;
use anyhow::anyhow;
use std::path::{Path, PathBuf};

pub const NAMES: [&str; 2] = ["nginx", "haproxy"];
/// `--threads` at most.
pub const MAX_THREADS: u64 = 1024;

/// nginx as found: its program and what `nginx -V` says.
pub struct Nginx {
    pub path: PathBuf,
    /// nginx >= 1.19.5 takes `-e` (the error log before the configuration is read).
    pub has_e_flag: bool,
    /// "nginx/1.22.1".
    pub version: String,
    /// "built with OpenSSL ...".
    pub ssl: String,
    /// The library it runs on (`--tls-lib`).
    pub lib: TlsLib,
}

pub enum Server {
    Nginx(Nginx),
    Haproxy(Haproxy),
}

/// `--server nginx,haproxy`: the names, each once, in the order given.
pub fn parse(list: &str) -> anyhow::Result<Vec<&'static str>> {
    let mut out = Vec::new();
    for item in list.split(',').map(str::trim) {
        let name = NAMES
            .iter()
            .find(|n| n.eq_ignore_ascii_case(item))
            .ok_or_else(|| {
                anyhow!(
                    "invalid --server '{item}': valid servers are {}",
                    NAMES.join(", ")
                )
            })?;
        if !out.contains(name) {
            out.push(*name);
        }
    }
    Ok(out)
}

/// `--threads 1,2`: nginx workers or HAProxy threads, 1 to 1024.
pub fn parse_threads(list: &str) -> anyhow::Result<Vec<usize>> {
    let n = crate::units::counts(list, "--threads", 1..=MAX_THREADS, "1,2")?;
    Ok(n.into_iter().map(|n| n as usize).collect())
}

impl Server {
    pub fn name(&self) -> &'static str {
        match self {
            Server::Nginx(_) => "nginx",
            Server::Haproxy(_) => "haproxy",
        }
    }

    pub fn lib(&self) -> &TlsLib {
        match self {
            Server::Nginx(n) => &n.lib,
            Server::Haproxy(h) => &h.lib,
        }
    }

    /// The version as the server reports it: "1.22.1", "2.6.12-1+deb12u4".
    pub fn version(&self) -> String {
        match self {
            Server::Nginx(n) => n.version.trim_start_matches("nginx/").to_string(),
            Server::Haproxy(h) => h.version.clone(),
        }
    }

    /// What records carry as impl_version.
    pub fn impl_version(&self) -> String {
        match self {
            Server::Nginx(n) => format!("{} ({})", n.version, n.ssl),
            Server::Haproxy(h) => format!("haproxy/{} ({})", h.version, h.ssl),
        }
    }

    /// The processes that do the work for `threads`: nginx's workers, HAProxy's one.
    pub fn processes(&self, threads: usize) -> usize {
        match self {
            Server::Nginx(_) => threads,
            Server::Haproxy(_) => 1,
        }
    }

    /// Why this server cannot serve `content`, if it cannot.
    pub fn refusal(&self, content: Content) -> Option<String> {
        match self {
            Server::Nginx(_) => None,
            Server::Haproxy(_) => haproxy::refusal(content),
        }
    }

    /// Writes the configuration into `c.dir`.
    pub fn write_config(&self, c: &Config, contents: &[Content]) -> anyhow::Result<()> {
        let (file, text) = match self {
            Server::Nginx(_) => ("nginx.conf", server::config(c)),
            Server::Haproxy(h) => {
                haproxy::write_pem(c.dir)?;
                let offered = |s: &super::suites::Suite| h.lib.suite_refusal(s).is_none();
                ("haproxy.cfg", haproxy::config(c, contents, &offered))
            }
        };
        Ok(std::fs::write(c.dir.join(file), text)?)
    }

    /// Starts the server on the configuration in `dir`, on its library, and waits until
    /// it is ready.
    pub fn start(
        &self,
        guard: &Guard,
        dir: &Path,
        (host, ports): (&str, &[u16]),
        (threads, cpus): (usize, Option<&[usize]>),
    ) -> anyhow::Result<Running> {
        let env = self.lib().env();
        match self {
            Server::Nginx(n) => {
                let program = server::Program {
                    path: &n.path,
                    has_e_flag: n.has_e_flag,
                    env: &env,
                };
                server::start(guard, &program, dir, host, ports, threads, cpus)
            }
            Server::Haproxy(h) => haproxy::start(guard, h, dir, (host, ports), cpus, &env),
        }
    }

    /// The file the server logs suite `suite`'s requests to.
    pub fn log_file(&self, dir: &Path, suite: usize) -> PathBuf {
        match self {
            Server::Nginx(_) => server::log_path(dir, suite),
            Server::Haproxy(_) => haproxy::log_file(dir),
        }
    }

    /// Suite `suite`'s requests, one line each in nginx's LOG_FORMAT.
    pub fn log_text(&self, dir: &Path, suite: usize) -> String {
        match self {
            Server::Nginx(_) => {
                std::fs::read_to_string(server::log_path(dir, suite)).unwrap_or_default()
            }
            Server::Haproxy(_) => haproxy::log_text(dir, suite),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_and_threads_are_checked() {
        assert_eq!(
            parse("haproxy,nginx,haproxy").unwrap(),
            ["haproxy", "nginx"]
        );
        let e = parse("apache").unwrap_err().to_string();
        assert!(e.contains("nginx, haproxy"), "{e}");
        assert_eq!(parse_threads("2,1").unwrap(), [1, 2]);
        assert!(parse_threads("0").is_err());
        assert!(parse_threads("1025").is_err());
        assert!(parse_threads("1024").is_ok());
    }
}
