//! Results that last: every run is also written, point by point, to a store (SQLite by
//! default, PostgreSQL for a fleet). The JSON Lines record stays the interchange format:
//! the store keeps each line's exact text beside the columns it is searched by.

mod dirs;
#[cfg(feature = "store")]
pub mod postgres;
pub mod resolve;
pub mod runs;
#[cfg(feature = "store")]
pub mod schema;
pub mod series;
pub mod sink;
mod sql;
#[cfg(feature = "store")]
pub mod sqlite;
pub mod url;

#[cfg(all(test, feature = "store"))]
mod tests;

pub use sql::{Access, Store};
pub use url::StoreUrl;

/// Without the `store` feature there is none to open.
#[cfg(not(feature = "store"))]
pub fn open(_url: &StoreUrl, _access: Access) -> anyhow::Result<Box<dyn Store>> {
    Err(anyhow::anyhow!(url::NOT_BUILT))
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

/// How the store names a machine: `sys::machine_hash`, which `sys::machine_id` uses too.
pub use crate::sys::machine_hash;
