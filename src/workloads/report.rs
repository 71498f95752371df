//! `cryptobench report FILE...`: render saved records of any workload, from one or more
//! files and runs, in any format. It never re-runs anything. Runs stay apart.

use super::Failure;
use crate::render::document::{self, Options};
use crate::render::Format;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct ReportArgs {
    /// JSON Lines files written with --output (- for standard input), or runs in the
    /// store: a run id, a tag or `last`.
    #[arg(value_name = "FILE|RUN", required = true)]
    pub files: Vec<PathBuf>,
    /// The store runs are looked up in [default: $CRYPTOBENCH_STORE, else the local one].
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Report the crossover size between two speed paths (labels or names), e.g. openssl,af_alg.
    #[arg(long, value_name = "A,B")]
    pub crossover: Option<String>,
}

pub fn run(args: ReportArgs) -> Result<i32, Failure> {
    let crossover = match args.crossover.as_deref() {
        None => None,
        Some(spec) => match crate::cli::items(spec, "--crossover", "openssl,af_alg")
            .map_err(Failure::Input)?[..]
        {
            [a, b] => Some((a.to_string(), b.to_string())),
            _ => {
                return Err(Failure::Input(format!(
                    "invalid --crossover '{}': give two paths, e.g. --crossover openssl,af_alg",
                    crate::cli::shown(spec)
                )))
            }
        },
    };
    let loaded = crate::store::resolve::load_args(&args.files, args.store.as_deref())
        .map_err(Failure::Input)?;
    if loaded.record_count() == 0 {
        let names: Vec<String> = args
            .files
            .iter()
            .map(|f| crate::cli::shown_path(f))
            .collect();
        let skipped = if loaded.skipped.is_empty() {
            String::new()
        } else {
            let s = &loaded.skipped[0];
            format!(
                " ({} unreadable line(s), the first: line {}: {})",
                loaded.skipped.len(),
                s.line,
                crate::cli::shown(&s.reason)
            )
        };
        return Err(Failure::Input(format!(
            "no records in {}{skipped}: give files written with `cryptobench speed|tls|vpn --output FILE`",
            names.join(", ")
        )));
    }
    for s in &loaded.skipped {
        eprintln!(
            "cryptobench: {} line {}: skipped: {}",
            crate::cli::shown_path(&s.file),
            s.line,
            crate::cli::shown(&s.reason)
        );
    }
    let opts = Options { crossover };
    print!("{}", document::render(&loaded, args.format, &opts));
    Ok(0)
}
