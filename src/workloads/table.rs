//! What the one list of measuring workloads (`measuring!` in workloads/mod.rs) gives:
//! the CLI's subcommands, `study`'s steps, `cryptobench cleanup`, the views of `report`,
//! the man pages and every message that names the workloads.

use crate::failure::Failure;
use crate::render::document::Options;
use crate::shell::measuring::{self, Measuring};
use clap::{ArgMatches, FromArgMatches};

/// A measuring workload as the table holds it: `Measuring`'s static functions behind one
/// object, so that a list can hold them all.
pub trait Entry: Sync {
    fn name(&self) -> &'static str;
    /// Its subcommand, with its flags, for clap.
    fn command(&self) -> clap::Command;
    /// The whole command: the shell around it.
    fn run(&self, m: &ArgMatches) -> Result<i32, Failure>;
    /// Its input checked, nothing started (study asks before a step runs in a child).
    fn check(&self, m: &ArgMatches) -> Result<(), Failure>;
    /// Measured in this process into the output its command line names (a study's
    /// step), or with `--dut` its controller here; `command` is the step's command line,
    /// as the DUT's records carry it.
    fn in_process(&self, m: &ArgMatches, command: Vec<String>) -> Result<i32, Failure>;
    /// What its crashed runs left behind, removed.
    fn cleanup(&self) -> Result<Vec<String>, &'static str>;
}

/// `Entry` for a `Measuring` type.
pub struct Listed<W>(std::marker::PhantomData<fn() -> W>);

impl<W> Listed<W> {
    pub const fn new() -> Self {
        Listed(std::marker::PhantomData)
    }
}

fn args<W: Measuring>(m: &ArgMatches) -> Result<W::Args, Failure> {
    W::Args::from_arg_matches(m).map_err(|e| Failure::Input(e.to_string()))
}

impl<W: Measuring> Entry for Listed<W> {
    fn name(&self) -> &'static str {
        W::NAME
    }
    fn command(&self) -> clap::Command {
        // After the flags: augment_args sets the about of its structs' doc comments.
        <W::Args as clap::Args>::augment_args(clap::Command::new(W::NAME))
            .about(W::ABOUT)
            .after_help(W::DOCS)
    }
    fn run(&self, m: &ArgMatches) -> Result<i32, Failure> {
        let args = args::<W>(m)?;
        if W::cleanup_asked(&args) {
            if let Some(flag) = ignored_by_cleanup(&self.command(), m) {
                return Err(Failure::Input(format!(
                    "{flag} has no meaning with --cleanup, which measures nothing (it removes what killed runs left): drop {flag}"
                )));
            }
        }
        let opts = render_options(W::crossover(&args));
        measuring::run::<W>(args, &opts)
    }
    fn check(&self, m: &ArgMatches) -> Result<(), Failure> {
        W::check(&args::<W>(m)?)
    }
    fn in_process(&self, m: &ArgMatches, command: Vec<String>) -> Result<i32, Failure> {
        let mut a = args::<W>(m)?;
        let dut = W::dut(&mut a);
        if dut.named() {
            dut.command = Some(command);
            return measuring::relayed::<W>(a);
        }
        W::measure(a).and_then(|done| done.outcome)
    }
    fn cleanup(&self) -> Result<Vec<String>, &'static str> {
        W::cleanup()
    }
}

pub use super::{MEASURING, VIEWS};

/// The first flag given with `--cleanup` that it would ignore: only the DUT's flags go
/// with it (`--cleanup --dut URL` cleans the DUT).
fn ignored_by_cleanup(cmd: &clap::Command, m: &ArgMatches) -> Option<String> {
    const WITH_CLEANUP: [&str; 6] = [
        "cleanup",
        "dut",
        "dut_file",
        "ssh_option",
        "dut_binary",
        "parallel",
    ];
    cmd.get_arguments()
        .filter(|a| !WITH_CLEANUP.contains(&a.get_id().as_str()))
        .find(|a| {
            m.value_source(a.get_id().as_str()) == Some(clap::parser::ValueSource::CommandLine)
        })
        .map(|a| format!("--{}", a.get_long().unwrap_or(a.get_id().as_str())))
}

/// Every measuring workload's name, joined by `sep`, for a message.
pub fn names(sep: &str) -> String {
    let names: Vec<&str> = MEASURING.iter().map(|e| e.name()).collect();
    names.join(sep)
}

/// The entry named `name`.
pub fn find(name: &str) -> Option<&'static dyn Entry> {
    MEASURING.iter().copied().find(|e| e.name() == name)
}

/// A measuring command line (no program name) parsed: its entry and its matches. What
/// `study` runs its steps through.
pub fn parse(argv: &[String]) -> Result<(&'static dyn Entry, ArgMatches), clap::Error> {
    let mut cmd = clap::Command::new("step")
        .no_binary_name(true)
        .subcommand_required(true);
    for e in MEASURING {
        cmd = cmd.subcommand(e.command());
    }
    let m = cmd.try_get_matches_from(argv)?;
    let (name, sub) = m.subcommand().expect("a subcommand is required");
    Ok((find(name).expect("parsed from the table"), sub.clone()))
}

/// How to show runs: every workload's view, and the crossover pair where one was asked.
pub fn render_options(crossover: Option<(String, String)>) -> Options {
    Options {
        crossover,
        views: VIEWS,
    }
}

/// `cryptobench cleanup`: every workload's leftovers whose run is gone.
pub fn cleanup() -> i32 {
    let mut lines = crate::sys::guard::remove_orphan_temp_dirs();
    for e in MEASURING {
        match e.cleanup() {
            Ok(l) => lines.extend(l),
            Err(why) => lines.push(why.into()),
        }
    }
    lines.extend(crate::dut::agent::remove_orphan_uploads());
    if lines.is_empty() {
        lines.push("nothing left behind".into());
    }
    for l in lines {
        println!("{l}");
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A workload is one line in `measuring!`: its subcommand, its records' view, its
    /// docs page and its `study` steps all come from it, under one name.
    #[test]
    fn each_entry_has_its_records_view_its_docs_page_and_parses_as_a_step() {
        assert_eq!(MEASURING.len(), VIEWS.len());
        for (entry, view) in MEASURING.iter().zip(VIEWS) {
            let name = entry.name();
            assert_eq!(name, view.workload(), "a workload's records carry its name");
            let page = format!("docs/{name}.md");
            let help = entry.command().get_after_help().map(|h| h.to_string());
            assert!(
                help.is_some_and(|h| h.contains(&page)),
                "{name} --help names {page}"
            );
            assert!(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join(&page)
                    .is_file(),
                "{page} exists"
            );
            let argv = [name.to_string(), "--time".into(), "1".into()];
            let (found, m) = parse(&argv).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(found.name(), name);
            if name == "speed" {
                found.check(&m).expect("speed --time 1 is a valid step");
            }
        }
    }

    #[test]
    fn cleanup_refuses_the_flags_it_would_ignore() {
        let given = |argv: &[&str]| {
            let argv: Vec<String> = argv.iter().map(|a| a.to_string()).collect();
            let (entry, m) = parse(&argv).unwrap();
            ignored_by_cleanup(&entry.command(), &m)
        };
        assert_eq!(
            given(&["vpn", "--cleanup", "--tunnels", "none"]).as_deref(),
            Some("--tunnels")
        );
        assert_eq!(
            given(&["vpn", "--time", "2", "--cleanup"]).as_deref(),
            Some("--time")
        );
        assert_eq!(given(&["vpn", "--cleanup"]), None);
        assert_eq!(given(&["vpn", "--cleanup", "--dut", "ssh://h"]), None);
    }
}
