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
pub enum Resource {
    /// A process we started, stopped by PID: SIGTERM, then SIGKILL after a grace period.
    Process { pid: i32, name: String },
    /// A temp dir, with the lock that tells a sweep it is in use (see [`LOCK_FILE`]).
    TempDir {
        path: PathBuf,
        lock: Option<std::fs::File>,
    },
    /// A network namespace created with `ip netns add`.
    Netns(String),
    /// Any command that undoes a change, e.g. `ip netns exec X ip link del wg0`.
    Undo { what: String, argv: Vec<String> },
    /// A change undone by a call of ours, e.g. a crypto driver's priority set back over
    /// netlink.
    Call {
        what: String,
        undo: Box<dyn Fn() -> anyhow::Result<()> + Send>,
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
        self.temp_dir_in(&std::env::temp_dir(), what)
    }

    /// A private dir (mode 0700) in `base`, named `cbench-<what>-<pid>-<n>`, locked for as
    /// long as this run owns it and removed with the guard.
    pub fn temp_dir_in(&self, base: &Path, what: &str) -> anyhow::Result<PathBuf> {
        use std::os::unix::fs::DirBuilderExt;
        for n in 0..100u32 {
            let p = base.join(format!("{PREFIX}-{what}-{}-{n}", std::process::id()));
            match std::fs::DirBuilder::new().mode(0o700).create(&p) {
                Ok(()) => {
                    let lock = lock_new(&p);
                    let failed = lock.as_ref().err().map(|e| e.to_string());
                    self.track(Resource::TempDir {
                        path: p.clone(),
                        lock: lock.ok(),
                    });
                    if let Some(e) = failed {
                        return Err(anyhow!("cannot lock {}: {e}", p.display()));
                    }
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
    // SAFETY: waitpid with WNOHANG on a pid we started.
    let waited = unsafe {
        let mut status = 0;
        libc::waitpid(pid, &mut status, libc::WNOHANG)
    };
    match waited {
        // Our child, exited and reaped now.
        w if w == pid => false,
        // Our child, not exited: a multi-threaded one whose first thread is gone already
        // shows 'Z' until its last thread exits, and only then can it be reaped (calling
        // it gone there left wireguard-go a zombie for the rest of the run).
        0 => true,
        // Not our child (e.g. one that a wrapper forked): a zombie has exited too, and
        // only its parent can reap it, so signal 0 alone would call it alive.
        _ => crate::sys::procfs::stat(pid).is_some_and(|s| !matches!(s.state, 'Z' | 'X')),
    }
}

/// Whether `pid` is a cryptobench process still running, and so owns the names it made
/// (namespaces, links, mappings): what every workload's cleanup asks before it removes
/// another run's leftovers.
pub fn run_alive(pid: u32) -> bool {
    pid == std::process::id()
        || std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .is_ok_and(|c| c.trim().starts_with("cryptobench"))
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
        Resource::TempDir { path, .. } => remove_dir(path),
        Resource::Netns(n) => {
            quiet(&["ip", "netns", "del", n]);
        }
        Resource::Undo { what, argv } => {
            let a: Vec<&str> = argv.iter().map(String::as_str).collect();
            if !a.is_empty() && !quiet(&a) {
                eprintln!("cryptobench: could not undo {what} ({})", argv.join(" "));
            }
        }
        Resource::Call { what, undo } => {
            if let Err(e) = undo() {
                eprintln!("cryptobench: could not undo {what}: {e}");
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

/// The file in each of our temp dirs that its run holds an exclusive flock on for as long
/// as it owns the dir. The kernel drops the lock when the run ends, however it ends, so a
/// sweep in any PID namespace (a container sharing /tmp) tells a live run's dir from a dead
/// one's, which a PID cannot: the same PID names another process, or none, there.
pub const LOCK_FILE: &str = ".cbench-lock";

/// A dir without a lock file is a run's of an older version, or one being made this
/// instant: swept only once its PID is gone here and it is older than this.
const UNLOCKED_AGE: Duration = Duration::from_secs(3600);

fn flock_now(f: &std::fs::File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor we own.
    unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// Creates and takes the lock of a new dir of ours.
fn lock_new(dir: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(dir.join(LOCK_FILE))?;
    if flock_now(&f) {
        Ok(f)
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// A dir whose run is gone, and the lock to hold while it is removed (none for an older
/// version's dir, which has no lock file).
struct Orphan {
    _lock: Option<std::fs::File>,
}

/// Whether the dir's run is gone: its lock could be taken, or, without a lock file, its
/// PID is gone and the dir is old.
fn orphaned(dir: &Path, pid: i32) -> Option<Orphan> {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(dir.join(LOCK_FILE))
    {
        Ok(f) => flock_now(&f).then_some(Orphan { _lock: Some(f) }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let age = std::fs::symlink_metadata(dir)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .unwrap_or_default();
            (!alive(pid) && age >= UNLOCKED_AGE).then_some(Orphan { _lock: None })
        }
        Err(_) => None,
    }
}

/// Removes the temp dirs of runs that are gone (a SIGKILLed run leaves its dir: nginx's
/// config, a private key, the served files). Only our own directories, only those whose
/// lock no live run holds. Returns what it did, one line each.
pub fn remove_orphan_temp_dirs() -> Vec<String> {
    remove_orphan_temp_dirs_in(&std::env::temp_dir())
}

fn remove_orphan_temp_dirs_in(base: &Path) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let mut report = Vec::new();
    let Ok(dir) = std::fs::read_dir(base) else {
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
        if !ours || pid as u32 == std::process::id() {
            continue;
        }
        let Some(_held) = orphaned(&e.path(), pid) else {
            continue;
        };
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

    /// A process whose first thread has exited while another runs shows 'Z' but cannot be
    /// reaped yet (as wireguard-go's did while its threads exited): stopping it must stop
    /// the rest and reap it, not take the 'Z' for gone and leave a zombie.
    #[test]
    fn a_process_whose_first_thread_exited_is_stopped_and_reaped() {
        let Some(python) = crate::sys::program::find_program("python3", None) else {
            panic!("python3 is needed (scripts/deps/base.sh installs it)");
        };
        let g = Guard::new();
        let script = "import threading, time, ctypes\n\
                      threading.Thread(target=lambda: time.sleep(20)).start()\n\
                      ctypes.CDLL(None).pthread_exit(None)\n";
        // Reaped by stop_pid below, which is what the test is about.
        #[allow(clippy::zombie_processes)]
        let child = g
            .spawn(Command::new(python).args(["-c", script]), "python3")
            .unwrap();
        let pid = child.id() as i32;
        let state = || crate::sys::procfs::stat(pid).map(|s| s.state);
        let start = Instant::now();
        while state() != Some('Z') {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "never a zombie leader"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(alive(pid), "a thread of it still runs");
        assert!(stop_pid(pid), "SIGTERM stops it");
        assert_eq!(state(), None, "stopped and reaped, no zombie left");
    }

    #[test]
    fn the_sweep_takes_only_dirs_whose_lock_is_free() {
        let base = std::env::temp_dir().join(format!("cbench-sweep-test-{}", std::process::id()));
        std::fs::create_dir_all(&base).unwrap();
        // A PID that names no process here (beyond the kernel's default pid_max).
        let gone = 4_194_999;
        let mk = |n: u32| {
            let d = base.join(format!("{PREFIX}-tls-{gone}-{n}"));
            std::fs::create_dir(&d).unwrap();
            d
        };
        // 0: a live run elsewhere (another PID namespace) holds its lock.
        let live = mk(0);
        let held = lock_new(&live).unwrap();
        // 1: a dead run's lock file, free.
        let dead = mk(1);
        drop(lock_new(&dead).unwrap());
        // 2: no lock file and new: maybe a run being set up, or an older version's.
        let fresh = mk(2);
        // A child that another test thread is starting holds a copy of every open file
        // until it execs, a lock just dropped included: sweep until the dead run's dir
        // goes, for up to 5 s.
        let sweep_until_gone = |dir: &Path| {
            let mut report = remove_orphan_temp_dirs_in(&base);
            for _ in 0..500 {
                if !dir.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
                report.extend(remove_orphan_temp_dirs_in(&base));
            }
            report
        };
        let report = sweep_until_gone(&dead);
        assert!(live.exists(), "{report:?}");
        assert!(!dead.exists(), "{report:?}");
        assert!(fresh.exists(), "{report:?}");
        assert_eq!(report.len(), 1, "{report:?}");
        // Once the live run ends (its lock dropped), its dir goes too.
        drop(held);
        sweep_until_gone(&live);
        assert!(!live.exists());
        // A guard's dir carries its held lock.
        let g = Guard::new();
        let mine = g.temp_dir_in(&base, "test").unwrap();
        let f = std::fs::File::open(mine.join(LOCK_FILE)).unwrap();
        assert!(!flock_now(&f), "the owner's lock is held");
        drop(g);
        assert!(!mine.exists());
        std::fs::remove_dir_all(&base).unwrap();
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
