//! Readings from /proc shared by every workload: one process's stat line and the CPU
//! lines of /proc/stat. Times are in clock ticks; `ticks_per_s` converts them.

/// Clock ticks per second of /proc's time fields (USER_HZ).
pub fn ticks_per_s() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// The fields of /proc/<pid>/stat (or task/<tid>/stat) that we use.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcStat {
    pub comm: String,
    pub state: char,
    pub ppid: i32,
    /// Clock ticks in user and kernel mode.
    pub utime: u64,
    pub stime: u64,
    /// The same of its children it has reaped (0 when the line is cut short before them).
    pub cutime: u64,
    pub cstime: u64,
    /// Start time in ticks since boot: with the PID, it names one process for good
    /// (0 when the line is cut short before it).
    pub starttime: u64,
}

/// Parses a stat line. The command name may contain spaces and ')'.
pub fn parse_stat(line: &str) -> Option<ProcStat> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    let comm = line.get(open + 1..close)?.to_string();
    let rest: Vec<&str> = line.get(close + 1..)?.split_whitespace().collect();
    // rest[0] is field 3 (state); field n is rest[n - 3].
    let field = |n: usize| rest.get(n - 3).and_then(|s| s.parse::<u64>().ok());
    Some(ProcStat {
        comm,
        state: rest.first()?.chars().next()?,
        ppid: rest.get(1)?.parse().ok()?,
        utime: field(14)?,
        stime: field(15)?,
        cutime: field(16).unwrap_or(0),
        cstime: field(17).unwrap_or(0),
        starttime: field(22).unwrap_or(0),
    })
}

pub fn stat(pid: i32) -> Option<ProcStat> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// The files a process has mapped (the path column of /proc/PID/maps), each once, in
/// order of first mapping; a file deleted since keeps its " (deleted)" mark.
pub fn mapped_files(pid: i32) -> anyhow::Result<Vec<std::path::PathBuf>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/maps"))?;
    Ok(parse_maps(&text))
}

pub fn parse_maps(text: &str) -> Vec<std::path::PathBuf> {
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    for line in text.lines() {
        // address perms offset dev inode path: the path may contain spaces.
        let Some(path) = line.splitn(6, ' ').nth(5).map(str::trim_start) else {
            continue;
        };
        if path.starts_with('/') && !files.iter().any(|f| f.as_os_str() == path) {
            files.push(path.into());
        }
    }
    files
}

/// One "cpu" line of /proc/stat, in ticks (guest time is already inside user).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuLine {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

/// The CPU lines of /proc/stat text: `None` for the machine-wide "cpu" line, `Some(n)`
/// for "cpuN".
pub fn parse_cpu_lines(text: &str) -> Vec<(Option<usize>, CpuLine)> {
    text.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("cpu")?;
            let mut f = rest.split_whitespace();
            let which = if rest.starts_with(' ') {
                None
            } else {
                Some(f.next()?.parse::<usize>().ok()?)
            };
            let v: Vec<u64> = f.filter_map(|x| x.parse().ok()).collect();
            if v.len() < 7 {
                return None;
            }
            let g = |i: usize| v.get(i).copied().unwrap_or(0);
            Some((
                which,
                CpuLine {
                    user: g(0),
                    nice: g(1),
                    system: g(2),
                    idle: g(3),
                    iowait: g(4),
                    irq: g(5),
                    softirq: g(6),
                    steal: g(7),
                },
            ))
        })
        .collect()
}

pub fn cpu_lines() -> Vec<(Option<usize>, CpuLine)> {
    std::fs::read_to_string("/proc/stat")
        .map(|s| parse_cpu_lines(&s))
        .unwrap_or_default()
}

/// Direct children of `pid` (by scanning /proc), with their start times.
pub fn children(pid: i32) -> Vec<(i32, u64)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if let Some(s) = stat(p) {
            if s.ppid == pid {
                out.push((p, s.starttime));
            }
        }
    }
    out.sort_unstable();
    out
}

/// Every live descendant of `pid`, from each task's children file (cheap enough to read
/// every few milliseconds, unlike a scan of /proc); at most 10,000.
pub fn descendants(pid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for t in tasks.flatten() {
            let kids = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            for k in kids
                .split_whitespace()
                .filter_map(|k| k.parse::<i32>().ok())
            {
                if !out.contains(&k) && out.len() < 10_000 {
                    out.push(k);
                    todo.push(k);
                }
            }
        }
    }
    out
}

/// Whether the process `pid` that started at `starttime` still exists (and is not a zombie).
pub fn alive_since(pid: i32, starttime: u64) -> bool {
    matches!(stat(pid), Some(s) if s.starttime == starttime && s.state != 'Z' && s.state != 'X')
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn mapped_files_once_each() {
        let maps = "7f00-7f01 r--p 00000000 08:01 123 /usr/lib/libcrypto.so.3\n\
7f01-7f02 r-xp 00001000 08:01 123 /usr/lib/libcrypto.so.3\n\
7f02-7f03 rw-p 00000000 00:00 0 \n\
7f03-7f04 r--p 00000000 08:01 9 /opt/my build/lib/libssl.so.3\n\
7ffd-7ffe rw-p 00000000 00:00 0                          [stack]\n";
        let f = parse_maps(maps);
        assert_eq!(
            f,
            vec![
                std::path::PathBuf::from("/usr/lib/libcrypto.so.3"),
                "/opt/my build/lib/libssl.so.3".into()
            ]
        );
    }

    #[test]
    fn stat_line_fields_after_an_nginx_comm() {
        let line = "1234 (nginx: a) b) S 1200 1234 1234 0 -1 4194560 100 0 0 0 250 75 40 9 20 0 1 0 98765 1000 10 0";
        let s = parse_stat(line).unwrap();
        assert_eq!(s.comm, "nginx: a) b");
        assert_eq!(s.state, 'S');
        assert_eq!(s.ppid, 1200);
        assert_eq!((s.utime, s.stime, s.cutime, s.cstime), (250, 75, 40, 9));
        assert_eq!(s.starttime, 98765);
    }

    #[test]
    fn stat_line_with_a_strange_comm() {
        let s =
            parse_stat("123 (a) b (c)) S 1 1 1 0 -1 4194560 10 0 0 0 250 75 0 0 20 0 3 0 777 0")
                .unwrap();
        assert_eq!((s.comm.as_str(), s.state, s.ppid), ("a) b (c)", 'S', 1));
        assert_eq!((s.utime, s.stime, s.starttime), (250, 75, 777));
    }

    #[test]
    fn descendants_of_this_process() {
        let me = std::process::id() as i32;
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let found = descendants(me).contains(&(child.id() as i32));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(found);
        assert!(descendants(-1).is_empty());
    }

    #[test]
    fn cpu_lines_machine_and_per_cpu() {
        let v = parse_cpu_lines("cpu  100 0 50 800 50 0 20 3 0 0\ncpu0 1 2 3 4 5 6 7 8\nintr 5\n");
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].0, None);
        assert_eq!((v[0].1.user, v[0].1.softirq, v[0].1.steal), (100, 20, 3));
        assert_eq!(v[1].0, Some(0));
        assert_eq!(v[1].1.steal, 8);
    }

    #[test]
    fn our_own_stat_reads() {
        let me = std::process::id() as i32;
        let s = stat(me).unwrap();
        assert!(alive_since(me, s.starttime));
        assert!(!alive_since(me, s.starttime + 1));
    }
}
