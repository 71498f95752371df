//! The controller's side of a measured run on DUTs: each DUT's agent streams its lines,
//! read here with the record reader, stamped with the DUT they came from and written into
//! the controller's sinks (`--output`, store) as each point arrives. A fleet runs
//! `--parallel` DUTs at once, each in its own thread with its own SSH connection; the
//! sinks stay on this thread.

use super::url::DutUrl;
use super::{deploy, ssh, DutArgs};
use crate::failure::Failure;
use crate::record::read::{parse_line, Line, Run};
use crate::record::Sink;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a DUT's thread tells the controller.
enum Msg {
    /// A line of the agent's stdout.
    Line(String),
    /// A line of the agent's stderr.
    Stderr(String),
    /// The DUT is done, its connection closed and its upload removed.
    Done(Result<Ended, Failure>),
    /// The run was interrupted before this DUT's turn.
    NotStarted,
}

/// How the agent ended.
struct Ended {
    code: Option<i32>,
    /// OpenSSH's last words, for a dropped connection.
    ssh_said: String,
}

/// One DUT's run as the controller sees it.
struct Host {
    url: DutUrl,
    /// Open from the DUT's first line to its end (None before and after).
    sinks: Option<Vec<Box<dyn Sink>>>,
    /// Why its sinks could not be opened, if they could not.
    broken: Option<Failure>,
    run: Run,
    /// The agent's last stderr line, held back: it may be the reason the run failed.
    pending: Option<String>,
    outcome: Option<Result<i32, Failure>>,
    /// How many lines the agent sent that this build could not read (their points are
    /// lost), and why the first was not.
    unreadable: Option<(usize, String)>,
}

/// What the controller does for an agent that asks (`agent::ask`), e.g. run the load of
/// `tls --dut` here: the request's body in, the answer out; each on its own thread.
pub type Serve = Arc<dyn Fn(serde_json::Value) -> anyhow::Result<serde_json::Value> + Send + Sync>;

/// A workload split between the DUT and the controller: the arguments that tell the
/// agent so, and what the controller does when it asks.
#[derive(Clone)]
pub struct Service {
    pub args: Vec<String>,
    pub serve: Serve,
}

/// The runs measured on the DUTs, and how the command ends.
pub struct Relayed {
    pub runs: Vec<Run>,
    pub outcome: Result<i32, Failure>,
}

/// Runs `workload` (already checked here) on every DUT of `dut`, its lines into `out`
/// (checked by the caller: `shell::args::CommonArgs::output`); `paths` must exist on each DUT;
/// `service`: what this side does for the agents.
pub fn run(
    workload: &str,
    out: &crate::sinks::Output,
    dut: &DutArgs,
    paths: &[(&'static str, PathBuf)],
    service: Option<Service>,
) -> Result<Relayed, Failure> {
    // Before any output file is opened: a refused run leaves nothing behind.
    let mut argv = super::remote_argv(dut, false)?;
    let targets = dut.targets()?;
    // Checked before connecting (a refused run leaves nothing behind), then closed: each
    // DUT opens its own from its first line to its end, so that a fleet holds --parallel
    // sets at most (one per DUT, held from the start, ran 600 DUTs out of descriptors).
    let open = || crate::sinks::sinks(out, crate::sinks::open_store(out)?, workload);
    drop(open()?);
    let mut hosts: Vec<Host> = targets
        .iter()
        .map(|url| Host {
            url: url.clone(),
            sinks: None,
            broken: None,
            run: Run::default(),
            pending: None,
            outcome: None,
            unreadable: None,
        })
        .collect();
    crate::sys::signal::install_signal_handler();
    argv.extend(["--agent".to_string(), "--no-store".to_string()]);
    if let Some(s) = &service {
        argv.extend(s.args.iter().cloned());
    }
    let serve = service.map(|s| s.serve);
    let queue: Arc<Mutex<VecDeque<(usize, DutUrl)>>> =
        Arc::new(Mutex::new(targets.iter().cloned().enumerate().collect()));
    let (tx, rx) = channel::<(usize, Msg)>();
    let mut workers = Vec::new();
    for _ in 0..(dut.parallel as usize).min(targets.len()) {
        let (queue, tx, dut, argv, paths, serve) = (
            queue.clone(),
            tx.clone(),
            dut.clone(),
            argv.clone(),
            paths.to_vec(),
            serve.clone(),
        );
        workers.push(std::thread::spawn(move || loop {
            let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
            let Some((i, url)) = next else { break };
            if crate::sys::signal::stopped() {
                let _ = tx.send((i, Msg::NotStarted));
                continue;
            }
            let ended = on_dut(&url, &dut, &argv, &paths, serve.as_ref(), &tx, i);
            let _ = tx.send((i, Msg::Done(ended)));
        }));
    }
    drop(tx);
    let several = hosts.len() > 1;
    let progress = several || std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut not_started = 0;
    for (i, msg) in rx {
        let h = &mut hosts[i];
        match msg {
            Msg::Line(text) => {
                if h.sinks.is_none() {
                    h.sinks = Some(open().unwrap_or_else(|f| {
                        h.broken.get_or_insert(f);
                        Vec::new()
                    }));
                }
                h.line(&text, progress)
            }
            Msg::Stderr(line) => {
                if let Some(p) = h.pending.replace(line) {
                    eprintln!("{}: {p}", h.url);
                }
            }
            Msg::Done(ended) => {
                let outcome = h.finish(ended);
                h.outcome = Some(outcome);
                h.sinks = None;
            }
            Msg::NotStarted => not_started += 1,
        }
    }
    for w in workers {
        let _ = w.join();
    }
    let stopped = crate::sys::signal::stopped();
    let interrupted = crate::sys::signal::stop_signal()
        .map(|s| 128 + s)
        .unwrap_or(crate::failure::EXIT_INTERRUPTED);
    let mut outcomes = Vec::new();
    let mut runs = Vec::new();
    for h in hosts {
        outcomes.push(h.outcome.unwrap_or(Ok(0)));
        if h.run.environment.is_some() {
            runs.push(h.run);
        }
    }
    let outcome = if !several {
        outcomes.pop().unwrap_or(Ok(0))
    } else {
        // One line per DUT that failed, and one for all those never started (an
        // interrupted fleet of 10,000 said so 10,000 times); the others' runs are kept.
        let mut failed = false;
        for o in &outcomes {
            if let Err(f) = o {
                eprintln!("cryptobench: {}", f.message());
                failed = true;
            }
        }
        if not_started > 0 {
            eprintln!("cryptobench: {not_started} DUT(s) not started: the run was interrupted");
        }
        Ok(if failed { 1 } else { 0 })
    };
    // Stopped here: the exit code is this signal's (the agents only heard `stop`).
    let outcome = match outcome {
        Ok(_) if stopped => Ok(interrupted),
        o => o,
    };
    Ok(Relayed { runs, outcome })
}

impl Host {
    /// A line of the agent's stdout: into the sinks, stamped with this DUT.
    fn line(&mut self, text: &str, progress: bool) {
        let dut = Some(self.url.to_string());
        let mut failed = None;
        match parse_line(text) {
            Ok(Line::Environment(mut env)) => {
                env.dut = dut;
                for s in self.sinks.iter_mut().flatten() {
                    if let Err(e) = s.environment(&env) {
                        failed = Some(e);
                    }
                }
                self.run.run_id = env.run_id.clone();
                self.run.environment = Some(*env);
            }
            Ok(Line::Record(mut rec)) => {
                rec.set_dut(dut);
                let label = rec.label().to_string();
                for s in self.sinks.iter_mut().flatten() {
                    if let Err(e) = s.record(&rec) {
                        failed = Some(e);
                    }
                }
                if progress {
                    eprintln!("{}: {label}", self.url);
                }
                self.run.records.push(*rec);
            }
            Ok(Line::End(end)) => {
                for s in self.sinks.iter_mut().flatten() {
                    // The results are kept even when this last line cannot be written.
                    let _ = s.end(&end);
                }
                self.run.end = Some(*end);
            }
            Err(why) => {
                eprintln!("{}: a line the DUT sent was not a record ({why})", self.url);
                self.unreadable.get_or_insert((0, why.to_string())).0 += 1;
            }
        }
        if let Some(e) = failed {
            eprintln!("cryptobench: {e}");
        }
    }

    /// How this DUT's run ends, from how its agent ended and what arrived.
    fn finish(&mut self, ended: Result<Ended, Failure>) -> Result<i32, Failure> {
        let url = &self.url;
        let last = self
            .pending
            .take()
            .map(|l| l.trim_start_matches("cryptobench: ").to_string());
        let ended = ended?;
        if let Some(f) = self.broken.take() {
            return Err(f);
        }
        let code = ended.code.unwrap_or(1);
        let said = || last.clone().unwrap_or_else(|| format!("exit code {code}"));
        if let Some((n, why)) = &self.unreadable {
            return Err(Failure::Runtime(format!(
                "{url}: {n} line(s) the DUT sent could not be read here ({why}): their points are lost; kept the {} read; run the same cryptobench build on both sides (--dut-binary)",
                self.run.records.len()
            )));
        }
        if self.run.end.is_some() {
            return match code {
                0 => Ok(0),
                c if c > 128 => Ok(c),
                2 => Err(Failure::Input(format!("{url}: {}", said()))),
                _ => Err(Failure::Runtime(format!("{url}: {}", said()))),
            };
        }
        if self.run.environment.is_some() {
            // Started, never ended: the session went away under it.
            return Err(Failure::Runtime(format!(
                "{url}: the connection dropped ({}): kept the {} finished point(s); the run's other points were lost",
                ended.ssh_said,
                self.run.records.len()
            )));
        }
        match code {
            // Refused before it started: this side parsed the same command line, so the
            // refusal is the DUT's lack (no iperf3, no dm-crypt, no root), which a
            // composer (study, advise) lists as not available there, not as a failure.
            2 => Err(Failure::Unavailable(format!("{url}: {}", said()))),
            _ => Err(Failure::Runtime(format!(
                "{url}: {}",
                last.clone().unwrap_or_else(|| ended.ssh_said.clone())
            ))),
        }
    }
}

/// One DUT, start to end, on its own thread: connect, deploy, run the agent and pass its
/// lines on; its requests go to `serve`, each answered on the agent's stdin. Returns after
/// the connection is closed and the upload removed.
fn on_dut(
    url: &DutUrl,
    dut: &DutArgs,
    argv: &[String],
    paths: &[(&'static str, PathBuf)],
    serve: Option<&Serve>,
    tx: &Sender<(usize, Msg)>,
    i: usize,
) -> Result<Ended, Failure> {
    let session = ssh::Session::open(url, &dut.ssh_option)?;
    super::check_paths_on_dut(&session, paths)?;
    let deployed = deploy::deploy(&session, dut.dut_binary.as_deref())?;
    let mut words = vec![deployed.program.clone()];
    words.extend(argv.iter().cloned());
    let mut cmd = session.command(&words);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = session.spawn(&mut cmd, "ssh")?;
    let over = Arc::new(AtomicBool::new(false));
    // The agent's stdin: answers to its requests, `stop` on our Ctrl-C; held open until
    // the run is over (its EOF would stop the agent at once).
    let (to_agent, from_us) = channel::<String>();
    let stdin = child.stdin.take().map(|mut input| {
        let over = over.clone();
        std::thread::spawn(move || {
            let mut told = false;
            while !over.load(Ordering::Relaxed) {
                if !told && crate::sys::signal::stopped() {
                    let _ = input.write_all(b"stop\n").and_then(|_| input.flush());
                    told = true;
                }
                if let Ok(line) = from_us.recv_timeout(Duration::from_millis(50)) {
                    let _ = input.write_all(line.as_bytes()).and_then(|_| input.flush());
                }
            }
        })
    });
    let stderr = child.stderr.take().map(|err| {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = tx.send((i, Msg::Stderr(line)));
            }
        })
    });
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            match serve.filter(|_| line.starts_with(super::agent::REQUEST_PREFIX)) {
                Some(serve) => answer(serve, &line, &to_agent),
                None => {
                    let _ = tx.send((i, Msg::Line(line)));
                }
            }
        }
    }
    if let Some(t) = stderr {
        let _ = t.join();
    }
    let status = child.wait().ok();
    over.store(true, Ordering::Relaxed);
    if let Some(t) = stdin {
        let _ = t.join();
    }
    // The reason, when the connection dropped, before closing it ourselves.
    let ssh_said = if session.master_alive() {
        "the agent ended without finishing its run".to_string()
    } else {
        session.ssh_said()
    };
    drop(session);
    Ok(Ended {
        code: status.and_then(|s| s.code()),
        ssh_said,
    })
}

/// Does what an agent's request line asks, on a thread of its own, and sends the answer
/// line for its stdin.
fn answer(serve: &Serve, line: &str, to_agent: &Sender<String>) {
    let (serve, to_agent) = (serve.clone(), to_agent.clone());
    let request = serde_json::from_str::<super::agent::Request>(line);
    std::thread::spawn(move || {
        let Ok(req) = request else { return };
        let a = super::agent::Answer {
            id: req.id,
            result: serve(req.body).map_err(|e| e.to_string()),
        };
        if let Ok(text) = serde_json::to_string(&a) {
            let _ = to_agent.send(format!("answer {text}\n"));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line this build cannot read (a newer build's workload, a damaged line) loses its
    /// point: the DUT's run fails, exit 1, saying how many, and the points read are kept.
    #[test]
    fn unreadable_dut_lines_count_as_lost_points_and_exit_1() {
        let fixture = include_str!("../../tests/fixtures/schema1-mixed.jsonl");
        let mut h = Host {
            url: DutUrl::parse("ssh://root@board").unwrap(),
            sinks: Some(Vec::new()),
            broken: None,
            run: Run::default(),
            pending: None,
            outcome: None,
            unreadable: None,
        };
        for l in fixture.lines().take(3) {
            h.line(l, false);
        }
        h.line("{\"kind\":\"record\",\"workload\":\"warp\"}", false);
        h.line("{\"kind\":\"rec", false);
        let ended = Ended {
            code: Some(0),
            ssh_said: String::new(),
        };
        let f = h.finish(Ok(ended)).unwrap_err();
        assert_eq!(f.exit_code(), 1, "{}", f.message());
        assert!(
            f.message()
                .contains("2 line(s) the DUT sent could not be read here")
                && f.message().contains("kept the 2 read"),
            "{}",
            f.message()
        );
        assert_eq!(h.run.records.len(), 2);
    }
}
