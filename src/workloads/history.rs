//! `cryptobench history`: the runs kept in the store: list, show, tag, export, import, rm.

use crate::failure::Failure;
use crate::render::document::Report;
use crate::render::model::{Block, Column, Table};
use crate::render::trend::utc;
use crate::render::{Format, Single};
use crate::store::resolve::Resolver;
use crate::store::runs::{self, Filter};
use crate::store::{Access, StoreUrl};
use std::io::Write;
use std::path::PathBuf;

mod since;
pub mod trend;

use since::since_unix;

#[derive(clap::Args)]
pub struct HistoryArgs {
    #[command(subcommand)]
    pub action: Option<Action>,
    /// The store: sqlite:PATH or postgresql://USER@HOST/DB [default: $CRYPTOBENCH_STORE,
    /// else sqlite:$XDG_DATA_HOME/cryptobench/results.db].
    #[arg(long, value_name = "URL", global = true)]
    pub store: Option<String>,
    #[command(flatten)]
    pub filter: ListArgs,
}

#[derive(clap::Args)]
pub struct ListArgs {
    /// Only this machine: its id (or the start of it) or its hostname.
    #[arg(long, value_name = "ID|HOST")]
    pub machine: Option<String>,
    /// Only runs of this workload (speed, tls, vpn).
    #[arg(long, value_name = "NAME")]
    pub workload: Option<String>,
    /// Only runs started since: YYYY-MM-DD (UTC), a number of days or hours ago (7d, 12h),
    /// or Unix seconds.
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only the run with this tag.
    #[arg(long, value_name = "NAME")]
    pub tag: Option<String>,
    /// The newest N runs (0: all).
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub limit: usize,
    /// table, json or markdown.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// What the listing can write.
const LISTING_FORMATS: [Format; 3] = [Format::Table, Format::Json, Format::Markdown];

/// Where every action's `--help` points.
const DOCS: &str = "See docs/history.md in the sources.";

#[derive(clap::Subcommand)]
pub enum Action {
    /// Render one run like `report` (RUN: an id, a tag or `last`).
    #[command(after_help = DOCS)]
    Show {
        run: String,
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
    /// Name a run (for example baseline); a tag names one run, so it moves.
    #[command(after_help = DOCS)]
    Tag { run: String, name: String },
    /// Write a run as JSON Lines on stdout, exactly as it was written.
    #[command(after_help = DOCS)]
    Export { run: String },
    /// Store the runs of JSON Lines files (points already there are not doubled); with no
    /// file, every run waiting in the spool (then removed from it).
    #[command(after_help = DOCS)]
    Import {
        #[arg(value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    /// Each point over time on each machine: the change points, and what the
    /// environment recorded as different at each (table, markdown, json or html).
    #[command(after_help = DOCS)]
    Trend(Box<trend::TrendArgs>),
    /// Delete a run, its points and tags.
    #[command(after_help = DOCS)]
    Rm {
        run: String,
        /// Delete it although a tag names it (the tags go with it).
        #[arg(long)]
        force: bool,
    },
}

pub fn run(args: HistoryArgs) -> Result<i32, Failure> {
    let url = StoreUrl::choose(args.store.as_deref(), false)
        .map_err(Failure::input)?
        .ok_or_else(|| {
            Failure::Input(
                "no store: CRYPTOBENCH_STORE is none and no home directory is known: give --store URL"
                    .into(),
            )
        })?;
    let since = match args.filter.since.as_deref() {
        Some(s) => Some(since_unix(s).map_err(Failure::input)?),
        None => None,
    };
    // Listing, show and export only read: they work on a store this user cannot write,
    // and never create one.
    let access = match args.action {
        None | Some(Action::Show { .. } | Action::Export { .. } | Action::Trend(_)) => Access::Read,
        Some(Action::Tag { .. } | Action::Rm { .. }) => Access::Update,
        Some(Action::Import { .. }) => Access::Write,
    };
    let mut resolver = Resolver::new(Some(url), access);
    match args.action {
        None => {
            let f = &args.filter;
            // Refused before the store is opened.
            f.format.offered_by("history", &LISTING_FORMATS)?;
            let filter = Filter {
                machine: f.machine.clone(),
                workload: f.workload.clone(),
                since_unix: since,
                until_unix: None,
                tag: f.tag.clone(),
                limit: f.limit,
            };
            let rows = runs::list(resolver.store().map_err(Failure::input)?, &filter)
                .map_err(Failure::runtime)?;
            let mut listing = Single {
                blocks: &|| vec![Block::Table(listing(&rows))],
                json: &|out| out.value(&rows),
                html: None,
            };
            crate::shell::show::print(&mut listing, f.format)?;
        }
        Some(Action::Show { run, format }) => {
            let loaded = resolver.load(&run).map_err(Failure::input)?;
            let opts = crate::workloads::table::render_options(None);
            crate::shell::show::print(&mut Report::of(&loaded, &opts), format)?;
        }
        Some(Action::Tag { run, name }) => {
            let id = resolver.run_id(&run).map_err(Failure::input)?;
            let store = resolver.store().map_err(Failure::input)?;
            runs::check_tag_name(store, &name).map_err(Failure::input)?;
            runs::tag(store, &id, &name).map_err(Failure::runtime)?;
            println!("{name} -> {id}");
        }
        Some(Action::Export { run }) => {
            let id = resolver.run_id(&run).map_err(Failure::input)?;
            let lines = runs::lines(resolver.store().map_err(Failure::input)?, &id)
                .map_err(Failure::runtime)?;
            let mut out = std::io::stdout().lock();
            for l in lines {
                writeln!(out, "{l}").map_err(|e| Failure::Runtime(format!("cannot write: {e}")))?;
            }
        }
        Some(Action::Import { files }) => import(&mut resolver, files)?,
        Some(Action::Trend(t)) => {
            return trend::run(resolver.store().map_err(Failure::input)?, &t);
        }
        Some(Action::Rm { run, force }) => {
            let id = resolver.run_id(&run).map_err(Failure::input)?;
            let store = resolver.store().map_err(Failure::input)?;
            let tags = runs::tags_of(store, &id).map_err(Failure::runtime)?;
            if !tags.is_empty() && !force {
                return Err(Failure::Input(format!(
                    "run {id} is tagged {}: check it is the run you mean (`cryptobench history show {id}`), then remove it with --force",
                    tags.iter().map(|t| crate::units::shown(t)).collect::<Vec<_>>().join(", ")
                )));
            }
            runs::remove(store, &id).map_err(Failure::runtime)?;
            println!("removed {id}");
        }
    }
    Ok(0)
}

/// Imports files, or the whole spool; spooled files are removed once stored.
fn import(resolver: &mut Resolver, files: Vec<PathBuf>) -> Result<(), Failure> {
    let from_spool = files.is_empty();
    let files = if from_spool {
        let mut f: Vec<PathBuf> = crate::store::sink::spool_dir()
            .and_then(|d| std::fs::read_dir(d).ok())
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        f.sort();
        f
    } else {
        files
    };
    // Every file is read before anything is stored: a file with no record in it (a run
    // whose every record is unreadable among them) is bad input, and then nothing is
    // imported.
    let mut read = Vec::new();
    for file in &files {
        let loaded =
            crate::record::read::read_files(std::slice::from_ref(file)).map_err(Failure::input)?;
        if loaded.record_count() == 0 && !from_spool {
            return Err(Failure::Input(super::report::no_records(
                std::slice::from_ref(file),
                &loaded.skipped,
            )));
        }
        read.push(loaded);
    }
    let store = resolver.store().map_err(Failure::input)?;
    for (file, loaded) in files.iter().zip(&read) {
        super::report::print_skipped(&loaded.skipped);
        let (n, added) = runs::import(store, loaded).map_err(|e| {
            if e.is::<runs::Refused>() {
                Failure::input(e)
            } else {
                Failure::runtime(e)
            }
        })?;
        println!(
            "{}: {n} run(s), {added} new point(s) of {} into {}",
            crate::units::shown_path(file),
            loaded.record_count(),
            store.name()
        );
        if from_spool && loaded.skipped.is_empty() {
            let _ = std::fs::remove_file(file);
        }
    }
    if files.is_empty() {
        println!("nothing to import: the spool is empty");
    }
    Ok(())
}

/// The listing's table (JSON has the rows themselves).
fn listing(rows: &[runs::RunRow]) -> Table {
    let mut t = Table::new(
        format!("{} run(s), newest first", rows.len()),
        vec![
            Column::text("run"),
            Column::text("tags"),
            Column::text("started (UTC)"),
            Column::text("workload"),
            Column::num("points"),
            Column::text("status"),
            Column::text("host"),
            Column::text("machine"),
            Column::text("cpu"),
        ],
    );
    for r in rows {
        t.push(vec![
            r.run_id.clone(),
            r.tags.join(","),
            utc(r.started_unix),
            r.workload.clone(),
            r.points.to_string(),
            match r.interrupted {
                Some(true) => "interrupted".into(),
                Some(false) => "finished".into(),
                None => "unfinished".into(),
            },
            r.hostname.clone(),
            r.machine_id.clone(),
            r.cpu_model.clone(),
        ]);
    }
    t
}
