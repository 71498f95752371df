//! CPU accounting: our own threads and process (clocks and getrusage), any process or
//! thread by PID (/proc/<pid>/stat), and the machine or a set of its CPUs (/proc/stat).
//!
//! # Busy CPU
//!
//! One definition for every workload: a CPU is busy for every tick /proc/stat does not
//! count as idle or iowait, that is user + nice + system + irq + softirq + steal.
//!
//! - irq and softirq are in: a network workload (tls, vpn) does its packet work in
//!   softirq, which is part of what it costs the machine. And with tick-based accounting
//!   (Debian's kernels: CONFIG_IRQ_TIME_ACCOUNTING is off) a tick that lands in an
//!   interrupt is charged to /proc/stat's irq or softirq *and* to the interrupted task's
//!   stime, so "others = busy - our processes' CPU" only balances when busy includes
//!   them. With CONFIG_IRQ_TIME_ACCOUNTING=y tasks are not charged for interrupts, and
//!   that time shows as other processes' CPU.
//! - steal is in: time the hypervisor ran someone else while this CPU had work is not
//!   available to us, which is what "others" must detect.
//! - iowait is out: the CPU was idle, waiting on I/O that some task had requested.
//! - guest and guest_nice are already inside user and nice.

use super::procfs::{self, CpuLine};

/// User and system CPU seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuTime {
    pub user: f64,
    pub sys: f64,
}

impl CpuTime {
    pub fn minus(self, earlier: CpuTime) -> CpuTime {
        CpuTime {
            user: (self.user - earlier.user).max(0.0),
            sys: (self.sys - earlier.sys).max(0.0),
        }
    }
    pub fn total(self) -> f64 {
        self.user + self.sys
    }
}

fn rusage(who: libc::c_int) -> CpuTime {
    // SAFETY: getrusage only writes into the zeroed struct we own.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut ru);
        ru
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    CpuTime {
        user: secs(ru.ru_utime),
        sys: secs(ru.ru_stime),
    }
}

fn clock(id: libc::clockid_t) -> f64 {
    // SAFETY: clock_gettime only writes into the timespec we own.
    let ts = unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(id, &mut ts);
        ts
    };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// A CPU-time reading: the exact total from the CPU-time clock, and getrusage's user and
/// sys, which only move at scheduler ticks and so serve just to split the total.
#[derive(Clone, Copy, Debug)]
pub struct Reading {
    total: f64,
    split: CpuTime,
}

impl Reading {
    /// CPU time since `earlier`, split into user and sys in getrusage's proportion.
    pub fn since(self, earlier: Reading) -> CpuTime {
        let total = (self.total - earlier.total).max(0.0);
        let split = self.split.minus(earlier.split);
        let sys_share = if split.total() > 0.0 {
            split.sys / split.total()
        } else {
            0.0
        };
        CpuTime {
            user: total * (1.0 - sys_share),
            sys: total * sys_share,
        }
    }
}

/// CPU time of the calling thread. getrusage(RUSAGE_THREAD) alone misses the slice
/// running since the last tick, up to 4 ms: too much for a 15 ms trial.
pub fn thread_cpu() -> Reading {
    Reading {
        total: clock(libc::CLOCK_THREAD_CPUTIME_ID),
        split: rusage(libc::RUSAGE_THREAD),
    }
}

/// CPU time of this whole process.
pub fn process_cpu() -> Reading {
    Reading {
        total: clock(libc::CLOCK_PROCESS_CPUTIME_ID),
        split: rusage(libc::RUSAGE_SELF),
    }
}

/// User and sys CPU seconds of a process (all its threads). Resolution: one clock tick (usually
/// 10 ms). Also readable while the process is a zombie, before it is reaped.
pub fn of_pid(pid: i32) -> Option<CpuTime> {
    procfs::stat(pid).map(|s| ticks_to_time(&s))
}

/// As [`of_pid`], from a stat file's path (`/proc/<pid>/task/<tid>/stat` for a thread),
/// with the task's name.
pub fn of_stat_file(path: &str) -> Option<(String, CpuTime)> {
    let s = procfs::parse_stat(&std::fs::read_to_string(path).ok()?)?;
    let t = ticks_to_time(&s);
    Some((s.comm, t))
}

fn ticks_to_time(s: &procfs::ProcStat) -> CpuTime {
    let hz = procfs::ticks_per_s();
    CpuTime {
        user: s.utime as f64 / hz,
        sys: s.stime as f64 / hz,
    }
}

/// Busy ticks of one /proc/stat line, by the module's one definition (see above).
pub fn busy_ticks(c: &CpuLine) -> u64 {
    c.user + c.nice + c.system + c.irq + c.softirq + c.steal
}

/// Every tick of one /proc/stat line: busy, idle and iowait.
pub fn all_ticks(c: &CpuLine) -> u64 {
    busy_ticks(c) + c.idle + c.iowait
}

/// One reading of /proc/stat, in CPU seconds summed over the CPUs it covers.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Usage {
    /// Busy seconds (see the module's definition).
    pub busy: f64,
    /// Every second of the CPUs, busy or not.
    pub total: f64,
    /// The part of `busy` spent in softirq (packet processing, among others).
    pub softirq: f64,
}

impl Usage {
    fn of(lines: impl Iterator<Item = CpuLine>) -> Usage {
        let hz = procfs::ticks_per_s();
        let mut u = Usage::default();
        for c in lines {
            u.busy += busy_ticks(&c) as f64 / hz;
            u.total += all_ticks(&c) as f64 / hz;
            u.softirq += c.softirq as f64 / hz;
        }
        u
    }
}

/// The machine's "cpu" line of /proc/stat text.
pub fn machine_usage_of(stat_text: &str) -> Option<Usage> {
    let (_, c) = procfs::parse_cpu_lines(stat_text)
        .into_iter()
        .find(|(n, _)| n.is_none())?;
    Some(Usage::of(std::iter::once(c)))
}

/// The whole machine (all cores).
pub fn machine_usage() -> Option<Usage> {
    machine_usage_of(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// Busy CPU seconds of the whole machine (all cores).
pub fn machine_busy_s() -> Option<f64> {
    machine_usage().map(|u| u.busy)
}

/// Busy CPU seconds of the given CPUs.
pub fn cpus_busy_s(cpus: &[usize]) -> Option<f64> {
    cpus_usage(cpus).map(|u| u.busy)
}

/// The given CPUs' usage (e.g. a DUT's, when it shares a machine with its controller).
pub fn cpus_usage(cpus: &[usize]) -> Option<Usage> {
    let lines = procfs::cpu_lines();
    if lines.is_empty() {
        return None;
    }
    let chosen = lines
        .into_iter()
        .filter(|(n, _)| n.is_some_and(|n| cpus.contains(&n)))
        .map(|(_, c)| c);
    Some(Usage::of(chosen))
}

/// CPUs counted in /proc/stat's machine-wide line (every online CPU, whatever our
/// affinity): the capacity that `machine_busy_s` is a share of.
pub fn machine_cpus() -> usize {
    let n = procfs::cpu_lines()
        .iter()
        .filter(|(n, _)| n.is_some())
        .count();
    if n > 0 {
        n
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}

/// The value of the first /proc/cpuinfo line whose key is one of `keys`.
pub fn cpuinfo_field(cpuinfo: &str, keys: &[&str]) -> Option<String> {
    cpuinfo.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        keys.contains(&k.trim()).then(|| v.trim().to_string())
    })
}

/// The CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity writes into the zeroed set we own.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            let n = std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1);
            return (0..n).collect();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect()
    }
}

/// Server and generator CPUs: disjoint halves when there are at least two (the server
/// gets the larger half), otherwise both share all of them.
pub fn split_cpus(cpus: &[usize]) -> (Vec<usize>, Vec<usize>, bool) {
    if cpus.len() < 2 {
        return (cpus.to_vec(), cpus.to_vec(), false);
    }
    let k = cpus.len().div_ceil(2);
    (cpus[..k].to_vec(), cpus[k..].to_vec(), true)
}

/// "0-3,6" style list for display.
pub fn cpu_list(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}-{}", cpus[i], cpus[j])
        } else {
            cpus[i].to_string()
        });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_counts_everything_but_idle_and_iowait() {
        // user nice system idle iowait irq softirq steal guest guest_nice
        let text = "cpu  100 10 50 800 40 5 20 3 7 0\ncpu0 1 2 3 4 5 6 7 8\n";
        let u = machine_usage_of(text).unwrap();
        let hz = procfs::ticks_per_s();
        assert!((u.busy - 188.0 / hz).abs() < 1e-9, "{u:?}");
        assert!((u.total - 1028.0 / hz).abs() < 1e-9, "{u:?}");
        assert!((u.softirq - 20.0 / hz).abs() < 1e-9, "{u:?}");
    }

    #[test]
    fn our_cpus_and_our_process_read() {
        let me = std::process::id() as i32;
        let spin = std::time::Instant::now();
        while spin.elapsed().as_millis() < 30 {
            std::hint::black_box(0u64);
        }
        assert!(of_pid(me).unwrap().total() > 0.0);
        let (name, _) = of_stat_file(&format!("/proc/{me}/task/{me}/stat")).unwrap();
        assert!(!name.is_empty());
        assert!(machine_busy_s().unwrap() > 0.0);
        assert!(cpus_busy_s(&[0]).unwrap() > 0.0);
        let before = thread_cpu();
        let spin = std::time::Instant::now();
        while spin.elapsed().as_millis() < 20 {
            std::hint::black_box(0u64);
        }
        let used = thread_cpu().since(before).total();
        // A thread that spun for 20 ms of wall time used at most that much CPU, and on a
        // machine shared with others at least some of it.
        assert!(used > 0.0 && used < 0.2, "{used}");
    }

    #[test]
    fn busy_time_of_our_cpus_reads() {
        let cpus = allowed_cpus();
        assert!(!cpus.is_empty());
        assert!(cpus_busy_s(&cpus).unwrap() > 0.0);
    }

    #[test]
    fn cpus_split_into_disjoint_halves() {
        assert_eq!(split_cpus(&[0]), (vec![0], vec![0], false));
        assert_eq!(split_cpus(&[0, 1]), (vec![0], vec![1], true));
        assert_eq!(split_cpus(&[0, 1, 2]), (vec![0, 1], vec![2], true));
        assert_eq!(cpu_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
    }
}
