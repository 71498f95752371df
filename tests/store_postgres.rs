//! The shared store on a real PostgreSQL server (Debian's postgresql package), started by
//! the test with initdb/pg_ctl in a temporary directory as an unprivileged user, on a free
//! loopback port, and stopped and removed afterwards even when the test fails.

mod common;

use common::postgres::{Server, PASSWORD};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn cryptobench(home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cryptobench"));
    c.args(args)
        .env("XDG_DATA_HOME", home)
        .env_remove("CRYPTOBENCH_STORE");
    c
}

fn ok(o: Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn run_lines(file: &Path) -> (String, Vec<String>) {
    let text = std::fs::read_to_string(file).unwrap();
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let env: Value = serde_json::from_str(&lines[0]).unwrap();
    (env["run_id"].as_str().unwrap().to_string(), lines)
}

#[test]
fn four_speed_processes_write_at_once_without_losing_or_doubling_a_point() {
    let Some(pg) = Server::start("four") else {
        return;
    };
    let url = pg.url();
    let home = pg.dir.join("home");
    let outs: Vec<PathBuf> = (0..4).map(|i| pg.dir.join(format!("w{i}.jsonl"))).collect();
    let children: Vec<_> = outs
        .iter()
        .map(|out| {
            cryptobench(
                &home,
                &[
                    "speed",
                    "--time",
                    "0.02",
                    "--impl",
                    "openssl",
                    "--alg",
                    "aes-128-gcm,chacha20-poly1305",
                    "--sizes",
                    "16,64,256,1k",
                    "--store",
                    &url,
                    "--output",
                    out.to_str().unwrap(),
                ],
            )
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    for c in children {
        ok(c.wait_with_output().unwrap());
    }
    let list: Value = serde_json::from_str(&ok(cryptobench(
        &home,
        &["history", "--store", &url, "--format", "json"],
    )
    .output()
    .unwrap()))
    .unwrap();
    let rows = list.as_array().unwrap();
    assert_eq!(rows.len(), 4, "{list}");
    let mut total = 0;
    for out in &outs {
        let (id, lines) = run_lines(out);
        let records = lines.len() - 2;
        let row = rows
            .iter()
            .find(|r| r["run_id"] == id.as_str())
            .expect("each run is listed");
        assert_eq!(row["points"], records as i64, "{row}");
        total += records;
        // Every point once, in order, exactly as written to --output.
        let exported = ok(
            cryptobench(&home, &["history", "--store", &url, "export", &id])
                .output()
                .unwrap(),
        );
        common::same_lines(&exported, &lines.join("\n"));
        assert!(
            !exported.contains(PASSWORD),
            "the password is masked in the recorded command line"
        );
    }
    eprintln!("concurrent writers: 4 runs, {total} points in the store, {total} in the files");
    assert_eq!(total, 4 * 16);
}

#[test]
fn a_server_stopped_mid_run_leaves_a_spool_that_import_pushes() {
    let Some(pg) = Server::start("stopped") else {
        return;
    };
    let url = pg.url();
    let home = pg.dir.join("home");
    let out = pg.dir.join("run.jsonl");
    let child = cryptobench(
        &home,
        &[
            "speed",
            "--time",
            "0.03",
            "--impl",
            "openssl",
            "--alg",
            "aes-128-gcm,chacha20-poly1305,aes-256-gcm",
            "--sizes",
            "16,64,256,1k,4k,16k",
            "--store",
            &url,
            "--output",
            out.to_str().unwrap(),
        ],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // Stop the server once a few points are in.
    let t0 = Instant::now();
    while std::fs::read_to_string(&out).map_or(0, |t| t.lines().count()) < 4 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no points after 60 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    pg.stop("fast");
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(
        o.status.code(),
        Some(0),
        "the run goes on and succeeds: {err}"
    );
    assert_eq!(err.matches("unreachable").count(), 1, "said once: {err}");
    assert!(!err.contains(PASSWORD), "{err}");
    let (id, lines) = run_lines(&out);
    assert_eq!(lines.len(), 36 + 2, "every point measured into --output");
    let spool = home.join(format!("cryptobench/spool/{id}.jsonl"));
    assert!(spool.exists(), "{err}");
    pg.pg_ctl_start();
    let before: Value = serde_json::from_str(&ok(cryptobench(
        &home,
        &["history", "--store", &url, "--format", "json"],
    )
    .output()
    .unwrap()))
    .unwrap();
    let stored_before = before[0]["points"].as_i64().unwrap();
    assert!(
        stored_before < 36,
        "the server stopped mid-run: {stored_before}"
    );
    let msg = ok(cryptobench(&home, &["history", "--store", &url, "import"])
        .output()
        .unwrap());
    assert!(
        msg.contains(&format!("{} new point(s) of", 36 - stored_before)),
        "{msg}"
    );
    assert!(!spool.exists(), "an imported spool is removed");
    let exported = ok(
        cryptobench(&home, &["history", "--store", &url, "export", &id])
            .output()
            .unwrap(),
    );
    common::same_lines(&exported, &lines.join("\n"));
    eprintln!("server stopped mid-run: exit 0, {stored_before} points in the store at the stop, {} pushed by import, 36 in all", 36 - stored_before);
}

#[test]
fn a_failed_login_is_one_line_with_the_password_masked() {
    let Some(pg) = Server::start("login") else {
        return;
    };
    let home = pg.dir.join("home");
    let bad = pg.url().replace(PASSWORD, "wrong-pw");
    let out = pg.dir.join("never.jsonl");
    let o = cryptobench(
        &home,
        &[
            "speed",
            "--time",
            "0.02",
            "--alg",
            "aes-128-gcm",
            "--store",
            &bad,
            "--output",
            out.to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("login to store") && err.contains("bench:***@") && !err.contains("wrong-pw"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
    assert!(!out.exists());
    // The password from ~/.pgpass when the URL has none.
    std::fs::create_dir_all(&home).unwrap();
    let pgpass = home.join("pgpass");
    std::fs::write(
        &pgpass,
        format!("127.0.0.1:{}:*:bench:{PASSWORD}\n", pg.port),
    )
    .unwrap();
    let no_pw = format!("postgresql://bench@127.0.0.1:{}/postgres", pg.port);
    ok(cryptobench(&home, &["history", "--store", &no_pw])
        .env("PGPASSFILE", &pgpass)
        .output()
        .unwrap());
}
