//! `cryptobench tls`: a real nginx on loopback, driven by a real load generator, one
//! cipher suite at a time, with a null-cipher ceiling measured in the same run, and the
//! share of the server's CPU that is crypto.
//!
//! One guard owns everything: the private temp dir (key, certificate, files, logs),
//! nginx (started afresh for every point, so each point has its own log and CPU
//! counters) and the generators. Every wait is bounded in time. The run itself (writer,
//! signals, exit codes) is the driver's (`crate::driver`).

mod args;
mod bench;
pub mod groups;
mod haproxy;
mod ktls;
pub mod load;
pub mod plots;
mod plan;
mod point;
pub mod primitive;
pub mod remote;
pub mod render;
pub mod server;
pub mod servers;
pub mod suites;
pub mod tls_lib;
pub mod view;
mod workload;

pub use args::TlsArgs;
use crate::failure::Failure;
use crate::shell::args::CommonArgs;

/// `cryptobench tls`, as the shell runs it.
pub struct Command;

impl crate::shell::measuring::Measuring for Command {
    const NAME: &'static str = "tls";
    const ABOUT: &'static str =
        "End to end: real nginx and a real load generator on loopback, per TLS cipher suite";
    const DOCS: &'static str = "See docs/tls.md (and docs/routers.md for --dut) in the sources.";
    type Args = TlsArgs;
    type View = view::TlsView;

    fn common(args: &TlsArgs) -> &CommonArgs {
        &args.common
    }
    fn dut(args: &mut TlsArgs) -> &mut crate::dut::DutArgs {
        &mut args.dut
    }
    fn answer(args: &TlsArgs) -> Option<Result<i32, Failure>> {
        args.list.then(|| {
            args.common.check("tls").map_err(Failure::input)?;
            print!("{}", bench::list(&bench::Inputs::check(args)?, args.cert)?);
            Ok(0)
        })
    }
    fn check(args: &TlsArgs) -> Result<(), Failure> {
        args.common.check("tls").map_err(Failure::input)?;
        bench::Inputs::check(args).map(drop)
    }
    fn measure(args: TlsArgs) -> Result<crate::driver::Finished, Failure> {
        args.dut_address.check(args.remote_load.is_some())?;
        let out = args.common.output("tls").map_err(Failure::input)?;
        let inputs = bench::Inputs::check(&args)?;
        crate::driver::run(&mut workload::Tls::new(args, inputs), &out)
    }
    fn on_dut(args: TlsArgs) -> Result<crate::dut::relay::Relayed, Failure> {
        remote::on_dut(args)
    }
}
