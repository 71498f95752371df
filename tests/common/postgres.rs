//! A real PostgreSQL server for the tests (Debian's postgresql package), started with
//! initdb/pg_ctl in a temporary directory as an unprivileged user, on a free loopback port
//! (of a network namespace, when given), and stopped and removed when dropped.

use std::path::PathBuf;
use std::process::{Command, Stdio};

pub const PASSWORD: &str = "pw-9f3c1e";

/// A server of our own; dropping it stops it and removes its directory.
pub struct Server {
    pub dir: PathBuf,
    bin: PathBuf,
    pub port: u16,
    /// The network namespace it runs in (`ip netns exec`), when not this one.
    netns: Option<String>,
}

fn pg_bin() -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|b| b.join("initdb").exists() && b.join("pg_ctl").exists())
        .collect();
    found.sort();
    found.pop()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Server {
    pub fn start(name: &str) -> Option<Server> {
        Server::start_in(name, None)
    }

    /// A server in network namespace `netns` (listening on its 127.0.0.1).
    pub fn start_in(name: &str, netns: Option<&str>) -> Option<Server> {
        let Some(bin) = pg_bin() else {
            super::skip("no PostgreSQL server binaries (run scripts/deps/store.sh)");
            return None;
        };
        let dir =
            std::env::temp_dir().join(format!("cryptobench-pg-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("pw"), PASSWORD).unwrap();
        let server = Server {
            dir,
            bin,
            port: free_port(),
            netns: netns.map(String::from),
        };
        if super::is_root() {
            // The server refuses to run as root: it runs as nobody.
            for p in [server.dir.clone(), server.dir.join("pw")] {
                std::os::unix::fs::chown(&p, Some(65534), Some(65534)).unwrap();
            }
        }
        let init = server
            .as_owner("initdb")
            .args([
                "-D",
                server.data().to_str().unwrap(),
                "-U",
                "bench",
                "--pwfile",
                server.dir.join("pw").to_str().unwrap(),
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "-E",
                "UTF8",
                "-N",
            ])
            .output()
            .unwrap();
        assert!(
            init.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&init.stderr)
        );
        server.pg_ctl_start();
        Some(server)
    }
    pub fn data(&self) -> PathBuf {
        self.dir.join("data")
    }
    pub fn as_owner(&self, tool: &str) -> Command {
        let mut c = if super::is_root() {
            let mut c = match &self.netns {
                Some(ns) => {
                    let mut c = Command::new("ip");
                    c.args(["netns", "exec", ns, "setpriv"]);
                    c
                }
                None => Command::new("setpriv"),
            };
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(self.bin.join(tool));
            c
        } else {
            Command::new(self.bin.join(tool))
        };
        c.current_dir(&self.dir).stdin(Stdio::null());
        c
    }
    pub fn pg_ctl_start(&self) {
        let opts = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=off -c max_connections=40",
            self.port,
            self.dir.display()
        );
        let o = self
            .as_owner("pg_ctl")
            .args([
                "-D",
                self.data().to_str().unwrap(),
                "-l",
                self.dir.join("log").to_str().unwrap(),
                "-w",
                "-o",
                &opts,
                "start",
            ])
            .stdout(Stdio::null())
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "pg_ctl start: {}",
            std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
        );
    }
    pub fn stop(&self, mode: &str) {
        let _ = self
            .as_owner("pg_ctl")
            .args([
                "-D",
                self.data().to_str().unwrap(),
                "-m",
                mode,
                "-w",
                "stop",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    pub fn url(&self) -> String {
        format!(
            "postgresql://bench:{PASSWORD}@127.0.0.1:{}/postgres",
            self.port
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop("immediate");
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
