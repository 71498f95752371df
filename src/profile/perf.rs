//! `perf record` around a measured window, and its samples read back with `perf script`.
//!
//! perf starts with its events disabled (`-D -1`) and is switched on and off through a
//! control FIFO that acknowledges each command, so the samples cover exactly the window
//! between `enable` and `disable`, not perf's own start-up or the workload's warm-up.

use crate::sys::guard::Guard;
use anyhow::anyhow;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The sampling event: a software timer, present where hardware counters are not
/// (virtual machines, as here).
pub const EVENT: &str = "cpu-clock";
/// Samples per second per CPU: odd, so it does not beat with periodic work.
const FREQUENCY: &str = "1999";

/// What to sample.
#[derive(Clone, Debug)]
pub enum Target {
    /// Processes (every thread of each), e.g. nginx workers or openvpn.
    Pids(Vec<i32>),
    /// Every CPU: for kernel paths, where the work happens outside the caller's threads.
    SystemWide,
}

/// One frame of a call chain, leaf first.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    /// For a shared object or executable: the address in its ELF file (perf maps it
    /// back); for the kernel: the kernel address.
    pub ip: u64,
    /// perf's symbol, None where it printed `[unknown]`.
    pub symbol: Option<String>,
    /// The object path, `[kernel.kallsyms]` for the kernel, None where unknown.
    pub dso: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub comm: String,
    pub tid: i32,
    /// Leaf first.
    pub frames: Vec<Frame>,
}

/// Why sampling cannot run here, as one line with the fix.
pub fn check(system_wide: bool, guard: &Guard) -> anyhow::Result<()> {
    let version = Command::new("perf")
        .arg("--version")
        .stdin(Stdio::null())
        .output();
    match version {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            let why = String::from_utf8_lossy(&o.stderr);
            let first = why.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            return Err(anyhow!(
                "perf does not run here ({}): install linux-perf for this kernel (scripts/deps/profile.sh)",
                first.trim()
            ));
        }
        Err(_) => {
            return Err(
                anyhow!("perf is not installed: install linux-perf (apt-get install linux-perf, or scripts/deps/profile.sh)"),
            )
        }
    }
    // A real trial: the permission rules (perf_event_paranoid, CAP_PERFMON, seccomp,
    // containers) are too many to predict.
    let dir = guard.temp_dir("perfcheck")?;
    let data = dir.join("check.data");
    let mut cmd = Command::new("perf");
    cmd.args(["record", "-q", "-e", EVENT, "-g", "-o"])
        .arg(&data)
        .args(if system_wide { &["-a"][..] } else { &[][..] })
        .args(["--", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let out = cmd.output().map_err(|e| anyhow!("cannot run perf: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into());
    let need = if system_wide { "-1" } else { "1" };
    Err(anyhow!(
        "perf may not sample here (kernel.perf_event_paranoid={paranoid}, no CAP_PERFMON): run as root, grant CAP_PERFMON, or `sysctl kernel.perf_event_paranoid={need}`"
    ))
}

/// A `perf record` waiting for its window.
pub struct Recording<'g> {
    guard: &'g Guard,
    child: Child,
    control: std::fs::File,
    ack: BufReader<std::fs::File>,
    pub data: PathBuf,
    enabled: bool,
}

impl<'g> Recording<'g> {
    /// Starts perf on `target` with its events off; `dir` holds the data and the FIFOs.
    pub fn start(guard: &'g Guard, target: &Target, dir: &Path) -> anyhow::Result<Recording<'g>> {
        let data = dir.join("perf.data");
        let ctl = dir.join("ctl.fifo");
        let ack = dir.join("ack.fifo");
        for f in [&ctl, &ack] {
            let _ = std::fs::remove_file(f);
            make_fifo(f).map_err(|e| anyhow!("cannot create a FIFO in {}: {e}", dir.display()))?;
        }
        let mut cmd = Command::new("perf");
        cmd.args(["record", "-q", "-e", EVENT, "-F", FREQUENCY, "-g"])
            // No build-id collection at exit: it can take seconds system-wide.
            .args(["-B", "-N", "-D", "-1"])
            .arg(format!(
                "--control=fifo:{},{}",
                ctl.display(),
                ack.display()
            ))
            .arg("-o")
            .arg(&data);
        match target {
            Target::Pids(p) => cmd.arg("-p").arg(join(p)),
            Target::SystemWide => cmd.arg("-a"),
        };
        // Its own process group: a terminal's Ctrl-C reaches us, and we stop perf.
        use std::os::unix::process::CommandExt;
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = guard.spawn(&mut cmd, "perf record")?;
        // Opening a FIFO blocks until the other side opens it: perf opens both once its
        // events are set up. Open in a thread so that a perf that dies early cannot hang us.
        let (tx, rx) = std::sync::mpsc::channel();
        let (c2, a2) = (ctl.clone(), ack.clone());
        std::thread::spawn(move || {
            let r = (|| {
                let c = std::fs::OpenOptions::new().write(true).open(&c2)?;
                let a = std::fs::File::open(&a2)?;
                Ok::<_, std::io::Error>((c, a))
            })();
            let _ = tx.send(r);
        });
        let start = Instant::now();
        let (control, ack) = loop {
            if let Ok(r) = rx.recv_timeout(Duration::from_millis(50)) {
                break r.map_err(|e| anyhow!("cannot talk to perf record: {e}"))?;
            }
            if let Ok(Some(status)) = child.try_wait() {
                // Unblock the opener thread before giving up.
                let _ = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(&ctl);
                let _ = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(&ack);
                return Err(anyhow!(
                    "perf record exited ({status}): {}",
                    stderr_of(&mut child)
                ));
            }
            if start.elapsed() > Duration::from_secs(30) {
                guard.stop_process(child.id() as i32);
                return Err(anyhow!("perf record did not start within 30 s"));
            }
        };
        Ok(Recording {
            guard,
            child,
            control,
            ack: BufReader::new(ack),
            data,
            enabled: false,
        })
    }

    fn command(&mut self, what: &str) -> anyhow::Result<()> {
        writeln!(self.control, "{what}").map_err(|e| anyhow!("perf control: {e}"))?;
        let mut line = String::new();
        self.ack
            .read_line(&mut line)
            .map_err(|e| anyhow!("perf control: {e}"))?;
        Ok(())
    }

    /// The measured window begins.
    pub fn enable(&mut self) -> anyhow::Result<()> {
        self.command("enable")?;
        self.enabled = true;
        Ok(())
    }

    /// The window ends; perf writes its data and exits. Returns the data file.
    pub fn finish(mut self) -> anyhow::Result<PathBuf> {
        if self.enabled {
            self.command("disable")?;
        }
        let pid = self.child.id() as i32;
        // SAFETY: signalling the perf we started; SIGINT makes it write and exit.
        unsafe { libc::kill(pid, libc::SIGINT) };
        let start = Instant::now();
        let status = loop {
            if let Ok(Some(s)) = self.child.try_wait() {
                break Some(s);
            }
            if start.elapsed() > Duration::from_secs(60) {
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        self.guard.stop_process(pid);
        match status {
            Some(_) if self.data.exists() => Ok(self.data.clone()),
            Some(s) => Err(anyhow!(
                "perf record wrote nothing ({s}): {}",
                stderr_of(&mut self.child)
            )),
            None => Err(anyhow!("perf record did not finish within 60 s")),
        }
    }
}

fn make_fifo(path: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: a NUL-terminated path.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn join(ids: &[i32]) -> String {
    ids.iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn stderr_of(child: &mut Child) -> String {
    let mut s = String::new();
    if let Some(e) = child.stderr.as_mut() {
        let _ = e.read_to_string(&mut s);
    }
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string()
}

/// Reads the samples back, call chains leaf first.
pub fn script(data: &Path) -> anyhow::Result<Vec<Sample>> {
    let out = Command::new("perf")
        .args(["script", "-F", "comm,tid,ip,sym,dso", "-i"])
        .arg(data)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| anyhow!("cannot run perf script: {e}"))?;
    if !out.status.success() {
        return Err(anyhow!("perf script failed on {}", data.display()));
    }
    Ok(parse_script(&String::from_utf8_lossy(&out.stdout)))
}

/// Parses `perf script -F comm,tid,ip,sym,dso`: a header line `comm tid`, then one
/// indented line per frame `ip symbol (dso)`, then a blank line.
pub fn parse_script(text: &str) -> Vec<Sample> {
    let mut samples = Vec::new();
    let mut current: Option<Sample> = None;
    for line in text.lines() {
        if line.trim().is_empty() {
            samples.extend(current.take());
            continue;
        }
        if line.starts_with(char::is_whitespace) {
            if let (Some(s), Some(f)) = (current.as_mut(), parse_frame(line.trim())) {
                s.frames.push(f);
            }
            continue;
        }
        samples.extend(current.take());
        // The command name may contain spaces; the TID is the last field.
        let mut parts = line.trim_end().rsplitn(2, char::is_whitespace);
        let tid = parts.next().and_then(|t| t.parse().ok()).unwrap_or(-1);
        let comm = parts.next().unwrap_or("").trim().to_string();
        current = Some(Sample {
            comm,
            tid,
            frames: Vec::new(),
        });
    }
    samples.extend(current);
    samples
}

fn parse_frame(line: &str) -> Option<Frame> {
    let (ip, rest) = line.split_once(' ')?;
    let ip = u64::from_str_radix(ip, 16).ok()?;
    let (symbol, dso) = match rest.rfind(" (") {
        Some(i) if rest.ends_with(')') => (&rest[..i], &rest[i + 2..rest.len() - 1]),
        _ => (rest, ""),
    };
    let known = |s: &str| (!s.is_empty() && s != "[unknown]").then(|| s.to_string());
    Some(Frame {
        ip,
        symbol: known(symbol.trim()),
        dso: known(dso.trim()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_perf_script_output() {
        let text = "nginx 123 \n\t          241e34 [unknown] (/usr/lib/x86_64-linux-gnu/libcrypto.so.3)\n\tffffffff81a0 tcp_sendmsg ([kernel.kallsyms])\n\nwg go 7 \n\t  10 runtime.memmove (/usr/local/bin/wireguard-go)\n";
        let s = parse_script(text);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].comm, "nginx");
        assert_eq!(s[0].tid, 123);
        assert_eq!(s[0].frames[0].ip, 0x241e34);
        assert_eq!(s[0].frames[0].symbol, None);
        assert_eq!(s[0].frames[1].symbol.as_deref(), Some("tcp_sendmsg"));
        assert_eq!(s[0].frames[1].dso.as_deref(), Some("[kernel.kallsyms]"));
        assert_eq!(s[1].comm, "wg go");
        assert_eq!(s[1].frames[0].symbol.as_deref(), Some("runtime.memmove"));
    }
}
