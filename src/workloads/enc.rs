//! `openssl enc` over a RAM-disk-sized file (study 2's application case), timed end to
//! end and written as ordinary speed records through the driver (impl `openssl-enc`,
//! access `process`, size = the file's bytes, one trial per round), so that `report` and
//! `compare` read them like any other point. The file lives in a private tmpfs dir that
//! the guard removes.

use crate::algorithms::{Algorithm, Direction};
use crate::analyse::stats;
use crate::driver::{Ctx, Outcome, Plan, Workload};
use crate::failure::Failure;
use crate::record::speed::{Access, SpeedData};
use crate::record::{Record, SCHEMA};
use crate::sys::guard::Guard;
use crate::sys::spawn::{spawn, Options};
use anyhow::anyhow;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

pub const IMPL: &str = "openssl-enc";
const DIRECTIONS: [Direction; 2] = [Direction::Enc, Direction::Dec];

pub struct OpensslEnc {
    pub cipher: Algorithm,
    pub bytes: u64,
    pub rounds: u32,
    /// Environment of every `openssl enc` (an ISA mask), and the variant it makes.
    pub env: Vec<(String, String)>,
    pub variant: Option<String>,
    guard: Guard,
    program: PathBuf,
    version: String,
    dir: PathBuf,
}

impl OpensslEnc {
    pub fn new(
        cipher: Algorithm,
        bytes: u64,
        rounds: u32,
        env: Vec<(String, String)>,
        variant: Option<String>,
    ) -> OpensslEnc {
        OpensslEnc {
            cipher,
            bytes,
            rounds,
            env,
            variant,
            guard: Guard::new(),
            program: PathBuf::new(),
            version: String::new(),
            dir: PathBuf::new(),
        }
    }

    fn label(&self) -> String {
        crate::analyse::paths::label(IMPL, &self.version, 1, self.variant.as_deref())
    }

    /// One `openssl enc` of `input` into `output`: wall seconds, and CPU (user, sys) of the
    /// child from the change in this process's children's usage.
    fn once(&self, decrypt: bool, input: &str, output: &str) -> anyhow::Result<(f64, f64, f64)> {
        let (key, iv) = ("00".repeat(32), "00".repeat(16));
        let mut cmd = Command::new(&self.program);
        cmd.args(["enc", &format!("-{}", self.cipher), "-K", &key, "-iv", &iv])
            .arg("-in")
            .arg(self.dir.join(input))
            .arg("-out")
            .arg(self.dir.join(output))
            .args(decrypt.then_some("-d"))
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let before = children_cpu();
        let t = Instant::now();
        let mut c = spawn(&self.guard, &mut cmd, "openssl enc", Options::default())?;
        let st = c.wait()?;
        let wall = t.elapsed().as_secs_f64();
        self.guard.stop_process(c.id() as i32);
        if !st.success() {
            return Err(anyhow!(
                "openssl enc -{} {} failed ({st})",
                self.cipher,
                if decrypt { "-d" } else { "" }
            ));
        }
        let after = children_cpu();
        Ok((wall, after.0 - before.0, after.1 - before.1))
    }
}

/// User and system CPU seconds of the children waited for so far.
fn children_cpu() -> (f64, f64) {
    // SAFETY: getrusage fills the struct it is given; zeroed is a valid rusage.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) } != 0 {
        return (0.0, 0.0);
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(u.ru_utime), s(u.ru_stime))
}

/// `openssl version`: the first line, or why it could not be read.
fn version(program: &Path) -> String {
    Command::new(program)
        .arg("version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.lines().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

/// A private dir in tmpfs (/dev/shm), removed with the guard: the study's RAM disk.
fn tmpfs_dir(guard: &Guard) -> anyhow::Result<PathBuf> {
    guard
        .temp_dir_in(Path::new("/dev/shm"), "study")
        .map_err(|e| anyhow!("{e} (tmpfs)"))
}

/// The plaintext: `bytes` of incompressible-looking data.
fn write_plain(path: &Path, bytes: u64) -> anyhow::Result<()> {
    let mut f = std::fs::File::create(path)?;
    let block: Vec<u8> = (0..1 << 20)
        .map(|i: u32| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let mut left = bytes;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        f.write_all(&block[..n])?;
        left -= n as u64;
    }
    Ok(())
}

impl Workload for OpensslEnc {
    type Data = SpeedData;
    fn name(&self) -> &'static str {
        "speed"
    }
    fn plan(&mut self) -> Result<Plan, Failure> {
        self.program = crate::sys::program::find_program("openssl", None).ok_or_else(|| {
            Failure::Unavailable("openssl (the command) not found: apt-get install openssl".into())
        })?;
        self.version = version(&self.program);
        self.dir = tmpfs_dir(&self.guard).map_err(Failure::runtime)?;
        write_plain(&self.dir.join("plain"), self.bytes).map_err(Failure::runtime)?;
        Ok(Plan {
            points: DIRECTIONS.len(),
            seconds: self.bytes as f64 / 1e8 * self.rounds as f64 * 2.0,
            libraries: vec![crate::record::Library {
                implementation: IMPL.into(),
                label: Some(self.label()),
                version: self.version.clone(),
                variant: self.variant.clone(),
                access: Some("process".into()),
                details: crate::impls::details::Details {
                    env: Some(self.env.clone()),
                    ..crate::impls::details::Details::at(self.program.display().to_string())
                },
            }],
            unavailable: Vec::new(),
            settings: crate::record::WorkloadSettings::Process(
                crate::record::speed::ProcessSettings {
                    program: "openssl enc".into(),
                    cipher: self.cipher.name().into(),
                    bytes: self.bytes,
                    rounds: self.rounds,
                    dir: "tmpfs (/dev/shm)".into(),
                },
            ),
            exclusions: Vec::new(),
        })
    }
    fn measure(&mut self, index: usize, ctx: &Ctx) -> Result<Vec<Outcome<SpeedData>>, Failure> {
        let decrypt = index == 1;
        let (input, output) = if decrypt {
            ("sealed", "opened")
        } else {
            ("plain", "sealed")
        };
        let (mut samples, mut wall, mut user, mut sys) = (Vec::new(), 0.0, 0.0, 0.0);
        for _ in 0..self.rounds {
            if crate::measure::stopped() {
                break;
            }
            let (w, u, s) = self
                .once(decrypt, input, output)
                .map_err(Failure::runtime)?;
            samples.push(self.bytes as f64 / w);
            wall += w;
            user += u;
            sys += s;
        }
        if samples.is_empty() {
            return Ok(Vec::new());
        }
        let median = stats::median(&samples);
        let (lo, hi, cov) = stats::median_ci(&samples);
        // One trial has no interval (docs/records.md): null, not [x, x].
        let ci = (samples.len() > 1).then_some([lo, hi]);
        let total = self.bytes * samples.len() as u64;
        let load = if wall > 0.0 {
            (user + sys) / wall * 100.0
        } else {
            0.0
        };
        Ok(vec![Outcome::Record(Record {
            kind: crate::record::LineKind::Record,
            schema: SCHEMA,
            run_id: ctx.environment.run_id.clone(),
            workload: crate::record::Workload::Speed,
            implementation: IMPL.into(),
            impl_version: self.version.clone(),
            variant: self.variant.clone(),
            label: self.label(),
            throughput_bps: median,
            throughput_bps_ci: ci,
            samples_bps: samples.clone(),
            wall_s: wall,
            cpu_user_s: Some(user),
            cpu_sys_s: Some(sys),
            cpu_s_per_gb: Some((user + sys) / (total as f64 / 1e9)),
            others_cpu_pct: Some(0.0),
            disturbed: false,
            notes: vec![format!(
                "`openssl enc -{}{}` of a {}-byte file in tmpfs, timed end to end (process start, reading, writing): one trial per round",
                self.cipher,
                if decrypt { " -d" } else { "" },
                self.bytes
            )],
            profile: None,
            dut: None,
            dut_agent_cpu_pct: None,
            data: SpeedData {
                access: Access::Process,
                driver: None,
                library: Some(self.program.display().to_string()),
                alg: self.cipher,
                direction: DIRECTIONS[index],
                size: self.bytes,
                threads: 1,
                ci_level: cov,
                per_thread_bps: vec![median],
                trials: samples.len() as u32,
                bytes: total,
                calls: samples.len() as u64,
                batch: 1,
                ops_per_s: median / self.bytes as f64,
                ops_per_s_ci: None,
                per_thread_ops_per_s: None,
                samples_ops_per_s: None,
                cpu_load_pct: load,
                cpu_user_pct: if wall > 0.0 { user / wall * 100.0 } else { 0.0 },
                cpu_sys_pct: if wall > 0.0 { sys / wall * 100.0 } else { 0.0 },
                tsc_cycles_per_byte: None,
                scaling_efficiency: None,
                scaling_efficiency_ci: None,
                spread_pct: stats::spread_pct(&samples),
                noisy: stats::bulk_too_spread(&samples),
                disturbed_trials: 0,
                ci_pct: ci.map(|[lo, hi]| stats::ci_half_width_pct(lo, hi, median)),
                stop_reason: None,
                throughput_cpu_bps: (user + sys > 0.0).then(|| total as f64 / (user + sys)),
                throughput_cpu_bps_ci: None,
                clock: None,
            },
        })])
    }
    fn finish(&mut self) {
        self.guard.release();
    }
}
