//! iperf3: the server in one namespace, the client in the other, and what its JSON says.

use crate::sys::guard::Guard;
use crate::workloads::e2e::lab::{self, Place, CLIENT, SERVER};
use anyhow::anyhow;
use serde_json::Value;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

pub const PORT: &str = "5201";

/// One load: protocol, parallel streams and direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Load {
    pub udp: bool,
    pub streams: u32,
    /// false: the client namespace sends ("up"); true: iperf3 -R, the server sends ("down").
    pub down: bool,
    /// `--packet-sizes`: UDP datagrams of this payload (iperf3 -l), for packets per second.
    #[serde(default)]
    pub packet_size: Option<u32>,
}

impl Load {
    pub fn protocol(&self) -> &'static str {
        if self.udp {
            "udp"
        } else {
            "tcp"
        }
    }
    pub fn direction(&self) -> &'static str {
        if self.down {
            "down"
        } else {
            "up"
        }
    }
    /// Index of the namespace whose application sends the data.
    pub fn sender(&self) -> usize {
        if self.down {
            SERVER
        } else {
            CLIENT
        }
    }
    pub fn receiver(&self) -> usize {
        1 - self.sender()
    }
}

/// What iperf3 reported for one run.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    /// Payload bytes the receiving application got.
    pub bytes: u64,
    /// Payload bytes the sending application wrote.
    pub sent_bytes: u64,
    /// The receiver's transfer time.
    pub seconds: f64,
    /// Received payload bytes per second.
    pub throughput_bps: f64,
    pub retransmits: Option<u64>,
    pub lost_pct: Option<f64>,
    pub tcp_mss: Option<u32>,
    /// iperf3's own CPU use (its client, its server), percent of one core.
    pub client_cpu_pct: Option<f64>,
    pub server_cpu_pct: Option<f64>,
    /// The client's `iperf 3.12` (its JSON's start.version).
    #[serde(default)]
    pub version: Option<String>,
}

impl Outcome {
    /// Whether this iperf3 runs every stream in one thread: before 3.16 it does, from
    /// 3.16 each stream has its own (None: the version is not known).
    pub fn one_thread(&self) -> Option<bool> {
        let v = self.version.as_deref()?.trim_start_matches("iperf").trim();
        let mut n = v.split('.').map(|x| x.parse::<u32>().ok());
        Some((n.next()??, n.next()??) < (3, 16))
    }

    /// The generator as the limit rules read it: iperf3's busiest end in percent of one
    /// thread. Its CPU figure is the whole process's: that is one thread's before 3.16,
    /// and with several streams after it, their mean (the busiest thread at least).
    pub fn generator(&self, streams: u32) -> Option<(String, f64)> {
        let threads = match (self.one_thread(), streams) {
            (Some(true), _) | (_, 0 | 1) => 1,
            _ => streams,
        };
        let shown = |end: &str| match (threads, streams) {
            (1, 1) => format!("iperf3 {end}"),
            (1, _) => format!("iperf3 {end} (one thread for {streams} streams)"),
            _ => format!("iperf3 {end} (mean of its {streams} stream threads)"),
        };
        [
            ("client", self.client_cpu_pct),
            ("server", self.server_cpu_pct),
        ]
        .into_iter()
        .filter_map(|(end, pct)| Some((shown(end), pct? / f64::from(threads))))
        .max_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// Said on a point of several streams whose iperf3 carries them all in one thread.
    pub fn one_thread_note(&self, streams: u32) -> Option<String> {
        (streams > 1 && self.one_thread() == Some(true)).then(|| {
            format!(
                "{} runs all {streams} streams in one thread (3.16 and later: one each): that thread, not the tunnel, can hold this point back",
                self.version.as_deref().unwrap_or("iperf3")
            )
        })
    }
}

pub fn parse(text: &str) -> anyhow::Result<Outcome> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| anyhow!("iperf3 printed no JSON result ({e})"))?;
    if let Some(err) = v["error"].as_str() {
        return Err(anyhow!("iperf3: {err}"));
    }
    let end = &v["end"];
    let recv = &end["sum_received"];
    let sent = &end["sum_sent"];
    let bytes = recv["bytes"]
        .as_u64()
        .ok_or_else(|| anyhow!("iperf3 JSON has no end.sum_received.bytes"))?;
    let seconds = recv["seconds"].as_f64().unwrap_or(0.0);
    let udp = v["start"]["test_start"]["protocol"].as_str() == Some("UDP");
    let cpu = &end["cpu_utilization_percent"];
    Ok(Outcome {
        bytes,
        sent_bytes: sent["bytes"].as_u64().unwrap_or(0),
        seconds,
        throughput_bps: if seconds > 0.0 {
            bytes as f64 / seconds
        } else {
            0.0
        },
        retransmits: if udp {
            None
        } else {
            sent["retransmits"].as_u64()
        },
        lost_pct: if udp {
            recv["lost_percent"].as_f64()
        } else {
            None
        },
        tcp_mss: v["start"]["tcp_mss_default"].as_u64().map(|m| m as u32),
        client_cpu_pct: cpu["host_total"].as_f64(),
        server_cpu_pct: cpu["remote_total"].as_f64(),
        version: v["start"]["version"].as_str().map(str::to_string),
    })
}

/// Why a load did not produce a result.
#[derive(Debug)]
pub enum LoadError {
    Interrupted,
    Failed(String),
}

/// `attempt` once more when it failed (not when interrupted): a busy host can make a
/// tunnel miss its deadline once (an emulated guest's handshake). Gives what it made and
/// the first try's failure, or both failures in one.
pub fn once_more<T>(
    mut attempt: impl FnMut() -> Result<T, LoadError>,
    before_retry: impl FnOnce(&str),
) -> Result<(T, Option<String>), LoadError> {
    match attempt() {
        Ok(t) => Ok((t, None)),
        Err(LoadError::Failed(first)) => {
            before_retry(&first);
            match attempt() {
                Ok(t) => Ok((t, Some(first))),
                Err(LoadError::Failed(e)) if e == first => {
                    Err(LoadError::Failed(format!("{e} (twice)")))
                }
                Err(LoadError::Failed(e)) => Err(LoadError::Failed(format!(
                    "{e} (and at the first try: {first})"
                ))),
                Err(LoadError::Interrupted) => Err(LoadError::Interrupted),
            }
        }
        Err(LoadError::Interrupted) => Err(LoadError::Interrupted),
    }
}

/// Polls until `done` says yes, `child` exits, the deadline passes, or a stop is asked.
pub fn wait_for(
    child: &mut Child,
    deadline: Duration,
    what: &str,
    mut done: impl FnMut() -> bool,
) -> Result<(), LoadError> {
    let start = Instant::now();
    loop {
        if done() {
            return Ok(());
        }
        if crate::measure::stopped() {
            return Err(LoadError::Interrupted);
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(LoadError::Failed(format!("{what} exited ({status})")));
        }
        if start.elapsed() > deadline {
            return Err(LoadError::Failed(format!(
                "{what}: nothing after {} s",
                deadline.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// A server started at `place` with its output in `log`, once the log says `ready`
/// (bounded: 10 s); a failure quotes the log's last line.
pub fn spawn_ready(
    guard: &Guard,
    place: &Place,
    argv: &[&str],
    log: &str,
    ready: &str,
    what: &str,
) -> Result<Child, LoadError> {
    let log = place.path(log);
    let mut child = lab::spawn_in_ns(guard, place.ns(), argv, &log, None, what)
        .map_err(|e| LoadError::Failed(e.to_string()))?;
    match wait_for(&mut child, Duration::from_secs(10), what, || {
        read(&log).contains(ready)
    }) {
        Err(LoadError::Failed(m)) => Err(LoadError::Failed(format!(
            "{m}: {}",
            last_line(&read(&log))
        ))),
        res => res.map(|_| child),
    }
}

/// Waits for a client to exit, for its `seconds` and `grace` more at most, or until a
/// stop is asked.
pub fn wait_exit(child: &mut Child, seconds: f64, grace: u64, what: &str) -> Result<(), LoadError> {
    let deadline = Instant::now() + Duration::from_secs_f64(seconds + grace as f64);
    loop {
        if crate::measure::stopped() {
            return Err(LoadError::Interrupted);
        }
        match child.try_wait() {
            Ok(Some(_)) => return Ok(()),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                return Err(LoadError::Failed(format!(
                    "{what} still running {grace} s after its {seconds:.1} s"
                )))
            }
            Err(e) => return Err(LoadError::Failed(format!("{what}: {e}"))),
        }
    }
}

/// A one-off iperf3 server bound to `addr` at the server's place, ready to accept.
pub fn start_server(
    guard: &Guard,
    place: &Place,
    iperf3: &str,
    addr: &str,
) -> Result<Child, LoadError> {
    spawn_ready(
        guard,
        place,
        &[iperf3, "-s", "-1", "-B", addr, "-p", PORT, "--forceflush"],
        "iperf3-server.log",
        "Server listening",
        "iperf3 server",
    )
}

/// Starts the client; the caller waits for it with `wait_client`.
pub fn start_client(
    guard: &Guard,
    place: &Place,
    iperf3: &str,
    addr: &str,
    load: Load,
    duration_s: u32,
) -> Result<Child, LoadError> {
    let t = duration_s.to_string();
    let p = load.streams.to_string();
    let mut argv = vec![
        iperf3,
        "-c",
        addr,
        "-p",
        PORT,
        "-t",
        &t,
        "-P",
        &p,
        "-J",
        "--connect-timeout",
        "5000",
    ];
    if load.down {
        argv.push("-R");
    }
    if load.udp {
        argv.extend(["-u", "-b", "0"]);
    }
    let size = load.packet_size.map(|n| n.to_string());
    if let Some(n) = &size {
        argv.extend(["-l", n]);
    }
    lab::spawn_in_ns(
        guard,
        place.ns(),
        &argv,
        &place.path("iperf3-client.json"),
        Some(&place.path("iperf3-client.err")),
        "iperf3 client",
    )
    .map_err(|e| LoadError::Failed(e.to_string()))
}

/// Waits (bounded) for the client to finish and parses its result.
pub fn wait_client(
    child: &mut Child,
    place: &Place,
    duration_s: u32,
) -> Result<Outcome, LoadError> {
    wait_exit(child, duration_s as f64, 30, "iperf3 client")?;
    let text = read(&place.path("iperf3-client.json"));
    parse(&text).map_err(|e| {
        let err = read(&place.path("iperf3-client.err"));
        LoadError::Failed(if err.trim().is_empty() {
            e.to_string()
        } else {
            format!("{e}: {}", last_line(&err))
        })
    })
}

pub fn last_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("no output")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One more try after a failure, never after an interruption; both failures said.
    #[test]
    fn a_failed_attempt_is_tried_once_more() {
        let tries = |results: Vec<Result<u8, LoadError>>| {
            let mut results = results.into_iter();
            let mut n = 0;
            let r = once_more(
                || {
                    n += 1;
                    results.next().unwrap()
                },
                |_| {},
            );
            (r, n)
        };
        let (r, n) = tries(vec![Err(LoadError::Failed("slow".into())), Ok(7)]);
        assert_eq!((r.unwrap(), n), ((7, Some("slow".to_string())), 2));
        let (r, n) = tries(vec![Ok(7)]);
        assert_eq!((r.unwrap(), n), ((7, None), 1));
        let (r, n) = tries(vec![
            Err(LoadError::Failed("slow".into())),
            Err(LoadError::Failed("down".into())),
        ]);
        assert_eq!(n, 2);
        assert!(matches!(r, Err(LoadError::Failed(e)) if e == "down (and at the first try: slow)"));
        let (r, _) = tries(vec![
            Err(LoadError::Failed("down".into())),
            Err(LoadError::Failed("down".into())),
        ]);
        assert!(matches!(r, Err(LoadError::Failed(e)) if e == "down (twice)"));
        let (r, n) = tries(vec![Err(LoadError::Interrupted), Ok(7)]);
        assert!(matches!(r, Err(LoadError::Interrupted)) && n == 1);
    }

    #[test]
    fn tcp_result() {
        let t = r#"{"start":{"tcp_mss_default":1368,"test_start":{"protocol":"TCP"}},
            "end":{"sum_sent":{"bytes":1000,"seconds":2.0,"retransmits":7},
                   "sum_received":{"bytes":900,"seconds":2.0},
                   "cpu_utilization_percent":{"host_total":10.0,"remote_total":20.0}}}"#;
        let o = parse(t).unwrap();
        assert_eq!(o.bytes, 900);
        assert_eq!(o.retransmits, Some(7));
        assert_eq!(o.lost_pct, None);
        assert_eq!(o.tcp_mss, Some(1368));
        assert!((o.throughput_bps - 450.0).abs() < 1e-9);
    }

    #[test]
    fn udp_result_and_error() {
        let t = r#"{"start":{"test_start":{"protocol":"UDP"}},
            "end":{"sum_sent":{"bytes":1000,"seconds":1.0},
                   "sum_received":{"bytes":400,"seconds":1.0,"lost_percent":60.0}}}"#;
        let o = parse(t).unwrap();
        assert_eq!(o.retransmits, None);
        assert_eq!(o.lost_pct, Some(60.0));
        let e = parse(
            r#"{"start":{},"end":{},"error":"unable to connect to server: Connection refused"}"#,
        );
        assert!(e.unwrap_err().to_string().contains("Connection refused"));
    }

    /// Before 3.16 iperf3's CPU is its one thread's whatever the streams: saturated, it
    /// is the generator; from 3.16, four streams at 150% of one core are four threads at
    /// 38% or more, none proven saturated.
    #[test]
    fn the_generator_is_read_per_thread_by_iperf3s_version() {
        let at = |version: &str, client: f64| Outcome {
            client_cpu_pct: Some(client),
            server_cpu_pct: Some(20.0),
            version: Some(version.into()),
            ..Outcome::default()
        };
        let old = at("iperf 3.12", 97.0);
        assert_eq!(old.one_thread(), Some(true));
        let (name, pct) = old.generator(4).unwrap();
        assert_eq!(pct, 97.0);
        assert!(name.contains("one thread for 4 streams"), "{name}");
        assert!(old.one_thread_note(4).unwrap().starts_with("iperf 3.12 runs all 4"));
        assert_eq!(old.one_thread_note(1), None);

        let new = at("iperf 3.16", 150.0);
        assert_eq!(new.one_thread(), Some(false));
        assert_eq!(new.generator(4).unwrap().1, 37.5);
        assert_eq!(new.generator(1).unwrap().1, 150.0);
        assert_eq!(new.one_thread_note(4), None);
        let unknown = Outcome {
            version: Some("iperf x".into()),
            ..at("", 80.0)
        };
        assert_eq!(unknown.one_thread(), None);
        assert_eq!(unknown.generator(2).unwrap().1, 40.0);
        let v = parse(r#"{"start":{"version":"iperf 3.12"},"end":{"sum_received":{"bytes":1,"seconds":1.0},"sum_sent":{"bytes":1}}}"#).unwrap();
        assert_eq!(v.version.as_deref(), Some("iperf 3.12"));
    }
}
