//! The CPU window of one end-to-end point on this host: read before the load and after it,
//! the CPU time of the workload's processes and threads, of the kernel workers doing its
//! work, of this process, and of the host's CPUs (busy, softirq). Every end-to-end
//! workload (`tls`, `vpn`, `disk`, `ssh`) measures its points through it; what the
//! figures mean for a point (its limit, disturbed) is `analyse`'s.

use super::cpu::{self, ProcSnap, Times};
use crate::record::window::{ProcessCpu, ThreadCpu};
use crate::sys::cpu::{CpuTime, Usage};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a window watches on this host.
#[derive(Clone, Debug, Default)]
pub struct Watched {
    /// The workload's processes, each with its role ("server", "client", "fio"): the
    /// process and each of its threads.
    pub procs: Vec<(String, i32)>,
    /// Processes counted with the children they reaped, which live only within the window
    /// (a listener that forks a process per connection, as sshd does): role and pid.
    pub trees: Vec<(String, i32)>,
    /// The kernel workers doing the work, by the queue names they last ran (see
    /// `cpu::kworkers`), counted under the role "kernel"; empty: none.
    pub kworker_queues: Vec<String>,
    /// This host's CPUs of the point; None: the whole machine.
    pub cpus: Option<Vec<usize>>,
}

/// What a window saw. Serialized: with `vpn --dut` the DUT's window travels to the
/// controller inside its `HostSeen`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CpuSeen {
    pub procs: Vec<ProcessCpu>,
    /// The threads of `procs` (and each kernel worker), busiest first.
    pub threads: Vec<ThreadCpu>,
    /// The CPUs watched (None: the whole machine).
    pub cpus: Option<Vec<usize>>,
    /// CPU seconds of those CPUs: busy (by the one definition in sys::cpu), in all, and
    /// in softirq.
    pub busy_s: f64,
    pub total_s: f64,
    pub softirq_s: f64,
    /// The CPU (of those) with the largest softirq share over the window, and that share
    /// in percent of it: the kernel's packet work bound to one CPU.
    #[serde(default)]
    pub softirq_busiest: Option<(usize, f64)>,
    /// This process's own CPU seconds (cryptobench as a data source or sink, a DUT's agent).
    #[serde(default)]
    pub own_s: f64,
    /// The length the percentages are of (the load's), and the window's own wall time.
    #[serde(default)]
    pub seconds: f64,
    #[serde(default)]
    pub wall_s: f64,
}

impl CpuSeen {
    /// `x` CPU seconds in percent of the watched CPUs' time.
    pub fn pct_of_cpus(&self, x: f64) -> f64 {
        if self.total_s > 0.0 {
            x / self.total_s * 100.0
        } else {
            0.0
        }
    }

    /// The CPU time of the processes in `role` (every role: None).
    pub fn cpu_of(&self, role: Option<&str>) -> CpuTime {
        self.procs
            .iter()
            .filter(|p| role.is_none_or(|r| p.end == r))
            .fold(CpuTime::default(), |a, p| CpuTime {
                user: a.user + p.user_s,
                sys: a.sys + p.sys_s,
            })
    }

    /// Other processes' share of the watched CPUs: their busy time less `accounted`
    /// seconds (the workload's, and what the caller knows ran for it), in percent, 0-100.
    pub fn others_pct(&self, accounted: f64) -> f64 {
        self.pct_of_cpus((self.busy_s - accounted).max(0.0))
            .clamp(0.0, 100.0)
    }

    /// The busiest watched thread's share of one core, of one role's (None: of all).
    pub fn busiest(&self, role: Option<&str>) -> Option<f64> {
        self.threads
            .iter()
            .filter(|t| role.is_none_or(|r| t.end == r))
            .map(|t| t.cpu_pct)
            .reduce(f64::max)
    }
}

/// A window started: the readings before the load.
pub struct CpuWindow {
    watched: Watched,
    procs: Vec<(String, i32, ProcSnap)>,
    /// Every kernel worker: a worker's name says the queue it ran last, so one that runs
    /// the workload's queue during the window may have carried another name before it.
    kworkers: BTreeMap<i32, Times>,
    system: Usage,
    per_cpu: Vec<(usize, u64, u64)>,
    own: crate::sys::cpu::Reading,
    started: std::time::Instant,
}

impl CpuWindow {
    pub fn start(watched: Watched) -> CpuWindow {
        let kworkers = if watched.kworker_queues.is_empty() {
            BTreeMap::new()
        } else {
            cpu::kworkers(None)
        };
        CpuWindow {
            procs: snap_procs(&watched),
            kworkers,
            system: cpu::snap_system(watched.cpus.as_deref()),
            per_cpu: cpu::softirq_ticks(watched.cpus.as_deref()),
            own: crate::sys::cpu::process_cpu(),
            started: std::time::Instant::now(),
            watched,
        }
    }

    /// The readings after the load, against those before; the percentages are of
    /// `seconds` (the load's own length), or of the window's wall time when None. The
    /// processes are read first: the closer to the load's end, the truer.
    pub fn finish(self, seconds: Option<f64>) -> CpuSeen {
        let wall_s = self.started.elapsed().as_secs_f64();
        let seconds = seconds.unwrap_or(wall_s);
        let mut after = snap_procs(&self.watched);
        let mut before = self.procs;
        if !self.watched.kworker_queues.is_empty() {
            let named = cpu::kworkers(Some(&self.watched.kworker_queues));
            for (pid, t) in named {
                // A worker born during the window counts from zero.
                let t0 = self.kworkers.get(&pid).cloned().unwrap_or(Times {
                    name: t.name.clone(),
                    ..Times::default()
                });
                before.push(("kernel".into(), pid, one_task(pid, t0)));
                after.push(("kernel".into(), pid, one_task(pid, t)));
            }
        }
        let system = cpu::snap_system(self.watched.cpus.as_deref());
        let per_cpu = cpu::softirq_ticks(self.watched.cpus.as_deref());
        let own = crate::sys::cpu::process_cpu().since(self.own).total();
        let (procs, threads) = cpu::diff(&before, &after, seconds);
        CpuSeen {
            procs,
            threads,
            busy_s: (system.busy - self.system.busy).max(0.0),
            total_s: (system.total - self.system.total).max(0.0),
            softirq_s: (system.softirq - self.system.softirq).max(0.0),
            softirq_busiest: cpu::busiest_softirq(&self.per_cpu, &per_cpu),
            cpus: self.watched.cpus,
            own_s: own,
            seconds,
            wall_s,
        }
    }
}

fn snap_procs(w: &Watched) -> Vec<(String, i32, ProcSnap)> {
    let procs = w
        .procs
        .iter()
        .filter_map(|(role, pid)| cpu::snap_process(*pid).map(|s| (role.clone(), *pid, s)));
    let trees = w.trees.iter().filter_map(|(role, pid)| {
        // The tree as one process: its threads are not told apart.
        let total = cpu::tree_times(*pid)?;
        let snap = ProcSnap {
            total,
            threads: BTreeMap::new(),
        };
        Some((role.clone(), *pid, snap))
    });
    procs.chain(trees).collect()
}

/// A kernel worker read as a process of one thread.
fn one_task(pid: i32, t: Times) -> ProcSnap {
    ProcSnap {
        total: t.clone(),
        threads: [(pid, t)].into_iter().collect(),
    }
}
