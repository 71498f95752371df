//! CPU-time samplers: our own threads (getrusage) and everybody else (/proc/stat).

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

/// Busy CPU seconds of the whole machine (all cores, including steal), from /proc/stat.
pub fn machine_busy_s() -> Option<f64> {
    let (_, c) = crate::procfs::cpu_lines()
        .into_iter()
        .find(|(n, _)| n.is_none())?;
    let busy = c.user + c.nice + c.system + c.irq + c.softirq + c.steal;
    Some(busy as f64 / crate::procfs::ticks_per_s())
}

/// CPUs counted in /proc/stat's machine-wide line (every online CPU, whatever our
/// affinity): the capacity that `machine_busy_s` is a share of.
pub fn machine_cpus() -> usize {
    let n = crate::procfs::cpu_lines()
        .iter()
        .filter(|(n, _)| n.is_some())
        .count();
    if n > 0 {
        n
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
}
