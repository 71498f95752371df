//! The embedded store: one SQLite file (the bundled library), created readable by its
//! owner only.

use super::sql::{Access, Store, Val, ValRef};
use anyhow::anyhow;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{params_from_iter, Connection, OpenFlags};
use std::path::Path;

pub struct Sqlite {
    conn: Connection,
    name: String,
}

impl rusqlite::ToSql for Val {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Val::Null => ValueRef::Null,
            Val::Int(i) => ValueRef::Integer(*i),
            Val::Real(r) => ValueRef::Real(*r),
            Val::Text(s) => ValueRef::Text(s.as_bytes()),
        }))
    }
}

fn val(v: ValueRef) -> Val {
    match v {
        ValueRef::Null => Val::Null,
        ValueRef::Integer(i) => Val::Int(i),
        ValueRef::Real(r) => Val::Real(r),
        ValueRef::Text(t) | ValueRef::Blob(t) => Val::Text(String::from_utf8_lossy(t).into()),
    }
}

/// `$1` (PostgreSQL's placeholders, the ones the shared SQL uses) to SQLite's `?1`.
fn placeholders(sql: &str) -> String {
    sql.replace('$', "?")
}

/// `PRAGMA application_id` of a cryptobench store ("cbst"): what tells it from any other
/// SQLite database.
pub const APPLICATION_ID: i32 = 0x6362_7374;

/// The tables every cryptobench store has had since its first schema: a store made
/// before the application id was set is recognised by them.
const OWN_TABLES: [&str; 4] = ["points", "runs", "schema_version", "tags"];

impl Sqlite {
    pub fn open(path: &Path, access: Access) -> anyhow::Result<Sqlite> {
        let name = format!("sqlite:{}", crate::units::shown_path(path));
        let conn = match access {
            Access::Read => open_read_only(path, &name)?,
            Access::Update => {
                existing_file(path, &name)?;
                open_writable(path, &name)?
            }
            Access::Write => open_writable(path, &name)?,
        };
        conn.busy_timeout(std::time::Duration::from_secs(30))
            .map_err(|e| anyhow!("store {name}: {e}"))?;
        let mut store = Sqlite { conn, name };
        store.check_ours(access)?;
        if access != Access::Read {
            let name = &store.name;
            store
                .conn
                .pragma_update(None, "journal_mode", "WAL")
                .map_err(|e| {
                    anyhow!("cannot open store {name}: {e}: give another --store sqlite:PATH")
                })?;
        }
        Ok(store)
    }

    /// Refuses a database that is not a cryptobench store, in one line, before anything
    /// is written to it. For writing, a new (empty) database gets the application id, and
    /// a store made before the id existed is stamped with it.
    fn check_ours(&mut self, access: Access) -> anyhow::Result<()> {
        let name = self.name.clone();
        let not_sqlite = |e: rusqlite::Error| {
            anyhow!("cannot open store {name}: {e}: is it an SQLite file? give another --store sqlite:PATH")
        };
        let id: i32 = self
            .conn
            .pragma_query_value(None, "application_id", |r| r.get(0))
            .map_err(not_sqlite)?;
        if id == APPLICATION_ID {
            return Ok(());
        }
        let mut tables: Vec<String> = self
            .conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
            .map_err(not_sqlite)?;
        let foreign = || {
            format!(
                "store {name} is not a cryptobench store (an SQLite database of another program): give another --store sqlite:PATH"
            )
        };
        if id != 0 {
            return Err(anyhow::Error::msg(foreign()));
        }
        let ours_before_the_id = OWN_TABLES.iter().all(|t| tables.iter().any(|n| n == t));
        tables.retain(|t| !t.starts_with("sqlite_"));
        let empty = tables.is_empty();
        match access {
            Access::Read if ours_before_the_id => Ok(()),
            Access::Read if empty => Err(anyhow!(
                "store {name} holds no runs (an empty database): give the store your runs were written to"
            )),
            Access::Update | Access::Write if ours_before_the_id || empty => self
                .conn
                .pragma_update(None, "application_id", APPLICATION_ID)
                .map_err(|e| anyhow!("store {name}: {e}")),
            _ => Err(anyhow::Error::msg(foreign())),
        }
    }
}

/// Creates the store where missing (its directory private, the file 0600) and opens it.
fn open_writable(path: &Path, name: &str) -> anyhow::Result<Connection> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(dir) = dir.filter(|d| !d.exists()) {
        super::dirs::private_dir(dir).map_err(|e| anyhow!("store {name}: {e}"))?;
    }
    not_in_others_hands(path, dir.unwrap_or(Path::new("."))).map_err(|why| {
        anyhow!("store {name}: {why}: give a store in a dir of your own with --store sqlite:PATH")
    })?;
    // Created 0600 before SQLite opens it; its journal files take the same mode.
    {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)
            .map_err(|e| {
                anyhow!("cannot open store {name}: {e}: give a writable path with --store sqlite:PATH, or --no-store")
            })?;
    }
    Connection::open(path).map_err(|e| {
        anyhow!("cannot open store {name}: {e}: give another --store sqlite:PATH, or --no-store")
    })
}

/// Whether another user could have put or swapped the store's files: its dir theirs, or
/// writable by others without the sticky bit (they could replace any file in it); in a
/// sticky one such as /tmp, a file or journal that is a link or theirs (planted before
/// us: SQLite would write through it).
fn not_in_others_hands(path: &Path, dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let d = std::fs::metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if d.uid() != me && d.uid() != 0 {
        return Err(format!(
            "its dir {} belongs to user {}",
            dir.display(),
            d.uid()
        ));
    }
    // Group write is left alone: with a private group per user (umask 002) it is the rule.
    let shared = d.mode() & 0o002 != 0;
    if shared && d.mode() & 0o1000 == 0 {
        return Err(format!(
            "its dir {} is writable by others (mode {:o})",
            dir.display(),
            d.mode() & 0o7777
        ));
    }
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut f = path.as_os_str().to_owned();
        f.push(suffix);
        let f = Path::new(&f);
        match std::fs::symlink_metadata(f) {
            Ok(m) if shared && m.file_type().is_symlink() => {
                return Err(format!(
                    "{} is a symbolic link in a dir others can write",
                    f.display()
                ))
            }
            Ok(m) if shared && m.uid() != me => {
                return Err(format!("{} belongs to user {}", f.display(), m.uid()))
            }
            _ => {}
        }
    }
    Ok(())
}

/// A store that is not there is an error (never created) for every command but a run
/// or an import.
fn existing_file(path: &Path, name: &str) -> anyhow::Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(()),
        Ok(_) => Err(anyhow!(
            "store {name} is not a regular file: give the store file with --store sqlite:PATH"
        )),
        Err(e) => Err(anyhow!(
            "no store {name}: {e}: check the path (a store is made by the first run or `history import` into it)"
        )),
    }
}

/// Opens an existing store without writing anything to it. Where SQLite cannot set up
/// its shared memory beside the file (a directory the user cannot write, an immutable
/// file), the file is opened as immutable: read as it is on disk.
fn open_read_only(path: &Path, name: &str) -> anyhow::Result<Connection> {
    existing_file(path, name)?;
    // NO_MUTEX as rusqlite's own default: a Connection is used by one thread, and the
    // serialized mode's lock on every column read costs a tenth of a large scan.
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let readable =
        |c: &Connection| c.query_row("SELECT COUNT(*) FROM sqlite_master", [], |_| Ok(()));
    if let Ok(c) = Connection::open_with_flags(path, flags) {
        if readable(&c).is_ok() {
            return Ok(c);
        }
    }
    let immutable = format!("file:{}?immutable=1", uri_path(path));
    Connection::open_with_flags(immutable, flags)
        .and_then(|c| readable(&c).map(|_| c))
        .map_err(|e| anyhow!("cannot read store {name}: {e}: give a readable store file with --store sqlite:PATH"))
}

/// A path as the path part of an SQLite URI: the characters a URI gives meaning escaped.
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for b in path.as_os_str().as_encoded_bytes() {
        match b {
            b'%' | b'?' | b'#' | 0x80.. => out.push_str(&format!("%{b:02x}")),
            _ => out.push(*b as char),
        }
    }
    out
}

impl Store for Sqlite {
    fn name(&self) -> &str {
        &self.name
    }
    fn execute(&mut self, sql: &str, params: &[Val]) -> anyhow::Result<u64> {
        self.conn
            .execute(&placeholders(sql), params_from_iter(params))
            .map(|n| n as u64)
            .map_err(|e| anyhow!("store {}: {e}", self.name))
    }
    fn query(&mut self, sql: &str, params: &[Val]) -> anyhow::Result<Vec<Vec<Val>>> {
        let err = |e: rusqlite::Error| anyhow!("store {}: {e}", self.name);
        let mut stmt = self.conn.prepare_cached(&placeholders(sql)).map_err(err)?;
        let n = stmt.column_count();
        let rows = stmt
            .query_map(params_from_iter(params), |row| {
                (0..n).map(|i| row.get_ref(i).map(val)).collect()
            })
            .map_err(err)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(err)
    }
    fn query_each(
        &mut self,
        sql: &str,
        params: &[Val],
        each: &mut dyn for<'r> FnMut(&[ValRef<'r>]) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let name = self.name.clone();
        let err = |e: rusqlite::Error| anyhow!("store {name}: {e}");
        let mut stmt = self.conn.prepare_cached(&placeholders(sql)).map_err(err)?;
        let n = stmt.column_count();
        let mut rows = stmt.query(params_from_iter(params)).map_err(err)?;
        while let Some(row) = rows.next().map_err(err)? {
            let vals = (0..n)
                .map(|i| {
                    row.get_ref(i).map(|v| match v {
                        ValueRef::Null => ValRef::Null,
                        ValueRef::Integer(i) => ValRef::Int(i),
                        ValueRef::Real(r) => ValRef::Real(r),
                        ValueRef::Text(t) | ValueRef::Blob(t) => {
                            ValRef::Text(String::from_utf8_lossy(t))
                        }
                    })
                })
                .collect::<Result<Vec<_>, _>>()
                .map_err(err)?;
            each(&vals)?;
        }
        Ok(())
    }
    fn begin(&mut self, _exclusive: bool) -> anyhow::Result<()> {
        // IMMEDIATE takes the write lock now: two writers never both read then write.
        self.execute("BEGIN IMMEDIATE", &[]).map(|_| ())
    }
    fn commit(&mut self) -> anyhow::Result<()> {
        self.execute("COMMIT", &[]).map(|_| ())
    }
    fn rollback(&mut self) {
        let _ = self.execute("ROLLBACK", &[]);
    }
}
