//! cryptobench as its own agent on a DUT (`--agent`, given by the controller): every line
//! of the run on stdout as JSON Lines, nothing else there, and the run tied to its SSH
//! session through stdin: a `stop` line is the controller's Ctrl-C (finish the point,
//! end the run), EOF means the controller or the connection is gone (stop everything now,
//! clean up, exit).

use crate::record::JsonLinesWriter;
use std::io::BufRead;
use std::sync::atomic::{AtomicBool, Ordering};

static ACTIVE: AtomicBool = AtomicBool::new(false);

/// True in a run started with `--agent`: nothing is rendered on stdout.
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

/// Exit code of an agent whose session ended under it.
const EXIT_SESSION_GONE: i32 = 129;

/// Enters agent mode: returns the sink the run's lines go to, and starts watching stdin.
pub fn start() -> anyhow::Result<JsonLinesWriter> {
    ACTIVE.store(true, Ordering::Relaxed);
    std::thread::spawn(|| {
        let stdin = std::io::stdin();
        for line in stdin.lock().lines() {
            match line {
                Ok(l) if l.trim() == "stop" => {
                    crate::sys::signal::STOP.store(true, Ordering::SeqCst);
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        // The session is gone: nobody reads our points any more.
        crate::sys::guard::release_all();
        remove_own_upload();
        std::process::exit(EXIT_SESSION_GONE);
    });
    JsonLinesWriter::stdout()
}

/// The directory the controller uploaded this binary into, removed when the session
/// drops (the controller can no longer do it). Only a directory deploy made.
fn remove_own_upload() {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    if let Some(dir) = exe.parent().filter(|d| {
        d.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("cbench-dut."))
    }) {
        let _ = std::fs::remove_dir_all(dir);
    }
}
