//! `cryptobench tls`: a real nginx on loopback, driven by a real load generator, one
//! cipher suite at a time, with a null-cipher ceiling measured in the same run, and the
//! share of the server's CPU that is crypto.
//!
//! One guard owns everything: the private temp dir (key, certificate, files, logs),
//! nginx (started afresh for every point, so each point has its own log and CPU
//! counters) and the generators. Every wait is bounded in time.

pub mod analysis;
pub mod load;
pub mod primitive;
pub mod record;
pub mod render;
pub mod server;
pub mod suites;
pub mod sys;
pub mod view;

use super::{Failure, EXIT_INTERRUPTED};
use crate::environment;
use crate::guard::Guard;
use crate::measure::{self, cpu::CpuTime};
use crate::record::JsonLinesWriter;
use load::{Generator, Job, Poll};
use record::{MixPart, Refusal, TlsData, TlsRecord};
use serde_json::json;
use server::Content;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use suites::{Catalogue, CertKind, Mix, Suite};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TlsFormat {
    Table,
    Json,
    Csv,
    Markdown,
}

#[derive(clap::Args)]
pub struct TlsArgs {
    /// Suites, comma-separated: OpenSSL names (ECDHE-RSA-AES128-GCM-SHA256,
    /// TLS_AES_128_GCM_SHA256, ...), short names (aes128gcm, aes256gcm, chacha,
    /// tls12-aes128gcm, tls12-aes256gcm, tls12-chacha, tls12-aes128cbc), http and null.
    /// Default: the 4 TLS 1.2 and 3 TLS 1.3 suites of the issue, http and null.
    #[arg(long, value_name = "LIST")]
    pub suites: Option<String>,
    /// File sizes served, comma-separated, binary units (4k,100k,10m; 1 byte to 1g).
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "LIST",
        default_value = "4k,100k,10m"
    )]
    pub files: String,
    /// Connections open at once, comma-separated (1 to 10000).
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "LIST",
        default_value = "1,10,100"
    )]
    pub concurrency: String,
    /// Seconds of load per point (at least 1; whole seconds with wrk).
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    pub duration: f64,
    /// Load generator.
    #[arg(long, value_enum, default_value_t = Generator::Wrk)]
    pub generator: Generator,
    /// A new connection, and a full handshake, for every request (no keep-alive, no
    /// session resumption).
    #[arg(long)]
    pub handshake: bool,
    /// Also serve two suites at once from one server, splitting the connections, e.g.
    /// chacha=10%,aes128gcm=90%; compared with each suite alone.
    #[arg(long, value_name = "A=P%,B=Q%")]
    pub mix: Option<String>,
    /// Also serve a 100 KiB HTML page, plain and gzip'd on the fly.
    #[arg(long)]
    pub gzip: bool,
    /// Certificate key: rsa (RSA-2048) or ecdsa (P-256).
    #[arg(long, value_enum, default_value_t = CertKind::Rsa)]
    pub cert: CertKind,
    /// The nginx binary (default: nginx on PATH or in /usr/sbin).
    #[arg(long, value_name = "PATH")]
    pub nginx: Option<PathBuf>,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = TlsFormat::Table)]
    pub format: TlsFormat,
    /// Append JSON Lines (environment, then one record per point, flushed) to FILE.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// List the suites this OpenSSL and certificate allow, and exit.
    #[arg(long)]
    pub list: bool,
    /// Sample the nginx workers with perf: where the server's CPU goes, per point.
    #[arg(long)]
    pub profile: bool,
    /// With --profile: keep folded stacks and a flame graph SVG per point in DIR.
    #[arg(long, value_name = "DIR")]
    pub profile_dir: Option<PathBuf>,
}

const MAX_CONCURRENCY: u32 = 10_000;
const MAX_FILE: u64 = 1 << 30;
const MAX_DURATION: f64 = 3600.0;
/// The generator is the bottleneck when it used this much of the CPU it had.
const GENERATOR_BOUND_PCT: f64 = 90.0;
/// A point is disturbed when other processes used this much of our CPUs.
const DISTURBED_PCT: f64 = 10.0;

fn input(m: String) -> Failure {
    Failure::Input(m)
}

pub fn parse_concurrency(s: &str) -> Result<Vec<u32>, String> {
    let n = crate::cli::counts(s, "--concurrency", 1..=MAX_CONCURRENCY as u64, "1,10,100")?;
    Ok(n.into_iter().map(|n| n as u32).collect())
}

pub fn parse_files(s: &str) -> Result<Vec<u64>, String> {
    crate::cli::byte_list(s, "--files", 1..=MAX_FILE, "4k,100k,10m")
}

fn check_duration(d: f64, g: Generator) -> Result<f64, String> {
    if !(d.is_finite() && (1.0..=MAX_DURATION).contains(&d)) {
        return Err(format!(
            "invalid --duration {d}: give seconds of load per point from 1 to {MAX_DURATION}"
        ));
    }
    if g == Generator::Wrk && d.fract() != 0.0 {
        return Err(format!(
            "invalid --duration {d}: wrk takes whole seconds, e.g. --duration {}",
            d.round().max(1.0)
        ));
    }
    Ok(d)
}

/// What one point measures.
#[derive(Clone, Copy, Debug)]
enum What {
    Suite(usize),
    Mix,
}

#[derive(Clone, Copy, Debug)]
struct Point {
    content: Content,
    concurrency: u32,
    what: What,
}

/// Everything fixed for the run.
struct Ctx<'a> {
    guard: &'a Guard,
    dir: PathBuf,
    nginx: PathBuf,
    nginx_has_e: bool,
    generator: Generator,
    gen_program: PathBuf,
    suites: Vec<Suite>,
    mix: Option<(Mix, Vec<usize>)>,
    ports: Vec<u16>,
    server_cpus: Vec<usize>,
    gen_cpus: Vec<usize>,
    pinned: bool,
    workers: usize,
    worker_connections: u64,
    duration: f64,
    handshake: bool,
    gzip: bool,
    cert: CertKind,
    run_id: String,
    /// "nginx/1.22.1 (OpenSSL 3.0.19 ...)": the impl_version of every record.
    impl_version: String,
    /// --profile: the sampler, and whether the point now running is the sampled rerun.
    sampler: Option<crate::profile::Sampler>,
    sampling: bool,
}

enum Outcome {
    Record(Box<TlsRecord>),
    Refused(String),
    Interrupted,
}

pub fn run(args: TlsArgs) -> Result<i32, Failure> {
    // Everything about the input first: nothing starts before it is all valid.
    let duration = check_duration(args.duration, args.generator).map_err(input)?;
    let concurrency = parse_concurrency(&args.concurrency).map_err(input)?;
    let sizes = parse_files(&args.files).map_err(input)?;
    let nginx = sys::find_program("nginx", args.nginx.as_deref()).ok_or_else(|| {
        input(match &args.nginx {
            Some(p) => format!(
                "--nginx {}: not an executable file: install the Debian package nginx (apt-get install nginx) or give its path",
                p.display()
            ),
            None => "nginx not found on PATH or in /usr/sbin: install the Debian package nginx (apt-get install nginx) or give --nginx PATH".into(),
        })
    })?;
    let gen_program = sys::find_program(args.generator.name(), None).ok_or_else(|| {
        input(format!(
            "{} not found on PATH: install the Debian package {} (apt-get install {})",
            args.generator.name(),
            args.generator.package(),
            args.generator.package()
        ))
    })?;
    let openssl = sys::find_program("openssl", None).ok_or_else(|| {
        input("openssl not found on PATH (needed for the certificate and the suite list): install the Debian package openssl".into())
    })?;
    let sampler = (args.profile || args.profile_dir.is_some())
        .then(|| crate::profile::Sampler::new(args.profile_dir.clone(), false))
        .transpose()
        .map_err(input)?;
    let mut writer = match &args.output {
        Some(p) => Some(JsonLinesWriter::append(p).map_err(Failure::Input)?),
        None => None,
    };

    super::install_signal_handler();
    let guard = Guard::new();
    let dir = guard.temp_dir("tls").map_err(Failure::Runtime)?;
    let openssl_s = openssl.to_string_lossy().to_string();
    let (_, ciphers, _) = sys::run_bounded(
        &guard,
        &dir,
        &[&openssl_s, "ciphers", "-v", "ALL:eNULL:@SECLEVEL=0"],
        &[],
        Duration::from_secs(20),
    )
    .map_err(Failure::Runtime)?;
    let cat = Catalogue::new(suites::parse_ciphers(&ciphers), args.cert);
    if args.list {
        println!(
            "Suites this OpenSSL can serve with a{} certificate:\n  {}",
            if args.cert == CertKind::Rsa {
                "n RSA"
            } else {
                "n ECDSA"
            },
            cat.valid_names().join("\n  ")
        );
        return Ok(0);
    }
    let (mut suite_list, mut run_notes) = cat.select(args.suites.as_deref()).map_err(input)?;
    let mix = match &args.mix {
        Some(spec) => {
            let m = suites::parse_mix(spec, &cat).map_err(input)?;
            let mut idx = Vec::new();
            for (s, _) in &m.parts {
                let i = match suite_list.iter().position(|x| x.name == s.name) {
                    Some(i) => i,
                    None => {
                        run_notes.push(format!(
                            "{} added to the suites: --mix is compared with each of its suites alone",
                            s.name
                        ));
                        suite_list.push(s.clone());
                        suite_list.len() - 1
                    }
                };
                idx.push(i);
            }
            Some((m, idx))
        }
        None => None,
    };
    if suite_list.is_empty() {
        return Err(input("no suite to measure".into()));
    }

    // nginx: its version, OpenSSL, and whether it can do what we ask.
    let nginx_s = nginx.to_string_lossy().to_string();
    let (_, _, nginx_v) = sys::run_bounded(
        &guard,
        &dir,
        &[&nginx_s, "-V"],
        &[],
        Duration::from_secs(10),
    )
    .map_err(Failure::Runtime)?;
    let nginx_version = nginx_v
        .lines()
        .find_map(|l| l.strip_prefix("nginx version: "))
        .unwrap_or("unknown")
        .trim()
        .to_string();
    let nginx_ssl = nginx_v
        .lines()
        .find(|l| l.starts_with("built with"))
        .unwrap_or("")
        .trim()
        .to_string();
    let numeric = version_tuple(&nginx_version);
    if suite_list.iter().any(|s| s.cipher.is_some()) && !nginx_v.contains("http_ssl_module") {
        return Err(input(format!(
            "{} ({nginx_version}) lacks the SSL module: install the Debian package nginx",
            nginx.display()
        )));
    }
    if suite_list.iter().any(|s| s.proto == suites::Proto::Tls13) && numeric < (1, 19, 4) {
        return Err(input(format!(
            "{nginx_version} cannot restrict TLS 1.3 suites (ssl_conf_command needs nginx 1.19.4): choose TLS 1.2 suites or a newer nginx"
        )));
    }

    let allowed = sys::allowed_cpus();
    let (server_cpus, gen_cpus, pinned) = sys::split_cpus(&allowed);
    if !pinned {
        run_notes.push("one CPU: server and generator share it (no pinning)".into());
    }
    let workers = server_cpus.len().max(1);
    let cmax = *concurrency.iter().max().unwrap_or(&1) as u64;
    let worker_connections = cmax + 64;
    let nofile = sys::raise_nofile(2 * cmax + 256);
    if nofile < 2 * cmax + 64 {
        run_notes.push(format!(
            "open-file limit {nofile} is low for {cmax} connections: raise `ulimit -n` if connections fail"
        ));
    }

    let wrk_path = sys::find_program("wrk", None);
    let h2load_path = sys::find_program("h2load", None);
    let mut libraries = vec![
        json!({"impl": "nginx", "version": nginx_version, "details": {"path": nginx, "openssl": nginx_ssl}}),
    ];
    let (_, ov, _) = sys::run_bounded(
        &guard,
        &dir,
        &[&openssl_s, "version"],
        &[],
        Duration::from_secs(10),
    )
    .map_err(Failure::Runtime)?;
    libraries.push(json!({"impl": "openssl", "version": ov.trim(), "details": {"path": openssl, "note": "the openssl command; nginx's own build is in nginx.details.openssl"}}));
    let mut unavailable = Vec::new();
    for (g, p) in [
        (Generator::Wrk, &wrk_path),
        (Generator::H2load, &h2load_path),
    ] {
        match p {
            Some(p) => libraries.push(json!({
                "impl": g.name(), "version": load::version(g, p), "details": {"path": p}
            })),
            None => unavailable.push(json!({
                "name": g.name(), "reason": format!("not installed (Debian package {})", g.package())
            })),
        }
    }

    // The server's world: certificate, files, ports, configuration, client configs.
    server::make_cert(&guard, &dir, &openssl, args.cert).map_err(Failure::Runtime)?;
    let mut contents: Vec<Content> = sizes.iter().map(|&n| Content::Random(n)).collect();
    if args.gzip {
        contents.push(Content::Html);
        contents.push(Content::HtmlGzip);
    }
    server::write_files(&dir.join("www"), &contents).map_err(Failure::Runtime)?;
    for d in ["tmp", "logs"] {
        std::fs::create_dir_all(dir.join(d)).map_err(|e| Failure::Runtime(e.to_string()))?;
    }
    std::fs::write(dir.join("report.lua"), load::WRK_SCRIPT)
        .map_err(|e| Failure::Runtime(e.to_string()))?;
    for (i, s) in suite_list.iter().enumerate() {
        if let Some(c) = server::client_openssl_conf(s) {
            std::fs::write(dir.join(format!("client-{i}.cnf")), c)
                .map_err(|e| Failure::Runtime(e.to_string()))?;
        }
    }
    let ports = sys::free_ports(suite_list.len()).map_err(Failure::Runtime)?;
    let mut ctx = Ctx {
        sampler,
        sampling: false,
        guard: &guard,
        dir: dir.clone(),
        nginx: nginx.clone(),
        nginx_has_e: numeric >= (1, 19, 5),
        generator: args.generator,
        gen_program,
        suites: suite_list,
        mix,
        ports,
        server_cpus,
        gen_cpus,
        pinned,
        workers,
        worker_connections,
        duration,
        handshake: args.handshake,
        gzip: args.gzip,
        cert: args.cert,
        run_id: String::new(),
        impl_version: format!("{nginx_version} ({nginx_ssl})"),
    };
    write_config(&ctx).map_err(Failure::Runtime)?;
    let (code, _, err) = sys::run_bounded(
        &guard,
        &dir,
        &[
            &nginx_s,
            "-t",
            "-q",
            "-p",
            &dir.to_string_lossy(),
            "-c",
            &dir.join("nginx.conf").to_string_lossy(),
        ],
        &[],
        Duration::from_secs(20),
    )
    .map_err(Failure::Runtime)?;
    if code != Some(0) {
        return Err(Failure::Runtime(format!(
            "nginx rejects the generated configuration: {}",
            err.lines()
                .find(|l| l.contains("emerg"))
                .unwrap_or(err.trim())
        )));
    }

    // The cipher alone, on the same libcrypto, before any load.
    let tls_suites: Vec<&Suite> = ctx.suites.iter().filter(|s| s.cipher.is_some()).collect();
    let (alone, alone_notes) = primitive::measure(&tls_suites, Duration::from_millis(150));
    run_notes.extend(alone_notes);

    let settings = json!({
        "suites": ctx.suites.iter().zip(&ctx.ports).map(|(s, p)| json!({
            "suite": s.name, "cipher": s.cipher, "protocol": s.proto.name(), "null": s.null,
            "record_protection": s.enc, "port": p,
        })).collect::<Vec<_>>(),
        "files": sizes, "gzip_page": args.gzip, "concurrency": concurrency,
        "duration_s": duration, "generator": args.generator.name(), "handshake": args.handshake,
        "mix": ctx.mix.as_ref().map(|(m, _)| m.spec.clone()), "cert": args.cert.label(),
        "server_cpus": ctx.server_cpus, "generator_cpus": ctx.gen_cpus, "pinned": ctx.pinned,
        "nginx_workers": ctx.workers, "worker_connections": ctx.worker_connections,
        "keepalive_requests": if args.handshake { None } else { Some(1_000_000) },
        "ssl_session_cache": "off", "ssl_session_tickets": "off", "ktls": false,
        "sendfile": "on (used only by plain HTTP)", "http_version": "HTTP/1.1",
        "nginx_restarted_per_point": true, "temp_dir": dir, "cipher_alone_record_bytes": primitive::RECORD,
        "notes": run_notes,
    });
    let env = environment::capture(libraries, unavailable, settings);
    ctx.run_id = env.run_id.clone();
    if let Some(w) = writer.as_mut() {
        w.write(&env).map_err(Failure::Runtime)?;
    }

    // The plan: per content and concurrency, every suite back to back (drift hits them
    // alike), then the mix.
    let mut points = Vec::new();
    let mut refused: Vec<Refusal> = Vec::new();
    for &content in &contents {
        for &c in &concurrency {
            for i in 0..ctx.suites.len() {
                points.push(Point {
                    content,
                    concurrency: c,
                    what: What::Suite(i),
                });
            }
            if ctx.mix.is_some() {
                if c < 2 {
                    refused.push(Refusal {
                        suite: "mix".into(),
                        content: content.label().into(),
                        file_size: content.size(),
                        concurrency: c,
                        kind: "skipped".into(),
                        reason: "a mix needs at least 2 connections".into(),
                    });
                } else {
                    points.push(Point {
                        content,
                        concurrency: c,
                        what: What::Mix,
                    });
                }
            }
        }
    }
    eprintln!(
        "cryptobench tls: {} points of {} s on {} ({}), generator {}; server CPUs {}, generator CPUs {}; ports {}",
        points.len(),
        duration,
        nginx_version,
        nginx_ssl,
        args.generator.name(),
        sys::cpu_list(&ctx.server_cpus),
        sys::cpu_list(&ctx.gen_cpus),
        ctx.ports.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(",")
    );

    let mut records: Vec<TlsRecord> = Vec::new();
    let mut interrupted = false;
    for (n, p) in points.iter().enumerate() {
        if measure::stopped() {
            interrupted = true;
            break;
        }
        let label = point_label(&ctx, p);
        match run_point(&mut ctx, p)? {
            Outcome::Record(mut r) => {
                if ctx.sampler.is_some() {
                    r.profile = sampled_rerun(&mut ctx, p)?;
                }
                eprintln!(
                    "[{}/{}] {label}: {:.0} req/s, {} MB/s, server {:.0}% CPU, {} {:.0}% CPU{}{}",
                    n + 1,
                    points.len(),
                    r.requests_per_s,
                    crate::render::mbps(r.throughput_bps),
                    r.server_cpu_pct,
                    r.generator,
                    r.client_cpu_pct,
                    if r.generator_bound {
                        " (generator-bound)"
                    } else {
                        ""
                    },
                    if r.disturbed {
                        format!(
                            " (disturbed: others used {:.0}% of our CPUs)",
                            r.others_cpu_pct
                        )
                    } else {
                        String::new()
                    }
                );
                if let Some(w) = writer.as_mut() {
                    w.write(&*r).map_err(Failure::Runtime)?;
                }
                records.push(*r);
            }
            Outcome::Refused(reason) => {
                eprintln!("[{}/{}] {label}: refused: {reason}", n + 1, points.len());
                refused.push(Refusal {
                    suite: match p.what {
                        What::Suite(i) => ctx.suites[i].name.clone(),
                        What::Mix => "mix".into(),
                    },
                    content: p.content.label().into(),
                    file_size: p.content.size(),
                    concurrency: p.concurrency,
                    kind: "refused".into(),
                    reason,
                });
            }
            Outcome::Interrupted => {
                interrupted = true;
                break;
            }
        }
    }
    interrupted |= measure::stopped();
    // Everything we started is gone before the report is printed.
    guard.release();

    let analysis = analysis::analyse(&records, alone);
    let nothing = records.is_empty();
    let report = render::TlsReport {
        schema: crate::record::SCHEMA,
        environment: Some(env),
        records,
        refused,
        interrupted,
        analysis,
    };
    print!("{}", render::render(args.format, &report));
    if args.format == TlsFormat::Table {
        for r in &report.records {
            if let Some(p) = &r.profile {
                let label = format!("{} {} c={}", r.suite, r.file_size, r.concurrency);
                print!(
                    "{}",
                    crate::profile::table::render(&label, p, Some(r.throughput_bps))
                );
            }
        }
    }
    if interrupted {
        return Ok(EXIT_INTERRUPTED);
    }
    if nothing {
        return Err(Failure::Runtime(
            "nothing measured: every point was refused (see above)".into(),
        ));
    }
    Ok(0)
}

fn version_tuple(v: &str) -> (u32, u32, u32) {
    let n: Vec<u32> = v
        .trim_start_matches("nginx/")
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|x| x.parse().ok())
        .collect();
    (
        n.first().copied().unwrap_or(0),
        n.get(1).copied().unwrap_or(0),
        n.get(2).copied().unwrap_or(0),
    )
}

fn write_config(ctx: &Ctx) -> Result<(), String> {
    let conf = server::config(&server::Config {
        dir: &ctx.dir,
        suites: &ctx.suites,
        ports: &ctx.ports,
        workers: ctx.workers,
        worker_cpus: ctx.pinned.then_some(&ctx.server_cpus[..]),
        worker_connections: ctx.worker_connections,
        handshake: ctx.handshake,
        gzip: ctx.gzip,
        as_root: sys::is_root(),
    });
    std::fs::write(ctx.dir.join("nginx.conf"), conf).map_err(|e| e.to_string())
}

fn point_label(ctx: &Ctx, p: &Point) -> String {
    let what = match p.what {
        What::Suite(i) => ctx.suites[i].name.clone(),
        What::Mix => format!(
            "mix {}",
            ctx.mix.as_ref().map(|(m, _)| m.spec.as_str()).unwrap_or("")
        ),
    };
    format!("{what} {} c={}", p.content.short(), p.concurrency)
}

/// Starts nginx for one point; picks new ports when another program took ours.
fn start_server(ctx: &mut Ctx) -> Result<server::Running, Failure> {
    let mut last = String::new();
    for _ in 0..3 {
        let cpus = ctx.pinned.then(|| ctx.server_cpus.clone());
        match server::start(
            ctx.guard,
            &ctx.nginx,
            &ctx.dir,
            &ctx.ports,
            ctx.workers,
            cpus.as_deref(),
            ctx.nginx_has_e,
        ) {
            Ok(r) => return Ok(r),
            Err(e) if e.contains("Address already in use") => {
                eprintln!("cryptobench tls: a port was taken ({e}); choosing new ports");
                ctx.ports = sys::free_ports(ctx.suites.len()).map_err(Failure::Runtime)?;
                write_config(ctx).map_err(Failure::Runtime)?;
                last = e;
            }
            Err(e) => return Err(Failure::Runtime(e)),
        }
    }
    Err(Failure::Runtime(last))
}

/// Waits (up to 2 s) until the files stop growing for 150 ms.
fn settle(files: &[PathBuf]) {
    let size = || -> u64 {
        files
            .iter()
            .map(|f| std::fs::metadata(f).map(|m| m.len()).unwrap_or(0))
            .sum()
    };
    let start = Instant::now();
    let (mut last, mut since) = (size(), Instant::now());
    while start.elapsed() < Duration::from_secs(2) && since.elapsed() < Duration::from_millis(150) {
        std::thread::sleep(Duration::from_millis(25));
        let now = size();
        if now != last {
            last = now;
            since = Instant::now();
        }
    }
}

fn sum_cpu(before: &[(i32, CpuTime)], after: &[(i32, CpuTime)]) -> CpuTime {
    let mut t = CpuTime::default();
    for (pid, a) in after {
        let b = before
            .iter()
            .find(|(p, _)| p == pid)
            .map(|(_, c)| *c)
            .unwrap_or_default();
        let d = a.minus(b);
        t.user += d.user;
        t.sys += d.sys;
    }
    t
}

/// One part of a point: a suite and its connections.
struct Part {
    suite: usize,
    percent: f64,
    connections: u32,
}

fn make_job<'a>(
    ctx: &'a Ctx,
    p: &Point,
    part: &Part,
    k: usize,
    count: Option<u64>,
    cpus: Option<&'a [usize]>,
) -> Job<'a> {
    let conf = ctx.dir.join(format!("client-{}.cnf", part.suite));
    Job {
        generator: ctx.generator,
        program: &ctx.gen_program,
        dir: &ctx.dir,
        tag: format!("gen-{k}"),
        suite: &ctx.suites[part.suite],
        client_conf: conf.exists().then_some(conf),
        port: ctx.ports[part.suite],
        path: p.content.path(),
        connections: part.connections,
        threads: part.connections.min(ctx.gen_cpus.len().max(1) as u32),
        duration_s: ctx.duration,
        count,
        handshake: ctx.handshake,
        gzip: p.content.gzip(),
        cpus,
    }
}

/// Waits for every generator (each bounded by its own time limit). On a start failure
/// or SIGINT/SIGTERM, stops the generators and nginx; None when interrupted.
#[allow(clippy::type_complexity)]
fn wait_for(
    guard: &Guard,
    running: &server::Running,
    started: Vec<Result<load::Started, String>>,
) -> Result<Option<Vec<Result<load::Outcome, String>>>, Failure> {
    let stop_all = |started: &[Result<load::Started, String>]| {
        for s in started.iter().flatten() {
            s.stop(guard);
        }
        server::stop(guard, running);
    };
    if let Some(Err(e)) = started.iter().find(|s| s.is_err()) {
        let e = e.clone();
        stop_all(&started);
        return Err(Failure::Runtime(e));
    }
    let mut results: Vec<Option<Result<load::Outcome, String>>> = vec![None; started.len()];
    while results.iter().any(Option::is_none) {
        if measure::stopped() {
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

/// The same point again under perf: its profile, with the throughput it reached while
/// sampled (the record keeps the unsampled run's numbers).
fn sampled_rerun(
    ctx: &mut Ctx,
    p: &Point,
) -> Result<Option<Box<crate::profile::ProfileField>>, Failure> {
    ctx.sampling = true;
    let outcome = run_point(ctx, p);
    ctx.sampling = false;
    Ok(match outcome? {
        Outcome::Record(r) => r.profile.map(|mut f| {
            if let crate::profile::ProfileField::Measured(m) = &mut *f {
                m.throughput_bps = Some(r.throughput_bps);
            }
            f
        }),
        Outcome::Refused(why) => Some(Box::new(crate::profile::ProfileField::Unavailable {
            unavailable: format!("the sampled run was refused: {why}"),
        })),
        Outcome::Interrupted => None,
    })
}

fn run_point(ctx: &mut Ctx, p: &Point) -> Result<Outcome, Failure> {
    let parts: Vec<Part> = match p.what {
        What::Suite(i) => vec![Part {
            suite: i,
            percent: 100.0,
            connections: p.concurrency,
        }],
        What::Mix => {
            let (m, idx) = ctx.mix.as_ref().expect("mix points exist only with --mix");
            let pcts: Vec<f64> = m.parts.iter().map(|(_, pct)| *pct).collect();
            let Some(conns) = suites::split_connections(p.concurrency, &pcts) else {
                return Ok(Outcome::Refused(
                    "a mix needs at least 2 connections".into(),
                ));
            };
            idx.iter()
                .zip(pcts)
                .zip(conns)
                .map(|((&suite, percent), connections)| Part {
                    suite,
                    percent,
                    connections,
                })
                .collect()
        }
    };
    let running = start_server(ctx)?;
    let guard = ctx.guard;
    let gen_cpus = ctx.pinned.then(|| ctx.gen_cpus.clone());
    let used_cpus: Vec<usize> = {
        let mut v = ctx.server_cpus.clone();
        v.extend(ctx.gen_cpus.iter().filter(|c| !ctx.server_cpus.contains(c)));
        v
    };
    // h2load in handshake mode runs a request count: size it with a short run first.
    let mut counts: Vec<Option<u64>> = vec![None; parts.len()];
    if ctx.generator == Generator::H2load && ctx.handshake {
        for (k, part) in parts.iter().enumerate() {
            let n = (2 * part.connections as u64).max(20);
            let job = make_job(ctx, p, part, k, Some(n), gen_cpus.as_deref());
            let t = Instant::now();
            match wait_for(guard, &running, vec![load::start(guard, &job)])? {
                Some(mut r) => match r.remove(0) {
                    Ok(o) => {
                        let rate = o.requests as f64 / t.elapsed().as_secs_f64().max(1e-3);
                        counts[k] =
                            Some(((rate * ctx.duration) as u64).max(part.connections as u64));
                    }
                    Err(e) => {
                        server::stop(guard, &running);
                        return Ok(Outcome::Refused(format!("sizing the h2load run: {e}")));
                    }
                },
                None => return Ok(Outcome::Interrupted),
            }
            // The sizing run's requests are not part of the point.
            let _ = std::fs::File::create(server::log_path(&ctx.dir, part.suite));
        }
    }
    let mut sampled = match (&ctx.sampler, ctx.sampling) {
        (Some(s), true) => {
            let pids = running.workers.iter().map(|&(pid, _)| pid).collect();
            let w = s
                .start(guard, &crate::profile::Target::Pids(pids))
                .and_then(|mut w| w.enable().map(|_| w));
            Some(w)
        }
        _ => None,
    };
    let busy0 = sys::cpus_busy_s(&used_cpus);
    let gen_busy0 = sys::cpus_busy_s(&ctx.gen_cpus);
    let before = running.worker_cpu();
    let t0 = Instant::now();
    let mut started = Vec::new();
    let mut threads_total = 0u32;
    for (k, part) in parts.iter().enumerate() {
        let job = make_job(ctx, p, part, k, counts[k], gen_cpus.as_deref());
        threads_total += job.threads;
        started.push(load::start(guard, &job));
    }
    let Some(results) = wait_for(guard, &running, started)? else {
        return Ok(Outcome::Interrupted);
    };
    let window = t0.elapsed().as_secs_f64();
    // Requests cut off when the generator closed its connections are logged (with the
    // bytes they did send) as nginx notices the close: wait for the logs to settle, so
    // that bytes and CPU cover the same work.
    let logs: Vec<PathBuf> = parts
        .iter()
        .map(|pt| server::log_path(&ctx.dir, pt.suite))
        .collect();
    settle(&logs);
    let profile = sampled.take().map(|w| match w {
        Ok(w) => ctx
            .sampler
            .as_ref()
            .expect("a window has a sampler")
            .finish(w, &point_label(ctx, p)),
        Err(why) => crate::profile::ProfileField::Unavailable { unavailable: why },
    });
    let after = running.worker_cpu();
    let busy1 = sys::cpus_busy_s(&used_cpus);
    let gen_busy1 = sys::cpus_busy_s(&ctx.gen_cpus);
    let workers_seen = running.workers.len();
    server::stop(guard, &running);
    let server_cpu = sum_cpu(&before, &after);

    let mut outcomes = Vec::new();
    for r in results {
        match r {
            Ok(o) => outcomes.push(o),
            Err(e) => return Ok(Outcome::Refused(e)),
        }
    }

    // Every request of the point: what nginx logged, per server block.
    let mut notes = Vec::new();
    let mut logs = Vec::new();
    for (part, o) in parts.iter().zip(&outcomes) {
        let suite = &ctx.suites[part.suite];
        let text =
            std::fs::read_to_string(server::log_path(&ctx.dir, part.suite)).unwrap_or_default();
        let s = server::summarise_log(&text);
        let expected = suite.expected_log();
        if o.requests == 0 {
            return Ok(Outcome::Refused(format!(
                "{}: no request completed in {} s ({} errors)",
                suite.name, ctx.duration, o.errors
            )));
        }
        if let Some((bad, k)) = s.negotiated.iter().find(|(n, _)| *n != expected) {
            return Ok(Outcome::Refused(format!(
                "{}: {k} of {} requests negotiated '{bad}', not '{expected}'",
                suite.name, s.requests
            )));
        }
        if s.unparsed > 0 {
            return Ok(Outcome::Refused(format!(
                "{}: {} lines of nginx's log could not be read",
                suite.name, s.unparsed
            )));
        }
        if s.requests < o.requests {
            return Ok(Outcome::Refused(format!(
                "{}: nginx logged {} requests but {} completed {}: not every request can be checked",
                suite.name,
                s.requests,
                ctx.generator.name(),
                o.requests
            )));
        }
        if p.content == Content::HtmlGzip && s.gzipped < o.requests {
            return Ok(Outcome::Refused(format!(
                "{}: only {} of {} responses were gzip'd",
                suite.name, s.gzipped, s.requests
            )));
        }
        if o.errors > 0 {
            notes.push(format!(
                "{}: {} counted {} errors",
                suite.name,
                ctx.generator.name(),
                o.errors
            ));
        }
        logs.push(s);
    }
    if workers_seen != ctx.workers {
        notes.push(format!(
            "{workers_seen} nginx workers seen, {} configured",
            ctx.workers
        ));
    }

    let sum = |f: &dyn Fn(&load::Outcome) -> u64| outcomes.iter().map(f).sum::<u64>();
    let requests = sum(&|o| o.requests);
    let errors = sum(&|o| o.errors);
    let bytes = sum(&|o| o.bytes);
    let wall = outcomes
        .iter()
        .map(|o| o.duration_s)
        .fold(0.0f64, f64::max)
        .max(1e-9);
    let rps: f64 = outcomes
        .iter()
        .map(|o| o.requests as f64 / o.duration_s.max(1e-9))
        .sum();
    let tput: f64 = outcomes
        .iter()
        .map(|o| o.bytes as f64 / o.duration_s.max(1e-9))
        .sum();
    let client_cpu = outcomes.iter().fold(CpuTime::default(), |a, o| CpuTime {
        user: a.user + o.cpu.user,
        sys: a.sys + o.cpu.sys,
    });
    let server_requests: u64 = logs.iter().map(|l| l.requests).sum();
    let server_bytes: u64 = logs.iter().map(|l| l.bytes_sent).sum();
    let server_cpus_n = ctx.server_cpus.len().max(1) as f64;
    let usable_gen = threads_total.min(ctx.gen_cpus.len().max(1) as u32) as f64;
    let client_pct = client_cpu.total() / (window * usable_gen) * 100.0;
    // Near 100% of its cores, as the issue defines it; and, on a busy machine, whether
    // it used nearly all that other processes left on its CPUs.
    let others_on_gen = match (gen_busy0, gen_busy1) {
        (Some(a), Some(b)) => (b - a - client_cpu.total()).max(0.0),
        _ => 0.0,
    };
    let starved = ctx.pinned
        && client_pct < GENERATOR_BOUND_PCT
        && others_on_gen > 0.1 * window * usable_gen
        && client_cpu.total()
            >= GENERATOR_BOUND_PCT / 100.0 * (window * usable_gen - others_on_gen);
    let generator_bound = if ctx.pinned {
        client_pct >= GENERATOR_BOUND_PCT
    } else {
        // Sharing the CPUs: bound when the generator took nearly all the server left.
        client_cpu.total() >= 0.9 * (window * server_cpus_n - server_cpu.total())
    };
    if starved {
        notes.push(format!(
            "{} used nearly all the CPU that other processes left on its CPUs ({:.0}%)",
            ctx.generator.name(),
            client_pct
        ));
    }
    if generator_bound {
        notes.push(format!(
            "generator-bound: {} used {:.0}% of its CPU{}",
            ctx.generator.name(),
            client_pct,
            if server_cpu.total() / (window * server_cpus_n) * 100.0 >= GENERATOR_BOUND_PCT {
                " (the server was saturated too)"
            } else {
                ", so the server was not the limit"
            }
        ));
    }
    if !ctx.pinned {
        notes.push("server and generator shared one CPU".into());
    }
    let others_cpu_pct = match (busy0, busy1) {
        (Some(a), Some(b)) => ((b - a - server_cpu.total() - client_cpu.total()).max(0.0)
            / (window * used_cpus.len().max(1) as f64)
            * 100.0)
            .min(100.0),
        _ => 0.0,
    };
    let disturbed = others_cpu_pct >= DISTURBED_PCT;
    if disturbed {
        notes.push(format!(
            "disturbed: other processes used {others_cpu_pct:.0}% of the server and generator CPUs"
        ));
    }
    let names: Vec<String> = parts
        .iter()
        .map(|pt| ctx.suites[pt.suite].name.clone())
        .collect();
    let negotiated: Vec<String> = logs
        .iter()
        .map(|l| {
            l.negotiated
                .first()
                .map(|(n, _)| n.clone())
                .unwrap_or_default()
        })
        .collect();
    let protocols: Vec<&str> = parts
        .iter()
        .map(|pt| ctx.suites[pt.suite].proto.name())
        .collect();
    let mix = matches!(p.what, What::Mix).then(|| {
        parts
            .iter()
            .zip(&outcomes)
            .zip(&logs)
            .map(|((pt, o), l)| MixPart {
                suite: ctx.suites[pt.suite].name.clone(),
                negotiated: l
                    .negotiated
                    .first()
                    .map(|(n, _)| n.clone())
                    .unwrap_or_default(),
                percent: pt.percent,
                connections: pt.connections,
                requests: o.requests,
                requests_per_s: o.requests as f64 / o.duration_s.max(1e-9),
                bytes: o.bytes,
                errors: o.errors,
                latency_ms: o.latency.clone(),
                server_requests: l.requests,
                port: ctx.ports[pt.suite],
            })
            .collect()
    });
    let suite = if mix.is_some() {
        "mix".to_string()
    } else {
        names[0].clone()
    };
    Ok(Outcome::Record(Box::new(TlsRecord {
        kind: "record".into(),
        schema: crate::record::SCHEMA,
        run_id: ctx.run_id.clone(),
        workload: "tls".into(),
        implementation: "nginx".into(),
        impl_version: ctx.impl_version.clone(),
        variant: None,
        label: suite.clone(),
        throughput_bps: tput,
        throughput_bps_ci: None,
        samples_bps: vec![tput],
        wall_s: wall,
        cpu_user_s: Some(server_cpu.user),
        cpu_sys_s: Some(server_cpu.sys),
        cpu_s_per_gb: (server_bytes > 0).then(|| server_cpu.total() / (server_bytes as f64 / 1e9)),
        others_cpu_pct: others_cpu_pct.clamp(0.0, 100.0),
        disturbed,
        profile: profile.map(Box::new),
        notes,
        data: TlsData {
            suite,
            protocol: protocols.join("+"),
            negotiated: negotiated.join(" + "),
            mix,
            generator: ctx.generator.name().into(),
            handshake: ctx.handshake,
            cert: ctx.cert.label().into(),
            content: p.content.label().into(),
            file_size: p.content.size(),
            concurrency: p.concurrency,
            duration_s: ctx.duration,
            requests,
            errors,
            bytes,
            requests_per_s: rps,
            latency_ms: if outcomes.len() == 1 {
                outcomes[0].latency.clone()
            } else {
                None
            },
            server_requests,
            server_bytes,
            server_body_bytes: logs.iter().map(|l| l.body_bytes).sum(),
            server_connections: logs.iter().map(|l| l.connections).sum(),
            negotiated_requests: server_requests,
            server_cpu_s: server_cpu.total(),
            server_cpu_pct: server_cpu.total() / (window * server_cpus_n) * 100.0,
            server_workers: workers_seen as u32,
            server_cpus: ctx.server_cpus.clone(),
            client_cpu_s: client_cpu.total(),
            client_cpu_user_s: client_cpu.user,
            client_cpu_sys_s: client_cpu.sys,
            client_cpu_pct: client_pct,
            client_threads: threads_total,
            client_cpus: ctx.gen_cpus.clone(),
            generator_bound,
            cpu_ms_per_request: if server_requests > 0 {
                server_cpu.total() * 1e3 / server_requests as f64
            } else {
                0.0
            },
            ports: parts.iter().map(|pt| ctx.ports[pt.suite]).collect(),
        },
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_checked() {
        assert_eq!(parse_concurrency("100,1,10,10").unwrap(), vec![1, 10, 100]);
        assert!(parse_concurrency("0").is_err());
        assert!(parse_concurrency("10001").is_err());
        assert!(parse_concurrency("10000").is_ok());
        assert!(parse_concurrency("a").is_err());
        assert_eq!(
            parse_files("10m,4k,100k").unwrap(),
            vec![4096, 102400, 10 << 20]
        );
        assert!(parse_files("0").is_err());
        assert!(parse_files("0k").is_err());
        assert_eq!(parse_files("1g").unwrap(), [1 << 30]);
        assert!(parse_files("1025m").is_err());
        assert!(parse_files("2g").is_err());
        assert!(check_duration(0.5, Generator::Wrk).is_err());
        assert!(check_duration(1.5, Generator::Wrk).is_err());
        assert!(check_duration(1.5, Generator::H2load).is_ok());
        assert!(check_duration(f64::NAN, Generator::H2load).is_err());
        assert_eq!(version_tuple("nginx/1.22.1"), (1, 22, 1));
        assert_eq!(version_tuple("1.19.10"), (1, 19, 10));
    }
}
