//! Runs a study's steps: each workload through its public entry point (or in a child
//! cryptobench, or in the qemu guest), all appending to one JSON Lines file, then reads
//! every run back and tags it with its step.

use super::definition::{Action, Observed, Step, Tagged};
use super::governor;
use crate::failure::{Failure, EXIT_INTERRUPTED};
use crate::record::read::read_files;
use crate::sys::guard::Guard;
use crate::sys::spawn::{spawn, Options};
use crate::workloads::enc::OpensslEnc;
use crate::workloads::table;
use anyhow::anyhow;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MARK: &str = "=====cbench-study-records=====";

/// Where a composing command's steps keep their records: `study` and `advise` share these.
#[derive(clap::Args, Debug)]
pub struct StepsOutput {
    /// Keep the records of every step (JSON Lines, appended) in FILE; default: a temp
    /// file removed after.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Keep every step's run in this store: sqlite:PATH or postgresql://USER@HOST/DB
    /// [default: $CRYPTOBENCH_STORE, else sqlite:$XDG_DATA_HOME/cryptobench/results.db].
    #[arg(long, value_name = "URL", conflicts_with = "no_store")]
    pub store: Option<String>,
    /// Keep the steps' runs in no store (only --output, if given).
    #[arg(long)]
    pub no_store: bool,
}

impl StepsOutput {
    /// Refuses an --output that cannot be written, before any step runs.
    pub fn check(&self) -> Result<(), Failure> {
        match &self.output {
            Some(p) => crate::record::JsonLinesWriter::check(p).map_err(Failure::input),
            None => Ok(()),
        }
    }
    /// The store flags every step gets: its run goes where the command's was asked to.
    pub fn store_flags(&self) -> Vec<String> {
        match (&self.store, self.no_store) {
            (Some(url), _) => vec!["--store".into(), url.clone()],
            (None, true) => vec!["--no-store".into()],
            (None, false) => Vec::new(),
        }
    }
}

pub fn run(name: &str, steps: &[Step], output: Option<&Path>) -> Result<(Observed, i32), Failure> {
    // Every command line is checked before anything runs.
    for s in steps {
        let words = match &s.action {
            Action::Workload(a) | Action::Child { argv: a, .. } => Some(a),
            Action::Beside { argv, .. } => Some(argv),
            _ => None,
        };
        if let Some(w) = words {
            table::parse(w)
                .map_err(|e| Failure::Runtime(format!("study {}: step {}: {e}", name, s.tag)))?;
        }
    }
    crate::sys::signal::install_signal_handler();
    let guard = Guard::new();
    let file = match output {
        Some(p) => p.to_path_buf(),
        None => guard
            .temp_dir("study")
            .map_err(Failure::runtime)?
            .join("records.jsonl"),
    };
    let total: f64 = steps.iter().map(|s| s.seconds).sum();
    eprintln!(
        "study {}: {} steps, expected about {}; records in {}",
        name,
        steps.len(),
        duration(total),
        file.display()
    );
    let mut observed = Observed::default();
    let mut seen = BTreeSet::new();
    let mut code = 0;
    let mut governors = governor::Restore::default();
    let started = Instant::now();
    for (i, s) in steps.iter().enumerate() {
        if crate::measure::stopped() {
            code = EXIT_INTERRUPTED;
            observed.not_run = steps[i..].iter().map(|s| s.tag.clone()).collect();
            break;
        }
        // Another round of a step this machine cannot run would say the same again.
        if observed.unavailable.iter().any(|(tag, _)| *tag == s.tag) {
            continue;
        }
        eprintln!(
            "[{}/{}] {} (~{}; {} elapsed)",
            i + 1,
            steps.len(),
            s.tag,
            duration(s.seconds),
            duration(started.elapsed().as_secs_f64())
        );
        let result = step(s, &file, &guard, &mut governors);
        // A step a signal cut short, whatever it returned, did not fail: it was stopped.
        if crate::measure::stopped() && !matches!(result, Ok(0)) {
            code = match result {
                Ok(c) => c,
                Err(_) => EXIT_INTERRUPTED,
            };
            // Keep what the interrupted step wrote; it and the rest did not run to the end.
            collect(&file, &s.tag, &mut seen, &mut observed)?;
            observed.not_run = steps[i..]
                .iter()
                .enumerate()
                .map(|(k, s)| match k {
                    0 => format!("{} (interrupted)", s.tag),
                    _ => s.tag.clone(),
                })
                .collect();
            break;
        }
        match result {
            Ok(0) => {}
            Ok(c) => {
                observed
                    .failed
                    .push((s.tag.clone(), format!("exited with status {c}")));
            }
            // Not a failure of the step: this machine lacks what it needs.
            Err(Failure::Unavailable(why)) => {
                eprintln!("study {}: {}: cannot be observed here: {why}", name, s.tag);
                observed.unavailable.push((s.tag.clone(), why));
            }
            Err(f) => {
                let why = f.message().to_string();
                eprintln!("study {}: {}: failed: {why}", name, s.tag);
                observed.failed.push((s.tag.clone(), why));
            }
        }
        collect(&file, &s.tag, &mut seen, &mut observed)?;
    }
    governors.restore();
    if let Some(n) = governors.note() {
        observed.notes.push(n);
    }
    if crate::measure::stopped() && code == 0 {
        code = EXIT_INTERRUPTED;
        // Stopped after the last step started: it is the one cut short.
        if let Some(last) = steps.last().filter(|_| observed.not_run.is_empty()) {
            observed.not_run.push(format!("{} (interrupted)", last.tag));
        }
    }
    // A step that broke fails the study (after its output): the tables lack its part.
    if code == 0 && !observed.failed.is_empty() {
        code = Failure::Runtime(String::new()).exit_code();
    }
    Ok((observed, code))
}

fn duration(s: f64) -> String {
    if s >= 90.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{s:.0} s")
    }
}

/// Reads the file and tags the runs not seen before.
fn collect(
    file: &Path,
    tag: &str,
    seen: &mut BTreeSet<String>,
    observed: &mut Observed,
) -> Result<(), Failure> {
    if !file.exists() {
        return Ok(());
    }
    let loaded = read_files(&[file.to_path_buf()]).map_err(Failure::runtime)?;
    for run in loaded.runs {
        if seen.insert(run.run_id.clone()) {
            let neighbour = run
                .environment
                .as_ref()
                .is_some_and(|e| e.settings.study_neighbour);
            let tag = if neighbour {
                format!("{tag}/neighbour")
            } else {
                tag.to_string()
            };
            observed.runs.push(Tagged { tag, run });
        }
    }
    Ok(())
}

/// Runs one step: its exit code, or why it produced nothing (`Failure::Unavailable` when
/// this machine lacks what it needs, anything else when it broke).
fn step(
    s: &Step,
    file: &Path,
    guard: &Guard,
    governors: &mut governor::Restore,
) -> Result<i32, Failure> {
    match &s.action {
        Action::Workload(argv) => in_process(argv, file),
        Action::Child { env, argv } => {
            check(argv)?;
            let dir = guard.temp_dir("child").map_err(Failure::runtime)?;
            let err = dir.join("stderr");
            let st = child(guard, env, argv, file, Some(&err))
                .map_err(Failure::runtime)?
                .wait()
                .map_err(Failure::runtime)?;
            // The child's messages reach the user, and its last one says why it failed.
            let said = std::fs::read_to_string(&err).unwrap_or_default();
            eprint!("{said}");
            match st.code() {
                Some(0) => Ok(0),
                c => Err(Failure::runtime(format!(
                    "exited with status {}{}",
                    c.map(|c| c.to_string()).unwrap_or("(killed)".into()),
                    said.lines()
                        .rev()
                        .find(|l| !l.trim().is_empty())
                        .map(|l| format!(": {}", l.trim()))
                        .unwrap_or_default()
                ))),
            }
        }
        Action::Beside {
            neighbour,
            neighbour_env,
            argv,
        } => {
            let dir = guard.temp_dir("neighbour").map_err(Failure::runtime)?;
            let nfile = dir.join("neighbour.jsonl");
            let mut n =
                child(guard, neighbour_env, neighbour, &nfile, None).map_err(Failure::runtime)?;
            // Let the neighbour load its library and reach its measuring loop.
            std::thread::sleep(Duration::from_millis(700));
            let code = in_process(argv, file);
            guard.stop_process(n.id() as i32);
            let _ = n.wait();
            mark_neighbour(&nfile, file).map_err(Failure::runtime)?;
            code
        }
        Action::Guest(cmds) => guest(cmds, s.seconds, file),
        Action::OpensslEnc {
            cipher,
            bytes,
            rounds,
            env,
            variant,
            store,
        } => {
            let w = OpensslEnc::new(*cipher, *bytes, *rounds, env.clone(), variant.clone());
            let common = crate::shell::args::CommonArgs {
                format: crate::render::Format::Table,
                output: Some(file.to_path_buf()),
                time: None,
                store: store.iter().skip_while(|a| *a != "--store").nth(1).cloned(),
                no_store: store.iter().any(|a| a == "--no-store"),
                agent: false,
            };
            let out = common.output("speed").map_err(Failure::input)?;
            crate::driver::run(&mut { w }, &out).and_then(|done| done.outcome)
        }
        Action::Governor(g) => governors.set(g).map(|_| 0).map_err(Failure::runtime),
    }
}

/// What a child would find missing, asked in this process before it starts: a child's
/// exit code cannot tell a missing program from a broken step.
fn check(argv: &[String]) -> Result<(), Failure> {
    let (entry, m) = table::parse(argv).map_err(|e| Failure::Runtime(e.to_string()))?;
    entry.check(&m)
}

/// The workload in this process, measured into `file`; the study shows it its own way.
/// With `--dut`, its controller here: the DUT runs the workload alone (a router's lean
/// build has it), its records relayed into `file`. Its exit code, or why it produced
/// nothing (its records are in the file either way).
fn in_process(argv: &[String], file: &Path) -> Result<i32, Failure> {
    let mut argv = argv.to_vec();
    argv.extend(["--output".into(), file.display().to_string()]);
    let (entry, m) = table::parse(&argv).map_err(|e| Failure::Runtime(e.to_string()))?;
    entry.in_process(&m, argv)
}

/// A child cryptobench measuring into `file`; its stderr into `stderr` when given.
fn child(
    guard: &Guard,
    env: &[(String, String)],
    argv: &[String],
    file: &Path,
    stderr: Option<&Path>,
) -> anyhow::Result<std::process::Child> {
    let exe = std::env::current_exe().map_err(|e| anyhow!("cannot find cryptobench: {e}"))?;
    let mut cmd = Command::new(exe);
    cmd.args(argv)
        .arg("--output")
        .arg(file)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    if let Some(p) = stderr {
        let f =
            std::fs::File::create(p).map_err(|e| anyhow!("cannot create {}: {e}", p.display()))?;
        cmd.stderr(f);
    }
    spawn(guard, &mut cmd, "cryptobench", Options::default())
}

/// Copies the neighbour's lines into the study's file, its environment marked.
fn mark_neighbour(from: &Path, to: &Path) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(from).unwrap_or_default();
    let mut out = String::new();
    for line in text.lines() {
        let mut v: serde_json::Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(_) => continue,
        };
        if v["kind"] == "environment" {
            v["settings"]["study_neighbour"] = true.into();
        }
        out.push_str(&v.to_string());
        out.push('\n');
    }
    append(to, &out)
}

fn append(to: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(to)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| anyhow!("cannot append to {}: {e}", to.display()))
}

/// guest/run: CRYPTOBENCH_GUEST_RUN, else the cryptobench checkout the current directory
/// or the binary (target/release/cryptobench) is in. Not the path the binary was built at:
/// that is another machine's for a release, and it would make every checkout's build its
/// own (cargo compiles the crate again when the path it embeds changes).
fn guest_run() -> Option<PathBuf> {
    let set = std::env::var_os("CRYPTOBENCH_GUEST_RUN").map(PathBuf::from);
    let starts = [std::env::current_dir().ok(), std::env::current_exe().ok()];
    let found = starts.iter().flatten().flat_map(|s| s.ancestors());
    set.into_iter()
        .chain(found.map(|d| d.join("guest/run")))
        .find(|p| p.is_file())
}

/// guest/run's time limit for a step expected to take `expected` seconds, when the user
/// set none: an emulated CPU on a host busy with other work (other guests) runs several
/// times slower than the estimate, which guest/run's fixed default (600 s) did not allow
/// for; the limit is there to stop a hung guest, not a slow one.
pub(super) fn guest_timeout(expected: f64) -> String {
    (expected * GUEST_SLOWDOWN)
        .max(GUEST_RUN_TIMEOUT_S)
        .ceil()
        .to_string()
}

/// guest/run's own default GUEST_TIMEOUT: no step gets less.
const GUEST_RUN_TIMEOUT_S: f64 = 600.0;

/// How much slower than its estimate a guest step may run before it counts as hung.
const GUEST_SLOWDOWN: f64 = 8.0;

fn guest(cmds: &[Vec<String>], expected: f64, file: &Path) -> Result<i32, Failure> {
    let run = guest_run().ok_or(Failure::Unavailable(
        "guest/run not found: run from a cryptobench checkout or set CRYPTOBENCH_GUEST_RUN".into(),
    ))?;
    let mut env = Vec::new();
    if std::env::var_os("GUEST_TIMEOUT").is_none() {
        env.push(("GUEST_TIMEOUT", guest_timeout(expected)));
    }
    // disk needs fio, which the guest's base leaves out, and room for its RAM disk.
    #[cfg(feature = "disk")]
    if cmds.iter().any(|c| c.first().is_some_and(|w| w == "disk")) {
        let mut files = crate::workloads::disk::guest_files()?;
        files.extend(std::env::var("GUEST_FILES").ok());
        env.push(("GUEST_FILES", files.join(" ")));
        if std::env::var_os("GUEST_MEM").is_none() {
            env.push(("GUEST_MEM", "2048".into()));
        }
    }
    guest_in(&run, cmds, file, &env).map_err(Failure::runtime)
}

fn guest_in(
    run: &Path,
    cmds: &[Vec<String>],
    file: &Path,
    env: &[(&str, String)],
) -> anyhow::Result<i32> {
    // Every command appends to one file; the status is the first non-zero one.
    let mut script = String::from("c=0");
    for argv in cmds {
        let quoted: Vec<String> = argv.iter().map(|a| format!("'{a}'")).collect();
        script.push_str(&format!(
            "; cryptobench {} --output /tmp/r.jsonl >/dev/null; s=$?; [ $c -eq 0 ] && c=$s",
            quoted.join(" ")
        ));
    }
    script.push_str(&format!("; echo {MARK}; cat /tmp/r.jsonl; exit $c"));
    let exe = std::env::current_exe()?;
    let o = Command::new(run)
        .args(["sh", "-c", &script])
        .env("CRYPTOBENCH_BIN", exe)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env_remove("GUEST_VERBOSE")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| anyhow!("cannot start guest/run: {e}"))?;
    let out = String::from_utf8_lossy(&o.stdout);
    let Some((_, lines)) = out.split_once(MARK) else {
        let err = String::from_utf8_lossy(&o.stderr);
        return Err(anyhow!(
            "the guest did not run cryptobench (status {:?}): {}",
            o.status.code(),
            err.lines().last().unwrap_or("")
        ));
    };
    append(file, lines.trim_start())?;
    Ok(o.status.code().unwrap_or(1))
}
