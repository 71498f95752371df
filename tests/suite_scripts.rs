//! The test suite's own scripts, where a mistake would not fail a test but make the suite
//! test the wrong thing: scripts/source-mtimes gives a clean clone the mtimes of the last
//! build only for files whose content that build saw, and only when nothing was built
//! in the build dir since; scripts/test-lanes kills and fails a test binary that hangs.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

fn mtime(p: &Path) -> SystemTime {
    std::fs::metadata(p).unwrap().modified().unwrap()
}

fn set_mtime(p: &Path, t: SystemTime) {
    // Read-only, so that a directory opens too: its owner may set its times.
    std::fs::File::open(p).unwrap().set_modified(t).unwrap();
}

/// scripts/source-mtimes ACTION in `repo`; its stderr.
fn source_mtimes(repo: &Path, action: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/source-mtimes");
    let o = Command::new(script)
        .args([action, "state.json", "target"])
        .current_dir(repo)
        .output()
        .expect("python3 runs scripts/source-mtimes");
    assert!(o.status.success(), "{action}: {}", common::stderr(&o));
    common::stderr(&o)
}

#[test]
fn a_clean_clone_gets_the_last_builds_mtimes_only_for_unchanged_files() {
    let repo = common::tempdir(Path::new(env!("CARGO_TARGET_TMPDIR")), "source-mtimes");
    let git = |args: &[&str]| {
        let o = Command::new("git")
            .args(args)
            .current_dir(&repo)
            .output()
            .unwrap();
        assert!(o.status.success(), "git {args:?}: {}", common::stderr(&o));
    };
    git(&["init", "-q"]);
    let (src, lib) = (repo.join("src"), repo.join("lib"));
    let (same, changed, kept) = (
        src.join("same.rs"),
        src.join("changed.rs"),
        lib.join("a.rs"),
    );
    std::fs::create_dir_all(&src).unwrap();
    std::fs::create_dir_all(&lib).unwrap();
    std::fs::write(&same, "fn a() {}\n").unwrap();
    std::fs::write(&changed, "fn b() {}\n").unwrap();
    std::fs::write(&kept, "fn c() {}\n").unwrap();
    git(&["add", "src", "lib"]);
    let fingerprint = repo.join("target/release/.fingerprint/cryptobench-0123/lib-cryptobench");
    std::fs::create_dir_all(fingerprint.parent().unwrap()).unwrap();
    std::fs::write(&fingerprint, "0123").unwrap();
    let built = SystemTime::now() - Duration::from_secs(3600);
    for p in [&same, &changed, &kept, &src, &lib] {
        set_mtime(p, built);
    }
    source_mtimes(&repo, "record");

    // The next clone: everything checked out now; one file changed, one file added.
    let checkout = SystemTime::now();
    std::fs::write(&changed, "fn b() { let _ = 1; }\n").unwrap();
    std::fs::write(lib.join("new.rs"), "fn d() {}\n").unwrap();
    git(&["add", "lib/new.rs"]);
    for p in [&same, &changed, &kept, &src, &lib] {
        set_mtime(p, checkout);
    }
    let said = source_mtimes(&repo, "restore");
    assert!(
        said.contains("2 unchanged files and 1 directories"),
        "{said}"
    );
    assert_eq!(
        mtime(&same),
        built,
        "an unchanged file has the build's mtime"
    );
    assert_eq!(mtime(&kept), built);
    assert_eq!(
        mtime(&changed),
        checkout,
        "a changed file keeps its checkout time"
    );
    assert_eq!(mtime(&src), built, "a directory holding the same names");
    assert_eq!(mtime(&lib), checkout, "a directory with a file added");

    // Built in since the record (a fingerprint newer than the recorded one): nothing is
    // restored, since the outputs may come from other sources.
    set_mtime(&same, checkout);
    std::fs::write(&fingerprint, "4567").unwrap();
    let said = source_mtimes(&repo, "restore");
    assert!(said.contains("built in since the record"), "{said}");
    assert_eq!(mtime(&same), checkout);

    // No record at all: nothing restored either.
    std::fs::remove_file(repo.join("state.json")).unwrap();
    let said = source_mtimes(&repo, "restore");
    assert!(said.contains("no record of the last build"), "{said}");
    assert_eq!(mtime(&same), checkout);
}

/// scripts/test-lanes fails a test binary that hangs, by name, with what it had printed,
/// and kills it: the suite goes on instead of stalling until CI's own limit.
#[test]
fn a_hanging_test_binary_is_killed_and_failed_by_name() {
    let dir = common::tempdir(Path::new(env!("CARGO_TARGET_TMPDIR")), "test-lanes");
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"lanes\"\nversion = \"0.0.0\"\nedition = \"2021\"\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(dir.join("src/lib.rs"), "").unwrap();
    std::fs::write(dir.join("tests/quick.rs"), "#[test]\nfn quick() {}\n").unwrap();
    // It leaves a mark for each second it lives: none may appear after the kill.
    std::fs::write(
        dir.join("tests/hangs.rs"),
        "#[test]\nfn hangs() {\n    for i in 0..600 {\n        std::fs::write(format!(\"{}/alive-{i}\", env!(\"CARGO_MANIFEST_DIR\")), \"\").unwrap();\n        std::thread::sleep(std::time::Duration::from_secs(1));\n    }\n}\n",
    )
    .unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/test-lanes");
    let start = std::time::Instant::now();
    let o = common::output_within(
        Command::new(script)
            .arg("--manifest-path")
            .arg(dir.join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", dir.join("target"))
            .env("XDG_CACHE_HOME", dir.join("cache"))
            .env("CRYPTOBENCH_TEST_LIMIT", "3"),
        Duration::from_secs(240),
    );
    let took = start.elapsed();
    let (out, err) = common::text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(
        out.contains("test-lanes: hangs still ran after 3 s") && out.contains("running 1 test"),
        "{out}"
    );
    assert!(
        err.contains("  hangs (exit 124)") && !err.contains("quick"),
        "{err}"
    );
    assert!(out.contains("==== quick: exit 0"), "{out}");
    // Killed at its limit: marks stop at about 3 (one per second), none after it ended.
    let marks = || {
        std::fs::read_dir(&dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("alive-")
            })
            .count()
    };
    let n = marks();
    assert!((2..=6).contains(&n), "{n} marks in {took:?}");
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(marks(), n, "the binary lived on after test-lanes ended");
    std::fs::remove_dir_all(&dir).unwrap();
}
