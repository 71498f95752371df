//! Round-trip times through the tunnel with irtt (Debian's isochronous round-trip
//! tester): its server in the server's namespace, its client in the client's, probing
//! every 10 ms, once with the tunnel idle and once while a throughput point runs. The rise
//! under load is what a VPN user feels.

use super::iperf::{spawn_ready, wait_exit, LoadError};
use crate::record::vpn::Rtt;
use crate::sys::guard::Guard;
use crate::workloads::e2e::lab::{self, Place};
use anyhow::anyhow;
use serde_json::Value;
use std::process::Child;

pub const PORT: &str = "2112";
/// One probe every this many milliseconds: 100 a second, as `irtt client`'s default
/// server allows once its minimum interval is lifted (`-i 0`).
const INTERVAL_MS: u64 = 10;
/// The idle probes' length.
pub const IDLE_S: f64 = 1.0;

/// Round trips through the tunnel, idle and under the point's load, or why not.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct Rtts {
    pub idle: Option<Rtt>,
    pub loaded: Option<Rtt>,
    pub note: Option<String>,
}

impl Rtts {
    /// A prober's result: kept, or its failure said in the note (the throughput point
    /// stands without it); a stop is passed on.
    pub fn keep<T>(&mut self, r: Result<T, LoadError>) -> Result<Option<T>, LoadError> {
        match r {
            Ok(t) => Ok(Some(t)),
            Err(LoadError::Interrupted) => Err(LoadError::Interrupted),
            Err(LoadError::Failed(why)) => {
                self.note = Some(format!("round trips not measured: {why}"));
                Ok(None)
            }
        }
    }
}

/// irtt's server for a point, when irtt is here (else the point goes without round trips).
pub fn serve(
    guard: &Guard,
    place: &Place,
    irtt: Option<&std::path::Path>,
    addr: &str,
) -> Result<Option<Child>, LoadError> {
    irtt.map(|p| start_server(guard, place, &p.to_string_lossy(), addr))
        .transpose()
}

/// The round trips of one point, from irtt's client at `place` to the server at `addr`:
/// idle before the load (`idle`), then over most of it (`loaded`, as the load starts).
pub struct Prober<'a> {
    guard: &'a Guard,
    place: &'a Place,
    irtt: Option<String>,
    addr: &'a str,
    loaded_s: f64,
    loaded: Option<Child>,
    rtts: Rtts,
}

impl<'a> Prober<'a> {
    /// Probes the idle tunnel for IDLE_S. Without irtt, the point's note says so.
    pub fn idle(
        guard: &'a Guard,
        place: &'a Place,
        irtt: Option<&std::path::Path>,
        addr: &'a str,
        duration: u32,
    ) -> Result<Prober<'a>, LoadError> {
        let mut p = Prober {
            guard,
            place,
            irtt: irtt.map(|p| p.to_string_lossy().into_owned()),
            addr,
            loaded_s: (duration as f64 * 0.8).max(0.5),
            loaded: None,
            rtts: Rtts::default(),
        };
        if p.irtt.is_none() {
            p.rtts.note = Some(format!(
                "round trips not measured: irtt not found: install {}",
                super::tools::Tool::Irtt.package()
            ));
            return Ok(p);
        }
        let idle = p
            .probe(IDLE_S, "idle")
            .and_then(|mut c| wait(&mut c, place, IDLE_S, "idle"));
        p.rtts.idle = p.rtts.keep(idle)?;
        Ok(p)
    }

    /// Starts the probes under load, with the load (when the idle ones came back).
    pub fn loaded(&mut self) -> Result<(), LoadError> {
        if self.rtts.idle.is_some() {
            let c = self.probe(self.loaded_s, "loaded");
            self.loaded = self.rtts.keep(c)?;
        }
        Ok(())
    }

    /// The round trips, once the load is over.
    pub fn finish(mut self) -> Result<Rtts, LoadError> {
        if let Some(mut child) = self.loaded.take() {
            let r = wait(&mut child, self.place, self.loaded_s, "loaded");
            self.rtts.loaded = self.rtts.keep(r)?;
        }
        Ok(self.rtts)
    }

    fn probe(&self, secs: f64, tag: &str) -> Result<Child, LoadError> {
        let irtt = self.irtt.as_deref().unwrap_or_default();
        start_client(self.guard, self.place, irtt, self.addr, secs, tag)
    }
}

/// irtt's server, started in the server's namespace on the tunnel's address.
fn start_server(guard: &Guard, place: &Place, irtt: &str, addr: &str) -> Result<Child, LoadError> {
    let bind = format!("{addr}:{PORT}");
    spawn_ready(
        guard,
        place,
        &[irtt, "server", "-b", &bind, "-i", "0", "-d", "0", "-l", "0"],
        "irtt-server.log",
        "listener on",
        "irtt server",
    )
}

/// A client probing `addr` for `seconds`, from `place`; `wait` collects its result.
fn start_client(
    guard: &Guard,
    place: &Place,
    irtt: &str,
    addr: &str,
    seconds: f64,
    tag: &str,
) -> Result<Child, LoadError> {
    let out = place.path(&format!("irtt-{tag}.json"));
    let duration = format!("{}ms", (seconds * 1000.0).round() as u64);
    let interval = format!("{INTERVAL_MS}ms");
    let target = format!("{addr}:{PORT}");
    lab::spawn_in_ns(
        guard,
        place.ns(),
        &[
            irtt,
            "client",
            "-i",
            &interval,
            "-d",
            &duration,
            "-Q",
            "-o",
            out.to_str().unwrap_or_default(),
            &target,
        ],
        &place.path(&format!("irtt-{tag}.log")),
        None,
        "irtt client",
    )
    .map_err(|e| LoadError::Failed(e.to_string()))
}

/// Waits (bounded: its length and 10 s) for a client and reads its round trips.
fn wait(child: &mut Child, place: &Place, seconds: f64, tag: &str) -> Result<Rtt, LoadError> {
    wait_exit(child, seconds, 10, "irtt client")?;
    let text = std::fs::read_to_string(place.path(&format!("irtt-{tag}.json"))).unwrap_or_default();
    parse(&text).map_err(|e| {
        let log = std::fs::read_to_string(place.path(&format!("irtt-{tag}.log")));
        LoadError::Failed(format!(
            "irtt: {e}: {}",
            super::iperf::last_line(&log.unwrap_or_default())
        ))
    })
}

/// The round trips of irtt's JSON output: percentiles of those that came back, and how
/// many were sent and lost.
pub fn parse(text: &str) -> anyhow::Result<Rtt> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| anyhow!("irtt wrote no JSON result ({e})"))?;
    let trips = v["round_trips"]
        .as_array()
        .ok_or_else(|| anyhow!("irtt's JSON has no round_trips"))?;
    let mut ms: Vec<f64> = trips
        .iter()
        .filter(|t| t["lost"].as_str() == Some("false"))
        .filter_map(|t| t["delay"]["rtt"].as_f64())
        .map(|ns| ns / 1e6)
        .collect();
    if ms.is_empty() {
        return Err(anyhow!("none of {} probes came back", trips.len()));
    }
    ms.sort_by(f64::total_cmp);
    // Nearest rank: a percentile is a round trip that happened.
    let at = |p: f64| ms[((p * ms.len() as f64).ceil() as usize).clamp(1, ms.len()) - 1];
    Ok(Rtt {
        p50: at(0.50),
        p90: at(0.90),
        p99: at(0.99),
        probes: trips.len() as u32,
        lost: (trips.len() - ms.len()) as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_the_trips_that_came_back() {
        let trips: Vec<String> = (1..=100)
            .map(|k| {
                let lost = k % 50 == 0;
                format!(
                    r#"{{"seqno":{k},"lost":"{}","delay":{{"rtt":{}}}}}"#,
                    if lost { "true" } else { "false" },
                    k * 1_000_000
                )
            })
            .collect();
        let text = format!(r#"{{"round_trips":[{}]}}"#, trips.join(","));
        let r = parse(&text).unwrap();
        assert_eq!((r.probes, r.lost), (100, 2));
        // 98 trips of 1..=99 ms without 50: the 49th is 49 ms, the 89th 90 ms.
        assert_eq!((r.p50, r.p90, r.p99), (49.0, 90.0, 99.0));
        assert!(parse(r#"{"round_trips":[{"lost":"true"}]}"#).is_err());
        assert!(parse("not json").is_err());
    }
}
