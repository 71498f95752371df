//! `cryptobench ssh`: a real OpenSSH sshd and a real Dropbear server in one network
//! namespace of the lab, OpenSSH's `ssh` in the other, and a bulk transfer through the
//! channel per cipher, MAC and direction: MB/s, each end's CPU seconds per GB, each end's
//! busiest thread and the limit, the negotiation proven from a log for every point. The
//! run itself (writer, signals, exit codes) is the driver's.

mod alone;
mod args;
mod client;
mod remote;
mod round;
mod server;
mod threads;
pub mod view;
mod workload;

pub use args::SshArgs;
use crate::failure::Failure;
use crate::shell::args::CommonArgs;

/// `cryptobench ssh`, as the shell runs it.
pub struct Command;

impl crate::shell::measuring::Measuring for Command {
    const NAME: &'static str = "ssh";
    const ABOUT: &'static str = "End to end: a bulk transfer through OpenSSH's and Dropbear's servers per cipher and MAC, between two network namespaces, with each end's CPU and the limit.";
    const DOCS: &'static str = "See docs/ssh.md in the sources.";
    type Args = SshArgs;
    type View = view::SshView;

    fn common(args: &SshArgs) -> &CommonArgs {
        &args.common
    }
    fn dut(args: &mut SshArgs) -> &mut crate::dut::DutArgs {
        &mut args.dut
    }
    fn answer(args: &SshArgs) -> Option<Result<i32, Failure>> {
        args.list.then(|| list(args))
    }
    fn cleanup_asked(args: &SshArgs) -> bool {
        args.cleanup
    }
    /// The input, the programs and the privileges; nothing is started.
    fn check(args: &SshArgs) -> Result<(), Failure> {
        args.common.check("ssh").map_err(Failure::input)?;
        workload::Ssh::new(args.clone()).map(drop)
    }
    fn measure(args: SshArgs) -> Result<crate::driver::Finished, Failure> {
        args.dut_address.check(args.remote_client)?;
        let out = args.common.output("ssh").map_err(Failure::input)?;
        crate::driver::run(&mut workload::Ssh::new(args)?, &out)
    }
    /// The servers on each DUT, the client here (remote.rs).
    fn on_dut(args: SshArgs) -> Result<crate::dut::relay::Relayed, Failure> {
        remote::on_dut(args)
    }
    /// A killed run leaves the lab's namespaces (with its sshd, dropbear and ssh in them)
    /// and its temp dir: the lab's and the guard's cleanups remove them.
    fn cleanup() -> Result<Vec<String>, &'static str> {
        if !crate::sys::is_root() {
            return Err(workload::NEED_ROOT);
        }
        let (mut report, mut kept) = (Vec::new(), Vec::new());
        crate::workloads::e2e::lab::remove_orphans(&mut report, &mut kept);
        report.extend(crate::sys::guard::remove_orphan_temp_dirs());
        if report.is_empty() {
            report.push("no leftovers of cryptobench ssh found".into());
        }
        report.extend(kept.into_iter().map(|k| format!("left alone: {k}")));
        Ok(report)
    }
}

/// `--list`: what each server (and the client) offers here, from a connection to each.
fn list(args: &SshArgs) -> Result<i32, Failure> {
    let lines = workload::offered_lines(args)?;
    for l in lines {
        println!("{l}");
    }
    Ok(0)
}

