//! The `--dut` tests' lab: DUT network namespaces each running Debian's sshd on its own
//! veth address, a controller namespace, one key pair and known_hosts; the DUT's
//! processes on CPU 0, the controller's on the last CPU (tests/dut_cli.rs and
//! tests/dut_tls_vpn.rs).

use super::{skip, BIN};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

static LABS: AtomicU32 = AtomicU32::new(0);

/// One DUT: a network namespace running sshd on its own veth address.
pub struct Dut {
    pub ns: String,
    pub addr: String,
    pub port: u16,
    /// Its own temp dir (TMPDIR of its sessions): uploads and the agent's temp dirs.
    pub tmp: PathBuf,
    pub pid_file: PathBuf,
    /// Its hostname (a UTS namespace of its own).
    pub host: String,
    pub sshd: Child,
}

/// DUT namespaces and one controller namespace, each DUT joined to it by a veth pair;
/// one key pair and one known_hosts for all.
pub struct Lab {
    pub duts: Vec<Dut>,
    pub ctl_ns: String,
    pub dir: PathBuf,
    pub ctl_cpu: usize,
}

pub fn sh(cmd: &str) -> Output {
    Command::new("sh").args(["-c", cmd]).output().unwrap()
}

pub fn ok(cmd: &str) {
    let o = sh(cmd);
    assert!(
        o.status.success(),
        "{cmd}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// True when a lab can be built here; otherwise says why.
pub fn lab_possible() -> bool {
    if !super::is_root() {
        skip("--dut tests need root (network namespaces, sshd)");
        return false;
    }
    if !Path::new("/usr/sbin/sshd").exists() || !sh("command -v ssh").status.success() {
        skip("openssh-server or openssh-client missing: run scripts/deps/dut.sh");
        return false;
    }
    true
}

impl Lab {
    /// One DUT; `path`: PATH of its sessions (a fake `uname` may go first).
    pub fn new(path: &str) -> Lab {
        Lab::fleet(1, path)
    }

    pub fn fleet(count: usize, path: &str) -> Lab {
        let n = LABS.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let tag = format!("{}{n}", pid % 100000);
        let ctl_ns = format!("cbctl{tag}");
        let dir = std::env::temp_dir().join(format!("cbench-dutlab-{pid}-{n}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        ok(&format!(
            "ip netns add {ctl_ns} && ip -n {ctl_ns} link set lo up"
        ));
        let ctl_cpu = std::thread::available_parallelism().map_or(1, |n| n.get()) - 1;
        let mut lab = Lab {
            duts: Vec::new(),
            ctl_ns: ctl_ns.clone(),
            dir: dir.clone(),
            ctl_cpu,
        };
        let d = dir.display();
        ok(&format!(
            "ssh-keygen -q -t ed25519 -N '' -f {d}/id && ssh-keygen -q -t ed25519 -N '' -f {d}/hostkey && \
             cp {d}/id.pub {d}/authorized_keys && mkdir -p /run/sshd && chmod 0755 /run/sshd"
        ));
        let key = std::fs::read_to_string(dir.join("hostkey.pub")).unwrap();
        let key: Vec<&str> = key.split_whitespace().take(2).collect();
        let mut known = String::new();
        // 10.201.NET.0/24 for this lab, a /30 per DUT.
        let net = (pid as usize * 7 + n as usize) % 250 + 1;
        for i in 0..count {
            let ns = format!("cbdut{tag}{i}");
            let addr = format!("10.201.{net}.{}", 4 * i + 1);
            let ctl_addr = format!("10.201.{net}.{}", 4 * i + 2);
            let (a, b) = (format!("cbv{tag}{i}a"), format!("cbv{tag}{i}b"));
            ok(&format!(
                "ip netns add {ns} && ip link add {a} type veth peer name {b} && \
                 ip link set {a} netns {ns} && ip link set {b} netns {ctl_ns} && \
                 ip -n {ns} addr add {addr}/30 dev {a} && ip -n {ctl_ns} addr add {ctl_addr}/30 dev {b} && \
                 ip -n {ns} link set {a} up && ip -n {ctl_ns} link set {b} up && ip -n {ns} link set lo up"
            ));
            let port = 20000 + (pid as u16 % 20000) + n as u16 * 8 + i as u16;
            let tmp = dir.join(format!("tmp{i}"));
            std::fs::create_dir_all(&tmp).unwrap();
            let pid_file = dir.join(format!("sshd{i}.pid"));
            let config = format!(
                "Port {port}\nListenAddress {addr}\nHostKey {d}/hostkey\nAuthorizedKeysFile {d}/authorized_keys\n\
                 PidFile {}\nPermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nLogLevel ERROR\n\
                 SetEnv PATH={path} TMPDIR={} XDG_DATA_HOME={}\n",
                pid_file.display(),
                tmp.display(),
                dir.join(format!("data{i}")).display()
            );
            let config_file = dir.join(format!("sshd{i}_config"));
            std::fs::write(&config_file, config).unwrap();
            known.push_str(&format!("[{addr}]:{port} {}\n", key.join(" ")));
            // A host of its own: its hostname and /etc/machine-id (a UTS and a mount
            // namespace), every process of it (sshd, its sessions, the agent) on CPU 0.
            let host = format!("dut{i}-{tag}");
            let machine_id = dir.join(format!("machine-id{i}"));
            std::fs::write(
                &machine_id,
                format!(
                    "{:032x}\n",
                    (pid as u128) << 16 | (n as u128) << 8 | i as u128
                ),
            )
            .unwrap();
            let sshd = Command::new("ip")
                .args(["netns", "exec", &ns, "unshare", "--uts", "--mount", "--propagation", "private", "sh", "-c"])
                .arg(format!(
                    "hostname {host} && mount --bind {} /etc/machine-id && exec taskset -c 0 /usr/sbin/sshd -D -e -f {}",
                    machine_id.display(),
                    config_file.display()
                ))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::inherit())
                .spawn()
                .unwrap();
            lab.duts.push(Dut {
                ns,
                addr,
                port,
                tmp,
                pid_file,
                host,
                sshd,
            });
        }
        std::fs::write(dir.join("known_hosts"), known).unwrap();
        // sshd writes its pid file once it listens.
        let start = Instant::now();
        while lab.duts.iter().any(|d| d.sshd_pid().is_none()) {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "sshd did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        lab
    }

    pub fn url(&self) -> String {
        self.duts[0].url()
    }

    /// cryptobench in the controller's namespace, pinned to the controller's CPU, with the
    /// lab's key and known_hosts, and a store of the test's own (as the DUTs': never the user's).
    pub fn controller(&self, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ctl_ns, "taskset", "-c"])
            .arg(self.ctl_cpu.to_string())
            .arg(BIN)
            .args(args)
            .arg("--ssh-option")
            .arg(format!(
                "UserKnownHostsFile={}",
                self.dir.join("known_hosts").display()
            ))
            .arg("--ssh-option")
            .arg(format!("IdentityFile={}", self.dir.join("id").display()))
            .args(["--ssh-option", "IdentitiesOnly=yes"])
            .env("TMPDIR", self.ctl_tmp())
            .env("XDG_DATA_HOME", super::data_home())
            .env_remove("CRYPTOBENCH_STORE");
        c
    }

    /// The controller's temp dir (its TMPDIR).
    pub fn ctl_tmp(&self) -> PathBuf {
        let t = self.dir.join("ctl-tmp");
        std::fs::create_dir_all(&t).unwrap();
        t
    }

    /// A results file and an SQLite store in the lab's dir, named `name`.
    pub fn sinks(&self, name: &str) -> Sinks {
        Sinks {
            out: self.dir.join(format!("{name}.jsonl")),
            store: format!("sqlite:{}", self.dir.join(format!("{name}.db")).display()),
        }
    }

    /// The controller started in the background, its stderr kept for `wait_exit`.
    pub fn start(&self, args: &[&str]) -> Child {
        self.controller(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Kills the first DUT's sshd, listener and sessions: the connection drops.
    pub fn kill_sshd(&self) {
        for p in Lab::pids(&self.duts[0].ns) {
            if comm(p) == "sshd" {
                // SAFETY: killing the test's own sshd processes.
                unsafe { libc::kill(p, libc::SIGKILL) };
            }
        }
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.controller(args).output().unwrap()
    }

    /// PIDs of the processes in a namespace.
    pub fn pids(ns: &str) -> Vec<i32> {
        let o = sh(&format!("ip netns pids {ns}"));
        String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect()
    }

    /// What is left in the namespaces besides each sshd's listener, and in the DUTs' temp
    /// dirs.
    pub fn leftovers(&self) -> Vec<String> {
        let mut left: Vec<String> = Lab::pids(&self.ctl_ns)
            .into_iter()
            .map(|p| format!("{}: pid {p} {}", self.ctl_ns, comm(p)))
            .collect();
        for d in &self.duts {
            let listener = d.sshd_pid();
            for p in Lab::pids(&d.ns) {
                if Some(p) != listener {
                    left.push(format!("{}: pid {p} {}", d.ns, comm(p)));
                }
            }
            left.extend(d.uploads().into_iter().map(|u| u.display().to_string()));
        }
        left
    }

    /// Waits up to `secs` for the namespaces to hold nothing but sshd's listeners.
    pub fn assert_clean(&self, secs: u64) {
        let start = Instant::now();
        loop {
            let left = self.leftovers();
            if left.is_empty() {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(secs),
                "left behind: {left:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Where a controller's run goes: a results file and a store.
pub struct Sinks {
    pub out: PathBuf,
    pub store: String,
}

impl Sinks {
    /// The controller's options for both, with JSON on stdout.
    pub fn args(&self) -> [&str; 6] {
        let out = self.out.to_str().unwrap();
        ["--output", out, "--store", &self.store, "--format", "json"]
    }
}

impl Dut {
    pub fn url(&self) -> String {
        format!("ssh://root@{}:{}", self.addr, self.port)
    }

    /// What runs on the DUT left in its temp dir (uploads, the agent's temp dirs).
    pub fn uploads(&self) -> Vec<PathBuf> {
        std::fs::read_dir(&self.tmp)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect()
    }

    pub fn sshd_pid(&self) -> Option<i32> {
        std::fs::read_to_string(&self.pid_file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let mut spaces: Vec<String> = self.duts.iter().map(|d| d.ns.clone()).collect();
        spaces.push(self.ctl_ns.clone());
        for ns in &spaces {
            for p in Lab::pids(ns) {
                // SAFETY: killing what runs in our own test namespaces.
                unsafe { libc::kill(p, libc::SIGKILL) };
            }
        }
        for d in self.duts.iter_mut() {
            let _ = d.sshd.kill();
            let _ = d.sshd.wait();
        }
        for ns in spaces {
            let _ = sh(&format!("ip netns del {ns}"));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

pub fn comm(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

pub fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

pub fn records(path: &Path) -> Vec<Value> {
    lines(path)
        .into_iter()
        .filter(|v| v["kind"] == "record")
        .collect()
}

pub const PATH_PLAIN: &str = "/usr/sbin:/usr/bin:/sbin:/bin";

pub fn wait_exit(child: &mut Child, secs: u64) -> (Option<i32>, String) {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            if let Some(mut e) = child.stderr.take() {
                let _ = e.read_to_string(&mut err);
            }
            return (s.code(), err);
        }
        assert!(start.elapsed() < Duration::from_secs(secs), "did not exit");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Polls `ready` every 50 ms until it gives something, while the controller `child` runs:
/// panics with its stderr if it ends first, or saying `what` never happened in `secs`.
pub fn poll_while_running<T>(
    child: &mut Child,
    secs: u64,
    what: &str,
    mut ready: impl FnMut() -> Option<T>,
) -> T {
    let start = Instant::now();
    loop {
        if let Some(t) = ready() {
            return t;
        }
        if child.try_wait().unwrap().is_some() {
            let (code, err) = wait_exit(child, 1);
            panic!("the controller ended first ({code:?}): {err}");
        }
        assert!(start.elapsed() < Duration::from_secs(secs), "{what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Ctrl-C to a controller this test started.
pub fn interrupt(child: &Child) {
    // SAFETY: signalling the process this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
}

/// A run stopped by SIGINT: exit 130, and its file ends with one end line, interrupted.
pub fn assert_interrupted(out: &Path, code: Option<i32>, err: &str) {
    assert_eq!(code, Some(130), "{err}");
    let end: Vec<Value> = lines(out)
        .into_iter()
        .filter(|v| v["kind"] == "end")
        .collect();
    assert_eq!(end.len(), 1, "{err}");
    assert_eq!(end[0]["interrupted"], true);
}

/// Bad input: exit 2 and one line of stderr, saying `want`.
pub fn refused(o: &Output, want: &str) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(want), "{want}: {err}");
}

/// The store lists the run `env` (its environment line) began.
pub fn assert_stored(store: &str, env: &Value) {
    let h = Command::new(BIN)
        .args(["history", "--store", store, "--format", "json"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&h.stdout);
    assert!(listed.contains(env["run_id"].as_str().unwrap()), "{listed}");
}
