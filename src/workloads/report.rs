//! `cryptobench report FILE...`: render saved records of any workload, from one or more
//! files and runs, in any format. It never re-runs anything. Runs stay apart.

use anyhow::anyhow;

use crate::failure::Failure;
use crate::render::document::{Options, Report};
use crate::render::{emit, Document, Format};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct ReportArgs {
    /// JSON Lines files written with --output (- for standard input), or runs in the
    /// store: a run id, a tag, `last` or `last:N` (the newest N), several joined by commas.
    #[arg(value_name = "FILE|RUN", required_unless_present = "machines")]
    pub files: Vec<PathBuf>,
    /// The newest run of each of these machines in the store (hostnames or machine ids),
    /// with their speed points side by side: e.g. --machines board,atom.
    #[arg(long, value_name = "A,B")]
    pub machines: Option<String>,
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

/// Why `files` gave nothing to read, in one line (what `report` and `history import` say).
pub fn no_records(files: &[PathBuf], skipped: &crate::record::read::Skipped) -> String {
    let names: Vec<String> = files.iter().map(|f| crate::units::shown_path(f)).collect();
    let skipped = if skipped.is_empty() {
        String::new()
    } else {
        let s = &skipped[0];
        format!(
            " ({} unreadable line(s), the first: line {}: {})",
            skipped.total(),
            s.line,
            crate::units::shown(&s.reason)
        )
    };
    format!(
        "no records in {}{skipped}: give files written with `cryptobench {} --output FILE`",
        names.join(", "),
        super::table::names("|")
    )
}

/// Each line that was skipped, on stderr: the first ones kept, then how many more.
pub fn print_skipped(skipped: &crate::record::read::Skipped) {
    for s in skipped.iter() {
        eprintln!(
            "cryptobench: {} line {}: skipped: {}",
            crate::units::shown_path(&s.file),
            s.line,
            crate::units::shown(&s.reason)
        );
    }
    if skipped.total() > skipped.len() {
        eprintln!(
            "cryptobench: and {} more line(s) skipped ({} in all)",
            skipped.total() - skipped.len(),
            skipped.total()
        );
    }
}

/// The newest run of each machine (hostname or machine id) in the store.
fn newest_runs(names: &[&str], store: Option<&str>) -> anyhow::Result<Vec<String>> {
    use crate::store::runs::{list, Filter};
    let url = crate::store::url::StoreUrl::choose(store, false)?;
    let mut resolver = crate::store::resolve::Resolver::new(url, crate::store::Access::Read);
    let s = resolver.store()?;
    names
        .iter()
        .map(|name| {
            let f = Filter {
                machine: Some(name.to_string()),
                limit: 1,
                ..Filter::default()
            };
            list(s, &f)?.into_iter().next().map(|r| r.run_id).ok_or_else(|| {
                anyhow!(
                    "--machines: no run of machine '{}' in {}: `cryptobench history` lists the machines",
                    crate::units::shown(name),
                    s.name()
                )
            })
        })
        .collect()
}

/// Speed points of several runs side by side: one column per run (machine), MB/s.
fn side_by_side(loaded: &crate::record::read::Loaded, heads: &[String]) -> String {
    use crate::render::model::{Block, Column, Table};
    use crate::render::write::table::terminal;
    use std::collections::BTreeMap;
    let mut cols = vec![
        Column::text("impl"),
        Column::text("alg"),
        Column::text("dir"),
        Column::num("size"),
        Column::num("thr"),
    ];
    cols.extend(heads.iter().map(|h| Column::num(h)));
    // Keyed by names, so rows sort by name.
    let mut rows: BTreeMap<(String, &str, &str, u64, u32), Vec<String>> = BTreeMap::new();
    for (k, run) in loaded.runs.iter().enumerate() {
        for r in &run.records {
            if let Some(r) = <crate::record::speed::SpeedData as crate::record::Listed>::pick(r) {
                let key = (
                    r.label.clone(),
                    r.alg.name(),
                    r.direction.name(),
                    r.size,
                    r.threads,
                );
                let row = rows
                    .entry(key)
                    .or_insert_with(|| vec!["-".into(); heads.len()]);
                if k < row.len() {
                    row[k] = format!(
                        "{}{}",
                        crate::units::mbps(r.throughput_bps),
                        if r.noisy { "~" } else { "" }
                    );
                }
            }
        }
    }
    let mut t = Table::new(
        "Machines side by side, MB/s (newest run of each; ~ noisy):",
        cols,
    );
    for ((label, alg, dir, size, thr), cells) in rows {
        let mut row = vec![
            label,
            alg.to_string(),
            dir.to_string(),
            size.to_string(),
            thr.to_string(),
        ];
        row.extend(cells);
        t.push(row);
    }
    terminal(&[Block::Table(t)])
}

pub fn run(args: ReportArgs) -> Result<i32, Failure> {
    let crossover = match args.crossover.as_deref() {
        None => None,
        Some(spec) => match crate::units::items(spec, "--crossover", "openssl,af_alg")
            .map_err(Failure::input)?[..]
        {
            [a, b] => Some((a.to_string(), b.to_string())),
            _ => {
                return Err(Failure::Input(format!(
                    "invalid --crossover '{}': give two paths, e.g. --crossover openssl,af_alg",
                    crate::units::shown(spec)
                )))
            }
        },
    };
    let plots = match &args.plots {
        Some(dir) => Some((dir.clone(), check_plots_dir(dir)?)),
        None => None,
    };
    let mut files = args.files.clone();
    let machines = match args.machines.as_deref() {
        Some(list) => {
            let names =
                crate::units::items(list, "--machines", "board,atom").map_err(Failure::input)?;
            let ids = newest_runs(&names, args.store.as_deref()).map_err(Failure::input)?;
            files.extend(ids.iter().map(PathBuf::from));
            names.iter().map(|n| n.to_string()).collect()
        }
        None => Vec::new(),
    };
    let opts = crate::workloads::table::render_options(crossover);
    let mut out = std::io::stdout().lock();
    // Files in a format written run by run are read that way: only the run at hand is
    // held, whatever the size of the files.
    let written = if crate::render::write::streams(args.format)
        && plots.is_none()
        && machines.is_empty()
        && crate::store::resolve::all_files(&files)
    {
        use crate::record::read::{Reader, RunSource};
        let mut reader = Reader::open(&files).map_err(Failure::input)?;
        if !reader.has_records().map_err(Failure::input)? {
            return Err(Failure::Input(no_records(&args.files, reader.skipped())));
        }
        let mut doc = Report::streamed(reader, &opts);
        let written = emit(&mut doc, args.format, &mut out);
        print_skipped(doc.skipped());
        written
    } else {
        let loaded = crate::store::resolve::load_args(&files, args.store.as_deref())
            .map_err(Failure::input)?;
        if loaded.record_count() == 0 {
            return Err(Failure::Input(no_records(&args.files, &loaded.skipped)));
        }
        print_skipped(&loaded.skipped);
        if let Some((dir, font)) = plots {
            if !write_plots(&loaded, &opts, &dir, &font)? {
                return Ok(crate::failure::EXIT_INTERRUPTED);
            }
        }
        emit(&mut Report::of(&loaded, &opts), args.format, &mut out).and_then(|_| {
            if !machines.is_empty() && matches!(args.format, Format::Table) {
                write!(out, "\n{}", side_by_side(&loaded, &machines))?;
            }
            Ok(out.flush()?)
        })
    };
    match written.map_err(|e| e.downcast::<std::io::Error>()) {
        // A reader that stopped early (`| head`) is not a failure.
        Err(Ok(io)) if io.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::Runtime(format!("cannot write the report: {io}")))
        }
        Err(Err(read)) => Err(Failure::Input(read.to_string())),
        _ => Ok(0),
    }
}

/// Checks `--plots DIR` and loads the PNG font before anything is read or written.
pub fn check_plots_dir(dir: &Path) -> Result<crate::render::plots::png::Font, Failure> {
    let shown = crate::units::shown_path(dir);
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => {
            return Err(Failure::Input(format!(
                "--plots {shown} is not a directory: give a directory for the figures"
            )))
        }
        Ok(_) => writable(dir).map_err(|e| {
            Failure::Input(format!(
                "--plots {shown}: cannot write into it: {e}: give a directory you can write to"
            ))
        })?,
        Err(_) => {
            let parent = dir.parent().filter(|p| !p.as_os_str().is_empty());
            if parent.is_some_and(|p| !p.is_dir()) {
                return Err(Failure::Input(format!(
                    "--plots {shown}: its parent is not a directory: give a directory in an existing one"
                )));
            }
            // The directory will be created in its parent.
            let parent = parent.unwrap_or(Path::new("."));
            writable(parent).map_err(|e| {
                Failure::Input(format!(
                    "--plots {shown}: cannot create it in {}: {e}: give a directory you can write to",
                    crate::units::shown_path(parent)
                ))
            })?;
        }
    }
    crate::render::plots::png::options().map_err(Failure::input)
}

/// Whether this user may create files in `dir` (by its effective ids, as the writes
/// will), so that an unwritable `--plots` is refused before any record is read.
fn writable(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes())?;
    // SAFETY: a valid NUL-terminated path that faccessat only reads.
    let r = unsafe {
        libc::faccessat(
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::W_OK | libc::X_OK,
            libc::AT_EACCESS,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn write_plots(
    loaded: &crate::record::read::Loaded,
    opts: &Options,
    dir: &Path,
    font: &crate::render::plots::png::Font,
) -> Result<bool, Failure> {
    // The runs the HTML report draws: the last MAX_RUNS_DRAWN, not a year of nightlies.
    let drawn = loaded
        .runs
        .len()
        .saturating_sub(crate::render::document::MAX_RUNS_DRAWN);
    let figures = loaded.runs[drawn..].iter().flat_map(|run| {
        crate::render::document::figures_of(run, opts)
            .into_iter()
            .flat_map(|(_, fs)| fs.into_iter().map(|f| (f.id, f.svg)))
    });
    let Some(written) =
        crate::render::plots::png::write_all(dir, figures, font).map_err(Failure::runtime)?
    else {
        eprintln!(
            "cryptobench: interrupted: --plots {} is as it was: no figure was written",
            crate::units::shown_path(dir)
        );
        return Ok(false);
    };
    eprintln!(
        "cryptobench: wrote {written} figure(s) as SVG and PNG into {}",
        crate::units::shown_path(dir)
    );
    Ok(true)
}
