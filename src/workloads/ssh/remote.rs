//! `ssh --dut`: the servers (sshd, Dropbear) on the DUT, the client (OpenSSH's `ssh`) on
//! the controller, the data over the network between them. The whole ssh workload runs
//! on the DUT as its agent (`--remote-client`): it makes the servers' host keys and
//! authorized_keys in its temp dir, starts each server on the DUT's data address, and
//! watches the server's CPU and log; for the client's key, each probe connection and each
//! transfer it asks the controller (`dut::agent::Pending`), which runs the client's side
//! (client.rs) and answers with what it measured. The controller's key and files live in
//! a temp dir of its own, removed when the last DUT is done (or on SIGINT/SIGTERM).

use super::client::{self, End};
use super::server::{self, Offered, Programs, Server};
use super::args::SshArgs;
use crate::dut::agent::{call, Unanswered};
use crate::dut::relay::Relayed;
use crate::failure::Failure;
use crate::sys::guard::Guard;
use crate::workloads::e2e::ends::Controller;
use anyhow::anyhow;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// How long the controller may take for a key or a probe connection.
const ASK_LIMIT: Duration = Duration::from_secs(60);

/// A server on the DUT, as the controller's client reaches it.
#[derive(Clone, Serialize, Deserialize)]
struct Target {
    addr: String,
    port: u16,
    /// The known_hosts line naming its host key (made on the DUT for the run).
    known_hosts: String,
    name: String,
}

/// What the DUT asks the controller.
#[derive(Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum Ask {
    /// The public half of the run's client key (made on the controller, once).
    Key,
    /// A probe connection: what the server offers, and what the client offers.
    Probe { target: Target },
    /// One transfer's client side.
    Transfer {
        target: Target,
        cipher: String,
        mac: Option<String>,
        down: bool,
        bytes: u64,
        limit_s: f64,
    },
}

/// The answer to a probe.
#[derive(Clone, Serialize, Deserialize)]
pub struct Probed {
    pub server: Offered,
    pub client: Offered,
    /// `ssh -V` on the controller.
    pub client_version: String,
}

// ---------------------------------------------------------------- the DUT's side

fn target(srv: &Server) -> anyhow::Result<Target> {
    Ok(Target {
        addr: srv.addr.clone(),
        port: srv.port,
        known_hosts: std::fs::read_to_string(&srv.known_hosts)?,
        name: srv.kind.name().into(),
    })
}

/// Asks the controller and waits (bounded, or until a stop) for its answer.
/// The public key of the controller's client key, for authorized_keys here.
pub fn key() -> anyhow::Result<String> {
    call(&Ask::Key, ASK_LIMIT).map_err(|e| anyhow!("the client's key: {e}"))
}

/// A probe connection from the controller to `srv`.
pub fn probe(srv: &Server) -> anyhow::Result<Probed> {
    let ask = Ask::Probe {
        target: target(srv)?,
    };
    call(&ask, ASK_LIMIT).map_err(|e| anyhow!("{e}"))
}

/// One transfer's client side, run by the controller: `bytes` up or `down` through
/// `srv` with `cipher` and `mac`, within `limit`.
pub fn transfer(
    srv: &Server,
    cipher: &str,
    mac: Option<&str>,
    down: bool,
    bytes: u64,
    limit: Duration,
) -> anyhow::Result<End> {
    let ask = Ask::Transfer {
        target: target(srv)?,
        cipher: cipher.into(),
        mac: mac.map(String::from),
        down,
        bytes,
        limit_s: limit.as_secs_f64(),
    };
    // The controller bounds the client (stall, --time); then the answer has this long.
    match call(&ask, limit + ASK_LIMIT) {
        Ok(end) => Ok(end),
        Err(Unanswered::Interrupted) => Ok(End::Stopped),
        Err(Unanswered::Failed(why)) => Ok(End::Failed(why)),
    }
}

// ---------------------------------------------------------------- the controller's side

/// The controller's client: its programs, and the run's key once made.
struct Here {
    progs: Programs,
    /// Owns the key's temp dir.
    key: Option<(Guard, PathBuf)>,
}

/// The requests being served, and whether the service is closing (their clients are then
/// stopped: the agent that asked is gone).
#[derive(Default)]
struct InFlight {
    count: AtomicUsize,
    closing: AtomicBool,
}

/// One request counted in flight while it lives.
struct Serving<'a>(&'a InFlight);

impl<'a> Serving<'a> {
    fn new(f: &'a InFlight) -> Serving<'a> {
        f.count.fetch_add(1, Ordering::SeqCst);
        Serving(f)
    }
}

impl Drop for Serving<'_> {
    fn drop(&mut self) {
        self.0.count.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How long closing waits for the requests in flight to stop their clients.
const CLOSE_LIMIT: Duration = Duration::from_secs(10);

/// A temp dir for one request, with the target's known_hosts: (guard, dir, file).
fn job_dir(t: &Target) -> anyhow::Result<(Guard, PathBuf, PathBuf)> {
    let guard = Guard::new();
    let dir = guard.temp_dir("ssh-client")?;
    let known = dir.join("known_hosts");
    std::fs::write(&known, &t.known_hosts)?;
    Ok((guard, dir, known))
}

/// The controller's side: OpenSSH's client, for every DUT of the run.
struct Clients {
    here: Mutex<Here>,
    flight: InFlight,
}

impl Controller for Clients {
    type Ask = Ask;

    fn flags(&self) -> Vec<String> {
        vec!["--remote-client".into()]
    }

    fn serve(&self, ask: Ask) -> anyhow::Result<serde_json::Value> {
        serve(&self.here, &self.flight, ask)
    }

    /// The clients still running stopped, their temp dirs removed, then the key's.
    fn close(&self) {
        self.flight.closing.store(true, Ordering::SeqCst);
        let t = std::time::Instant::now();
        while self.flight.count.load(Ordering::SeqCst) > 0 && t.elapsed() < CLOSE_LIMIT {
            std::thread::sleep(Duration::from_millis(10));
        }
        drop(self.here.lock().unwrap_or_else(|e| e.into_inner()).key.take());
    }
}

/// Does what the DUT asked.
fn serve(here: &Mutex<Here>, flight: &InFlight, ask: Ask) -> anyhow::Result<serde_json::Value> {
    let _serving = Serving::new(flight);
    let (progs, key) = {
        let mut h = here.lock().unwrap_or_else(|e| e.into_inner());
        if h.key.is_none() {
            let guard = Guard::new();
            let dir = guard.temp_dir("ssh-key")?;
            let key = server::client_key(&guard, &h.progs, &dir)?;
            h.key = Some((guard, key));
        }
        let key = h.key.as_ref().map(|(_, k)| k.clone()).unwrap_or_default();
        (h.progs.clone(), key)
    };
    match ask {
        Ask::Key => {
            let public = std::fs::read_to_string(key.with_extension("pub"))?;
            Ok(serde_json::to_value(public.trim())?)
        }
        Ask::Probe { target: t } => {
            let (guard, dir, known) = job_dir(&t)?;
            let argv = server::client_argv(&progs, &key, &known, t.port, "-vv");
            let probed = Probed {
                server: server::probe(&guard, &dir, argv, &t.addr, &t.name)?,
                client: server::client_offers(&progs).map_err(|f| anyhow!("{}", f.message()))?,
                client_version: crate::sys::program::version_line(&progs.ssh, &["-V"], |l| {
                    l.contains("OpenSSH")
                }),
            };
            Ok(serde_json::to_value(probed)?)
        }
        Ask::Transfer {
            target: t,
            cipher,
            mac,
            down,
            bytes,
            limit_s,
        } => {
            let (guard, dir, known) = job_dir(&t)?;
            let base = server::client_argv(&progs, &key, &known, t.port, "-v");
            let spec = client::Spec {
                argv: client::transfer_argv(base, &cipher, mac.as_deref(), &t.addr, down, bytes),
                dir: &dir,
                down,
                bytes,
                limit: Duration::from_secs_f64(limit_s.clamp(1.0, super::args::MAX_LIMIT_S)),
                abandoned: Some(&flight.closing),
            };
            let end = client::run(&guard, &spec, || {})?;
            Ok(serde_json::to_value(end)?)
        }
    }
}

/// `ssh --dut`: the DUT's runs, relayed into this side's sinks, the client run here.
pub fn on_dut(args: SshArgs) -> Result<Relayed, Failure> {
    args.common.check("ssh").map_err(Failure::input)?;
    super::args::parse_limit(args.common.time).map_err(Failure::input)?;
    if args.profile || args.profile_dir.is_some() {
        return Err(Failure::Input(
            "--profile is not offered with --dut for ssh: run it on the machine itself".into(),
        ));
    }
    let clients = Clients {
        here: Mutex::new(Here {
            progs: Programs::find(&[], true)?,
            key: None,
        }),
        flight: InFlight::default(),
    };
    crate::workloads::e2e::ends::split("ssh", &args.common, &args.dut, &[], clients)
}
