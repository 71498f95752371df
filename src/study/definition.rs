//! What a study is: the `Study` trait, the options its steps are planned with (`Opts`,
//! and the helpers for thread counts and command lines), its steps (`Step`, `Action`),
//! what the runner observed (`Observed`, `Tagged`) and what the analysis finds
//! (`Findings`).

use crate::impls::openssl::build::Build;
use crate::record::read::Run;
use crate::record::speed::SpeedRecord;
use crate::record::tls::TlsRecord;
use crate::record::vpn::VpnRecord;
use crate::record::{Listed, Record};
use crate::render::model::Block;
use std::path::PathBuf;

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
