//! The device under test on its own host: `--dut ssh://...`. The controller (where
//! cryptobench was started) reaches each DUT over the system's OpenSSH (`ssh`), puts this
//! version of cryptobench there (`deploy`) and runs the command on it; the remote
//! cryptobench is its own agent (`agent`), streaming the run's JSON Lines back, which the
//! controller writes into its own `--output` and store as each point arrives (`relay`).

pub mod agent;
pub mod deploy;
pub mod relay;
pub mod ssh;
pub mod url;

use crate::failure::Failure;
use std::path::{Path, PathBuf};
use url::DutUrl;

/// Where a command runs: on DUTs reached over SSH, when any is named.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct DutArgs {
    /// Run on this device under test over SSH: ssh://[user@]host[:port]; repeatable (a
    /// fleet). Uses your ssh keys, agent, known_hosts and ssh_config.
    #[arg(long, value_name = "URL")]
    pub dut: Vec<String>,
    /// Run on every DUT in FILE: one ssh:// URL a line (# starts a comment).
    #[arg(long, value_name = "FILE")]
    pub dut_file: Option<PathBuf>,
    /// An OpenSSH option for every connection to the DUTs (as ssh -o KEY=VALUE); repeatable.
    #[arg(long, value_name = "KEY=VALUE")]
    pub ssh_option: Vec<String>,
    /// The cryptobench binary to upload to the DUTs [default: this one for a DUT like this
    /// machine, else dist/cryptobench-VERSION-TRIPLE from scripts/release].
    #[arg(long, value_name = "PATH")]
    pub dut_binary: Option<PathBuf>,
    /// DUTs measured at once in a fleet.
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub parallel: u16,
    /// The command line (from the subcommand on) when a caller composed it, as `advise`
    /// does for each step; else the one this process was started with.
    #[arg(skip)]
    pub command: Option<Vec<String>>,
}

/// A controller-only option (`--ssh-option`, `--dut-binary`, `--parallel`) given on the
/// command line of a (sub)command without `--dut` or `--dut-file`: it would be ignored, and
/// `cleanup --ssh-option ...` would clean this machine instead of the DUT.
pub fn option_without_dut(m: &clap::ArgMatches) -> Option<&'static str> {
    let given = |id: &str| {
        m.try_contains_id(id).unwrap_or(false)
            && m.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
    };
    if m.try_contains_id("dut").is_ok() && !given("dut") && !given("dut_file") {
        let alone = [
            ("ssh_option", "--ssh-option"),
            ("dut_binary", "--dut-binary"),
            ("parallel", "--parallel"),
        ];
        if let Some((_, flag)) = alone.into_iter().find(|(id, _)| given(id)) {
            return Some(flag);
        }
    }
    m.subcommand().and_then(|(_, sub)| option_without_dut(sub))
}

impl DutArgs {
    /// These options as a command line gives them, for a step a caller composes.
    #[cfg(feature = "advise")]
    pub fn flags(&self) -> Vec<String> {
        let mut out = Vec::new();
        for u in &self.dut {
            out.extend(["--dut".to_string(), u.clone()]);
        }
        if let Some(f) = &self.dut_file {
            out.extend(["--dut-file".to_string(), f.display().to_string()]);
        }
        for o in &self.ssh_option {
            out.extend(["--ssh-option".to_string(), o.clone()]);
        }
        if let Some(b) = &self.dut_binary {
            out.extend(["--dut-binary".to_string(), b.display().to_string()]);
        }
        out
    }

    /// True when the command runs on DUTs rather than here.
    pub fn named(&self) -> bool {
        !self.dut.is_empty() || self.dut_file.is_some()
    }

    /// Every DUT named, checked, in order, each once; and the ssh options, checked.
    pub fn targets(&self) -> Result<Vec<DutUrl>, Failure> {
        for o in &self.ssh_option {
            ssh::check_option(o).map_err(Failure::input)?;
        }
        if let Some(p) = &self.dut_binary {
            if !p.is_file() {
                return Err(Failure::Input(format!(
                    "--dut-binary {}: no such file: give the path of a cryptobench binary built for the DUT",
                    crate::units::shown_path(p)
                )));
            }
        }
        let mut urls: Vec<String> = self.dut.clone();
        // Where each URL came from, for the message about a bad one.
        let mut origin: Vec<String> = vec![String::new(); urls.len()];
        if let Some(f) = &self.dut_file {
            let shown = crate::units::shown_path(f);
            let text = crate::sys::read_regular(f, DUT_FILE_MAX_BYTES).map_err(|e| {
                Failure::Input(format!(
                    "--dut-file {shown}: {e}: give a file of ssh:// URLs, one a line"
                ))
            })?;
            let before = urls.len();
            for (n, l) in text.lines().enumerate() {
                let l = l.split('#').next().unwrap_or("").trim();
                if !l.is_empty() {
                    urls.push(l.to_string());
                    origin.push(format!("--dut-file {shown} line {}: ", n + 1));
                }
            }
            if urls.len() == before {
                return Err(Failure::Input(format!(
                    "--dut-file {shown} names no DUT: put one ssh://[user@]host[:port] a line"
                )));
            }
        }
        let mut out: Vec<DutUrl> = Vec::new();
        for (u, from) in urls.iter().zip(&origin) {
            let url = DutUrl::parse(u).map_err(|e| Failure::Input(format!("{from}{e}")))?;
            if !out.contains(&url) {
                out.push(url);
            }
        }
        Ok(out)
    }
}

/// The most a --dut-file may hold: 100,000 DUTs' URLs, with comments.
const DUT_FILE_MAX_BYTES: u64 = 16 << 20;

/// Options that only mean something on the controller, with whether each takes a value:
/// they are not passed to the DUT.
const CONTROLLER_ONLY: &[(&str, bool)] = &[
    ("--dut", true),
    ("--dut-file", true),
    ("--ssh-option", true),
    ("--dut-binary", true),
    ("--parallel", true),
    ("--output", true),
    ("--store", true),
    ("--no-store", false),
];

/// This command's arguments (from the subcommand on) as the DUT gets them: without the
/// controller's own options, and without `--format` when `keep_format` is false (the
/// controller renders).
pub fn remote_argv(dut: &DutArgs, keep_format: bool) -> Result<Vec<String>, Failure> {
    if let Some(c) = &dut.command {
        return Ok(strip_controller_options(c.iter().cloned(), keep_format));
    }
    let args = std::env::args_os()
        .skip(1)
        .enumerate()
        .map(|(i, a)| {
            a.into_string().map_err(|a| {
                Failure::input(format!(
                    "argument {} ('{}') is not UTF-8, which --dut cannot pass on to the DUT: give it a UTF-8 name",
                    i + 1,
                    crate::units::shown(&a.to_string_lossy())
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(strip_controller_options(args.into_iter(), keep_format))
}

fn strip_controller_options(
    mut args: impl Iterator<Item = String>,
    keep_format: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    while let Some(a) = args.next() {
        let (name, inline) = match a.split_once('=') {
            Some((n, _)) if n.starts_with("--") => (n.to_string(), true),
            _ => (a.clone(), false),
        };
        let takes = CONTROLLER_ONLY
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
            .or_else(|| (!keep_format && name == "--format").then_some(true));
        match takes {
            Some(true) if !inline => {
                args.next();
            }
            Some(_) => {}
            None => out.push(a),
        }
    }
    out
}

/// Paths given on the command line that must exist on the DUT (e.g. `--libcrypto`): the
/// DUT opens them, not the controller.
pub fn check_paths_on_dut(
    session: &ssh::Session,
    paths: &[(&'static str, PathBuf)],
) -> Result<(), Failure> {
    if paths.is_empty() {
        return Ok(());
    }
    let words: Vec<String> = paths
        .iter()
        .map(|(_, p)| ssh::quote(&p.to_string_lossy()))
        .collect();
    let out = session.run(
        &format!(
            "for p in {}; do [ -e \"$p\" ] || printf '%s\\n' \"$p\"; done",
            words.join(" ")
        ),
        None,
    )?;
    let missing = String::from_utf8_lossy(&out.stdout);
    if let Some(first) = missing.lines().next() {
        let (flag, path) = paths
            .iter()
            .find(|(_, p)| p.to_string_lossy() == first)
            .map(|(f, p)| (*f, p.as_path()))
            .unwrap_or(("a path", Path::new(first)));
        let here = if path.exists() {
            " (it exists on this machine)"
        } else {
            ""
        };
        return Err(Failure::Input(format!(
            "{flag} {first}: no such path on the DUT {}{here}: with --dut it names a path on the DUT; copy it there or give the DUT's path",
            session.url
        )));
    }
    Ok(())
}

/// Runs a command that prints its own result (probe, verify) on each DUT in turn, its
/// output passed through as it comes; a header names the host when there are several.
/// Exit code: the worst of the DUTs'.
/// `--dut` asked of a build without the controller (a router's lean build).
#[cfg(not(feature = "controller"))]
pub fn not_a_controller() -> Failure {
    Failure::Input(
        "--dut: this build is a DUT's (built without the controller feature, as the router build is): run --dut from a full build on the controller".into(),
    )
}

#[cfg(not(feature = "controller"))]
pub fn passthrough(_dut: &DutArgs, _paths: &[(&'static str, PathBuf)]) -> Result<i32, Failure> {
    Err(not_a_controller())
}

#[cfg(feature = "controller")]
pub fn passthrough(dut: &DutArgs, paths: &[(&'static str, PathBuf)]) -> Result<i32, Failure> {
    let argv = remote_argv(dut, true)?;
    let targets = dut.targets()?;
    crate::sys::signal::install_signal_handler();
    let several = targets.len() > 1;
    let mut worst = 0;
    for url in &targets {
        let outcome = (|| {
            let session = ssh::Session::open(url, &dut.ssh_option)?;
            check_paths_on_dut(&session, paths)?;
            let deployed = deploy::deploy(&session, dut.dut_binary.as_deref())?;
            if several {
                println!("# {url}");
            }
            let mut words = vec![deployed.program.clone()];
            words.extend(argv.iter().cloned());
            let mut cmd = session.command(&words);
            cmd.stdin(std::process::Stdio::piped());
            let mut child = session.spawn(&mut cmd, "ssh")?;
            let status = child
                .wait()
                .map_err(|e| Failure::Runtime(format!("{url}: ssh: {e}")))?;
            Ok::<i32, Failure>(status.code().unwrap_or(1))
        })();
        match outcome {
            Ok(code) => worst = worst.max(code),
            Err(f) if !several => return Err(f),
            Err(f) => {
                eprintln!("cryptobench: {}", f.message());
                worst = worst.max(f.exit_code());
            }
        }
    }
    Ok(worst)
}

/// What a command that prints its result (`probe --format json`) printed on the one DUT
/// named, for a controller that composes its own steps (`advise --dut`).
#[cfg(feature = "advise")]
pub fn output_of(dut: &DutArgs, argv: &[&str]) -> Result<Vec<u8>, Failure> {
    let url =
        match dut.targets()?.as_slice() {
            [one] => one.clone(),
            _ => return Err(Failure::Input(
                "this command takes one DUT: give one --dut URL (run it once per DUT for a fleet)"
                    .into(),
            )),
        };
    let session = ssh::Session::open(&url, &dut.ssh_option)?;
    let deployed = deploy::deploy(&session, dut.dut_binary.as_deref())?;
    let mut words = vec![ssh::quote(&deployed.program)];
    words.extend(argv.iter().map(|a| ssh::quote(a)));
    let o = session.run(&words.join(" "), None)?;
    match o.status.code() {
        Some(0) => Ok(o.stdout),
        c => Err(Failure::Runtime(format!(
            "{url}: `cryptobench {}` ended with status {}: {}",
            argv.join(" "),
            c.map_or("(killed)".into(), |c| c.to_string()),
            String::from_utf8_lossy(&o.stderr).trim()
        ))),
    }
}

/// `--dut-address`, of the workloads whose ends are split between the controller and the
/// DUT (tls, vpn, ssh).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct DataAddress {
    /// With --dut: the DUT's address for the data, when it differs from the one SSH
    /// reaches [default: the address the SSH connection came in on].
    #[arg(long = "dut-address", value_name = "ADDR", value_parser = parse_address)]
    pub given: Option<String>,
}

impl DataAddress {
    /// Given only to a DUT's agent (`agent`: this run's other ends are the controller's),
    /// as `--dut` passes it on.
    pub fn check(&self, agent: bool) -> Result<(), Failure> {
        match self.given {
            Some(_) if !agent => Err(Failure::Input(
                "--dut-address names the DUT's data address: use it with --dut ssh://...".into(),
            )),
            _ => Ok(()),
        }
    }
}

/// The DUT's address for the data: `--dut-address`, else the one this SSH session came
/// in on ($SSH_CONNECTION: client address, client port, server address, server port).
pub fn dut_address(given: Option<&str>) -> Result<String, Failure> {
    if let Some(a) = given {
        return Ok(a.to_string());
    }
    std::env::var("SSH_CONNECTION")
        .ok()
        .and_then(|c| c.split_whitespace().nth(2).map(String::from))
        .ok_or_else(|| {
            Failure::Input(
                "the DUT's address is unknown (no SSH_CONNECTION): give --dut-address ADDR".into(),
            )
        })
}

/// `--dut-address ADDR`: an IP address (the data path is bound to it on the DUT).
pub fn parse_address(s: &str) -> anyhow::Result<String> {
    s.parse::<std::net::IpAddr>()
        .map(|a| a.to_string())
        .map_err(|_| {
            anyhow::anyhow!(
                "invalid --dut-address '{}': give the DUT's IP address on the data path, e.g. 192.168.1.1",
                crate::units::shown(s)
            )
        })
}

#[cfg(test)]
mod tests {
    use super::strip_controller_options as strip;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn data_addresses_are_ip_addresses() {
        assert_eq!(super::parse_address("10.0.0.1").unwrap(), "10.0.0.1");
        assert_eq!(super::parse_address("fe80::1").unwrap(), "fe80::1");
        assert!(super::parse_address("router.lan").is_err());
        assert!(super::parse_address("10.0.0.256").is_err());
    }

    #[test]
    fn the_dut_gets_the_command_without_the_controllers_options() {
        let argv = words(
            "speed --dut ssh://a --alg aes-128-gcm --dut=ssh://b --ssh-option Port=2 \
             --output f.jsonl --store=sqlite:x --no-store --format json --parallel 2 \
             --dut-binary ./cb --dut-file l --libcrypto /opt/l.so --time 0.1",
        );
        assert_eq!(
            strip(argv.clone().into_iter(), false),
            words("speed --alg aes-128-gcm --libcrypto /opt/l.so --time 0.1")
        );
        assert_eq!(
            strip(argv.into_iter(), true),
            words("speed --alg aes-128-gcm --format json --libcrypto /opt/l.so --time 0.1")
        );
    }
}
