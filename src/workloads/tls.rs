//! `cryptobench tls`: being built.

use super::Failure;

#[derive(clap::Args)]
pub struct TlsArgs {}

pub fn run(_args: TlsArgs) -> Result<i32, Failure> {
    Err(Failure::Runtime("cryptobench tls is not built yet".into()))
}
