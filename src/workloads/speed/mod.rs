//! `cryptobench speed`: primitives across implementations, sizes, directions and threads.

use super::paths::{self, PathArgs, Paths, Selection};
use crate::algorithms::Algorithm;
use crate::algorithms::Direction;
use crate::analyse::{scaling, stats};
use crate::driver::{self, Ctx, Outcome, Plan, Workload};
use crate::failure::Failure;
use crate::impls::{self, Implementation, Support};
use crate::measure::{self, adaptive::Savings, worker::Worker, Measured, Settings};
use crate::record::speed::{SpeedData, SpeedRecord};
use crate::record::{Record, SCHEMA};
use crate::shell::args::CommonArgs;
use indicatif::ProgressBar;
use plan::{Exclusion, ExclusionKind, Group};
use std::path::PathBuf;

pub mod grid;
pub mod openssl;
pub mod plan;
pub mod plots;
pub mod view;

#[derive(clap::Args, Clone)]
pub struct SpeedArgs {
    #[command(flatten)]
    pub paths: PathArgs,
    /// Directions, comma-separated: enc,dec (and sign, verify, derive, keygen, encaps, decaps for public-key operations).
    #[arg(long = "direction", alias = "directions", value_name = "LIST", value_parser = plan::directions_arg)]
    pub direction: Option<plan::List<Direction>>,
    /// Bytes per call, comma-separated, binary units (16,1k,1350,64k,1m; up to 64m).
    #[arg(allow_negative_numbers = true, long, value_name = "LIST", value_parser = plan::sizes_arg)]
    pub sizes: Option<plan::List<usize>>,
    /// Thread counts, comma-separated (e.g. 1,2,4).
    #[arg(allow_negative_numbers = true, long, value_name = "LIST", value_parser = plan::threads_arg)]
    pub threads: Option<plan::List<usize>>,
    #[command(flatten)]
    pub common: CommonArgs,
    #[command(flatten)]
    pub dut: crate::dut::DutArgs,
    /// The most a noisy point may take, drawing on what stable points saved [default: 4 x --time].
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub max_time: Option<f64>,
    /// Length of one trial [default: 0.003, and at least 10 trials per --time]. Short trials give the median many samples, so a burst of interference spoils few of them.
    #[arg(long, value_name = "SECONDS", allow_negative_numbers = true)]
    pub trial_time: Option<f64>,
    /// Stop a point once its median's CI half-width is within this many percent (0: never early, the whole --time).
    #[arg(
        long,
        value_name = "PERCENT",
        default_value_t = 1.0,
        allow_negative_numbers = true
    )]
    pub target_ci: f64,
    /// Report the crossover size between two paths (names or labels), e.g. openssl,af_alg.
    #[arg(long, value_name = "A,B")]
    pub crossover: Option<String>,
    /// Sample where each point's CPU time goes with perf (cipher, hash, copies, kernel...).
    #[arg(long)]
    pub profile: bool,
    /// With --profile: keep folded stacks and a flame graph SVG per point in DIR.
    #[arg(long, value_name = "DIR")]
    pub profile_dir: Option<PathBuf>,
    /// List implementations and algorithms available here, and why any is missing.
    #[arg(long)]
    pub list: bool,
}

/// Longest --time accepted per point, in seconds.
const MAX_TIME: f64 = 600.0;
/// Seconds per point when --time is not given. The run's trials never take longer than
/// every point's budget together, so this bounds the default run on a busy machine: 443
/// points x 0.08 s = 35 s (at 0.15 s it took 87 s beside one busy process).
const DEFAULT_TIME: f64 = 0.08;
/// Shortest --trial-time accepted: below a millisecond the per-trial bookkeeping
/// (threads, /proc reads) outweighs the trial.
const MIN_TRIAL_TIME: f64 = 0.001;
/// Widest --target-ci accepted, in percent.
const MAX_TARGET_CI: f64 = 100.0;

/// The trial settings from --time, --max-time and --target-ci, validated.
fn settings(args: &SpeedArgs) -> Result<Settings, Failure> {
    let time = args.common.time.unwrap_or(DEFAULT_TIME);
    crate::units::check_seconds(time, "--time", 0.01, MAX_TIME).map_err(Failure::input)?;
    let max_time = match args.max_time {
        Some(t) => crate::units::check_seconds(t, "--max-time", time, MAX_TIME)
            .map_err(|e| Failure::Input(format!("{e} (at least --time)")))?,
        None => (4.0 * time).min(MAX_TIME),
    };
    let ci = args.target_ci;
    if !(ci.is_finite() && (0.0..=MAX_TARGET_CI).contains(&ci)) {
        return Err(Failure::Input(format!(
            "invalid --target-ci {ci}: give a CI half-width in percent from 0 (never stop early) to {MAX_TARGET_CI}, e.g. --target-ci 1"
        )));
    }
    let trial = match args.trial_time {
        None => crate::measure::DEFAULT_TRIAL_S,
        Some(t) => crate::units::check_seconds(t, "--trial-time", MIN_TRIAL_TIME, time)
            .map_err(|e| Failure::Input(format!("{e} (at most --time)")))?,
    };
    Ok(Settings::with_trial(time, max_time, trial, ci))
}

/// `cryptobench speed`, as the shell runs it.
pub struct Command;

impl crate::shell::measuring::Measuring for Command {
    const NAME: &'static str = "speed";
    const ABOUT: &'static str =
        "Measure primitives (AEAD, ciphers, hashes, HMAC) across implementations and sizes";
    const DOCS: &'static str = "See docs/speed.md, docs/kernel-paths.md (paths, crossovers), docs/builds.md (OpenSSL builds) and docs/routers.md (--dut) in the sources.";
    type Args = SpeedArgs;
    type View = view::SpeedView;

    fn common(args: &SpeedArgs) -> &CommonArgs {
        &args.common
    }
    fn dut(args: &mut SpeedArgs) -> &mut crate::dut::DutArgs {
        &mut args.dut
    }
    fn answer(args: &SpeedArgs) -> Option<Result<i32, Failure>> {
        let args = args.list.then(|| args.clone())?;
        Some(Speed::load(args).map(|speed| {
            print!("{}", list(&speed.found, &speed.labels, &speed.missing));
            0
        }))
    }
    /// Measured on the DUTs, their runs relayed into this side's sinks.
    fn on_dut(args: SpeedArgs) -> Result<crate::dut::relay::Relayed, Failure> {
        check_text(&args)?;
        let out = out(&args.common)?;
        crate::dut::relay::run("speed", &out, &args.dut, &args.paths.on_dut(), None)
    }
    fn measure(args: SpeedArgs) -> Result<driver::Finished, Failure> {
        let common = args.common.clone();
        driver::run(&mut Speed::load(args)?, &out(&common)?)
    }
    /// The crossover pair as `--crossover` names it (checked against the measured
    /// paths when they are known).
    fn crossover(args: &SpeedArgs) -> Option<(String, String)> {
        args.crossover
            .as_deref()
            .and_then(|c| c.split_once(','))
            .map(|(a, b)| (a.trim().to_string(), b.trim().to_string()))
    }
}

/// Where the run's lines go, checked.
fn out(common: &CommonArgs) -> Result<crate::sinks::Output, Failure> {
    common.output("speed").map_err(Failure::input)
}

/// Everything that is only text, checked before any library is opened (here or on a DUT).
fn check_text(args: &SpeedArgs) -> Result<Settings, Failure> {
    let settings = settings(args)?;
    args.common.check("speed").map_err(Failure::input)?;
    plan::select_algs(args.paths.algs.as_deref()).map_err(Failure::input)?;
    Ok(settings)
}

/// The speed workload: implementations found, and after `plan` the groups to measure.
struct Speed {
    args: SpeedArgs,
    found: Vec<Box<dyn Implementation>>,
    missing: Vec<impls::Unavailable>,
    labels: Vec<String>,
    groups: Vec<Group>,
    settings: Settings,
    /// What points stopping early left of their budget, for noisy ones to spend.
    savings: Savings,
    records: Vec<SpeedRecord>,
    tsc_hz: Option<f64>,
    crossover: Option<(String, String)>,
    /// --profile: perf over each point (checked in `plan`).
    sampler: Option<crate::profile::Sampler>,
}

impl Speed {
    /// Validates the arguments that need no library, then loads the implementations.
    fn load(args: SpeedArgs) -> Result<Self, Failure> {
        let settings = check_text(&args)?;
        let Paths {
            found,
            missing,
            labels,
        } = paths::load(&args.paths)?;
        Ok(Speed {
            settings,
            savings: Savings::default(),
            args,
            found,
            missing,
            labels,
            groups: Vec::new(),
            records: Vec::new(),
            tsc_hz: None,
            crossover: None,
            sampler: None,
        })
    }
}

impl Workload for Speed {
    type Data = SpeedData;

    fn name(&self) -> &'static str {
        "speed"
    }

    fn plan(&mut self) -> Result<Plan, Failure> {
        let args = &self.args;
        let Selection {
            impls: selected,
            mut algs,
            ..
        } = paths::select(&args.paths, &self.found, &self.missing, "measure")?;
        if args.paths.algs.is_none() {
            algs.retain(|a| a.in_default_run());
        }
        let directions = match &args.direction {
            Some(d) => d.0.clone(),
            None => Direction::ALL.to_vec(),
        };
        let sizes = match &args.sizes {
            Some(s) => s.0.clone(),
            None => crate::algorithms::DEFAULT_SIZES.to_vec(),
        };
        if args.sizes.is_some() && algs.iter().all(|a| a.kind().is_public_key()) {
            eprintln!("note: --sizes does not apply to public-key algorithms (one operation per call, measured in ops/s); ignored");
        }
        let threads = args.threads.as_ref().map_or(vec![1], |t| t.0.clone());
        if algs
            .iter()
            .all(|a| !directions.iter().any(|d| a.directions().contains(d)))
        {
            let names: Vec<&str> = algs.iter().map(|a| a.name()).collect();
            let dirs: Vec<&str> = directions.iter().map(|d| d.name()).collect();
            return Err(Failure::Input(format!(
                "--direction {}: {} {} only enc (hashes and MACs have no decrypt direction): add enc or another algorithm",
                dirs.join(","),
                names.join(", "),
                if names.len() > 1 { "have" } else { "has" }
            )));
        }
        self.crossover = crossover_pair(
            args.crossover.as_deref(),
            &self.found,
            &self.labels,
            &selected,
        )?;
        let (verified, mut exclusions) = plan::verify(&self.found, &self.labels, &selected, &algs);
        let (mut groups, size_excl) =
            plan::build(&verified, &self.labels, &directions, &sizes, &threads);
        if args.paths.algs.is_none() && args.direction.is_none() {
            groups.retain(|g| g.alg.default_run_directions().contains(&g.direction));
        }
        exclusions.extend(size_excl);
        if args.profile || args.profile_dir.is_some() {
            let kernel = selected
                .iter()
                .any(|&i| system_wide(self.found[i].as_ref()));
            self.sampler = Some(
                crate::profile::Sampler::new(args.profile_dir.clone(), kernel)
                    .map_err(Failure::input)?,
            );
        }
        // A profile belongs to one implementation: measure each alone.
        self.groups = match self.sampler {
            Some(_) => groups.iter().flat_map(one_per_impl).collect(),
            None => groups,
        };
        let s = &self.settings;
        let libraries = selected
            .iter()
            .map(|&i| {
                let imp = &self.found[i];
                crate::record::Library {
                    implementation: imp.name().into(),
                    label: Some(self.labels[i].clone()),
                    version: imp.version(),
                    variant: imp.variant(),
                    access: Some(imp.access().name().into()),
                    details: imp.details(),
                }
            })
            .collect();
        Ok(Plan {
            points: self.groups.len(),
            seconds: self
                .groups
                .iter()
                .map(|g| (g.impls.len() * g.threads.len()) as f64 * s.time_per_point * 1.1)
                .sum(),
            libraries,
            unavailable: self.missing.clone(),
            settings: crate::record::WorkloadSettings::Speed(
                crate::record::speed::SpeedSettings {
                    time_per_point_s: s.time_per_point,
                    max_time_per_point_s: s.max_time_per_point,
                    min_trials: s.min_trials,
                    min_window_s: s.min_window_s,
                    trial_s: s.trial_s(),
                    target_ci_pct: s.target_ci_pct,
                    sizes,
                    threads,
                    crossover: self.crossover.clone(),
                },
            ),
            exclusions,
        })
    }

    fn point_excluded(
        &self,
        index: usize,
        kind: crate::record::ExclusionKind,
        reason: &str,
    ) -> Option<crate::record::Exclusion> {
        let g = self.groups.get(index)?;
        let labels: Vec<&str> = g.impls.iter().map(|&i| self.labels[i].as_str()).collect();
        let mut e = plan::excluded(&labels.join(","), g.alg, kind, Some(g.size), reason.into());
        e.point
            .insert("direction".into(), g.direction.name().into());
        Some(e)
    }

    fn measure(&mut self, index: usize, ctx: &Ctx) -> Result<Vec<Outcome<SpeedData>>, Failure> {
        if self.tsc_hz.is_none() {
            self.tsc_hz = ctx.environment.cpu.tsc_hz;
        }
        let group = &self.groups[index];
        let mut exclusions = Vec::new();
        let measured = measure_group(
            group,
            &self.found,
            &self.settings,
            &mut self.savings,
            ctx.progress,
            &mut exclusions,
            &self.labels,
        );
        let profile = self.sampler.as_ref().and_then(|s| {
            let i = *group.impls.first()?;
            let label = format!(
                "speed {} {} {} {}B x{:?}",
                self.labels[i], group.alg, group.direction, group.size, group.threads
            );
            let mut sink = Vec::new();
            let (found, settings, labels) = (&self.found, &self.settings, &self.labels);
            Some(crate::profile::sample_point(
                s,
                target(found[i].as_ref()),
                &label,
                || {
                    // The sampled rerun neither lends to nor borrows from the run's savings.
                    let mut own = Savings::default();
                    let again = measure_group(
                        group,
                        found,
                        settings,
                        &mut own,
                        ctx.progress,
                        &mut sink,
                        labels,
                    );
                    again.first().map(|(_, m, _)| m.median_bps())
                },
            ))
        });
        let mut out: Vec<Outcome<SpeedData>> =
            exclusions.into_iter().map(Outcome::Excluded).collect();
        for ((i, threads), m, notes) in &measured {
            let mut notes = notes.clone();
            if ctx.environment.emulated {
                notes.push(crate::environment::EMULATED_NOTE.into());
            }
            let imp = self.found[*i].as_ref();
            let mut rec = to_record(
                &ctx.environment.run_id,
                imp,
                &self.labels[*i],
                (group, *threads),
                m,
                self.tsc_hz,
                notes,
            );
            rec.profile = profile.clone().map(Box::new);
            if let Some(p) = &profile {
                ctx.progress.suspend(|| {
                    eprint!(
                        "{}",
                        crate::profile::table::render(&rec.label, p, Some(rec.throughput_bps))
                    )
                });
            }
            // Against the same implementation's 1-thread point, round by round.
            let single = measured
                .iter()
                .find(|((j, t), _, _)| j == i && *t == 1 && *threads > 1);
            if let Some((_, one, _)) = single {
                fill_scaling(&mut rec, m, one, *threads);
            }
            self.records.push(rec.clone());
            out.push(Outcome::Record(rec));
        }
        Ok(out)
    }

    fn nothing_measured(&self, exclusions: &[Exclusion]) -> String {
        let refused: Vec<String> = exclusions
            .iter()
            .filter(|e| e.kind == ExclusionKind::Refused)
            .map(|e| {
                format!(
                    "{} {}: {}",
                    e.implementation,
                    e.point.get("alg").and_then(|a| a.as_str()).unwrap_or("?"),
                    e.reason
                )
            })
            .collect();
        if refused.is_empty() {
            "nothing to measure: no selected implementation offers the selected algorithms at these sizes".to_string()
        } else {
            format!(
                "nothing measured: every selected implementation was refused ({})",
                refused.join("; ")
            )
        }
    }
}

/// `--crossover A,B`: two paths, each named by label (e.g. "openssl [engine=afalg]") or
/// implementation name, among those selected.
fn crossover_pair(
    spec: Option<&str>,
    found: &[Box<dyn Implementation>],
    labels: &[String],
    selected: &[usize],
) -> Result<Option<(String, String)>, Failure> {
    let Some(spec) = spec else { return Ok(None) };
    let parts: Vec<&str> = spec.split(',').map(str::trim).collect();
    let known: Vec<String> = selected.iter().map(|&i| labels[i].clone()).collect();
    let [a, b] = parts[..] else {
        return Err(Failure::Input(format!(
            "invalid --crossover '{}': give two paths, e.g. --crossover openssl,af_alg",
            crate::units::shown(spec)
        )));
    };
    if a == b {
        return Err(Failure::Input(format!(
            "invalid --crossover '{}': a path never crosses itself: give two different paths, e.g. --crossover openssl,af_alg",
            crate::units::shown(spec)
        )));
    }
    for p in [a, b] {
        if !selected
            .iter()
            .any(|&i| labels[i] == p || found[i].name() == p)
        {
            return Err(Failure::Input(format!(
                "--crossover: '{}' is not among the measured paths: choose from {}",
                crate::units::shown(p),
                known.join(", ")
            )));
        }
    }
    Ok(Some((a.to_string(), b.to_string())))
}

fn list(
    found: &[Box<dyn Implementation>],
    labels: &[String],
    missing: &[impls::Unavailable],
) -> String {
    let mut out = String::new();
    for (imp, label) in found.iter().zip(labels) {
        out.push_str(&format!(
            "{label}: {} ({:?})\n",
            imp.version(),
            imp.access()
        ));
        let (yes, no): (Vec<Algorithm>, Vec<Algorithm>) = Algorithm::ALL
            .iter()
            .partition(|a| imp.support(**a) == Support::Yes);
        let yes: Vec<String> = yes.iter().map(|a| a.labelled()).collect();
        out.push_str(&format!("  offers: {}\n", yes.join(", ")));
        for a in no {
            if let Support::No(reason) = imp.support(a) {
                out.push_str(&format!("  missing {}: {reason}\n", a.labelled()));
            }
        }
    }
    for u in missing {
        out.push_str(&format!("{}: not available: {}\n", u.name, u.reason));
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    if let Some(why) = crate::environment::emulation(&cpuinfo) {
        out.push_str(&format!(
            "EMULATED: {why}: {}\n",
            crate::environment::EMULATED_NOTE
        ));
    }
    out
}

/// The scaling efficiency of an N-thread point against its 1-thread twin of the same
/// group, from their interleaved trials; above 100 % beyond its CI makes it noisy.
fn fill_scaling(rec: &mut SpeedRecord, many: &Measured, one: &Measured, threads: usize) {
    let Some(e) = scaling::paired_efficiency(&many.samples_bps, &one.samples_bps, threads as u32)
    else {
        return;
    };
    rec.data.scaling_efficiency = Some(e.value);
    rec.data.scaling_efficiency_ci = Some(e.ci);
    if e.beyond_perfect() {
        rec.data.noisy = true;
        rec.notes.push(format!(
            "scaling efficiency {:.0}% is above 100% beyond its CI ({:.0}-{:.0}%): the 1-thread trials were slowed by something else",
            e.value * 100.0,
            e.ci[0] * 100.0,
            e.ci[1] * 100.0
        ));
    }
}

/// A point: (implementation index, threads).
type Point = (usize, usize);

/// Builds every thread's worker for each point (implementation and thread count) of the
/// group, measures them interleaved, and checks the output after timing. Failures become
/// exclusions.
fn measure_group(
    group: &Group,
    found: &[Box<dyn Implementation>],
    settings: &Settings,
    savings: &mut Savings,
    progress: &ProgressBar,
    exclusions: &mut Vec<Exclusion>,
    labels: &[String],
) -> Vec<(Point, Measured, Vec<String>)> {
    let mut ids = Vec::new();
    let mut workers = Vec::new();
    for (i, threads) in group.points() {
        let ws: anyhow::Result<Vec<Worker>> = (0..threads)
            .map(|t| Worker::new(found[i].as_ref(), group.alg, group.direction, group.size, t))
            .collect();
        match ws {
            Ok(ws) => {
                ids.push((i, threads));
                workers.push(ws);
            }
            Err(e) => exclusions.push(refusal(
                labels[i].clone(),
                group,
                format!("setup failed: {e}"),
            )),
        }
    }
    let ops = group.alg.kind().is_public_key();
    let point = if ops {
        format!("{} {}", group.alg, group.direction)
    } else {
        format!("{} {} {} B", group.alg, group.direction, group.size)
    };
    progress.set_message(point.clone());
    let results = measure::run_group(group.size, &mut workers, settings, savings, &mut |k, m| {
        let rate = if ops {
            format!("{:.0} ops/s", m.median_bps())
        } else {
            format!("{} MB/s", crate::units::mbps(m.median_bps()))
        };
        progress.set_message(format!(
            "{point} x{}: {} {rate}",
            ids[k].1, labels[ids[k].0]
        ));
    });
    let mut out = Vec::new();
    for (((i, threads), ws), res) in ids.into_iter().zip(&workers).zip(results) {
        let checked = res.and_then(|m| {
            ws.iter().try_for_each(Worker::check_output)?;
            Ok(m)
        });
        match checked {
            Ok(m) if !m.samples_bps.is_empty() => {
                let mut notes = found[i].notes(group.alg, group.direction);
                if group.alg.is_legacy() {
                    notes.insert(0, crate::algorithms::LEGACY_NOTE.into());
                }
                if threads
                    > std::thread::available_parallelism()
                        .map(|n| n.get())
                        .unwrap_or(1)
                {
                    notes.push("more threads than logical CPUs".into());
                }
                out.push(((i, threads), m, notes));
            }
            Ok(_) => {} // interrupted before its first trial
            Err(e) => exclusions.push(refusal(labels[i].clone(), group, e.to_string())),
        }
    }
    out
}

/// Kernel paths do their work outside our threads: sample the whole system.
fn system_wide(imp: &dyn Implementation) -> bool {
    !matches!(imp.access(), impls::Access::InProcess)
}

/// cryptobench's own process: its worker threads are created per trial, and perf -p
/// follows new threads; the main thread sleeps in join and takes no cpu-clock samples.
fn target(imp: &dyn Implementation) -> crate::profile::Target {
    if system_wide(imp) {
        crate::profile::Target::SystemWide
    } else {
        crate::profile::Target::Pids(vec![std::process::id() as i32])
    }
}

fn one_per_impl(g: &Group) -> Vec<Group> {
    g.impls
        .iter()
        .map(|&i| Group {
            impls: vec![i],
            ..g.clone()
        })
        .collect()
}

fn refusal(label: String, group: &Group, reason: String) -> Exclusion {
    plan::excluded(
        &label,
        group.alg,
        ExclusionKind::Refused,
        Some(group.size),
        if group.alg.kind().is_public_key() {
            format!("{}: {reason}", group.direction)
        } else {
            format!("{} at {} bytes: {reason}", group.direction, group.size)
        },
    )
}

fn to_record(
    run_id: &str,
    imp: &dyn Implementation,
    label: &str,
    (g, threads): (&Group, usize),
    m: &Measured,
    tsc_hz: Option<f64>,
    notes: Vec<String>,
) -> SpeedRecord {
    let median = m.median_bps();
    let (lo, hi, cov) = stats::median_ci(&m.samples_bps);
    let per_thread: Vec<f64> = m
        .per_thread_samples
        .iter()
        .map(|s| stats::median(s))
        .collect();
    let thread_s = m.wall_s * threads as f64;
    let pct = |x: f64| {
        if thread_s > 0.0 {
            x / thread_s * 100.0
        } else {
            0.0
        }
    };
    let spread = stats::spread_pct(&m.samples_bps);
    let ci_pct = stats::ci_half_width_pct(lo, hi, median);
    let trials = m.samples_bps.len() as u32;
    let cpu_median = stats::median(&m.cpu_samples_bps);
    let (cpu_lo, cpu_hi, _) = stats::median_ci(&m.cpu_samples_bps);
    // In-process work runs only on the measuring threads, so there the two estimates
    // must agree; a kernel path's work may run elsewhere, so its CPU figure says less.
    let in_process = imp.access() == crate::impls::Access::InProcess;
    let cpu_noise = in_process
        && (stats::ci_half_width_pct(cpu_lo, cpu_hi, cpu_median) > NOISY_CI_PCT
            || m.off_cpu_pct() > NOISY_OFF_CPU_PCT);
    let per_thread_median = stats::median(&per_thread);
    // Public-key operations: the samples count operations, not bytes.
    let ops = g.alg.kind().is_public_key();
    let ops_only = |x: Vec<f64>| if ops { Some(x) } else { None };
    Record {
        kind: crate::record::LineKind::Record,
        schema: SCHEMA,
        run_id: run_id.into(),
        workload: crate::record::Workload::Speed,
        implementation: imp.name().into(),
        impl_version: imp.version(),
        variant: imp.variant(),
        label: label.into(),
        throughput_bps: if ops { f64::NAN } else { median },
        throughput_bps_ci: (!ops).then_some([lo, hi]),
        samples_bps: if ops {
            Vec::new()
        } else {
            m.samples_bps.clone()
        },
        wall_s: m.wall_s,
        cpu_user_s: Some(m.cpu.user),
        cpu_sys_s: Some(m.cpu.sys),
        cpu_s_per_gb: (m.bytes > 0).then(|| m.cpu.total() / (m.bytes as f64 / 1e9)),
        others_cpu_pct: Some(m.others_cpu_pct()),
        disturbed: m.disturbed_trials() > 0,
        notes,
        profile: None,
        dut: None,
        dut_agent_cpu_pct: None,
        data: SpeedData {
            access: imp.access(),
            library: imp.details().path,
            driver: imp.driver(g.alg),
            alg: g.alg,
            direction: g.direction,
            size: g.size as u64,
            threads: threads as u32,
            ci_level: cov,
            per_thread_bps: if ops { Vec::new() } else { per_thread.clone() },
            trials,
            bytes: m.bytes,
            calls: m.calls,
            batch: m.batch,
            ops_per_s: if ops { median } else { median / g.size as f64 },
            ops_per_s_ci: ops.then_some([lo, hi]),
            per_thread_ops_per_s: ops_only(per_thread),
            samples_ops_per_s: ops_only(m.samples_bps.clone()),
            cpu_load_pct: pct(m.cpu.total()),
            cpu_user_pct: pct(m.cpu.user),
            cpu_sys_pct: pct(m.cpu.sys),
            tsc_cycles_per_byte: tsc_hz
                .filter(|_| per_thread_median > 0.0 && !ops)
                .map(|hz| hz / per_thread_median),
            scaling_efficiency: None,
            spread_pct: spread,
            noisy: ci_pct > NOISY_CI_PCT
                || stats::bulk_too_spread(&m.samples_bps)
                || m.disturbed_trials() * 3 > trials
                || cpu_noise,
            disturbed_trials: m.disturbed_trials(),
            scaling_efficiency_ci: None,
            ci_pct: Some(ci_pct),
            stop_reason: m.stop,
            // Bytes per CPU-second: public-key operations have no bytes.
            throughput_cpu_bps: (!ops).then_some(cpu_median),
            throughput_cpu_bps_ci: (!ops).then_some([cpu_lo, cpu_hi]),
            clock: crate::sys::clock::merge(&m.clocks),
        },
    }
}

/// A point is noisy when its median's CI half-width (wall-clock, or per CPU-second) is
/// wider than this, in percent.
const NOISY_CI_PCT: f64 = 5.0;
/// ... or when its threads were off the CPU for more than this share of the trials.
const NOISY_OFF_CPU_PCT: f64 = 5.0;
