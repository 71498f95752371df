//! One owner for everything a workload starts or creates: processes, temp dirs, network
//! namespaces, links. Dropping the Guard (normal exit, error, unwinding) removes them in
//! reverse order; a second SIGINT/SIGTERM removes every guard's resources before exiting.

use anyhow::anyhow;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Something to undo.
#[derive(Debug)]
pub enum Resource {
    /// A process we started, stopped by PID: SIGTERM, then SIGKILL after a grace period.
    Process {
        pid: i32,
        name: String,
    },
    TempDir(PathBuf),
    /// A network namespace created with `ip netns add`.
    Netns(String),
    /// Any command that undoes a change, e.g. `ip netns exec X ip link del wg0`.
    Undo {
        what: String,
        argv: Vec<String>,
    },
}

struct Entry {
    guard: u64,
    resource: Resource,
}

static REGISTRY: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
/// Held while entries taken out of the registry are being undone, so that a second
/// signal's `release_all` waits for them instead of exiting halfway.
static UNDOING: Mutex<()> = Mutex::new(());
// usize, not u64: 32-bit MIPS has no 64-bit atomics.
static NEXT: AtomicUsize = AtomicUsize::new(1);

/// Prefix of every name we give to system-wide things (namespaces, links, temp dirs),
/// so that leftovers of a crashed run can be found.
pub const PREFIX: &str = "cbench";

pub struct Guard {
    id: u64,
}

fn lock() -> std::sync::MutexGuard<'static, Vec<Entry>> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

impl Guard {
    #[allow(clippy::new_without_default)]
    pub fn new() -> Guard {
        Guard {
            id: NEXT.fetch_add(1, Ordering::Relaxed) as u64,
        }
    }

    pub fn track(&self, resource: Resource) {
        lock().push(Entry {
            guard: self.id,
            resource,
        });
    }

    /// Spawns `cmd` and owns the process.
    pub fn spawn(&self, cmd: &mut Command, name: &str) -> anyhow::Result<Child> {
        let child = cmd
            .spawn()
            .map_err(|e| anyhow!("cannot start {name}: {e}"))?;
        self.track(Resource::Process {
            pid: child.id() as i32,
            name: name.into(),
        });
        Ok(child)
    }

    /// A private temp dir (mode 0700) removed with the guard.
    pub fn temp_dir(&self, what: &str) -> anyhow::Result<PathBuf> {
        use std::os::unix::fs::DirBuilderExt;
        let base = std::env::temp_dir();
        for n in 0..100u32 {
            let p = base.join(format!("{PREFIX}-{what}-{}-{n}", std::process::id()));
            match std::fs::DirBuilder::new().mode(0o700).create(&p) {
                Ok(()) => {
                    self.track(Resource::TempDir(p.clone()));
                    return Ok(p);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(anyhow!(
                        "cannot create a temp dir in {}: {e}",
                        base.display()
                    ))
                }
            }
        }
        Err(anyhow!("cannot create a temp dir: too many leftovers"))
    }

    /// Stops one process now (and forgets it), e.g. between measurement points.
    pub fn stop_process(&self, pid: i32) {
        let _undoing = UNDOING.lock().unwrap_or_else(|e| e.into_inner());
        let entry = {
            let mut reg = lock();
            let i = reg.iter().position(|e| {
                e.guard == self.id
                    && matches!(e.resource, Resource::Process { pid: p, .. } if p == pid)
            });
            i.map(|i| reg.remove(i))
        };
        if let Some(e) = entry {
            undo(&e.resource);
        }
    }

    /// Undoes everything this guard owns, newest first.
    pub fn release(&self) {
        let _undoing = UNDOING.lock().unwrap_or_else(|e| e.into_inner());
        let mine: Vec<Entry> = {
            let mut reg = lock();
            let (mine, rest): (Vec<Entry>, Vec<Entry>) =
                reg.drain(..).partition(|e| e.guard == self.id);
            *reg = rest;
            mine
        };
        for e in mine.iter().rev() {
            undo(&e.resource);
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.release();
    }
}

/// Undoes every guard's resources: for the second signal, just before exiting.
pub fn release_all() {
    let _undoing = UNDOING.lock().unwrap_or_else(|e| e.into_inner());
    let all: Vec<Entry> = lock().drain(..).collect();
    for e in all.iter().rev() {
        undo(&e.resource);
    }
}

fn alive(pid: i32) -> bool {
    // Reap it if it is our exited child.
    // SAFETY: waitpid with WNOHANG on a pid we started.
    unsafe {
        let mut status = 0;
        libc::waitpid(pid, &mut status, libc::WNOHANG);
    }
    // A zombie that is not our child (e.g. started through `ip netns exec`) has exited
    // too: only its parent can reap it, so signal 0 alone would call it alive.
    crate::sys::procfs::stat(pid).is_some_and(|s| !matches!(s.state, 'Z' | 'X'))
}

/// SIGTERM, up to 3 s of grace, then SIGKILL; always by the PID we started. Returns
/// false when it took SIGKILL.
pub fn stop_pid(pid: i32) -> bool {
    if pid <= 0 || !alive(pid) {
        return true;
    }
    // SAFETY: signalling a process we started.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(3) {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let start = Instant::now();
    while alive(pid) && start.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

fn quiet(argv: &[&str]) -> bool {
    Command::new(argv[0])
        .args(&argv[1..])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn undo(r: &Resource) {
    match r {
        Resource::Process { pid, name } => {
            if !stop_pid(*pid) {
                eprintln!("cryptobench: {name} (pid {pid}) ignored SIGTERM and was killed");
            }
        }
        Resource::TempDir(p) => remove_dir(p),
        Resource::Netns(n) => {
            quiet(&["ip", "netns", "del", n]);
        }
        Resource::Undo { what, argv } => {
            let a: Vec<&str> = argv.iter().map(String::as_str).collect();
            if !a.is_empty() && !quiet(&a) {
                eprintln!("cryptobench: could not undo {what} ({})", argv.join(" "));
            }
        }
    }
}

fn remove_dir(p: &Path) {
    let _ = std::fs::remove_dir_all(p);
}

/// The run that made a temp dir named `cbench-<what>-<pid>-<n>` (`Guard::temp_dir`).
fn temp_dir_owner(name: &str) -> Option<i32> {
    let rest = name.strip_prefix(PREFIX)?.strip_prefix('-')?;
    let mut parts = rest.rsplitn(3, '-');
    parts.next()?.parse::<u32>().ok()?;
    let pid = parts.next()?.parse::<i32>().ok()?;
    parts.next().filter(|what| !what.is_empty())?;
    Some(pid)
}

/// Removes the temp dirs of runs that are gone (a SIGKILLed run leaves its dir: nginx's
/// config, a private key, the served files). Only our own directories, only when their
/// run's process no longer exists. Returns what it did, one line each.
pub fn remove_orphan_temp_dirs() -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let mut report = Vec::new();
    let Ok(dir) = std::fs::read_dir(std::env::temp_dir()) else {
        return report;
    };
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = temp_dir_owner(&name) else {
            continue;
        };
        let ours = std::fs::symlink_metadata(e.path()).is_ok_and(|m| m.is_dir() && m.uid() == me);
        if !ours || pid as u32 == std::process::id() || alive(pid) {
            continue;
        }
        let shown = e.path().display().to_string();
        report.push(match std::fs::remove_dir_all(e.path()) {
            Ok(()) => format!("removed temp dir {shown} (its run, process {pid}, is gone)"),
            Err(err) => format!("could not remove temp dir {shown}: {err}"),
        });
    }
    report
}

#[cfg(test)]
mod tests {
    #[test]
    fn temp_dir_owners_are_read_from_our_names_only() {
        assert_eq!(super::temp_dir_owner("cbench-tls-1234-0"), Some(1234));
        assert_eq!(super::temp_dir_owner("cbench-study-77-12"), Some(77));
        assert_eq!(super::temp_dir_owner("cbench-tls-x-0"), None);
        assert_eq!(super::temp_dir_owner("cbench--1234-0"), None);
        assert_eq!(super::temp_dir_owner("other-tls-1234-0"), None);
        assert_eq!(super::temp_dir_owner("cbench123ws"), None);
    }

    use super::*;

    #[test]
    fn dropping_the_guard_stops_processes_and_removes_dirs() {
        let g = Guard::new();
        let dir = g.temp_dir("test").unwrap();
        std::fs::write(dir.join("f"), b"x").unwrap();
        let mut child = g.spawn(Command::new("sleep").arg("30"), "sleep").unwrap();
        let pid = child.id() as i32;
        assert!(alive(pid));
        drop(g);
        assert!(!dir.exists());
        assert!(!alive(pid));
        let _ = child.wait();
    }

    #[test]
    fn a_process_that_ignores_sigterm_is_killed() {
        let g = Guard::new();
        let mut child = g
            .spawn(
                Command::new("sh").args(["-c", "trap '' TERM; sleep 30"]),
                "stubborn",
            )
            .unwrap();
        let pid = child.id() as i32;
        std::thread::sleep(Duration::from_millis(100));
        g.release();
        assert!(!alive(pid));
        let _ = child.wait();
    }
}
