//! Where the ends of an end-to-end workload run. Both here (namespaces of this host, or
//! the qemu guest) is the workload's own business; split between this controller and a
//! DUT (`--dut`) is this file's: the workload runs on the DUT as its agent, asks this side
//! for its other end (`dut::agent::Pending`: tls's load generator, vpn's client ends), and
//! its lines come back over `dut::relay` as the workload's own run.

use crate::dut::relay::{self, Relayed, Service};
use crate::dut::DutArgs;
use crate::failure::Failure;
use crate::shell::args::CommonArgs;
use std::path::PathBuf;

/// `WORKLOAD --dut URL` on the controller: the workload on each DUT in turn (one at a
/// time: they would share this machine's load), `service` on this side for it; `close`
/// ends the service once the last DUT is done. The DUTs' runs, relayed into this side's
/// sinks, for the caller to show (or a composing command to read). `paths` must exist on
/// the DUT.
pub fn split(
    workload: &'static str,
    common: &CommonArgs,
    dut: &DutArgs,
    paths: &[(&'static str, PathBuf)],
    service: Service,
    close: impl FnOnce(),
) -> Result<Relayed, Failure> {
    let out = common.output(workload).map_err(Failure::input)?;
    let mut dut = dut.clone();
    dut.targets()?;
    dut.parallel = 1;
    let relayed = relay::run(workload, &out, &dut, paths, Some(service));
    close();
    relayed
}
