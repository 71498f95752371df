//! `--profile`: where a point's CPU time goes, sampled with perf and sorted into
//! categories (AES, GHASH, ..., kernel network stack, scheduler), with Wilson intervals,
//! the crypto share and its Amdahl ceiling, and optionally folded stacks and flame graphs.
use anyhow::anyhow;

pub mod classify;
mod decode;
mod elf;
mod flame;
pub mod perf;
pub mod table;

use crate::analyse::share::{amdahl_ceiling, Share};
pub use crate::record::profile::{Profile, ProfileField};
use crate::sys::guard::Guard;
use classify::{Category, Classifier};
pub use perf::Target;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Shares of `samples`, classified.
pub fn from_samples(samples: &[perf::Sample]) -> (Profile, BTreeMap<String, u64>) {
    let mut classifier = Classifier::default();
    let mut counts: BTreeMap<Category, u64> = BTreeMap::new();
    let mut folded: BTreeMap<String, u64> = BTreeMap::new();
    let mut idle_samples = 0;
    for s in samples {
        let c = classifier.classify(s);
        if s.tid == 0 && c.category == Category::SchedIdle {
            idle_samples += 1;
            continue;
        }
        *counts.entry(c.category).or_default() += 1;
        *folded.entry(c.stack.join(";")).or_default() += 1;
    }
    let (n, categories) = shares(&counts);
    let crypto = crypto(&counts);
    let profile = Profile {
        samples: n,
        event: perf::EVENT.into(),
        idle_samples,
        unknown_share: categories.get("unknown").map_or(0.0, |s| s.share),
        amdahl_ceiling: amdahl_ceiling(crypto.share),
        crypto,
        categories,
        throughput_bps: None,
        flame_graph: None,
    };
    (profile, folded)
}

/// Shares of every category seen, keyed by category name.
fn shares(counts: &BTreeMap<Category, u64>) -> (u64, BTreeMap<String, Share>) {
    let n: u64 = counts.values().sum();
    let map = counts
        .iter()
        .filter(|(_, &k)| k > 0)
        .map(|(c, &k)| (c.name().to_string(), Share::of(k, n)))
        .collect();
    (n, map)
}

/// The crypto share (all cipher, MAC and hash categories together) with its interval.
fn crypto(counts: &BTreeMap<Category, u64>) -> Share {
    let n: u64 = counts.values().sum();
    let k: u64 = counts
        .iter()
        .filter(|(c, _)| c.is_crypto())
        .map(|(_, k)| k)
        .sum();
    Share::of(k, n)
}

/// Profiling for a whole run: checked once before anything starts.
pub struct Sampler {
    dir: Option<PathBuf>,
    /// Set when system-wide sampling (kernel paths) is not permitted though per-process is.
    system_wide_unavailable: Option<String>,
    noted: std::cell::Cell<bool>,
}

/// Checks `--profile-dir` (created if missing, must be writable) before anything starts.
pub fn check_dir(dir: &Path) -> anyhow::Result<()> {
    let unwritable = |e: std::io::Error| {
        anyhow!(
            "--profile-dir {}: not writable ({e}); give a directory you can write to",
            dir.display()
        )
    };
    std::fs::create_dir_all(dir).map_err(unwritable)?;
    let probe = dir.join(format!(".cryptobench-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(unwritable)?;
    let _ = std::fs::remove_file(probe);
    Ok(())
}

impl Sampler {
    /// Err: perf cannot sample here at all (the caller exits 2 naming the fix).
    pub fn new(dir: Option<PathBuf>, system_wide_needed: bool) -> anyhow::Result<Sampler> {
        if let Some(d) = &dir {
            check_dir(d)?;
        }
        let guard = Guard::new();
        perf::check(false, &guard)?;
        let system_wide_unavailable = if system_wide_needed {
            perf::check(true, &guard).err().map(|e| e.to_string())
        } else {
            None
        };
        Ok(Sampler {
            dir,
            system_wide_unavailable,
            noted: Default::default(),
        })
    }

    /// Starts sampling `target` (events still off) under `guard`.
    pub fn start<'g>(&self, guard: &'g Guard, target: &Target) -> anyhow::Result<Window<'g>> {
        if let (Target::SystemWide, Some(why)) = (target, &self.system_wide_unavailable) {
            if !self.noted.replace(true) {
                eprintln!("cryptobench: no profile for kernel paths: {why}");
            }
            return Err(anyhow::Error::msg(why.clone()));
        }
        let dir = guard.temp_dir("perf")?;
        Ok(Window {
            recording: perf::Recording::start(guard, target, &dir)?,
        })
    }

    /// Ends the window: classify, and with --profile-dir keep folded stacks and an SVG.
    pub fn finish(&self, window: Window, label: &str) -> ProfileField {
        match self.collect(window, label) {
            Ok(p) => ProfileField::Measured(p),
            Err(why) => {
                eprintln!("cryptobench: no profile for {label}: {why}");
                ProfileField::Unavailable {
                    unavailable: why.to_string(),
                }
            }
        }
    }

    fn collect(&self, window: Window, label: &str) -> anyhow::Result<Profile> {
        let data = window.recording.finish()?;
        self.profile(&perf::script(&data)?, label)
    }

    /// Ends a window and profiles each part apart: the samples of its threads (e.g. each
    /// end of one connection, out of a system-wide window); other threads' are left out.
    /// One field per part, in order.
    pub fn finish_split(
        &self,
        window: Window,
        parts: &[(String, std::collections::BTreeSet<i32>)],
    ) -> Vec<ProfileField> {
        let samples = window
            .recording
            .finish()
            .and_then(|data| perf::script(&data));
        parts
            .iter()
            .map(|(label, tids)| {
                let mine = samples.as_ref().map(|all| {
                    all.iter()
                        .filter(|s| tids.contains(&s.tid))
                        .cloned()
                        .collect::<Vec<_>>()
                });
                match mine
                    .map_err(|e| anyhow!("{e}"))
                    .and_then(|m| self.profile(&m, label))
                {
                    Ok(p) => ProfileField::Measured(p),
                    Err(why) => {
                        eprintln!("cryptobench: no profile for {label}: {why}");
                        ProfileField::Unavailable {
                            unavailable: why.to_string(),
                        }
                    }
                }
            })
            .collect()
    }

    /// The profile of `samples`, with its flame graph under --profile-dir.
    fn profile(&self, samples: &[perf::Sample], label: &str) -> anyhow::Result<Profile> {
        let (mut profile, folded) = from_samples(samples);
        if let Some(dir) = &self.dir {
            let title = format!("{label}: {} {} samples", profile.samples, perf::EVENT);
            profile.flame_graph = Some(flame::write(dir, &flame::stem(label), &title, &folded)?);
        }
        Ok(profile)
    }
}

/// A started perf, waiting for the measured window.
pub struct Window<'g> {
    recording: perf::Recording<'g>,
}

impl Window<'_> {
    pub fn enable(&mut self) -> anyhow::Result<()> {
        self.recording.enable()
    }
}

/// Runs `measure` (which returns its throughput) under perf on `target`, and returns the
/// point's profile, or why there is none (printed).
pub fn sample_point(
    sampler: &Sampler,
    target: Target,
    label: &str,
    measure: impl FnOnce() -> Option<f64>,
) -> ProfileField {
    let guard = Guard::new();
    let started = sampler.start(&guard, &target).and_then(|mut w| {
        w.enable()?;
        Ok(w)
    });
    let window = match started {
        Ok(w) => w,
        Err(why) => {
            if !matches!(target, Target::SystemWide) {
                eprintln!("cryptobench: no profile for {label}: {why}");
            }
            return ProfileField::Unavailable {
                unavailable: why.to_string(),
            };
        }
    };
    let bps = measure();
    let mut field = sampler.finish(window, label);
    if let ProfileField::Measured(p) = &mut field {
        p.throughput_bps = bps;
    }
    field
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_cpus_are_left_out_but_softirq_on_them_is_not() {
        let text = "swapper 0 \n\tffffffff98817a0b native_safe_halt ([kernel.kallsyms])\n\tffffffff97eeddc6 do_idle ([kernel.kallsyms])\n\n\
swapper 0 \n\tffffffff98817a0c tcp_v4_rcv ([kernel.kallsyms])\n\tffffffff97eeddc6 do_idle ([kernel.kallsyms])\n\n\
cryptobench 7 \n\tffffffff98817a0d entry_SYSCALL_64 ([kernel.kallsyms])\n\n\
cryptobench 7 \n\tffffffff98817a0e __schedule ([kernel.kallsyms])\n";
        let (p, folded) = from_samples(&perf::parse_script(text));
        assert_eq!((p.samples, p.idle_samples), (3, 1));
        assert_eq!(p.categories["kernel-net"].samples, 1);
        // A thread's own wait for the CPU is still its cost.
        assert_eq!(p.categories["sched-idle"].samples, 1);
        assert!(folded.keys().all(|k| !k.contains("native_safe_halt")));
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["idle_samples"], 1);
    }

    #[test]
    fn shares_sum_to_one_and_crypto_groups_the_primitives() {
        let counts = BTreeMap::from([
            (Category::Aes, 30),
            (Category::Ghash, 10),
            (Category::KernelNet, 50),
            (Category::Unknown, 10),
        ]);
        let (n, s) = shares(&counts);
        assert_eq!(n, 100);
        let total: f64 = s.values().map(|x| x.share).sum();
        assert!((total - 1.0).abs() < 1e-12);
        let c = crypto(&counts);
        assert_eq!(c.samples, 40);
        assert!(c.ci[0] < 0.4 && c.ci[1] > 0.4);
        assert!((amdahl_ceiling(0.2) - 1.25).abs() < 1e-12);
    }
}
