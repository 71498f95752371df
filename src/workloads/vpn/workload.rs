//! vpn as a `driver::Workload`: the inputs and tools checked in `new`, the test bed (two
//! namespaces over a veth) built in `plan`, one tunnel per point (brought up, measured
//! at every load, torn down), everything removed in `finish`.

use super::iperf::{self, Load, LoadError};
use super::tools::{self, Tool};
use super::tunnel::{self, Programs, Spec};
use super::args::{VpnArgs, Wanted};
use crate::driver::{self, Ctx, Plan, Workload};
use crate::failure::Failure;
use crate::measure;
use crate::profile::{ProfileField, Sampler};
use crate::record::vpn::{VpnData, VpnRecord};
use crate::record::Exclusion;
use crate::workloads::e2e::lab::{self, Lab};
use std::io::IsTerminal;
use std::path::PathBuf;

pub struct Vpn {
    wanted: Vec<Wanted>,
    ciphers: Vec<String>,
    /// IPsec's inputs, checked (super::ipsec_input).
    ipsec: super::ipsec_input::Input,
    duration: u32,
    rounds: u32,
    loads: Vec<Load>,
    progs: Programs,
    /// Programs found, for the environment.
    found: Vec<(Tool, PathBuf)>,
    lab: Option<Bed>,
    /// Where the client ends run.
    clients: Clients,
    /// (round, tunnel) per point, rounds outermost so drift hits every tunnel alike.
    points: Vec<(u32, Spec)>,
    /// --profile: every point is run again under perf.
    sampler: Option<Sampler>,
    /// Each point's throughputs in the rounds so far (tunnel, load): repeats that agree to
    /// 4 digits are a rate cap.
    rates: std::collections::HashMap<(String, String), Vec<f64>>,
}

/// Where the tunnels run: both ends in the lab's namespaces, or (`vpn --dut`) the server
/// end here and the client end on the controller.
/// Where the client ends of the tunnels run.
enum Clients {
    /// Here, in the lab's second namespace.
    Here,
    /// `vpn --dut`'s agent (`--remote-client`): on the controller, towards this DUT's data
    /// address (`--dut-address`, else the SSH session's).
    Controller { dut_address: Option<String> },
}

enum Bed {
    Lab(Lab),
    Dut(super::remote::DutEnd),
}

/// A tunnel that is up, and with `vpn --dut` its client end on the controller.
type Up = (super::tunnel::Tunnel, Option<super::remote::ClientEnd>);

impl Bed {
    /// Where the server end runs.
    fn server(&self) -> lab::Place {
        match self {
            Bed::Lab(l) => l.place(lab::SERVER),
            Bed::Dut(d) => d.place.clone(),
        }
    }

    /// The environment's names: namespaces, outer links and their addresses.
    fn names(&self) -> (Vec<String>, Vec<String>, Vec<String>) {
        match self {
            Bed::Lab(l) => (
                l.ns.to_vec(),
                l.veth.to_vec(),
                lab::VETH_ADDR.iter().map(|a| a.to_string()).collect(),
            ),
            Bed::Dut(d) => (
                Vec::new(),
                vec![d.place.outer_if.clone()],
                vec![d.place.addr.clone()],
            ),
        }
    }

    fn up(&self, progs: &Programs, spec: &Spec) -> Result<Up, LoadError> {
        match self {
            Bed::Lab(l) => tunnel::up(l, progs, spec).map(|t| (t, None)),
            Bed::Dut(d) => d.up(progs, spec).map(|(t, c)| (t, Some(c))),
        }
    }

    fn measure_point(
        &self,
        up: &mut Up,
        progs: &Programs,
        load: Load,
        duration: u32,
        run_id: &str,
        sampling: super::point::Sampling,
    ) -> Result<VpnRecord, LoadError> {
        let (tun, client) = up;
        match (self, client) {
            (Bed::Dut(d), Some(c)) => {
                d.measure_point(tun, c, progs, load, duration, run_id, sampling)
            }
            (Bed::Lab(l), _) => {
                // IPsec: the receiver's SA must carry the load (it has no device of its own).
                let receiver = l.place(if load.down { lab::CLIENT } else { lab::SERVER });
                let proof = super::ipsec::Proof::of(tun.sa_spis, receiver.ns(), load)?;
                let mut rec =
                    super::point::measure_point(l, tun, progs, load, duration, run_id, sampling)?;
                super::ipsec::Proof::checked(proof, &mut rec)?;
                Ok(rec)
            }
            (Bed::Dut(_), None) => Err(LoadError::Failed("no client end".into())),
        }
    }
}

fn progress(msg: &str) {
    if std::io::stderr().is_terminal() {
        eprintln!("{msg}");
    }
}

fn load_label(l: &Load) -> String {
    let size = l.packet_size.map(|n| format!(" {n} B")).unwrap_or_default();
    format!("{}{size} {} x{}", l.protocol(), l.direction(), l.streams)
}

impl Vpn {
    /// Checks every input and finds every program; nothing is started.
    pub fn new(args: VpnArgs) -> Result<Vpn, Failure> {
        let duration = super::args::parse_duration(args.common.time.unwrap_or(super::args::DEFAULT_DURATION))
            .map_err(Failure::input)?;
        if !(1..=super::args::MAX_ROUNDS).contains(&args.rounds) {
            return Err(Failure::Input(format!(
                "invalid --rounds {}: give 1 to {}",
                args.rounds,
                super::args::MAX_ROUNDS
            )));
        }
        let streams = args.streams.0.clone();
        let directions = args.direction.0.clone();
        let wanted = args.tunnels.0.clone();
        let (mut progs, found) = programs(&wanted)?;
        if let Some(dir) = &args.openssl {
            if !wanted.iter().any(|w| w.openvpn()) {
                return Err(Failure::Input(
                    "--openssl runs OpenVPN on a build: add openvpn to --tunnels".into(),
                ));
            }
            progs.openssl_build =
                Some(crate::impls::openssl::build::Build::open(dir, true).map_err(Failure::input)?);
        }
        let ipsec = super::ipsec_input::Input::new(&args, &wanted)?;
        let mut ciphers = Vec::new();
        if let Some(ovpn) = &progs.openvpn {
            let supported = tools::openvpn_ciphers(ovpn).map_err(Failure::runtime)?;
            ciphers = super::args::openvpn_ciphers(&args.ciphers.0, &supported, &progs.openvpn_version)
                .map_err(Failure::input)?;
        }
        if !privileged() {
            return Err(Failure::Unavailable(NEED_ROOT.into()));
        }
        let sampler = (args.profile || args.profile_dir.is_some())
            .then(|| {
                Sampler::new(
                    args.profile_dir.clone(),
                    wanted.iter().any(|w| w.wireguard()),
                )
            })
            .transpose()
            .map_err(Failure::input)?;
        let mut loads = Vec::new();
        for udp in std::iter::once(false).chain(args.udp.then_some(true)) {
            for &s in &streams {
                for &down in &directions {
                    loads.push(Load {
                        udp,
                        streams: s,
                        down,
                        packet_size: None,
                    });
                }
            }
        }
        let sizes = args.packet_sizes.as_ref().map_or(Vec::new(), |s| s.0.clone());
        for &size in &sizes {
            for &s in &streams {
                for &down in &directions {
                    loads.push(Load {
                        udp: true,
                        streams: s,
                        down,
                        packet_size: Some(size),
                    });
                }
            }
        }
        Ok(Vpn {
            wanted,
            ciphers,
            ipsec,
            duration,
            rounds: args.rounds,
            loads,
            progs,
            found,
            lab: None,
            clients: match args.remote_client {
                true => Clients::Controller {
                    dut_address: args.dut_address.given,
                },
                false => Clients::Here,
            },
            points: Vec::new(),
            sampler,
            rates: Default::default(),
        })
    }

    /// The programs the client ends need (`vpn --dut`'s controller), checked by `new`.
    pub fn client_programs(mut self) -> Programs {
        if let Some(go) = &self.progs.wireguard_go {
            self.progs.wireguard_go_version =
                tools::short_version(&tools::version(go, Tool::WireguardGo));
        }
        self.progs
    }

    /// The tunnels to measure, in the order asked; WireGuard is the kernel's where it
    /// works, else wireguard-go.
    fn specs(&mut self, kernel_wg: bool) -> Result<Vec<Spec>, Failure> {
        let mut specs = Vec::new();
        for w in &self.wanted {
            match w {
                Wanted::Bare => specs.push(Spec::Bare),
                Wanted::WireGuardKernel if !kernel_wg => {
                    return Err(Failure::Unavailable(
                        "--tunnels wireguard-kernel: this kernel cannot create a wireguard link (no WireGuard module); use wireguard-go".into(),
                    ))
                }
                Wanted::WireGuardKernel => specs.push(Spec::WireGuard { kernel: true }),
                Wanted::WireGuardAuto if kernel_wg => specs.push(Spec::WireGuard { kernel: true }),
                Wanted::WireGuardAuto | Wanted::WireGuardGo => {
                    let go = self.progs.wireguard_go.clone().ok_or_else(|| {
                        Failure::Unavailable((tools::require(Tool::WireguardGo).unwrap_err()).to_string())
                    })?;
                    self.progs.wireguard_go_version =
                        tools::short_version(&tools::version(&go, Tool::WireguardGo));
                    self.found.push((Tool::WireguardGo, go));
                    let s = Spec::WireGuard { kernel: false };
                    if !specs.contains(&s) {
                        specs.push(s);
                    }
                }
                Wanted::Ipsec => specs.extend(self.ipsec.specs()),
                Wanted::OpenVpn | Wanted::OpenVpnDco => {
                    let dco = *w == Wanted::OpenVpnDco;
                    for c in &self.ciphers {
                        specs.push(Spec::OpenVpn {
                            cipher: c.clone(),
                            dco,
                        });
                    }
                }
            }
        }
        Ok(specs)
    }

    fn exclusion(&self, round: u32, spec: &Spec, load: Option<&Load>, reason: String) -> Exclusion {
        let round = if self.rounds > 1 {
            format!(" (round {round})")
        } else {
            String::new()
        };
        let point = [
            (
                "tunnel".to_string(),
                format!("{}{round}", spec.label()).into(),
            ),
            ("load".to_string(), load.map(load_label).into()),
        ]
        .into();
        Exclusion {
            workload: crate::record::Workload::Vpn,
            implementation: match (&self.progs.openssl_build, spec) {
                (Some(b), Spec::OpenVpn { .. }) => {
                    crate::impls::openssl::build::on_build(spec.tunnel(), &b.name())
                }
                _ => spec.tunnel().into(),
            },
            kind: crate::record::ExclusionKind::Failed,
            reason,
            point,
        }
    }
}

/// Root, or CAP_NET_ADMIN in the effective set.
pub fn privileged() -> bool {
    if crate::sys::is_root() {
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

pub(super) const NEED_ROOT: &str =
    "vpn needs root or CAP_NET_ADMIN (it creates network namespaces and links): run it with sudo";

/// Each program the tunnels need; a missing one is named with its package.
fn programs(wanted: &[Wanted]) -> Result<(Programs, Vec<(Tool, PathBuf)>), Failure> {
    let mut needed = vec![Tool::Ip, Tool::Iperf3];
    if wanted.iter().any(|w| w.wireguard()) {
        needed.push(Tool::Wg);
    }
    if wanted.contains(&Wanted::WireGuardGo) {
        needed.push(Tool::WireguardGo);
    }
    if wanted.iter().any(|w| w.openvpn()) {
        needed.extend([Tool::Openvpn, Tool::Openssl]);
    }
    let mut found = Vec::new();
    for t in needed {
        found.push((t, tools::require(t).map_err(Failure::unavailable)?));
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
    if let Some(irtt) = tools::find(Tool::Irtt) {
        found.push((Tool::Irtt, irtt.clone()));
        progs.irtt = Some(irtt);
    }
    if let Some(ovpn) = &progs.openvpn {
        progs.openvpn_version = tools::short_version(&tools::version(ovpn, Tool::Openvpn));
    }
    Ok((progs, found))
}

/// The same point again under perf; the record keeps the unsampled run's numbers and
/// the profile the throughput reached while sampled.
fn sampled_rerun(
    bed: &Bed,
    up: &mut Up,
    progs: &Programs,
    load: Load,
    duration: u32,
    run_id: &str,
    sampling: (&Sampler, &str),
) -> Option<Box<ProfileField>> {
    match bed.measure_point(up, progs, load, duration, run_id, Some(sampling)) {
        Ok(again) => again.profile.map(|mut f| {
            if let ProfileField::Measured(m) = &mut *f {
                m.throughput_bps = Some(again.throughput_bps);
            }
            f
        }),
        Err(LoadError::Interrupted) => None,
        Err(LoadError::Failed(e)) => Some(Box::new(ProfileField::Unavailable {
            unavailable: format!("the sampled run failed: {e}"),
        })),
    }
}

impl Workload for Vpn {
    type Data = VpnData;

    fn name(&self) -> &'static str {
        "vpn"
    }

    fn plan(&mut self) -> Result<Plan, Failure> {
        let lab = match &self.clients {
            Clients::Controller { dut_address } => {
                Bed::Dut(super::remote::DutEnd::new(dut_address.as_deref())?)
            }
            Clients::Here => Bed::Lab(
                Lab::new()
                    .map_err(|e| Failure::Runtime(format!("cannot build the test bed: {e}")))?,
            ),
        };
        let wants_wg = self.wanted.iter().any(|w| w.wireguard());
        let kernel_wg = wants_wg && lab.server().kernel_wireguard();
        let mut unavailable = Vec::new();
        if wants_wg && !kernel_wg {
            unavailable.push(crate::record::Unavailable {
                name: "wireguard (kernel)".into(),
                reason: "this kernel cannot create a wireguard link (no WireGuard module)".into(),
            });
        }
        if self.wanted.contains(&Wanted::Ipsec) {
            // The controller checked its own end before it started this agent.
            let end = if matches!(self.clients, Clients::Controller { .. }) {
                "the DUT (the server end): "
            } else {
                ""
            };
            super::ipsec::esp_usable(lab.server().ns())
                .map_err(|why| Failure::Unavailable(format!("--tunnels ipsec: {end}{why}")))?;
        }
        unavailable.extend(self.ipsec.skipped());
        let specs = self.specs(kernel_wg)?;
        let directions: Vec<&str> = self.loads.iter().map(Load::direction).collect();
        let mut dirs: Vec<&str> = Vec::new();
        for d in directions {
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
        let mut streams: Vec<u32> = self.loads.iter().map(|l| l.streams).collect();
        streams.dedup();
        let (netns, veth, outer_addresses) = lab.names();
        let settings =
            crate::record::WorkloadSettings::Vpn(crate::record::vpn::VpnSettings {
                tunnels: specs.iter().map(Spec::label).collect(),
                streams,
                directions: dirs.iter().map(|d| d.to_string()).collect(),
                duration_s: self.duration,
                rounds: self.rounds,
                udp: self.loads.iter().any(|l| l.udp),
                kernel_wireguard: kernel_wg,
                netns,
                veth,
                outer_addresses,
            });
        self.points = (1..=self.rounds)
            .flat_map(|r| specs.iter().map(move |s| (r, s.clone())))
            .collect();
        self.lab = Some(lab);
        Ok(Plan {
            points: self.points.len(),
            seconds: (self.points.len() * self.loads.len()) as f64 * (self.duration as f64 + 1.0),
            libraries: self
                .found
                .iter()
                .map(|(t, p)| tools::describe(*t, p))
                .collect(),
            unavailable,
            settings,
            exclusions: Vec::new(),
        })
    }

    fn point_excluded(
        &self,
        index: usize,
        kind: crate::record::ExclusionKind,
        reason: &str,
    ) -> Option<Exclusion> {
        let (round, spec) = self.points.get(index)?;
        let mut e = self.exclusion(*round, spec, None, reason.into());
        e.kind = kind;
        Some(e)
    }

    fn measure(
        &mut self,
        index: usize,
        ctx: &Ctx,
    ) -> Result<Vec<driver::Outcome<VpnData>>, Failure> {
        let (Some(lab), Some((round, spec))) = (self.lab.as_ref(), self.points.get(index)) else {
            return Ok(Vec::new());
        };
        let round_label = if self.rounds > 1 {
            format!(" (round {round})")
        } else {
            String::new()
        };
        progress(&format!("{}{round_label}: bringing it up", spec.label()));
        ctx.progress
            .set_message(format!("{}{round_label}", spec.label()));
        let mut out = Vec::new();
        let bring_up = iperf::once_more(
            || lab.up(&self.progs, spec),
            |first| {
                progress(&format!(
                    "{}{round_label}: {first}; bringing it up once more",
                    spec.label()
                ))
            },
        );
        let mut up = match bring_up {
            Ok((mut up, first)) => {
                if let Some(first) = first {
                    up.0.notes
                        .push(format!("brought up at the second try (the first: {first})"));
                }
                up
            }
            Err(LoadError::Interrupted) => return Ok(out),
            Err(LoadError::Failed(e)) => {
                out.push(driver::Outcome::Excluded(
                    self.exclusion(*round, spec, None, e),
                ));
                return Ok(out);
            }
        };
        for (k, load) in self.loads.iter().enumerate() {
            if measure::stopped() {
                break;
            }
            if let Err(e) = up.0.check_alive() {
                out.push(driver::Outcome::Excluded(self.exclusion(
                    *round,
                    spec,
                    Some(load),
                    e.to_string(),
                )));
                continue;
            }
            let point = lab.measure_point(
                &mut up,
                &self.progs,
                *load,
                self.duration,
                &ctx.environment.run_id,
                None,
            );
            match point {
                Ok(mut rec) => {
                    rec.round = *round;
                    let seen = self
                        .rates
                        .entry((spec.label(), load_label(load)))
                        .or_default();
                    rec.limit = rec
                        .limit
                        .take()
                        .map(|l| crate::analyse::limit::rate_cap(l, rec.throughput_bps, seen));
                    seen.push(rec.throughput_bps);
                    if let Some(s) = &self.sampler {
                        let label =
                            format!("vpn {}{round_label} {}", spec.label(), load_label(load));
                        rec.profile = sampled_rerun(
                            lab,
                            &mut up,
                            &self.progs,
                            *load,
                            self.duration,
                            &ctx.environment.run_id,
                            (s, &label),
                        );
                        if let Some(f) = &rec.profile {
                            ctx.progress.suspend(|| {
                                eprint!(
                                    "{}",
                                    crate::profile::table::render(
                                        &label,
                                        f,
                                        Some(rec.throughput_bps)
                                    )
                                )
                            });
                        }
                    }
                    progress(&format!(
                        "[{}/{}] {}{round_label} {}: {:.0} Mbit/s",
                        index * self.loads.len() + k + 1,
                        self.points.len() * self.loads.len(),
                        spec.label(),
                        load_label(load),
                        rec.throughput_bps * 8.0 / 1e6
                    ));
                    out.push(driver::Outcome::Record(rec));
                }
                Err(LoadError::Interrupted) => break,
                Err(LoadError::Failed(e)) => out.push(driver::Outcome::Excluded(self.exclusion(
                    *round,
                    spec,
                    Some(load),
                    e,
                ))),
            }
        }
        Ok(out)
    }

    fn finish(&mut self) {
        // Namespaces, links and daemons go before the report is printed.
        self.lab = None;
    }
}
