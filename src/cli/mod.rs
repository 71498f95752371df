#[cfg(feature = "advise")]
use crate::advise;
use crate::failure::Failure;
#[cfg(feature = "study")]
use crate::study;
use crate::workloads::table;
use crate::{dut, render, units, workloads};
use clap::{FromArgMatches, Subcommand};

/// The whole command line: the measuring workloads of `workloads::table`, then the other
/// commands.
pub fn command() -> clap::Command {
    let top = clap::Command::new("cryptobench")
        .version(workloads::probe::version_line())
        .about("Honest symmetric-crypto measurements across libraries and paths")
        .after_help(format!(
            "Documentation in the sources: README.md, and docs/ one page per subject: {}.md, kernel-paths.md, verify.md, reports.md, history.md, studies.md, advise.md, builds.md, routers.md, benchmarks.md.",
            table::names(".md, ")
        ))
        .subcommand_required(true)
        .arg_required_else_help(true);
    let top = table::MEASURING
        .iter()
        .fold(top, |c, e| c.subcommand(e.command()));
    Command::augment_subcommands(top)
}

/// A command line parsed: a measuring workload with its matches, or another command.
enum Parsed {
    Measuring(&'static dyn table::Entry, clap::ArgMatches),
    Other(Command),
}

// The commands that do not measure. (A doc comment here would become the program's about.)
#[derive(Subcommand)]
enum Command {
    /// Prove every selected path correct: known answers, Project Wycheproof's vectors and
    /// a round trip with a second implementation. Exit 1 names each failing vector.
    #[command(after_help = "See docs/verify.md in the sources.")]
    Verify(Box<workloads::verify::VerifyArgs>),
    /// What this machine offers: CPU crypto features, kernel crypto API (AF_ALG,
    /// /dev/crypto, /proc/crypto drivers), and the libraries found.
    #[command(after_help = "See docs/kernel-paths.md in the sources.")]
    Probe {
        /// table or json.
        #[arg(long, default_value = "table",
              value_parser = render::Format::parser(workloads::probe::FORMATS, &[]))]
        format: render::Format,
        #[command(flatten)]
        dut: dut::DutArgs,
    },
    /// Render records saved with --output (any workload, any number of files and runs)
    /// without re-running anything.
    #[command(after_help = "See docs/reports.md in the sources.")]
    Report(workloads::report::ReportArgs),
    /// Compare two results files (or two labels of one) point by point: ratio, 95%
    /// interval and a verdict per point; exit 3 on regression with --fail-on-regression.
    #[command(
        after_help = "See docs/reports.md (compare history: docs/history.md) in the sources."
    )]
    Compare(workloads::compare::CompareArgs),
    /// Print a shell completion script: cryptobench completions bash|zsh|fish.
    #[command(after_help = "See docs/reports.md in the sources.")]
    #[cfg(feature = "manuals")]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the main man page (roff) on stdout, or with --dir write every page into DIR:
    /// cryptobench.1 and one cryptobench-NAME.1 per subcommand.
    #[cfg(feature = "manuals")]
    Man {
        /// Write the main page and one page per subcommand into DIR (e.g.
        /// /usr/local/share/man/man1) instead of printing the main page.
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
    /// Remove what killed runs left behind: temp dirs of every workload (also done at the
    /// start of each run), uploads of agents that are gone and, as root, vpn's namespaces,
    /// links and daemons; with --dut, on the DUTs.
    #[command(after_help = "See docs/vpn.md and docs/routers.md in the sources.")]
    Cleanup {
        #[command(flatten)]
        dut: dut::DutArgs,
    },
    /// The runs kept in the store: list them, show, tag, export, import or remove one.
    #[command(after_help = "See docs/history.md in the sources.")]
    History(workloads::history::HistoryArgs),
    /// One of the six studies (offload, aesni, scaling, avx512, router-vpn, tls-stacks) as one
    /// command: its matrix, its table and its computed conclusion (--list describes them).
    #[command(
        after_help = "See docs/studies.md (and docs/builds.md for --openssl) in the sources."
    )]
    #[cfg(feature = "study")]
    Study(Box<study::StudyArgs>),
    /// The answer for this box: which tunnel, cipher and TLS setup, how fast, what limits
    /// it, each verdict with its interval; --share writes a row others can compare.
    #[cfg(feature = "advise")]
    #[command(after_help = "See docs/advise.md in the sources.")]
    Advise(Box<advise::AdviseArgs>),
    /// For bench/changepoints: series of runs judged by change points, one baseline and
    /// the history gate (JSON on stdin and stdout).
    #[command(hide = true)]
    JudgeSeries(workloads::judge_series::JudgeArgs),
}

/// The command line's parse, its run and its exit code (src/main.rs calls only this).
pub fn main() {
    let parsed = command()
        .try_get_matches()
        .and_then(|m| {
            if let Some(flag) = dut::option_without_dut(&m) {
                eprintln!("cryptobench: {flag} applies to DUTs only: add --dut URL or --dut-file FILE, or drop {flag}");
                std::process::exit(2);
            }
            match m.subcommand().and_then(|(name, sub)| Some((table::find(name)?, sub))) {
                Some((entry, sub)) => Ok(Parsed::Measuring(entry, sub.clone())),
                None => Command::from_arg_matches(&m).map(Parsed::Other),
            }
        });
    let parsed = match parsed {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
                || e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            {
                let _ = e.print();
                std::process::exit(
                    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                        2
                    } else {
                        0
                    },
                );
            }
            // One line: clap's first line with what it says on the next ones (the
            // missing argument, the valid values), plus where to look. A value our own
            // parser refused is said in its words when they name the flag: they show the
            // value safely, where clap's line would break at a newline inside it.
            let text = e.render().to_string();
            let ours = (e.kind() == ErrorKind::ValueValidation)
                .then(|| std::error::Error::source(&e).map(|s| s.to_string()))
                .flatten()
                .filter(|why| match e.get(clap::error::ContextKind::InvalidArg) {
                    Some(clap::error::ContextValue::String(a)) => {
                        why.contains(a.split(' ').next().unwrap_or(a))
                    }
                    _ => false,
                });
            let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
            let first = lines
                .next()
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ")
                .to_string();
            let mut line = ours.unwrap_or(first);
            for l in lines {
                if l.starts_with("[possible values") || l.starts_with('<') {
                    line = format!("{} {l}", line.trim_end_matches(':'));
                } else if l.starts_with("tip: to pass") {
                    // Instead of clap's tip: a negative number is refused as a value, any
                    // other dash word is an option this subcommand lacks.
                    let arg = match e.get(clap::error::ContextKind::InvalidArg) {
                        Some(clap::error::ContextValue::String(a)) => a.as_str(),
                        _ => "",
                    };
                    let number = arg.len() > 1 && arg[1..].parse::<f64>().is_ok();
                    line.push_str(if number {
                        ": a negative number is not a valid value here"
                    } else {
                        ": this command has no such option"
                    });
                }
            }
            eprintln!(
                "cryptobench: {} (see cryptobench --help)",
                if line.len() > 300 {
                    format!(
                        "{}... ({} bytes)",
                        &line[..line.floor_char_boundary(300)],
                        line.len()
                    )
                } else {
                    line
                }
            );
            std::process::exit(2);
        }
    };
    let other = match parsed {
        Parsed::Measuring(entry, m) => exit(entry.run(&m)),
        Parsed::Other(c) => c,
    };
    let result = match other {
        Command::Cleanup { dut } if dut.named() => dut::passthrough(&dut, &[]),
        Command::Cleanup { .. } => Ok(table::cleanup()),
        Command::Verify(args) => workloads::verify::run(*args),
        Command::Probe { dut, .. } if dut.named() => dut::passthrough(&dut, &[]),
        Command::Probe { format, .. } => workloads::probe::run(format),
        Command::Report(args) => workloads::report::run(args),
        Command::Compare(args) => workloads::compare::run(args),
        #[cfg(feature = "manuals")]
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut command(), "cryptobench", &mut std::io::stdout());
            Ok(0)
        }
        #[cfg(feature = "manuals")]
        Command::Man { dir } => {
            use std::io::Write;
            match dir {
                Some(dir) => render::man::write_pages(command(), &dir)
                    .map(|pages| {
                        eprintln!(
                            "cryptobench: wrote {} man page(s) into {}",
                            pages.len(),
                            units::shown_path(&dir)
                        );
                        0
                    })
                    .map_err(|e| {
                        Failure::Input(format!(
                            "man --dir {}: {e}: give a writable directory",
                            units::shown_path(&dir)
                        ))
                    }),
                None => render::man::main_page(command())
                    .and_then(|page| std::io::stdout().write_all(&page))
                    .map(|_| 0)
                    .map_err(|e| Failure::Runtime(format!("cannot write the man page: {e}"))),
            }
        }
        Command::History(args) => workloads::history::run(args),
        #[cfg(feature = "study")]
        Command::Study(args) => study::run(*args),
        #[cfg(feature = "advise")]
        Command::Advise(args) => advise::run(*args),
        Command::JudgeSeries(args) => workloads::judge_series::run(args),
    };
    exit(result)
}

/// Ends the process with a command's exit code, or its failure as one line.
fn exit(result: Result<i32, Failure>) -> ! {
    match result {
        Ok(code) => std::process::exit(code),
        Err(f) => {
            // One line, never a value pasted whole.
            let m = f.message().replace('\n', " ");
            let m = if m.len() > 600 {
                format!(
                    "{}... ({} bytes)",
                    &m[..m.floor_char_boundary(600)],
                    m.len()
                )
            } else {
                m
            };
            eprintln!("cryptobench: {m}");
            std::process::exit(f.exit_code());
        }
    }
}
