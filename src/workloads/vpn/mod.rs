//! `cryptobench vpn`: OpenVPN (per data cipher, and without crypto) against WireGuard and
//! the bare veth, between two network namespaces, with iperf3. Per point: throughput,
//! retransmits, MTU, the tunnel's CPU seconds per GB, its busiest thread and how many
//! threads (cores) it used; then the crypto share of OpenVPN's CPU per cipher. The run
//! itself (writer, signals, exit codes) is the driver's (`crate::driver`).

mod args;
pub mod cleanup;
mod crypto_user;
mod iperf;
mod ipsec;
mod ipsec_input;
mod latency;
pub mod plots;
mod point;
mod remote;
pub mod render;
mod tools;
mod tunnel;
pub use tunnel::WIREGUARD_CIPHER;
pub mod view;
mod workload;

pub use args::VpnArgs;
pub use workload::privileged;
use crate::failure::Failure;
use crate::shell::args::CommonArgs;
use std::path::PathBuf;

/// `cryptobench vpn`, as the shell runs it.
pub struct Command;

impl crate::shell::measuring::Measuring for Command {
    const NAME: &'static str = "vpn";
    const ABOUT: &'static str =
        "End to end: OpenVPN and WireGuard between two network namespaces, with iperf3";
    const DOCS: &'static str = "See docs/vpn.md (and docs/routers.md for --dut) in the sources.";
    type Args = VpnArgs;
    type View = view::VpnView;

    fn common(args: &VpnArgs) -> &CommonArgs {
        &args.common
    }
    fn dut(args: &mut VpnArgs) -> &mut crate::dut::DutArgs {
        &mut args.dut
    }
    fn cleanup_asked(args: &VpnArgs) -> bool {
        args.cleanup
    }
    /// The input, the programs and the privileges.
    fn check(args: &VpnArgs) -> Result<(), Failure> {
        args.common.check("vpn").map_err(Failure::input)?;
        workload::Vpn::new(args.clone()).map(drop)
    }
    fn measure(args: VpnArgs) -> Result<crate::driver::Finished, Failure> {
        args.dut_address.check(args.remote_client)?;
        let out = args.common.output("vpn").map_err(Failure::input)?;
        crate::driver::run(&mut workload::Vpn::new(args)?, &out)
    }
    /// The DUT's runs (the server ends there), relayed into this side's sinks; the
    /// client ends here.
    fn on_dut(args: VpnArgs) -> Result<crate::dut::relay::Relayed, Failure> {
        args.common.check("vpn").map_err(Failure::input)?;
        let mut paths: Vec<(&'static str, PathBuf)> = Vec::new();
        if let Some(p) = &args.openssl {
            paths.push(("--openssl", p.clone()));
        }
        // The client ends' programs, ciphers and privileges, checked here (--openssl names a
        // build on the DUT: the client ends run on this machine's OpenSSL).
        let (common, dut) = (args.common.clone(), args.dut.clone());
        let here = VpnArgs {
            openssl: None,
            ..args
        };
        let progs = workload::Vpn::new(here)?.client_programs();
        let ends = remote::Ends::start(progs);
        crate::workloads::e2e::ends::split("vpn", &common, &dut, &paths, ends)
    }
    fn cleanup() -> Result<Vec<String>, &'static str> {
        if !privileged() {
            return Err(workload::NEED_ROOT);
        }
        Ok(cleanup::run_cleanup())
    }
}

