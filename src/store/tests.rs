//! The store against hostile sequences of what users do to it: runs, tags, rm, import and
//! export in any order, on a temporary SQLite file, checked against a model after every
//! step.

use super::sql::Val;
use super::{open, runs, Access, Store, StoreUrl};
use crate::record::read::{read_files, AnyRecord, Loaded, Run};
use crate::record::Environment;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let d = std::env::temp_dir().join(format!("cb-store-{}-{name}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The speed run of the schema-1 fixture: its environment and one record, from which runs
/// of any id and sizes are made.
fn template() -> (Environment, AnyRecord) {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/schema1-mixed.jsonl"
    );
    let loaded = read_files(&[PathBuf::from(fixture)]).unwrap();
    let run = loaded
        .runs
        .into_iter()
        .find(|r| matches!(r.records.first(), Some(AnyRecord::Speed(_))))
        .unwrap();
    (run.environment.unwrap(), run.records[0].clone())
}

/// Run `id`'s point at size 16 << `size` (one point per size).
fn record(template: &AnyRecord, id: &str, size: u8) -> AnyRecord {
    let AnyRecord::Speed(mut r) = template.clone() else {
        unreachable!("the template is a speed record")
    };
    r.run_id = id.into();
    r.size = 16 << size;
    AnyRecord::Speed(r)
}

fn environment(template: &Environment, id: &str, i: usize) -> Environment {
    let mut env = template.clone();
    env.run_id = id.into();
    env.started_unix = 1_700_000_000 + i as u64;
    env
}

/// Writes a run's lines as a results file and reads it back, as `history import` does.
fn as_file(dir: &Path, name: &str, lines: &[String]) -> Loaded {
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    read_files(&[path]).unwrap()
}

fn line<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap()
}

/// Sizes of a run's stored points, one entry per row (a doubled point shows twice).
fn stored_sizes(s: &mut dyn Store, id: &str) -> Vec<u64> {
    let mut sizes: Vec<u64> = s
        .query(
            "SELECT size FROM points WHERE run_id = $1",
            &[Val::Text(id.into())],
        )
        .unwrap()
        .iter()
        .map(|r| r[0].int().unwrap() as u64)
        .collect();
    sizes.sort();
    sizes
}

fn store_at(dir: &Path) -> Box<dyn Store> {
    open(&StoreUrl::Sqlite(dir.join("runs.db")), Access::Write).unwrap()
}

/// Run ids as cryptobench makes them, and one an imported file could carry that is also
/// a fine tag name.
const IDS: [&str; 4] = [
    "1700000000-11",
    "1700000001-12",
    "1700000002-13-1",
    "nightly",
];

/// Tag names: the first `GOOD_TAGS` are fine names ("nightly" is refused while a run of
/// that id exists), then every kind of name refused by its form (one a run id).
const GOOD_TAGS: usize = 2;
const TAGS: [&str; 10] = [
    "baseline",
    "nightly",
    "1700000001-12",
    "123-4",
    "last",
    "last:2",
    "a,b",
    "a b",
    "x\u{7}",
    "",
];

#[derive(Clone, Debug)]
enum Op {
    /// A measuring run writing its points one by one (the store sink's calls).
    Run {
        run: usize,
        sizes: Vec<u8>,
    },
    /// A file holding the run's lines, points repeated and in any order.
    Import {
        run: usize,
        sizes: Vec<u8>,
    },
    Tag {
        run: usize,
        tag: usize,
    },
    /// rm of a run id (`by_tag` false) or of a tag.
    Rm {
        name: usize,
        by_tag: bool,
    },
    /// Export a run, then import the export again.
    Export {
        run: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let run = 0..IDS.len();
    let sizes = proptest::collection::vec(0u8..6, 0..8);
    prop_oneof![
        (run.clone(), sizes.clone()).prop_map(|(run, sizes)| Op::Run { run, sizes }),
        (run.clone(), sizes).prop_map(|(run, sizes)| Op::Import { run, sizes }),
        (run.clone(), 0..TAGS.len()).prop_map(|(run, tag)| Op::Tag { run, tag }),
        (0..TAGS.len().max(IDS.len()), any::<bool>())
            .prop_map(|(name, by_tag)| Op::Rm { name, by_tag }),
        run.prop_map(|run| Op::Export { run }),
    ]
}

/// What the store must hold: each run's point sizes, and each tag's run.
#[derive(Default)]
struct Model {
    points: BTreeMap<String, BTreeSet<u64>>,
    tags: BTreeMap<String, String>,
}

impl Model {
    /// The run a name means: `last` the newest (runs start in the order of `IDS`), a run
    /// id, else a tag.
    fn resolve(&self, name: &str) -> Option<String> {
        if name == "last" {
            return IDS
                .iter()
                .rev()
                .find(|id| self.points.contains_key(**id))
                .map(|id| id.to_string());
        }
        if self.points.contains_key(name) {
            return Some(name.into());
        }
        self.tags.get(name).cloned()
    }
}

fn apply(
    s: &mut dyn Store,
    dir: &Path,
    model: &mut Model,
    (env, rec): &(Environment, AnyRecord),
    op: &Op,
) {
    match op {
        Op::Run { run, sizes } => {
            let id = IDS[*run];
            if model.points.contains_key(id) {
                return; // a run id is made once
            }
            runs::begin_run(s, &environment(env, id, *run), "speed").unwrap();
            let mut set = BTreeSet::new();
            for (seq, size) in sizes
                .iter()
                .collect::<BTreeSet<_>>()
                .into_iter()
                .enumerate()
            {
                runs::add_point(s, seq, &record(rec, id, *size)).unwrap();
                set.insert(16u64 << size);
            }
            model.points.insert(id.into(), set);
        }
        Op::Import { run, sizes } => {
            let id = IDS[*run];
            let mut lines = vec![line(&environment(env, id, *run))];
            lines.extend(sizes.iter().map(|z| line(&record(rec, id, *z))));
            let loaded = as_file(dir, "import.jsonl", &lines);
            // A new run whose id a tag already names would take the tag's place: refused
            // (a stored run of that id, made before the tag, takes more points as before).
            if model.tags.contains_key(id) && !model.points.contains_key(id) {
                let e = runs::import(s, &loaded).unwrap_err();
                assert!(e.is::<runs::Refused>(), "import of {id}: {e}");
                return;
            }
            let distinct: BTreeSet<u64> = sizes.iter().map(|z| 16u64 << z).collect();
            let known = model.points.entry(id.into()).or_default();
            let new = distinct.difference(known).count();
            let (n, added) = runs::import(s, &loaded).unwrap();
            assert_eq!((n, added), (1, new), "import of {id} {sizes:?}");
            known.extend(distinct);
        }
        Op::Tag { run, tag } => {
            let (id, name) = (IDS[*run], TAGS[*tag]);
            if !model.points.contains_key(id) {
                return;
            }
            let result = runs::tag(s, id, name);
            let refused_by_form = TAGS[GOOD_TAGS..].contains(&name);
            let is_run = model.points.contains_key(name);
            assert_eq!(
                result.is_ok(),
                !refused_by_form && !is_run,
                "tag {name:?} -> {id}: {result:?}"
            );
            if result.is_ok() {
                model.tags.insert(name.into(), id.into());
            }
        }
        Op::Rm { name, by_tag } => {
            let name = if *by_tag {
                TAGS[name % TAGS.len()]
            } else {
                IDS[name % IDS.len()]
            };
            let want = model.resolve(name);
            let got = runs::resolve(s, name).unwrap();
            assert_eq!(got, want, "rm {name:?} resolves");
            let Some(id) = got else { return };
            runs::remove(s, &id).unwrap();
            model.points.remove(&id);
            model.tags.retain(|_, run| *run != id);
        }
        Op::Export { run } => {
            let id = IDS[*run];
            let lines = runs::lines(s, id).unwrap();
            assert_eq!(lines.is_empty(), !model.points.contains_key(id));
            if lines.is_empty() {
                return;
            }
            let loaded = as_file(dir, "export.jsonl", &lines);
            let run: &Run = &loaded.runs[0];
            let sizes: BTreeSet<u64> = run
                .records
                .iter()
                .map(|r| match r {
                    AnyRecord::Speed(r) => r.size,
                    _ => unreachable!(),
                })
                .collect();
            assert_eq!(&sizes, &model.points[id], "export of {id}");
            assert_eq!(
                runs::import(s, &loaded).unwrap(),
                (1, 0),
                "re-import of {id}"
            );
        }
    }
}

/// The invariants: every run holds exactly its points, each once; every run id resolves
/// to its own run; every tag that is not a run id resolves to its run.
fn check(s: &mut dyn Store, model: &Model) {
    let stored: BTreeSet<String> = s
        .query("SELECT run_id FROM runs", &[])
        .unwrap()
        .iter()
        .map(|r| r[0].text().unwrap().to_string())
        .collect();
    let expected: BTreeSet<String> = model.points.keys().cloned().collect();
    assert_eq!(stored, expected, "the runs");
    for (id, sizes) in &model.points {
        let want: Vec<u64> = sizes.iter().copied().collect();
        assert_eq!(
            stored_sizes(s, id),
            want,
            "points of {id}: none lost or doubled"
        );
        assert_eq!(runs::resolve(s, id).unwrap().as_deref(), Some(id.as_str()));
    }
    for name in model.tags.keys() {
        assert_eq!(
            runs::resolve(s, name).unwrap(),
            model.resolve(name),
            "tag {name}"
        );
    }
}

/// Cases of the store proptest (each up to 24 steps on a fresh SQLite file).
const CASES: u32 = 256;

#[test]
fn random_runs_tags_rm_import_and_export_keep_every_point_once() {
    let template = template();
    let mut runner = TestRunner::new(Config {
        cases: CASES,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&proptest::collection::vec(op(), 1..24), |ops| {
            let dir = TempDir::new("prop");
            let mut s = store_at(&dir.0);
            let mut model = Model::default();
            for op in &ops {
                apply(s.as_mut(), &dir.0, &mut model, &template, op);
                check(s.as_mut(), &model);
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn a_file_holding_a_run_twice_reads_and_imports_once() {
    let (env, rec) = template();
    let dir = TempDir::new("dup");
    let id = IDS[0];
    let run: Vec<String> = std::iter::once(line(&environment(&env, id, 0)))
        .chain((0..3).map(|z| line(&record(&rec, id, z))))
        .collect();
    let twice = [run.clone(), run].concat();
    let loaded = as_file(&dir.0, "dup.jsonl", &twice);
    assert_eq!(loaded.record_count(), 3);
    let duplicates = loaded
        .skipped
        .iter()
        .filter(|l| l.reason.contains("duplicate"))
        .count();
    assert_eq!(duplicates, 3, "{:?}", loaded.skipped);
    let mut s = store_at(&dir.0);
    assert_eq!(runs::import(s.as_mut(), &loaded).unwrap(), (1, 3));
    assert_eq!(runs::import(s.as_mut(), &loaded).unwrap(), (1, 0));
    assert_eq!(stored_sizes(s.as_mut(), id), vec![16, 32, 64]);
}

#[test]
fn a_run_id_comes_before_a_tag_of_the_same_name() {
    let (env, rec) = template();
    let dir = TempDir::new("ids");
    let mut s = store_at(&dir.0);
    for (i, id) in IDS[..2].iter().enumerate() {
        runs::begin_run(s.as_mut(), &environment(&env, id, i), "speed").unwrap();
        runs::add_point(s.as_mut(), 0, &record(&rec, id, 0)).unwrap();
    }
    let e = runs::tag(s.as_mut(), IDS[0], IDS[1]).unwrap_err();
    assert!(e.to_string().contains("run id"), "{e}");
    // A tag made before a run of that name arrived: the run's id wins.
    runs::tag(s.as_mut(), IDS[0], "nightly").unwrap();
    runs::begin_run(s.as_mut(), &environment(&env, "nightly", 3), "speed").unwrap();
    assert_eq!(
        runs::resolve(s.as_mut(), "nightly").unwrap().as_deref(),
        Some("nightly")
    );
    assert_eq!(runs::tags_of(s.as_mut(), IDS[0]).unwrap(), vec!["nightly"]);
}

#[test]
fn reading_never_creates_and_other_databases_are_refused() {
    let dir = TempDir::new("open");
    let missing = dir.0.join("no/such/dir/x.db");
    for access in [Access::Read, Access::Update] {
        let e = open(&StoreUrl::Sqlite(missing.clone()), access)
            .err()
            .unwrap();
        assert!(
            e.to_string().contains("check the path") && e.to_string().contains("x.db"),
            "{e}"
        );
        assert!(!dir.0.join("no").exists());
    }
    let foreign = dir.0.join("foreign.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute("CREATE TABLE runs (x TEXT)", [])
        .unwrap();
    for access in [Access::Read, Access::Update, Access::Write] {
        let e = open(&StoreUrl::Sqlite(foreign.clone()), access)
            .err()
            .unwrap();
        assert!(
            e.to_string().contains("not a cryptobench store") && !e.to_string().contains("CREATE"),
            "{e}"
        );
    }
    // Opened for reading, a store is not written: not even its journal mode.
    let db = dir.0.join("runs.db");
    drop(store_at(&dir.0));
    let before = std::fs::read(&db).unwrap();
    let mut s = open(&StoreUrl::Sqlite(db.clone()), Access::Read).unwrap();
    assert!(
        s.execute("DELETE FROM runs", &[]).is_err(),
        "opened read-only"
    );
    drop(s);
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

/// `last` and `history`'s newest among runs of one second are the one that started last
/// (the id's millisecond), not the one whose pid sorts last as text ("9998" after "10002").
#[test]
fn last_of_one_second_is_the_one_started_last() {
    let (env, rec) = template();
    let dir = TempDir::new("same-second");
    let mut s = store_at(&dir.0);
    let ids = ["1700000000-9998-0640abcd", "1700000000-10002-0c812345"];
    for id in ids {
        runs::begin_run(s.as_mut(), &environment(&env, id, 0), "speed").unwrap();
        runs::add_point(s.as_mut(), 0, &record(&rec, id, 0)).unwrap();
    }
    assert_eq!(
        runs::resolve(s.as_mut(), "last").unwrap().as_deref(),
        Some(ids[1])
    );
    assert_eq!(runs::newest(s.as_mut(), 2).unwrap(), vec![ids[1], ids[0]]);
    assert_eq!(runs::newest(s.as_mut(), 1).unwrap(), vec![ids[1]]);
    // `history --limit 1` too (trend_cli took the run before as the one it had just made).
    let listed = |s: &mut dyn Store, limit| -> Vec<String> {
        let f = runs::Filter {
            limit,
            ..Default::default()
        };
        runs::list(s, &f)
            .unwrap()
            .into_iter()
            .map(|r| r.run_id)
            .collect()
    };
    assert_eq!(listed(s.as_mut(), 1), vec![ids[1]]);
    assert_eq!(listed(s.as_mut(), 0), vec![ids[1], ids[0]]);
}
