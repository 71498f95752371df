//! ssh as a `driver::Workload`: input, root and programs checked in `new`; in `plan` the
//! lab, the run's keys, each server started once to read what it offers (a cipher or MAC
//! asked for that a server does not offer is refused before anything is measured); per
//! point (server, cipher, MAC, direction) `rounds` transfers through fresh connections,
//! one record of their median; everything stopped and removed in `finish`.

use super::round::{self, Outcome, Round};
use super::server::{client_offers, Keys, Offered, Programs, Server};
use super::args::{Kind, SshArgs};
use crate::driver::{self, Ctx, Plan, Workload};
use crate::failure::Failure;
use crate::record::ssh::{self as rec, SshData, SshRecord};
use crate::profile::{ProfileField, Sampler};
use crate::record::{Exclusion, ExclusionKind};
use crate::sys::guard::Guard;
use crate::workloads::e2e::lab::{Lab, Place, CLIENT, SERVER};
use std::time::Duration;

/// A data phase shorter than this is too short for the threads' shares to be more than
/// rough (a few of /proc's ticks).
const SHORT_PHASE_S: f64 = 0.5;

/// A point's cipher and MAC.
type CipherMac = (String, Option<String>);

#[derive(Clone, Debug)]
struct Point {
    kind: Kind,
    cipher: String,
    mac: Option<String>,
    down: bool,
}

pub struct Ssh {
    servers: Vec<Kind>,
    ciphers: Option<Vec<String>>,
    macs: Option<Vec<String>>,
    directions: Vec<bool>,
    bytes: u64,
    rounds: u32,
    limit: Duration,
    progs: Programs,
    /// A DUT's agent (`--remote-client`): the servers here, the client on the controller.
    remote: bool,
    dut_address: Option<String>,
    /// Where the servers listen: the lab's server namespace, or this DUT's address.
    place: Option<Place>,
    /// A DUT's agent: what the controller's client offers, and its version.
    client: Option<(Offered, String)>,
    /// Owns the keys' temp dir, the servers and the clients; released before the lab.
    guard: Guard,
    lab: Option<Lab>,
    keys: Option<Keys>,
    running: Option<Server>,
    /// What each server offers, and its version, read in `plan`.
    offered: Vec<(Kind, Offered, String)>,
    points: Vec<Point>,
    /// --profile: checked in `new`, each point sampled once more.
    sampler: Option<Sampler>,
    /// OpenSSH's cipher and MAC timed alone, once per pair.
    alone: Vec<(CipherMac, Result<rec::CipherAlone, String>)>,
}

pub(super) const NEED_ROOT: &str =
    "ssh needs root (it creates network namespaces and starts servers in them): run it with sudo";

fn direction(down: bool) -> &'static str {
    if down {
        "down"
    } else {
        "up"
    }
}

impl Ssh {
    /// Checks every input, root and the programs; nothing is started.
    pub fn new(args: SshArgs) -> Result<Ssh, Failure> {
        let limit = super::args::parse_limit(args.common.time).map_err(Failure::input)?;
        if !crate::sys::is_root() {
            return Err(Failure::Unavailable(NEED_ROOT.into()));
        }
        let progs = Programs::find(&args.server.0, !args.remote_client)?;
        let sampler = (args.profile || args.profile_dir.is_some())
            .then(|| Sampler::new(args.profile_dir.clone(), true))
            .transpose()
            .map_err(Failure::input)?;
        Ok(Ssh {
            sampler,
            remote: args.remote_client,
            dut_address: args.dut_address.given,
            place: None,
            client: None,
            alone: Vec::new(),
            servers: args.server.0,
            ciphers: args.ciphers.map(|n| n.0),
            macs: args.macs.map(|n| n.0),
            directions: args.direction.0,
            bytes: args.bytes,
            rounds: args.rounds,
            limit: Duration::from_secs_f64(limit),
            progs,
            guard: Guard::new(),
            lab: None,
            keys: None,
            running: None,
            offered: Vec::new(),
            points: Vec::new(),
        })
    }

    /// The server of `kind` running (and no other), started if need be.
    fn server(&mut self, kind: Kind) -> anyhow::Result<()> {
        if self.running.as_ref().is_some_and(|s| s.kind != kind) {
            if let Some(old) = self.running.take() {
                self.guard.stop_process(old.pid);
            }
        }
        if self.running.is_none() {
            let (Some(place), Some(keys)) = (self.place.as_ref(), self.keys.as_ref()) else {
                anyhow::bail!("the lab is not up");
            };
            // On a DUT, ports its own servers (sshd, Dropbear on 22) leave free.
            let port = match self.remote {
                true => Some(crate::sys::net::free_ports(1)?[0]),
                false => None,
            };
            let s = Server::start(&self.guard, &self.progs, keys, place, kind, port)?;
            self.running = Some(s);
        }
        Ok(())
    }

    /// The lab (or this DUT's address) and the keys: the client key made here, or on the
    /// controller for a DUT's agent.
    fn places(&mut self) -> Result<(), Failure> {
        if !self.remote {
            let lab = Lab::new().map_err(|e| {
                Failure::Unavailable(format!("cannot make the lab's namespaces: {e}"))
            })?;
            let keys = Keys::new(&self.guard, &self.progs, None).map_err(Failure::runtime)?;
            self.place = Some(lab.place(SERVER));
            self.lab = Some(lab);
            self.keys = Some(keys);
            return Ok(());
        }
        let addr = crate::dut::dut_address(self.dut_address.as_deref())?;
        let public = super::remote::key().map_err(Failure::runtime)?;
        let keys = Keys::new(&self.guard, &self.progs, Some(&public)).map_err(Failure::runtime)?;
        self.place = Some(Place {
            end: SERVER,
            ns: None,
            dir: keys.dir.clone(),
            pid: std::process::id(),
            addr,
            peer: String::new(),
            outer_if: String::new(),
        });
        self.keys = Some(keys);
        Ok(())
    }

    /// Starts the lab, the keys and each server once, and reads what each offers.
    fn probe(&mut self) -> Result<(), Failure> {
        self.places()?;
        for kind in self.servers.clone() {
            self.server(kind).map_err(Failure::runtime)?;
            let (Some(s), Some(keys)) = (self.running.as_ref(), self.keys.as_ref()) else {
                return Err(Failure::runtime("no server"));
            };
            let version = s.version.clone();
            let o = match &self.lab {
                Some(lab) => s.offered(&self.guard, &self.progs, keys, &lab.ns[CLIENT]),
                None => super::remote::probe(s).map(|p| {
                    self.client = Some((p.client, p.client_version));
                    p.server
                }),
            }
            .map_err(Failure::runtime)?;
            let version = o.software.clone().unwrap_or(version);
            self.offered.push((kind, o, version));
        }
        Ok(())
    }

    /// An OpenSSH point's cipher and MAC timed alone (super::alone), once per pair.
    fn alone(&mut self, p: &Point) -> Result<rec::CipherAlone, String> {
        let key = (p.cipher.clone(), p.mac.clone());
        if let Some((_, done)) = self.alone.iter().find(|(k, _)| *k == key) {
            return done.clone();
        }
        let done = super::alone::measure(&p.cipher, p.mac.as_deref());
        self.alone.push((key, done.clone()));
        done
    }

    fn offered_by(&self, kind: Kind) -> Option<&(Kind, Offered, String)> {
        self.offered.iter().find(|(k, _, _)| *k == kind)
    }

    fn exclusion(&self, p: &Point, kind: ExclusionKind, reason: String) -> Exclusion {
        Exclusion {
            workload: crate::record::Workload::Ssh,
            implementation: p.kind.name().into(),
            kind,
            reason,
            point: [
                ("cipher".to_string(), p.cipher.clone().into()),
                ("mac".to_string(), p.mac.clone().into()),
                ("direction".to_string(), direction(p.down).into()),
                ("bytes".to_string(), self.bytes.into()),
            ]
            .into(),
        }
    }

    /// The points, from what each server and the client offer; an explicit cipher or MAC
    /// one of them lacks is refused, a default one is left out with an exclusion.
    fn points(&self, client: &Offered) -> Result<(Vec<Point>, Vec<Exclusion>), Failure> {
        let mut points = Vec::new();
        let mut excluded = Vec::new();
        for (kind, offered, version) in &self.offered {
            let who = format!("{} {version}", kind.name());
            let ciphers: Vec<String> = match &self.ciphers {
                Some(asked) => {
                    let (server, client) = (&offered.ciphers, &client.ciphers);
                    all_offered(asked, "--ciphers", &who, server, client)?;
                    asked.clone()
                }
                None => super::args::DEFAULT_CIPHERS
                    .iter()
                    .map(|c| c.to_string())
                    .filter(|c| {
                        let ok = offered.ciphers.contains(c) && client.ciphers.contains(c);
                        if !ok {
                            for &down in &self.directions {
                                let p = Point { kind: *kind, cipher: c.clone(), mac: None, down };
                                excluded.push(self.exclusion(&p, ExclusionKind::NotOffered, format!(
                                    "{who} does not offer {c} (a default cipher); it offers {}",
                                    offered.ciphers.join(",")
                                )));
                            }
                        }
                        ok
                    })
                    .collect(),
            };
            for c in ciphers {
                let macs: Vec<Option<String>> = if rec::is_aead(&c) {
                    vec![None]
                } else {
                    match &self.macs {
                        Some(asked) => {
                            all_offered(asked, "--macs", &who, &offered.macs, &client.macs)?;
                            asked.iter().cloned().map(Some).collect()
                        }
                        None => {
                            let first = super::args::DEFAULT_MACS.iter().find(|m| {
                                offered.macs.iter().any(|o| o == *m)
                                    && client.macs.iter().any(|o| o == *m)
                            });
                            match first {
                                Some(m) => vec![Some(m.to_string())],
                                None => {
                                    for &down in &self.directions {
                                        let p = Point { kind: *kind, cipher: c.clone(), mac: None, down };
                                        excluded.push(self.exclusion(&p, ExclusionKind::NotOffered, format!(
                                            "{who} offers none of the default MACs ({}); it offers {}: give --macs",
                                            super::args::DEFAULT_MACS.join(","),
                                            offered.macs.join(",")
                                        )));
                                    }
                                    Vec::new()
                                }
                            }
                        }
                    }
                };
                for mac in macs {
                    for &down in &self.directions {
                        points.push(Point {
                            kind: *kind,
                            cipher: c.clone(),
                            mac: mac.clone(),
                            down,
                        });
                    }
                }
            }
        }
        Ok((points, excluded))
    }

    fn record(&self, p: &Point, rounds: &[Round], ctx: &Ctx) -> SshRecord {
        let rates: Vec<f64> = rounds.iter().map(|r| r.bytes_per_s).collect();
        let median = crate::stats::median(&rates);
        // The round the point's CPU window and limit come from: the median's (nearest to
        // it for an even count).
        let mid = (0..rounds.len())
            .min_by(|&a, &b| (rates[a] - median).abs().total_cmp(&(rates[b] - median).abs()))
            .unwrap_or(0);
        let m = &rounds[mid];
        let gb = self.bytes as f64 / 1e9;
        let per_gb = |f: &dyn Fn(&Round) -> f64| {
            crate::stats::median(&rounds.iter().map(|r| f(r) / gb).collect::<Vec<_>>())
        };
        let client = per_gb(&|r| r.client_cpu_s);
        let server = per_gb(&|r| r.server_cpu_s);
        let (end, busiest) = if m.server_busiest.1 >= m.client_busiest.1 {
            ("server", &m.server_busiest)
        } else {
            ("client", &m.client_busiest)
        };
        let seen = crate::analyse::limit::Seen {
            busiest_thread: Some((format!("{} ({end})", busiest.0), busiest.1)),
            busiest_softirq: m.busiest_softirq,
            server: None,
            busy_pct: m.busy_pct,
            cpus: m.cpus,
            generator: Some((
                match (p.down, self.remote) {
                    (true, false) => "cryptobench (the data's sink)",
                    (false, false) => "cryptobench (its samplers)",
                    (true, true) => "cryptobench on the controller (the data's sink)",
                    (false, true) => "cryptobench on the controller (its samplers)",
                }
                .into(),
                m.own_pct,
            )),
        };
        let others: Vec<f64> = rates
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != mid)
            .map(|(_, r)| *r)
            .collect();
        let limit =
            crate::analyse::limit::rate_cap(crate::analyse::limit::limit(&seen), m.bytes_per_s, &others);
        let ci = (rounds.len() > 1).then(|| {
            let (lo, hi, _) = crate::stats::median_ci(&rates);
            [lo, hi]
        });
        let (_, _, version) = self.offered_by(p.kind).cloned().unwrap_or((
            p.kind,
            Offered { ciphers: vec![], macs: vec![], software: None },
            String::new(),
        ));
        let disturbed = crate::record::window::disturbed(m.others_pct);
        let mut notes = vec![
            format!(
                "{} bytes per round {}, through a fresh connection each round ({} round(s)); the rate is the data phase's, from the first payload byte taken by the channel to the last received, key exchange and authentication left out (connect_s)",
                self.bytes,
                if p.down { "sent by the server's `head -c` and counted by cryptobench" } else { "read by the client from a sparse in-memory file of zeros and counted by the server's `wc -c`" },
                rounds.len()
            ),
            format!(
                "negotiation proven from the {} log for every round; host and client keys (ed25519) made for the run, no system or user SSH configuration read",
                if m.from_server_log { "server's (sshd LogLevel=DEBUG1)" } else { "client's (ssh -v; Dropbear does not log it)" }
            ),
            "CPU per GB: each end's whole connection (key exchange included): the server's listener with its reaped children, the client's ssh process".into(),
        ];
        if m.transfer_s < SHORT_PHASE_S {
            notes.push(format!(
                "the data phase lasted {:.3} s: the threads' shares are read from /proc's 10 ms ticks over it, and are coarse; give more --bytes",
                m.transfer_s
            ));
        }
        if let Some(place) = self.place.as_ref().filter(|_| self.remote) {
            notes.push(format!(
                "the server on this DUT at {}, the client (OpenSSH's ssh) on the controller, the data over the network between them: the server's CPU, busy share and others' share are the DUT's, the client's CPU and busiest thread the controller's",
                place.addr
            ));
        }
        if p.kind == Kind::Dropbear {
            notes.push("Dropbear runs with its default receive window (-W not given)".into());
        }
        if disturbed {
            notes.push(format!(
                "other processes used {:.0}% of the CPUs during the median round: the number may be low",
                m.others_pct
            ));
        }
        SshRecord {
            kind: crate::record::LineKind::Record,
            schema: crate::record::SCHEMA,
            run_id: ctx.environment.run_id.clone(),
            workload: crate::record::Workload::Ssh,
            implementation: p.kind.name().into(),
            impl_version: version.clone(),
            variant: None,
            label: rec::label(p.kind.name(), &p.cipher, p.mac.as_deref(), direction(p.down)),
            throughput_bps: median,
            throughput_bps_ci: ci,
            samples_bps: rates.clone(),
            wall_s: rounds.iter().map(|r| r.transfer_s).sum(),
            cpu_user_s: None,
            cpu_sys_s: None,
            cpu_s_per_gb: Some(client + server),
            others_cpu_pct: Some(m.others_pct),
            disturbed,
            notes,
            profile: None,
            dut: None,
            dut_agent_cpu_pct: m.agent_pct,
            data: SshData {
                server: rec::ServerId {
                    name: p.kind.name().into(),
                    version,
                },
                cipher: p.cipher.clone(),
                mac: p.mac.clone(),
                direction: direction(p.down).into(),
                bytes: self.bytes,
                rounds: rounds.len() as u32,
                negotiated: m.negotiated.clone(),
                negotiated_from: if m.from_server_log { "server" } else { "client" }.into(),
                transfer_s: m.transfer_s,
                connect_s: m.connect_s,
                client_session_s: m.client_session_s,
                cpu_s_per_gb_by_end: rec::EndsCpu { client, server },
                busiest_thread_pct: busiest.1,
                busiest_thread: rec::EndsThread {
                    client: rec::BusyThread {
                        name: m.client_busiest.0.clone(),
                        pct: m.client_busiest.1,
                    },
                    server: rec::BusyThread {
                        name: m.server_busiest.0.clone(),
                        pct: m.server_busiest.1,
                    },
                },
                limit,
                system_busy_pct: m.busy_pct,
                client_profile: None,
                primitive: None,
            },
        }
    }
}

/// The point once more under perf: each end's profile (server, client), the sampled
/// transfer's rate in the server's; why there is none where the transfer failed.
fn sampled_round(
    guard: &Guard,
    spec: &round::Spec,
) -> (Option<ProfileField>, Option<ProfileField>) {
    let failed = |why: String| {
        let f = ProfileField::Unavailable {
            unavailable: format!("the sampled transfer failed: {why}"),
        };
        (Some(f.clone()), Some(f))
    };
    match round::run(guard, spec) {
        Ok(Outcome::Done(r)) => match r.profiles {
            Some(mut p) => {
                if let ProfileField::Measured(m) = &mut p.server {
                    m.throughput_bps = Some(r.bytes_per_s);
                }
                (Some(p.server), Some(p.client))
            }
            None => (None, None),
        },
        Ok(Outcome::Stopped) => (None, None),
        Ok(Outcome::Refused(why) | Outcome::Failed(why)) => failed(why),
        Err(e) => failed(e.to_string()),
    }
}

/// A cipher or MAC asked for that a server (or the client) lacks: exit 2, with its list.
fn not_offered(flag: &str, asked: &str, by: &str, list: &[String]) -> Failure {
    Failure::Input(format!(
        "invalid {flag} '{asked}': {by} does not offer it; it offers {} (cryptobench ssh --list)",
        if list.is_empty() { "none".into() } else { list.join(",") }
    ))
}

/// Each of `asked` offered by the server (`who`) and by the client, else the refusal
/// naming the first that lacks it.
fn all_offered(
    asked: &[String],
    flag: &str,
    who: &str,
    server: &[String],
    client: &[String],
) -> Result<(), Failure> {
    for x in asked {
        if !server.contains(x) {
            return Err(not_offered(flag, x, who, server));
        }
        if !client.contains(x) {
            return Err(not_offered(flag, x, "the ssh client", client));
        }
    }
    Ok(())
}

/// `ssh --list`: what each server offers here, read from a connection to it, and what the
/// client offers.
pub fn offered_lines(args: &SshArgs) -> Result<Vec<String>, Failure> {
    let mut w = Ssh::new(args.clone())?;
    crate::sys::signal::install_signal_handler();
    let probed = w.probe();
    let mut lines = Vec::new();
    for (kind, o, version) in &w.offered {
        lines.push(format!("{} {version}: ciphers {}", kind.name(), o.ciphers.join(",")));
        lines.push(format!("{} {version}: macs {}", kind.name(), o.macs.join(",")));
    }
    w.finish();
    probed?;
    let client = client_offers(&w.progs)?;
    lines.push(format!("ssh client: ciphers {}", client.ciphers.join(",")));
    lines.push(format!("ssh client: macs {}", client.macs.join(",")));
    Ok(lines)
}

impl Workload for Ssh {
    type Data = SshData;

    fn name(&self) -> &'static str {
        "ssh"
    }

    fn plan(&mut self) -> Result<Plan, Failure> {
        let here = match self.remote {
            true => None,
            false => Some(client_offers(&self.progs)?),
        };
        self.probe()?;
        let (client, client_version) = match here {
            Some(o) => (o, None),
            None => {
                let (o, v) = self.client.clone().ok_or_else(|| Failure::runtime("no client"))?;
                (o, Some(v))
            }
        };
        let (points, exclusions) = self.points(&client)?;
        self.points = points;
        let settings = crate::record::WorkloadSettings::Ssh(rec::SshSettings {
            ssh_servers: self.servers.iter().map(|k| k.name().to_string()).collect(),
            ciphers: self.ciphers.clone().unwrap_or_default(),
            macs: self.macs.clone().unwrap_or_default(),
            directions: self.directions.iter().map(|d| direction(*d).to_string()).collect(),
            bytes: self.bytes,
            rounds: self.rounds,
            netns: self.lab.as_ref().map(|l| l.ns.to_vec()).unwrap_or_default(),
        });
        let mut libraries: Vec<crate::record::Library> = self
            .offered
            .iter()
            .map(|(kind, _, version)| crate::record::Library {
                implementation: kind.name().into(),
                label: Some(kind.name().into()),
                version: version.clone(),
                access: Some("process".into()),
                ..Default::default()
            })
            .collect();
        libraries.push(crate::record::Library {
            implementation: "ssh".into(),
            label: Some(match self.remote {
                true => "ssh (client, on the controller)".into(),
                false => "ssh (client)".into(),
            }),
            version: client_version.unwrap_or_else(|| {
                crate::sys::program::version_line(&self.progs.ssh, &["-V"], |l| {
                    l.contains("OpenSSH")
                })
            }),
            access: Some("process".into()),
            ..Default::default()
        });
        // A guess from 200 MB/s (Dropbear is slower, AES-NI faster) and 0.3 s to connect.
        let per_round = self.bytes as f64 / 200e6 + 0.3;
        Ok(Plan {
            points: self.points.len(),
            seconds: self.points.len() as f64 * self.rounds as f64 * per_round,
            libraries,
            unavailable: Vec::new(),
            settings,
            exclusions,
        })
    }

    fn point_excluded(&self, index: usize, kind: ExclusionKind, reason: &str) -> Option<Exclusion> {
        let p = self.points.get(index)?;
        Some(self.exclusion(p, kind, reason.into()))
    }

    fn measure(&mut self, index: usize, ctx: &Ctx) -> Result<Vec<driver::Outcome<SshData>>, Failure> {
        let Some(p) = self.points.get(index).cloned() else {
            return Ok(Vec::new());
        };
        let label = rec::label(p.kind.name(), &p.cipher, p.mac.as_deref(), direction(p.down));
        ctx.progress.set_message(label.clone());
        let excluded = |w: &Ssh, kind, why: String| {
            Ok(vec![driver::Outcome::Excluded(w.exclusion(&p, kind, why))])
        };
        if let Err(e) = self.server(p.kind) {
            return excluded(self, ExclusionKind::Failed, format!("the server did not start: {e}"));
        }
        let (Some(server), Some(keys)) = (self.running.as_ref(), self.keys.as_ref()) else {
            return Err(Failure::runtime("no server"));
        };
        let client = match &self.lab {
            Some(lab) => round::Client::Here {
                progs: &self.progs,
                keys,
                ns: &lab.ns[CLIENT],
            },
            None => round::Client::Controller,
        };
        let spec = round::Spec {
            server,
            client,
            cipher: &p.cipher,
            mac: p.mac.as_deref(),
            down: p.down,
            bytes: self.bytes,
            limit: self.limit,
            sampling: None,
        };
        let mut rounds = Vec::new();
        for n in 1..=self.rounds {
            let at = if self.rounds > 1 { format!(" (round {n})") } else { String::new() };
            match round::run(&self.guard, &spec).map_err(Failure::runtime)? {
                Outcome::Done(r) => {
                    let r = *r;
                    if !ctx.progress.is_hidden() {
                        ctx.progress.set_message(format!("{label}{at}: {:.0} MB/s", r.bytes_per_s / 1e6));
                    }
                    rounds.push(r);
                }
                Outcome::Refused(why) => {
                    return excluded(self, ExclusionKind::Refused, format!("{why}{at}"));
                }
                Outcome::Failed(why) => {
                    return excluded(self, ExclusionKind::Failed, format!("{why}{at}"));
                }
                Outcome::Stopped => {
                    return excluded(
                        self,
                        ExclusionKind::NotReached,
                        format!("the run was interrupted during this point{at}"),
                    );
                }
            }
        }
        let mut record = self.record(&p, &rounds, ctx);
        if let Some(perf) = &self.sampler {
            let sampled = round::Spec {
                sampling: Some((perf, &label)),
                ..spec
            };
            let (server, client) = sampled_round(&self.guard, &sampled);
            if let Some(f) = &server {
                ctx.progress.suspend(|| {
                    let table = crate::profile::table::render(&label, f, Some(record.throughput_bps));
                    eprint!("{table}")
                });
            }
            record.profile = server.map(Box::new);
            record.data.client_profile = client;
        }
        match p.kind {
            Kind::OpenSsh => match self.alone(&p) {
                Ok(a) => record.data.primitive = Some(a),
                Err(why) => record.notes.push(format!("cipher and MAC alone not timed: {why}")),
            },
            Kind::Dropbear => record.notes.push(
                "Dropbear's crypto is libtomcrypt's, built in: not timed alone; --profile gives its share of the server's CPU".into(),
            ),
        }
        Ok(vec![driver::Outcome::Record(record)])
    }

    fn finish(&mut self) {
        // The servers and clients first, then the namespaces they ran in.
        self.running = None;
        self.guard.release();
        self.keys = None;
        self.place = None;
        self.lab = None;
    }
}
