//! The store's schema, one for both back ends, as numbered migrations applied on open.
//! Add a migration at the end; never edit one that has shipped.

use super::sql::{in_transaction, Store, Val};
use anyhow::anyhow;

/// Migration N (1-based) is `MIGRATIONS[N - 1]`: statements run in one transaction.
pub const MIGRATIONS: &[&[&str]] = &[&[
    "CREATE TABLE runs (
        run_id TEXT PRIMARY KEY,
        machine_id TEXT NOT NULL,
        hostname TEXT NOT NULL,
        cpu_model TEXT NOT NULL,
        workload TEXT NOT NULL,
        started_unix BIGINT NOT NULL,
        ended_unix BIGINT,
        interrupted BIGINT,
        points BIGINT NOT NULL DEFAULT 0,
        command_line TEXT NOT NULL,
        environment TEXT NOT NULL,
        run_end TEXT
    )",
    "CREATE INDEX runs_started ON runs (started_unix, run_id)",
    "CREATE INDEX runs_machine ON runs (machine_id)",
    "CREATE TABLE tags (
        name TEXT PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs (run_id)
    )",
    "CREATE INDEX tags_run ON tags (run_id)",
    "CREATE TABLE points (
        run_id TEXT NOT NULL REFERENCES runs (run_id),
        seq BIGINT NOT NULL,
        workload TEXT NOT NULL,
        impl TEXT NOT NULL,
        impl_version TEXT NOT NULL,
        variant TEXT,
        label TEXT NOT NULL,
        subject TEXT,
        size BIGINT,
        direction TEXT,
        parallel BIGINT,
        throughput_bps DOUBLE PRECISION,
        ci_low DOUBLE PRECISION,
        ci_high DOUBLE PRECISION,
        wall_s DOUBLE PRECISION NOT NULL,
        cpu_user_s DOUBLE PRECISION,
        cpu_sys_s DOUBLE PRECISION,
        cpu_s_per_gb DOUBLE PRECISION,
        others_cpu_pct DOUBLE PRECISION NOT NULL,
        disturbed BIGINT NOT NULL,
        samples_bps TEXT NOT NULL,
        record TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    )",
    "CREATE INDEX points_identity ON points (workload, impl, subject, size, direction, parallel)",
], &[
    // Every column `history trend` and `compare history` read, so that they scan this
    // index instead of the table with its records (a million points: 150 MB, not 2 GB).
    "CREATE INDEX points_trend ON points (workload, subject, size, impl, direction, parallel, variant,
        label, impl_version, run_id, seq, throughput_bps, ci_low, ci_high, disturbed, others_cpu_pct)",
]];

/// The schema version this build writes.
pub fn current() -> i64 {
    MIGRATIONS.len() as i64
}

/// The schema version a store holds: 0 where it has none yet.
fn found_version(s: &mut dyn Store) -> anyhow::Result<i64> {
    Ok(s.query("SELECT MAX(version) FROM schema_version", &[])?
        .first()
        .and_then(|r| r.first())
        .and_then(Val::int)
        .unwrap_or(0))
}

fn newer_than_this(name: &str, found: i64) -> String {
    format!(
        "store {name} has schema version {found}, newer than this cryptobench writes ({}): upgrade cryptobench, or use another --store",
        current()
    )
}

/// Brings the store up to `current()`, refusing one made by a newer cryptobench. Other
/// writers wait while a migration runs.
pub fn migrate(s: &mut dyn Store) -> anyhow::Result<()> {
    let name = s.name().to_string();
    in_transaction(s, true, |s| {
        s.execute(
            "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT PRIMARY KEY)",
            &[],
        )?;
        let found = found_version(s)?;
        if found > current() {
            return Err(anyhow::Error::msg(newer_than_this(&name, found)));
        }
        for (i, statements) in MIGRATIONS.iter().enumerate().skip(found as usize) {
            for sql in *statements {
                s.execute(sql, &[])
                    .map_err(|e| anyhow!("store {name}: migration {}: {e}", i + 1))?;
            }
            s.execute(
                "INSERT INTO schema_version (version) VALUES ($1)",
                &[Val::Int(i as i64 + 1)],
            )?;
        }
        Ok(())
    })
}

/// What a reading command checks instead of migrating (it changes nothing): the store's
/// schema is the one this build reads.
pub fn check_readable(s: &mut dyn Store) -> anyhow::Result<()> {
    let name = s.name().to_string();
    let found = found_version(s)?;
    if found > current() {
        return Err(anyhow::Error::msg(newer_than_this(&name, found)));
    }
    if found < current() {
        return Err(anyhow!(
            "store {name} has schema version {found}, older than this cryptobench reads ({}): upgrade it with a writing command, e.g. `cryptobench history --store URL import` (no file)",
            current()
        ));
    }
    Ok(())
}
