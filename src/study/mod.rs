//! `cryptobench study NAME`: one of the six studies of docs/studies.md as one
//! command. A study owns no measuring code: it composes the workloads (speed, tls, vpn, disk)
//! through their public entry points, all appending to one JSON Lines file, reads the
//! records back and computes its tables and conclusion with pure functions (one file
//! per study, unit-tested on synthetic records).

pub mod aesni;
pub mod avx512;
pub mod builds;
mod governor;
pub mod offload;
pub mod router_vpn;
pub(crate) mod runner;
pub mod scaling;
pub mod tls_stacks;
pub(crate) mod view;

use crate::analyse::decide::{decide, Decision, Difference};
use crate::analyse::share::{self, Share};
use crate::analyse::vpn::CipherShare;
use crate::failure::Failure;
use crate::impls::openssl::build::Build;
use crate::record::read::Run;
use crate::render::model::Block;
use crate::render::{Format, Single};
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

/// What the steps of a study depend on.
#[derive(Clone, Debug)]
pub struct Opts {
    pub quick: bool,
    /// Rounds of each compared point (--rounds).
    pub rounds: u32,
    pub guest: bool,
    pub libcrypto: Vec<PathBuf>,
    /// The `--openssl` builds, opened and checked.
    pub openssl: Vec<Build>,
    /// Logical CPUs here.
    pub cores: usize,
    pub arch: &'static str,
    /// The cpufreq governors offered, or why none can be set.
    pub governors: Result<Vec<String>, String>,
    /// Whether perf can sample here (the tunnel steps then run with --profile, so that
    /// the crypto share quoted is the sampled one), or why not.
    pub profile: Result<(), String>,
}

impl Opts {
    /// `--profile` for a tunnel step where perf can sample here, else nothing.
    pub fn profile_flag(&self) -> Vec<String> {
        match self.profile {
            Ok(()) => vec!["--profile".into()],
            Err(_) => Vec::new(),
        }
    }
}

/// One workload run of a study. `tag` names its runs for the analysis.
#[derive(Clone, Debug)]
pub struct Step {
    pub tag: String,
    /// Expected seconds, for the opening line.
    pub seconds: f64,
    pub action: Action,
}

#[derive(Clone, Debug)]
pub enum Action {
    /// A workload in this process: its command line after the binary name.
    Workload(Vec<String>),
    /// A workload in a child cryptobench with extra environment (an ISA mask that a
    /// library reads once, when it is loaded).
    Child {
        env: Vec<(String, String)>,
        argv: Vec<String>,
    },
    /// A workload in this process while a child cryptobench runs `neighbour` beside it
    /// (its records go to a file of their own and are kept under tag + "/neighbour").
    Beside {
        neighbour: Vec<String>,
        neighbour_env: Vec<(String, String)>,
        argv: Vec<String>,
    },
    /// Workloads inside the qemu guest, one after the other in one boot (guest/run: a boot
    /// costs tens of seconds); their records are copied back. The step's status is the
    /// first non-zero one.
    Guest(Vec<Vec<String>>),
    /// `openssl enc` over a file of `bytes` in a private tmpfs dir, each way, `rounds`
    /// times, with the environment given: speed records (impl `openssl-enc`, `variant`).
    OpensslEnc {
        cipher: crate::algorithms::Algorithm,
        bytes: u64,
        rounds: u32,
        env: Vec<(String, String)>,
        variant: Option<String>,
        /// The study's store options (`--store URL` or `--no-store`), as a step's argv has them.
        store: Vec<String>,
    },
    /// Set the cpufreq governor for the steps after it (restored at the end).
    Governor(String),
}

impl Action {
    /// Adds `args` to every cryptobench command line of the step (store options, say).
    pub fn add_args(&mut self, args: &[String]) {
        match self {
            Action::Workload(argv) | Action::Child { argv, .. } => argv.extend_from_slice(args),
            Action::Beside {
                neighbour, argv, ..
            } => {
                neighbour.extend_from_slice(args);
                argv.extend_from_slice(args);
            }
            Action::OpensslEnc { store, .. } => store.extend_from_slice(args),
            Action::Guest(_) | Action::Governor(_) => {}
        }
    }
}

/// A run read back, with the step it came from.
#[derive(Clone, Debug)]
pub struct Tagged {
    pub tag: String,
    pub run: Run,
}

/// Everything a study's analysis reads: the tagged runs, and facts the runner
/// learnt (a step that failed, a governor that could not be set).
#[derive(Clone, Debug, Default)]
pub struct Observed {
    pub runs: Vec<Tagged>,
    /// (tag, why) of steps that broke: the study fails.
    pub failed: Vec<(String, String)>,
    /// (tag, why) of steps this machine cannot run (a program, root, a kernel feature
    /// missing): not observable here, not a failure.
    pub unavailable: Vec<(String, String)>,
    pub notes: Vec<String>,
    /// Steps an interruption stopped or never let start: no conclusion is drawn then.
    pub not_run: Vec<String>,
}

impl Observed {
    /// Runs with this tag.
    pub fn tagged<'a>(&'a self, tag: &str) -> impl Iterator<Item = &'a Run> + 'a {
        let tag = tag.to_string();
        self.runs
            .iter()
            .filter(move |t| t.tag == tag)
            .map(|t| &t.run)
    }
    /// Why the step with this tag produced nothing, if it failed or cannot run here:
    /// "failed: why" or "cannot be observed here: why".
    pub fn failure(&self, tag: &str) -> Option<String> {
        let find =
            |v: &[(String, String)]| v.iter().find(|(t, _)| t == tag).map(|(_, w)| w.to_string());
        find(&self.failed)
            .map(|w| format!("failed: {w}"))
            .or_else(|| find(&self.unavailable).map(|w| format!("{UNAVAILABLE}: {w}")))
    }
}

/// How a study says that a step cannot run on this machine (and is not a failure).
pub const UNAVAILABLE: &str = "cannot be observed here";

/// A study's result: its tables and its closing sentences, with numbers.
#[derive(Clone, Debug, Default)]
pub struct Findings {
    pub blocks: Vec<Block>,
    pub conclusions: Vec<String>,
    /// What this machine could not show, and why (the "Not observable here" section).
    pub unobservable: Vec<String>,
}

pub trait Study {
    fn name(&self) -> &'static str;
    /// The user's question.
    fn question(&self) -> &'static str;
    /// What the original study found (docs/studies.md), in one line.
    fn original(&self) -> &'static str;
    fn steps(&self, o: &Opts) -> Vec<Step>;
    /// The options of this study beyond --quick, each with what it adds (--list shows
    /// them; another study refuses them).
    fn options(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }
    /// Facts known before running that the analysis must say (e.g. no governor here).
    fn notes(&self, _o: &Opts) -> Vec<String> {
        Vec::new()
    }
    /// Pure: tables and conclusions from what was observed.
    fn analyse(&self, o: &Observed) -> Findings;
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

/// Rounds of each compared point without --rounds: 3 give an interval; --quick keeps 1.
pub fn default_rounds(quick: bool) -> u32 {
    if quick {
        1
    } else {
        3
    }
}

/// Thread counts 1, 2, 4 ... up to `cores`, and `cores` itself.
pub fn thread_counts(cores: usize) -> Vec<usize> {
    let mut t: Vec<usize> = std::iter::successors(Some(1usize), |n| Some(n * 2))
        .take_while(|n| *n <= cores)
        .collect();
    if t.last() != Some(&cores) {
        t.push(cores);
    }
    t
}

/// A command line from words.
pub fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|s| s.to_string()).collect()
}

/// Differences within this many percent are this shared machine's noise: no study calls
/// them a finding. The one rule for every study's verdicts and for the note on disturbed
/// points.
pub const NOISE_PCT: f64 = 15.0;

/// What a study says instead of a verdict when a side has one value and so no interval
/// (analyse::decide's CannotDecide), however large the difference.
pub const UNDECIDED: &str = "one round cannot decide: run without --quick";

/// NEW against BASE at this machine's noise (analyse::decide, the one rule).
pub fn differ(base: &[f64], new: &[f64]) -> Difference {
    decide(base, new, NOISE_PCT / 100.0)
}

/// One side's values for [`differ`], as compare takes them: each record's figure when
/// several rounds measured the point, else the one record's trials.
pub fn values<'a, D: 'a>(recs: impl IntoIterator<Item = &'a Record<D>>) -> Vec<f64> {
    let recs: Vec<&Record<D>> = recs.into_iter().collect();
    match &recs[..] {
        [one] if !one.samples_bps.is_empty() => one.samples_bps.clone(),
        several => several.iter().map(|r| r.throughput_bps).collect(),
    }
}

/// What a decision says against study N, which found `found` (Higher or Lower): "as
/// study N found", "the opposite of study N's finding", "no difference beyond the noise,
/// unlike study N", or [`UNDECIDED`].
pub fn agreement(d: Decision, found: Decision, study: u32) -> String {
    match d {
        Decision::CannotDecide => UNDECIDED.into(),
        Decision::NoDifference => {
            format!("no difference beyond this machine's noise (±{NOISE_PCT:.0}%), unlike study {study}")
        }
        d if d == found => format!("as study {study} found"),
        _ => format!("the opposite of study {study}'s finding"),
    }
}

#[cfg(test)]
pub(crate) mod tests;

use crate::record::speed::SpeedRecord;
use crate::record::tls::TlsRecord;
use crate::record::vpn::VpnRecord;
use crate::record::{Listed, Record};

impl Observed {
    pub fn speed(&self, tag: &str) -> Vec<&SpeedRecord> {
        self.records(tag)
    }
    pub fn tls(&self, tag: &str) -> Vec<&TlsRecord> {
        self.records(tag)
    }
    pub fn vpn(&self, tag: &str) -> Vec<&VpnRecord> {
        self.records(tag)
    }
    pub fn ssh(&self, tag: &str) -> Vec<&crate::record::ssh::SshRecord> {
        self.records(tag)
    }
    /// The records of one workload under a tag.
    pub fn records<D: Listed>(&self, tag: &str) -> Vec<&Record<D>> {
        self.tagged(tag)
            .flat_map(|r| &r.records)
            .filter_map(D::pick)
            .collect()
    }
    /// Why a tag has no records: its failure, why it cannot run here, or "nothing
    /// measured".
    pub fn why_missing(&self, tag: &str) -> String {
        self.failure(tag)
            .unwrap_or_else(|| "nothing measured".into())
    }
    /// Why one implementation (a tunnel, a server, a library) has no record under a tag:
    /// the step's failure, or the exclusions and refusals its runs wrote for it.
    pub fn why_missing_of(&self, tag: &str, implementation: &str) -> String {
        if let Some(f) = self.failure(tag) {
            return f;
        }
        let mut why: Vec<String> = Vec::new();
        for end in self.tagged(tag).filter_map(|r| r.end.as_ref()) {
            let excluded = end
                .exclusions
                .iter()
                .filter(|e| e.implementation == implementation);
            let refused = end.unavailable.iter().filter(|u| u.name == implementation);
            for reason in excluded
                .map(|e| &e.reason)
                .chain(refused.map(|u| &u.reason))
            {
                if !why.contains(reason) {
                    why.push(reason.clone());
                }
            }
        }
        if why.is_empty() {
            "nothing measured".into()
        } else {
            why.join("; ")
        }
    }
}

/// Mbit/s, as the studies quote them.
pub fn mbit(bps: f64) -> String {
    format!("{:.0}", bps * 8.0 / 1e6)
}

/// A tunnel's crypto share as quoted: "4% [3-5%]" when sampled, "27%" per byte.
pub fn share_text(s: &CipherShare) -> String {
    match &s.sampled {
        Some(x) => sampled_text(x),
        None => format!("{:.0}%", s.crypto_share * 100.0),
    }
}

/// Where the quoted share comes from, with the per-byte cross-check beside a sampled one.
pub fn share_source_text(s: &CipherShare) -> String {
    match &s.sampled {
        Some(_) => format!(
            "sampled with perf; per byte against cipher none: {:.0}%",
            s.per_byte_share * 100.0
        ),
        None => s.share_source.clone(),
    }
}

/// The crypto share sampled in the OpenVPN records of step `tag` for `cipher` (samples
/// pooled over its points), or why it was not sampled; None without such records.
pub fn sampled_share(o: &Observed, tag: &str, cipher: &str) -> Option<Result<Share, String>> {
    let recs: Vec<&VpnRecord> = o
        .vpn(tag)
        .into_iter()
        .filter(|r| r.tunnel == "openvpn" && r.cipher == cipher)
        .collect();
    if recs.is_empty() {
        return None;
    }
    let fields = || recs.iter().filter_map(|r| r.profile.as_deref());
    Some(share::pooled_crypto(fields()).ok_or_else(|| {
        share::unavailable(fields()).unwrap_or_else(|| "perf cannot sample here".into())
    }))
}

/// A sampled share as quoted: "12% [10-14%]".
pub fn sampled_text(x: &Share) -> String {
    format!(
        "{:.0}% [{:.0}-{:.0}%]",
        x.share * 100.0,
        x.ci[0] * 100.0,
        x.ci[1] * 100.0
    )
}

/// [`sampled_share`] as a conclusion's clause: "12% [10-14%] of the tunnel's CPU
/// (sampled with perf), so free crypto gives at most 1.14x", or why it was not sampled.
pub fn sampled_clause(o: &Observed, tag: &str, cipher: &str) -> Option<String> {
    Some(match sampled_share(o, tag, cipher)? {
        Ok(x) => format!(
            "{} of the tunnel's CPU (sampled with perf), so free crypto gives at most {}",
            sampled_text(&x),
            times(share::amdahl_ceiling(x.share))
        ),
        Err(why) => format!("not sampled (no profile: {why})"),
    })
}

/// A ratio as "3.2x".
pub fn times(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}x")
    } else {
        "n/a".into()
    }
}
