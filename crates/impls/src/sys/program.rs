//! Finding the programs a workload runs, and asking them their version.

use anyhow::anyhow;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The sbin directories a non-root PATH often lacks (nginx lives in /usr/sbin).
pub const SBIN: [&str; 3] = ["/usr/sbin", "/sbin", "/usr/local/sbin"];

/// How long a program may take to print its version.
const VERSION_LIMIT: Duration = Duration::from_secs(10);

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// `name` on PATH, then in `more` directories.
pub fn find_in(name: &str, more: &[PathBuf]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(more.iter().cloned())
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

/// Finds a program: an explicit path (which must be executable), then PATH, then the
/// sbin directories.
pub fn find_program(name: &str, explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return is_executable(p).then(|| p.to_path_buf());
    }
    let sbin: Vec<PathBuf> = SBIN.iter().map(PathBuf::from).collect();
    find_in(name, &sbin)
}

/// What `program args` prints (stdout, then stderr; some tools print their version on
/// stderr or exit non-zero), within 10 s. The child dies with us.
pub fn output(program: &Path, args: &[&str]) -> anyhow::Result<String> {
    output_with(program, args, &[])
}

/// `output` with variables set in the program's environment (a library path).
pub fn output_with(program: &Path, args: &[&str], env: &[(&str, &Path)]) -> anyhow::Result<String> {
    let shown = program.display();
    let mut cmd = Command::new(program);
    cmd.args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: prctl is async-signal-safe; it only sets this child's parent-death signal.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGTERM as libc::c_ulong,
                0,
                0,
                0,
            );
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| anyhow!("cannot run {shown}: {e}"))?;
    // Read both pipes on threads, so that a chatty program cannot block on a full pipe.
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_string(&mut text);
            }
            text
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() < VERSION_LIMIT => {
                std::thread::sleep(Duration::from_millis(5))
            }
            _ => {
                // Our own child, by its handle.
                let _ = child.kill();
                let _ = child.wait();
                return Err(anyhow!(
                    "{shown} {} did not finish within {} s",
                    args.join(" "),
                    VERSION_LIMIT.as_secs()
                ));
            }
        }
    }
    let text = format!(
        "{}\n{}",
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default()
    );
    Ok(text)
}

/// The first line of `program args`'s output that `pick` accepts, trimmed: its version
/// line. "unknown (why)" when there is none.
pub fn version_line(program: &Path, args: &[&str], pick: impl Fn(&str) -> bool) -> String {
    match output(program, args) {
        Ok(text) => text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && pick(l))
            .unwrap_or("unknown")
            .to_string(),
        Err(e) => format!("unknown ({e})"),
    }
}

/// `~/.cache/cryptobench/NAME` (or `$XDG_CACHE_HOME/cryptobench/NAME`, or `$ENV` when
/// set): where scripts/build-* keep what they built. None without a home.
pub fn cache_dir(name: &str, env: &str) -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var(env).or_else(|| {
        let home = var("HOME").map(|h| h.join(".cache"));
        Some(
            var("XDG_CACHE_HOME")
                .or(home)?
                .join("cryptobench")
                .join(name),
        )
    })
}

/// The finished builds in a scripts/build-* cache dir (not its hidden locks and temp dirs),
/// newest first.
pub fn cached_builds(cache: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(cache)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .filter(|(_, p)| p.is_dir())
        .collect();
    dirs.sort_by(|a, b| b.cmp(a));
    dirs.into_iter().map(|(_, p)| p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_sh_and_not_a_missing_program() {
        let sh = find_program("sh", None).unwrap();
        assert!(sh.is_absolute() && sh.ends_with("sh"));
        assert!(find_program("cbench-no-such-program", None).is_none());
        assert_eq!(find_program("x", Some(&sh)), Some(sh.clone()));
        assert_eq!(find_program("x", Some(Path::new("/etc/passwd"))), None);
        let dir = sh.parent().unwrap().to_path_buf();
        assert!(find_in("sh", &[dir]).is_some());
    }

    #[test]
    fn version_lines_come_from_stdout_or_stderr() {
        let sh = find_program("sh", None).unwrap();
        let line = version_line(&sh, &["-c", "echo; echo tool 1.2 >&2; exit 3"], |_| true);
        assert_eq!(line, "tool 1.2");
        let picked = version_line(&sh, &["-c", "echo noise; echo tool 1.2"], |l| {
            l.starts_with("tool")
        });
        assert_eq!(picked, "tool 1.2");
        let missing = version_line(Path::new("/nonexistent/tool"), &[], |_| true);
        assert!(
            missing.starts_with("unknown (cannot run /nonexistent/tool"),
            "{missing}"
        );
    }
}
