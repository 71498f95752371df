//! The one driver every measuring workload runs under: it owns the environment, the
//! results writer, the signal handling, the progress bar, the exclusions and the exit
//! codes. A workload only plans and measures (`Workload`); rendering is `render::document`.

use crate::failure::{Failure, EXIT_INTERRUPTED};
use crate::record::read::Run;
use crate::record::{Environment, Exclusion, ExclusionKind, Record, RunEnd, Sink};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// What a workload knows once its input is validated, before anything runs.
pub struct Plan {
    /// Points to measure, in order; `measure` is called with each index.
    pub points: usize,
    /// Expected seconds in all (for the progress bar and the opening line).
    pub seconds: f64,
    /// Per implementation measured: impl, label, version, variant, details.
    pub libraries: Vec<crate::record::Library>,
    /// Implementations that could not be loaded, with the reason.
    pub unavailable: Vec<crate::record::Unavailable>,
    /// The run's settings, recorded in the environment.
    pub settings: crate::record::WorkloadSettings,
    /// What is known not to be measured before the run starts.
    pub exclusions: Vec<Exclusion>,
}

/// What the driver hands a workload while it measures.
pub struct Ctx<'a> {
    pub environment: &'a Environment,
    pub progress: &'a ProgressBar,
}

// One per point, moved once into the run: boxing the record would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum Outcome<D> {
    Record(Record<D>),
    Excluded(Exclusion),
}

pub trait Workload {
    type Data: crate::record::RecordData;
    /// "speed", "tls", "vpn".
    fn name(&self) -> &'static str;
    /// Validates everything and plans the points. Nothing may be written or started
    /// that outlives this call on error.
    fn plan(&mut self) -> Result<Plan, Failure>;
    /// Measures point `index` (0-based). A failure here ends the run (finished points are
    /// kept); a point that could not be measured is an `Outcome::Excluded`.
    fn measure(&mut self, index: usize, ctx: &Ctx) -> Result<Vec<Outcome<Self::Data>>, Failure>;
    /// Why nothing was measured, when that happens.
    fn nothing_measured(&self, exclusions: &[Exclusion]) -> String {
        let refused: Vec<String> = exclusions
            .iter()
            .map(|e| format!("{}: {}", e.implementation, e.reason))
            .collect();
        if refused.is_empty() {
            "nothing was measured".into()
        } else {
            format!("nothing was measured: {}", refused.join("; "))
        }
    }
    /// Point `index` as an exclusion of `kind` (its identity), for the points an
    /// interrupted run never reached.
    fn point_excluded(
        &self,
        _index: usize,
        _kind: ExclusionKind,
        _reason: &str,
    ) -> Option<Exclusion> {
        None
    }
    /// What the analysis needs beyond the records, kept in the run's end line.
    fn analysis_inputs(&self) -> crate::record::AnalysisInputs {
        crate::record::AnalysisInputs::None
    }
    /// Called once at the end, also after an interruption: stop what the workload started.
    fn finish(&mut self) {}
}

/// A run as the driver ends it: what was measured, and how the command ends once the caller
/// has shown it.
pub struct Finished {
    /// The environment, every finished record, and the end line.
    pub run: Run,
    /// The exit code (0, or 128+signal when interrupted), or the failure to report: one
    /// while measuring, or nothing measured at all.
    pub outcome: Result<i32, Failure>,
}

/// Runs a workload end to end: every line goes to the sinks as it is made, and the run is
/// returned for the caller to show. `out`: where the lines go, checked by the caller
/// (`shell::args::CommonArgs::output`). An error here means that nothing ran (bad input).
pub fn run<W: Workload>(w: &mut W, out: &crate::sinks::Output) -> Result<Finished, Failure> {
    let store = crate::sinks::open_store(out)?;
    // Before the plan: planning may start what a signal must not leave behind (tls builds
    // its server, vpn its namespaces), and the workload's guards clean that up.
    crate::sys::signal::install_signal_handler();
    // An agent's lines go to its controller, and its session's end stops it (even while
    // planning).
    let agent = if out.agent {
        Some(crate::dut::agent::start().map_err(Failure::runtime)?)
    } else {
        None
    };
    // What killed runs left behind goes first (`cryptobench cleanup` does the same).
    for line in crate::sys::guard::remove_orphan_temp_dirs() {
        eprintln!("cryptobench: {line}");
    }
    let plan = w.plan()?;
    let env = crate::environment::capture(
        plan.libraries.clone(),
        plan.unavailable.clone(),
        plan.settings.clone(),
    );
    let mut sinks = match agent {
        Some(stdout) => vec![Box::new(stdout) as Box<dyn Sink>],
        None => crate::sinks::sinks(out, store, w.name())?,
    };
    for s in sinks.iter_mut() {
        s.environment(&env).map_err(Failure::runtime)?;
    }
    let progress = progress_bar(plan.points, plan.seconds);
    let mut run = Run {
        run_id: env.run_id.clone(),
        environment: None,
        records: Vec::new(),
        end: None,
        sources: Vec::new(),
    };
    let mut exclusions = plan.exclusions.clone();
    let mut failure = None;
    // Points measure() was called for: those after it were never reached.
    let mut reached = 0;
    for index in 0..plan.points {
        if crate::measure::stopped() {
            break;
        }
        reached = index + 1;
        let ctx = Ctx {
            environment: &env,
            progress: &progress,
        };
        match w.measure(index, &ctx) {
            Ok(outcomes) => {
                for o in outcomes {
                    match o {
                        Outcome::Record(r) => {
                            let record = <W::Data as crate::record::Listed>::wrap(r);
                            for s in sinks.iter_mut() {
                                if let Err(e) = s.record(&record) {
                                    failure = Some(Failure::Runtime(e.to_string()));
                                }
                            }
                            run.records.push(record);
                        }
                        Outcome::Excluded(e) => exclusions.push(e),
                    }
                }
            }
            Err(f) => failure = Some(f),
        }
        progress.inc(1);
        if failure.is_some() {
            break;
        }
    }
    progress.finish_and_clear();
    if crate::measure::stopped() {
        exclusions.extend((reached..plan.points).filter_map(|i| {
            w.point_excluded(
                i,
                ExclusionKind::NotReached,
                "the run was interrupted before this point",
            )
        }));
    }
    w.finish();
    let signal = crate::sys::signal::stop_signal();
    let interrupted = crate::measure::stopped();
    let end = RunEnd {
        kind: crate::record::LineKind::End,
        run_id: env.run_id.clone(),
        interrupted,
        points: run.records.len(),
        exclusions,
        unavailable: plan.unavailable.clone(),
        analysis_inputs: w.analysis_inputs(),
    };
    for s in sinks.iter_mut() {
        // The results are kept even when this last line cannot be written.
        let _ = s.end(&end);
    }
    let nothing = run.records.is_empty();
    let why = w.nothing_measured(&end.exclusions);
    run.environment = Some(env);
    run.end = Some(end);
    let outcome = match failure {
        Some(f) => Err(f),
        None if interrupted => Ok(signal.map(|s| 128 + s).unwrap_or(EXIT_INTERRUPTED)),
        None if nothing => Err(Failure::Runtime(why)),
        None => Ok(0),
    };
    Ok(Finished { run, outcome })
}

/// A bar on stderr for runs expected to last over 2 s; hidden when stderr is not a terminal.
fn progress_bar(points: usize, seconds: f64) -> ProgressBar {
    if seconds < 2.0 || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(points as u64), ProgressDrawTarget::stderr());
    pb.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} eta {eta} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb
}
