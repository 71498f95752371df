//! `tls --dut`: nginx on the DUT, the load generator on the controller. The whole tls
//! workload runs on the DUT as its agent (bench, nginx, logs, server CPU, --profile);
//! for each generator run the agent asks the controller (`dut::agent::ask`) with a
//! `LoadJob`, and the controller runs it pinned to its own CPUs (`serve`) and answers
//! with the generator's `Outcome`, its CPU taken on the controller.

use super::load::{self, Generator, Job, Load, Local, Outcome, Poll};
use super::suites::Suite;
use super::args::TlsArgs;
use crate::failure::Failure;
use crate::sys;
use crate::sys::guard::Guard;
use crate::workloads::e2e::ends::Controller;
use anyhow::anyhow;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// One generator run, as the DUT asks the controller for it: everything `load::start`
/// needs, with the client's OpenSSL configuration as text.
#[derive(Serialize, Deserialize)]
struct LoadJob {
    load: Load,
    suite: Suite,
    client_conf: Option<String>,
    host: String,
}

/// A generator started: here, or on the controller for a DUT's agent.
pub enum Started {
    Local(Local),
    Remote(Pending),
}

/// Starts the generator for `job`: on the controller when the job is remote, else here.
pub fn start(guard: &Guard, job: &Job) -> anyhow::Result<Started> {
    if job.remote {
        return ask(job).map(Started::Remote);
    }
    load::start_here(guard, job).map(Started::Local)
}

impl Started {
    pub fn poll(&self, guard: &Guard) -> Poll {
        match self {
            Started::Local(l) => l.poll(guard),
            Started::Remote(r) => r.poll(),
        }
    }

    /// Stops a generator started here; one on the controller is bounded there.
    pub fn stop(&self, guard: &Guard) {
        if let Started::Local(l) = self {
            l.stop(guard);
        }
    }
}

/// A generator run asked of the controller, not answered yet.
pub struct Pending {
    asked: crate::dut::agent::Pending,
    generator: Generator,
}

/// The agent's side: asks the controller to run `job`.
pub fn ask(job: &Job) -> anyhow::Result<Pending> {
    let client_conf = match &job.client_conf {
        Some(p) => Some(std::fs::read_to_string(p).map_err(|e| anyhow!("{}: {e}", p.display()))?),
        None => None,
    };
    let wire = LoadJob {
        load: job.load.clone(),
        suite: job.suite.clone(),
        client_conf,
        host: job.host.to_string(),
    };
    // The controller bounds the generator (see load::start_here); then the answer has
    // this long to arrive.
    let limit = job.load.limit(40.0);
    Ok(Pending {
        asked: crate::dut::agent::Pending::ask(serde_json::to_value(&wire)?, limit)?,
        generator: job.load.generator,
    })
}

impl Pending {
    pub fn poll(&self) -> Poll {
        match self.asked.poll() {
            None => Poll::Running,
            Some(Ok(v)) => Poll::Done(
                serde_json::from_value::<Outcome>(v)
                    .map_err(|e| anyhow!("the controller's answer is not an outcome: {e}")),
            ),
            Some(Err(why)) => Poll::Done(Err(anyhow!("{}: {why}", self.generator.name()))),
        }
    }
}

/// The controller's side: the load generator, pinned to this process's CPUs.
struct Generators;

impl Controller for Generators {
    type Ask = LoadJob;

    fn flags(&self) -> Vec<String> {
        let cpus = sys::cpu::cpu_list(&sys::cpu::allowed_cpus());
        vec!["--remote-load".into(), cpus]
    }

    fn serve(&self, job: LoadJob) -> anyhow::Result<serde_json::Value> {
        serve(job)
    }
}

/// Runs one job the DUT asked for, pinned to this process's CPUs.
fn serve(job: LoadJob) -> anyhow::Result<serde_json::Value> {
    let generator = job.load.generator;
    let program = sys::program::find_program(generator.name(), None)
        .ok_or_else(|| {
            format!(
                "{} not found on the controller's PATH: install the Debian package {}",
                generator.name(),
                generator.package()
            )
        })
        .map_err(anyhow::Error::msg)?;
    let guard = Guard::new();
    let dir = guard.temp_dir("tls-load")?;
    std::fs::write(dir.join("report.lua"), load::WRK_SCRIPT)?;
    let client_conf: Option<PathBuf> = match &job.client_conf {
        Some(text) => {
            let p = dir.join("client.cnf");
            std::fs::write(&p, text)?;
            Some(p)
        }
        None => None,
    };
    let cpus = sys::cpu::allowed_cpus();
    let here = Job {
        load: job.load,
        program: &program,
        dir: &dir,
        tag: "gen".into(),
        suite: &job.suite,
        host: &job.host,
        remote: false,
        client_conf,
        lib_path: None,
        cpus: Some(&cpus),
    };
    let busy0 = sys::cpu::cpus_busy_s(&cpus);
    let started = load::start_here(&guard, &here)?;
    let outcome = loop {
        if crate::sys::signal::stopped() {
            started.stop(&guard);
            return Err(anyhow!("interrupted on the controller"));
        }
        if let Poll::Done(r) = started.poll(&guard) {
            break r.map_err(anyhow::Error::msg)?;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let busy1 = sys::cpu::cpus_busy_s(&cpus);
    let outcome = Outcome {
        host_busy_s: busy0.zip(busy1).map(|(a, b)| b - a),
        host_cpus: Some(cpus),
        ..outcome
    };
    Ok(serde_json::to_value(&outcome)?)
}

/// The DUT's runs, relayed into this side's sinks, the load run here.
pub fn on_dut(args: TlsArgs) -> Result<crate::dut::relay::Relayed, Failure> {
    args.common.check("tls").map_err(Failure::input)?;
    if sys::program::find_program(args.generator.name(), None).is_none() {
        return Err(Failure::Unavailable(format!(
            "{} not found on PATH: with --dut the load generator runs here; install the Debian package {}",
            args.generator.name(),
            args.generator.package()
        )));
    }
    let mut paths: Vec<(&'static str, PathBuf)> = Vec::new();
    if let Some(p) = &args.nginx {
        paths.push(("--nginx", p.clone()));
    }
    if let Some(p) = &args.openssl {
        paths.push(("--openssl", p.clone()));
    }
    crate::workloads::e2e::ends::split("tls", &args.common, &args.dut, &paths, Generators)
}

/// `--remote-load CPUS`: the controller's CPUs, "0-3,6" as `sys::cpu::cpu_list` writes them.
pub fn parse_cpus(s: &str) -> anyhow::Result<Vec<usize>> {
    let bad = || format!("--remote-load {s}: give the controller's CPUs, e.g. 1 or 0-3,6");
    let mut out = Vec::new();
    for part in s.split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = (
            a.trim()
                .parse()
                .map_err(|_| bad())
                .map_err(anyhow::Error::msg)?,
            b.trim()
                .parse()
                .map_err(|_| bad())
                .map_err(anyhow::Error::msg)?,
        );
        if a > b || b >= 4096 {
            return Err(anyhow::Error::msg(bad()));
        }
        out.extend(a..=b);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Waits for every generator (each bounded by its own time limit). On a start failure
/// or SIGINT/SIGTERM, stops the generators and nginx; None when interrupted.
#[allow(clippy::type_complexity)]
pub fn wait_for(
    guard: &Guard,
    running: &super::server::Running,
    started: Vec<anyhow::Result<Started>>,
) -> Result<Option<Vec<anyhow::Result<Outcome>>>, Failure> {
    let stop_all = |started: &[anyhow::Result<Started>]| {
        for s in started.iter().flatten() {
            s.stop(guard);
        }
        super::server::stop(guard, running);
    };
    if let Some(Err(e)) = started.iter().find(|s| s.is_err()) {
        let e = e.to_string();
        stop_all(&started);
        return Err(Failure::Runtime(e));
    }
    let mut results: Vec<Option<anyhow::Result<Outcome>>> = started.iter().map(|_| None).collect();
    while results.iter().any(Option::is_none) {
        if crate::measure::stopped() {
            stop_all(&started);
            return Ok(None);
        }
        for (k, s) in started.iter().enumerate() {
            if let (None, Ok(s)) = (&results[k], s) {
                if let Poll::Done(r) = s.poll(guard) {
                    results[k] = Some(r);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(Some(results.into_iter().flatten().collect()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn controller_cpus_parse() {
        assert_eq!(super::parse_cpus("1").unwrap(), [1]);
        assert_eq!(super::parse_cpus("0-2,6").unwrap(), [0, 1, 2, 6]);
        assert!(super::parse_cpus("2-1").is_err());
        assert!(super::parse_cpus("x").is_err());
    }
}
