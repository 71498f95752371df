//! What every workload needs from the operating system, written once: /proc readings,
//! CPU accounting (with the one definition of busy CPU), spawning children that die with
//! us, and finding programs and asking them their version.

pub mod clock;
pub mod cpu;
pub mod guard;
pub mod procfs;
pub mod program;
pub mod signal;
pub mod spawn;

/// The calling thread's errno after a failed system call.
pub fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// An errno as the C library words it, e.g. "Address family not supported by protocol".
pub fn os_err(e: i32) -> String {
    std::io::Error::from_raw_os_error(e).to_string()
}
