//! One vpn point: a fresh one-off iperf3 server in the tunnel, link counters and CPU
//! before and after the client's run, and the record.

use super::iperf::{self, Load, LoadError};
use super::latency::{self, Rtts};
use super::tunnel::{Programs, Spec, Tunnel};
use crate::analyse::limit;
use crate::record::vpn::{self, VpnData, VpnRecord};
use crate::record::window::disturbed;
use crate::record::window::THREAD_USED_PCT;
use crate::workloads::e2e::clock::ClockWatch;
use crate::workloads::e2e::lab::{self, Lab, Place, CLIENT, SERVER};
use crate::workloads::e2e::window::{CpuSeen, CpuWindow, Watched};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The kworker names of the kernel queues that do `tun`'s crypto, at both ends.
fn crypto_queues(tun: &Tunnel) -> Vec<String> {
    tun.ifname
        .iter()
        .flat_map(|i| tun.spec.crypto_queues(i))
        .collect()
}

/// What the point's CPU window watches of `tun` on this host: its processes, or a kernel
/// tunnel's crypto kworkers.
fn watched(tun: &Tunnel, cpus: Option<Vec<usize>>) -> Watched {
    Watched {
        procs: if tun.kernel {
            Vec::new()
        } else {
            tun.procs.clone()
        },
        kworker_queues: if tun.kernel {
            crypto_queues(tun)
        } else {
            Vec::new()
        },
        cpus,
        ..Watched::default()
    }
}

/// One end's interface counters before and after a point, from where that end runs.
pub type EndLinks = (usize, LinkMap, LinkMap);
pub type LinkMap = BTreeMap<String, lab::LinkStats>;

/// What one host saw of a point: its ends' links and its CPU window (the lab's host, or
/// with `vpn --dut` each of the DUT and the controller, this process's CPUs only).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HostSeen {
    pub links: Vec<EndLinks>,
    pub rcvbuf_errors: u64,
    #[serde(flatten)]
    pub cpu: CpuSeen,
}

impl HostSeen {
    fn link(&self, end: usize, ifname: &str) -> (lab::LinkStats, lab::LinkStats) {
        self.links
            .iter()
            .find(|(e, _, _)| *e == end)
            .map(|(_, b, a)| {
                (
                    b.get(ifname).copied().unwrap_or_default(),
                    a.get(ifname).copied().unwrap_or_default(),
                )
            })
            .unwrap_or_default()
    }
}

/// The counters of one host before a point, for `HostSeen`.
pub struct Watch {
    places: Vec<(usize, Option<String>)>,
    links: Vec<LinkMap>,
    rcvbuf: u64,
    cpu: CpuWindow,
}

impl Watch {
    /// Reads the counters of `places` (this host's ends) and of `tun`'s processes here;
    /// `cpus`: only these CPUs count as this host's (None: the whole machine).
    pub fn start(
        places: &[&Place],
        tun: &Tunnel,
        cpus: Option<Vec<usize>>,
    ) -> Result<Watch, LoadError> {
        let places: Vec<(usize, Option<String>)> =
            places.iter().map(|p| (p.end, p.ns.clone())).collect();
        let links = places
            .iter()
            .map(|(_, ns)| lab::link_stats(ns.as_deref()))
            .collect::<anyhow::Result<Vec<_>>>()
            .map_err(|e| LoadError::Failed(e.to_string()))?;
        let rcvbuf = places
            .iter()
            .map(|(_, ns)| lab::udp_rcvbuf_errors(ns.as_deref()))
            .sum();
        Ok(Watch {
            places,
            links,
            rcvbuf,
            cpu: CpuWindow::start(watched(tun, cpus)),
        })
    }

    /// The same counters after the point (of `seconds`), against those before. The CPU
    /// is read first: the closer to the load's end, the truer.
    pub fn finish(self, seconds: f64) -> Result<HostSeen, LoadError> {
        let cpu = self.cpu.finish(Some(seconds));
        let mut links = Vec::new();
        for ((end, ns), before) in self.places.iter().zip(self.links) {
            let after =
                lab::link_stats(ns.as_deref()).map_err(|e| LoadError::Failed(e.to_string()))?;
            links.push((*end, before, after));
        }
        let rcvbuf: u64 = self
            .places
            .iter()
            .map(|(_, ns)| lab::udp_rcvbuf_errors(ns.as_deref()))
            .sum();
        Ok(HostSeen {
            links,
            rcvbuf_errors: rcvbuf.saturating_sub(self.rcvbuf),
            cpu,
        })
    }
}

/// One point in the lab: a fresh one-off iperf3 server, counters and CPU before, the
/// client's run, counters and CPU after.
pub fn measure_point(
    lab: &Lab,
    tun: &mut Tunnel,
    progs: &Programs,
    load: Load,
    duration: u32,
    run_id: &str,
    sampling: Sampling,
) -> Result<VpnRecord, LoadError> {
    let places = [lab.place(SERVER), lab.place(CLIENT)];
    let server = iperf::start_server(&tun.guard, &places[SERVER], &progs.iperf3, &tun.server_addr)?;
    let prober = latency::serve(
        &tun.guard,
        &places[SERVER],
        progs.irtt.as_deref(),
        &tun.server_addr,
    );
    let res = prober.and_then(|p| {
        let res = measure_with_server(&places, tun, progs, load, duration, run_id, sampling);
        if let Some(p) = p {
            tun.guard.stop_process(p.id() as i32);
        }
        res
    });
    tun.guard.stop_process(server.id() as i32);
    res
}

/// --profile's rerun of a point: the sampler and the point's label.
pub type Sampling<'a> = Option<(&'a crate::profile::Sampler, &'a str)>;

fn measure_with_server(
    places: &[Place; 2],
    tun: &mut Tunnel,
    progs: &Programs,
    load: Load,
    duration: u32,
    run_id: &str,
    sampling: Sampling,
) -> Result<VpnRecord, LoadError> {
    let mut rtt = latency::Prober::idle(
        &tun.guard,
        &places[CLIENT],
        progs.irtt.as_deref(),
        &tun.server_addr,
        duration,
    )?;
    let watch = Watch::start(&[&places[SERVER], &places[CLIENT]], tun, None)?;
    let clock = ClockWatch::start(duration);
    let window = start_sampling(tun, sampling);
    let wall = std::time::Instant::now();
    rtt.loaded()?;
    let (outcome, seen) = run_client(&places[CLIENT], tun, progs, load, duration, watch)?;
    let wall_s = wall.elapsed().as_secs_f64();
    let rtts = rtt.finish()?;
    let profile = finish_sampling(window, sampling);
    let throttled = clock.finish();
    Ok(record(Observed {
        tun,
        load,
        duration,
        run_id,
        outcome,
        wall_s,
        here: seen,
        controller: None,
        profile,
        rtts,
        throttled,
    }))
}

/// --profile's sampling window over one load, started before it. It samples the tunnel's
/// processes on this host (with `vpn --dut`, the DUT's end alone), or every CPU for
/// kernel WireGuard, DCO and bare veth, whose work is outside any process.
pub fn start_sampling<'g>(
    tun: &'g Tunnel,
    sampling: Sampling,
) -> Option<anyhow::Result<crate::profile::Window<'g>>> {
    let target = if tun.kernel || tun.procs.is_empty() {
        crate::profile::Target::SystemWide
    } else {
        crate::profile::Target::Pids(tun.procs.iter().map(|&(_, pid)| pid).collect())
    };
    sampling.map(|(s, _)| {
        s.start(&tun.guard, &target)
            .and_then(|mut w| w.enable().map(|_| w))
    })
}

/// The profile of a window `start_sampling` opened, or why there is none.
pub fn finish_sampling(
    window: Option<anyhow::Result<crate::profile::Window>>,
    sampling: Sampling,
) -> Option<crate::profile::ProfileField> {
    window.zip(sampling).map(|(w, (s, label))| match w {
        Ok(w) => s.finish(w, label),
        Err(why) => crate::profile::ProfileField::Unavailable {
            unavailable: why.to_string(),
        },
    })
}

/// The iperf3 client's run at `place` against the server in `tun`, and what `watch`
/// (started before) saw over it.
pub fn run_client(
    place: &Place,
    tun: &Tunnel,
    progs: &Programs,
    load: Load,
    duration: u32,
    watch: Watch,
) -> Result<(iperf::Outcome, HostSeen), LoadError> {
    let wall = std::time::Instant::now();
    let mut client = iperf::start_client(
        &tun.guard,
        place,
        &progs.iperf3,
        &tun.server_addr,
        load,
        duration,
    )?;
    let outcome = iperf::wait_client(&mut client, place, duration);
    let seconds = match &outcome {
        Ok(o) if o.seconds > 0.0 => o.seconds,
        _ => wall.elapsed().as_secs_f64(),
    };
    let seen = watch.finish(seconds);
    tun.guard.stop_process(client.id() as i32);
    Ok((outcome?, seen?))
}

/// `vpn --dut`: the controller's side of a point (the tunnel's client end and iperf3's
/// client), as the DUT's record carries it.
pub struct ControllerSide {
    pub implementation: String,
    pub seen: HostSeen,
}

/// Everything a point's record is made of.
pub struct Observed<'a> {
    pub tun: &'a Tunnel,
    pub load: Load,
    pub duration: u32,
    pub run_id: &'a str,
    pub outcome: iperf::Outcome,
    pub wall_s: f64,
    /// The lab's host, or with `vpn --dut` the DUT (the server end).
    pub here: HostSeen,
    /// With `vpn --dut`: the controller (the client end).
    pub controller: Option<ControllerSide>,
    pub profile: Option<crate::profile::ProfileField>,
    pub rtts: Rtts,
    /// Whether the CPU clock fell over the point (None: not observable).
    pub throttled: Option<bool>,
}

/// The point's record. The tunnel's CPU, threads, crypto share and the machine's use are
/// `here`'s: with `vpn --dut`, the DUT's alone; the controller's end is beside them.
pub fn record(o: Observed) -> VpnRecord {
    let Observed {
        tun,
        load,
        duration,
        run_id,
        outcome,
        wall_s,
        here,
        controller,
        profile,
        rtts,
        throttled,
    } = o;
    let seen_of = |end: usize| -> &HostSeen {
        match &controller {
            Some(c) if c.seen.links.iter().any(|(e, _, _)| *e == end) => &c.seen,
            _ => &here,
        }
    };
    let delta = |end: usize, ifname: &str| seen_of(end).link(end, ifname);
    let dropped = |ifs: &[String; 2]| -> u64 {
        (0..2)
            .map(|end| {
                let (b, a) = delta(end, &ifs[end]);
                a.dropped.saturating_sub(b.dropped)
            })
            .sum()
    };
    let bare = matches!(tun.spec, Spec::Bare);
    let seconds = if outcome.seconds > 0.0 {
        outcome.seconds
    } else {
        wall_s
    };
    let attributable = !bare;
    let tunnel_cpu = here.cpu.cpu_of(None);
    let cpu_s = tunnel_cpu.total();
    let gb = outcome.bytes as f64 / 1e9;

    let (s, r) = (load.sender(), load.receiver());
    let (tb, ta) = delta(s, &tun.ifname[s]);
    let (rb, ra) = delta(r, &tun.ifname[r]);
    let (ob, oa) = delta(s, &tun.outer_if[s]);
    let (_, veth_r) = delta(r, &tun.outer_if[r]);
    let tunnel_dropped = if bare { 0 } else { dropped(&tun.ifname) };
    let outer_dropped = dropped(&tun.outer_if);

    let busy_pct = here.cpu.pct_of_cpus(here.cpu.busy_s);
    // iperf3's own CPU where it ran here: both ends in the lab, the server on a DUT.
    let iperf3_pct = outcome.server_cpu_pct.unwrap_or(0.0)
        + if controller.is_none() {
            outcome.client_cpu_pct.unwrap_or(0.0)
        } else {
            0.0
        };
    let iperf3_s = iperf3_pct / 100.0 * seconds;
    let others_pct = here.cpu.others_pct(cpu_s + iperf3_s + here.cpu.softirq_s);
    let tunnel_rx = ra.rx_bytes.saturating_sub(rb.rx_bytes);
    let generator = outcome.generator(load.streams);
    let busiest_thread = here
        .cpu
        .threads
        .iter()
        .chain(controller.iter().flat_map(|c| &c.seen.cpu.threads))
        .filter(|_| attributable)
        .max_by(|a, b| a.cpu_pct.total_cmp(&b.cpu_pct))
        .map(|t| (format!("{} ({} end)", t.name, t.end), t.cpu_pct));
    let limit = limit::limit(&limit::Seen {
        busiest_thread,
        busiest_softirq: here.cpu.softirq_busiest,
        busy_pct,
        cpus: here
            .cpu
            .cpus
            .as_ref()
            .map_or_else(crate::sys::cpu::machine_cpus, Vec::len),
        generator,
        server: None,
    });
    let mut notes = notes(
        tun,
        Seen {
            tunnel_rx,
            received: outcome.bytes,
            busy_pct,
            others_pct,
            no_thread: here.cpu.threads.is_empty(),
            cpus: here.cpu.cpus.as_ref().map(Vec::len),
        },
    );
    notes.extend(rtts.note);
    notes.extend(outcome.one_thread_note(load.streams));
    let (tunnel, cipher, auth) = (
        tun.spec.tunnel().to_string(),
        tun.spec.cipher(),
        tun.spec.auth(),
    );
    // Each end's busiest thread: by end in the lab, by host with `vpn --dut` (where a
    // kernel tunnel's kworkers are the host's too).
    let (server_busiest, client_busiest) = match &controller {
        Some(c) => (here.cpu.busiest(None), c.seen.cpu.busiest(None)),
        None => (
            here.cpu.busiest(Some("server")),
            here.cpu.busiest(Some("client")),
        ),
    };
    let (server_busiest, client_busiest) = (
        server_busiest.filter(|_| attributable),
        client_busiest.filter(|_| attributable),
    );
    let rcvbuf_errors =
        here.rcvbuf_errors + controller.as_ref().map_or(0, |c| c.seen.rcvbuf_errors);
    let controller_end = controller.map(|c| {
        let cpu_s = c.seen.cpu.cpu_of(None).total();
        vpn::ControllerEnd {
            implementation: c.implementation,
            cpus: c.seen.cpu.cpus.clone().unwrap_or_default(),
            system_busy_pct: c.seen.cpu.pct_of_cpus(c.seen.cpu.busy_s),
            tunnel_cpu_s: attributable.then_some(cpu_s),
            tunnel_cpu_pct: attributable.then(|| cpu_s / seconds * 100.0),
            processes: c.seen.cpu.procs,
            thread_cpu: c
                .seen
                .cpu
                .threads
                .into_iter()
                .filter(|t| t.cpu_pct >= 1.0)
                .collect(),
        }
    });
    let threads = here.cpu.threads;
    VpnRecord {
        kind: crate::record::LineKind::Record,
        schema: crate::record::SCHEMA,
        run_id: run_id.into(),
        workload: crate::record::Workload::Vpn,
        implementation: match &tun.openssl_build {
            Some(b) => crate::impls::openssl::build::on_build(&tunnel, &b.name),
            None => tunnel.clone(),
        },
        impl_version: tun.implementation.clone(),
        variant: None,
        label: vpn::label(&tunnel, &cipher, auth.as_deref()),
        throughput_bps: outcome.throughput_bps,
        throughput_bps_ci: None,
        samples_bps: vec![outcome.throughput_bps],
        wall_s: outcome.seconds,
        cpu_user_s: attributable.then_some(tunnel_cpu.user),
        cpu_sys_s: attributable.then_some(tunnel_cpu.sys),
        cpu_s_per_gb: (attributable && gb > 0.0).then(|| cpu_s / gb),
        others_cpu_pct: Some(others_pct),
        disturbed: disturbed(others_pct),
        notes,
        profile: profile.map(Box::new),
        dut: None,
        dut_agent_cpu_pct: None,
        data: VpnData {
            tunnel,
            cipher,
            auth,
            negotiated: tun.negotiated.clone(),
            protocol: load.protocol().into(),
            direction: load.direction().into(),
            streams: load.streams,
            round: 1,
            duration_s: duration,
            transfer_s: outcome.seconds,
            bytes: outcome.bytes,
            sent_bytes: outcome.sent_bytes,
            retransmits: outcome.retransmits,
            lost_pct: outcome.lost_pct,
            mtu: ra.mtu,
            outer_mtu: veth_r.mtu,
            tcp_mss: outcome.tcp_mss,
            tunnel_if: [tun.ifname[s].clone(), tun.ifname[r].clone()],
            tunnel_tx_bytes: ta.tx_bytes.saturating_sub(tb.tx_bytes),
            tunnel_rx_bytes: tunnel_rx,
            outer_tx_bytes: oa.tx_bytes.saturating_sub(ob.tx_bytes),
            tunnel_dropped,
            outer_dropped,
            udp_rcvbuf_errors: rcvbuf_errors,
            tunnel_cpu_s: attributable.then_some(cpu_s),
            tunnel_cpu_pct: attributable.then(|| cpu_s / seconds * 100.0),
            busiest_thread_cpu_pct: attributable
                .then(|| threads.first().map(|t| t.cpu_pct).unwrap_or(0.0)),
            threads_used: attributable.then(|| {
                threads
                    .iter()
                    .filter(|t| t.cpu_pct >= THREAD_USED_PCT)
                    .count() as u32
            }),
            processes: here.cpu.procs,
            thread_cpu: threads.into_iter().filter(|t| t.cpu_pct >= 1.0).collect(),
            softirq_s: here.cpu.softirq_s,
            system_busy_pct: busy_pct,
            iperf3_client_cpu_pct: outcome.client_cpu_pct,
            iperf3_server_cpu_pct: outcome.server_cpu_pct,
            openssl_build: tun.openssl_build.clone(),
            server_busiest_thread_cpu_pct: server_busiest,
            client_busiest_thread_cpu_pct: client_busiest,
            controller: controller_end,
            packet_size: load.packet_size,
            pps: load
                .packet_size
                .filter(|_| outcome.seconds > 0.0)
                .map(|n| outcome.bytes as f64 / n as f64 / outcome.seconds),
            loss_pct: load.packet_size.and(outcome.lost_pct),
            rtt_idle_ms: rtts.idle,
            rtt_loaded_ms: rtts.loaded,
            limit: Some(limit),
            throttled,
            kernel_driver: tun.kernel_driver.as_ref().map(|b| b.driver.clone()),
            kernel_driver_proof: tun.kernel_driver.as_ref().map(|b| b.proof),
            ipsec_spread: tun.spec.ipsec_spread(),
            ipsec_sa: None,
        },
    }
}

/// What a point's notes are drawn from.
struct Seen {
    tunnel_rx: u64,
    received: u64,
    busy_pct: f64,
    others_pct: f64,
    no_thread: bool,
    /// The CPUs counted as this host's, when not the whole machine (`vpn --dut`).
    cpus: Option<usize>,
}

/// The tunnel's own notes, and what this point's counters say about the number.
fn notes(tun: &Tunnel, seen: Seen) -> Vec<String> {
    let mut notes = tun.notes.clone();
    let Seen {
        tunnel_rx,
        received,
        busy_pct,
        others_pct,
        no_thread,
        cpus,
    } = seen;
    if tunnel_rx < received {
        notes.push(format!(
            "the receiving tunnel interface counted {tunnel_rx} bytes, fewer than the {received} bytes iperf3 received: traffic bypassed the tunnel"
        ));
    }
    if limit::every_cpu_busy(busy_pct) {
        let cpus = cpus.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        });
        notes.push(format!(
            "every core was busy ({busy_pct:.0}% of {cpus}): tunnel, iperf3 and the kernel shared them"
        ));
    }
    if disturbed(others_pct) {
        notes.push(format!(
            "other processes used {others_pct:.0}% of all cores during this point: it is disturbed"
        ));
    }
    let queues = crypto_queues(tun);
    if tun.kernel && no_thread && !queues.is_empty() {
        notes.push(format!(
            "no crypto kworker ({}) was seen: the kernel tunnel's CPU time can't be attributed here",
            queues.join(", ")
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::window::{ProcessCpu, ThreadCpu};

    fn thread(end: &str, pid: i32, pct: f64) -> ThreadCpu {
        ThreadCpu {
            end: end.into(),
            pid,
            tid: pid,
            name: "openvpn".into(),
            cpu_s: pct / 100.0 * 2.0,
            cpu_pct: pct,
        }
    }

    fn process(end: &str, pid: i32, pct: f64) -> ProcessCpu {
        ProcessCpu {
            end: end.into(),
            pid,
            name: "openvpn".into(),
            user_s: pct / 100.0 * 2.0,
            sys_s: 0.0,
            cpu_pct: pct,
        }
    }

    fn links(end: usize, ifs: &[&str], rx: u64) -> EndLinks {
        let at = |n: u64| -> LinkMap {
            ifs.iter()
                .map(|i| {
                    let s = lab::LinkStats {
                        rx_bytes: n,
                        tx_bytes: n,
                        dropped: 0,
                        mtu: 1500,
                    };
                    (i.to_string(), s)
                })
                .collect()
        };
        (end, at(0), at(rx))
    }

    /// `vpn --dut`: the record's tunnel CPU and busiest thread are the DUT's alone, the
    /// client end's are in `controller`, and each end's counters are read where it runs.
    #[test]
    fn a_dut_point_keeps_each_hosts_cpu_apart() {
        let place = Place {
            end: SERVER,
            ns: None,
            dir: std::env::temp_dir(),
            pid: 1,
            addr: "10.0.0.1".into(),
            peer: String::new(),
            outer_if: "eth0".into(),
        };
        let spec = Spec::OpenVpn {
            cipher: "AES-128-GCM".into(),
            dco: false,
        };
        let mut tun = Tunnel::new(&spec, std::slice::from_ref(&place));
        tun.ifname = ["tun-s".into(), "tun-c".into()];
        tun.outer_if = ["eth0".into(), "veth-c".into()];
        let here = HostSeen {
            links: vec![links(SERVER, &["tun-s", "eth0"], 2_000_000)],
            cpu: CpuSeen {
                procs: vec![process("server", 10, 60.0)],
                threads: vec![thread("server", 10, 60.0)],
                cpus: Some(vec![0]),
                busy_s: 1.6,
                total_s: 2.0,
                ..CpuSeen::default()
            },
            ..HostSeen::default()
        };
        let controller = HostSeen {
            links: vec![links(CLIENT, &["tun-c", "veth-c"], 2_100_000)],
            cpu: CpuSeen {
                procs: vec![process("client", 20, 90.0)],
                threads: vec![thread("client", 20, 90.0)],
                cpus: Some(vec![1]),
                busy_s: 1.0,
                total_s: 2.0,
                ..CpuSeen::default()
            },
            ..HostSeen::default()
        };
        let outcome = iperf::Outcome {
            bytes: 1_000_000,
            sent_bytes: 1_000_000,
            seconds: 2.0,
            throughput_bps: 500_000.0,
            ..Default::default()
        };
        let load = Load {
            udp: false,
            streams: 1,
            down: false,
            packet_size: None,
        };
        let r = record(Observed {
            tun: &tun,
            load,
            duration: 2,
            run_id: "r",
            outcome,
            wall_s: 2.0,
            here,
            controller: Some(ControllerSide {
                implementation: "OpenVPN 2.6".into(),
                seen: controller,
            }),
            profile: None,
            rtts: Rtts::default(),
            throttled: None,
        });
        assert_eq!(r.tunnel_cpu_s, Some(1.2));
        assert_eq!(r.busiest_thread_cpu_pct, Some(60.0));
        assert_eq!(r.server_busiest_thread_cpu_pct, Some(60.0));
        assert_eq!(r.client_busiest_thread_cpu_pct, Some(90.0));
        assert!(r.processes.iter().all(|p| p.end == "server"));
        let c = r.controller.as_ref().unwrap();
        assert_eq!(
            (c.cpus.as_slice(), c.tunnel_cpu_s),
            ([1].as_slice(), Some(1.8))
        );
        assert_eq!(c.system_busy_pct, 50.0);
        assert_eq!(r.system_busy_pct, 80.0);
        // Up: the controller's tunnel link sent, the DUT's received.
        assert_eq!(r.tunnel_if, ["tun-c", "tun-s"]);
        assert_eq!(
            (r.tunnel_tx_bytes, r.tunnel_rx_bytes),
            (2_100_000, 2_000_000)
        );
        assert_eq!(r.outer_tx_bytes, 2_100_000);
    }
}
