//! The local store (SQLite): every run kept point by point, `history` to list, show, tag,
//! export, import and remove, and `report` reading runs by id, tag or `last`.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A private data directory per test: the default store lives in it.
struct Home(PathBuf);

impl Home {
    fn new(name: &str) -> Home {
        let d =
            std::env::temp_dir().join(format!("cryptobench-store-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Home(d)
    }
    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_cryptobench"))
            .args(args)
            .env("XDG_DATA_HOME", &self.0)
            .env_remove("CRYPTOBENCH_STORE")
            .output()
            .expect("binary runs")
    }
    fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }
    fn db(&self) -> PathBuf {
        self.0.join("cryptobench/results.db")
    }
    /// One quick speed run into the store and `out`; its run id.
    fn speed(&self, out: &Path) -> String {
        self.ok(&[
            "speed",
            "--time",
            "0.02",
            "--impl",
            "openssl",
            "--alg",
            "aes-128-gcm",
            "--sizes",
            "64,1k",
            "--output",
            out.to_str().unwrap(),
        ]);
        run_id(&std::fs::read_to_string(out).unwrap())
    }
}

impl Home {
    /// `run` with the store `--store sqlite:PATH` prepended to the arguments after the
    /// subcommand.
    fn at(&self, db: &Path, args: &[&str]) -> Output {
        let store = format!("sqlite:{}", db.display());
        let mut all = vec![args[0], "--store", &store];
        all.extend_from_slice(&args[1..]);
        self.run(&all)
    }
    /// `at`, which must fail with exit 2 and one line; the line.
    fn refused_at(&self, db: &Path, args: &[&str]) -> String {
        let o = self.at(db, args);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        err
    }
    fn ok_at(&self, db: &Path, args: &[&str]) -> String {
        let o = self.at(db, args);
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run_id(jsonl: &str) -> String {
    let last_env = jsonl
        .lines()
        .rfind(|l| l.contains("\"kind\":\"environment\""))
        .unwrap();
    let v: Value = serde_json::from_str(last_env).unwrap();
    v["run_id"].as_str().unwrap().to_string()
}

/// The lines of one run in a JSON Lines file, in order.
fn lines_of(jsonl: &str, id: &str) -> Vec<String> {
    jsonl
        .lines()
        .filter(|l| l.contains(&format!("\"run_id\":\"{id}\"")))
        .map(str::to_string)
        .collect()
}

#[test]
fn history_lists_three_runs_with_their_points_and_the_file_is_private() {
    let home = Home::new("three");
    let mut ids = Vec::new();
    for i in 0..3 {
        let out = home.0.join(format!("run{i}.jsonl"));
        ids.push(home.speed(&out));
        std::thread::sleep(std::time::Duration::from_millis(1100));
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(home.db()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the store is readable by its owner only");
    let list: Value = serde_json::from_str(&home.ok(&["history", "--format", "json"])).unwrap();
    let rows = list.as_array().unwrap();
    assert_eq!(rows.len(), 3);
    // Newest first, each with its 4 points (2 sizes x enc,dec), finished, one machine.
    let listed: Vec<&str> = rows.iter().map(|r| r["run_id"].as_str().unwrap()).collect();
    let mut newest_first = ids.clone();
    newest_first.reverse();
    assert_eq!(listed, newest_first);
    for r in rows {
        assert_eq!(r["points"], 4, "{r}");
        assert_eq!(r["interrupted"], false);
        assert_eq!(r["workload"], "speed");
        assert_eq!(r["machine_id"], rows[0]["machine_id"]);
    }
    let table = home.ok(&["history"]);
    assert!(
        table.contains("3 run(s)") && table.contains(&ids[0]),
        "{table}"
    );
    // Filters.
    let tagged = home.ok(&["history", "tag", &ids[1], "baseline"]);
    assert!(tagged.contains(&ids[1]));
    let by_tag: Value =
        serde_json::from_str(&home.ok(&["history", "--tag", "baseline", "--format", "json"]))
            .unwrap();
    assert_eq!(by_tag.as_array().unwrap().len(), 1);
    let none: Value =
        serde_json::from_str(&home.ok(&["history", "--workload", "tls", "--format", "json"]))
            .unwrap();
    assert_eq!(none.as_array().unwrap().len(), 0);
    let machine = rows[0]["machine_id"].as_str().unwrap();
    let mine: Value = serde_json::from_str(&home.ok(&[
        "history",
        "--machine",
        &machine[..4],
        "--since",
        "1d",
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(mine.as_array().unwrap().len(), 3);
    let future: Value =
        serde_json::from_str(&home.ok(&["history", "--since", "2999-01-01", "--format", "json"]))
            .unwrap();
    assert_eq!(future.as_array().unwrap().len(), 0);
    // report reads the store by tag and `last`, the same numbers as the file.
    let by_store = home.ok(&["report", "baseline", "--format", "csv"]);
    let by_file = home.ok(&[
        "report",
        home.0.join("run1.jsonl").to_str().unwrap(),
        "--format",
        "csv",
    ]);
    assert_eq!(by_store, by_file);
    let last = home.ok(&["history", "show", "last", "--format", "csv"]);
    assert_eq!(
        last,
        home.ok(&[
            "report",
            home.0.join("run2.jsonl").to_str().unwrap(),
            "--format",
            "csv"
        ])
    );
    // Several runs per side: `last:N` and comma lists, each run kept apart.
    let cmp: Value = serde_json::from_str(&home.ok(&[
        "compare",
        &format!("{},{}", ids[0], ids[1]),
        "last:2",
        "--format",
        "json",
    ]))
    .unwrap();
    let text = cmp.to_string();
    for id in &ids {
        assert!(text.contains(id.as_str()), "{id} not in {text}");
    }
    let two = home.ok(&["report", "last:2", "--format", "csv"]);
    assert!(two.contains(&ids[1]) && two.contains(&ids[2]) && !two.contains(&ids[0]));
    for bad in ["last:0", "last:x", "last:4"] {
        let o = home.run(&["compare", bad, "last"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
        assert!(err.contains(bad) && err.lines().count() == 1, "{err}");
    }
    // An unknown run lists the nearest ids.
    let o = home.run(&["history", "show", &format!("{}9", ids[2])]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("nearest") && err.contains(&ids[2]) && err.lines().count() == 1,
        "{err}"
    );
    // rm of a tagged run asks for --force, then removes the run and its tag.
    let o = home.run(&["history", "rm", "baseline"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("baseline") && err.contains("--force"), "{err}");
    home.ok(&["history", "rm", "baseline", "--force"]);
    let after: Value = serde_json::from_str(&home.ok(&["history", "--format", "json"])).unwrap();
    assert_eq!(after.as_array().unwrap().len(), 2);
    assert_eq!(
        home.run(&["history", "show", "baseline"]).status.code(),
        Some(2)
    );
}

#[test]
fn export_and_import_round_trip_exactly_without_doubling() {
    let home = Home::new("roundtrip");
    let out = home.0.join("run.jsonl");
    let id = home.speed(&out);
    let file = std::fs::read_to_string(&out).unwrap();
    let exported = home.ok(&["history", "export", &id]);
    let exported_lines: Vec<String> = exported.lines().map(str::to_string).collect();
    // Exactly the lines --output wrote: environment, 4 records, end.
    common::same_lines(&exported, &lines_of(&file, &id).join("\n"));
    assert_eq!(exported_lines.len(), 6);
    let f = home.0.join("exported.jsonl");
    std::fs::write(&f, &exported).unwrap();
    let other = format!("sqlite:{}", home.0.join("other.db").display());
    let msg = home.ok(&["history", "--store", &other, "import", f.to_str().unwrap()]);
    assert!(msg.contains("1 run(s), 4 new point(s) of 4"), "{msg}");
    common::same_lines(
        &home.ok(&["history", "--store", &other, "export", &id]),
        &exported,
    );
    // Importing again adds nothing.
    let again = home.ok(&["history", "--store", &other, "import", f.to_str().unwrap()]);
    assert!(again.contains("0 new point(s) of 4"), "{again}");
    let rows: Value =
        serde_json::from_str(&home.ok(&["history", "--store", &other, "--format", "json"]))
            .unwrap();
    assert_eq!(rows[0]["points"], 4);
}

#[test]
fn bad_stores_are_refused_before_measuring() {
    let home = Home::new("bad");
    let out = home.0.join("never.jsonl");
    for (store, want) in [
        ("mysql://bench:hunter2@db/x", "sqlite:PATH"),
        (
            "postgresql://bench:hunter2@127.0.0.1:1/x",
            "cannot reach store",
        ),
    ] {
        let o = home.run(&[
            "speed",
            "--time",
            "0.02",
            "--alg",
            "aes-128-gcm",
            "--store",
            store,
            "--output",
            out.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains(want) && err.contains("bench:***@") && !err.contains("hunter2"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            !out.exists(),
            "nothing is written before the store is checked"
        );
    }
    // A store written by a newer cryptobench is refused with its version.
    let db = home.0.join("newer.db");
    home.ok(&[
        "history",
        "--store",
        &format!("sqlite:{}", db.display()),
        "import",
    ]);
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute("INSERT INTO schema_version (version) VALUES (99)", [])
        .unwrap();
    drop(conn);
    let o = home.run(&["history", "--store", &format!("sqlite:{}", db.display())]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("schema version 99") && err.contains("upgrade cryptobench"),
        "{err}"
    );
    // --no-store keeps nothing.
    home.ok(&[
        "speed",
        "--time",
        "0.02",
        "--impl",
        "openssl",
        "--alg",
        "aes-128-gcm",
        "--sizes",
        "64",
        "--no-store",
    ]);
    assert!(!home.db().exists());
}

#[test]
fn report_machines_puts_each_machines_newest_run_side_by_side() {
    let h = Home::new("machines");
    let out = h.0.join("m.jsonl");
    h.speed(&out);
    // The store orders runs by their start, in whole seconds (then by run id): the newer
    // run starts in a later second, as history_lists_three_runs' runs do.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let newest = h.speed(&out);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string();
    let text = h.ok(&["report", "--machines", &host]);
    assert!(text.contains("Machines side by side"), "{text}");
    let v: Value =
        serde_json::from_str(&h.ok(&["report", "--machines", &host, "--format", "json"])).unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 1);
    assert_eq!(
        v["runs"][0]["run_id"],
        newest.as_str(),
        "the newest run is the one shown"
    );
    let side: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Machines side by side"))
        .collect();
    assert!(
        side.iter()
            .any(|l| l.contains("aes-128-gcm") && l.contains("1024")),
        "{text}"
    );
    let o = h.run(&["report", "--machines", "no-such-machine"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no-such-machine"));
}

/// The run ids a `history --format json` listing holds.
fn listed(json: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(json).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_run_id_wins_over_a_tag_and_rm_of_a_tagged_run_asks_for_force() {
    let home = Home::new("tags");
    let a = home.speed(&home.0.join("a.jsonl"));
    let z = home.speed(&home.0.join("z.jsonl"));
    // Naming run A after run Z would make `rm Z` delete A.
    let o = home.run(&["history", "tag", &a, &z]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("run id") && err.lines().count() == 1, "{err}");
    let long = "t".repeat(65);
    for bad in [
        "last", "last:2", "a,b", "a b", "a\tb", "a\u{7}b", "17-4", &long, "",
    ] {
        let o = home.run(&["history", "tag", &a, bad]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {err}");
        assert!(
            err.contains("invalid tag") && err.lines().count() == 1,
            "{bad:?}: {err}"
        );
    }
    // A run imported under a name already used as a tag would take the tag's place
    // (`compare nightly last`, `history rm nightly --force`): refused, one line, exit 2,
    // and so are ids that cannot be named (`last`, a list, a control character).
    home.ok(&["history", "tag", &a, "nightly"]);
    let z_file = std::fs::read_to_string(home.0.join("z.jsonl")).unwrap();
    for bad in ["nightly", "last", "a,b", "", "x\u{1b}[2J", "trailing "] {
        let renamed = z_file.replace(
            &format!("\"run_id\":\"{z}\""),
            &format!("\"run_id\":{}", serde_json::json!(bad)),
        );
        let f = home.0.join("renamed.jsonl");
        std::fs::write(&f, &renamed).unwrap();
        let o = home.run(&["history", "import", f.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {err}");
        assert!(
            err.contains("invalid run id") && err.lines().count() == 1,
            "{bad:?}: {err}"
        );
    }
    let shown = home.ok(&["history", "show", "nightly", "--format", "json"]);
    assert!(shown.contains(&a), "the tag still names its run: {shown}");
    // The same id from another machine is a conflict, not "0 new points".
    let other = z_file.replace("\"hostname\":\"", "\"hostname\":\"other-");
    assert_ne!(other, z_file);
    let f = home.0.join("other.jsonl");
    std::fs::write(&f, &other).unwrap();
    let o = home.run(&["history", "import", f.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("conflicts with the stored run") && err.contains("another machine"),
        "{err}"
    );
    let left = listed(&home.ok(&["history", "--format", "json"]));
    assert!(
        left.contains(&a) && left.contains(&z) && left.len() == 2,
        "{left:?}"
    );
    // rm of a tagged run names the tag and asks for --force; nothing is removed before.
    let o = home.run(&["history", "rm", &a]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("nightly") && err.contains("--force") && err.lines().count() == 1,
        "{err}"
    );
    assert_eq!(listed(&home.ok(&["history", "--format", "json"])).len(), 2);
    let removed = home.ok(&["history", "rm", "nightly", "--force"]);
    assert!(removed.contains(&a), "{removed}");
    assert_eq!(
        listed(&home.ok(&["history", "--format", "json"])),
        vec![z.clone()]
    );
}

#[test]
fn a_run_read_or_imported_twice_is_counted_once() {
    let home = Home::new("dup");
    let base = home.0.join("base.jsonl");
    let id = home.speed(&base);
    let text = std::fs::read_to_string(&base).unwrap();
    let dup = home.0.join("dup.jsonl");
    std::fs::write(&dup, format!("{text}{text}")).unwrap();
    let (b, d) = (base.to_str().unwrap(), dup.to_str().unwrap());
    // The reader: 4 records, each repeated line reported as skipped.
    let o = home.run(&["report", d, "--format", "json"]);
    assert!(o.status.success());
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["records"].as_array().unwrap().len(), 4);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("duplicate").count(), 4, "{err}");
    // compare: the same trials and interval as the file read once.
    let once: Value =
        serde_json::from_str(&home.ok(&["compare", b, b, "--format", "json"])).unwrap();
    let twice: Value =
        serde_json::from_str(&home.ok(&["compare", d, d, "--format", "json"])).unwrap();
    assert_eq!(once["pairs"].as_array().unwrap().len(), 4);
    assert_eq!(twice["pairs"].as_array().unwrap().len(), 4, "{twice}");
    for (p, q) in once["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .zip(twice["pairs"].as_array().unwrap())
    {
        assert_eq!(p["base_trials"], q["new_trials"], "{q}");
        assert_eq!(p["ratio_ci"], q["ratio_ci"], "{q}");
    }
    // The store: 4 points, whether the run comes twice in one file, twice, or reordered.
    let other = home.0.join("other.db");
    let msg = home.ok_at(&other, &["history", "import", d]);
    assert!(msg.contains("4 new point(s) of 4"), "{msg}");
    let mut reordered: Vec<&str> = text.lines().collect();
    reordered[1..5].reverse();
    let r = home.0.join("reordered.jsonl");
    std::fs::write(&r, reordered.join("\n") + "\n").unwrap();
    let again = home.ok_at(&other, &["history", "import", b, r.to_str().unwrap()]);
    assert_eq!(again.matches("0 new point(s) of 4").count(), 2, "{again}");
    let rows: Value =
        serde_json::from_str(&home.ok_at(&other, &["history", "--format", "json"])).unwrap();
    assert_eq!(rows[0]["points"], 4);
    let exported = home.ok_at(&other, &["history", "export", &id]);
    common::same_lines(&exported, &lines_of(&text, &id).join("\n"));
}

/// Stores one run in `db` (the database made by an import, a writing command).
fn store_with_one_run(home: &Home, db: &Path) -> String {
    let out = home.0.join("one.jsonl");
    let id = home.speed(&out);
    home.ok_at(db, &["history", "import", out.to_str().unwrap()]);
    id
}

#[test]
fn a_read_only_store_is_read_by_another_user() {
    let home = Home::new("readonly");
    let dir = home.0.join("shared");
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("runs.db");
    let id = store_with_one_run(&home, &db);
    use std::os::unix::fs::PermissionsExt;
    let before = std::fs::read(&db).unwrap();
    let store = format!("sqlite:{}", db.display());
    // Root reads anything: then read as nobody a root-owned 0644 file in a 0755
    // directory; otherwise the owner reads it with no write permission anywhere.
    let reader = |args: &[&str]| -> Output {
        let mut c = if common::is_root() {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(env!("CARGO_BIN_EXE_cryptobench"));
            c
        } else {
            Command::new(env!("CARGO_BIN_EXE_cryptobench"))
        };
        c.args(args)
            .env("XDG_DATA_HOME", &home.0)
            .env_remove("CRYPTOBENCH_STORE")
            .output()
            .expect("runs")
    };
    if common::is_root() {
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&home.0, std::fs::Permissions::from_mode(0o755)).unwrap();
    } else {
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o444)).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    }
    let check = |what: &str| {
        for args in [
            vec!["history", "--store", &store, "--format", "json"],
            vec![
                "history", "--store", &store, "show", "last", "--format", "csv",
            ],
            vec!["report", "last", "--store", &store, "--format", "csv"],
            vec![
                "compare", "last", &id, "--store", &store, "--format", "json",
            ],
        ] {
            let o = reader(&args);
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(o.status.success(), "{what}: {args:?}: {err}");
            assert!(
                String::from_utf8_lossy(&o.stdout).contains(&id),
                "{what}: {args:?}"
            );
        }
    };
    check("read-only");
    // An immutable file (chattr +i), where the file system has the attribute.
    let immutable = Command::new("chattr").arg("+i").arg(&db).status();
    if immutable.is_ok_and(|s| s.success()) {
        check("immutable");
        let _ = Command::new("chattr").arg("-i").arg(&db).status();
    } else {
        common::skip(
            "chattr +i does not work on this file system: the immutable case is not checked here",
        );
    }
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "reading changed the store"
    );
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let journals: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        journals.len(),
        1,
        "reading left files beside the store: {journals:?}"
    );
}

#[test]
fn reading_commands_never_create_a_store_and_other_databases_are_refused() {
    let home = Home::new("paths");
    let missing_dir = home.0.join("nonexistent/dir");
    let missing = missing_dir.join("x.db");
    for args in [
        vec!["history"],
        vec!["history", "show", "last"],
        vec!["history", "export", "last"],
        vec!["history", "tag", "last", "baseline"],
        vec!["history", "rm", "last"],
        vec!["report", "last"],
        vec!["compare", "last", "last"],
    ] {
        let err = home.refused_at(&missing, &args);
        assert!(
            err.contains("nonexistent/dir/x.db") && err.contains("check the path"),
            "{args:?}: {err}"
        );
        assert!(
            !missing_dir.exists(),
            "{args:?} created {}",
            missing_dir.display()
        );
    }
    // A relative path is not created either.
    let o = Command::new(env!("CARGO_BIN_EXE_cryptobench"))
        .args(["history", "--store", "sqlite:relative.db"])
        .current_dir(&home.0)
        .env("XDG_DATA_HOME", &home.0)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(!home.0.join("relative.db").exists());
    // A database of another program: refused in one short line, left as it was.
    let run = home.0.join("run.jsonl");
    home.speed(&run);
    let run = run.to_str().unwrap();
    for (file, table) in [
        ("clash.db", "CREATE TABLE runs (id INTEGER PRIMARY KEY, what TEXT NOT NULL, a REAL, b REAL, c REAL)"),
        ("other.db", "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)"),
    ] {
        let db = home.0.join(file);
        rusqlite::Connection::open(&db).unwrap().execute(table, []).unwrap();
        let before = std::fs::read(&db).unwrap();
        for args in [vec!["history", "import", run], vec!["history"]] {
            let err = home.refused_at(&db, &args);
            assert!(
                err.contains("not a cryptobench store") && err.contains(file) && err.len() < 200,
                "{args:?}: {err}"
            );
        }
        let o = home.run(&[
            "speed", "--time", "0.02", "--impl", "openssl", "--alg", "aes-128-gcm",
            "--sizes", "64", "--store", &format!("sqlite:{}", db.display()),
        ]);
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(std::fs::read(&db).unwrap(), before, "{file} was changed");
    }
    // A store gets cryptobench's application id; one made before it had one is read,
    // and stamped by the next writing command.
    let db = home.0.join("ours.db");
    home.ok_at(&db, &["history", "import", run]);
    let app_id = |db: &Path| -> i64 {
        rusqlite::Connection::open(db)
            .unwrap()
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(app_id(&db), 0x6362_7374);
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("PRAGMA application_id = 0")
        .unwrap();
    assert_eq!(
        listed(&home.ok_at(&db, &["history", "--format", "json"])).len(),
        1
    );
    assert_eq!(app_id(&db), 0, "reading stamps nothing");
    home.ok_at(&db, &["history", "import", run]);
    assert_eq!(app_id(&db), 0x6362_7374);
}

#[test]
fn importing_a_file_without_runs_is_bad_input() {
    let home = Home::new("garbage");
    let db = home.0.join("x.db");
    let garbage = home.0.join("garbage.jsonl");
    std::fs::write(&garbage, "hello\n\u{0}\u{1}binary\nnot json at all\n").unwrap();
    let document = home.0.join("run.json");
    std::fs::write(
        &document,
        "{\n  \"environment\": {},\n  \"records\": []\n}\n",
    )
    .unwrap();
    let empty = home.0.join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    // Runs whose environments read and whose every record is cut short: no empty
    // "finished" run is stored.
    let unreadable = home.0.join("unreadable.jsonl");
    let fixture = std::fs::read_to_string(common::fixture("schema1-mixed.jsonl")).unwrap();
    let cut: Vec<&str> = fixture
        .lines()
        .map(|l| {
            if l.contains("\"kind\":\"record\"") {
                &l[..l.len() / 2]
            } else {
                l
            }
        })
        .collect();
    std::fs::write(&unreadable, cut.join("\n") + "\n").unwrap();
    for f in [&garbage, &document, &empty, &unreadable] {
        let f = f.to_str().unwrap();
        let err = home.refused_at(&db, &["history", "import", f]);
        assert!(err.contains("no records") && err.contains(f), "{err}");
        home.refused_at(&db, &["report", f]);
    }
    let err = home.refused_at(&db, &["history", "import", unreadable.to_str().unwrap()]);
    assert!(
        err.contains("5 unreadable line(s), the first: line 2"),
        "{err}"
    );
    assert!(!db.exists(), "nothing was imported, so no store was made");
}

/// The listing writes table, json or markdown; any other format is
/// refused in one line (exit 2), not printed as a table.
#[test]
fn history_refuses_formats_it_cannot_write() {
    let home = Home::new("formats");
    let db = home.0.join("runs.db");
    store_with_one_run(&home, &db);
    for f in ["html", "openssl", "csv"] {
        let err = home.refused_at(&db, &["history", "--format", f]);
        assert!(
            err.contains(&format!(
                "--format {f}: history writes table, json, markdown"
            )),
            "{err}"
        );
    }
    for f in ["table", "json", "markdown"] {
        home.ok_at(&db, &["history", "--format", f]);
    }
}
