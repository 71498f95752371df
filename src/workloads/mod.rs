//! Subcommands that run measurements end to end.

pub mod compare;
pub mod history;
pub mod paths;
pub mod probe;
pub mod report;
pub mod speed;
pub mod tls;
pub mod verify;
pub mod vpn;

/// How a command failed: bad input (exit 2) or a failure at run time (exit 1).
#[derive(Debug)]
pub enum Failure {
    Input(String),
    Runtime(String),
}

impl Failure {
    pub fn exit_code(&self) -> i32 {
        match self {
            Failure::Input(_) => 2,
            Failure::Runtime(_) => 1,
        }
    }
    pub fn message(&self) -> &str {
        match self {
            Failure::Input(m) | Failure::Runtime(m) => m,
        }
    }
}

/// Exit code of a run stopped by SIGINT or SIGTERM after keeping its finished points.
pub const EXIT_INTERRUPTED: i32 = 130;

/// SIGINT and SIGTERM set the stop flag: workloads finish the current trial or point,
/// keep every finished record, clean up through their guards, and exit 130.
pub fn install_signal_handler() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    use std::sync::atomic::Ordering;
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        // A thread of its own, so that stopping runs outside the signal handler.
        std::thread::spawn(move || {
            for sig in signals.forever() {
                SIGNAL.store(sig, Ordering::SeqCst);
                if crate::measure::STOP.swap(true, Ordering::SeqCst) {
                    // A second signal: the user really wants out now, but nothing may
                    // stay behind.
                    crate::sys::guard::release_all();
                    std::process::exit(128 + sig);
                }
            }
        });
    });
}

/// The signal that stopped the run, if one did (for the 128+signal exit code).
static SIGNAL: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

pub fn stop_signal() -> Option<i32> {
    match SIGNAL.load(std::sync::atomic::Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}
