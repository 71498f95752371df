//! What the tls tests share (tls_cli.rs, tls_haproxy_cli.rs): runs, records, and the
//! processes and ports a run leaves.

use super::{run, stderr};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// One short point per server: TLS_AES_128_GCM_SHA256, a 4 KiB file, 2 connections, 1 s.
pub const ONE_POINT: &str = "--suites aes128gcm --files 4k --concurrency 2 --time 1";

/// `args` and then the words of `more` (e.g. ONE_POINT).
pub fn with<'a>(args: &[&'a str], more: &'a str) -> Vec<&'a str> {
    args.iter().copied().chain(more.split(' ')).collect()
}

pub fn temp_file(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!(
        "cryptobench-tls-test-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&p);
    p
}

pub fn json_run(args: &[&str], output: &Path) -> Value {
    let mut a = vec!["tls"];
    a.extend_from_slice(args);
    let out = output.to_string_lossy().to_string();
    a.extend(["--format", "json", "--output", &out]);
    let o = run(&a);
    assert!(o.status.success(), "{a:?} failed: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("--format json prints one JSON document")
}

pub fn lines(p: &Path) -> Vec<Value> {
    std::fs::read_to_string(p)
        .expect("results file exists")
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .collect()
}

/// The record lines of a results file.
pub fn records(out: &Path) -> Vec<Value> {
    lines(out)
        .into_iter()
        .filter(|l| l["kind"] == "record")
        .collect()
}

/// Why this machine cannot run `tls --server haproxy`, or None.
pub fn haproxy_lacks() -> Option<String> {
    super::tls_lacks().or_else(|| {
        (!super::has_program("haproxy"))
            .then(|| "haproxy not found (scripts/deps/tls.sh installs it)".to_string())
    })
}

pub fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

pub fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// What nginx must have logged for every request of a suite.
pub fn expected_negotiated(suite: &str, au: &str) -> String {
    match suite {
        "http" => "- -".into(),
        "null" => format!("TLSv1.2 ECDHE-{au}-NULL-SHA"),
        s if s.starts_with("TLS_") => format!("TLSv1.3 {s}"),
        s => format!("TLSv1.2 {s}"),
    }
}

/// Our process's descendants: (pid, start time, name).
pub fn descendants(root: i32) -> Vec<(i32, u64, String)> {
    let mut all = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if let Some((ppid, start, comm)) = stat(pid) {
            all.push((pid, ppid, start, comm));
        }
    }
    let mut out: Vec<(i32, u64, String)> = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for (pid, ppid, start, comm) in &all {
            if *ppid == p {
                out.push((*pid, *start, comm.clone()));
                frontier.push(*pid);
            }
        }
    }
    out
}

pub fn stat(pid: i32) -> Option<(i32, u64, String)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let comm = s[s.find('(')? + 1..s.rfind(')')?].to_string();
    let rest: Vec<&str> = s[s.rfind(')')? + 1..].split_whitespace().collect();
    if rest[0] == "Z" {
        return None;
    }
    Some((rest[1].parse().ok()?, rest[19].parse().ok()?, comm))
}

pub fn listening(port: &str) -> bool {
    let out = Command::new("ss")
        .args(["-ltnH"])
        .output()
        .expect("ss runs");
    String::from_utf8_lossy(&out.stdout).lines().any(|l| {
        l.split_whitespace()
            .any(|w| w.ends_with(&format!(":{port}")))
    })
}

/// The private temp dirs of the run whose process is `pid`.
pub fn run_temp_dirs(pid: i32) -> Vec<PathBuf> {
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("cbench-tls-{pid}-")))
        })
        .collect()
}

/// Sends `signal` to the run and waits (up to 30 s) until it ends.
pub fn signal_and_wait(child: &mut Child, signal: nix::sys::signal::Signal) -> ExitStatus {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "cryptobench did not stop after {signal}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts `cryptobench tls ARGS` with its output piped; the child, its stderr, and the
/// first line there (which names the ports of the run).
pub fn spawn_tls(args: &[&str]) -> (Child, BufReader<ChildStderr>, String) {
    let mut child = super::command()
        .arg("tls")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    (child, err, first)
}

/// The processes under `pid` (PID, start time, name) once `ready` holds of them: what a
/// run started, remembered exactly; `what` never running within 30 s fails the test.
pub fn running(
    pid: i32,
    what: &str,
    ready: impl Fn(&[(i32, u64, String)]) -> bool,
) -> Vec<(i32, u64, String)> {
    let start = Instant::now();
    loop {
        let d = descendants(pid);
        if ready(&d) {
            return d;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{what} never ran"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGTERM once `programs` (e.g. haproxy and wrk) run under `cryptobench tls ARGS`: exit
/// 143, and every process it started (by PID and start time) and its temp dir gone.
pub fn sigterm_leaves_nothing(args: &[&str], programs: &[&str]) {
    let (mut child, mut err, first) = spawn_tls(args);
    let pid = child.id() as i32;
    let procs = running(pid, &format!("{programs:?}"), |d| {
        programs.iter().all(|p| d.iter().any(|x| x.2 == *p))
    });
    assert_eq!(
        run_temp_dirs(pid).len(),
        1,
        "the run's temp dir exists while it runs"
    );
    let status = signal_and_wait(&mut child, nix::sys::signal::Signal::SIGTERM);
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut err, &mut rest);
    assert_eq!(status.code(), Some(143), "{first}{rest}");
    for (p, start, name) in &procs {
        let still = stat(*p).is_some_and(|(_, s, _)| s == *start);
        assert!(!still, "{name} (pid {p}) is still running");
    }
    assert!(descendants(pid).is_empty());
    assert!(
        run_temp_dirs(pid).is_empty(),
        "temp dir left: {:?}",
        run_temp_dirs(pid)
    );
}
