//! The transport to a DUT: the system's OpenSSH client, one ControlMaster connection per
//! run that every command rides on. BatchMode (nothing may prompt), the user's keys,
//! agent, known_hosts and ssh_config; strict host key checking is never turned off here.

use super::url::DutUrl;
use crate::failure::Failure;
use crate::sys::guard::Guard;
use crate::sys::spawn::{spawn, Options};
use anyhow::anyhow;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long the first connection may take (ConnectTimeout is 10 s of it).
const CONNECT_LIMIT: Duration = Duration::from_secs(30);

/// One open connection to a DUT. Dropping it closes the master, which ends every session
/// on it: the remote cryptobench sees EOF on its stdin and stops.
pub struct Session {
    pub url: DutUrl,
    control: PathBuf,
    options: Vec<String>,
    /// What the master said on stderr: OpenSSH's reason when the connection drops.
    master_err: Arc<Mutex<String>>,
    master: Child,
    // Last: dropped after the fields above, it stops the master and removes the socket.
    guard: Guard,
}

/// `--ssh-option KEY=VALUE`: checked, then given to ssh as `-o KEY=VALUE`.
pub fn check_option(o: &str) -> anyhow::Result<()> {
    match o.split_once('=') {
        Some((k, _)) if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric()) => Ok(()),
        _ => Err(anyhow!(
            "--ssh-option {o}: give KEY=VALUE as in ssh_config, e.g. --ssh-option IdentityFile=~/.ssh/board"
        )),
    }
}

impl Session {
    pub fn open(url: &DutUrl, options: &[String]) -> Result<Session, Failure> {
        let guard = Guard::new();
        let dir = guard.temp_dir("ssh").map_err(Failure::runtime)?;
        let control = dir.join("c");
        let mut cmd = Command::new("ssh");
        // The user's options come first: for each keyword ssh keeps the first value.
        for o in options {
            cmd.arg("-o").arg(o);
        }
        cmd.args(["-o", "BatchMode=yes", "-o", "ConnectTimeout=10"])
            // A dead link is noticed in 15 s, and the sessions on it end.
            .args(["-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3"])
            .args(["-o", "ControlMaster=yes", "-o", "ControlPersist=no"])
            .arg("-S")
            .arg(&control)
            .arg("-N");
        if let Some(p) = url.port {
            cmd.arg("-p").arg(p.to_string());
        }
        cmd.arg("--")
            .arg(url.destination())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let opts = Options {
            own_group: true,
            cpus: None,
        };
        let mut master = spawn(&guard, &mut cmd, "ssh", opts).map_err(|e| {
            Failure::Input(format!(
                "{e}: --dut needs the OpenSSH client (install openssh-client)"
            ))
        })?;
        let master_err = Arc::new(Mutex::new(String::new()));
        if let Some(mut err) = master.stderr.take() {
            let sink = master_err.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = err.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let mut s = sink.lock().unwrap_or_else(|e| e.into_inner());
                    s.push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            });
        }
        let session = Session {
            url: url.clone(),
            control,
            options: options.to_vec(),
            master_err,
            master,
            guard,
        };
        session.wait_ready()?;
        // Closed the way OpenSSH means it to be (`-O exit`), after whatever `on_close`
        // adds later (undone first); quiet when the master is gone already. The guard's
        // SIGTERM to the master stays as the fallback.
        let mut exit = session.base();
        exit.args(["-O", "exit", "--"])
            .arg(session.url.destination());
        let mut argv = vec![
            "sh".to_string(),
            "-c".into(),
            "\"$@\" >/dev/null 2>&1; true".into(),
            "sh".into(),
            exit.get_program().to_string_lossy().into_owned(),
        ];
        argv.extend(exit.get_args().map(|a| a.to_string_lossy().into_owned()));
        session.guard.track(crate::sys::guard::Resource::Undo {
            what: "the SSH connection".into(),
            argv,
        });
        Ok(session)
    }

    /// Waits until the master answers `-O check`, or says why it could not connect.
    fn wait_ready(&self) -> Result<(), Failure> {
        let start = Instant::now();
        loop {
            if !self.master_alive() {
                // Let the stderr reader take the last words.
                std::thread::sleep(Duration::from_millis(50));
                return Err(self.refused());
            }
            let ok = self
                .base()
                .args(["-O", "check", "--"])
                .arg(self.url.destination())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                return Ok(());
            }
            if crate::sys::signal::stopped() {
                return Err(Failure::Interrupted(format!(
                    "{}: interrupted while connecting",
                    self.url
                )));
            }
            if start.elapsed() > CONNECT_LIMIT {
                return Err(Failure::Runtime(format!(
                    "{}: no SSH connection after {} s: check that the host is reachable",
                    self.url,
                    CONNECT_LIMIT.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Why the master is gone, in OpenSSH's words, with what to do about it. A host key
    /// or login refused is the user's to fix (exit 2); a host not answering is not.
    fn refused(&self) -> Failure {
        let said = self.ssh_said();
        let url = &self.url;
        if said.contains("Host key verification failed")
            || said.contains("HOST IDENTIFICATION HAS CHANGED")
        {
            Failure::Input(format!(
                "{url}: host key refused: {said}: check the key's fingerprint and add it to known_hosts (e.g. ssh once by hand), or name another file with --ssh-option UserKnownHostsFile=PATH"
            ))
        } else if said.contains("Permission denied") {
            Failure::Input(format!(
                "{url}: login refused: {said}: give a key the DUT accepts (ssh-agent, ssh_config, or --ssh-option IdentityFile=PATH)"
            ))
        } else {
            Failure::Runtime(format!("{url}: cannot connect: {said}"))
        }
    }

    /// OpenSSH's own messages so far, on one line.
    pub fn ssh_said(&self) -> String {
        let s = self.master_err.lock().unwrap_or_else(|e| e.into_inner());
        let lines: Vec<&str> = s
            .lines()
            .map(str::trim)
            .filter(|l| {
                !l.is_empty()
                    && !l.starts_with("@@@")
                    && !l.starts_with("Warning: Permanently added")
            })
            .collect();
        if lines.is_empty() {
            "ssh exited without a reason".into()
        } else {
            lines.join(" ")
        }
    }

    pub fn master_alive(&self) -> bool {
        crate::sys::procfs::stat(self.master.id() as i32)
            .is_some_and(|s| !matches!(s.state, 'Z' | 'X'))
    }

    /// `ssh` riding on the master, before the destination.
    fn base(&self) -> Command {
        let mut cmd = Command::new("ssh");
        for o in &self.options {
            cmd.arg("-o").arg(o);
        }
        cmd.args(["-o", "BatchMode=yes", "-o", "ControlMaster=no"])
            .arg("-S")
            .arg(&self.control);
        if let Some(p) = self.url.port {
            cmd.arg("-p").arg(p.to_string());
        }
        cmd
    }

    /// `argv` run on the DUT (each word quoted for its shell), through the master.
    pub fn command(&self, argv: &[String]) -> Command {
        let words: Vec<String> = argv.iter().map(|a| quote(a)).collect();
        self.shell(&words.join(" "))
    }

    /// A shell command line run on the DUT, through the master.
    pub fn shell(&self, script: &str) -> Command {
        let mut cmd = self.base();
        cmd.arg("--").arg(self.url.destination()).arg(script);
        cmd
    }

    /// Runs a short shell command on the DUT and returns its output; `stdin` is fed to it.
    pub fn run(&self, script: &str, stdin: Option<&[u8]>) -> Result<Output, Failure> {
        let mut cmd = self.shell(script);
        cmd.stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = spawn(
            &self.guard,
            &mut cmd,
            "ssh",
            Options {
                own_group: true,
                cpus: None,
            },
        )
        .map_err(Failure::runtime)?;
        let pid = child.id() as i32;
        if let (Some(data), Some(mut input)) = (stdin, child.stdin.take()) {
            use std::io::Write;
            // An error here shows in the command's status and output.
            let _ = input.write_all(data);
        }
        let out = child.wait_with_output();
        self.guard.stop_process(pid);
        out.map_err(|e| Failure::Runtime(format!("{}: ssh: {e}", self.url)))
    }

    /// Spawns a long-running command on the DUT, owned by this session's guard.
    pub fn spawn(&self, cmd: &mut Command, name: &str) -> Result<Child, Failure> {
        spawn(
            &self.guard,
            cmd,
            name,
            Options {
                own_group: true,
                cpus: None,
            },
        )
        .map_err(Failure::runtime)
    }

    /// Runs `script` on the DUT when the session ends (before the master closes).
    pub fn on_close(&self, what: &str, script: &str) {
        let cmd = self.shell(script);
        let mut argv = vec![cmd.get_program().to_string_lossy().into_owned()];
        argv.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
        self.guard.track(crate::sys::guard::Resource::Undo {
            what: what.into(),
            argv,
        });
    }
}

/// One word for a POSIX shell, quoted only when it needs to be.
pub fn quote(word: &str) -> String {
    shlex::try_quote(word)
        .map(|q| q.into_owned())
        .unwrap_or_else(|_| format!("'{}'", word.replace('\0', "").replace('\'', r"'\''")))
}
