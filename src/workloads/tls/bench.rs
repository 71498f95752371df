//! The test bench of a tls run: the inputs checked, then everything fixed for the run
//! (temp dir, certificate, files, nginx configuration, ports, CPUs), built once in
//! `Bench::build` before the first point.

use super::groups::Group;
use super::load::{self, Generator};
use super::server::{self, Content};
use super::servers::{Nginx, Server};
use super::suites::{self, Catalogue, CertKind, Mix, Suite};
use super::tls_lib::TlsLib;
use super::args::TlsArgs;
use crate::failure::Failure;
use crate::impls::details::Details;
use crate::impls::openssl::build::Build;
use crate::record::tls::{TlsSettings, TlsSuiteSettings};
use crate::record::{Library, Unavailable, WorkloadSettings};
use crate::sys;
use crate::sys::guard::Guard;

use std::path::{Path, PathBuf};
use std::time::Duration;

fn input(m: impl std::fmt::Display) -> Failure {
    Failure::input(m)
}

/// Everything about the input that can be checked before anything starts.
pub struct Inputs {
    pub duration: f64,
    pub concurrency: Vec<u32>,
    pub sizes: Vec<u64>,
    /// --server: the servers asked, in order; nginx's program when it is one of them.
    pub servers: Vec<&'static str>,
    pub nginx: Option<PathBuf>,
    /// Debian's haproxy (a library's own HAProxy is the library's: `TlsLib::haproxy`).
    pub haproxy: Option<PathBuf>,
    /// --threads: nginx workers or HAProxy threads (default: one per server CPU).
    pub threads: Option<Vec<usize>>,
    pub gen_program: PathBuf,
    pub openssl: PathBuf,
    /// --profile: perf, checked before anything starts.
    pub sampler: Option<crate::profile::Sampler>,
    /// --tls-lib (or --openssl DIR): the libraries each server runs on, in turn.
    pub libs: Vec<TlsLib>,
    /// --groups: the key-exchange groups, one point each.
    pub groups: Option<Vec<&'static Group>>,
}

impl Inputs {
    pub fn check(args: &TlsArgs) -> Result<Inputs, Failure> {
        let duration = super::args::check_duration(
            args.common.time.unwrap_or(super::args::DEFAULT_DURATION),
            args.generator,
        )
        .map_err(input)?;
        let concurrency = args.concurrency.0.clone();
        let sizes = args.files.0.clone();
        let servers = args.server.0.clone();
        let threads = args.threads.as_ref().map(|t| t.0.clone());
        let haproxy = match servers.contains(&"haproxy") {
            true => Some(haproxy_inputs(args)?),
            false => None,
        };
        let nginx = servers.contains(&"nginx").then(|| sys::program::find_program("nginx", args.nginx.as_deref()).ok_or_else(|| {
            let missing = |m| match args.nginx {
                Some(_) => input(m),
                None => Failure::Unavailable(m),
            };
            missing(match &args.nginx {
                Some(p) => format!(
                    "--nginx {}: not an executable file: install the Debian package nginx (apt-get install nginx) or give its path",
                    crate::units::shown_path(p)
                ),
                None => "nginx not found on PATH or in /usr/sbin: install the Debian package nginx (apt-get install nginx) or give --nginx PATH".into(),
            })
        })).transpose()?;
        // With the load from the controller (`tls --dut`), the generator is found there.
        let gen_program = match &args.remote_load {
            Some(_) => PathBuf::from(args.generator.name()),
            None => sys::program::find_program(args.generator.name(), None).ok_or_else(|| {
                Failure::Unavailable(format!(
                    "{} not found on PATH: install the Debian package {} (apt-get install {})",
                    args.generator.name(),
                    args.generator.package(),
                    args.generator.package()
                ))
            })?,
        };
        let openssl = sys::program::find_program("openssl", None).ok_or_else(|| {
            Failure::Unavailable("openssl not found on PATH (needed for the certificate and the suite list): install the Debian package openssl".into())
        })?;
        let libs = libraries(args, &servers)?;
        let groups = args.groups.as_ref().map(|l| l.0.clone());
        let sampler = (args.profile || args.profile_dir.is_some())
            .then(|| crate::profile::Sampler::new(args.profile_dir.clone(), false))
            .transpose()
            .map_err(input)?;
        Ok(Inputs {
            duration,
            concurrency,
            sizes,
            servers,
            nginx,
            haproxy,
            threads,
            gen_program,
            openssl,
            sampler,
            libs,
            groups,
        })
    }
}

/// HAProxy, found, and the flags it cannot take refused (exit 2, one line).
fn haproxy_inputs(args: &TlsArgs) -> Result<PathBuf, Failure> {
    let only_nginx = [
        (args.ktls, "--ktls"),
        (args.gzip, "--gzip"),
        // HAProxy 2.6 cannot log the negotiated group (no ssl_fc_curve fetch).
        (args.groups.is_some(), "--groups"),
    ];
    if let Some((_, flag)) = only_nginx.iter().find(|(on, _)| *on) {
        return Err(input(format!(
            "--server haproxy: {flag} is measured on nginx only here; drop it or use --server nginx"
        )));
    }
    super::haproxy::find().ok_or_else(|| {
        Failure::Unavailable("haproxy not found on PATH or in /usr/sbin: install the Debian package haproxy (apt-get install haproxy)".into())
    })
}

/// --tls-lib's libraries (or --openssl DIR's build), each once, checked against the
/// servers and the flags that take one library only.
fn libraries(args: &TlsArgs, servers: &[&str]) -> Result<Vec<TlsLib>, Failure> {
    if let Some(why) = servers
        .iter()
        .find_map(|s| args.tls_lib.iter().find_map(|l| l.refusal(s)))
    {
        return Err(input(why));
    }
    let libs = match &args.openssl {
        Some(dir) => vec![TlsLib::build(Build::open(dir, true).map_err(input)?)],
        None => {
            let mut libs: Vec<TlsLib> = Vec::new();
            for n in &args.tls_lib {
                if !libs.iter().any(|l| l.name == n.name()) {
                    libs.push(TlsLib::find(*n)?);
                }
            }
            libs
        }
    };
    if args.groups.is_some() && libs.len() > 1 {
        return Err(input("--groups takes one --tls-lib at a time (the groups each can do differ)"));
    }
    Ok(libs)
}

/// Runs a short command owned by `guard`: its exit code, stdout and stderr.
fn output(
    guard: &Guard,
    dir: &Path,
    argv: &[&str],
) -> Result<(Option<i32>, String, String), Failure> {
    output_with(guard, dir, argv, &[])
}

/// `output` with environment variables (an OpenSSL build's library path for nginx).
fn output_with(
    guard: &Guard,
    dir: &Path,
    argv: &[&str],
    env: &[(&str, &Path)],
) -> Result<(Option<i32>, String, String), Failure> {
    sys::spawn::run_bounded(guard, dir, argv, env, Duration::from_secs(20))
        .map_err(Failure::runtime)
}

fn catalogue(
    guard: &Guard,
    dir: &Path,
    openssl: &Path,
    cert: CertKind,
) -> Result<Catalogue, Failure> {
    let openssl = openssl.to_string_lossy();
    let (_, ciphers, _) = output(
        guard,
        dir,
        &[&openssl, "ciphers", "-v", "ALL:eNULL:@SECLEVEL=0"],
    )?;
    Ok(Catalogue::new(suites::parse_ciphers(&ciphers), cert))
}

/// `--list`: the suites this OpenSSL can serve with the certificate.
pub fn list(inputs: &Inputs, cert: CertKind) -> Result<String, Failure> {
    let guard = Guard::new();
    let dir = guard.temp_dir("tls").map_err(Failure::runtime)?;
    let cat = catalogue(&guard, &dir, &inputs.openssl, cert)?;
    let system = TlsLib::system()?;
    let nginx = sys::program::find_program("nginx", inputs.nginx.as_deref())
        .map(|p| nginx_build(&guard, &dir, &p, &system))
        .transpose()?;
    let servers = [
        match nginx {
            Some(nb) => format!("nginx: {} ({})", nb.version, nb.ssl),
            None => "nginx: not found on PATH or in /usr/sbin (Debian package nginx)".into(),
        },
        match super::haproxy::find() {
            Some(p) => {
                let h = super::haproxy::probe(&p, system);
                format!("haproxy: {} ({})", h.version, h.ssl)
            }
            None => "haproxy: not found on PATH or in /usr/sbin (Debian package haproxy)".into(),
        },
    ];
    Ok(format!(
        "Suites this OpenSSL can serve with a{} certificate:\n  {}\nServers (--server):\n  {}\nLibraries (--tls-lib):\n  {}\n",
        if cert == CertKind::Rsa {
            "n RSA"
        } else {
            "n ECDSA"
        },
        cat.valid_names().join("\n  "),
        servers.join("\n  "),
        super::tls_lib::list().join("\n  ")
    ))
}

/// Everything fixed for the run. The guard owns every process and file of it.
pub struct Bench {
    pub guard: Guard,
    pub dir: PathBuf,
    /// --server: one at a time, in this order.
    pub servers: Vec<Server>,
    /// --threads: each server at each count; default one per server CPU (`workers`).
    pub threads: Vec<usize>,
    pub generator: Generator,
    pub gen_program: PathBuf,
    /// The openssl command (the certificate, and the kTLS check's s_client).
    pub openssl: PathBuf,
    pub suites: Vec<Suite>,
    pub mix: Option<(Mix, Vec<usize>)>,
    pub ports: Vec<u16>,
    /// The address nginx listens on and the generator connects to: 127.0.0.1, or the
    /// DUT's (`tls --dut`).
    pub host: String,
    /// `tls --dut`: this is the DUT's agent, and the generator runs on the controller
    /// (on `gen_cpus`, the controller's CPUs).
    pub remote: bool,
    pub server_cpus: Vec<usize>,
    pub gen_cpus: Vec<usize>,
    pub pinned: bool,
    pub workers: usize,
    pub worker_connections: u64,
    pub duration: f64,
    /// --rounds: passes over every point.
    pub rounds: u32,
    pub handshake: bool,
    pub gzip: bool,
    pub cert: CertKind,
    pub contents: Vec<Content>,
    /// "nginx/1.22.1 (built with OpenSSL 3.0.19 ...)": the servers' versions, joined.
    pub impl_version: String,
    /// The versions of nginx, openssl and the generators (the environment's libraries).
    pub libraries: Vec<Library>,
    pub unavailable: Vec<Unavailable>,
    /// Facts about the whole run (defaults skipped, CPUs shared, limits).
    pub notes: Vec<String>,
    /// --profile: every point is run again with perf on the nginx workers.
    pub sampler: Option<crate::profile::Sampler>,
    /// --groups that nginx's OpenSSL (or the suite) cannot do: (suite, group, why).
    pub group_gaps: Vec<(String, String, String)>,
}

/// nginx's version line and its "built with" line, from `nginx -V`.
struct NginxBuild {
    version: String,
    ssl: String,
    has_ssl_module: bool,
}

fn nginx_build(
    guard: &Guard,
    dir: &Path,
    nginx: &Path,
    lib: &TlsLib,
) -> Result<NginxBuild, Failure> {
    let env = lib.env();
    let (_, _, v) = output_with(guard, dir, &[&nginx.to_string_lossy(), "-V"], &env)?;
    let line = |prefix: &str| {
        v.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or("")
            .trim()
            .to_string()
    };
    Ok(NginxBuild {
        version: v
            .lines()
            .find_map(|l| l.strip_prefix("nginx version: "))
            .unwrap_or("unknown")
            .trim()
            .to_string(),
        ssl: line("built with"),
        has_ssl_module: v.contains("http_ssl_module"),
    })
}

/// nginx, checked against the suites asked.
fn check_nginx(
    nb: NginxBuild,
    path: &Path,
    suite_list: &[Suite],
    lib: TlsLib,
) -> Result<Nginx, Failure> {
    let numeric = server::version_tuple(&nb.version);
    if suite_list.iter().any(|s| s.cipher.is_some()) && !nb.has_ssl_module {
        return Err(input(format!(
            "{} ({}) lacks the SSL module: install the Debian package nginx",
            crate::units::shown_path(path),
            nb.version
        )));
    }
    if suite_list.iter().any(|s| s.proto == suites::Proto::Tls13) && numeric < (1, 19, 4) {
        return Err(input(format!(
            "{} cannot restrict TLS 1.3 suites (ssl_conf_command needs nginx 1.19.4): choose TLS 1.2 suites or a newer nginx",
            nb.version
        )));
    }
    // SSL_sendfile, which hands the file to the kernel's TLS, came in nginx 1.21.4.
    if suite_list.iter().any(|s| s.ktls) && numeric < (1, 21, 4) {
        return Err(input(format!(
            "{} cannot use kernel TLS (nginx 1.21.4 added it): drop +ktls/--ktls or give a newer --nginx",
            nb.version
        )));
    }
    Ok(Nginx {
        path: path.to_path_buf(),
        has_e_flag: numeric >= (1, 19, 5),
        version: nb.version,
        ssl: nb.ssl,
        lib,
    })
}

/// The suites, the mix (with its suites' indices) and notes on what was chosen.
type Selection = (Vec<Suite>, Option<(Mix, Vec<usize>)>, Vec<String>);

/// The suites asked for, and the mix's suites added to them where missing.
fn select_suites(args: &TlsArgs, cat: &Catalogue) -> Result<Selection, Failure> {
    // --groups alone: one TLS 1.3 suite, where every group can be negotiated.
    let default = (args.groups.is_some() && args.suites.is_none()).then(|| vec!["aes128gcm".into()]);
    let asked = args.suites.as_ref().map(|l| &l.0).or(default.as_ref());
    let (mut list, mut notes) = cat.select(asked.map(Vec::as_slice)).map_err(input)?;
    if default.is_some() {
        notes.push("--groups without --suites: TLS_AES_128_GCM_SHA256 per group".into());
    }
    if args.ktls {
        list = suites::add_ktls_twins(list, &mut notes);
    }
    let mix = match &args.mix {
        Some(spec) => {
            let m = spec.resolve(cat).map_err(input)?;
            let mut idx = Vec::new();
            for (s, _) in &m.parts {
                let i = match list.iter().position(|x| x.name == s.name) {
                    Some(i) => i,
                    None => {
                        notes.push(format!(
                            "{} added to the suites: --mix is compared with each of its suites alone",
                            s.name
                        ));
                        list.push(s.clone());
                        list.len() - 1
                    }
                };
                idx.push(i);
            }
            Some((m, idx))
        }
        None => None,
    };
    if list.is_empty() {
        return Err(input("no suite to measure"));
    }
    Ok((list, mix, notes))
}

impl Bench {
    /// Checks what only the tools can tell, then builds the server's world: certificate,
    /// files, ports, nginx configuration (checked with `nginx -t`), client configurations.
    pub fn build(args: &TlsArgs, inputs: &mut Inputs) -> Result<Bench, Failure> {
        let guard = Guard::new();
        let dir = guard.temp_dir("tls").map_err(Failure::runtime)?;
        let cat = catalogue(&guard, &dir, &inputs.openssl, args.cert)?;
        let (suite_list, mix, mut notes) = select_suites(args, &cat)?;
        let (suite_list, group_gaps) = match &inputs.groups {
            Some(g) => per_group(suite_list, g, inputs.libs[0].as_build())?,
            None => (suite_list, Vec::new()),
        };
        // Each server on each library, in turn.
        let mut servers = Vec::new();
        for (name, lib) in inputs
            .servers
            .iter()
            .flat_map(|n| inputs.libs.iter().map(move |l| (*n, l.clone())))
        {
            match (name, inputs.nginx.as_ref(), &inputs.haproxy) {
                ("nginx", Some(path), _) => {
                    let nb = nginx_build(&guard, &dir, path, &lib)?;
                    servers.push(Server::Nginx(check_nginx(nb, path, &suite_list, lib)?))
                }
                ("haproxy", _, Some(debian)) => {
                    let path = lib.haproxy().unwrap_or(debian.as_path()).to_path_buf();
                    servers.push(Server::Haproxy(super::haproxy::probe(&path, lib)))
                }
                _ => {}
            }
        }
        let allowed = sys::cpu::allowed_cpus();

        let remote = args
            .remote_load
            .as_deref()
            .map(super::remote::parse_cpus)
            .transpose()
            .map_err(input)?;
        let host = match &remote {
            Some(_) => crate::dut::dut_address(args.dut_address.given.as_deref())?,
            None => "127.0.0.1".to_string(),
        };
        // On a DUT every CPU is the server's: the generator has the controller's.
        let (server_cpus, gen_cpus, pinned) = match &remote {
            Some(controller) => (allowed.clone(), controller.clone(), true),
            None => sys::cpu::split_cpus(&allowed),
        };
        if remote.is_some() {
            notes.push(format!(
                "load from the controller: nginx on this DUT at {host} (CPUs {}), {} on the controller (its CPUs {})",
                sys::cpu::cpu_list(&server_cpus),
                args.generator.name(),
                sys::cpu::cpu_list(&gen_cpus)
            ));
        }
        if !pinned {
            notes.push("one CPU: server and generator share it (no pinning)".into());
        }
        let cmax = *inputs.concurrency.iter().max().unwrap_or(&1) as u64;
        let nofile = sys::raise_nofile(2 * cmax + 256);
        if nofile < 2 * cmax + 64 {
            notes.push(format!(
                "open-file limit {nofile} is low for {cmax} connections: raise `ulimit -n` if connections fail"
            ));
        }
        let (libraries, unavailable) = tool_versions(&guard, &dir, inputs, &servers)?;
        let mut contents: Vec<Content> = inputs.sizes.iter().map(|&n| Content::Random(n)).collect();
        if args.gzip {
            contents.push(Content::Html);
            contents.push(Content::HtmlGzip);
        }
        let ports = sys::net::free_ports(suite_list.len()).map_err(Failure::runtime)?;
        let bench = Bench {
            dir,
            threads: inputs
                .threads
                .clone()
                .unwrap_or(vec![server_cpus.len().max(1)]),
            impl_version: servers
                .iter()
                .map(Server::impl_version)
                .collect::<Vec<_>>()
                .join(" and "),
            servers,
            generator: args.generator,
            gen_program: inputs.gen_program.clone(),
            openssl: inputs.openssl.clone(),
            suites: suite_list,
            mix,
            ports,
            host,
            remote: remote.is_some(),
            workers: server_cpus.len().max(1),
            server_cpus,
            gen_cpus,
            pinned,
            worker_connections: cmax + 64,
            duration: inputs.duration,
            rounds: args.rounds,
            handshake: args.handshake,
            gzip: args.gzip,
            cert: args.cert,
            contents,
            libraries,
            unavailable,
            notes,
            sampler: inputs.sampler.take(),
            group_gaps,
            guard,
        };
        bench.write_files(&inputs.openssl)?;
        bench.check_config()?;
        Ok(bench)
    }

    fn write_files(&self, openssl: &Path) -> Result<(), Failure> {
        let dir = &self.dir;
        server::make_cert(&self.guard, dir, openssl, self.cert).map_err(Failure::runtime)?;
        server::write_files(&dir.join("www"), &self.contents).map_err(Failure::runtime)?;
        let io = |e: std::io::Error| Failure::Runtime(e.to_string());
        for d in ["tmp", "logs"] {
            std::fs::create_dir_all(dir.join(d)).map_err(io)?;
        }
        std::fs::write(dir.join("report.lua"), load::WRK_SCRIPT).map_err(io)?;
        for (i, s) in self.suites.iter().enumerate() {
            if let Some(c) = server::client_openssl_conf(s) {
                std::fs::write(dir.join(format!("client-{i}.cnf")), c).map_err(io)?;
            }
        }
        Ok(())
    }

    /// Writes server `k`'s configuration for `threads` workers or threads.
    pub fn write_config(&self, k: usize, threads: usize, handshake: bool) -> anyhow::Result<()> {
        let cpus = self.pinned.then_some(&self.server_cpus[..]);
        let cycled: Option<Vec<usize>> =
            cpus.map(|c| c.iter().copied().cycle().take(threads).collect());
        let config = server::Config {
            dir: &self.dir,
            suites: &self.suites,
            ports: &self.ports,
            workers: threads,
            worker_cpus: cycled.as_deref(),
            worker_connections: self.worker_connections,
            host: &self.host,
            handshake,
            gzip: self.gzip,
            as_root: sys::is_root(),
        };
        self.servers[k].write_config(&config, &self.contents)
    }

    fn check_config(&self) -> Result<(), Failure> {
        let Some(k) = self.servers.iter().position(|s| s.name() == "nginx") else {
            return Ok(());
        };
        self.write_config(k, self.workers, self.handshake)
            .map_err(Failure::runtime)?;
        let Server::Nginx(nginx) = &self.servers[k] else {
            return Ok(());
        };
        let (code, _, err) = output_with(
            &self.guard,
            &self.dir,
            &[
                &nginx.path.to_string_lossy(),
                "-t",
                "-q",
                "-p",
                &self.dir.to_string_lossy(),
                "-c",
                &self.dir.join("nginx.conf").to_string_lossy(),
            ],
            &nginx.lib.env(),
        )?;
        if code != Some(0) {
            return Err(Failure::Runtime(format!(
                "nginx rejects the generated configuration: {}",
                err.lines()
                    .find(|l| l.contains("emerg"))
                    .unwrap_or(err.trim())
            )));
        }
        Ok(())
    }

    /// Starts server `k` with `threads` for one point; picks new ports when another
    /// program took ours. The inner error is the server's own reason: the point's.
    pub fn start_server(
        &mut self,
        k: usize,
        threads: usize,
        handshake: bool,
    ) -> Result<Result<server::Running, String>, Failure> {
        let mut last = String::new();
        for _ in 0..3 {
            self.write_config(k, threads, handshake)
                .map_err(Failure::runtime)?;
            let cpus = self.pinned.then(|| self.server_cpus.clone());
            match self.servers[k].start(
                &self.guard,
                &self.dir,
                (&self.host, &self.ports),
                (threads, cpus.as_deref()),
            ) {
                Ok(r) => return Ok(Ok(r)),
                Err(e) if e.to_string().contains("Address already in use") => {
                    eprintln!("cryptobench tls: a port was taken ({e}); choosing new ports");
                    self.ports =
                        sys::net::free_ports(self.suites.len()).map_err(Failure::runtime)?;
                    last = e.to_string();
                }
                Err(e) => return Ok(Err(e.to_string())),
            }
        }
        Ok(Err(last))
    }

    /// What records name as the implementation: the server ("nginx", "haproxy"), or
    /// "nginx [openssl 3.5.5]", "haproxy [aws-lc 5.12.0]" on another library than the
    /// system's (so that `compare --a/--b` can pair two builds).
    pub fn implementation(&self, k: usize) -> String {
        let name = self.servers[k].name();
        match self.servers[k].lib().label() {
            Some(l) => crate::impls::openssl::build::on_build(name, &l),
            None => name.into(),
        }
    }

    /// The OpenSSL build every server of the run runs on, if there is one: what the
    /// ciphers and handshake operations alone are timed on.
    pub fn one_build(&self) -> Option<&Build> {
        let first = self.servers.first()?.lib();
        let same = self.servers.iter().all(|s| s.lib().name == first.name);
        first.as_build().filter(|_| same)
    }

    /// The run's settings, as recorded in the environment.
    pub fn settings(&self, concurrency: &[u32], sizes: &[u64]) -> WorkloadSettings {
        WorkloadSettings::Tls(Box::new(TlsSettings {
            suites: self
                .suites
                .iter()
                .zip(&self.ports)
                .map(|(s, p)| TlsSuiteSettings {
                    suite: s.name.clone(),
                    cipher: s.cipher.clone(),
                    protocol: s.proto.name().into(),
                    null: s.null,
                    record_protection: s.enc.clone(),
                    port: *p,
                    ktls: s.ktls,
                })
                .collect(),
            files: sizes.to_vec(),
            gzip_page: self.gzip,
            concurrency: concurrency.to_vec(),
            duration_s: self.duration,
            generator: self.generator.name().into(),
            handshake: self.handshake,
            mix: self.mix.as_ref().map(|(m, _)| m.spec.clone()),
            cert: self.cert.label().into(),
            server_cpus: self.server_cpus.clone(),
            generator_cpus: self.gen_cpus.clone(),
            pinned: self.pinned,
            nginx_workers: self.workers,
            worker_connections: self.worker_connections,
            keepalive_requests: (!self.handshake).then_some(1_000_000),
            ssl_session_cache: "off".into(),
            ssl_session_tickets: "off".into(),
            ktls: self.suites.iter().any(|s| s.ktls),
            sendfile: "on (used by plain HTTP, and by TLS only through kernel TLS: SSL_sendfile)"
                .into(),
            http_version: "HTTP/1.1".into(),
            nginx_restarted_per_point: true,
            temp_dir: self.dir.clone(),
            cipher_alone_record_bytes: super::primitive::RECORD,
            notes: self.notes.clone(),
        }))
    }
}

/// `--groups`: every TLS suite once per group nginx's OpenSSL can do (plain HTTP once), and
/// the pairs it cannot, with the reason. Nothing left to run is bad input (exit 2).
type PerGroup = (Vec<Suite>, Vec<(String, String, String)>);
fn per_group(
    list: Vec<Suite>,
    groups: &[&Group],
    build: Option<&Build>,
) -> Result<PerGroup, Failure> {
    let loaded = match build {
        Some(b) => crate::impls::openssl::OpenSsl::load_path(&b.libcrypto),
        None => crate::impls::openssl::OpenSsl::load_system(),
    }
    .map_err(Failure::unavailable)?;
    let version = format!(
        "OpenSSL {}",
        crate::units::short_version(&loaded.version_info(0).unwrap_or_default())
    );
    let (mut out, mut gaps) = (Vec::new(), Vec::new());
    for s in list {
        if s.cipher.is_none() {
            out.push(s);
            continue;
        }
        for g in groups {
            let why = g.gap(loaded.version_num(), &version).or_else(|| {
                (g.tls13_only && s.proto != suites::Proto::Tls13).then(|| {
                    format!(
                        "{} is TLS 1.3 only: {} is a TLS 1.2 suite",
                        g.openssl, s.name
                    )
                })
            });
            match why {
                Some(why) => gaps.push((s.name.clone(), g.name.to_string(), why)),
                None => out.push(s.with_group(g.name)),
            }
        }
    }
    if !out.iter().any(|s| s.group.is_some()) {
        let (suite, group, why) = gaps.first().cloned().unwrap_or_default();
        return Err(input(format!(
            "--groups: nothing can run: {suite} {group}: not available: {why}"
        )));
    }
    Ok((out, gaps))
}

/// nginx's, the openssl command's and each generator's version; generators missing.
fn tool_versions(
    guard: &Guard,
    dir: &Path,
    inputs: &Inputs,
    servers: &[Server],
) -> Result<(Vec<Library>, Vec<Unavailable>), Failure> {
    let tool = |name: &str, version: String, details: Details| Library {
        implementation: name.into(),
        version,
        details,
        ..Library::default()
    };
    let mut libraries: Vec<Library> = servers
        .iter()
        .map(|s| match s {
            Server::Nginx(n) => tool(
                "nginx",
                n.version.clone(),
                Details {
                    openssl: Some(n.ssl.clone()),
                    ..Details::at(n.path.display().to_string())
                },
            ),
            Server::Haproxy(h) => tool(
                "haproxy",
                h.version.clone(),
                Details {
                    openssl: Some(h.ssl.clone()),
                    ..Details::at(h.path.display().to_string())
                },
            ),
        })
        .collect();
    let (_, ov, _) = output(guard, dir, &[&inputs.openssl.to_string_lossy(), "version"])?;
    libraries.push(tool(
        "openssl",
        ov.trim().into(),
        Details {
            note: Some("the openssl command; nginx's own build is in nginx.details.openssl".into()),
            ..Details::at(inputs.openssl.display().to_string())
        },
    ));
    let mut unavailable = Vec::new();
    for g in [Generator::Wrk, Generator::H2load] {
        match sys::program::find_program(g.name(), None) {
            Some(p) => libraries.push(tool(
                g.name(),
                load::version(g, &p),
                Details::at(p.display().to_string()),
            )),
            None => unavailable.push(Unavailable {
                name: g.name().into(),
                reason: format!("not installed (Debian package {})", g.package()),
            }),
        }
    }
    Ok((libraries, unavailable))
}
