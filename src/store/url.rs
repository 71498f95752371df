//! Which store: `--store sqlite:PATH | postgresql://...`, else `CRYPTOBENCH_STORE`, else
//! the default SQLite file. Passwords never reach a message or a recorded command line.

use anyhow::anyhow;
use std::path::PathBuf;

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
                    super::NOT_BUILT
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
        Ok(super::data_dir().map(|d| StoreUrl::Sqlite(d.join("results.db"))))
    }
}

/// A URL or argument with the password of its `user:password@` part, and any
/// `password=` option, replaced by `***`.
pub fn masked(s: &str) -> String {
    let mut out = s.to_string();
    if let Some(scheme) = out.find("://") {
        let rest = &out[scheme + 3..];
        let auth_end = rest.find(['/', '?']).unwrap_or(rest.len());
        if let Some(at) = rest[..auth_end].rfind('@') {
            if let Some(colon) = rest[..at].find(':') {
                let start = scheme + 3 + colon + 1;
                out.replace_range(start..scheme + 3 + at, "***");
            }
        }
    }
    if let Some(i) = out.find("password=") {
        let start = i + "password=".len();
        let end = out[start..]
            .find(['&', ' '])
            .map_or(out.len(), |e| start + e);
        out.replace_range(start..end, "***");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_masked() {
        assert_eq!(
            masked("postgresql://bench:s3cret@db.example:5432/runs"),
            "postgresql://bench:***@db.example:5432/runs"
        );
        assert_eq!(
            masked("--store=postgres://u:p@h/d?password=x&sslmode=require"),
            "--store=postgres://u:***@h/d?password=***&sslmode=require"
        );
        assert_eq!(masked("postgresql://u@h/d"), "postgresql://u@h/d");
        assert_eq!(masked("speed"), "speed");
    }

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
