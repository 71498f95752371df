//! A subcommand that measures, as a type: its name, its arguments, what it checks and
//! measures, where it runs with `--dut`, what its crashed runs leave behind and how its
//! records are shown. [`run`] is the one shell around every such command.

use crate::driver::Finished;
use crate::dut::{relay::Relayed, DutArgs};
use crate::failure::Failure;
use crate::render::document::{Options, View};
use crate::shell::args::CommonArgs;

/// One measuring subcommand (`speed`, `tls`, `vpn`, `disk`, ...). A new workload is a
/// folder that implements this, plus one line in `measuring!` (workloads/mod.rs).
pub trait Measuring: 'static {
    /// The subcommand's name, which is also its records' `workload`.
    const NAME: &'static str;
    /// `--help`'s first line.
    const ABOUT: &'static str;
    /// `--help`'s last lines: where its documentation is.
    const DOCS: &'static str;
    /// Its command line, typed by clap.
    type Args: clap::Args + clap::FromArgMatches;
    /// How its records are shown, in every format and in `report`.
    type View: View;

    fn common(args: &Self::Args) -> &CommonArgs;
    fn dut(args: &mut Self::Args) -> &mut DutArgs;

    /// A question answered without measuring (`--list`): its exit code. The shell asks
    /// this first, with or without `--dut`.
    fn answer(_args: &Self::Args) -> Option<Result<i32, Failure>> {
        None
    }
    /// `--cleanup` was given.
    fn cleanup_asked(_args: &Self::Args) -> bool {
        false
    }
    /// Checks the input and finds every program, starting nothing: what a study asks
    /// before it runs this command in a child.
    fn check(args: &Self::Args) -> Result<(), Failure> {
        Self::common(args).check(Self::NAME).map_err(Failure::input)
    }
    /// Measures without showing: the run, for a caller that shows it its own way.
    fn measure(args: Self::Args) -> Result<Finished, Failure>;
    /// `--dut`: the runs of the DUTs, relayed into this side's sinks. Default: the same
    /// command line runs on each DUT.
    fn on_dut(args: Self::Args) -> Result<Relayed, Failure> {
        let mut args = args;
        let out = Self::common(&args)
            .output(Self::NAME)
            .map_err(Failure::input)?;
        let dut = Self::dut(&mut args);
        dut.targets()?;
        crate::dut::relay::run(Self::NAME, &out, dut, &[], None)
    }
    /// The crossover pair its runs are shown with (speed's `--crossover`).
    fn crossover(_args: &Self::Args) -> Option<(String, String)> {
        None
    }
    /// What its crashed runs left behind, removed, one line each; `Err(why)` when this
    /// process may not look (not root).
    fn cleanup() -> Result<Vec<String>, &'static str> {
        Ok(Vec::new())
    }
}

/// `--dut`: relayed from the DUTs, or `--cleanup` passed through to them.
#[cfg(feature = "controller")]
fn drive<W: Measuring>(mut args: W::Args, opts: &Options) -> Result<i32, Failure> {
    let format = W::common(&args).format;
    if W::cleanup_asked(&args) {
        return crate::dut::passthrough(W::dut(&mut args), &[]);
    }
    let relayed = W::on_dut(args)?;
    super::show::runs(relayed.runs, relayed.outcome, format, opts)
}

/// A build without the controller (a router's) drives no DUT.
#[cfg(not(feature = "controller"))]
fn drive<W: Measuring>(_args: W::Args, _opts: &Options) -> Result<i32, Failure> {
    Err(crate::dut::not_a_controller())
}

/// `--dut` for a study's step: the DUTs' runs relayed, their exit code.
#[cfg(feature = "controller")]
pub fn relayed<W: Measuring>(args: W::Args) -> Result<i32, Failure> {
    W::on_dut(args).and_then(|r| r.outcome)
}

#[cfg(not(feature = "controller"))]
pub fn relayed<W: Measuring>(_args: W::Args) -> Result<i32, Failure> {
    Err(crate::dut::not_a_controller())
}

/// The shell every measuring command runs in: `--list`, then `--dut` (relayed, or
/// `--cleanup` passed through), `--cleanup` here, or measure and show with `opts`.
pub fn run<W: Measuring>(mut args: W::Args, opts: &Options) -> Result<i32, Failure> {
    if let Some(answer) = W::answer(&args) {
        return answer;
    }
    if W::dut(&mut args).named() {
        return drive::<W>(args, opts);
    }
    if W::cleanup_asked(&args) {
        for line in W::cleanup().map_err(|why| Failure::Unavailable(why.into()))? {
            println!("{line}");
        }
        return Ok(0);
    }
    let format = W::common(&args).format;
    super::show::finished(W::measure(args)?, format, opts)
}
