//! Which store: `--store sqlite:PATH | postgresql://...`, else `CRYPTOBENCH_STORE`, else
//! the default SQLite file. Passwords never reach a message or a recorded command line.

use anyhow::anyhow;
use std::path::PathBuf;

/// Why a build without the `store` feature (the lean router build) keeps no store.
pub const NOT_BUILT: &str = "this build has no store (built without the `store` feature, as the lean router build is): write the records with --output FILE and read or import them with a full build";

#[derive(Clone, Debug, PartialEq)]
pub enum StoreUrl {
    Sqlite(PathBuf),
    /// The URL as given (credentials may be in it: show it with `masked`).
    Postgres(String),
}

const FIX: &str =
    "give --store sqlite:PATH or --store postgresql://USER@HOST[:PORT]/DB (or --no-store)";

impl StoreUrl {
    pub fn parse(s: &str) -> anyhow::Result<StoreUrl> {
        let t = s.trim();
        if let Some(p) = t.strip_prefix("sqlite:") {
            let p = p.strip_prefix("//").unwrap_or(p);
            if p.is_empty() {
                return Err(anyhow!("invalid store 'sqlite:': no path: {FIX}"));
            }
            return Ok(StoreUrl::Sqlite(PathBuf::from(p)));
        }
        #[cfg(not(feature = "store"))]
        if t.starts_with("postgresql://") || t.starts_with("postgres://") {
            return Ok(StoreUrl::Postgres(t.to_string()));
        }
        #[cfg(feature = "store")]
        if t.starts_with("postgresql://") || t.starts_with("postgres://") {
            return match t.parse::<::postgres::Config>() {
                Ok(_) => Ok(StoreUrl::Postgres(t.to_string())),
                Err(e) => Err(anyhow!(
                    "invalid store '{}': {e}: {FIX}",
                    crate::units::shown(&masked(t))
                )),
            };
        }
        Err(anyhow!(
            "invalid store '{}': {FIX}",
            crate::units::shown(&masked(t))
        ))
    }

    /// The store a run writes to: `--no-store` none; `--store` or `CRYPTOBENCH_STORE`
    /// ("none" turns it off); else the default SQLite file, when a home is known.
    /// A build without the `store` feature writes to none by default, and refuses one
    /// that is named.
    pub fn choose(flag: Option<&str>, no_store: bool) -> anyhow::Result<Option<StoreUrl>> {
        if no_store {
            return Ok(None);
        }
        if cfg!(not(feature = "store")) {
            let named = flag.map(str::to_string).or_else(|| {
                std::env::var("CRYPTOBENCH_STORE")
                    .ok()
                    .filter(|v| !v.trim().is_empty() && v.trim() != "none")
            });
            return match named {
                Some(s) => Err(anyhow!(
                    "--store {}: {}",
                    crate::units::shown(&masked(&s)),
                    NOT_BUILT
                )),
                None => Ok(None),
            };
        }
        if let Some(f) = flag {
            return StoreUrl::parse(f).map(Some);
        }
        match std::env::var("CRYPTOBENCH_STORE") {
            Ok(v) if v.trim().is_empty() || v.trim() == "none" => return Ok(None),
            Ok(v) => {
                return StoreUrl::parse(&v)
                    .map(Some)
                    .map_err(|e| anyhow!("CRYPTOBENCH_STORE: {e}"))
            }
            Err(_) => {}
        }
        Ok(super::dirs::data_dir().map(|d| StoreUrl::Sqlite(d.join("results.db"))))
    }
}

/// Where the store URL's password is masked: `units::masked`, a leaf every layer may use.
pub use crate::units::masked;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_or_say_what_to_give() {
        assert_eq!(
            StoreUrl::parse("sqlite:/tmp/x.db").unwrap(),
            StoreUrl::Sqlite("/tmp/x.db".into())
        );
        let e = StoreUrl::parse("mysql://u:pw@h/d").unwrap_err();
        assert!(
            e.to_string().contains("u:***@h")
                && !e.to_string().contains("pw")
                && e.to_string().contains("sqlite:PATH"),
            "{e}"
        );
        // Only a build with the PostgreSQL client checks the rest of the URL.
        if !cfg!(feature = "store") {
            return;
        }
        let e = StoreUrl::parse("postgresql://u:pw@h:notaport/d").unwrap_err();
        assert!(
            !e.to_string().contains("pw@") && e.to_string().contains("invalid store"),
            "{e}"
        );
    }
}
