//! SIGINT, SIGTERM and SIGHUP: the stop flag every loop checks, and the signal that set it.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the signal handler: finish the current trial or point, then stop.
pub static STOP: AtomicBool = AtomicBool::new(false);

pub fn stopped() -> bool {
    STOP.load(Ordering::Relaxed)
}

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
                if STOP.swap(true, Ordering::SeqCst) {
                    // A second signal: the user really wants out now, but nothing may
                    // stay behind.
                    super::guard::release_all();
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
