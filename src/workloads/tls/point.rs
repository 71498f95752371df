//! One tls point: nginx started afresh, the generator(s) run, nginx's log checked
//! request by request, and the record built. A point that fails a check is refused
//! (never timed into the results), with the reason.

use super::bench::Bench;
use super::plan::{Point, What};
use super::load::{self, Generator, Job, Load};
use super::server::{self, Content, LogSummary};
use super::{ktls, remote, suites};
use crate::failure::Failure;
use crate::profile::ProfileField;
use crate::record::tls::{HandshakeMs, MixPart, ServerInfo, TlsData, TlsRecord};
use crate::sys::cpu::CpuTime;
use crate::workloads::e2e::window::{CpuSeen, CpuWindow, Watched};
use anyhow::anyhow;
use std::path::PathBuf;
use std::time::Instant;

pub enum Outcome {
    Record(Box<TlsRecord>),
    Refused(String),
    Interrupted,
}

/// One part of a point: a suite and its connections.
struct Part {
    suite: usize,
    percent: f64,
    connections: u32,
}

pub const MIX_NEEDS_TWO: &str = "a mix needs at least 2 connections";

fn parts(b: &Bench, p: &Point) -> Option<Vec<Part>> {
    match p.what {
        What::Suite(i) => Some(vec![Part {
            suite: i,
            percent: 100.0,
            connections: p.concurrency,
        }]),
        What::Mix => {
            let (m, idx) = b.mix.as_ref()?;
            let pcts: Vec<f64> = m.parts.iter().map(|(_, pct)| *pct).collect();
            let conns = suites::split_connections(p.concurrency, &pcts)?;
            Some(
                idx.iter()
                    .zip(pcts)
                    .zip(conns)
                    .map(|((&suite, percent), connections)| Part {
                        suite,
                        percent,
                        connections,
                    })
                    .collect(),
            )
        }
    }
}

/// Measures one point end to end; `sampling`: under perf (the --profile rerun).
pub fn run(bench: &mut Bench, p: &Point, run_id: &str, sampling: bool) -> Result<Outcome, Failure> {
    let Some(parts) = parts(bench, p) else {
        return Ok(Outcome::Refused(MIX_NEEDS_TWO.into()));
    };
    let running = match bench.start_server(p.server, p.threads, p.handshake(bench))? {
        Ok(r) => r,
        Err(why) => return Ok(Outcome::Refused(why)),
    };
    let b: &Bench = bench;
    // Every server process (nginx's master and workers) must have mapped the library asked.
    let server_at = &b.servers[p.server];
    let procs = std::iter::once((running.master, server_at.name())).chain(
        running
            .workers
            .iter()
            .filter(|&&(pid, _)| pid != running.master)
            .map(|&(pid, _)| (pid, "nginx worker")),
    );
    let mut proven = None;
    for (pid, what) in procs {
        match server_at.lib().prove(pid, what) {
            Ok(m) => proven = Some(m),
            Err(reason) => {
                server::stop(&b.guard, &running);
                return Ok(Outcome::Refused(reason.to_string()));
            }
        }
    }
    // A kTLS suite: the kernel must be in use before the load (one response checked
    // byte for byte) and after it (every connection switched).
    let ktls_part = parts.iter().find(|pt| b.suites[pt.suite].ktls);
    let ktls_before = match ktls_part.map(|pt| ktls::before_load(b, pt.suite, p.content)) {
        Some(Err(reason)) => {
            server::stop(&b.guard, &running);
            return Ok(Outcome::Refused(reason.to_string()));
        }
        Some(Ok(k)) => Some(k),
        None => None,
    };
    // --groups: one handshake by the build's own client, for its size on the wire.
    let group = match p.what {
        What::Suite(i) => b.suites[i]
            .group
            .as_deref()
            .and_then(super::groups::find)
            .map(|g| (i, g)),
        What::Mix => None,
    };
    let hello = match group.map(|(i, g)| hello(b, i, g)) {
        Some(Err(reason)) => {
            server::stop(&b.guard, &running);
            return Ok(Outcome::Refused(reason.to_string()));
        }
        Some(Ok(h)) => Some(h),
        None => None,
    };
    let counts = match h2load_counts(b, p, &parts, &running)? {
        Ok(c) => c,
        Err(outcome) => return Ok(outcome),
    };
    let w = match load_window(b, p, &parts, &counts, &running, sampling)? {
        None => return Ok(Outcome::Interrupted),
        Some(Err(reason)) => return Ok(Outcome::Refused(reason)),
        Some(Ok(w)) => w,
    };
    let logs = match check_logs(b, p, &parts, &w.outcomes) {
        Ok(l) => l,
        Err(reason) => return Ok(Outcome::Refused(reason.to_string())),
    };
    let mut r = record(b, p, &parts, &w, &logs, run_id);
    handshake_figures(&mut r.data);
    if let Some((lib, build)) = proven {
        r.data.tls_lib = Some(lib);
        r.data.openssl_build = build;
    }
    if let (Some((_, g)), Some(h)) = (group, hello) {
        // Both ends were restricted to the group: nginx must have logged it for every
        // request, and the probe's client must have negotiated it.
        let logged = r
            .data
            .key_exchange
            .clone()
            .unwrap_or_else(|| "no one group".into());
        let negotiated = h.negotiated.clone().unwrap_or_else(|| logged.clone());
        if !g.is_logged_as(&logged) || !g.is_logged_as(&negotiated) {
            return Ok(Outcome::Refused(format!(
                "{} {}: nginx logged {logged} and s_client negotiated {negotiated}, not {}",
                b.suites[parts[0].suite].name, g.name, g.openssl
            )));
        }
        r.data.group = Some(g.name.into());
        r.data.negotiated_group = Some(negotiated);
        r.data.client_hello_bytes = Some(h.client_hello);
        r.data.server_hello_bytes = Some(h.server_hello);
    }
    if let (Some(pt), Some(before)) = (ktls_part, &ktls_before) {
        let connections = r.data.server_connections;
        match ktls::after_load(b, &b.suites[pt.suite], before, connections) {
            Ok((k, notes)) => {
                r.data.ktls = Some(k);
                r.notes.extend(notes);
            }
            Err(reason) => return Ok(Outcome::Refused(reason.to_string())),
        }
    }
    Ok(Outcome::Record(Box::new(r)))
}

/// One full handshake of `openssl s_client -groups G -msg` against suite `i`'s server
/// block: the build's own openssl command where it has one, else the system's on the
/// build's libraries.
fn hello(b: &Bench, i: usize, g: &super::groups::Group) -> anyhow::Result<super::groups::Hello> {
    let build = b.one_build();
    let own = build
        .map(|x| x.dir.join("bin/openssl"))
        .filter(|p| p.is_file());
    let program = own.as_deref().unwrap_or(&b.openssl);
    let env = build.map(|x| x.env()).unwrap_or_default();
    let tls13 = b.suites[i].proto == suites::Proto::Tls13;
    super::groups::probe(
        &b.guard,
        &b.dir,
        program,
        &env,
        (&b.host, b.ports[i]),
        g,
        tls13,
    )
}

/// h2load in handshake mode runs a request count: size it with a short run first.
/// The outer error ends the run; the inner one is the point's outcome.
#[allow(clippy::type_complexity)]
fn h2load_counts(
    b: &Bench,
    p: &Point,
    parts: &[Part],
    running: &server::Running,
) -> Result<Result<Vec<Option<u64>>, Outcome>, Failure> {
    let mut counts: Vec<Option<u64>> = vec![None; parts.len()];
    if !(b.generator == Generator::H2load && p.handshake(b)) {
        return Ok(Ok(counts));
    }
    let gen_cpus = b.pinned.then_some(&b.gen_cpus[..]);
    for (k, part) in parts.iter().enumerate() {
        let n = (2 * part.connections as u64).max(20);
        let job = make_job(b, p, part, k, Some(n), gen_cpus);
        let t = Instant::now();
        match remote::wait_for(
            &b.guard,
            running,
            vec![(remote::start(&b.guard, &job)).map_err(anyhow::Error::msg)],
        )? {
            Some(mut r) => match r.remove(0) {
                Ok(o) => {
                    let rate = o.requests as f64 / t.elapsed().as_secs_f64().max(1e-3);
                    counts[k] = Some(((rate * b.duration) as u64).max(part.connections as u64));
                }
                Err(e) => {
                    server::stop(&b.guard, running);
                    return Ok(Err(Outcome::Refused(format!("sizing the h2load run: {e}"))));
                }
            },
            None => return Ok(Err(Outcome::Interrupted)),
        }
        // The sizing run's requests are not part of the point.
        let _ = std::fs::File::create(b.servers[p.server].log_file(&b.dir, part.suite));
    }
    Ok(Ok(counts))
}

/// What the generators and the server did during the measured window.
struct Window {
    outcomes: Vec<load::Outcome>,
    threads: u32,
    /// The server's workers (role "server") and its CPUs, with the generator's when they
    /// run here.
    seen: CpuSeen,
    /// Busy CPU seconds of the generator's CPUs (the controller's with `tls --dut`).
    gen_busy: Option<f64>,
    workers_seen: usize,
    /// Where the workers' CPU went, when this is the sampled rerun (--profile).
    profile: Option<ProfileField>,
    /// A DUT's agent: its own CPU during the window, in percent of one core.
    agent_cpu_pct: Option<f64>,
}

/// Runs the generators against the started server and stops it; None when interrupted,
/// the reason when a generator failed.
#[allow(clippy::type_complexity)]
fn load_window(
    b: &Bench,
    p: &Point,
    parts: &[Part],
    counts: &[Option<u64>],
    running: &server::Running,
    sampling: bool,
) -> Result<Option<Result<Window, String>>, Failure> {
    let guard = &b.guard;
    let sampler = b.sampler.as_ref().filter(|_| sampling);
    let mut sampled = sampler.map(|s| {
        let pids = running.workers.iter().map(|&(pid, _)| pid).collect();
        s.start(guard, &crate::profile::Target::Pids(pids))
            .and_then(|mut w| w.enable().map(|_| w))
    });
    let gen_cpus = b.pinned.then_some(&b.gen_cpus[..]);
    let mut used_cpus = b.server_cpus.clone();
    // The controller's CPUs (tls --dut) are not this machine's: it reports their use.
    if !b.remote {
        used_cpus.extend(b.gen_cpus.iter().filter(|c| !b.server_cpus.contains(c)));
    }
    let window = CpuWindow::start(Watched {
        procs: running.workers.iter().map(|&(pid, _)| ("server".into(), pid)).collect(),
        cpus: Some(used_cpus),
        ..Watched::default()
    });
    let gen_window = CpuWindow::start(Watched {
        cpus: Some(b.gen_cpus.clone()),
        ..Watched::default()
    });
    let t0 = Instant::now();
    let mut started = Vec::new();
    let mut threads = 0u32;
    for (k, part) in parts.iter().enumerate() {
        let job = make_job(b, p, part, k, counts[k], gen_cpus);
        threads += job.load.threads;
        started.push(remote::start(guard, &job));
    }
    let Some(results) = remote::wait_for(guard, running, started)? else {
        return Ok(None);
    };
    let seconds = t0.elapsed().as_secs_f64();
    // Requests cut off when the generator closed its connections are logged (with the
    // bytes they did send) as nginx notices the close: wait for the logs to settle, so
    // that bytes and CPU cover the same work.
    let logs: Vec<PathBuf> = parts
        .iter()
        .map(|pt| b.servers[p.server].log_file(&b.dir, pt.suite))
        .collect();
    server::settle(&logs);
    let profile = sampler.zip(sampled.take()).map(|(s, w)| match w {
        Ok(w) => s.finish(w, &p.label(b)),
        Err(why) => ProfileField::Unavailable {
            unavailable: why.to_string(),
        },
    });
    let seen = window.finish(Some(seconds));
    let gen_seen = gen_window.finish(Some(seconds));
    let workers_seen = running.workers.len();
    server::stop(guard, running);
    // A generator that failed refuses the point, with its reason.
    let outcomes = match results.into_iter().collect::<anyhow::Result<Vec<_>>>() {
        Ok(o) => o,
        Err(e) => return Ok(Some(Err(e.to_string()))),
    };
    let gen_busy = if b.remote {
        outcomes.iter().map(|o| o.host_busy_s).sum::<Option<f64>>()
    } else {
        Some(gen_seen.busy_s)
    };
    Ok(Some(Ok(Window {
        outcomes,
        threads,
        agent_cpu_pct: crate::dut::agent::active().then(|| seen.own_s / seen.wall_s * 100.0),
        seen,
        gen_busy,
        workers_seen,
        profile,
    })))
}

/// Every request of the point, as nginx logged it per server block: the point is kept
/// only when every request negotiated the suite asked for, and was logged and readable.
fn check_logs(
    b: &Bench,
    p: &Point,
    parts: &[Part],
    outcomes: &[load::Outcome],
) -> anyhow::Result<Vec<LogSummary>> {
    let mut logs = Vec::new();
    let name = b.servers[p.server].name();
    for (part, o) in parts.iter().zip(outcomes) {
        let suite = &b.suites[part.suite];
        let text = b.servers[p.server].log_text(&b.dir, part.suite);
        let s = server::summarise_log(&text);
        let expected = suite.expected_log();
        if o.requests == 0 {
            return Err(anyhow!(
                "{}: no request completed in {} s ({} errors)",
                suite.name,
                b.duration,
                o.errors
            ));
        }
        if let Some((bad, k)) = s.negotiated.iter().find(|(n, _)| *n != expected) {
            return Err(anyhow!(
                "{}: {k} of {} requests negotiated '{bad}', not '{expected}'",
                suite.name,
                s.requests
            ));
        }
        if s.unparsed > 0 {
            return Err(anyhow!(
                "{}: {} lines of {name}'s log could not be read",
                suite.name,
                s.unparsed
            ));
        }
        if s.requests < o.requests {
            return Err(anyhow!(
                "{}: {name} logged {} requests but {} completed {}: not every request can be checked",
                suite.name,
                s.requests,
                b.generator.name(),
                o.requests
            ));
        }
        if p.content == Content::HtmlGzip && s.gzipped < o.requests {
            return Err(anyhow!(
                "{}: only {} of {} responses were gzip'd",
                suite.name,
                s.gzipped,
                s.requests
            ));
        }
        logs.push(s);
    }
    Ok(logs)
}

/// The group every logged request used, if there is exactly one. An nginx older than the
/// group logs its code point ("0x11ec"): named as OpenSSL names it, as the record's
/// negotiated group is.
fn one_group(logs: &[LogSummary], requests: u64) -> Option<String> {
    let mut groups = logs.iter().flat_map(|l| l.groups.iter());
    let (g, n) = groups.next()?;
    let named = match super::groups::find(g) {
        Some(known) if g.starts_with("0x") => known.openssl.to_string(),
        _ => g.clone(),
    };
    (groups.next().is_none() && *n == requests).then_some(named)
}

fn first_negotiated(l: &LogSummary) -> String {
    l.negotiated
        .first()
        .map(|(n, _)| n.clone())
        .unwrap_or_default()
}

fn mix_parts(b: &Bench, parts: &[Part], w: &Window, logs: &[LogSummary]) -> Vec<MixPart> {
    parts
        .iter()
        .zip(&w.outcomes)
        .zip(logs)
        .map(|((pt, o), l)| MixPart {
            suite: b.suites[pt.suite].name.clone(),
            negotiated: first_negotiated(l),
            percent: pt.percent,
            connections: pt.connections,
            requests: o.requests,
            requests_per_s: o.requests as f64 / o.duration_s.max(1e-9),
            bytes: o.bytes,
            errors: o.errors,
            latency_ms: o.latency.clone(),
            server_requests: l.requests,
            port: b.ports[pt.suite],
        })
        .collect()
}

fn record(
    b: &Bench,
    p: &Point,
    parts: &[Part],
    w: &Window,
    logs: &[LogSummary],
    run_id: &str,
) -> TlsRecord {
    let outcomes = &w.outcomes;
    let mut notes = Vec::new();
    for (part, o) in parts.iter().zip(outcomes) {
        if o.errors > 0 {
            notes.push(format!(
                "{}: {} counted {} errors",
                b.suites[part.suite].name,
                b.generator.name(),
                o.errors
            ));
        }
    }
    let server_at = &b.servers[p.server];
    let expected = server_at.processes(p.threads);
    if w.workers_seen != expected {
        notes.push(format!(
            "{} {} workers seen, {expected} configured",
            w.workers_seen,
            server_at.name()
        ));
    }
    if p.threads > b.server_cpus.len().max(1) {
        notes.push(format!(
            "{} threads exceed the server's {} CPU(s): they share them, so no scaling claim is drawn from this point",
            p.threads,
            b.server_cpus.len().max(1)
        ));
    }
    let client = w.outcomes.iter().fold(CpuTime::default(), |a, o| CpuTime {
        user: a.user + o.cpu.user,
        sys: a.sys + o.cpu.sys,
    });
    let server = w.seen.cpu_of(Some("server"));
    let cpu = crate::analyse::tls_point::cpu(&crate::analyse::tls_point::Window {
        server: server_at.name(),
        generator: b.generator.name(),
        pinned: b.pinned,
        remote: b.remote,
        server_cpus: b.server_cpus.len(),
        gen_cpus: b.gen_cpus.len(),
        threads: w.threads,
        client,
        server_cpu: server.total(),
        seconds: w.seen.seconds,
        used_cpus: w.seen.cpus.as_ref().map_or(1, Vec::len),
        busy_pct: w.seen.pct_of_cpus(w.seen.busy_s),
        // The generator's CPU is this host's unless it ran on a controller.
        others_pct: w.seen.others_pct(server.total() + if b.remote { 0.0 } else { client.total() }),
        gen_busy: w.gen_busy,
    });
    notes.extend(cpu.notes.iter().cloned());
    let sum = |f: &dyn Fn(&load::Outcome) -> u64| outcomes.iter().map(f).sum::<u64>();
    let per_s = |f: &dyn Fn(&load::Outcome) -> u64| {
        outcomes
            .iter()
            .map(|o| f(o) as f64 / o.duration_s.max(1e-9))
            .sum::<f64>()
    };
    let tput = per_s(&|o| o.bytes);
    let server_requests: u64 = logs.iter().map(|l| l.requests).sum();
    let server_bytes: u64 = logs.iter().map(|l| l.bytes_sent).sum();
    let suite_of = |pt: &Part| &b.suites[pt.suite];
    let mix = matches!(p.what, What::Mix).then(|| mix_parts(b, parts, w, logs));
    let suite = if mix.is_some() {
        "mix".to_string()
    } else {
        suite_of(&parts[0]).name.clone()
    };
    crate::record::Record {
        kind: crate::record::LineKind::Record,
        schema: crate::record::SCHEMA,
        run_id: run_id.into(),
        workload: crate::record::Workload::Tls,
        implementation: b.implementation(p.server),
        impl_version: server_at.impl_version(),
        variant: None,
        label: suite.clone(),
        throughput_bps: tput,
        throughput_bps_ci: None,
        samples_bps: vec![tput],
        wall_s: outcomes
            .iter()
            .map(|o| o.duration_s)
            .fold(0.0f64, f64::max)
            .max(1e-9),
        cpu_user_s: Some(server.user),
        cpu_sys_s: Some(server.sys),
        cpu_s_per_gb: (server_bytes > 0).then(|| server.total() / (server_bytes as f64 / 1e9)),
        others_cpu_pct: Some(cpu.others_pct),
        disturbed: crate::record::window::disturbed(cpu.others_pct),
        profile: w.profile.clone().map(Box::new),
        dut: None,
        dut_agent_cpu_pct: w.agent_cpu_pct,
        notes,
        data: TlsData {
            suite,
            protocol: parts
                .iter()
                .map(|pt| suite_of(pt).proto.name())
                .collect::<Vec<_>>()
                .join("+"),
            negotiated: logs
                .iter()
                .map(first_negotiated)
                .collect::<Vec<_>>()
                .join(" + "),
            mix,
            generator: b.generator.name().into(),
            handshake: p.handshake(b),
            cert: b.cert.label().into(),
            content: p.content.label().into(),
            file_size: p.content.size(),
            concurrency: p.concurrency,
            round: p.round,
            duration_s: b.duration,
            requests: sum(&|o| o.requests),
            errors: sum(&|o| o.errors),
            bytes: sum(&|o| o.bytes),
            requests_per_s: per_s(&|o| o.requests),
            latency_ms: match &outcomes[..] {
                [one] => one.latency.clone(),
                _ => None,
            },
            server_requests,
            server_bytes,
            server_body_bytes: logs.iter().map(|l| l.body_bytes).sum(),
            server_connections: logs.iter().map(|l| l.connections).sum(),
            negotiated_requests: server_requests,
            server_cpu_s: server.total(),
            server_cpu_pct: server.total() / (w.seen.seconds * b.server_cpus.len().max(1) as f64)
                * 100.0,
            server_workers: w.workers_seen as u32,
            server_cpus: b.server_cpus.clone(),
            client_cpu_s: client.total(),
            client_cpu_user_s: client.user,
            client_cpu_sys_s: client.sys,
            client_cpu_pct: cpu.client_pct,
            client_threads: w.threads,
            client_cpus: b.gen_cpus.clone(),
            generator_bound: cpu.generator_bound,
            cpu_ms_per_request: if server_requests > 0 {
                server.total() * 1e3 / server_requests as f64
            } else {
                0.0
            },
            ports: parts.iter().map(|pt| b.ports[pt.suite]).collect(),
            handshake_cost: None,
            key_exchange: one_group(logs, server_requests),
            group: None,
            negotiated_group: None,
            client_hello_bytes: None,
            server_hello_bytes: None,
            limit: Some(cpu.limit),
            openssl_build: None,
            ktls: None,
            server: Some(ServerInfo {
                name: server_at.name().into(),
                version: server_at.version(),
                threads: p.threads as u32,
            }),
            handshakes_per_s: None,
            handshake_ms: None,
            server_cpu_per_handshake_ms: None,
            tls_lib: None,
        },
    }
}

/// `--handshake` at a TLS suite: one full handshake per request, on a new connection.
fn handshake_figures(d: &mut TlsData) {
    if !d.handshake || d.protocol == "http" || d.mix.is_some() {
        return;
    }
    d.handshakes_per_s = Some(d.requests_per_s);
    d.handshake_ms = d.latency_ms.as_ref().map(|l| HandshakeMs {
        p50: l.p50,
        p90: l.p90,
        p99: l.p99,
        max: l.max,
    });
    d.server_cpu_per_handshake_ms = Some(d.cpu_ms_per_request);
}

fn make_job<'a>(
    b: &'a Bench,
    p: &Point,
    part: &Part,
    k: usize,
    count: Option<u64>,
    cpus: Option<&'a [usize]>,
) -> Job<'a> {
    let conf = b.dir.join(format!("client-{}.cnf", part.suite));
    Job {
        load: Load {
            generator: b.generator,
            port: b.ports[part.suite],
            path: p.content.path(),
            connections: part.connections,
            threads: part.connections.min(b.gen_cpus.len().max(1) as u32),
            duration_s: b.duration,
            count,
            handshake: p.handshake(b),
            gzip: p.content.gzip(),
        },
        program: &b.gen_program,
        dir: &b.dir,
        tag: format!("gen-{k}"),
        suite: &b.suites[part.suite],
        host: &b.host,
        remote: b.remote,
        client_conf: conf.exists().then_some(conf),
        // --groups on a build: the generator runs on it too, to offer what only it has.
        lib_path: b.suites[part.suite]
            .group
            .as_ref()
            .and(b.servers[p.server].lib().as_build())
            .map(|x| x.lib_dir.as_path()),
        cpus,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_logged_code_point_is_named_as_openssl_names_it() {
        let log = |g: &str| LogSummary {
            groups: vec![(g.to_string(), 10)],
            ..Default::default()
        };
        assert_eq!(
            one_group(&[log("0x11ec")], 10).as_deref(),
            Some("X25519MLKEM768")
        );
        assert_eq!(one_group(&[log("X25519")], 10).as_deref(), Some("X25519"));
        // Unknown code points stay as logged; a group not on every request is none.
        assert_eq!(one_group(&[log("0x9999")], 10).as_deref(), Some("0x9999"));
        assert_eq!(one_group(&[log("X25519")], 11), None);
    }
}
