//! Shared by the integration tests: how a test that cannot run here says so.
#![allow(dead_code)]

pub mod browser;
pub mod dut_lab;
pub mod gate;
pub mod musl;
pub mod openssl;
pub mod postgres;
pub mod ssh_guest;
pub mod tls;

use std::path::{Path, PathBuf};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_cryptobench");

/// The algorithms `speed` measures without `--alg`.
pub const DEFAULT_ALGS: [&str; 11] = [
    "aes-128-gcm",
    "aes-256-gcm",
    "chacha20-poly1305",
    "aes-128-cbc",
    "aes-256-cbc",
    "aes-128-ctr",
    "aes-256-ctr",
    "sha1",
    "sha256",
    "sha512",
    "hmac-sha256",
];

/// The binary under test with a data dir of its own: XDG_DATA_HOME in the target's tmp
/// dir (one per test process) and CRYPTOBENCH_STORE unset, so that a run's default store
/// is never the invoking user's.
pub fn command() -> std::process::Command {
    let mut c = std::process::Command::new(BIN);
    c.env("XDG_DATA_HOME", data_home())
        .env_remove("CRYPTOBENCH_STORE");
    c
}

/// The private data dir `command` gives the binary (its store: cryptobench/results.db).
pub fn data_home() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("data-{}", std::process::id()))
}

/// The ARM sysroots scripts/deps/arm.sh unpacks: $CRYPTOBENCH_ARM_CACHE, else
/// ~/.cache/cryptobench/arm (outside the clone, as the scripts keep it).
pub fn arm_cache() -> PathBuf {
    if let Some(dir) = std::env::var_os("CRYPTOBENCH_ARM_CACHE") {
        return PathBuf::from(dir);
    }
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache")
        })
        .join("cryptobench/arm")
}

/// scripts/build-arm's binary for `triple` (target/<triple>/release, or under
/// CARGO_TARGET_DIR), or None after reporting the skip.
pub fn cross_binary(triple: &str) -> Option<PathBuf> {
    let bin = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
        .join(triple)
        .join("release/cryptobench");
    if bin.is_file() {
        Some(bin)
    } else {
        skip(&format!(
            "{} is not built: run scripts/deps/arm.sh, then scripts/build-arm",
            bin.display()
        ));
        None
    }
}

/// Runs the binary with `args`; its output, whatever the exit code.
pub fn run(args: &[&str]) -> std::process::Output {
    command().args(args).output().expect("binary runs")
}

/// Runs `cmd` (stdin closed) and returns its output, or kills it and fails the test once
/// it has run for `limit`: a command that would hang (reading a FIFO, /dev/zero) fails
/// its own test instead of stalling the suite.
pub fn output_within(
    cmd: &mut std::process::Command,
    limit: std::time::Duration,
) -> std::process::Output {
    use std::io::Read;
    use std::process::Stdio;
    let start = std::time::Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("binary runs");
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut b = Vec::new();
            let _ = r.read_to_end(&mut b);
            b
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} still ran after {limit:?}: killed");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    std::process::Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// stdout and stderr as text.
pub fn text(o: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A file of tests/fixtures.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A tiny real speed run of openssl and ring into `dir/name` (`args`: what to measure).
pub fn speed_run(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let f = dir.join(name);
    let o = command()
        .args(["speed", "--impl", "openssl,ring", "--time", "0.02"])
        .args(args)
        .arg("--output")
        .arg(&f)
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}", text(&o));
    f
}

/// A tiny real speed run with one and two threads and two paths.
pub fn speed_file(dir: &Path) -> PathBuf {
    let args = [
        "--alg",
        "aes-128-gcm",
        "--sizes",
        "16,1k,16k",
        "--threads",
        "1,2",
    ];
    speed_run(dir, "speed.jsonl", &args)
}

/// A fresh directory `name` under `under`.
pub fn tempdir(under: &Path, name: &str) -> PathBuf {
    let d = under.join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Significant digits of a number as written: "0.30000000000000004" has 17, "2000" 1.
pub fn significant_digits(label: &str) -> usize {
    let digits: String = label.chars().filter(char::is_ascii_digit).collect();
    let digits = digits.trim_start_matches('0');
    if label.contains('.') {
        digits.len()
    } else {
        digits.trim_end_matches('0').len()
    }
}

/// The `<text>` elements of an SVG: (text-anchor, x, y, content).
pub fn svg_texts(svg: &str) -> Vec<(String, f64, f64, String)> {
    svg.split("<text ")
        .skip(1)
        .filter_map(|t| {
            let attr = |name: &str| {
                t.split(&format!(" {name}=\""))
                    .nth(1)
                    .or_else(|| t.strip_prefix(&format!("{name}=\"")))
                    .and_then(|v| v.split('"').next())
            };
            let content = t.split('>').nth(1)?.split('<').next()?.trim().to_string();
            Some((
                attr("text-anchor").unwrap_or("start").to_string(),
                attr("x")?.parse().ok()?,
                attr("y")?.parse().ok()?,
                content,
            ))
        })
        .collect()
}

mod skip;
pub use skip::skip;

/// The one switch for every guest (qemu) test: `CRYPTOBENCH_SKIP_GUEST=1` turns them off.
/// Returns false (after reporting the skip) when they are off.
pub fn guest_enabled() -> bool {
    if std::env::var("CRYPTOBENCH_SKIP_GUEST").as_deref() == Ok("1") {
        skip("CRYPTOBENCH_SKIP_GUEST=1 turns the guest tests off");
        return false;
    }
    true
}

/// Runs the cryptobench binary under test with `args` (as `run`).
pub fn cryptobench(args: &[&str]) -> std::process::Output {
    run(args)
}

/// Bad input: each command line exits 2 with one line on stderr that contains its needle,
/// and writes nothing on stdout.
pub fn refused_in_one_line(cases: &[(&[&str], &str)]) {
    for (args, needle) in cases {
        let e = one_line_exit_2(&run(args), &format!("{args:?}"));
        assert!(e.contains(needle), "{args:?}: '{needle}' in {e}");
    }
}

/// A run that must have been refused: exit 2, one line on stderr, nothing on stdout. The line.
pub fn one_line_exit_2(o: &std::process::Output, what: &str) -> String {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{what}: {e}");
    assert_eq!(e.trim().lines().count(), 1, "{what}: one line: {e}");
    assert!(o.stdout.is_empty(), "{what}: stdout {}", stdout(o));
    e
}

/// scripts/NAME, a packaging script, with `args`: the builds it packages under `target`
/// (CARGO_TARGET_DIR), what it makes into `dist` (DIST).
pub fn package_script(
    name: &str,
    args: &[&str],
    target: &Path,
    dist: &Path,
) -> std::process::Output {
    std::process::Command::new(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scripts")
            .join(name),
    )
    .args(args)
    .env("CARGO_TARGET_DIR", target)
    .env("DIST", dist)
    .output()
    .unwrap_or_else(|e| panic!("bash runs scripts/{name}: {e}"))
}

/// Each (architecture, needle), none of them built: scripts/NAME refuses it in one line
/// (exit 2) that contains the needle, and writes nothing.
pub fn package_refusals(name: &str, cases: &[(&str, &str)]) {
    let tmp = tempdir(
        Path::new(env!("CARGO_TARGET_TMPDIR")),
        &format!("{name}-none"),
    );
    for (arch, says) in cases {
        let err = one_line_exit_2(&package_script(name, &[arch], &tmp, &tmp), arch);
        assert!(err.contains(says), "{arch}: {err}");
    }
    let written = std::fs::read_dir(&tmp).unwrap().count();
    assert_eq!(written, 0, "nothing written");
}

/// A finished run's stdout, as text.
pub fn stdout(o: &std::process::Output) -> String {
    utf8(&o.stdout)
}

/// Bytes a process wrote, as text (invalid UTF-8 replaced).
pub fn utf8(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A finished run's stderr, as text.
pub fn stderr(o: &std::process::Output) -> String {
    utf8(&o.stderr)
}

/// True when running as root (namespaces, nginx on any port, perf on every process).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The binary run by a user who cannot write where root can: as root, as nobody (a
/// root-owned 0755 directory is then read-only to it); otherwise as this user, for whom
/// the test makes the directory 0555.
pub fn unprivileged(bin: &str) -> std::process::Command {
    if is_root() {
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(bin);
        c
    } else {
        std::process::Command::new(bin)
    }
}

/// Equal line by line; on a difference, says where (the lines are long).
pub fn same_lines(a: &str, b: &str) {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    assert_eq!(a.len(), b.len(), "line counts differ");
    if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
        let at = a[i]
            .bytes()
            .zip(b[i].bytes())
            .take_while(|(x, y)| x == y)
            .count();
        panic!(
            "line {} differs at byte {at}: {:?} / {:?}",
            i + 1,
            &a[i][at.saturating_sub(40)..(at + 40).min(a[i].len())],
            &b[i][at.saturating_sub(40)..(at + 40).min(b[i].len())]
        );
    }
}

/// True when perf can sample here (linux-perf installed, and permitted); otherwise reports
/// the skip. The `--profile` tests start with it.
pub fn perf_usable() -> bool {
    let ok = std::process::Command::new("perf")
        .args([
            "record",
            "-q",
            "-e",
            "cpu-clock",
            "-o",
            "/dev/null",
            "--",
            "true",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        skip("perf cannot sample here (install linux-perf: scripts/deps/profile.sh; run as root)");
    }
    ok
}

/// A record's measured `profile` field is internally consistent: the cpu-clock event,
/// every sample in exactly one category, shares summing to 1, each inside its interval.
/// Returns the number of samples.
pub fn check_profile(p: &serde_json::Value) -> u64 {
    assert!(p.get("unavailable").is_none(), "no profile: {p}");
    assert_eq!(p["event"], "cpu-clock", "{p}");
    let n = p["samples"].as_u64().expect("samples");
    let cats = p["categories"].as_object().expect("categories");
    let total: f64 = cats.values().map(|c| c["share"].as_f64().unwrap()).sum();
    assert!((total - 1.0).abs() < 1e-9, "shares sum to {total}: {p}");
    let counted: u64 = cats.values().map(|c| c["samples"].as_u64().unwrap()).sum();
    assert_eq!(counted, n, "{p}");
    for (name, c) in cats
        .iter()
        .map(|(k, c)| (k.as_str(), c))
        .chain([("crypto", &p["crypto"])])
    {
        let (s, lo, hi) = (
            c["share"].as_f64().unwrap(),
            c["ci"][0].as_f64().unwrap(),
            c["ci"][1].as_f64().unwrap(),
        );
        assert!(lo <= s && s <= hi, "{name}: {s} outside [{lo}, {hi}]");
    }
    n
}

/// True when `name` is an executable on PATH or in /usr/sbin (where Debian puts nginx and
/// openvpn), as the tool looks for its programs.
pub fn has_program(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path
        .split(':')
        .chain(["/usr/sbin", "/sbin"])
        .map(|d| Path::new(d).join(name))
        .any(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        });
    found
}

/// What the tool says first when this machine cannot run `tls` (the start of its
/// reason), or None when it can.
pub fn tls_lacks() -> Option<String> {
    ["nginx", "wrk", "openssl"]
        .into_iter()
        .find(|p| !has_program(p))
        .map(|p| format!("{p} not found"))
}

/// The same for `vpn --tunnels openvpn` (and WireGuard with `wireguard`): the first
/// program missing, then root.
pub fn vpn_lacks(wireguard: bool) -> Option<String> {
    let mut programs = vec!["ip", "iperf3"];
    if wireguard {
        programs.push("wg");
    }
    programs.extend(["openvpn", "openssl"]);
    if let Some(p) = programs.into_iter().find(|p| !has_program(p)) {
        return Some(format!("{p} not found"));
    }
    (!is_root()).then(|| "vpn needs root".to_string())
}

/// Marks the end of one command's output in a guest script, followed by its exit status.
pub const GUEST_MARK: &str = "=====8<=====";

/// Boots the guest once (guest/run) and runs `cmds` one after the other in its shell;
/// each command's stdout and exit status, and guest/run's stderr. `env`: guest/run's
/// settings (GUEST_MEM, GUEST_TIMEOUT, ...). Panics when the guest itself fails.
pub fn guest_commands(cmds: &[String], env: &[(&str, &str)]) -> (Vec<(String, i32)>, String) {
    let run = Path::new(env!("CARGO_MANIFEST_DIR")).join("guest/run");
    let script = cmds
        .iter()
        .map(|c| format!("{c}; echo \"{GUEST_MARK} $?\""))
        .collect::<Vec<_>>()
        .join("\n");
    let o = std::process::Command::new(&run)
        .args(["sh", "-c", &script])
        .env("CRYPTOBENCH_BIN", BIN)
        .env_remove("GUEST_VERBOSE")
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("{} does not start: {e}", run.display()));
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "guest/run failed: {err}\n{out}");
    let mut results = Vec::new();
    let mut rest = out.as_str();
    while let Some(i) = rest.find(GUEST_MARK) {
        let (doc, after) = rest.split_at(i);
        let line_end = after.find('\n').unwrap_or(after.len());
        let code: i32 = after[GUEST_MARK.len()..line_end]
            .trim()
            .parse()
            .expect("exit status after the marker");
        results.push((doc.trim().to_string(), code));
        rest = &after[line_end..];
    }
    assert_eq!(
        results.len(),
        cmds.len(),
        "every command reported; stderr: {err}\n{out}"
    );
    (results, err)
}
