//! What a hostile or unlucky user meets: runs in other PID namespaces sharing /tmp and the
//! second, arguments that are not UTF-8 on the way to a DUT, calendar dates that do not
//! exist, controller options without a DUT, DUT URLs with user names like options, SIGINT
//! while connecting.

mod common;
use common::{command, skip, text};

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn private_tmp(name: &str) -> PathBuf {
    common::tempdir(
        &std::env::temp_dir(),
        &format!("cbench-hostile-{}-{name}", std::process::id()),
    )
}

/// `unshare -pf --mount-proc` works here (root, or user namespaces).
fn pid_namespaces() -> bool {
    Command::new("unshare")
        .args(["-pf", "--mount-proc", "true"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

const QUICK: &[&str] = &[
    "speed",
    "--impl",
    "ring",
    "--alg",
    "sha256",
    "--sizes",
    "16",
    "--time",
    "0.01",
    "--no-store",
];

/// A run in a container sharing /tmp must not take a live host run's temp dir for an
/// orphan because its PID means nothing in the container's PID namespace: the owner's
/// lock says it is alive. A dir whose lock nobody holds is an orphan and goes.
#[test]
fn a_sweep_in_another_pid_namespace_spares_a_live_runs_dir() {
    if !pid_namespaces() {
        skip("unshare -pf --mount-proc is not permitted here (needs root or user namespaces)");
        return;
    }
    let tmp = private_tmp("sweep");
    // The live run: a process holding the lock of its dir, as cryptobench's guard does.
    let mut owner = Command::new("sleep").arg("60").spawn().unwrap();
    let live = tmp.join(format!("cbench-tls-{}-0", owner.id()));
    std::fs::create_dir(&live).unwrap();
    std::fs::write(live.join("nginx.conf"), "x").unwrap();
    let mut holder = Command::new("flock")
        .arg(live.join(".cbench-lock"))
        .args(["sleep", "60"])
        .spawn()
        .expect("flock (util-linux) runs");
    // A dead run's dir: its lock file is there, and free.
    let dead = tmp.join(format!("cbench-vpn-{}-0", owner.id()));
    std::fs::create_dir(&dead).unwrap();
    std::fs::write(dead.join(".cbench-lock"), "").unwrap();
    // flock creates its file and takes the lock: wait until it holds it.
    let t0 = std::time::Instant::now();
    while Command::new("flock")
        .args(["-n", live.join(".cbench-lock").to_str().unwrap(), "true"])
        .status()
        .unwrap()
        .success()
    {
        assert!(t0.elapsed().as_secs() < 10, "flock never took its lock");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let o = Command::new("unshare")
        .args(["-pf", "--mount-proc", common::BIN])
        .args(QUICK)
        .env("TMPDIR", &tmp)
        .env("XDG_DATA_HOME", common::data_home())
        .output()
        .unwrap();
    let (_, err) = text(&o);
    let _ = holder.kill();
    let _ = holder.wait();
    let _ = owner.kill();
    let _ = owner.wait();
    assert!(o.status.success(), "{err}");
    assert!(
        live.join("nginx.conf").exists(),
        "a live run's dir was removed: {err}"
    );
    assert!(!dead.exists(), "the orphan stayed: {err}");
    assert!(
        err.contains(&format!("removed temp dir {}", dead.display())),
        "{err}"
    );
    assert!(!err.contains(&live.display().to_string()), "{err}");
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// libfaketime, which stops the wall clock for a process (scripts/deps/store.sh).
fn libfaketime() -> Option<PathBuf> {
    std::fs::read_dir("/usr/lib")
        .ok()?
        .flatten()
        .map(|d| d.path().join("faketime/libfaketime.so.1"))
        .find(|p| p.is_file())
}

/// Two runs that collide in everything but their random part: PID 1 each (PID namespaces
/// of their own, as containers and the identical DUTs of a fleet) and the wall clock
/// stopped at one instant (libfaketime), so the same second and millisecond. Their ids
/// still differ, and one store keeps both.
#[test]
fn runs_that_share_the_second_the_millisecond_and_the_pid_are_both_kept() {
    if !pid_namespaces() {
        skip("unshare -pf --mount-proc is not permitted here (needs root or user namespaces)");
        return;
    }
    let Some(faketime) = libfaketime() else {
        skip("libfaketime is not installed: run scripts/deps/store.sh (Debian: faketime)");
        return;
    };
    let tmp = private_tmp("ids");
    let store = format!("sqlite:{}", tmp.join("runs.db").display());
    let quick: Vec<&str> = QUICK
        .iter()
        .copied()
        .filter(|a| *a != "--no-store")
        .collect();
    let ids: Vec<String> = (0..2)
        .map(|_| {
            let o = Command::new("unshare")
                .args(["-pf", "--mount-proc", common::BIN])
                .args(&quick)
                .args(["--store", &store, "--format", "json"])
                .env("XDG_DATA_HOME", common::data_home())
                .env("LD_PRELOAD", &faketime)
                // Absolute: the clock stands still. Timing uses the monotonic clock.
                .env("FAKETIME", "2026-01-01 00:00:00")
                .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", common::stderr(&o));
            let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            v["environment"]["run_id"].as_str().unwrap().to_string()
        })
        .collect();
    // secs-pid-stamp: the stamp's first three hex digits are the millisecond (0x000 here).
    let head = |id: &str| {
        id.rsplit_once('-')
            .map(|(h, stamp)| (h.to_string(), stamp[..3].to_string()))
    };
    assert_eq!(
        head(&ids[0]),
        Some(("1767225600-1".into(), "000".into())),
        "{ids:?}"
    );
    assert_eq!(head(&ids[0]), head(&ids[1]), "{ids:?}");
    assert_ne!(ids[0], ids[1], "both runs got id {}", ids[0]);
    let o = command()
        .args(["history", "--store", &store, "--format", "json"])
        .output()
        .unwrap();
    let listed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut kept: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().unwrap())
        .collect();
    kept.sort_unstable();
    let mut want: Vec<&str> = ids.iter().map(String::as_str).collect();
    want.sort_unstable();
    assert_eq!(kept, want, "{listed}");
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// A path that is not UTF-8 cannot travel to a DUT: one line, exit 2, no panic, and the
/// output file it named is not created.
#[test]
fn a_non_utf8_argument_with_dut_is_refused_in_one_line() {
    let tmp = private_tmp("utf8");
    let mut bad = tmp.as_os_str().as_bytes().to_vec();
    bad.extend(b"/out\xff.jsonl");
    let bad = PathBuf::from(std::ffi::OsStr::from_bytes(&bad));
    let o = command()
        .args(["speed", "--dut", "ssh://root@127.0.0.1:1", "--output"])
        .arg(&bad)
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is not UTF-8") && err.trim().lines().count() == 1,
        "{err}"
    );
    assert!(!Path::new(&bad).exists(), "the output file was created");
    std::fs::remove_dir_all(&tmp).unwrap();
}

#[test]
fn a_date_the_calendar_lacks_is_refused() {
    for bad in ["2026-02-30", "2026-04-31", "2025-02-29"] {
        let o = command()
            .args(["history", "--since", bad])
            .output()
            .unwrap();
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
        assert!(
            err.contains("invalid --since") && err.trim().lines().count() == 1,
            "{bad}: {err}"
        );
    }
}

/// --dut-file of a device or a FIFO is refused at once (it took all memory, or blocked
/// until SIGTERM), and a bad line is named by file and line.
#[test]
fn a_dut_file_that_is_no_file_or_has_a_bad_line_is_refused_in_one_line() {
    let tmp = private_tmp("dutfile");
    let fifo = tmp.join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    for (f, want) in [
        (PathBuf::from("/dev/zero"), "not a regular file"),
        (fifo, "not a regular file"),
    ] {
        // Bounded by the test itself: a regression fails here instead of hanging.
        let o = common::output_within(
            command().args(["probe", "--dut-file"]).arg(&f),
            std::time::Duration::from_secs(10),
        );
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{}: {err}", f.display());
        assert!(
            err.contains(want) && err.trim().lines().count() == 1,
            "{err}"
        );
    }
    let list = tmp.join("fleet.txt");
    std::fs::write(&list, "# lab\nssh://root@127.0.0.1:22\n\nftp://nope\n").unwrap();
    let o = command()
        .args(["probe", "--dut-file"])
        .arg(&list)
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("{} line 4", list.display())) && err.trim().lines().count() == 1,
        "{err}"
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// The controller's options without a DUT were ignored, and `cleanup --ssh-option ...`
/// with `--dut` forgotten cleaned this machine: refused before anything runs.
#[test]
fn controller_options_without_a_dut_are_refused() {
    for (args, flag) in [
        (
            vec!["cleanup", "--ssh-option", "BatchMode=yes"],
            "--ssh-option",
        ),
        (
            vec!["speed", "--parallel", "2", "--alg", "sha256"],
            "--parallel",
        ),
        (vec!["probe", "--dut-binary", "/bin/true"], "--dut-binary"),
        (vec!["vpn", "--ssh-option=Port=22"], "--ssh-option"),
    ] {
        let o = command().args(&args).output().unwrap();
        let (out, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?} ran: {out}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains(flag) && err.contains("--dut"),
            "{args:?}: {err}"
        );
    }
}

/// A run dated a year ahead (imported, or from a DUT with a wrong clock) is not `last`:
/// it was `last` forever, and a gate `compare baseline last` judged it every time.
#[test]
fn a_future_dated_run_is_not_last() {
    let dir = common::tempdir(Path::new(env!("CARGO_TARGET_TMPDIR")), "future");
    let store = format!("sqlite:{}", dir.join("s.db").display());
    let last = |store: &str| -> String {
        let o = command()
            .args(["history", "export", "last", "--store", store])
            .output()
            .unwrap();
        let (out, err) = text(&o);
        assert!(o.status.success(), "{err}");
        let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
        v["run_id"].as_str().unwrap().to_string()
    };
    for _ in 0..2 {
        let o = command()
            .args([
                "speed", "--impl", "ring", "--alg", "sha256", "--sizes", "16",
            ])
            .args(["--time", "0.02", "--format", "csv", "--store", &store])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o).1);
    }
    let newest = last(&store);
    // The newest run again, a year ahead, under an id of its own.
    let o = command()
        .args(["history", "export", &newest, "--store", &store])
        .output()
        .unwrap();
    let started = |l: &str| -> Option<u64> {
        serde_json::from_str::<serde_json::Value>(l).ok()?["started_unix"].as_u64()
    };
    let exported = text(&o).0;
    let when = exported
        .lines()
        .find_map(started)
        .expect("an environment line");
    let future_id = format!("{}-1-fffff", when + 365 * 86400);
    let future = exported.replace(&newest, &future_id).replace(
        &format!("\"started_unix\":{when}"),
        &format!("\"started_unix\":{}", when + 365 * 86400),
    );
    assert!(future.contains(&format!("\"started_unix\":{}", when + 365 * 86400)));
    let file = dir.join("future.jsonl");
    std::fs::write(&file, future).unwrap();
    let o = command()
        .args(["history", "import", "--store", &store])
        .arg(&file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    assert_eq!(last(&store), newest);
    // It is stored, and reachable by its id.
    let o = command()
        .args(["history", "export", &future_id, "--store", &store])
        .output()
        .unwrap();
    assert!(o.status.success() && text(&o).0.contains(&future_id));
}

/// SIGTERM while `history trend --plots DIR` writes its charts: DIR keeps what it held
/// and nothing is left beside it (a partial dir looked finished); uninterrupted, every
/// chart is there.
#[test]
fn a_stopped_plots_run_leaves_the_dir_as_it_was() {
    let dir = common::tempdir(Path::new(env!("CARGO_TARGET_TMPDIR")), "plots-stop");
    let store = format!("sqlite:{}", dir.join("s.db").display());
    // 5 runs of 160 points: 160 charts, about half a second of PNG rendering here.
    let sizes: Vec<String> = (1..=40).map(|k| (16 * k).to_string()).collect();
    for _ in 0..5 {
        let o = command()
            .args([
                "speed",
                "--impl",
                "ring,openssl",
                "--alg",
                "aes-128-gcm,sha256",
            ])
            .args(["--direction", "enc", "--sizes", &sizes.join(",")])
            .args(["--time", "0.01", "--target-ci", "0", "--format", "csv"])
            .args(["--store", &store])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o).1);
    }
    let plots = dir.join("plots");
    std::fs::create_dir(&plots).unwrap();
    std::fs::write(plots.join("mine.txt"), "kept").unwrap();
    let staged = || -> Option<PathBuf> {
        std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("cbench-plots-")
            })
    };
    let mut child = command()
        .args(["history", "trend", "--store", &store, "--plots"])
        .arg(&plots)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Stopped once the first chart is staged.
    let t0 = std::time::Instant::now();
    loop {
        let pngs = staged().map_or(0, |s| {
            std::fs::read_dir(s)
                .map(|d| {
                    d.flatten()
                        .filter(|e| e.path().extension().is_some_and(|x| x == "png"))
                        .count()
                })
                .unwrap_or(0)
        });
        if pngs > 0 {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "trend finished before a chart was staged"
        );
        assert!(t0.elapsed().as_secs() < 60, "no chart staged in 60 s");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    let held: Vec<_> = std::fs::read_dir(&plots)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(held, vec![std::ffi::OsString::from("mine.txt")]);
    assert_eq!(staged(), None, "left beside it");
    // Uninterrupted: 160 charts, SVG and PNG, beside the file that was there.
    let o = command()
        .args(["history", "trend", "--store", &store, "--plots"])
        .arg(&plots)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o).1);
    assert_eq!(std::fs::read_dir(&plots).unwrap().count(), 2 * 160 + 1);
    assert_eq!(staged(), None);
}

/// A user name ssh could read as an option, or holding control characters (an ESC would
/// reach the terminal in the message), is refused by the URL parser: one line, exit 2,
/// the message free of control characters.
#[test]
fn a_dut_user_name_like_an_option_or_with_control_characters_is_refused() {
    for url in [
        "ssh://-oProxyCommand=touch@127.0.0.1:1",
        "ssh://-l@127.0.0.1:1",
        "ssh://ro\u{1b}[31mot@127.0.0.1:1",
        "ssh://ro ot@127.0.0.1:1",
    ] {
        let o = command().args(["probe", "--dut", url]).output().unwrap();
        let e = common::one_line_exit_2(&o, url);
        assert!(e.contains("bad user name"), "{url}: {e}");
        assert!(!e.trim_end().contains(char::is_control), "{url}: {e:?}");
    }
}

/// SIGINT while the SSH connection is still being made (a listener that never speaks):
/// the run says it was interrupted and exits 130 at once, not "no SSH connection after
/// 30 s", exit 1.
#[test]
fn sigint_while_connecting_exits_130() {
    // Accepted by the kernel's backlog, never answered: ssh waits for the banner.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "ssh://root@127.0.0.1:{}",
        silent.local_addr().unwrap().port()
    );
    let child = command()
        .args(["probe", "--dut", &url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let sent = std::time::Instant::now();
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let o = child.wait_with_output().unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted while connecting"), "{err}");
    assert!(sent.elapsed().as_secs() < 5, "took {:?}", sent.elapsed());
}

/// A store in a dir others can write: a symlink planted where the store goes is refused
/// (the file it points to untouched), so is a 0777 dir and one of another user, each in
/// one line, exit 2; our own file in a sticky dir such as /tmp is used.
#[test]
fn a_store_in_others_hands_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = common::tempdir(Path::new(env!("CARGO_TARGET_TMPDIR")), "store-hands");
    let mode = |d: &Path, m: u32| std::fs::set_permissions(d, std::fs::Permissions::from_mode(m));
    let store = |d: &Path, file: &str, want: &str| {
        let o = command()
            .args(&QUICK[..QUICK.len() - 1])
            .arg("--store")
            .arg(format!("sqlite:{}", d.join(file).display()))
            .output()
            .unwrap();
        let (_, err) = text(&o);
        match want {
            "" => assert!(o.status.success(), "{err}"),
            _ => assert!(
                o.status.code() == Some(2) && err.contains(want) && err.lines().count() == 1,
                "{err}"
            ),
        }
    };
    let public = dir.join("public");
    std::fs::create_dir(&public).unwrap();
    mode(&public, 0o1777).unwrap();
    let victim = dir.join("victim");
    std::fs::write(&victim, "mine\n").unwrap();
    std::os::unix::fs::symlink(&victim, public.join("results.db")).unwrap();
    store(
        &public,
        "results.db",
        "is a symbolic link in a dir others can write",
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine\n");
    store(&public, "mine.db", "");
    let open = dir.join("open");
    std::fs::create_dir(&open).unwrap();
    mode(&open, 0o777).unwrap();
    store(&open, "results.db", "is writable by others (mode 777)");
    // Another user's dir: only root can make one here.
    mode(&open, 0o755).unwrap();
    match std::os::unix::fs::chown(&open, Some(65534), None) {
        Ok(()) => store(&open, "results.db", "belongs to user 65534"),
        Err(e) => skip(&format!("cannot give a dir to another user here: {e}")),
    }
}

/// A fleet opens its output file and store per DUT only while that DUT runs: opened for
/// every DUT before connecting, 600 DUTs hit the descriptor limit. Here 60 DUTs (closed
/// ports on loopback) under a limit of 40 descriptors: each fails on its connection.
#[test]
fn a_fleet_holds_no_descriptors_per_dut_before_connecting() {
    use std::os::unix::process::CommandExt;
    let tmp = private_tmp("fleet-fds");
    let list = tmp.join("duts");
    let urls: Vec<String> = (1..=60)
        .map(|i| format!("ssh://root@127.0.0.1:{}\n", 40000 + i))
        .collect();
    std::fs::write(&list, urls.concat()).unwrap();
    let mut c = command();
    c.args(&QUICK[..QUICK.len() - 1])
        .arg("--dut-file")
        .arg(&list)
        .arg("--output")
        .arg(tmp.join("out.jsonl"));
    // SAFETY: setrlimit is async-signal-safe; the child has one thread here.
    unsafe {
        c.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 40,
                rlim_max: 40,
            };
            match libc::setrlimit(libc::RLIMIT_NOFILE, &lim) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let o = c.output().unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("Too many open files"), "{err}");
    let refused = err
        .lines()
        .filter(|l| l.contains("Connection refused"))
        .count();
    assert_eq!(refused, 60, "{err}");
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// A fleet interrupted while its first DUT connects: one line for that DUT and one for
/// all those never started (10,000 DUTs printed 10,002 lines), exit 130.
#[test]
fn an_interrupted_fleet_says_not_started_once() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let tmp = private_tmp("fleet-stop");
    let list = tmp.join("duts");
    let urls: Vec<String> = (0..20)
        .map(|i| format!("ssh://u{i}@127.0.0.1:{port}\n"))
        .collect();
    std::fs::write(&list, urls.concat()).unwrap();
    let child = command()
        .args(QUICK)
        .args(["--parallel", "1", "--dut-file"])
        .arg(&list)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: signalling the child we started, by its PID.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let o = child.wait_with_output().unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(130), "{err}");
    let said: Vec<&str> = err.lines().filter(|l| l.contains("not started")).collect();
    assert_eq!(said.len(), 1, "{err}");
    assert!(
        said[0].ends_with("DUT(s) not started: the run was interrupted"),
        "{err}"
    );
    assert!(err.lines().count() <= 4, "{err}");
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// A line far longer than any record is passed over, not held: `report` of a file with a
/// 256 MiB line keeps its peak memory (the kernel's count for that process) far below it,
/// and reads the good line after it.
#[test]
// libc::wait4 reaps the child, for its own resource usage, which Child::wait would lose.
#[allow(clippy::zombie_processes)]
fn a_huge_bad_line_is_not_held_in_memory() {
    use std::io::Write;
    let tmp = private_tmp("huge");
    let file = tmp.join("huge.jsonl");
    let good = std::fs::read_to_string(common::fixture("vpn-openvpn-short.jsonl")).unwrap();
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&file).unwrap());
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..256 {
            f.write_all(&chunk).unwrap();
        }
        f.write_all(b"\n").unwrap();
        f.write_all(good.as_bytes()).unwrap();
    }
    let mut child = command()
        .args(["report", "--format", "json"])
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).unwrap();
        s
    });
    // wait4 on this child alone: its own peak resident set, not another test's.
    let pid = child.id() as libc::pid_t;
    let (mut status, mut usage) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
    // SAFETY: status and usage are valid for writes; pid is our child, not waited yet.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "{}", std::io::Error::last_os_error());
    let out = out.join().unwrap();
    let peak_mib = usage.ru_maxrss as f64 / 1024.0;
    eprintln!("report of a 256 MiB line: peak RSS {peak_mib:.1} MiB");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "status {status}"
    );
    // The good line after it was read.
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(
        v["records"].as_array().is_some_and(|r| !r.is_empty()),
        "{out}"
    );
    assert!(
        peak_mib < 64.0,
        "peak RSS {peak_mib:.1} MiB: the line was held"
    );
    std::fs::remove_dir_all(&tmp).unwrap();
}
