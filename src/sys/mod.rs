//! What every workload needs from the operating system, written once: /proc readings,
//! CPU accounting (with the one definition of busy CPU), spawning children that die with
//! us, and finding programs and asking them their version.

pub mod clock;
pub mod cpu;
pub mod procfs;
pub mod program;
pub mod spawn;
