//! CPU time of a workload's processes and threads (/proc/<pid>/stat and task/*/stat), of
//! the kernel workers doing its work (WireGuard's and DCO's crypto queues, dm-crypt's
//! kcryptd), and of the whole machine and each CPU's softirq (/proc/stat).

use crate::record::window::{ProcessCpu, ThreadCpu};
use std::collections::BTreeMap;
use std::fs;

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
    let (name, t) = crate::sys::cpu::of_stat_file(path)?;
    Some(Times {
        name,
        user: t.user,
        sys: t.sys,
    })
}

/// A process's CPU time with that of the children it has reaped.
pub(super) fn tree_times(pid: i32) -> Option<Times> {
    let s = crate::sys::procfs::stat(pid)?;
    let per_s = crate::sys::procfs::ticks_per_s();
    Some(Times {
        name: s.comm,
        user: (s.utime + s.cutime) as f64 / per_s,
        sys: (s.stime + s.cstime) as f64 / per_s,
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

/// Differences between two snapshots of the same processes, as per-process and
/// per-thread CPU. Threads born during the point count from zero; threads that died
/// during it are in the process total but not in the thread list.
pub(super) fn diff(
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
/// name says they last ran one of `queues`: kernel WireGuard's "wg-crypt-<if>"
/// ("kworker/1:2-wg-crypt-<if>"), OpenVPN DCO's "ovpn-crypto-wq-<if>", dm-crypt's
/// "kcryptd/<dev>". The kernel keeps 23 bytes of a queue's name (WORKER_DESC_LEN).
pub(super) fn kworkers(queues: Option<&[String]>) -> BTreeMap<i32, Times> {
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
        if let Some(queues) = queues {
            if !queues.iter().any(|q| comm.contains(&q[..q.len().min(23)])) {
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

/// CPU seconds (busy by the one definition in sys::cpu, total, softirq) of the whole
/// machine, or of `cpus`.
pub(super) fn snap_system(cpus: Option<&[usize]>) -> crate::sys::cpu::Usage {
    match cpus {
        Some(c) => crate::sys::cpu::cpus_usage(c),
        None => crate::sys::cpu::machine_usage(),
    }
    .unwrap_or_default()
}

/// Each CPU's softirq and total ticks (of `cpus` only, when given).
pub(super) fn softirq_ticks(cpus: Option<&[usize]>) -> Vec<(usize, u64, u64)> {
    crate::sys::procfs::cpu_lines()
        .into_iter()
        .filter_map(|(c, l)| {
            let c = c.filter(|c| cpus.is_none_or(|cs| cs.contains(c)))?;
            Some((c, l.softirq, crate::sys::cpu::all_ticks(&l)))
        })
        .collect()
}

/// The CPU whose share in softirq grew most between two readings, with that share.
pub(super) fn busiest_softirq(
    before: &[(usize, u64, u64)],
    after: &[(usize, u64, u64)],
) -> Option<(usize, f64)> {
    after
        .iter()
        .filter_map(|&(c, s1, t1)| {
            let &(_, s0, t0) = before.iter().find(|b| b.0 == c)?;
            let total = t1.saturating_sub(t0);
            (total > 0).then(|| (c, s1.saturating_sub(s0) as f64 / total as f64 * 100.0))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_counts_the_children_it_reaped() {
        let me = std::process::id() as i32;
        let before = tree_times(me).unwrap();
        // A child that burns about 0.1-0.5 s of CPU, then is reaped by this process.
        let status = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"])
            .status()
            .unwrap();
        assert!(status.success());
        let after = tree_times(me).unwrap();
        assert!(
            after.total() - before.total() >= 0.05,
            "{before:?} -> {after:?}"
        );
        assert!(tree_times(-1).is_none());
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
