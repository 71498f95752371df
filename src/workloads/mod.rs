//! Subcommands that run measurements end to end.

pub mod compare;
#[cfg(feature = "disk")]
pub mod disk;
pub mod e2e;
pub mod enc;
pub mod history;
pub mod judge_series;
pub mod paths;
pub mod probe;
pub mod report;
pub mod speed;
pub mod tls;
pub mod verify;
pub mod vpn;

pub use crate::failure::{Failure, EXIT_INTERRUPTED};

use crate::render::document::{Options, Registered, Report, WorkloadView};
use crate::render::{Document, Format};

/// Every workload's view, in the order a report shows them: the one list a new workload
/// joins (besides main.rs's subcommand).
pub static VIEWS: &[&dyn WorkloadView] = &[
    &Registered::<speed::view::SpeedView>::new(),
    &Registered::<tls::view::TlsView>::new(),
    &Registered::<vpn::view::VpnView>::new(),
    #[cfg(feature = "disk")]
    &Registered::<disk::view::DiskView>::new(),
];

/// How to show runs: every workload's view, and the crossover pair where one was asked.
pub fn render_options(crossover: Option<(String, String)>) -> Options {
    Options {
        crossover,
        views: VIEWS,
    }
}

/// `cryptobench cleanup`: every workload's leftovers whose run is gone.
pub fn cleanup() -> i32 {
    // vpn's cleanup removes every workload's temp dirs too.
    let mut lines = if vpn::privileged() {
        vpn::cleanup::run_cleanup()
    } else {
        let mut l = crate::sys::guard::remove_orphan_temp_dirs();
        l.push(
            "vpn's namespaces and links need root: run `cryptobench cleanup` as root to check them"
                .into(),
        );
        l
    };
    #[cfg(feature = "disk")]
    if crate::sys::is_root() {
        lines.extend(disk::cleanup_lines());
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

/// Prints a finished run the way `format` says, and returns how the command ends.
pub fn show(done: crate::driver::Finished, format: Format, opts: &Options) -> Result<i32, Failure> {
    show_runs(vec![done.run], done.outcome, format, opts)
}

/// A `--dut` command's runs, relayed from the DUTs, shown as its own would be.
pub fn show_relayed(r: crate::dut::relay::Relayed, format: Format) -> Result<i32, Failure> {
    show_runs(r.runs, r.outcome, format, &render_options(None))
}

/// Prints runs (one, or a fleet's) the way `format` says; returns `outcome`.
pub fn show_runs(
    runs: Vec<crate::record::read::Run>,
    outcome: Result<i32, Failure>,
    format: Format,
    opts: &Options,
) -> Result<i32, Failure> {
    // An agent's stdout carries its lines, and nothing else.
    if crate::dut::agent::active() || runs.is_empty() {
        return outcome;
    }
    let doc = crate::record::read::Loaded {
        runs,
        ..Default::default()
    };
    print(&mut Report::of(&doc, opts), format).and(outcome)
}

/// Writes a command's document on stdout; a reader that stopped early (`| head`) is not
/// a failure.
pub fn print(doc: &mut dyn Document, format: Format) -> Result<(), Failure> {
    print_to(doc, format, &mut std::io::stdout().lock())
}

/// `print` into `out`.
pub fn print_to(
    doc: &mut dyn Document,
    format: Format,
    out: &mut dyn std::io::Write,
) -> Result<(), Failure> {
    match crate::render::emit(doc, format, out) {
        Err(e) => match e.downcast::<std::io::Error>() {
            Ok(io) if io.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            Ok(io) => Err(Failure::Runtime(format!("cannot write the output: {io}"))),
            Err(other) => Err(Failure::from(other)),
        },
        Ok(()) => Ok(()),
    }
}
