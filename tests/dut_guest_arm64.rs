//! An ARM device under test: Debian's arm64 kernel under qemu-system-aarch64 (guest/run
//! with GUEST_SSH_PORT: dropbear from Debian's arm64 packages in its initramfs, reached
//! through a forwarded loopback port, its host key made at boot). `--dut` asks it what it
//! is, uploads the aarch64 build from dist/ and runs probe and speed there. Timings under
//! TCG mean nothing: this proves deploy by architecture, end to end.

mod common;

use common::dut_lab::{lines, records};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const TRIPLE: &str = "aarch64-unknown-linux-gnu";

/// The guest, powered off (or killed) when the test ends either way.
struct Guest {
    run: Child,
    dir: PathBuf,
    port: u16,
}

impl Guest {
    fn boot(dir: &Path, port: u16) -> Guest {
        let run = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("guest/run"))
            // The DUT has no cryptobench of its own, so the controller must upload one.
            .args([
                "sh",
                "-c",
                "rm -f /usr/local/bin/cryptobench; while [ ! -e /tmp/dut-done ]; do sleep 1; done",
            ])
            .env("GUEST_ARCH", "arm64")
            .env("GUEST_SSH_PORT", port.to_string())
            .env("GUEST_SSH_AUTHORIZED_KEYS", dir.join("id.pub"))
            .env("GUEST_SSH_KNOWN_HOSTS", dir.join("known_hosts"))
            .env("GUEST_LOG", dir.join("console.log"))
            .env("CRYPTOBENCH_BIN", dir.join("dist").join(release_name()))
            .env("GUEST_TIMEOUT", "900")
            .env_remove("GUEST_VERBOSE")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("guest/run starts");
        Guest {
            run,
            dir: dir.to_path_buf(),
            port,
        }
    }

    fn url(&self) -> String {
        format!("ssh://root@127.0.0.1:{}", self.port)
    }

    /// guest/run writes known_hosts once dropbear listens.
    fn wait_ready(&mut self) {
        let start = Instant::now();
        while !self.dir.join("known_hosts").is_file() {
            if let Some(s) = self.run.try_wait().unwrap() {
                let (_, err) = common::dut_lab::wait_exit(&mut self.run, 1);
                panic!("guest/run ended ({s}) before its SSH server listened: {err}");
            }
            assert!(
                start.elapsed() < Duration::from_secs(400),
                "the guest's SSH server did not listen in 400 s"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The system's ssh client with the test's key and known_hosts: a shell command on
    /// the guest.
    fn ssh(&self, known_hosts: &Path, cmd: &str) -> Output {
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

    /// cryptobench on the controller, from the test's directory (so dist/ is there).
    fn controller(&self, known_hosts: &Path, args: &[&str]) -> Output {
        common::command()
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

impl Drop for Guest {
    fn drop(&mut self) {
        if self.run.try_wait().ok().flatten().is_none() {
            // SAFETY: signalling the guest/run this test started; it stops qemu.
            unsafe { libc::kill(self.run.id() as i32, libc::SIGTERM) };
            let _ = self.run.wait();
        }
    }
}

fn release_name() -> String {
    format!("cryptobench-{}-{TRIPLE}", env!("CARGO_PKG_VERSION"))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

#[test]
fn an_arm64_guest_is_a_dut_that_gets_the_aarch64_build() {
    if !common::guest_enabled() {
        return;
    }
    let Some(arm) = common::cross_binary(TRIPLE) else {
        return;
    };
    let dir = common::tempdir(Path::new(env!("CARGO_TARGET_TMPDIR")), "dut-guest-arm64");
    // dist/ as scripts/release leaves it: the aarch64 build, stripped.
    std::fs::create_dir_all(dir.join("dist")).unwrap();
    let shipped = dir.join("dist").join(release_name());
    let strip = Command::new("aarch64-linux-gnu-strip")
        .arg("-o")
        .arg(&shipped)
        .arg(&arm)
        .status()
        .expect("aarch64-linux-gnu-strip (scripts/deps/arm.sh) runs");
    assert!(strip.success());
    let keygen = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(dir.join("id"))
        .status()
        .expect("ssh-keygen runs");
    assert!(keygen.success());

    let mut guest = Guest::boot(&dir, free_port());
    guest.wait_ready();
    let url = guest.url();
    let known = dir.join("known_hosts");

    // A host key other than the guest's is refused with OpenSSH's reason, before anything
    // is uploaded: strict checking stays on.
    let wrong = dir.join("known_hosts.wrong");
    let mut ours = std::fs::read_to_string(dir.join("id.pub")).unwrap();
    ours = ours
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    std::fs::write(&wrong, format!("[127.0.0.1]:{} {ours}\n", guest.port)).unwrap();
    let o = guest.controller(&wrong, &["probe", "--dut", &url]);
    let err = common::stderr(&o);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("REMOTE HOST IDENTIFICATION HAS CHANGED")
            || err.contains("Host key verification failed"),
        "{err}"
    );
    assert!(!err.contains("uploaded"), "{err}");

    // probe: the DUT says aarch64 and glibc; the controller uploads dist/'s aarch64 build
    // and its facts come back as the guest's.
    let o = guest.controller(&known, &["probe", "--dut", &url, "--format", "json"]);
    let err = common::stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "is aarch64 (gnu libc): uploaded dist/{}",
            release_name()
        )),
        "{err}"
    );
    let facts: Value = serde_json::from_slice(&o.stdout).expect("probe JSON");
    assert_eq!(facts["cpu"]["arch"], "aarch64", "{facts}");
    assert_eq!(facts["kernel"]["af_alg"]["skcipher"]["usable"], true);

    // speed: every point passed the correctness gate on the DUT and came back, marked
    // with the DUT, into the controller's file.
    let out = dir.join("out.jsonl");
    let o = guest.controller(
        &known,
        &[
            "speed",
            "--dut",
            &url,
            "--impl",
            "openssl,ring,af_alg",
            "--alg",
            "aes-128-gcm,sha256",
            "--direction",
            "enc",
            "--sizes",
            "16,1k",
            "--time",
            "0.05",
            "--output",
            out.to_str().unwrap(),
        ],
    );
    let err = common::stderr(&o);
    assert!(o.status.success(), "{err}");
    let all = lines(&out);
    let env = all
        .iter()
        .find(|v| v["kind"] == "environment")
        .expect("environment line");
    assert_eq!(env["dut"], url.as_str());
    assert_eq!(env["cpu"]["arch"], "aarch64");
    assert!(
        env["kernel"].as_str().unwrap().contains("arm64"),
        "{}",
        env["kernel"]
    );
    let recs = records(&out);
    let mut seen: Vec<String> = recs
        .iter()
        .map(|r| {
            assert_eq!(r["dut"], url.as_str());
            assert!(r["throughput_bps"].as_f64().unwrap() > 0.0, "{r}");
            format!("{} {} {}", r["impl"], r["alg"], r["size"])
        })
        .collect();
    seen.sort();
    assert_eq!(seen.len(), 12, "{seen:?}\n{err}");
    assert!(all
        .iter()
        .any(|v| v["kind"] == "end" && v["interrupted"] == false));

    // Nothing left on the DUT: no upload, no agent.
    let o = guest.ssh(
        &known,
        "ls -d /tmp/cbench-dut.* 2>/dev/null; ps -o comm | grep -cx cryptobench",
    );
    assert_eq!(common::stdout(&o).trim(), "0", "{}", common::stderr(&o));

    // The guest powers off when told to: guest/run exits 0.
    let o = guest.ssh(&known, "touch /tmp/dut-done");
    assert!(o.status.success(), "{}", common::stderr(&o));
    let (code, err) = common::dut_lab::wait_exit(&mut guest.run, 120);
    assert_eq!(code, Some(0), "{err}");
}
