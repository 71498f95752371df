//! An ARM device under test: Debian's arm64 kernel under qemu-system-aarch64 (guest/run
//! with GUEST_SSH_PORT: dropbear from Debian's arm64 packages in its initramfs, reached
//! through a forwarded loopback port, its host key made at boot). `--dut` asks it what it
//! is, uploads the aarch64 build from dist/ and runs probe and speed there. Timings under
//! TCG mean nothing: this proves deploy by architecture, end to end.

mod common;

use common::dut_lab::{lines, records};
use common::ssh_guest::SshGuest;
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Stdio};

const TRIPLE: &str = "aarch64-unknown-linux-gnu";

/// The guest, powered off (or killed) when the test ends either way.
struct Guest {
    run: Child,
    ssh: SshGuest,
}

impl Guest {
    fn boot(dir: &Path) -> Guest {
        let ssh = SshGuest::new(dir);
        let run = Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("guest/run"))
            // The DUT has no cryptobench of its own, so the controller must upload one.
            .args([
                "sh",
                "-c",
                "rm -f /usr/local/bin/cryptobench; while [ ! -e /tmp/dut-done ]; do sleep 1; done",
            ])
            .env("GUEST_ARCH", "arm64")
            .envs(ssh.env())
            .env("GUEST_LOG", dir.join("console.log"))
            .env("CRYPTOBENCH_BIN", dir.join("dist").join(release_name()))
            .env("GUEST_TIMEOUT", "900")
            .env_remove("GUEST_VERBOSE")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("guest/run starts");
        Guest { run, ssh }
    }

    fn wait_ready(&mut self) {
        let run = &mut self.run;
        self.ssh.wait_ready(|| {
            run.try_wait().unwrap().map(|s| {
                let (_, err) = common::dut_lab::wait_exit(run, 1);
                format!("{s}: {err}")
            })
        });
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

    let mut guest = Guest::boot(&dir);
    guest.wait_ready();
    let url = guest.ssh.url();
    let known = guest.ssh.known_hosts();

    // A host key other than the guest's is refused with OpenSSH's reason, before anything
    // is uploaded: strict checking stays on.
    let wrong = dir.join("known_hosts.wrong");
    let mut ours = std::fs::read_to_string(dir.join("id.pub")).unwrap();
    ours = ours
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    std::fs::write(&wrong, format!("[127.0.0.1]:{} {ours}\n", guest.ssh.port)).unwrap();
    let o = guest.ssh.controller(&wrong, &["probe", "--dut", &url]);
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
    let o = guest
        .ssh
        .controller(&known, &["probe", "--dut", &url, "--format", "json"]);
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
    let o = guest.ssh.controller(
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
    let o = guest.ssh.ssh(
        &known,
        "ls -d /tmp/cbench-dut.* 2>/dev/null; ps -o comm | grep -cx cryptobench",
    );
    assert_eq!(common::stdout(&o).trim(), "0", "{}", common::stderr(&o));

    // The guest powers off when told to: guest/run exits 0.
    let o = guest.ssh.ssh(&known, "touch /tmp/dut-done");
    assert!(o.status.success(), "{}", common::stderr(&o));
    let (code, err) = common::dut_lab::wait_exit(&mut guest.run, 120);
    assert_eq!(code, Some(0), "{err}");
}
