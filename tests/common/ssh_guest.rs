//! A qemu guest that is a DUT over SSH (guest/run with GUEST_SSH_PORT): the test's key
//! pair, a free loopback port, the known_hosts guest/run writes once dropbear listens, and
//! the two ways in: the system's ssh (a shell command on the guest) and `cryptobench
//! --dut` (tests/dut_guest_arm64.rs, tests/disk_cli.rs).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

pub struct SshGuest {
    pub dir: PathBuf,
    pub port: u16,
}

impl SshGuest {
    /// A key pair in `dir` and a free loopback port for the guest's SSH server.
    pub fn new(dir: &Path) -> SshGuest {
        let keygen = Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(dir.join("id"))
            .status()
            .expect("ssh-keygen runs");
        assert!(keygen.success());
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free loopback port")
            .port();
        SshGuest {
            dir: dir.to_path_buf(),
            port,
        }
    }

    /// guest/run's environment that makes the guest this DUT.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("GUEST_SSH_PORT", self.port.to_string()),
            (
                "GUEST_SSH_AUTHORIZED_KEYS",
                self.dir.join("id.pub").display().to_string(),
            ),
            (
                "GUEST_SSH_KNOWN_HOSTS",
                self.known_hosts().display().to_string(),
            ),
        ]
    }

    /// The guest's host key, as guest/run writes it.
    pub fn known_hosts(&self) -> PathBuf {
        self.dir.join("known_hosts")
    }

    pub fn url(&self) -> String {
        format!("ssh://root@127.0.0.1:{}", self.port)
    }

    /// Until guest/run writes known_hosts (dropbear listens); `ended` says why guest/run
    /// stopped before that, if it did.
    pub fn wait_ready(&self, mut ended: impl FnMut() -> Option<String>) {
        let start = Instant::now();
        while !self.known_hosts().is_file() {
            if let Some(why) = ended() {
                panic!("guest/run ended before its SSH server listened: {why}");
            }
            assert!(
                start.elapsed() < Duration::from_secs(400),
                "the guest's SSH server did not listen in 400 s"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The system's ssh client with the test's key and `known_hosts`: a shell command on
    /// the guest.
    pub fn ssh(&self, known_hosts: &Path, cmd: &str) -> Output {
        Command::new("ssh")
            .args(["-p", &self.port.to_string(), "-o", "BatchMode=yes"])
            .arg("-o")
            .arg(format!("UserKnownHostsFile={}", known_hosts.display()))
            .arg("-i")
            .arg(self.dir.join("id"))
            .args(["-o", "IdentitiesOnly=yes", "root@127.0.0.1", cmd])
            .stdin(Stdio::null())
            .output()
            .expect("ssh runs")
    }

    /// cryptobench on the controller, from the test's directory (so its dist/ is there).
    pub fn controller(&self, known_hosts: &Path, args: &[&str]) -> Output {
        super::command()
            .current_dir(&self.dir)
            .args(args)
            .arg("--ssh-option")
            .arg(format!("UserKnownHostsFile={}", known_hosts.display()))
            .arg("--ssh-option")
            .arg(format!("IdentityFile={}", self.dir.join("id").display()))
            .args(["--ssh-option", "IdentitiesOnly=yes"])
            .output()
            .expect("cryptobench runs")
    }
}
