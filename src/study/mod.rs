//! `cryptobench study NAME`: one of the six studies of docs/studies.md as one
//! command. A study owns no measuring code: it composes the workloads (speed, tls, vpn, disk)
//! through their public entry points, all appending to one JSON Lines file, reads the
//! records back and computes its tables and conclusion with pure functions (one file
//! per study, unit-tested on synthetic records).

pub mod aesni;
pub mod avx512;
pub mod builds;
pub mod definition;
mod governor;
pub mod offload;
pub mod quote;
pub mod router_vpn;
pub(crate) mod runner;
pub mod scaling;
pub mod tls_stacks;
pub mod verdict;
pub(crate) mod view;

use crate::failure::Failure;
use crate::impls::openssl::build::Build;
use crate::render::model::Block;
use crate::render::{Format, Single};
pub use definition::{argv, Action, Observed, Step};
use definition::{default_rounds, Opts, Study};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct StudyArgs {
    /// The study: offload, aesni, scaling, avx512, router-vpn or tls-stacks (see --list).
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
    /// Describe the six studies and exit.
    #[arg(long)]
    pub list: bool,
    /// A reduced matrix in under a minute (first looks, tests; --list gives each time).
    #[arg(long)]
    pub quick: bool,
    /// Repeat each point the studies compare (nginx mixes, tunnels) N times, so that its
    /// verdict has an interval [default: 3; 1 with --quick, which keeps it under a minute
    /// and so concludes "one round cannot decide" where the trials give no interval].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=20))]
    pub rounds: Option<u32>,
    /// offload and aesni: run the kernel part (offload's kernel paths, aesni's RAM disk)
    /// inside the qemu guest (guest/run) where the host has no kernel crypto path or
    /// dm-crypt.
    #[arg(long)]
    pub guest: bool,
    /// router-vpn: also measure this libcrypto build (repeatable).
    #[arg(long, value_name = "PATH")]
    pub libcrypto: Vec<PathBuf>,
    /// router-vpn and aesni: also measure the OpenSSL build installed in DIR (its
    /// lib*/libcrypto.so.N and libssl.so.N, e.g. what scripts/build-openssl prints): its
    /// speed figures and an OpenVPN tunnel on it (repeatable).
    #[arg(long, value_name = "DIR")]
    pub openssl: Vec<PathBuf>,
    #[command(flatten)]
    pub steps: runner::StepsOutput,
    #[arg(long, default_value = "table", value_parser = Format::parser(view::FORMATS, &[]))]
    pub format: Format,
    /// With --dut: the study runs on the DUT (all of it, as it would there), its table
    /// and conclusions shown here; --libcrypto and --openssl name paths on the DUT.
    #[command(flatten)]
    pub dut: crate::dut::DutArgs,
}

pub fn all() -> Vec<Box<dyn Study>> {
    vec![
        Box::new(offload::Offload),
        Box::new(aesni::AesNi),
        Box::new(scaling::Scaling),
        Box::new(avx512::Avx512),
        Box::new(router_vpn::RouterVpn),
        Box::new(tls_stacks::TlsStacks),
    ]
}

/// `study NAME --dut URL`: the study on each DUT, its output passed through.
fn on_dut(args: &StudyArgs) -> Result<i32, Failure> {
    if args.steps.output.is_some() {
        return Err(Failure::Input(
            "study --output with --dut: a study's records stay on the DUT (the table and conclusions come back); drop --output, or run speed/tls --dut --output FILE for records here".into(),
        ));
    }
    let libcrypto = args.libcrypto.iter().map(|p| ("--libcrypto", p.clone()));
    let paths: Vec<(&'static str, PathBuf)> = libcrypto
        .chain(args.openssl.iter().map(|p| ("--openssl", p.clone())))
        .collect();
    crate::dut::passthrough(&args.dut, &paths)
}

pub fn run(args: StudyArgs) -> Result<i32, Failure> {
    let studies = all();
    let names: Vec<&str> = studies.iter().map(|s| s.name()).collect();
    if args.list {
        args.format.offered_by("study --list", view::LIST_FORMATS)?;
        let o = opts(&args);
        let mut list = Single {
            blocks: &|| vec![Block::Lines(view::list(&studies, &o).0)],
            json: &|out| out.value(&view::list(&studies, &o).1),
            html: None,
        };
        crate::shell::show::print(&mut list, args.format)?;
        return Ok(0);
    }
    let Some(name) = args.name.as_deref() else {
        return Err(Failure::Input(format!(
            "study: name a study ({}) or give --list",
            names.join(", ")
        )));
    };
    let study = studies.iter().find(|s| s.name() == name).ok_or_else(|| {
        Failure::Input(format!(
            "unknown study '{}': choose from {} (cryptobench study --list)",
            crate::units::shown(name),
            names.join(", ")
        ))
    })?;
    for (flag, given) in [
        ("--guest", args.guest),
        ("--libcrypto", !args.libcrypto.is_empty()),
        ("--openssl", !args.openssl.is_empty()),
    ] {
        let takes = |s: &dyn Study| {
            s.options()
                .iter()
                .any(|(o, _)| o.split(' ').next() == Some(flag))
        };
        if given && !takes(study.as_ref()) {
            let owners: Vec<&str> = studies
                .iter()
                .filter(|s| takes(s.as_ref()))
                .map(|s| s.name())
                .collect();
            return Err(Failure::Input(format!(
                "{flag} is for study {} (cryptobench study --list): drop it for {}",
                owners.join(" and "),
                study.name()
            )));
        }
    }
    if args.dut.named() {
        return on_dut(&args);
    }
    args.steps.check()?;
    for l in &args.libcrypto {
        if !l.is_file() {
            return Err(Failure::Input(format!(
                "--libcrypto {}: not a file: give the path of a libcrypto.so",
                crate::units::shown_path(l)
            )));
        }
    }
    let o = Opts {
        openssl: open_builds(&args.openssl)?,
        ..opts(&args)
    };
    let store = args.steps.store_flags();
    let mut steps = study.steps(&o);
    for s in &mut steps {
        s.action.add_args(&store);
    }
    let (mut observed, code) = runner::run(study.name(), &steps, args.steps.output.as_deref())?;
    observed.notes.extend(study.notes(&o));
    let findings = study.analyse(&observed);
    let mut report = view::Report {
        study: study.as_ref(),
        o: &o,
        observed: &observed,
        f: &findings,
    };
    crate::shell::show::print(&mut report, args.format)?;
    Ok(code)
}

/// The `--openssl` builds, each checked as `vpn --openssl` checks it (a libssl and
/// libcrypto pair of this machine's architecture); two of one name would share a label.
fn open_builds(dirs: &[PathBuf]) -> Result<Vec<Build>, Failure> {
    let mut builds: Vec<Build> = Vec::new();
    for dir in dirs {
        let b = Build::open(dir, true).map_err(Failure::input)?;
        if let Some(same) = builds.iter().find(|o| o.name() == b.name()) {
            return Err(Failure::Input(format!(
                "--openssl {}: the same build ({}) as {}: give builds that differ",
                crate::units::shown_path(dir),
                b.name(),
                crate::units::shown_path(&same.dir)
            )));
        }
        builds.push(b);
    }
    Ok(builds)
}

/// The options that need nothing opened (`--openssl` builds are added once checked).
fn opts(args: &StudyArgs) -> Opts {
    Opts {
        quick: args.quick,
        rounds: args.rounds.unwrap_or(default_rounds(args.quick)),
        guest: args.guest,
        libcrypto: args.libcrypto.clone(),
        openssl: Vec::new(),
        cores: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        arch: std::env::consts::ARCH,
        governors: governor::offered(std::path::Path::new("/sys/devices/system/cpu"))
            .map_err(|e| e.to_string()),
        profile: crate::profile::Sampler::new(None, false)
            .map(drop)
            .map_err(|e| e.to_string()),
    }
}

#[cfg(test)]
pub(crate) mod tests;
