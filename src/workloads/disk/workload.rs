//! disk as a `driver::Workload`: the inputs, root and programs checked in `new`; the RAM
//! disk made, dm-crypt checked and every cipher and driver tried once in `plan` (a
//! refusal carries the kernel's reason, before anything is measured); one mapping per
//! point (cipher, driver, queue option), verified, then every fio load on it and, once
//! per load, on the bare RAM disk; everything removed in `finish`.

use super::mapping::{self, Programs, RamDisk};
use super::args::{Cipher, DiskArgs, Load};
use super::{fio, primitive};
use crate::driver::{self, Ctx, Plan, Workload};
use crate::failure::Failure;
use crate::record::disk::{DiskData, DiskRecord, DiskSettings};
use crate::record::Exclusion;
use crate::workloads::e2e::window::{CpuWindow, Watched};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Bytes written and read back by the verify pass of each mapping.
const VERIFY_BYTES: u64 = 16 << 20;

/// One mapping to measure: the table's cipher (the asked one, or a capi: driver for it),
/// and the queue option.
#[derive(Clone, Debug)]
struct Point {
    /// What the table says: the cipher, or the --disk-driver spec with its key size.
    table: Cipher,
    /// The cipher the record names.
    cipher: Cipher,
    queues: &'static str,
}

pub struct Disk {
    ciphers: Vec<Cipher>,
    drivers: Vec<Cipher>,
    queues: Vec<&'static str>,
    loads: Vec<Load>,
    size: u64,
    duration: u32,
    progs: Programs,
    disk: Option<RamDisk>,
    points: Vec<Point>,
    /// The bare RAM disk's figures per load, measured once.
    bare: HashMap<usize, fio::Result>,
    /// AF_ALG's figure per driver bound and key size.
    primitive: HashMap<(String, u32), Option<f64>>,
    release: String,
    /// --profile: every load is run again under perf, sampling every CPU (the
    /// encryption runs in kernel workers).
    sampler: Option<crate::profile::Sampler>,
}

impl Disk {
    /// Checks every input, root and the programs; nothing is started.
    pub fn new(args: DiskArgs) -> Result<Disk, Failure> {
        let duration = super::args::parse_duration(args.common.time.unwrap_or(super::args::DEFAULT_DURATION))
            .map_err(Failure::input)?;
        let ciphers = args.ciphers.0;
        let drivers = args.disk_driver.map_or(Vec::new(), |d| d.0);
        let (queues, loads, size) = (args.queues.0, args.patterns.0, args.size);
        if !crate::sys::is_root() {
            return Err(Failure::Unavailable(NEED_ROOT.into()));
        }
        let sampler = args
            .profile
            .then(|| crate::profile::Sampler::new(None, true))
            .transpose()
            .map_err(Failure::input)?;
        let progs = Programs {
            fio: program("fio")?,
            dmsetup: program("dmsetup")?,
            modprobe: program("modprobe")?,
        };
        Ok(Disk {
            ciphers,
            drivers,
            queues,
            loads,
            size,
            duration,
            progs,
            disk: None,
            points: Vec::new(),
            bare: HashMap::new(),
            primitive: HashMap::new(),
            release: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap_or_default()
                .trim()
                .to_string(),
            sampler,
        })
    }

    /// The ciphers a --disk-driver spec serves: those of the algorithm /proc/crypto
    /// names it by (learnt by binding it through AF_ALG) and of its IV mode.
    fn paired(&self, d: &Cipher, disk: &RamDisk) -> Result<Vec<Point>, Failure> {
        let algorithm = crate::kernel::af_alg_bind("skcipher", &d.kernel_name)
            .ok()
            .and_then(|_fd| {
                crate::kernel::proc_crypto()
                    .into_iter()
                    .find(|e| e.driver == d.kernel_name)
                    .map(|e| e.name)
            });
        let Some(algorithm) = algorithm else {
            // The kernel's own reason, from a mapping it refuses.
            let why = mapping::create(&self.progs, disk, d, "").err().map_or_else(
                || "the kernel took it, but AF_ALG cannot tell its algorithm".into(),
                |e| e.to_string(),
            );
            return Err(Failure::Input(format!("--disk-driver {}: {why}", d.spec)));
        };
        let points: Vec<Point> = self
            .ciphers
            .iter()
            .filter(|c| c.kernel_name == algorithm && c.iv_mode == d.iv_mode)
            .map(|c| Point {
                table: Cipher {
                    key_bits: c.key_bits,
                    iv_len: c.iv_len,
                    ..d.clone()
                },
                cipher: c.clone(),
                queues: "",
            })
            .collect();
        if points.is_empty() {
            return Err(Failure::Input(format!(
                "--disk-driver {} implements {algorithm} with IV mode {}: add a cipher of it to --ciphers",
                d.spec, d.iv_mode
            )));
        }
        Ok(points)
    }

    fn exclusion(&self, p: &Point, load: Option<&Load>, reason: String) -> Exclusion {
        Exclusion {
            workload: crate::record::Workload::Disk,
            implementation: "dm-crypt".into(),
            kind: crate::record::ExclusionKind::Failed,
            reason,
            point: [
                ("cipher".to_string(), p.table.spec.clone().into()),
                ("key_bits".to_string(), p.cipher.key_bits.to_string().into()),
                ("queues".to_string(), queues_name(p.queues).into()),
                (
                    "load".to_string(),
                    load.map(|l| format!("{} {} qd{}", l.pattern, l.block_size, l.iodepth))
                        .into(),
                ),
            ]
            .into(),
        }
    }

    /// The bare RAM disk's figures for load `k`, measured the first time they are asked.
    fn bare(&mut self, k: usize) -> anyhow::Result<fio::Result> {
        if let Some(r) = self.bare.get(&k) {
            return Ok(r.clone());
        }
        let disk = self
            .disk
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("no RAM disk"))?;
        let r = fio::measure(
            disk.guard(),
            &disk.dir,
            &self.progs.fio,
            &disk.path,
            disk.size,
            &self.loads[k],
            self.duration,
        )?;
        self.bare.insert(k, r.clone());
        Ok(r)
    }
}

/// The record's name of a queue option: the kernel's parameters, or "default".
fn queues_name(q: &str) -> String {
    if q.is_empty() {
        "default".into()
    } else {
        q.into()
    }
}

impl Workload for Disk {
    type Data = DiskData;

    fn name(&self) -> &'static str {
        "disk"
    }

    fn plan(&mut self) -> Result<Plan, Failure> {
        let probe = crate::sys::guard::Guard::new();
        let dir = probe.temp_dir("disk-probe").map_err(Failure::runtime)?;
        mapping::dm_crypt_usable(&probe, &dir, &self.progs).map_err(Failure::Unavailable)?;
        let disk = RamDisk::new(&self.progs, self.size)
            .map_err(|e| Failure::Unavailable(format!("cannot make a RAM disk: {e}")))?;
        // Every cipher once: an unknown one is refused with the kernel's reason now.
        for c in &self.ciphers {
            mapping::create(&self.progs, &disk, c, "")
                .map_err(|e| Failure::Input(format!("--ciphers {}: {e}", c.spec)))?;
        }
        let mut points = Vec::new();
        for c in &self.ciphers {
            points.push(Point {
                table: c.clone(),
                cipher: c.clone(),
                queues: "",
            });
        }
        for d in &self.drivers {
            points.extend(self.paired(d, &disk)?);
        }
        // Queue options outermost within a cipher: every option of one mapping together.
        let mut all = Vec::new();
        for p in &points {
            for &q in &self.queues {
                all.push(Point {
                    queues: q,
                    ..p.clone()
                });
            }
        }
        self.points = all;
        let settings = crate::record::WorkloadSettings::Disk(DiskSettings {
            disk_ciphers: self
                .ciphers
                .iter()
                .map(|c| format!("{}/{}", c.spec, c.key_bits))
                .collect(),
            disk_drivers: self.drivers.iter().map(|d| d.spec.clone()).collect(),
            queues: self.queues.iter().map(|q| queues_name(q)).collect(),
            patterns: self
                .loads
                .iter()
                .map(|l| format!("{} qd{}", l.pattern, l.iodepth))
                .collect(),
            device: disk.kind.into(),
            size_bytes: disk.size,
            duration_s: self.duration,
        });
        let version = |p: &std::path::Path| {
            crate::sys::program::version_line(p, &["--version"], |l| !l.trim().is_empty())
        };
        let libraries = [("fio", &self.progs.fio), ("dmsetup", &self.progs.dmsetup)]
            .into_iter()
            .map(|(name, p)| crate::record::Library {
                implementation: name.into(),
                label: Some(name.into()),
                version: version(p),
                access: Some("tool".into()),
                details: crate::impls::details::Details::at(p.display().to_string()),
                ..Default::default()
            })
            .collect();
        self.disk = Some(disk);
        let per_point = self.loads.len() as f64 * (self.duration as f64 + 1.0) + 3.0;
        Ok(Plan {
            points: self.points.len(),
            seconds: self.points.len() as f64 * per_point,
            libraries,
            unavailable: Vec::new(),
            settings,
            exclusions: Vec::new(),
        })
    }

    fn point_excluded(
        &self,
        index: usize,
        kind: crate::record::ExclusionKind,
        reason: &str,
    ) -> Option<Exclusion> {
        let p = self.points.get(index)?;
        let mut e = self.exclusion(p, None, reason.into());
        e.kind = kind;
        Some(e)
    }

    fn measure(
        &mut self,
        index: usize,
        ctx: &Ctx,
    ) -> Result<Vec<driver::Outcome<DiskData>>, Failure> {
        let Some(p) = self.points.get(index).cloned() else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        // The ceiling first, with no mapping on the RAM disk.
        for k in 0..self.loads.len() {
            if let Err(e) = self.bare(k) {
                return Err(Failure::Runtime(format!("fio on the bare RAM disk: {e}")));
            }
        }
        let Some(disk) = self.disk.as_ref() else {
            return Ok(out);
        };
        let label = crate::record::disk::label(
            &p.cipher.spec,
            p.cipher.key_bits,
            &p.table.kernel_name,
            &queues_name(p.queues),
        );
        ctx.progress.set_message(label.clone());
        let m = match mapping::create(&self.progs, disk, &p.table, p.queues) {
            Ok(m) => m,
            Err(e) => {
                out.push(driver::Outcome::Excluded(self.exclusion(
                    &p,
                    None,
                    e.to_string(),
                )));
                return Ok(out);
            }
        };
        let checked = fio::verify(
            m.guard(),
            &disk.dir,
            &self.progs.fio,
            &m.path,
            VERIFY_BYTES.min(disk.size),
        )
        .and_then(|_| mapping::encrypts(&m, disk));
        if let Err(e) = checked {
            out.push(driver::Outcome::Excluded(self.exclusion(
                &p,
                None,
                format!("the mapping failed its check: {e}"),
            )));
            return Ok(out);
        }
        let prim = self
            .primitive
            .entry((m.bound.driver.clone(), p.cipher.key_bits))
            .or_insert_with(|| {
                primitive::bytes_per_s(
                    &m.bound.driver,
                    p.cipher.key_bits,
                    p.cipher.iv_len,
                    Duration::from_secs(1),
                )
                .ok()
            })
            .to_owned();
        let label = crate::record::disk::label(
            &p.cipher.spec,
            p.cipher.key_bits,
            &m.bound.driver,
            &queues_name(p.queues),
        );
        for (k, load) in self.loads.iter().enumerate() {
            if crate::measure::stopped() {
                break;
            }
            // The machine's CPUs, and the kernel workers that last ran dm-crypt's queue
            // ("kworker/u4:1-kcryptd/254:0"; none with no-workqueue).
            let window = CpuWindow::start(Watched {
                kworker_queues: vec!["kcryptd/".into()],
                ..Watched::default()
            });
            let clock = crate::workloads::e2e::clock::ClockWatch::start(self.duration);
            let on_mapping = || {
                fio::measure(
                    m.guard(),
                    &disk.dir,
                    &self.progs.fio,
                    &m.path,
                    disk.size,
                    load,
                    self.duration,
                )
            };
            let t0 = Instant::now();
            let r = match on_mapping() {
                Ok(r) => r,
                Err(e) => {
                    out.push(driver::Outcome::Excluded(self.exclusion(
                        &p,
                        Some(load),
                        e.to_string(),
                    )));
                    continue;
                }
            };
            let wall = t0.elapsed().as_secs_f64();
            let throttled = clock.finish();
            let seen = window.finish(None);
            let kcryptd = (!seen.procs.is_empty()).then(|| seen.cpu_of(Some("kernel")).total());
            let busy = Some(seen.busy_s);
            let bare = self.bare.get(&k).cloned().unwrap_or_default();
            let gb = r.bytes_per_s * r.runtime_s.max(1e-9) / 1e9;
            let mut notes = vec![format!(
                "dm-crypt over {} ({}), {} bound ({}), sector_size 4096, a random {}-bit key; fio {} direct libaio, verified with crc32c before the point",
                disk.path, disk.kind, m.bound.driver, m.bound.proof.how(), p.cipher.key_bits, load.rw
            )];
            notes.push("CPU: the whole machine's busy seconds during fio (fio included): the encryption runs in kernel workers shared with everything else".into());
            notes.push(crate::record::disk::OTHERS_NOT_OBSERVABLE.into());
            // --profile: the same load again under perf; the record keeps the unsampled
            // figures, the profile the throughput reached while sampled.
            let profile = self.sampler.as_ref().map(|s| {
                let what = format!("disk {label} {} qd{}", load.pattern, load.iodepth);
                Box::new(crate::profile::sample_point(
                    s,
                    crate::profile::Target::SystemWide,
                    &what,
                    || on_mapping().ok().map(|r| r.bytes_per_s),
                ))
            });
            let rec = DiskRecord {
                kind: crate::record::LineKind::Record,
                schema: crate::record::SCHEMA,
                run_id: ctx.environment.run_id.clone(),
                workload: crate::record::Workload::Disk,
                implementation: "dm-crypt".into(),
                impl_version: self.release.clone(),
                variant: (!p.queues.is_empty()).then(|| queues_name(p.queues)),
                label: label.clone(),
                throughput_bps: r.bytes_per_s,
                throughput_bps_ci: None,
                samples_bps: vec![r.bytes_per_s],
                wall_s: wall,
                cpu_user_s: None,
                cpu_sys_s: busy,
                cpu_s_per_gb: busy.filter(|_| gb > 0.0).map(|b| b / gb),
                others_cpu_pct: None,
                disturbed: false,
                notes,
                profile,
                dut: None,
                dut_agent_cpu_pct: None,
                data: DiskData {
                    cipher: p.cipher.spec.clone(),
                    key_bits: p.cipher.key_bits,
                    kernel_driver: m.bound.driver.clone(),
                    kernel_driver_proof: Some(m.bound.proof),
                    queues: queues_name(p.queues),
                    pattern: load.pattern.into(),
                    block_size: load.block_size,
                    iodepth: load.iodepth,
                    iops: r.iops,
                    lat_p50_us: r.lat_p50_us,
                    lat_p99_us: r.lat_p99_us,
                    bare_throughput_bps: bare.bytes_per_s,
                    bare_iops: bare.iops,
                    primitive_bps: prim,
                    device: disk.kind.into(),
                    size_bytes: disk.size,
                    kcryptd_cpu_s: kcryptd,
                    throttled,
                },
            };
            out.push(driver::Outcome::Record(rec));
        }
        Ok(out)
    }

    fn finish(&mut self) {
        // The RAM disk (and brd or the loop device) goes before the report is printed.
        self.disk = None;
    }
}

pub(super) const NEED_ROOT: &str =
    "disk needs root (it loads brd, makes dm-crypt mappings and loop devices): run it with sudo";

pub(super) fn program(name: &str) -> Result<std::path::PathBuf, Failure> {
    crate::sys::program::find_program(name, None).ok_or_else(|| {
        Failure::Unavailable(format!(
            "disk needs {name}, which is not installed: run scripts/deps/disk.sh (Debian: apt-get install fio dmsetup)"
        ))
    })
}
