//! Results that last: every run is also written, point by point, to a store (SQLite by
//! default, PostgreSQL for a fleet). The JSON Lines record stays the interchange format:
//! the store keeps each line's exact text beside the columns it is searched by.

use anyhow::anyhow;
#[cfg(feature = "store")]
pub mod postgres;
pub mod resolve;
pub mod runs;
#[cfg(feature = "store")]
pub mod schema;
pub mod series;
pub mod sink;
#[cfg(feature = "store")]
pub mod sqlite;
pub mod url;

#[cfg(all(test, feature = "store"))]
mod tests;

/// Why a build without the `store` feature (the lean router build) keeps no store.
pub const NOT_BUILT: &str = "this build has no store (built without the `store` feature, as the lean router build is): write the records with --output FILE and read or import them with a full build";

pub use url::StoreUrl;

/// A value passed to or read from SQL, the same for both back ends.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl Val {
    pub fn int(&self) -> Option<i64> {
        match self {
            Val::Int(i) => Some(*i),
            Val::Real(r) => Some(*r as i64),
            _ => None,
        }
    }
    pub fn text(&self) -> Option<&str> {
        match self {
            Val::Text(s) => Some(s),
            _ => None,
        }
    }
    pub fn opt_real(x: Option<f64>) -> Val {
        x.filter(|v| v.is_finite()).map_or(Val::Null, Val::Real)
    }
    pub fn opt_text(x: Option<&str>) -> Val {
        x.map_or(Val::Null, |s| Val::Text(s.into()))
    }
}

/// SQL built a clause at a time: each `#` in a clause becomes the next `$N`, bound to the
/// clause's values in order.
#[derive(Default)]
pub struct Sql {
    pub text: String,
    pub params: Vec<Val>,
}

impl Sql {
    pub fn new(start: &str) -> Sql {
        Sql {
            text: start.to_string(),
            params: Vec::new(),
        }
    }
    pub fn add(&mut self, clause: &str, vals: Vec<Val>) {
        let mut clause = clause.to_string();
        for v in vals {
            self.params.push(v);
            clause = clause.replacen('#', &format!("${}", self.params.len()), 1);
        }
        self.text.push_str(&clause);
    }
}

/// A value of a row handed out by `query_each`: text borrowed from the database's buffer.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(not(feature = "store"), allow(dead_code))]
pub enum ValRef<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(std::borrow::Cow<'a, str>),
}

impl ValRef<'_> {
    pub fn int(&self) -> Option<i64> {
        match self {
            ValRef::Int(i) => Some(*i),
            ValRef::Real(r) => Some(*r as i64),
            _ => None,
        }
    }
    pub fn real(&self) -> Option<f64> {
        match self {
            ValRef::Real(r) => Some(*r),
            ValRef::Int(i) => Some(*i as f64),
            _ => None,
        }
    }
    pub fn text(&self) -> Option<&str> {
        match self {
            ValRef::Text(s) => Some(s),
            _ => None,
        }
    }
}

/// One SQL database holding runs. The SQL is written once (`schema`, `runs`) with `$1`
/// placeholders; a back end only executes it.
pub trait Store {
    /// What the store is, password masked, for every message.
    fn name(&self) -> &str;
    fn execute(&mut self, sql: &str, params: &[Val]) -> anyhow::Result<u64>;
    fn query(&mut self, sql: &str, params: &[Val]) -> anyhow::Result<Vec<Vec<Val>>>;
    /// The rows one at a time, as the database hands them out, their text borrowed:
    /// memory does not grow with the result, and nothing is copied that is not kept.
    fn query_each(
        &mut self,
        sql: &str,
        params: &[Val],
        each: &mut dyn for<'r> FnMut(&[ValRef<'r>]) -> anyhow::Result<()>,
    ) -> anyhow::Result<()>;
    /// Starts a transaction; `exclusive` also keeps every other writer out until it ends
    /// (for migrations).
    fn begin(&mut self, exclusive: bool) -> anyhow::Result<()>;
    fn commit(&mut self) -> anyhow::Result<()>;
    fn rollback(&mut self);
}

/// Runs `f` in one transaction: all of it or nothing.
pub fn in_transaction<T>(
    s: &mut dyn Store,
    exclusive: bool,
    f: impl FnOnce(&mut dyn Store) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    s.begin(exclusive)?;
    match f(s) {
        Ok(v) => {
            s.commit()?;
            Ok(v)
        }
        Err(e) => {
            s.rollback();
            Err(e)
        }
    }
}

/// What a command does with the store. Only a run (and an import) creates one: a
/// mistyped path is an error elsewhere. Reading commands never write, so a read-only or
/// immutable store still reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    /// Changes a store that exists (tag, rm).
    Update,
    /// Writes, creating the store where missing.
    Write,
}

/// Without the `store` feature there is none to open.
#[cfg(not(feature = "store"))]
pub fn open(_url: &StoreUrl, _access: Access) -> anyhow::Result<Box<dyn Store>> {
    Err(anyhow!(NOT_BUILT))
}

/// Opens the store; for writing, creates it where missing and brings its schema up to
/// date. Errors are one line naming the store (password masked) and the fix.
#[cfg(feature = "store")]
pub fn open(url: &StoreUrl, access: Access) -> anyhow::Result<Box<dyn Store>> {
    let mut store: Box<dyn Store> = match url {
        StoreUrl::Sqlite(path) => Box::new(sqlite::Sqlite::open(path, access)?),
        StoreUrl::Postgres(u) => Box::new(postgres::Postgres::open(u)?),
    };
    match (url, access) {
        (StoreUrl::Sqlite(_), Access::Read) => schema::check_readable(store.as_mut())?,
        // A server database is named on purpose and exists already: a reading command
        // may give it the schema a first run would.
        _ => schema::migrate(store.as_mut())?,
    }
    Ok(store)
}

/// Where the default store and the spool live: $XDG_DATA_HOME/cryptobench, else
/// ~/.local/share/cryptobench.
pub fn data_dir() -> Option<std::path::PathBuf> {
    let xdg = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty());
    match xdg {
        Some(d) => Some(std::path::PathBuf::from(d).join("cryptobench")),
        None => std::env::var_os("HOME")
            .filter(|v| !v.is_empty())
            .map(|h| std::path::PathBuf::from(h).join(".local/share/cryptobench")),
    }
}

/// Creates `dir` (and parents) readable by the owner only, where it does not exist.
pub fn private_dir(dir: &std::path::Path) -> anyhow::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| anyhow!("cannot create {}: {e}", crate::units::shown_path(dir)))
}

/// How the store names a machine: `sys::machine_hash`, which `sys::machine_id` uses too.
pub use crate::sys::machine_hash;
