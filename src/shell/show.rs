//! How a command's runs reach stdout: one document in the format asked for.

use crate::failure::Failure;
use crate::render::document::{Options, Report};
use crate::render::{Document, Format};

/// Prints a finished run the way `format` says, and returns how the command ends.
pub fn finished(
    done: crate::driver::Finished,
    format: Format,
    opts: &Options,
) -> Result<i32, Failure> {
    runs(vec![done.run], done.outcome, format, opts)
}

/// Prints runs (one, or a fleet's relayed from the DUTs) the way `format` says; returns
/// `outcome`.
pub fn runs(
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
