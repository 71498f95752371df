//! CPU time of the tunnel's processes and threads (/proc/<pid>/stat and task/*/stat), of
//! kernel WireGuard's crypto kworkers, and of the whole machine (/proc/stat).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;

/// Seconds per clock tick of /proc's utime and stime.
fn tick_s() -> f64 {
    1.0 / crate::procfs::ticks_per_s()
}

/// comm, utime and stime (in ticks) from the text of a /proc stat file.
pub fn parse_stat(text: &str) -> Option<(String, u64, u64)> {
    crate::procfs::parse_stat(text).map(|s| (s.comm, s.utime, s.stime))
}

/// User and system CPU seconds of one task.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Times {
    pub name: String,
    pub user: f64,
    pub sys: f64,
}

impl Times {
    pub fn total(&self) -> f64 {
        self.user + self.sys
    }
}

fn read_times(path: &str) -> Option<Times> {
    let text = fs::read_to_string(path).ok()?;
    let (comm, u, s) = parse_stat(&text)?;
    let t = tick_s();
    Some(Times {
        name: comm,
        user: u as f64 * t,
        sys: s as f64 * t,
    })
}

/// One process at one moment: its total (which keeps the time of threads that have
/// exited) and each live thread.
#[derive(Clone, Debug, Default)]
pub struct ProcSnap {
    pub total: Times,
    pub threads: BTreeMap<i32, Times>,
}

pub fn snap_process(pid: i32) -> Option<ProcSnap> {
    let total = read_times(&format!("/proc/{pid}/stat"))?;
    let mut threads = BTreeMap::new();
    if let Ok(dir) = fs::read_dir(format!("/proc/{pid}/task")) {
        for e in dir.flatten() {
            let Some(tid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            if let Some(t) = read_times(&format!("/proc/{pid}/task/{tid}/stat")) {
                threads.insert(tid, t);
            }
        }
    }
    Some(ProcSnap { total, threads })
}

/// One thread's share of a point.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ThreadCpu {
    /// "server" or "client" end of the tunnel (or "kernel" for kworkers).
    pub end: String,
    pub pid: i32,
    pub tid: i32,
    pub name: String,
    pub cpu_s: f64,
    /// CPU seconds / transfer seconds x 100: 100 = one core all the time.
    pub cpu_pct: f64,
}

/// One tunnel process over a point.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ProcessCpu {
    pub end: String,
    pub pid: i32,
    pub name: String,
    pub user_s: f64,
    pub sys_s: f64,
    pub cpu_pct: f64,
}

/// Differences between two snapshots of the same processes, as per-process and
/// per-thread CPU. Threads born during the point count from zero; threads that died
/// during it are in the process total but not in the thread list.
pub fn diff(
    before: &[(String, i32, ProcSnap)],
    after: &[(String, i32, ProcSnap)],
    seconds: f64,
) -> (Vec<ProcessCpu>, Vec<ThreadCpu>) {
    let pct = |s: f64| {
        if seconds > 0.0 {
            s / seconds * 100.0
        } else {
            0.0
        }
    };
    let mut procs = Vec::new();
    let mut threads = Vec::new();
    for (end, pid, a) in after {
        let Some((_, _, b)) = before.iter().find(|(_, p, _)| p == pid) else {
            continue;
        };
        let user = (a.total.user - b.total.user).max(0.0);
        let sys = (a.total.sys - b.total.sys).max(0.0);
        procs.push(ProcessCpu {
            end: end.clone(),
            pid: *pid,
            name: a.total.name.clone(),
            user_s: user,
            sys_s: sys,
            cpu_pct: pct(user + sys),
        });
        for (tid, t) in &a.threads {
            let base = b.threads.get(tid).map(Times::total).unwrap_or(0.0);
            let d = (t.total() - base).max(0.0);
            threads.push(ThreadCpu {
                end: end.clone(),
                pid: *pid,
                tid: *tid,
                name: t.name.clone(),
                cpu_s: d,
                cpu_pct: pct(d),
            });
        }
    }
    threads.sort_by(|x, y| y.cpu_s.total_cmp(&x.cpu_s));
    (procs, threads)
}

/// Kernel worker threads with their CPU times: all of them, or only those whose current
/// name says they last ran kernel WireGuard's crypto work queue for one of `ifnames`
/// ("kworker/1:2-wg-crypt-<if>").
pub fn kworkers(ifnames: Option<&[&str]>) -> BTreeMap<i32, Times> {
    let mut out = BTreeMap::new();
    let Ok(dir) = fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(comm) = fs::read_to_string(format!("/proc/{pid}/comm")) else {
            continue;
        };
        if !comm.starts_with("kworker") {
            continue;
        }
        if let Some(ifs) = ifnames {
            if !ifs.iter().any(|i| comm.contains(&format!("wg-crypt-{i}"))) {
                continue;
            }
        }
        if let Some(mut t) = read_times(&format!("/proc/{pid}/stat")) {
            t.name = comm.trim().to_string();
            out.insert(pid, t);
        }
    }
    out
}

/// Whole-machine counters from the "cpu" line of /proc/stat, in seconds summed over CPUs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SysSnap {
    pub total: f64,
    pub idle: f64,
    pub softirq: f64,
}

pub fn parse_proc_stat(text: &str) -> Option<SysSnap> {
    let (_, c) = crate::procfs::parse_cpu_lines(text)
        .into_iter()
        .find(|(n, _)| n.is_none())?;
    let t = tick_s();
    // user nice system idle iowait irq softirq steal [guest guest_nice: inside user]
    let total = c.user + c.nice + c.system + c.idle + c.iowait + c.irq + c.softirq + c.steal;
    Some(SysSnap {
        total: total as f64 * t,
        idle: (c.idle + c.iowait) as f64 * t,
        softirq: c.softirq as f64 * t,
    })
}

pub fn snap_system() -> SysSnap {
    fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|s| parse_proc_stat(&s))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_a_strange_comm() {
        let s = "123 (a) b (c)) S 1 1 1 0 -1 4194560 10 0 0 0 250 75 0 0 20 0 3 0";
        let (comm, u, st) = parse_stat(s).unwrap();
        assert_eq!(comm, "a) b (c)");
        assert_eq!((u, st), (250, 75));
    }

    #[test]
    fn proc_stat_cpu_line() {
        let s = "cpu  100 0 50 800 50 0 20 0 0 0\ncpu0 1 2 3 4 5 6 7 8\n";
        let v = parse_proc_stat(s).unwrap();
        let t = tick_s();
        assert!((v.total - 1020.0 * t).abs() < 1e-9);
        assert!((v.idle - 850.0 * t).abs() < 1e-9);
        assert!((v.softirq - 20.0 * t).abs() < 1e-9);
    }

    #[test]
    fn thread_deltas_and_new_threads() {
        let mk = |u: f64, ths: &[(i32, f64)]| ProcSnap {
            total: Times {
                name: "p".into(),
                user: u,
                sys: 0.0,
            },
            threads: ths
                .iter()
                .map(|(t, x)| {
                    (
                        *t,
                        Times {
                            name: "t".into(),
                            user: *x,
                            sys: 0.0,
                        },
                    )
                })
                .collect(),
        };
        let b = vec![("server".to_string(), 7, mk(1.0, &[(7, 1.0)]))];
        let a = vec![("server".to_string(), 7, mk(3.0, &[(7, 1.5), (8, 1.5)]))];
        let (p, t) = diff(&b, &a, 2.0);
        assert_eq!(p.len(), 1);
        assert!((p[0].cpu_pct - 100.0).abs() < 1e-9);
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].tid, 8);
        assert!((t[0].cpu_pct - 75.0).abs() < 1e-9);
        assert!((t[1].cpu_pct - 25.0).abs() < 1e-9);
    }
}
