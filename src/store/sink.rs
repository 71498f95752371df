//! The store as the run's second sink, beside `--output`. A store that stops answering
//! mid-run never stops the run: its points go on into a local JSON Lines spool, said
//! once, and `cryptobench history import` pushes them later (nothing lost or doubled).

use super::{runs, Store};
use crate::record::read::AnyRecord;
use crate::record::Sink;
use crate::record::{Environment, JsonLinesWriter, RunEnd};
use anyhow::anyhow;
use std::path::PathBuf;

pub struct StoreSink {
    store: Option<Box<dyn Store>>,
    name: String,
    workload: String,
    env: Option<Environment>,
    /// Every record so far: what the spool starts with when the store goes away.
    records: Vec<AnyRecord>,
    spool: Option<JsonLinesWriter>,
}

/// Where runs the store could not take wait: $XDG_DATA_HOME/cryptobench/spool.
pub fn spool_dir() -> Option<PathBuf> {
    super::dirs::data_dir().map(|d| d.join("spool"))
}

impl StoreSink {
    /// `store` is already open (a store that cannot be opened is bad input, refused
    /// before anything runs).
    pub fn new(store: Box<dyn Store>, workload: &str) -> Self {
        StoreSink {
            name: store.name().to_string(),
            store: Some(store),
            workload: workload.into(),
            env: None,
            records: Vec::new(),
            spool: None,
        }
    }

    /// The store failed: say so once and move everything of this run to the spool.
    fn fall_back(&mut self, why: &str) {
        self.store = None;
        let Some(env) = &self.env else { return };
        let path = spool_dir().map(|d| d.join(format!("{}.jsonl", env.run_id)));
        let opened = path
            .as_ref()
            .ok_or_else(|| anyhow!("no home directory"))
            .and_then(|p| {
                super::dirs::private_dir(p.parent().unwrap_or(p))?;
                // The spool holds the command line: readable by its owner only.
                use std::os::unix::fs::OpenOptionsExt;
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .mode(0o600)
                    .open(p)?;
                JsonLinesWriter::append(p)
            });
        match opened {
            Ok(mut w) => {
                let mut ok = w.write(env).is_ok();
                for r in &self.records {
                    ok &= w.write(r).is_ok();
                }
                let shown = crate::units::shown_path(path.as_deref().unwrap_or_else(|| std::path::Path::new("")));
                eprintln!(
                    "cryptobench: store {} is unreachable ({why}): the run goes on; its points are kept in {shown}{}: push them later with `cryptobench history import {shown}`",
                    self.name,
                    if ok { "" } else { " (partly: writing it failed)" }
                );
                self.spool = Some(w);
            }
            Err(e) => eprintln!(
                "cryptobench: store {} is unreachable ({why}) and the spool cannot be written ({e}): this run is kept only in --output, if given",
                self.name
            ),
        }
    }
}

impl Sink for StoreSink {
    fn environment(&mut self, env: &Environment) -> anyhow::Result<()> {
        self.env = Some(env.clone());
        if let Some(s) = self.store.as_deref_mut() {
            if let Err(e) = runs::begin_run(s, env, &self.workload) {
                self.fall_back(&e.to_string());
            }
        }
        Ok(())
    }
    fn record(&mut self, rec: &AnyRecord) -> anyhow::Result<()> {
        let seq = self.records.len();
        self.records.push(rec.clone());
        if let Some(s) = self.store.as_deref_mut() {
            if let Err(e) = runs::add_point(s, seq, rec) {
                self.fall_back(&e.to_string());
            }
        } else if let Some(w) = self.spool.as_mut() {
            let _ = w.write(rec);
        }
        Ok(())
    }
    fn end(&mut self, end: &RunEnd) -> anyhow::Result<()> {
        if let Some(s) = self.store.as_deref_mut() {
            if let Err(e) = runs::end_now(s, end) {
                self.fall_back(&e.to_string());
            } else {
                return Ok(());
            }
        }
        if let Some(w) = self.spool.as_mut() {
            let _ = w.write(end);
        }
        Ok(())
    }
}
