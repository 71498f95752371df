//! `cryptobench vpn`: OpenVPN (per data cipher, and without crypto) against WireGuard and
//! the bare veth, between two network namespaces, with iperf3. Per point: throughput,
//! retransmits, MTU, the tunnel's CPU seconds per GB, its busiest thread and how many
//! threads (cores) it used; then the crypto share of OpenVPN's CPU per cipher.

mod cleanup;
mod cpu;
mod iperf;
mod lab;
pub mod record;
pub mod render;
mod tools;
mod tunnel;
pub mod view;

use super::{Failure, EXIT_INTERRUPTED};
use crate::environment;
use crate::measure;
use crate::record::JsonLinesWriter;
use crate::render::Format;
use iperf::{Load, LoadError};
use lab::{Lab, CLIENT, SERVER};
use record::{VpnData, VpnRecord, DISTURBED_PCT, THREAD_USED_PCT};
use serde::Serialize;
use serde_json::json;
use std::io::IsTerminal;
use std::path::PathBuf;
use tools::Tool;
use tunnel::{Programs, Spec, Tunnel};

#[derive(clap::Args)]
pub struct VpnArgs {
    /// Tunnels, comma-separated: none (the bare veth), wireguard (the kernel's where it
    /// can, else wireguard-go), wireguard-kernel, wireguard-go, openvpn.
    #[arg(long, value_name = "LIST", default_value = "none,wireguard,openvpn")]
    pub tunnels: String,
    /// OpenVPN data ciphers, comma-separated, plus none (no cipher, no auth: the ceiling).
    /// Non-AEAD ciphers use HMAC-SHA1.
    #[arg(
        long,
        value_name = "LIST",
        default_value = "AES-128-GCM,AES-256-GCM,CHACHA20-POLY1305,AES-256-CBC,none"
    )]
    pub ciphers: String,
    /// Parallel iperf3 streams per point, comma-separated, 1 to 128.
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "LIST",
        default_value = "1,4"
    )]
    pub streams: String,
    /// Directions: up (the client namespace sends), down (iperf3 -R), or both.
    #[arg(long, value_name = "LIST", default_value = "up,down")]
    pub directions: String,
    /// Seconds of load per point (whole seconds, at least 1).
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    pub duration: f64,
    /// Passes over all tunnels and loads, one after the other, so that a shared machine's
    /// drift hits every tunnel alike; the table and the shares use the medians.
    #[arg(allow_negative_numbers = true, long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=MAX_ROUNDS as i64))]
    pub rounds: u32,
    /// Also measure UDP (iperf3 -u at unlimited rate): throughput received and loss.
    #[arg(long)]
    pub udp: bool,
    /// Find and remove what a crashed run left behind (namespaces, links, daemons, temp
    /// files named with our prefix), say what was removed, and exit.
    #[arg(long)]
    pub cleanup: bool,
    /// Output format on stdout: table, json, csv or markdown.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Append JSON Lines (environment, then one record per point, flushed) to FILE.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Sample the tunnel's processes with perf (the whole system for kernel WireGuard).
    #[arg(long)]
    pub profile: bool,
    /// With --profile: keep folded stacks and a flame graph SVG per point in DIR.
    #[arg(long, value_name = "DIR")]
    pub profile_dir: Option<PathBuf>,
}

pub const MAX_STREAMS: u32 = 128;
const MAX_ROUNDS: u32 = 20;
const MAX_DURATION: f64 = 3600.0;

/// A tunnel that could not be brought up or a point that failed, and why.
#[derive(Clone, Debug, Serialize)]
pub struct Exclusion {
    pub tunnel: String,
    pub load: Option<String>,
    pub reason: String,
}

#[derive(Serialize)]
pub struct Analysis {
    pub shares: Vec<record::Share>,
}

/// Everything a run produced, for the renderers.
#[derive(Serialize)]
pub struct VpnReport {
    pub schema: u32,
    pub environment: Option<crate::record::Environment>,
    pub records: Vec<VpnRecord>,
    pub analysis: Analysis,
    pub exclusions: Vec<Exclusion>,
    pub interrupted: bool,
}

/// Which tunnels were asked for, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wanted {
    Bare,
    WireGuardAuto,
    WireGuardKernel,
    WireGuardGo,
    OpenVpn,
}

fn parse_tunnels(s: &str) -> Result<Vec<Wanted>, String> {
    let mut out = Vec::new();
    for t in s.split(',').map(str::trim) {
        let w = match t.to_ascii_lowercase().as_str() {
            "none" | "veth" => Wanted::Bare,
            "wireguard" | "wg" => Wanted::WireGuardAuto,
            "wireguard-kernel" => Wanted::WireGuardKernel,
            "wireguard-go" => Wanted::WireGuardGo,
            "openvpn" => Wanted::OpenVpn,
            _ => {
                return Err(format!(
                "unknown tunnel '{t}' in --tunnels: choose from none, wireguard, wireguard-kernel, wireguard-go, openvpn"
            ))
            }
        };
        if !out.contains(&w) {
            out.push(w);
        }
    }
    Ok(out)
}

fn parse_streams(s: &str) -> Result<Vec<u32>, String> {
    let n = crate::cli::counts(s, "--streams", 1..=MAX_STREAMS as u64, "1,4")?;
    Ok(n.into_iter().map(|n| n as u32).collect())
}

fn parse_directions(s: &str) -> Result<Vec<bool>, String> {
    let mut out = Vec::new();
    for p in s.split(',').map(str::trim) {
        let down = match p {
            "up" => false,
            "down" => true,
            _ => {
                return Err(format!(
                    "invalid --directions '{p}': give up, down or up,down"
                ))
            }
        };
        if !out.contains(&down) {
            out.push(down);
        }
    }
    Ok(out)
}

fn parse_duration(d: f64) -> Result<u32, String> {
    if !((1.0..=MAX_DURATION).contains(&d) && d.fract() == 0.0) {
        return Err(format!(
            "invalid --duration {d}: give whole seconds from 1 to {MAX_DURATION}, e.g. --duration 10"
        ));
    }
    Ok(d as u32)
}

/// OpenVPN cipher names as the user gave them, checked against this OpenVPN's list.
fn parse_ciphers(s: &str, supported: &[String], version: &str) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for c in s.split(',').map(str::trim) {
        let name = if c.eq_ignore_ascii_case("none") {
            "none".to_string()
        } else {
            c.to_ascii_uppercase()
        };
        if !supported.contains(&name) {
            return Err(format!(
                "unknown cipher '{c}': this OpenVPN ({version}) supports {}",
                supported.join(", ")
            ));
        }
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

/// Root, or CAP_NET_ADMIN in the effective set.
fn privileged() -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|h| u64::from_str_radix(h.trim(), 16).ok())
        })
        .is_some_and(|caps| caps & (1 << 12) != 0)
}

const NEED_ROOT: &str =
    "vpn needs root or CAP_NET_ADMIN (it creates network namespaces and links): run it with sudo";

fn progress(msg: &str) {
    if std::io::stderr().is_terminal() {
        eprintln!("{msg}");
    }
}

pub fn run(args: VpnArgs) -> Result<i32, Failure> {
    if args.cleanup {
        if !privileged() {
            return Err(Failure::Input(NEED_ROOT.into()));
        }
        for line in cleanup::run_cleanup() {
            println!("{line}");
        }
        return Ok(0);
    }
    if matches!(args.format, Format::Openssl | Format::Html) {
        return Err(Failure::Input(
            "--format openssl is for speed and html for report: use table, json, csv or markdown (or --output FILE, then `cryptobench report FILE --format html`)".into(),
        ));
    }
    let duration = parse_duration(args.duration).map_err(Failure::Input)?;
    if !(1..=MAX_ROUNDS).contains(&args.rounds) {
        return Err(Failure::Input(format!(
            "invalid --rounds {}: give 1 to {MAX_ROUNDS}",
            args.rounds
        )));
    }
    let streams = parse_streams(&args.streams).map_err(Failure::Input)?;
    let directions = parse_directions(&args.directions).map_err(Failure::Input)?;
    let wanted = parse_tunnels(&args.tunnels).map_err(Failure::Input)?;
    let wants_wg = wanted.iter().any(|w| {
        matches!(
            w,
            Wanted::WireGuardAuto | Wanted::WireGuardKernel | Wanted::WireGuardGo
        )
    });
    let wants_ovpn = wanted.contains(&Wanted::OpenVpn);

    // Programs: each missing one is named with its package.
    let mut needed = vec![Tool::Ip, Tool::Iperf3];
    if wants_wg {
        needed.push(Tool::Wg);
    }
    if wanted.contains(&Wanted::WireGuardGo) {
        needed.push(Tool::WireguardGo);
    }
    if wants_ovpn {
        needed.extend([Tool::Openvpn, Tool::Openssl]);
    }
    let mut found = Vec::new();
    for t in needed {
        found.push((t, tools::require(t).map_err(Failure::Input)?));
    }
    let path_of = |t: Tool| found.iter().find(|(x, _)| *x == t).map(|(_, p)| p.clone());
    let mut progs = Programs {
        iperf3: path_of(Tool::Iperf3)
            .map(|p| p.to_string_lossy().to_string())
            .unwrap_or_default(),
        wg: path_of(Tool::Wg),
        wireguard_go: path_of(Tool::WireguardGo).or_else(|| tools::find(Tool::WireguardGo)),
        openvpn: path_of(Tool::Openvpn),
        openssl: path_of(Tool::Openssl),
        ..Programs::default()
    };
    let mut ciphers = Vec::new();
    if let Some(ovpn) = &progs.openvpn {
        progs.openvpn_version = tools::short_version(&tools::version(ovpn, Tool::Openvpn));
        let supported = tools::openvpn_ciphers(ovpn).map_err(Failure::Runtime)?;
        ciphers = parse_ciphers(&args.ciphers, &supported, &progs.openvpn_version)
            .map_err(Failure::Input)?;
    }
    if !privileged() {
        return Err(Failure::Input(NEED_ROOT.into()));
    }
    let sampler = (args.profile || args.profile_dir.is_some())
        .then(|| crate::profile::Sampler::new(args.profile_dir.clone(), wants_wg))
        .transpose()
        .map_err(Failure::Input)?;
    let mut writer = match &args.output {
        Some(p) => Some(JsonLinesWriter::append(p).map_err(Failure::Input)?),
        None => None,
    };

    super::install_signal_handler();
    let lab =
        Lab::new().map_err(|e| Failure::Runtime(format!("cannot build the test bed: {e}")))?;

    // WireGuard: the kernel's where it works, else wireguard-go.
    let mut unavailable = Vec::new();
    let mut specs = Vec::new();
    let kernel_wg = if wants_wg {
        lab.kernel_wireguard()
    } else {
        false
    };
    if wants_wg && !kernel_wg {
        unavailable.push(json!({
            "name": "wireguard (kernel)",
            "reason": "this kernel cannot create a wireguard link (no WireGuard module)",
        }));
    }
    for w in &wanted {
        match w {
            Wanted::Bare => specs.push(Spec::Bare),
            Wanted::WireGuardKernel if !kernel_wg => {
                return Err(Failure::Input(
                    "--tunnels wireguard-kernel: this kernel cannot create a wireguard link (no WireGuard module); use wireguard-go".into(),
                ))
            }
            Wanted::WireGuardKernel => specs.push(Spec::WireGuard { kernel: true }),
            Wanted::WireGuardAuto if kernel_wg => specs.push(Spec::WireGuard { kernel: true }),
            Wanted::WireGuardAuto | Wanted::WireGuardGo => {
                let go = progs.wireguard_go.clone().ok_or_else(|| {
                    Failure::Input(tools::require(Tool::WireguardGo).unwrap_err())
                })?;
                progs.wireguard_go_version =
                    tools::short_version(&tools::version(&go, Tool::WireguardGo));
                found.push((Tool::WireguardGo, go));
                let s = Spec::WireGuard { kernel: false };
                if !specs.contains(&s) {
                    specs.push(s);
                }
            }
            Wanted::OpenVpn => {
                for c in &ciphers {
                    specs.push(Spec::OpenVpn { cipher: c.clone() });
                }
            }
        }
    }

    let libraries = found.iter().map(|(t, p)| tools::describe(*t, p)).collect();
    let env = environment::capture(
        libraries,
        unavailable,
        json!({
            "tunnels": specs.iter().map(Spec::label).collect::<Vec<_>>(),
            "streams": streams, "directions": directions.iter().map(|d| if *d {"down"} else {"up"}).collect::<Vec<_>>(),
            "duration_s": duration, "rounds": args.rounds, "udp": args.udp, "kernel_wireguard": kernel_wg,
            "netns": lab.ns, "veth": lab.veth, "outer_addresses": lab::VETH_ADDR,
        }),
    );
    if let Some(w) = writer.as_mut() {
        w.write(&env).map_err(Failure::Runtime)?;
    }

    let mut loads = Vec::new();
    for udp in std::iter::once(false).chain(args.udp.then_some(true)) {
        for &s in &streams {
            for &down in &directions {
                loads.push(Load {
                    udp,
                    streams: s,
                    down,
                });
            }
        }
    }

    let total = specs.len() * loads.len() * args.rounds as usize;
    let mut n = 0;
    let mut records: Vec<VpnRecord> = Vec::new();
    let mut exclusions: Vec<Exclusion> = Vec::new();
    let rounds: Vec<(u32, &Spec)> = (1..=args.rounds)
        .flat_map(|r| specs.iter().map(move |s| (r, s)))
        .collect();
    'tunnels: for (round, spec) in rounds {
        if measure::stopped() {
            break;
        }
        let round_label = if args.rounds > 1 {
            format!(" (round {round})")
        } else {
            String::new()
        };
        progress(&format!("{}{round_label}: bringing it up", spec.label()));
        let mut tun = match tunnel::up(&lab, &progs, spec) {
            Ok(t) => t,
            Err(LoadError::Interrupted) => break,
            Err(LoadError::Failed(e)) => {
                exclusions.push(Exclusion {
                    tunnel: format!("{}{round_label}", spec.label()),
                    load: None,
                    reason: e,
                });
                n += loads.len();
                continue;
            }
        };
        for load in &loads {
            n += 1;
            if measure::stopped() {
                break 'tunnels;
            }
            if let Err(e) = tun.check_alive() {
                exclusions.push(Exclusion {
                    tunnel: format!("{}{round_label}", spec.label()),
                    load: Some(load_label(load)),
                    reason: e,
                });
                continue;
            }
            match measure_point(&lab, &mut tun, &progs, *load, duration, &env.run_id, None) {
                Ok(mut rec) => {
                    rec.round = round;
                    if let Some(s) = &sampler {
                        // The same point again under perf; the record keeps the unsampled run.
                        let label =
                            format!("vpn {} {}{round_label}", spec.label(), load_label(load));
                        rec.profile = match measure_point(
                            &lab,
                            &mut tun,
                            &progs,
                            *load,
                            duration,
                            &env.run_id,
                            Some((s, &label)),
                        ) {
                            Ok(again) => again.profile.map(|mut f| {
                                if let crate::profile::ProfileField::Measured(m) = &mut *f {
                                    m.throughput_bps = Some(again.throughput_bps);
                                }
                                f
                            }),
                            Err(LoadError::Interrupted) => None,
                            Err(LoadError::Failed(e)) => {
                                Some(Box::new(crate::profile::ProfileField::Unavailable {
                                    unavailable: format!("the sampled run failed: {e}"),
                                }))
                            }
                        };
                    }
                    progress(&format!(
                        "[{n}/{total}] {}{round_label} {}: {:.0} Mbit/s",
                        spec.label(),
                        load_label(load),
                        rec.throughput_bps * 8.0 / 1e6
                    ));
                    if let Some(w) = writer.as_mut() {
                        w.write(&rec).map_err(Failure::Runtime)?;
                    }
                    records.push(rec);
                }
                Err(LoadError::Interrupted) => break 'tunnels,
                Err(LoadError::Failed(e)) => exclusions.push(Exclusion {
                    tunnel: format!("{}{round_label}", spec.label()),
                    load: Some(load_label(load)),
                    reason: e,
                }),
            }
        }
    }
    let interrupted = measure::stopped();
    drop(lab);

    let report = VpnReport {
        schema: crate::record::SCHEMA,
        environment: Some(env),
        analysis: Analysis {
            shares: record::shares(&records),
        },
        records,
        exclusions,
        interrupted,
    };
    print!("{}", render::render(args.format, &report));
    if args.format == Format::Table {
        for r in &report.records {
            if let Some(p) = &r.profile {
                let label = format!("{} {} {}", r.tunnel, r.cipher, r.streams);
                print!(
                    "{}",
                    crate::profile::table::render(&label, p, Some(r.throughput_bps))
                );
            }
        }
    }
    if interrupted {
        return Ok(EXIT_INTERRUPTED);
    }
    if report.records.is_empty() {
        let why: Vec<String> = report
            .exclusions
            .iter()
            .map(|e| format!("{}: {}", e.tunnel, e.reason))
            .collect();
        return Err(Failure::Runtime(format!(
            "nothing measured: {}",
            why.join("; ")
        )));
    }
    Ok(0)
}

fn load_label(l: &Load) -> String {
    format!("{} {} x{}", l.protocol(), l.direction(), l.streams)
}

/// The tunnel's processes (or kernel WireGuard's kworkers) at one moment.
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
fn measure_point(
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
type Sampling<'a> = Option<(&'a crate::profile::Sampler, &'a str)>;

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
            lab::link_stats(&lab.ns[SERVER]).map_err(LoadError::Failed)?,
            lab::link_stats(&lab.ns[CLIENT]).map_err(LoadError::Failed)?,
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
        Err(why) => crate::profile::ProfileField::Unavailable { unavailable: why },
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
    let mut notes = tun.notes.clone();
    let tunnel_rx = ra.rx_bytes.saturating_sub(rb.rx_bytes);
    if tunnel_rx < outcome.bytes {
        notes.push(format!(
            "the receiving tunnel interface counted {tunnel_rx} bytes, fewer than the {} bytes iperf3 received: traffic bypassed the tunnel",
            outcome.bytes
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
    if tun.kernel && threads.is_empty() {
        notes.push(
            "no wg-crypt kworker was seen: kernel WireGuard's CPU time can't be attributed here"
                .into(),
        );
    }
    let (tunnel, cipher, auth) = (
        tun.spec.tunnel().to_string(),
        tun.spec.cipher(),
        tun.spec.auth(),
    );
    Ok(VpnRecord {
        kind: "record".into(),
        schema: crate::record::SCHEMA,
        run_id: run_id.into(),
        workload: "vpn".into(),
        implementation: tunnel.clone(),
        impl_version: tun.implementation.clone(),
        variant: None,
        label: record::label(&tunnel, &cipher, auth.as_deref()),
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
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_checks() {
        assert_eq!(parse_streams("1,4").unwrap(), [1, 4]);
        assert!(parse_streams("0").is_err());
        assert!(parse_streams("129").is_err());
        assert!(parse_streams("128").is_ok());
        assert!(parse_duration(0.5).is_err());
        assert!(parse_duration(2.5).is_err());
        assert_eq!(parse_duration(2.0).unwrap(), 2);
        assert!(parse_tunnels("none,ipsec").is_err());
        assert_eq!(parse_directions("down,up").unwrap(), [true, false]);
        let sup: Vec<String> = ["AES-128-GCM", "AES-256-CBC", "none"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            parse_ciphers("aes-128-gcm,NONE", &sup, "OpenVPN 2.6").unwrap(),
            ["AES-128-GCM", "none"]
        );
        let e = parse_ciphers("rot13", &sup, "OpenVPN 2.6").unwrap_err();
        assert!(e.contains("AES-256-CBC") && !e.contains('\n'));
    }
}
