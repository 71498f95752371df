//! What `report`, `compare` and `history show` take: a results file, or runs in the
//! store by id, tag, `last` or `last:N` (the newest N), several joined by commas. Both read through the same JSON Lines reader.

use super::sql::{Access, Store};
use super::{runs, StoreUrl};
use crate::record::read::{read_files, Loaded};
use anyhow::anyhow;
use std::path::PathBuf;

/// Turns arguments into runs: a file (or `-`) is read as a file; anything else is looked
/// up in the store, opened once and only when needed.
pub struct Resolver {
    url: Option<StoreUrl>,
    access: Access,
    store: Option<Box<dyn Store>>,
}

impl Resolver {
    pub fn new(url: Option<StoreUrl>, access: Access) -> Self {
        Resolver {
            url,
            access,
            store: None,
        }
    }

    /// The store, opened on first use.
    pub fn store(&mut self) -> anyhow::Result<&mut dyn Store> {
        if self.store.is_none() {
            let url = self.url.as_ref().ok_or_else(|| {
                anyhow!(
                "no store (--no-store or CRYPTOBENCH_STORE=none): give results files, or a --store"
            )
            })?;
            self.store = Some(super::open(url, self.access)?);
        }
        Ok(self.store.as_deref_mut().expect("opened above"))
    }

    /// One argument as the runs it names.
    pub fn load(&mut self, arg: &str) -> anyhow::Result<Loaded> {
        let path = PathBuf::from(arg);
        if arg == "-" || path.exists() || arg.contains('/') || arg.ends_with(".jsonl") {
            return read_files(&[path]);
        }
        let mut ids: Vec<String> = Vec::new();
        for name in arg.split(',') {
            for id in self.run_ids(name)? {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
        let store = self.store()?;
        let mut loaded = Loaded::default();
        for run_id in ids {
            let run = runs::load(store, &run_id)?
                .ok_or_else(|| anyhow!("run {run_id} vanished from store {}", store.name()))?;
            loaded.runs.push(run);
        }
        Ok(loaded)
    }

    /// The runs one name means: `last:N` the newest N, else one run (id, tag or `last`).
    fn run_ids(&mut self, name: &str) -> anyhow::Result<Vec<String>> {
        let Some(n) = name.strip_prefix("last:") else {
            return Ok(vec![self.run_id(name)?]);
        };
        let n = match n.parse::<usize>() {
            Ok(n) if (1..=1000).contains(&n) => n,
            _ => {
                return Err(anyhow!(
                    "'{}' is not a number of runs: give last:N with N from 1 to 1000, e.g. last:3",
                    crate::units::shown(name)
                ))
            }
        };
        let store = self.store()?;
        let ids = runs::newest(store, n)?;
        if ids.len() < n {
            return Err(anyhow!(
                "{name} asks for {n} runs, but store {} holds {}: give a smaller N",
                store.name(),
                ids.len()
            ));
        }
        Ok(ids)
    }

    /// The run id that `last`, a tag or an id means; an unknown name lists the nearest.
    pub fn run_id(&mut self, arg: &str) -> anyhow::Result<String> {
        let store = self.store()?;
        if let Some(id) = runs::resolve(store, arg)? {
            return Ok(id);
        }
        let near = runs::nearest(store, arg)?;
        let name = store.name().to_string();
        Err(anyhow::Error::msg(if near.is_empty() {
            format!(
                "no run '{}' in store {name}, which holds no runs yet: give a results file, or run a measurement first",
                crate::units::shown(arg)
            )
        } else {
            format!(
                "no run or tag '{}' in store {name}: the nearest are {} (see cryptobench history)",
                crate::units::shown(arg),
                near.join(", ")
            )
        }))
    }

    /// Every argument, their runs side by side in order.
    pub fn load_all(&mut self, args: &[String]) -> anyhow::Result<Loaded> {
        let mut all = Loaded::default();
        for a in args {
            let l = self.load(a)?;
            all.runs.extend(l.runs);
            all.skipped.extend(l.skipped);
        }
        Ok(all)
    }
}

/// Whether every argument is a file (or `-`), none a run in the store.
pub fn all_files(args: &[PathBuf]) -> bool {
    args.iter().all(|p| p.as_os_str() == "-" || p.exists())
}

/// What `report` and `compare` take: files are read together (a run split over files is
/// one run), like before; anything that is not a file is a run in the store (`store`:
/// their --store, else the default).
pub fn load_args(args: &[PathBuf], store: Option<&str>) -> anyhow::Result<Loaded> {
    if all_files(args) {
        return read_files(args);
    }
    let url = StoreUrl::choose(store, false)?;
    let names: Vec<String> = args
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    Resolver::new(url, Access::Read).load_all(&names)
}
