//! `cryptobench history trend`: each point identity on each machine over time, its change
//! points and what the environment says changed there. Table, Markdown, JSON or HTML
//! (one chart per series); `--plots DIR` also writes each chart as SVG and PNG.

use super::since::since_unix;
use crate::analyse::changepoint::Settings;
use crate::analyse::trend;
use crate::failure::Failure;
use crate::render::plots::trend::trend_plot;
use crate::render::trend::{axis_date, blocks, html_section};
use crate::render::{Format, Single};
use crate::store::series::{self, Selection};
use crate::store::Store;
use std::path::PathBuf;

#[derive(clap::Args, Clone)]
pub struct TrendArgs {
    /// Only this machine: its id (or the start of it) or its hostname.
    #[arg(long, value_name = "ID|HOST")]
    pub machine: Option<String>,
    /// Only these implementations (names or labels, comma-separated).
    #[arg(long = "impl", value_name = "LIST")]
    pub impls: Option<String>,
    /// Only these algorithms (speed), suites (tls) or tunnels (vpn), comma-separated.
    #[arg(long, value_name = "LIST")]
    pub alg: Option<String>,
    /// Only these sizes (16, 1k, 16k...), comma-separated.
    #[arg(long, value_name = "LIST")]
    pub size: Option<String>,
    /// Only these directions (enc, dec, sign, up...), comma-separated.
    #[arg(long, value_name = "LIST")]
    pub direction: Option<String>,
    /// Only this workload (speed, tls, vpn).
    #[arg(long, value_name = "NAME")]
    pub workload: Option<String>,
    /// Only runs started since: YYYY-MM-DD (UTC), 7d, 12h, or Unix seconds.
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only the points the run with this tag measured.
    #[arg(long, value_name = "NAME")]
    pub tag: Option<String>,
    /// table, markdown, json or html.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also write each series' chart as SVG and PNG into this directory.
    #[arg(long, value_name = "DIR")]
    pub plots: Option<PathBuf>,
    /// Runs per sliding window of the change-point search.
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = clap::value_parser!(u64).range(4..=10000))]
    pub window: u64,
    /// The p-value a change point must reach.
    #[arg(long, value_name = "P", default_value_t = 0.001)]
    pub max_pvalue: f64,
    /// The smallest change reported, in percent.
    #[arg(long, value_name = "PCT", default_value_t = 0.0)]
    pub min_change: f64,
    /// Series with fewer runs are left out.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub min_runs: usize,
}

const FORMATS: [Format; 4] = [Format::Table, Format::Markdown, Format::Json, Format::Html];

impl TrendArgs {
    fn settings(&self) -> Result<Settings, Failure> {
        if !(self.max_pvalue > 0.0 && self.max_pvalue < 1.0) {
            return Err(Failure::Input(format!(
                "invalid --max-pvalue {}: give a probability between 0 and 1, e.g. 0.001",
                self.max_pvalue
            )));
        }
        if !(0.0..1000.0).contains(&self.min_change) {
            return Err(Failure::Input(format!(
                "invalid --min-change {}: give a percentage from 0, e.g. 5",
                self.min_change
            )));
        }
        Ok(Settings {
            window: self.window as usize,
            max_pvalue: self.max_pvalue,
            min_magnitude: self.min_change / 100.0,
            ..Settings::default()
        })
    }

    fn selection(&self) -> Result<Selection, Failure> {
        let list = |v: &Option<String>| -> Vec<String> {
            v.iter()
                .flat_map(|l| l.split(','))
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        };
        let sizes = match &self.size {
            Some(l) => crate::units::byte_list(l, "--size", 1..=1 << 40, "16,16k")
                .map_err(Failure::input)?,
            None => Vec::new(),
        };
        Ok(Selection {
            machine: self.machine.clone(),
            workload: self.workload.clone(),
            impls: list(&self.impls),
            subjects: list(&self.alg),
            sizes,
            directions: list(&self.direction),
            since_unix: self
                .since
                .as_deref()
                .map(since_unix)
                .transpose()
                .map_err(Failure::input)?,
            tag: self.tag.clone(),
            runs: None,
        })
    }
}

pub fn run(store: &mut dyn Store, args: &TrendArgs) -> Result<i32, Failure> {
    args.format.offered_by("history trend", &FORMATS)?;
    let settings = args.settings()?;
    let selection = args.selection()?;
    let font = match &args.plots {
        Some(dir) => Some(crate::workloads::report::check_plots_dir(dir)?),
        None => None,
    };
    let mut collector = trend::Collector::default();
    series::for_each_point(store, &selection, |p| collector.add(p)).map_err(Failure::runtime)?;
    let facts = series::facts(store, collector.run_ids().into_iter()).map_err(Failure::runtime)?;
    let mut all = collector.finish(&facts, &settings);
    all.retain(|s| s.points.len() >= args.min_runs.max(1));
    if all.is_empty() {
        return Err(Failure::Input(format!(
            "no series of {} run(s) or more in {} for this selection: widen the filters, or lower --min-runs",
            args.min_runs.max(1),
            store.name()
        )));
    }
    if let (Some(dir), Some(font)) = (&args.plots, &font) {
        let figures = all.iter().map(|s| {
            let f = trend_plot(s, axis_date(s));
            (f.id, f.svg)
        });
        if crate::render::plots::png::write_all(dir, figures, font)
            .map_err(Failure::runtime)?
            .is_none()
        {
            eprintln!(
                "cryptobench: interrupted: --plots {} is as it was: no chart was written",
                crate::units::shown_path(dir)
            );
            return Ok(crate::failure::EXIT_INTERRUPTED);
        }
        eprintln!(
            "cryptobench: wrote {} trend chart(s) as SVG and PNG into {}",
            all.len(),
            crate::units::shown_path(dir)
        );
    }
    // The series: their tables, as JSON, or a page with one chart per series.
    let mut trend = Single {
        blocks: &|| blocks(&all),
        json: &|out| out.value(&serde_json::json!({ "series": all })),
        html: Some(&|body| {
            html_section(&all, usize::MAX, body);
            "cryptobench: results over time".into()
        }),
    };
    crate::shell::show::print(&mut trend, args.format)?;
    Ok(0)
}
