//! The shared store: a PostgreSQL server that every machine of a fleet writes to.
//! Credentials come from the URL, the PG* variables or ~/.pgpass, and are never shown;
//! TLS (rustls) is used when the URL asks for it (sslmode=require).

use super::sql::{Store, Val, ValRef};
use super::url::masked;
use anyhow::anyhow;
use postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use postgres::{Client, Config, NoTls};
use std::error::Error;

pub struct Postgres {
    client: Client,
    name: String,
}

type BoxError = Box<dyn Error + Sync + Send>;

impl ToSql for Val {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> Result<IsNull, BoxError> {
        match self {
            Val::Null => Ok(IsNull::Yes),
            Val::Int(i) if *ty == Type::INT4 => (*i as i32).to_sql(ty, out),
            Val::Int(i) if *ty == Type::FLOAT8 => (*i as f64).to_sql(ty, out),
            Val::Int(i) => i.to_sql(ty, out),
            Val::Real(r) => r.to_sql(ty, out),
            Val::Text(s) => s.to_sql(ty, out),
        }
    }
    fn accepts(_: &Type) -> bool {
        true
    }
    to_sql_checked!();
}

impl<'a> FromSql<'a> for Val {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Val, BoxError> {
        Ok(match *ty {
            Type::INT8 => Val::Int(i64::from_sql(ty, raw)?),
            Type::INT4 => Val::Int(i32::from_sql(ty, raw)? as i64),
            Type::INT2 => Val::Int(i16::from_sql(ty, raw)? as i64),
            Type::BOOL => Val::Int(bool::from_sql(ty, raw)? as i64),
            Type::FLOAT8 => Val::Real(f64::from_sql(ty, raw)?),
            Type::FLOAT4 => Val::Real(f32::from_sql(ty, raw)? as f64),
            _ => Val::Text(String::from_sql(ty, raw)?),
        })
    }
    fn from_sql_null(_: &Type) -> Result<Val, BoxError> {
        Ok(Val::Null)
    }
    fn accepts(_: &Type) -> bool {
        true
    }
}

impl<'a> FromSql<'a> for ValRef<'a> {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<ValRef<'a>, BoxError> {
        let number = [
            Type::INT8,
            Type::INT4,
            Type::INT2,
            Type::BOOL,
            Type::FLOAT8,
            Type::FLOAT4,
        ];
        if !number.contains(ty) {
            // Text borrowed from the row, not copied.
            return Ok(ValRef::Text(std::borrow::Cow::Borrowed(<&str>::from_sql(
                ty, raw,
            )?)));
        }
        Ok(match Val::from_sql(ty, raw)? {
            Val::Int(i) => ValRef::Int(i),
            Val::Real(r) => ValRef::Real(r),
            _ => ValRef::Null,
        })
    }
    fn from_sql_null(_: &Type) -> Result<ValRef<'a>, BoxError> {
        Ok(ValRef::Null)
    }
    fn accepts(_: &Type) -> bool {
        true
    }
}

impl Postgres {
    pub fn open(url: &str) -> anyhow::Result<Postgres> {
        let name = crate::units::shown(&masked(url));
        let mut config: Config = url.parse().map_err(|e| {
            anyhow!("invalid store {name}: {e}: give --store postgresql://USER@HOST[:PORT]/DB")
        })?;
        fill_from_environment(&mut config, url);
        let tls = url.contains("sslmode=require")
            || std::env::var("PGSSLMODE").as_deref() == Ok("require");
        let connected = if tls {
            config.ssl_mode(postgres::config::SslMode::Require);
            config.connect(tls_connector()?)
        } else {
            config.ssl_mode(postgres::config::SslMode::Disable);
            config.connect(NoTls)
        };
        let client = connected.map_err(|e| connect_error(&name, &e))?;
        Ok(Postgres { client, name })
    }
}

/// What libpq would take from the environment and ~/.pgpass where the URL says nothing.
fn fill_from_environment(config: &mut Config, url: &str) {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    if config.get_hosts().is_empty() {
        match var("PGHOST") {
            Some(h) => {
                config.host(&h);
            }
            None => {
                config.host_path("/var/run/postgresql");
            }
        }
    }
    if config.get_ports().is_empty() {
        if let Some(p) = var("PGPORT").and_then(|p| p.parse().ok()) {
            config.port(p);
        }
    }
    if config.get_user().is_none() {
        let user = var("PGUSER")
            .or_else(|| var("USER"))
            .unwrap_or_else(|| "postgres".into());
        config.user(&user);
    }
    if config.get_dbname().is_none() {
        if let Some(d) = var("PGDATABASE") {
            config.dbname(&d);
        }
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(std::time::Duration::from_secs(5));
    }
    if config.get_password().is_none() && !url.contains("password=") {
        if let Some(p) = var("PGPASSWORD").or_else(|| pgpass(config)) {
            config.password(p);
        }
    }
}

/// The password for this host, port, database and user from ~/.pgpass (or $PGPASSFILE):
/// lines `host:port:db:user:password`, `*` matching anything, `\:` an escaped colon.
fn pgpass(config: &Config) -> Option<String> {
    let file = std::env::var_os("PGPASSFILE")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".pgpass")))?;
    let text = std::fs::read_to_string(file).ok()?;
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        _ => "localhost".into(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config.get_user().unwrap_or("").to_string();
    let db = config.get_dbname().unwrap_or(&user).to_string();
    let want = [host, port, db, user];
    text.lines().filter(|l| !l.starts_with('#')).find_map(|l| {
        let fields = split_pgpass(l);
        (fields.len() == 5
            && fields[..4]
                .iter()
                .zip(&want)
                .all(|(f, w)| f == "*" || f == w))
        .then(|| fields[4].clone())
    })
}

fn split_pgpass(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut().unwrap().extend(chars.next()),
            ':' => fields.push(String::new()),
            c => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

fn tls_connector() -> anyhow::Result<tokio_postgres_rustls::MakeRustlsConnect> {
    let mut roots = rustls::RootCertStore::empty();
    let file = std::env::var("PGSSLROOTCERT")
        .unwrap_or_else(|_| "/etc/ssl/certs/ca-certificates.crt".into());
    let pem = std::fs::read(&file).map_err(|e| {
        anyhow!("store TLS: cannot read the CA certificates {file}: {e}: set PGSSLROOTCERT to the server's CA file")
    })?;
    use rustls::pki_types::{pem::PemObject, CertificateDer};
    for cert in CertificateDer::pem_slice_iter(&pem).flatten() {
        let _ = roots.add(cert);
    }
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| anyhow!("store TLS: {e}"))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// One line naming the store and the fix: a failed login, or a server not reachable.
fn connect_error(name: &str, e: &postgres::Error) -> anyhow::Error {
    use postgres::error::SqlState;
    let detail = e
        .as_db_error()
        .map(|d| d.message().to_string())
        .or_else(|| e.source().map(|s| s.to_string()))
        .unwrap_or_else(|| e.to_string());
    match e.code() {
        Some(c) if *c == SqlState::INVALID_PASSWORD || *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION => anyhow!(
            "login to store {name} failed: {detail}: check the user and password (in the URL, PGPASSWORD or ~/.pgpass)"
        ),
        Some(c) if *c == SqlState::INVALID_CATALOG_NAME => anyhow!(
            "store {name}: {detail}: create the database (createdb) or name another in the URL"
        ),
        _ => anyhow!(
            "cannot reach store {name}: {detail}: start the server or fix the URL (--store or CRYPTOBENCH_STORE), or run with --no-store"
        ),
    }
}

impl Store for Postgres {
    fn name(&self) -> &str {
        &self.name
    }
    fn execute(&mut self, sql: &str, params: &[Val]) -> anyhow::Result<u64> {
        let p: Vec<&(dyn ToSql + Sync)> = params.iter().map(|v| v as _).collect();
        self.client
            .execute(sql, &p)
            .map_err(|e| anyhow!("store {}: {}", self.name, db_message(&e)))
    }
    fn query(&mut self, sql: &str, params: &[Val]) -> anyhow::Result<Vec<Vec<Val>>> {
        let p: Vec<&(dyn ToSql + Sync)> = params.iter().map(|v| v as _).collect();
        let rows = self
            .client
            .query(sql, &p)
            .map_err(|e| anyhow!("store {}: {}", self.name, db_message(&e)))?;
        Ok(rows
            .iter()
            .map(|r| (0..r.len()).map(|i| r.get::<_, Val>(i)).collect())
            .collect())
    }
    fn query_each(
        &mut self,
        sql: &str,
        params: &[Val],
        each: &mut dyn for<'r> FnMut(&[ValRef<'r>]) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        use postgres::fallible_iterator::FallibleIterator;
        let name = self.name.clone();
        let err = |e: postgres::Error| anyhow!("store {name}: {}", db_message(&e));
        let p: Vec<&(dyn ToSql + Sync)> = params.iter().map(|v| v as _).collect();
        let mut rows = self.client.query_raw(sql, p).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            let vals = (0..r.len())
                .map(|i| r.try_get::<_, ValRef>(i))
                .collect::<Result<Vec<_>, _>>()
                .map_err(err)?;
            each(&vals)?;
        }
        Ok(())
    }
    fn begin(&mut self, exclusive: bool) -> anyhow::Result<()> {
        self.client
            .batch_execute(if exclusive {
                "BEGIN; SELECT pg_advisory_xact_lock(7363726970)"
            } else {
                "BEGIN"
            })
            .map_err(|e| anyhow!("store {}: {}", self.name, db_message(&e)))
    }
    fn commit(&mut self) -> anyhow::Result<()> {
        self.client
            .batch_execute("COMMIT")
            .map_err(|e| anyhow!("store {}: {}", self.name, db_message(&e)))
    }
    fn rollback(&mut self) {
        let _ = self.client.batch_execute("ROLLBACK");
    }
}

fn db_message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(d) => d.message().to_string(),
        None => e.to_string(),
    }
}
