//! `cryptobench report FILE...`: render saved records of any workload, from one or more
//! files and runs, in any format. It never re-runs anything. Runs stay apart.

use super::Failure;
use crate::render::document::{self, Options};
use crate::render::Format;
use std::path::{Path, PathBuf};

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
    /// Also write each figure as SVG and PNG into DIR (created if missing).
    #[arg(long, value_name = "DIR")]
    pub plots: Option<PathBuf>,
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
    let plots = match &args.plots {
        Some(dir) => Some((dir.clone(), check_plots_dir(dir)?)),
        None => None,
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
    if let Some((dir, font)) = plots {
        write_plots(&loaded, &opts, &dir, &font)?;
    }
    print!("{}", document::render(&loaded, args.format, &opts));
    Ok(0)
}

/// Checks `--plots DIR` and loads the PNG font before anything is read or written.
fn check_plots_dir(dir: &Path) -> Result<resvg::usvg::Options<'static>, Failure> {
    let shown = crate::cli::shown_path(dir);
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => {
            return Err(Failure::Input(format!(
                "--plots {shown} is not a directory: give a directory for the figures"
            )))
        }
        Ok(_) => {}
        Err(_) => {
            let parent = dir.parent().filter(|p| !p.as_os_str().is_empty());
            if parent.is_some_and(|p| !p.is_dir()) {
                return Err(Failure::Input(format!(
                    "--plots {shown}: its parent is not a directory: give a directory in an existing one"
                )));
            }
        }
    }
    crate::render::plots::png::options().map_err(Failure::Input)
}

fn write_plots(
    loaded: &crate::record::read::Loaded,
    opts: &Options,
    dir: &Path,
    font: &resvg::usvg::Options,
) -> Result<(), Failure> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Failure::Input(format!(
            "cannot create --plots {}: {e}",
            crate::cli::shown_path(dir)
        ))
    })?;
    let mut written = 0;
    for run in &loaded.runs {
        for (_, figures) in crate::render::plots::of_run(run, opts) {
            for f in figures {
                crate::render::plots::png::write(dir, &f.id, &f.svg, font)
                    .map_err(Failure::Runtime)?;
                written += 1;
            }
        }
    }
    eprintln!(
        "cryptobench: wrote {written} figure(s) as SVG and PNG into {}",
        crate::cli::shown_path(dir)
    );
    Ok(())
}
