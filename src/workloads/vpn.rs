//! `cryptobench vpn`: being built.

use super::Failure;

#[derive(clap::Args)]
pub struct VpnArgs {}

pub fn run(_args: VpnArgs) -> Result<i32, Failure> {
    Err(Failure::Runtime("cryptobench vpn is not built yet".into()))
}
