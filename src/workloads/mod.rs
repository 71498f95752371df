//! Subcommands: one file or folder each. The measuring ones are listed in `table`.

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
pub mod table;
pub mod tls;
pub mod verify;
pub mod vpn;
