//! Where the ends of an end-to-end workload run. Both here (namespaces of this host, or
//! the qemu guest) is the workload's own business; split between this controller and a
//! DUT (`--dut`) is this file's: the workload runs on the DUT as its agent, asks this side
//! for its other end (`dut::agent::call`: tls's load generator, vpn's client ends, ssh's
//! client), which a `Controller` serves, and its lines come back over `dut::relay` as the
//! workload's own run.

use crate::dut::relay::{self, Relayed, Serve, Service};
use crate::dut::DutArgs;
use crate::failure::Failure;
use crate::shell::args::CommonArgs;
use anyhow::anyhow;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;

/// The controller's side of a workload split with a DUT: what the DUT's agent asks of it,
/// typed, and what ends it.
pub trait Controller: Send + Sync + 'static {
    /// What the agent asks: a request's body, read before `serve` sees it.
    type Ask: serde::de::DeserializeOwned;
    /// The flags that tell the workload on the DUT that its other end is here
    /// ("--remote-client").
    fn flags(&self) -> Vec<String>;
    /// One request, each on its own thread: several may run at once (tls's generators of
    /// a mixed point).
    fn serve(&self, ask: Self::Ask) -> anyhow::Result<Value>;
    /// Once the last DUT is done or gone: stop what still runs, remove what it made.
    fn close(&self) {}
}

/// `WORKLOAD --dut URL` on the controller: the workload on each DUT in turn (one at a
/// time: they would share this machine's load), `controller` serving it here until the
/// last DUT is done. The DUTs' runs, relayed into this side's sinks, for the caller to
/// show (or a composing command to read). `paths` must exist on the DUT.
pub fn split(
    workload: &'static str,
    common: &CommonArgs,
    dut: &DutArgs,
    paths: &[(&'static str, PathBuf)],
    controller: impl Controller,
) -> Result<Relayed, Failure> {
    let out = common.output(workload).map_err(Failure::input)?;
    let mut dut = dut.clone();
    dut.targets()?;
    dut.parallel = 1;
    let controller = Arc::new(controller);
    let serving = controller.clone();
    let service = Service {
        args: controller.flags(),
        serve: Arc::new(move |body| {
            let ask = serde_json::from_value(body).map_err(|e| anyhow!("bad request: {e}"))?;
            serving.serve(ask)
        }) as Serve,
    };
    let relayed = relay::run(workload, &out, &dut, paths, Some(service));
    controller.close();
    relayed
}
