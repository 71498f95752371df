//! `vpn --dut`: the tunnel's server end and iperf3's server on the DUT, its client end and
//! iperf3's client on the controller, the data over the network between them. The whole
//! vpn workload runs on the DUT as its agent (`--remote-client`): it brings up its end of
//! each tunnel with the keys it made, then asks the controller (`dut::agent::ask`) to
//! bring up the client end with them, to run each load from there, and to take the end
//! down. IPsec's keys and SPIs travel the same way (a private file), and its proof is
//! the DUT's SA counters. The controller's ends live on one thread of their own (`Ends`): a daemon dies
//! with the thread that started it (PR_SET_PDEATHSIG).

use super::iperf::{self, Load, LoadError};
use super::ipsec;
use super::latency::{self, Rtts};
use super::point::{self, ControllerSide, HostSeen, Observed, Watch};
use super::tunnel::{self, Programs, Spec, Tunnel};
use crate::dut::agent::Unanswered;
use crate::failure::Failure;
use crate::record::vpn::VpnRecord;
use crate::sys::cpu::allowed_cpus;
use crate::sys::guard::Guard;
use crate::workloads::e2e::ends::Controller;
use crate::workloads::e2e::lab::{self, Place, CLIENT, ENDS, SERVER};
use anyhow::anyhow;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Mutex;
use std::time::Duration;

/// What the DUT asks the controller.
#[derive(Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub(super) enum Ask {
    /// Bring up the client end of `spec` towards the DUT at `dut_addr`, with its keys and
    /// certificates (`files`, by name) and, for WireGuard, the server's public key.
    Up {
        spec: Spec,
        dut_addr: String,
        files: Vec<(String, String)>,
        peer_public: Option<String>,
    },
    /// Run one load from the client end of tunnel `tunnel` (as `Up` answered).
    Load {
        tunnel: u64,
        load: Load,
        duration: u32,
        /// Probe round trips to the DUT's irtt server, idle and under the load.
        rtt: bool,
    },
    /// Take the client end of `tunnel` down.
    Down { tunnel: u64 },
}

/// The controller's client end, once up.
#[derive(Serialize, Deserialize)]
struct Up {
    tunnel: u64,
    /// The controller's address on the data path, its tunnel and outer interfaces.
    addr: String,
    ifname: String,
    outer_if: String,
    implementation: String,
}

/// One load, run from the controller.
#[derive(Serialize, Deserialize)]
struct Loaded {
    outcome: iperf::Outcome,
    seen: HostSeen,
    rtts: Rtts,
}

// ---------------------------------------------------------------- the DUT's side

/// The DUT's end of the test bed: this host's own network, at its data address.
pub struct DutEnd {
    /// Owns the temp dir (keys, certificates, logs).
    _guard: Guard,
    pub place: Place,
    /// This process's CPUs: the DUT's, when it shares a machine with its controller.
    cpus: Vec<usize>,
}

/// The controller's end of the tunnel that is up: taken down when dropped.
pub struct ClientEnd {
    id: u64,
    implementation: String,
}

impl Drop for ClientEnd {
    fn drop(&mut self) {
        // Nothing waits for the answer: the controller's thread takes ends down in order.
        let _ = serde_json::to_value(Ask::Down { tunnel: self.id }).map(crate::dut::agent::ask);
    }
}

/// The interface that holds `addr` here (`ip -j addr show`).
fn interface_of(addr: &str) -> Option<String> {
    let out = lab::ip(None, &["-j", "addr", "show"]).ok()?;
    let v: Value = serde_json::from_str(&out).ok()?;
    v.as_array()?.iter().find_map(|l| {
        l["addr_info"]
            .as_array()?
            .iter()
            .any(|a| a["local"].as_str() == Some(addr))
            .then(|| l["ifname"].as_str().map(String::from))
            .flatten()
    })
}

/// Asks the controller and waits (bounded, or until a stop) for its answer.
fn call(ask: &Ask, limit: Duration) -> Result<Value, LoadError> {
    crate::dut::agent::call(ask, limit).map_err(|e| match e {
        Unanswered::Interrupted => LoadError::Interrupted,
        Unanswered::Failed(why) => LoadError::Failed(why),
    })
}

fn failed(e: impl std::fmt::Display) -> LoadError {
    LoadError::Failed(e.to_string())
}

impl DutEnd {
    /// The DUT's end at its data address (`--dut-address`, else the SSH session's).
    pub fn new(given: Option<&str>) -> Result<DutEnd, Failure> {
        let addr = crate::dut::dut_address(given)?;
        let outer_if = interface_of(&addr).ok_or_else(|| {
            Failure::Input(format!(
                "--dut-address {addr}: no interface of the DUT has this address (ip addr): give one of its own addresses"
            ))
        })?;
        let guard = Guard::new();
        let dir = guard.temp_dir("vpn").map_err(Failure::runtime)?;
        Ok(DutEnd {
            _guard: guard,
            place: Place {
                end: SERVER,
                ns: None,
                dir,
                pid: std::process::id(),
                addr,
                // Learnt from the controller; the server end never needs it.
                peer: String::new(),
                outer_if,
            },
            cpus: allowed_cpus(),
        })
    }

    /// Brings up the server end here, then the client end on the controller.
    pub fn up(&self, progs: &Programs, spec: &Spec) -> Result<(Tunnel, ClientEnd), LoadError> {
        let p = &self.place;
        let mut t = Tunnel::new(spec, std::slice::from_ref(p));
        let read = |name: &str| -> Result<(String, String), LoadError> {
            let text = std::fs::read_to_string(p.path(name))
                .map_err(|e| failed(format!("{name}: {e}")))?;
            Ok((name.to_string(), text))
        };
        let mut files = Vec::new();
        let mut peer_public = None;
        let mut server_log = None;
        let mut sas = None;
        match spec {
            Spec::Bare => {}
            Spec::Ipsec {
                cipher,
                spread,
                driver,
            } => {
                // The driver is bound here, the end measured; the keys made here travel.
                let b = ipsec::prepare(&t.guard, cipher, *spread, driver.as_deref());
                let keys = ipsec::Keys::new(cipher).map_err(failed)?;
                files.push((ipsec::KEYS_FILE.to_string(), keys.text().to_string()));
                sas = Some((b.map_err(failed)?, keys, cipher));
            }
            Spec::WireGuard { kernel } => {
                let wg = progs.wg.as_deref().ok_or_else(|| failed("wg not found"))?;
                let (key, public) = tunnel::wg_keys(wg, &p.dir, "wg-server").map_err(failed)?;
                let (_, client_public) =
                    tunnel::wg_keys(wg, &p.dir, "wg-client").map_err(failed)?;
                tunnel::wireguard_end(&mut t, p, progs, *kernel, &key, &client_public, false)?;
                tunnel::wireguard_done(&mut t, progs, *kernel);
                files.push(read("wg-client.key")?);
                peer_public = Some(public);
            }
            Spec::OpenVpn { cipher, dco } => {
                if !p.path("client.crt").exists() {
                    let openssl = progs
                        .openssl
                        .as_deref()
                        .ok_or_else(|| failed("openssl not found"))?;
                    tunnel::make_certs(openssl, &p.dir).map_err(failed)?;
                }
                server_log = Some(tunnel::openvpn_start(&mut t, p, progs, cipher, *dco)?);
                for f in ["ca.crt", "client.crt", "client.key"] {
                    files.push(read(f)?);
                }
            }
        }
        let ask = Ask::Up {
            spec: spec.clone(),
            dut_addr: p.addr.clone(),
            files,
            peer_public,
        };
        let up: Up = serde_json::from_value(call(&ask, Duration::from_secs(60))?)
            .map_err(|e| failed(format!("the controller's answer: {e}")))?;
        let client = ClientEnd {
            id: up.tunnel,
            implementation: up.implementation,
        };
        t.ifname[CLIENT] = up.ifname;
        t.outer_if[CLIENT] = up.outer_if;
        if let Some((binding, keys, cipher)) = sas {
            ipsec::end_up(&t.guard, p, cipher, &keys, [&p.addr, &up.addr]).map_err(failed)?;
            tunnel::ipsec_done(&mut t, &binding, &keys)?;
        }
        if let Some(log) = server_log {
            tunnel::openvpn_wait(&mut t, 0, p, &log)?;
            tunnel::openvpn_done(&mut t, p, &log, progs)?;
            if matches!(spec, Spec::OpenVpn { dco: true, .. }) {
                tunnel::check_dco(p, &log, &t.ifname[SERVER]).map_err(failed)?;
            }
        }
        t.notes.push(format!(
            "vpn --dut: the {} end and iperf3's server on the DUT ({}), the {} end and iperf3's client on the controller ({}, {})",
            ENDS[SERVER], p.addr, ENDS[CLIENT], up.addr, client.implementation
        ));
        Ok((t, client))
    }

    /// One point: iperf3's server here, its client on the controller; the DUT's counters
    /// and CPU around the controller's run, and the agent's own CPU. `sampling`: under
    /// perf, on the DUT's end (the --profile rerun).
    #[allow(clippy::too_many_arguments)]
    pub fn measure_point(
        &self,
        tun: &mut Tunnel,
        client: &ClientEnd,
        progs: &Programs,
        load: Load,
        duration: u32,
        run_id: &str,
        sampling: point::Sampling,
    ) -> Result<VpnRecord, LoadError> {
        let p = &self.place;
        let server = iperf::start_server(&tun.guard, p, &progs.iperf3, &tun.server_addr)?;
        let prober = latency::serve(&tun.guard, p, progs.irtt.as_deref(), &tun.server_addr);
        let prober = match prober {
            Ok(p) => p,
            Err(e) => {
                tun.guard.stop_process(server.id() as i32);
                return Err(e);
            }
        };
        let res = (|| {
            // IPsec: the DUT's SA must carry the load.
            let proof = ipsec::Proof::of(tun.sa_spis, p.ns(), load)?;
            let watch = Watch::start(&[p], tun, Some(self.cpus.clone()))?;
            let window = point::start_sampling(tun, sampling);
            let wall = std::time::Instant::now();
            let ask = Ask::Load {
                tunnel: client.id,
                load,
                duration,
                rtt: prober.is_some(),
            };
            let answer = call(&ask, Duration::from_secs(duration as u64 + 60));
            let wall_s = wall.elapsed().as_secs_f64();
            let seconds = match &answer {
                Ok(v) => v["outcome"]["seconds"].as_f64().filter(|s| *s > 0.0),
                Err(_) => None,
            }
            .unwrap_or(wall_s);
            let profile = point::finish_sampling(window, sampling);
            let here = watch.finish(seconds)?;
            let agent_pct = here.cpu.own_s / seconds * 100.0;
            let loaded: Loaded = serde_json::from_value(answer?)
                .map_err(|e| failed(format!("the controller's answer: {e}")))?;
            let mut rec = point::record(Observed {
                tun,
                load,
                duration,
                run_id,
                outcome: loaded.outcome,
                wall_s,
                here,
                controller: Some(ControllerSide {
                    implementation: client.implementation.clone(),
                    seen: loaded.seen,
                }),
                profile,
                rtts: match prober {
                    Some(_) => loaded.rtts,
                    None => Rtts {
                        note: Some(format!(
                            "round trips not measured: irtt not found on the DUT: install {}",
                            super::tools::Tool::Irtt.package()
                        )),
                        ..Default::default()
                    },
                },
                throttled: None,
            });
            rec.dut_agent_cpu_pct = Some(agent_pct);
            ipsec::Proof::checked(proof, &mut rec)?;
            Ok(rec)
        })();
        if let Some(p) = prober {
            tun.guard.stop_process(p.id() as i32);
        }
        tun.guard.stop_process(server.id() as i32);
        res
    }
}

// ---------------------------------------------------------------- the controller's side

/// A request for the client ends' thread, and where its answer goes.
type Job = (Ask, Sender<anyhow::Result<Value>>);

/// The controller's client ends, on their own thread for the whole run.
pub(super) struct Ends {
    tx: Mutex<Option<Sender<Job>>>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Ends {
    pub(super) fn start(progs: Programs) -> Ends {
        let (tx, rx) = channel();
        let thread = std::thread::spawn(move || client_ends(rx, progs));
        Ends {
            tx: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
        }
    }
}

impl Controller for Ends {
    type Ask = Ask;

    fn flags(&self) -> Vec<String> {
        vec!["--remote-client".into()]
    }

    /// Hands the request to the ends' thread, and waits for its answer.
    fn serve(&self, ask: Ask) -> anyhow::Result<Value> {
        let (reply, answer) = channel();
        self.tx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .ok_or_else(|| anyhow!("the run is over"))?
            .send((ask, reply))
            .map_err(|_| anyhow!("the client ends are gone"))?;
        answer
            .recv()
            .map_err(|_| anyhow!("the client ends are gone"))?
    }

    /// Takes every client end down and waits until they are.
    fn close(&self) {
        self.tx.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(t) = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = t.join();
        }
    }
}

/// The thread that owns the controller's client ends: does what the DUT asks, in order.
fn client_ends(rx: Receiver<Job>, progs: Programs) {
    let guard = Guard::new();
    let dir = guard.temp_dir("vpn-client");
    let mut tunnels: HashMap<u64, (Tunnel, Place)> = HashMap::new();
    let mut next = 1u64;
    for (ask, reply) in rx {
        let res = match (&dir, ask) {
            (Err(e), _) => Err(anyhow!("{e}")),
            (
                Ok(dir),
                Ask::Up {
                    spec,
                    dut_addr,
                    files,
                    peer_public,
                },
            ) => {
                let sub = dir.join(format!("t{next}"));
                client_up(
                    &progs,
                    &spec,
                    sub,
                    &dut_addr,
                    &files,
                    peer_public.as_deref(),
                )
                .and_then(|(t, place)| {
                    let up = Up {
                        tunnel: next,
                        addr: place.addr.clone(),
                        ifname: t.ifname[CLIENT].clone(),
                        outer_if: place.outer_if.clone(),
                        implementation: client_implementation(&t, &progs),
                    };
                    tunnels.insert(next, (t, place));
                    next += 1;
                    Ok(serde_json::to_value(up)?)
                })
            }
            (
                Ok(_),
                Ask::Load {
                    tunnel,
                    load,
                    duration,
                    rtt,
                },
            ) => match tunnels.get(&tunnel) {
                Some((t, place)) => client_load(t, place, &progs, load, duration, rtt),
                None => Err(anyhow!("no client end {tunnel}")),
            },
            (Ok(_), Ask::Down { tunnel }) => {
                tunnels.remove(&tunnel);
                Ok(Value::Null)
            }
        };
        let _ = reply.send(res);
    }
    // The ends go first, then their temp dir.
    drop(tunnels);
    drop(guard);
}

fn client_implementation(t: &Tunnel, progs: &Programs) -> String {
    match &t.spec {
        Spec::Bare => "veth".into(),
        Spec::WireGuard { .. } if t.kernel => "kernel".into(),
        Spec::WireGuard { .. } => progs.wireguard_go_version.clone(),
        Spec::OpenVpn { .. } => progs.openvpn_version.clone(),
        Spec::Ipsec { .. } => "kernel".into(),
    }
}

fn load_error(e: LoadError) -> anyhow::Error {
    match e {
        LoadError::Interrupted => anyhow!(crate::dut::agent::INTERRUPTED),
        LoadError::Failed(m) => anyhow!("{m}"),
    }
}

/// The client end of `spec` here, towards the DUT at `dut_addr`.
fn client_up(
    progs: &Programs,
    spec: &Spec,
    dir: PathBuf,
    dut_addr: &str,
    files: &[(String, String)],
    peer_public: Option<&str>,
) -> anyhow::Result<(Tunnel, Place)> {
    std::fs::create_dir(&dir).map_err(|e| anyhow!("{}: {e}", dir.display()))?;
    for (name, text) in files {
        // Names are the DUT's: one plain file name each, never a path.
        if name.contains('/') || name.starts_with('.') {
            return Err(anyhow!("bad file name from the DUT: {name}"));
        }
        tunnel::write_private(&dir.join(name), text)?;
    }
    let place = Place::here(CLIENT, dir, dut_addr)?;
    let mut t = Tunnel::new(spec, std::slice::from_ref(&place));
    match spec {
        Spec::Bare => {}
        Spec::Ipsec { cipher, .. } => {
            let (_, text) = files
                .iter()
                .find(|(name, _)| name == ipsec::KEYS_FILE)
                .ok_or_else(|| anyhow!("no IPsec keys from the DUT"))?;
            let keys = ipsec::Keys::parse(text)?;
            ipsec::end_up(&t.guard, &place, cipher, &keys, [dut_addr, &place.addr])?;
            t.kernel = true;
        }
        Spec::WireGuard { kernel } => {
            // The DUT's kind where this kernel has it, else wireguard-go.
            let kernel = *kernel && place.kernel_wireguard();
            let public = peer_public.ok_or_else(|| anyhow!("no server key from the DUT"))?;
            let key = place.path("wg-client.key");
            tunnel::wireguard_end(&mut t, &place, progs, kernel, &key, public, true)
                .map_err(load_error)?;
            t.kernel = kernel;
        }
        Spec::OpenVpn { cipher, dco } => {
            let log =
                tunnel::openvpn_start(&mut t, &place, progs, cipher, *dco).map_err(load_error)?;
            tunnel::openvpn_wait(&mut t, 0, &place, &log).map_err(load_error)?;
            if *dco {
                tunnel::check_dco(&place, &log, &t.ifname[CLIENT])?;
                t.kernel = true;
            }
        }
    }
    Ok((t, place))
}

/// One load from the client end: iperf3's client, what this host saw over it, and (`rtt`)
/// irtt's round trips to the DUT, idle before the load and under it.
fn client_load(
    t: &Tunnel,
    place: &Place,
    progs: &Programs,
    load: Load,
    duration: u32,
    rtt: bool,
) -> anyhow::Result<Value> {
    let irtt = progs.irtt.as_deref().filter(|_| rtt);
    let mut prober = rtt
        .then(|| latency::Prober::idle(&t.guard, place, irtt, &t.server_addr, duration))
        .transpose()
        .map_err(load_error)?;
    let watch = Watch::start(&[place], t, Some(allowed_cpus())).map_err(load_error)?;
    if let Some(p) = prober.as_mut() {
        p.loaded().map_err(load_error)?;
    }
    let (outcome, seen) =
        point::run_client(place, t, progs, load, duration, watch).map_err(load_error)?;
    let mut rtts = match prober {
        Some(p) => p.finish().map_err(load_error)?,
        None => Rtts::default(),
    };
    if let Some(note) = rtts.note.as_mut() {
        *note = format!("{note} (on the controller)");
    }
    Ok(serde_json::to_value(Loaded {
        outcome,
        seen,
        rtts,
    })?)
}
