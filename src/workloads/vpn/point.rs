//! One vpn point: a fresh one-off iperf3 server in the tunnel, link counters and CPU
//! before and after the client's run, and the record.

use super::cpu;
use super::iperf::{self, Load, LoadError};
use super::lab::{self, Lab, CLIENT, SERVER};
use super::tunnel::{Programs, Spec, Tunnel};
use crate::record::vpn::{self, VpnData, VpnRecord, DISTURBED_PCT, THREAD_USED_PCT};

/// The tunnel's processes (or a kernel tunnel's crypto kworkers) at one moment.
fn cpu_snapshot(tun: &Tunnel, all_kworkers: bool) -> Vec<(String, i32, cpu::ProcSnap)> {
    if tun.kernel {
        let ifs: Vec<&str> = tun.ifname.iter().map(String::as_str).collect();
        let filter: Option<&[&str]> = if all_kworkers { None } else { Some(&ifs) };
        return cpu::kworkers(filter)
            .into_iter()
            .map(|(pid, t)| {
                let snap = cpu::ProcSnap {
                    total: t.clone(),
                    threads: [(pid, t)].into_iter().collect(),
                };
                ("kernel".to_string(), pid, snap)
            })
            .collect();
    }
    tun.procs
        .iter()
        .filter_map(|(end, pid)| cpu::snap_process(*pid).map(|s| (end.clone(), *pid, s)))
        .collect()
}

fn delta(
    before: &[std::collections::BTreeMap<String, lab::LinkStats>; 2],
    after: &[std::collections::BTreeMap<String, lab::LinkStats>; 2],
    end: usize,
    ifname: &str,
) -> (lab::LinkStats, lab::LinkStats) {
    let b = before[end].get(ifname).copied().unwrap_or_default();
    let a = after[end].get(ifname).copied().unwrap_or_default();
    (b, a)
}

/// One point: a fresh one-off iperf3 server, counters and CPU before, the client's run,
/// counters and CPU after.
pub fn measure_point(
    lab: &Lab,
    tun: &mut Tunnel,
    progs: &Programs,
    load: Load,
    duration: u32,
    run_id: &str,
    sampling: Sampling,
) -> Result<VpnRecord, LoadError> {
    let server = iperf::start_server(&tun.guard, lab, &progs.iperf3, &tun.server_addr)?;
    let res = measure_with_server(lab, tun, progs, load, duration, run_id, sampling);
    tun.guard.stop_process(server.id() as i32);
    res
}

/// --profile's rerun of a point: the sampler and the point's label.
pub type Sampling<'a> = Option<(&'a crate::profile::Sampler, &'a str)>;

fn measure_with_server(
    lab: &Lab,
    tun: &mut Tunnel,
    progs: &Programs,
    load: Load,
    duration: u32,
    run_id: &str,
    sampling: Sampling,
) -> Result<VpnRecord, LoadError> {
    let stats = || -> Result<_, LoadError> {
        Ok([
            lab::link_stats(&lab.ns[SERVER]).map_err(|e| LoadError::Failed(e.to_string()))?,
            lab::link_stats(&lab.ns[CLIENT]).map_err(|e| LoadError::Failed(e.to_string()))?,
        ])
    };
    let rcvbuf =
        || lab::udp_rcvbuf_errors(&lab.ns[SERVER]) + lab::udp_rcvbuf_errors(&lab.ns[CLIENT]);
    let links_before = stats()?;
    let rcvbuf_before = rcvbuf();
    let cpu_before = cpu_snapshot(tun, true);
    let sys_before = cpu::snap_system();
    // User-space tunnels: their processes; kernel WireGuard and bare veth: every CPU.
    let target = if tun.kernel || tun.procs.is_empty() {
        crate::profile::Target::SystemWide
    } else {
        crate::profile::Target::Pids(tun.procs.iter().map(|&(_, pid)| pid).collect())
    };
    let window = sampling.map(|(s, _)| {
        s.start(&tun.guard, &target)
            .and_then(|mut w| w.enable().map(|_| w))
    });
    let wall = std::time::Instant::now();
    let mut client = iperf::start_client(
        &tun.guard,
        lab,
        &progs.iperf3,
        &tun.server_addr,
        load,
        duration,
    )?;
    let outcome = iperf::wait_client(&mut client, lab, duration);
    let wall_s = wall.elapsed().as_secs_f64();
    let profile = window.zip(sampling).map(|(w, (s, label))| match w {
        Ok(w) => s.finish(w, label),
        Err(why) => crate::profile::ProfileField::Unavailable {
            unavailable: why.to_string(),
        },
    });
    let cpu_after = cpu_snapshot(tun, false);
    let sys_after = cpu::snap_system();
    tun.guard.stop_process(client.id() as i32);
    let outcome = outcome?;
    let links_after = stats()?;
    let rcvbuf_after = rcvbuf();
    let dropped = |ifs: &[String; 2]| -> u64 {
        (0..2)
            .map(|end| {
                let (b, a) = delta(&links_before, &links_after, end, &ifs[end]);
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
    let (procs, threads) = cpu::diff(&cpu_before, &cpu_after, seconds);
    let attributable = !matches!(tun.spec, Spec::Bare);
    let user: f64 = procs.iter().map(|p| p.user_s).sum();
    let sys: f64 = procs.iter().map(|p| p.sys_s).sum();
    let cpu_s = user + sys;
    let gb = outcome.bytes as f64 / 1e9;

    let (s, r) = (load.sender(), load.receiver());
    let (tb, ta) = delta(&links_before, &links_after, s, &tun.ifname[s]);
    let (rb, ra) = delta(&links_before, &links_after, r, &tun.ifname[r]);
    let (ob, oa) = delta(&links_before, &links_after, s, &lab.veth[s]);
    let (_, veth_r) = delta(&links_before, &links_after, r, &lab.veth[r]);

    let d_total = sys_after.total - sys_before.total;
    let busy_s = sys_after.busy - sys_before.busy;
    let softirq_s = (sys_after.softirq - sys_before.softirq).max(0.0);
    let pct_of_all = |x: f64| {
        if d_total > 0.0 {
            x / d_total * 100.0
        } else {
            0.0
        }
    };
    let busy_pct = pct_of_all(busy_s);
    let iperf3_s = (outcome.client_cpu_pct.unwrap_or(0.0) + outcome.server_cpu_pct.unwrap_or(0.0))
        / 100.0
        * seconds;
    let others_pct = pct_of_all((busy_s - cpu_s - iperf3_s - softirq_s).max(0.0));
    let tunnel_rx = ra.rx_bytes.saturating_sub(rb.rx_bytes);
    let notes = notes(
        tun,
        Seen {
            tunnel_rx,
            received: outcome.bytes,
            busy_pct,
            others_pct,
            no_thread: threads.is_empty(),
        },
    );
    let (tunnel, cipher, auth) = (
        tun.spec.tunnel().to_string(),
        tun.spec.cipher(),
        tun.spec.auth(),
    );
    Ok(VpnRecord {
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
        cpu_user_s: attributable.then_some(user),
        cpu_sys_s: attributable.then_some(sys),
        cpu_s_per_gb: (attributable && gb > 0.0).then(|| cpu_s / gb),
        others_cpu_pct: others_pct.clamp(0.0, 100.0),
        disturbed: others_pct > DISTURBED_PCT,
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
            tunnel_dropped: if bare { 0 } else { dropped(&tun.ifname) },
            outer_dropped: dropped(&lab.veth),
            udp_rcvbuf_errors: rcvbuf_after.saturating_sub(rcvbuf_before),
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
            processes: procs,
            thread_cpu: threads.into_iter().filter(|t| t.cpu_pct >= 1.0).collect(),
            softirq_s,
            system_busy_pct: busy_pct,
            iperf3_client_cpu_pct: outcome.client_cpu_pct,
            iperf3_server_cpu_pct: outcome.server_cpu_pct,
            openssl_build: tun.openssl_build.clone(),
        },
    })
}

/// What a point's notes are drawn from.
struct Seen {
    tunnel_rx: u64,
    received: u64,
    busy_pct: f64,
    others_pct: f64,
    no_thread: bool,
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
    } = seen;
    if tunnel_rx < received {
        notes.push(format!(
            "the receiving tunnel interface counted {tunnel_rx} bytes, fewer than the {received} bytes iperf3 received: traffic bypassed the tunnel"
        ));
    }
    if busy_pct > 95.0 {
        let cpus = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        notes.push(format!(
            "every core was busy ({busy_pct:.0}% of {cpus}): tunnel, iperf3 and the kernel shared them"
        ));
    }
    if others_pct > DISTURBED_PCT {
        notes.push(format!(
            "other processes used {others_pct:.0}% of all cores during this point: it is disturbed"
        ));
    }
    if tun.kernel && no_thread {
        notes.push(
            "no crypto kworker (wg-crypt, ovpn-crypto-wq) was seen: the kernel tunnel's CPU time can't be attributed here"
                .into(),
        );
    }
    notes
}
