//! The embedded store: one SQLite file (the bundled library), created readable by its
//! owner only.

use super::{Store, Val};
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{params_from_iter, Connection};
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

impl Sqlite {
    pub fn open(path: &Path) -> Result<Sqlite, String> {
        let name = format!("sqlite:{}", crate::units::shown_path(path));
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.exists() {
                super::private_dir(dir).map_err(|e| format!("store {name}: {e}"))?;
            }
        }
        // Created 0600 before SQLite opens it; its journal files take the same mode.
        {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .mode(0o600)
                .open(path)
                .map_err(|e| {
                    format!("cannot open store {name}: {e}: give a writable path with --store sqlite:PATH, or --no-store")
                })?;
        }
        let conn = Connection::open(path).map_err(|e| {
            format!(
                "cannot open store {name}: {e}: give another --store sqlite:PATH, or --no-store"
            )
        })?;
        conn.busy_timeout(std::time::Duration::from_secs(30))
            .map_err(|e| format!("store {name}: {e}"))?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(|e| {
                format!("cannot open store {name}: {e}: is it an SQLite file? give another --store sqlite:PATH")
            })?;
        Ok(Sqlite { conn, name })
    }
}

impl Store for Sqlite {
    fn name(&self) -> &str {
        &self.name
    }
    fn execute(&mut self, sql: &str, params: &[Val]) -> Result<u64, String> {
        self.conn
            .execute(&placeholders(sql), params_from_iter(params))
            .map(|n| n as u64)
            .map_err(|e| format!("store {}: {e}", self.name))
    }
    fn query(&mut self, sql: &str, params: &[Val]) -> Result<Vec<Vec<Val>>, String> {
        let err = |e: rusqlite::Error| format!("store {}: {e}", self.name);
        let mut stmt = self.conn.prepare_cached(&placeholders(sql)).map_err(err)?;
        let n = stmt.column_count();
        let rows = stmt
            .query_map(params_from_iter(params), |row| {
                (0..n).map(|i| row.get_ref(i).map(val)).collect()
            })
            .map_err(err)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(err)
    }
    fn begin(&mut self, exclusive: bool) -> Result<(), String> {
        // IMMEDIATE takes the write lock now: two writers never both read then write.
        let _ = exclusive;
        self.execute("BEGIN IMMEDIATE", &[]).map(|_| ())
    }
    fn commit(&mut self) -> Result<(), String> {
        self.execute("COMMIT", &[]).map(|_| ())
    }
    fn rollback(&mut self) {
        let _ = self.execute("ROLLBACK", &[]);
    }
}
