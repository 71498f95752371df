//! cryptobench as its own agent on a DUT (`--agent`, given by the controller): every line
//! of the run on stdout as JSON Lines, nothing else there, and the run tied to its SSH
//! session through stdin: a `stop` line is the controller's Ctrl-C (finish the point,
//! end the run), EOF means the controller or the connection is gone (stop everything now,
//! clean up, exit).
//!
//! A workload whose load comes from the controller (`tls --dut`) asks for it with a
//! `request` line on stdout (`ask`); the controller runs it and writes `answer JSON` on
//! stdin, picked up with `answer`.

use crate::record::JsonLinesWriter;
use anyhow::anyhow;
use serde_json::Value;
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Answers from the controller, by request id, until taken.
static ANSWERS: Mutex<Option<HashMap<u64, Result<Value, String>>>> = Mutex::new(None);
// usize, not u64: 32-bit MIPS has no 64-bit atomics.
static NEXT_REQUEST: AtomicUsize = AtomicUsize::new(1);

/// The first bytes of a request line: what the controller looks for.
pub const REQUEST_PREFIX: &str = "{\"kind\":\"request\",";

/// A request line on the agent's stdout (`kind` first: see REQUEST_PREFIX).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Request {
    pub kind: String,
    pub id: u64,
    pub body: Value,
}

/// The controller's answer, a line `answer JSON` on the agent's stdin.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Answer {
    pub id: u64,
    pub result: Result<Value, String>,
}

/// Asks the controller to do `body` (e.g. run a load generator); returns the request id.
pub fn ask(body: Value) -> anyhow::Result<u64> {
    let id = NEXT_REQUEST.fetch_add(1, Ordering::Relaxed) as u64;
    let req = Request {
        kind: "request".into(),
        id,
        body,
    };
    let mut line = serde_json::to_string(&req)?;
    line.push('\n');
    let mut out = std::io::stdout().lock();
    out.write_all(line.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| anyhow!("cannot ask the controller: {e}"))?;
    Ok(id)
}

/// The controller's answer to request `id`, once it has come.
pub fn answer(id: u64) -> Option<Result<Value, String>> {
    ANSWERS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_mut()?
        .remove(&id)
}

/// The controller's answer when its Ctrl-C stopped what the agent asked for.
pub const INTERRUPTED: &str = "interrupted on the controller";

/// Why a request got no answer to use.
#[derive(Debug)]
pub enum Unanswered {
    /// A Ctrl-C here or on the controller.
    Interrupted,
    Failed(String),
}

/// A request asked of the controller: its answer, or why none came within its limit.
pub struct Pending {
    id: u64,
    started: std::time::Instant,
    limit: std::time::Duration,
}

impl Pending {
    /// Asks the controller to do `body`; `limit` bounds the wait for its answer.
    pub fn ask(body: Value, limit: std::time::Duration) -> anyhow::Result<Pending> {
        Ok(Pending {
            id: ask(body)?,
            started: std::time::Instant::now(),
            limit,
        })
    }

    /// The answer once it came, or why none will; None while it may still come.
    pub fn poll(&self) -> Option<Result<Value, Unanswered>> {
        match answer(self.id) {
            Some(Ok(v)) => Some(Ok(v)),
            // A Ctrl-C there: its `stop` line may come just after this answer.
            Some(Err(why)) if why == INTERRUPTED => Some(Err(Unanswered::Interrupted)),
            Some(Err(why)) => Some(Err(Unanswered::Failed(format!("on the controller: {why}")))),
            None if crate::sys::signal::stopped() => Some(Err(Unanswered::Interrupted)),
            None if self.started.elapsed() > self.limit => Some(Err(Unanswered::Failed(format!(
                "the controller did not answer within {} s",
                self.limit.as_secs()
            )))),
            None => None,
        }
    }

    /// Waits for `poll`'s verdict.
    pub fn wait(&self) -> Result<Value, Unanswered> {
        loop {
            if let Some(r) = self.poll() {
                return r;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Asks the controller `ask` and waits up to `limit` for its answer, typed: the one
/// request-and-wait of every workload's DUT split.
pub fn call<T: serde::de::DeserializeOwned>(
    ask: &impl serde::Serialize,
    limit: std::time::Duration,
) -> Result<T, Unanswered> {
    let failed = |e: &dyn std::fmt::Display| Unanswered::Failed(e.to_string());
    let body = serde_json::to_value(ask).map_err(|e| failed(&e))?;
    let v = Pending::ask(body, limit).map_err(|e| failed(&e))?.wait()?;
    serde_json::from_value(v)
        .map_err(|e| failed(&format!("the controller's answer is not understood: {e}")))
}

impl std::fmt::Display for Unanswered {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Unanswered::Interrupted => f.write_str("interrupted"),
            Unanswered::Failed(why) => f.write_str(why),
        }
    }
}

fn take_answer_line(text: &str) {
    if let Ok(a) = serde_json::from_str::<Answer>(text) {
        ANSWERS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(HashMap::new)
            .insert(a.id, a.result);
    }
}

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
                Ok(l) if l.starts_with("answer ") => take_answer_line(&l["answer ".len()..]),
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

/// The name deploy gives an upload's directory on the DUT: `cbench-dut.XXXXXX` (mktemp).
const UPLOAD_PREFIX: &str = "cbench-dut.";

/// An upload this young may be about to run: a cleanup leaves it alone.
const UPLOAD_GRACE: std::time::Duration = std::time::Duration::from_secs(60);

/// `cleanup` on a DUT (`cleanup --dut URL`): removes the uploads of agents that are gone
/// (a session killed with SIGKILL, a DUT that lost power): an upload whose binary no
/// process runs and that is over a minute old. Never this process's own. One line each.
pub fn remove_orphan_uploads() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(std::env::temp_dir()) else {
        return Vec::new();
    };
    // The binaries running now, as /proc/PID/exe names them.
    let running: Vec<std::path::PathBuf> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path().join("exe")).ok())
        .collect();
    let mut report = Vec::new();
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        let old = std::fs::symlink_metadata(&path).is_ok_and(|m| {
            m.is_dir()
                && m.modified()
                    .is_ok_and(|t| t.elapsed().unwrap_or_default() > UPLOAD_GRACE)
        });
        if !name.starts_with(UPLOAD_PREFIX) || !old || running.iter().any(|x| x.starts_with(&path))
        {
            continue;
        }
        let shown = path.display().to_string();
        report.push(match std::fs::remove_dir_all(&path) {
            Ok(()) => format!("removed upload {shown} (no agent runs from it)"),
            Err(err) => format!("could not remove upload {shown}: {err}"),
        });
    }
    report
}

/// The directory the controller uploaded this binary into, removed when the session
/// drops (the controller can no longer do it). Only a directory deploy made.
fn remove_own_upload() {
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    if let Some(dir) = exe.parent().filter(|d| {
        d.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(UPLOAD_PREFIX))
    }) {
        let _ = std::fs::remove_dir_all(dir);
    }
}
