//! tls as a `driver::Workload`: plan (build the bench, time each suite's cipher alone),
//! measure one point at a time, and stop everything at the end.

use super::bench::{Bench, Inputs};
use super::plan::{self, Point};
use super::point::{self, Outcome};
use super::primitive::{self, CipherAlone, ServerCrypto};
use super::args::TlsArgs;
use crate::driver::{self, Ctx, Plan, Workload};
use crate::failure::Failure;
use crate::profile::ProfileField;
use crate::record::tls::TlsData;
use crate::record::{AnalysisInputs, Exclusion, ExclusionKind, Record};
use crate::sys;
use std::time::Duration;

pub struct Tls {
    args: TlsArgs,
    inputs: Inputs,
    bench: Option<Bench>,
    points: Vec<Point>,
    /// Each suite's record protection timed in-process before any load.
    alone: Vec<CipherAlone>,
    /// `--handshake`: the handshake's public-key operations timed alone.
    handshake: Option<primitive::HandshakePrimitives>,
}

impl Tls {
    pub fn new(args: TlsArgs, inputs: Inputs) -> Self {
        Tls {
            args,
            inputs,
            bench: None,
            points: Vec::new(),
            alone: Vec::new(),
            handshake: None,
        }
    }
}

/// The one library every server of the run loads, as this process can load it to time
/// the crypto alone; why not, when the servers run on several or on one it cannot load.
fn server_crypto(b: &Bench) -> Result<ServerCrypto, String> {
    let first = b.servers.first().map(|s| s.lib()).ok_or("no server")?;
    if b.servers.iter().any(|s| s.lib().name != first.name) {
        return Err("the servers run on several libraries".into());
    }
    if let Some(build) = first.as_build() {
        return Ok(ServerCrypto::Build(build.libcrypto.clone()));
    }
    match first.name.as_str() {
        "system" => Ok(ServerCrypto::System),
        "aws-lc" => Ok(ServerCrypto::AwsLc),
        other => Err(format!("this process cannot load {other}")),
    }
}

fn exclusion(b: &Bench, p: &Point, kind: ExclusionKind, reason: String) -> Exclusion {
    let mut point: std::collections::BTreeMap<String, crate::record::Coordinate> = [
        ("suite".to_string(), p.suite(b).into()),
        ("content".to_string(), p.content.label().into()),
        ("file_size".to_string(), p.content.size().into()),
        ("concurrency".to_string(), u64::from(p.concurrency).into()),
    ]
    .into();
    if let plan::What::Suite(i) = p.what {
        if let Some(g) = &b.suites[i].group {
            point.insert("group".into(), g.clone().into());
        }
    }
    if let Some(tag) = p.tag(b) {
        point.insert("server".into(), tag.into());
    }
    Exclusion {
        workload: crate::record::Workload::Tls,
        implementation: b.implementation(p.server),
        kind,
        reason,
        point,
    }
}

impl Workload for Tls {
    type Data = TlsData;

    fn name(&self) -> &'static str {
        "tls"
    }

    fn plan(&mut self) -> Result<Plan, Failure> {
        let mut b = Bench::build(&self.args, &mut self.inputs)?;
        // The cipher alone, on the servers' own library, before any load.
        let tls_suites: Vec<_> = b.suites.iter().filter(|s| s.cipher.is_some()).collect();
        let crypto = match server_crypto(&b) {
            Ok(c) => c,
            Err(why) => {
                b.notes.push(format!(
                    "the ciphers and handshake operations alone are timed on the system OpenSSL: {why}"
                ));
                ServerCrypto::System
            }
        };
        let (alone, notes) = primitive::measure(&tls_suites, Duration::from_millis(150), &crypto);
        b.notes.extend(notes);
        self.alone = alone;
        if self.args.handshake {
            let (h, notes) =
                primitive::measure_handshake(self.args.cert, Duration::from_millis(300), &crypto);
            b.notes.extend(notes);
            self.handshake = h;
        }
        let (points, unsplittable, cannot) = plan::plan(&b, &self.inputs.concurrency);
        let mut exclusions: Vec<Exclusion> = unsplittable
            .iter()
            .map(|p| exclusion(&b, p, ExclusionKind::Skipped, point::MIX_NEEDS_TWO.into()))
            .collect();
        // Files a server cannot serve (HAProxy's one buffer): not offered, with the reason.
        for (p, why) in &cannot {
            eprintln!("cryptobench tls: {}: not available: {why}", p.label(&b));
            exclusions.push(exclusion(&b, p, ExclusionKind::NotOffered, why.clone()));
        }
        // --groups this OpenSSL (or the suite) cannot do: not available, with the reason.
        for (suite, group, why) in &b.group_gaps {
            eprintln!("cryptobench tls: {suite} {group}: not available: {why}");
            exclusions.push(Exclusion {
                workload: crate::record::Workload::Tls,
                implementation: b.implementation(0),
                kind: ExclusionKind::NotOffered,
                reason: why.clone(),
                point: [
                    ("suite".to_string(), suite.clone().into()),
                    ("group".to_string(), group.clone().into()),
                ]
                .into(),
            });
        }
        // The first line names the ports, so that a watcher can check them.
        eprintln!(
            "cryptobench tls: {} points of {} s on {}, generator {}; server CPUs {}, generator CPUs {}; ports {}",
            points.len(),
            b.duration,
            b.impl_version,
            b.generator.name(),
            sys::cpu::cpu_list(&b.server_cpus),
            sys::cpu::cpu_list(&b.gen_cpus),
            b.ports.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(",")
        );
        let plan = Plan {
            points: points.len(),
            seconds: points.len() as f64 * (b.duration + 1.0),
            libraries: b.libraries.clone(),
            unavailable: b.unavailable.clone(),
            settings: b.settings(&self.inputs.concurrency, &self.inputs.sizes),
            exclusions,
        };
        self.points = points;
        self.bench = Some(b);
        Ok(plan)
    }

    fn point_excluded(&self, index: usize, kind: ExclusionKind, reason: &str) -> Option<Exclusion> {
        let (b, p) = (self.bench.as_ref()?, self.points.get(index)?);
        Some(exclusion(b, p, kind, reason.into()))
    }

    fn measure(
        &mut self,
        index: usize,
        ctx: &Ctx,
    ) -> Result<Vec<driver::Outcome<TlsData>>, Failure> {
        let (Some(b), Some(p)) = (self.bench.as_mut(), self.points.get(index).copied()) else {
            return Ok(Vec::new());
        };
        let label = p.label(b);
        ctx.progress.set_message(label.clone());
        let n = format!("[{}/{}] {label}", index + 1, self.points.len());
        Ok(match point::run(b, &p, &ctx.environment.run_id, false)? {
            Outcome::Record(mut r) => {
                // (A keep-alive control point of a --handshake run has no handshakes.)
                if let Some(h) = self.handshake.as_ref().filter(|_| r.data.handshake) {
                    r.data.handshake_cost = primitive::handshake_cost(h, &r.data);
                }
                if b.sampler.is_some() {
                    r.profile = sampled_rerun(b, &p, &ctx.environment.run_id)?;
                }
                eprintln!("{n}: {}", summary(&r));
                if let Some(f) = &r.profile {
                    ctx.progress.suspend(|| {
                        eprint!(
                            "{}",
                            crate::profile::table::render(&label, f, Some(r.throughput_bps))
                        )
                    });
                }
                vec![driver::Outcome::Record(*r)]
            }
            Outcome::Refused(reason) => {
                eprintln!("{n}: refused: {reason}");
                vec![driver::Outcome::Excluded(exclusion(
                    b,
                    &p,
                    ExclusionKind::Refused,
                    reason,
                ))]
            }
            Outcome::Interrupted => Vec::new(),
        })
    }

    fn nothing_measured(&self, _exclusions: &[Exclusion]) -> String {
        "nothing measured: every point was refused (see above)".into()
    }

    fn analysis_inputs(&self) -> AnalysisInputs {
        AnalysisInputs::TlsCipherAlone(self.alone.clone())
    }

    fn finish(&mut self) {
        // Everything started is gone before the report is printed.
        if let Some(b) = &self.bench {
            b.guard.release();
        }
    }
}

/// The same point again under perf: its profile, with the throughput it reached while
/// sampled (the record keeps the unsampled run's numbers).
fn sampled_rerun(
    b: &mut Bench,
    p: &Point,
    run_id: &str,
) -> Result<Option<Box<ProfileField>>, Failure> {
    Ok(match point::run(b, p, run_id, true)? {
        Outcome::Record(r) => r.profile.map(|mut f| {
            if let ProfileField::Measured(m) = &mut *f {
                m.throughput_bps = Some(r.throughput_bps);
            }
            f
        }),
        Outcome::Refused(why) => Some(Box::new(ProfileField::Unavailable {
            unavailable: format!("the sampled run was refused: {why}"),
        })),
        Outcome::Interrupted => None,
    })
}

/// "812 req/s, 3.35 MB/s, server 45% CPU, wrk 60% CPU", for the progress line.
fn summary(r: &Record<TlsData>) -> String {
    format!(
        "{:.0} req/s, {} MB/s, server {:.0}% CPU, {} {:.0}% CPU{}{}",
        r.requests_per_s,
        crate::units::mbps(r.throughput_bps),
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
                r.others_cpu_pct.unwrap_or(0.0)
            )
        } else {
            String::new()
        }
    )
}
