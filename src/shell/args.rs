//! What every subcommand shares on its command line: the common flags, and one parser for
//! comma lists (with binary units), so that every flag reports bad input the same way.

use crate::render::Format;
use anyhow::anyhow;
use std::path::PathBuf;

/// A comma list as clap parsed it (`value_parser = |s: &str| parse(s).map(List)`): the
/// workload gets the items, never the string (clap would take a bare `Vec` for many
/// occurrences of the flag).
#[derive(Clone, Debug, PartialEq)]
pub struct List<T>(pub Vec<T>);

/// The flags every measuring workload has, flattened into each subcommand's args.
#[derive(clap::Args, Clone, Debug)]
pub struct CommonArgs {
    /// Output format on stdout (openssl: the `openssl speed` layout, speed only).
    // html is parsed but hidden, so that `check` can point to `report --format html`.
    #[arg(long, default_value = "table", value_parser = Format::parser(
        &[Format::Table, Format::Openssl, Format::Json, Format::Csv, Format::Markdown],
        &[Format::Html]))]
    pub format: Format,
    /// Append JSON Lines (the environment, then one record per point, flushed) to FILE.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Seconds measured per point [speed: 0.08; tls and vpn: 5].
    #[arg(allow_negative_numbers = true, long, visible_alias = "duration", value_name = "SECONDS", value_parser = crate::units::seconds)]
    pub time: Option<f64>,
    /// Also keep the run in this store: sqlite:PATH or postgresql://USER@HOST/DB
    /// [default: $CRYPTOBENCH_STORE, else sqlite:$XDG_DATA_HOME/cryptobench/results.db].
    #[arg(long, value_name = "URL", conflicts_with = "no_store")]
    pub store: Option<String>,
    /// Keep the run in no store (only --output, if given).
    #[arg(long)]
    pub no_store: bool,
    /// Run as a DUT's agent for a controller (`--dut`): JSON Lines on stdout, stopped by
    /// `stop` or EOF on stdin. Given by the controller, never by hand.
    #[arg(long, hide = true)]
    pub agent: bool,
}

impl CommonArgs {
    /// Checks what can be checked before anything runs: the output path (nothing is
    /// created or touched) and that the format is offered by `workload`.
    pub fn check(&self, workload: &str) -> anyhow::Result<()> {
        if self.format == Format::Openssl && workload != "speed" {
            return Err(anyhow!(
                "--format openssl is the `openssl speed` layout, offered by speed only: for {workload} use table, markdown, csv or json"
            ));
        }
        if self.format == Format::Html {
            return Err(anyhow!(
                "--format html is for saved records: run {workload} with --output FILE, then `cryptobench report FILE --format html`"
            ));
        }
        if let Some(p) = &self.output {
            crate::record::JsonLinesWriter::check(p)?;
        }
        self.store_url().map(|_| ())
    }

    /// Where `workload`'s lines go, checked (`check`) and parsed: what the driver and the
    /// DUT relay take, so that nothing below the commands reads these flags.
    pub fn output(&self, workload: &str) -> anyhow::Result<crate::sinks::Output> {
        self.check(workload)?;
        Ok(crate::sinks::Output {
            file: self.output.clone(),
            store: self.store_url()?,
            agent: self.agent,
        })
    }

    /// The store this run writes to, if any (`--store`, `--no-store`, `CRYPTOBENCH_STORE`).
    pub fn store_url(&self) -> anyhow::Result<Option<crate::store::StoreUrl>> {
        crate::store::StoreUrl::choose(self.store.as_deref(), self.no_store)
    }
}
