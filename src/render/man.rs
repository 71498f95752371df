//! Man pages generated from the command line's own definition (clap_mangen): one page per
//! command and subcommand, so every `cryptobench-NAME(1)` a page refers to exists. The
//! main page adds what clap does not know: exit status and environment.

use std::io::Write;
use std::path::{Path, PathBuf};

/// What each exit code means, for every command.
const EXIT_STATUS: &[(&str, &str)] = &[
    ("0", "Success."),
    (
        "1",
        "A failure at run time: nothing could be measured, a path failed verification, a tool or file could not be used.",
    ),
    (
        "2",
        "Bad input: an unknown option or value, a file that is not records, a store or directory that cannot be used. Nothing is measured or written.",
    ),
    ("3", "compare --fail-on-regression: a point regressed."),
    (
        "4",
        "compare --fail-on-regression: points of BASE are missing from NEW (unless --allow-missing).",
    ),
    (
        "130",
        "Interrupted by SIGINT or SIGTERM: the points finished so far are kept.",
    ),
];

const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "CRYPTOBENCH_STORE",
        "The store runs are kept in and read from when --store is not given: sqlite:PATH or postgresql://USER@HOST/DB.",
    ),
    (
        "XDG_DATA_HOME",
        "Without CRYPTOBENCH_STORE, the store is sqlite:$XDG_DATA_HOME/cryptobench/results.db (else under $HOME/.local/share/cryptobench).",
    ),
    (
        "CRYPTOBENCH_REQUIRE_ALL",
        "Read by the test suite (scripts/test, .ci/run), not by cryptobench: 1 turns every skipped test into a failure.",
    ),
];

/// The command as the pages describe it: built (so subcommands have their full names, e.g.
/// cryptobench-history-tag) and without clap's `help` subcommand, which has no page.
fn built(cmd: clap::Command) -> clap::Command {
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// A roff section of tagged paragraphs.
fn section(out: &mut Vec<u8>, title: &str, items: &[(&str, &str)]) -> std::io::Result<()> {
    writeln!(out, ".SH \"{title}\"")?;
    for (tag, text) in items {
        // A leading dot or quote would be read as a request.
        writeln!(out, ".TP\n\\fB{tag}\\fR\n\\&{}", text.replace('\\', "\\e"))?;
    }
    Ok(())
}

/// The main page: clap's sections, then exit status and environment before the version.
pub fn main_page(cmd: clap::Command) -> std::io::Result<Vec<u8>> {
    let man = clap_mangen::Man::new(built(cmd));
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    man.render_subcommands_section(&mut out)?;
    man.render_extra_section(&mut out)?;
    section(&mut out, "EXIT STATUS", EXIT_STATUS)?;
    section(&mut out, "ENVIRONMENT", ENVIRONMENT)?;
    man.render_version_section(&mut out)?;
    Ok(out)
}

/// Writes the main page and one page per subcommand, at any depth, into `dir`; returns
/// the files written.
pub fn write_pages(cmd: clap::Command, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    fn subpages(cmd: &clap::Command, dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            out.push(clap_mangen::Man::new(sub.clone()).generate_to(dir)?);
            subpages(sub, dir, out)?;
        }
        Ok(())
    }
    let cmd = built(cmd);
    let main = dir.join(format!("{}.1", cmd.get_name()));
    std::fs::write(&main, main_page(cmd.clone())?)?;
    let mut out = vec![main];
    subpages(&cmd, dir, &mut out)?;
    Ok(out)
}
