//! The two ends: the programs (found once), the run's keys, a server started in the
//! lab's server namespace, what it offers (its own KEXINIT, read from `ssh -vv`), and the
//! proof of what a connection negotiated (the kex lines of sshd's log or of `ssh -v`).
//!
//! Nothing of the system's SSH setup is used: no /etc/ssh config (`-f /dev/null`,
//! `-F /dev/null`), no system host key, no ~/.ssh. Each server runs with the run's temp
//! home bind-mounted over root's home in its own mount namespace (which `ip netns exec`
//! makes private): Dropbear reads authorized_keys from the home only, and the sessions
//! of both servers then start in an empty home.

use super::args::Kind;
use crate::failure::Failure;
use crate::sys::guard::Guard;
use crate::workloads::e2e::lab;
use anyhow::{anyhow, Context};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

/// How long a helper (ssh-keygen, a probe connection) may take.
const HELPER_LIMIT: Duration = Duration::from_secs(30);
/// How long a server may take to listen.
const LISTEN_LIMIT: Duration = Duration::from_secs(10);

/// The programs of both ends, found before anything starts.
#[derive(Clone, Debug)]
pub struct Programs {
    pub ssh: PathBuf,
    pub ssh_keygen: PathBuf,
    /// sshd, needed for openssh.
    pub sshd: Option<PathBuf>,
    /// dropbear and dropbearkey, needed for dropbear.
    pub dropbear: Option<(PathBuf, PathBuf)>,
    /// On a DUT (no namespace of ours): a mount namespace for each server.
    pub unshare: Option<PathBuf>,
}

fn program(name: &str, package: &str) -> Result<PathBuf, Failure> {
    crate::sys::program::find_program(name, None).ok_or_else(|| {
        Failure::Unavailable(format!(
            "ssh needs {name}, which is not installed: run scripts/deps/ssh.sh (Debian: apt-get install {package})"
        ))
    })
}

impl Programs {
    /// The programs of `servers`, and of the client where it runs here (`client_here`;
    /// else the controller runs it and this side names it only).
    pub fn find(servers: &[Kind], client_here: bool) -> Result<Programs, Failure> {
        let ssh = match client_here {
            true => program("ssh", "openssh-client")?,
            false => PathBuf::from("ssh"),
        };
        // The client's key, and sshd's host key.
        let ssh_keygen = match client_here || servers.contains(&Kind::OpenSsh) {
            true => program("ssh-keygen", "openssh-client")?,
            false => PathBuf::from("ssh-keygen"),
        };
        let unshare = match client_here {
            true => None,
            false => Some(program("unshare", "util-linux")?),
        };
        let sshd = match servers.contains(&Kind::OpenSsh) {
            true => Some(program("sshd", "openssh-server")?),
            false => None,
        };
        let dropbear = match servers.contains(&Kind::Dropbear) {
            true => Some((
                program("dropbear", "dropbear-bin")?,
                program("dropbearkey", "dropbear-bin")?,
            )),
            false => None,
        };
        Ok(Programs {
            ssh,
            ssh_keygen,
            sshd,
            dropbear,
            unshare,
        })
    }

    /// The version a server reports: "OpenSSH_9.2p1 Debian-2+deb12u10", "2022.83".
    pub fn version(&self, kind: Kind) -> String {
        let pick = |p: &Path, args: &[&str], key: &str| {
            crate::sys::program::version_line(p, args, |l| l.contains(key))
        };
        match (kind, &self.sshd, &self.dropbear) {
            // sshd has no version flag: an unknown one makes it print its usage, version
            // first.
            (Kind::OpenSsh, Some(sshd), _) => {
                let line = pick(sshd, &["-V"], "OpenSSH");
                line.split(',').next().unwrap_or(&line).trim().to_string()
            }
            (Kind::Dropbear, _, Some((dropbear, _))) => {
                let line = pick(dropbear, &["-V"], "Dropbear");
                line.split_whitespace()
                    .find_map(|w| w.strip_prefix('v'))
                    .unwrap_or(&line)
                    .to_string()
            }
            _ => String::new(),
        }
    }
}

/// The run's keys and files, in its private temp dir.
pub struct Keys {
    pub dir: PathBuf,
    /// The client's private key (ed25519, no passphrase).
    pub client_key: PathBuf,
    /// Bind-mounted over root's home for the servers: .ssh/authorized_keys only.
    pub home: PathBuf,
    /// Root's home in /etc/passwd, where `home` is mounted.
    pub root_home: String,
}

/// Root's home directory as /etc/passwd names it (Dropbear looks there).
fn root_home() -> anyhow::Result<String> {
    let passwd = std::fs::read_to_string("/etc/passwd").context("cannot read /etc/passwd")?;
    passwd
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f.len() >= 6 && f[2] == "0")
        .map(|f| f[5].to_string())
        .filter(|h| h.starts_with('/') && h.len() > 1)
        .ok_or_else(|| anyhow!("/etc/passwd names no home directory for uid 0"))
}

/// Runs a helper to completion within HELPER_LIMIT; its stdout, or its stderr's gist.
fn helper(guard: &Guard, dir: &Path, argv: &[&str]) -> anyhow::Result<String> {
    let (code, out, err) = crate::sys::spawn::run_bounded(guard, dir, argv, &[], HELPER_LIMIT)?;
    if code != Some(0) {
        let gist = err.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(anyhow!("`{}` failed: {gist}", argv.join(" ")));
    }
    Ok(out)
}

/// Makes a client key pair (ed25519, no passphrase) at `key` and `key`.pub.
pub fn client_key(guard: &Guard, progs: &Programs, dir: &Path) -> anyhow::Result<PathBuf> {
    let client_key = dir.join("client_ed25519");
    let keygen = progs.ssh_keygen.to_string_lossy().into_owned();
    let key = client_key.to_string_lossy().into_owned();
    helper(
        guard,
        dir,
        &[&keygen, "-q", "-t", "ed25519", "-N", "", "-C", "cryptobench-ssh", "-f", &key],
    )?;
    Ok(client_key)
}

impl Keys {
    /// The run's keys: a client key made here, or (`authorized`) the public key of one
    /// the controller made, authorized for the servers.
    pub fn new(guard: &Guard, progs: &Programs, authorized: Option<&str>) -> anyhow::Result<Keys> {
        use std::os::unix::fs::DirBuilderExt;
        let dir = guard.temp_dir("ssh")?;
        let home = dir.join("home");
        std::fs::DirBuilder::new()
            .mode(0o700)
            .recursive(true)
            .create(home.join(".ssh"))?;
        let client_key = match authorized {
            Some(public) => {
                std::fs::write(home.join(".ssh/authorized_keys"), format!("{}\n", public.trim()))?;
                dir.join("no-client-key-here")
            }
            None => {
                let key = client_key(guard, progs, &dir)?;
                std::fs::copy(dir.join("client_ed25519.pub"), home.join(".ssh/authorized_keys"))?;
                key
            }
        };
        Ok(Keys {
            client_key,
            home,
            root_home: root_home()?,
            dir,
        })
    }
}

/// A server listening in the lab's server namespace, owned by the guard.
pub struct Server {
    pub kind: Kind,
    pub version: String,
    /// The listener: every connection's processes are its descendants.
    pub pid: i32,
    pub port: u16,
    pub addr: String,
    /// Its stderr: sshd's DEBUG1 lines (the proof), Dropbear's log.
    pub log: PathBuf,
    /// The known_hosts file naming its host key.
    pub known_hosts: PathBuf,
    _child: Child,
}

impl Server {
    /// Makes a host key for `kind`, starts the server and waits until it listens.
    pub fn start(
        guard: &Guard,
        progs: &Programs,
        keys: &Keys,
        place: &lab::Place,
        kind: Kind,
        port: Option<u16>,
    ) -> anyhow::Result<Server> {
        let dir = &keys.dir;
        let name = kind.name();
        let host_key = dir.join(format!("{name}_host_ed25519"));
        let hk = host_key.to_string_lossy().into_owned();
        let addr = place.addr.clone();
        let listen = |default: u16| {
            let p = port.unwrap_or(default);
            (p, format!("{}:{p}", crate::sys::net::url_host(&addr)))
        };
        let (port, public, argv): (u16, String, Vec<String>) = match kind {
            Kind::OpenSsh => {
                let sshd = progs.sshd.as_ref().ok_or_else(|| anyhow!("no sshd"))?;
                let keygen = progs.ssh_keygen.to_string_lossy().into_owned();
                // Made once per run: the server may be started again for later points.
                if !host_key.exists() {
                    helper(guard, dir, &[&keygen, "-q", "-t", "ed25519", "-N", "", "-f", &hk])?;
                }
                let public = std::fs::read_to_string(dir.join(format!("{name}_host_ed25519.pub")))?;
                privsep_dir()?;
                let (port, at) = listen(22);
                let keys_file = keys.home.join(".ssh/authorized_keys");
                let mut argv: Vec<String> = [
                    // sshd re-executes itself for each connection: by its absolute path.
                    sshd.to_string_lossy().as_ref(),
                    "-D",
                    "-e",
                    "-f",
                    "/dev/null",
                ]
                .map(String::from)
                .to_vec();
                for o in [
                    format!("ListenAddress={at}"),
                    format!("HostKey={hk}"),
                    format!("AuthorizedKeysFile={}", keys_file.display()),
                    // The run's files live under /tmp, which is world-writable.
                    "StrictModes=no".into(),
                    "PidFile=none".into(),
                    "LogLevel=DEBUG1".into(),
                    "PermitRootLogin=prohibit-password".into(),
                    "PubkeyAuthentication=yes".into(),
                    "PasswordAuthentication=no".into(),
                    "KbdInteractiveAuthentication=no".into(),
                    "UsePAM=no".into(),
                    "UseDNS=no".into(),
                    "PrintMotd=no".into(),
                    "Compression=no".into(),
                ] {
                    argv.push("-o".into());
                    argv.push(o);
                }
                (port, public, argv)
            }
            Kind::Dropbear => {
                let (dropbear, dropbearkey) =
                    progs.dropbear.as_ref().ok_or_else(|| anyhow!("no dropbear"))?;
                let dbk = dropbearkey.to_string_lossy().into_owned();
                if !host_key.exists() {
                    helper(guard, dir, &[&dbk, "-t", "ed25519", "-f", &hk])?;
                }
                let out = helper(guard, dir, &[&dbk, "-y", "-f", &hk])?;
                let public = out
                    .lines()
                    .find(|l| l.starts_with("ssh-"))
                    .ok_or_else(|| anyhow!("dropbearkey -y printed no public key"))?
                    .to_string();
                let (port, at) = listen(2222);
                let argv = [
                    dropbear.to_string_lossy().as_ref(),
                    "-F",
                    "-E",
                    // Public keys only: no passwords.
                    "-s",
                    "-p",
                    &at,
                    "-r",
                    &hk,
                    "-P",
                    &dir.join("dropbear.pid").to_string_lossy(),
                ]
                .map(String::from)
                .to_vec();
                (port, public, argv)
            }
        };
        let key_fields: Vec<&str> = public.split_whitespace().take(2).collect();
        let host = match port {
            22 => addr.clone(),
            p => format!("[{addr}]:{p}"),
        };
        let known_hosts = dir.join(format!("{name}_known_hosts"));
        std::fs::write(&known_hosts, format!("{host} {}\n", key_fields.join(" ")))?;
        let log = dir.join(format!("{name}.log"));
        // `sh -c 'mount ... && exec "$0" "$@"' server args...`: the program's argv is
        // passed untouched, and sh's PID becomes the server's.
        let home = keys.home.to_string_lossy().into_owned();
        let script = "mount --bind \"$CBENCH_HOME\" \"$CBENCH_ROOT_HOME\" && exec \"$0\" \"$@\"";
        // Without a namespace of ours (on a DUT), a mount namespace of its own.
        let unshare = progs.unshare.as_ref().map(|u| u.to_string_lossy().into_owned());
        let mut full: Vec<&str> = match (&unshare, place.ns()) {
            (Some(u), None) => vec![u, "--mount", "--propagation", "private"],
            _ => Vec::new(),
        };
        full.push("env");
        let (h, r) = (
            format!("CBENCH_HOME={home}"),
            format!("CBENCH_ROOT_HOME={}", keys.root_home),
        );
        full.extend([h.as_str(), r.as_str(), "sh", "-c", script]);
        full.extend(argv.iter().map(String::as_str));
        let child = lab::spawn_in_ns(guard, place.ns(), &full, &log, None, name)?;
        let pid = child.id() as i32;
        let server = Server {
            kind,
            version: progs.version(kind),
            pid,
            port,
            addr,
            log,
            known_hosts,
            _child: child,
        };
        server.wait_listening()?;
        Ok(server)
    }

    /// Until the server's namespace shows a socket listening on its port (the
    /// namespace's own /proc/PID/net/tcp), within LISTEN_LIMIT.
    fn wait_listening(&self) -> anyhow::Result<()> {
        let port = format!(":{:04X} ", self.port);
        let start = Instant::now();
        loop {
            let tcp = std::fs::read_to_string(format!("/proc/{}/net/tcp", self.pid))
                .unwrap_or_default();
            // "sl local_address rem_address st ...": st 0A is LISTEN.
            let listening = tcp.lines().any(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.len() > 3 && format!("{} ", f[1]).ends_with(&port) && f[3] == "0A"
            });
            if listening {
                return Ok(());
            }
            if crate::sys::procfs::stat(self.pid).is_none_or(|s| s.state == 'Z') {
                return Err(anyhow!(
                    "{} exited before listening: {}",
                    self.kind.name(),
                    last_lines(&self.log, 2)
                ));
            }
            if start.elapsed() > LISTEN_LIMIT || crate::measure::stopped() {
                return Err(anyhow!(
                    "{} did not listen on port {} within {} s: {}",
                    self.kind.name(),
                    self.port,
                    LISTEN_LIMIT.as_secs(),
                    last_lines(&self.log, 2)
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The client's argv for a connection to this server (no algorithms, no command).
    pub fn client_argv(&self, progs: &Programs, keys: &Keys, verbose: &str) -> Vec<String> {
        client_argv(progs, &keys.client_key, &self.known_hosts, self.port, verbose)
    }

    /// What the server offers: the ciphers and MACs of its KEXINIT, read from a probe
    /// connection's `ssh -vv`; the connection also proves that the session works.
    pub fn offered(
        &self,
        guard: &Guard,
        progs: &Programs,
        keys: &Keys,
        client_ns: &str,
    ) -> anyhow::Result<Offered> {
        let mut argv = vec!["ip".to_string(), "netns".into(), "exec".into()];
        argv.push(client_ns.to_string());
        argv.extend(self.client_argv(progs, keys, "-vv"));
        probe(guard, &keys.dir, argv, &self.addr, self.kind.name())
    }
}

/// What the server at `addr` offers, from a probe connection (`client`: ssh -vv's argv
/// without the destination) run in `dir`.
pub fn probe(
    guard: &Guard,
    dir: &Path,
    mut client: Vec<String>,
    addr: &str,
    name: &str,
) -> anyhow::Result<Offered> {
    client.extend([format!("root@{addr}"), "true".into()]);
    let a: Vec<&str> = client.iter().map(String::as_str).collect();
    let (code, _, err) = crate::sys::spawn::run_bounded(guard, dir, &a, &[], HELPER_LIMIT)?;
    let offered = parse_offered(&err);
    match (code, offered) {
        (Some(0), Some(o)) => Ok(o),
        _ => Err(anyhow!(
            "a probe session to {name} failed: {}",
            err.lines()
                .rfind(|l| !l.starts_with("debug"))
                .unwrap_or("no message")
        )),
    }
}

/// The server's ciphers and MACs (server to client; an SSH server offers the same both
/// ways unless configured otherwise, and ours are not).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Offered {
    pub ciphers: Vec<String>,
    pub macs: Vec<String>,
    /// The software version its banner announces ("OpenSSH_9.2p1 Debian-2+deb12u10",
    /// "dropbear_2022.83").
    pub software: Option<String>,
}

/// The peer's proposal in `ssh -vv`'s stderr: the "ciphers stoc" and "MACs stoc" lines
/// after "peer server KEXINIT proposal".
pub fn parse_offered(vv: &str) -> Option<Offered> {
    let peer = vv.lines().skip_while(|l| !l.contains("peer server KEXINIT proposal"));
    let mut ciphers = None;
    let mut macs = None;
    for l in peer {
        let list = |tag: &str| {
            l.split_once(tag)
                .map(|(_, v)| v.trim().split(',').map(String::from).collect::<Vec<_>>())
        };
        if ciphers.is_none() {
            ciphers = list("ciphers stoc: ");
        }
        if macs.is_none() {
            macs = list("MACs stoc: ");
        }
        if ciphers.is_some() && macs.is_some() {
            break;
        }
    }
    let software = vv
        .lines()
        .find_map(|l| l.split_once("remote software version "))
        .map(|(_, v)| v.trim().to_string());
    Some(Offered {
        ciphers: ciphers?,
        macs: macs?,
        software,
    })
}

/// The kex lines of a log: "client->server cipher: X MAC: Y compression: none" and its
/// server->client twin, the "debug1: kex: " prefix and sshd's " [preauth]" cut off.
pub fn kex_lines(log: &str) -> Vec<String> {
    log.lines()
        .filter_map(|l| {
            let (_, rest) = l.split_once("kex: ")?;
            let rest = rest.trim_end_matches(" [preauth]").trim();
            (rest.starts_with("client->server cipher: ")
                || rest.starts_with("server->client cipher: "))
            .then(|| rest.to_string())
        })
        .collect()
}

/// Whether the kex lines prove `cipher` (and `mac`, or an implicit one for an AEAD) in
/// both directions, at the first key exchange and at every rekeying; Err says what was
/// negotiated instead.
pub fn proves(lines: &[String], cipher: &str, mac: Option<&str>) -> Result<(), String> {
    let want_mac = mac.unwrap_or("<implicit>");
    for dir in ["client->server", "server->client"] {
        let mut of_dir = lines.iter().filter(|l| l.starts_with(dir)).peekable();
        if of_dir.peek().is_none() {
            return Err(format!("the log says nothing of the {dir} negotiation"));
        }
        for l in of_dir {
            // "client->server cipher: X MAC: Y compression: Z"
            let f: Vec<&str> = l.split_whitespace().collect();
            let (c, m) = (f.get(2).copied(), f.get(4).copied());
            if c != Some(cipher) || m != Some(want_mac) {
                return Err(format!(
                    "{dir} negotiated cipher {} MAC {}, not the {cipher} MAC {want_mac} asked for",
                    c.unwrap_or("?"),
                    m.unwrap_or("?")
                ));
            }
        }
    }
    Ok(())
}

/// The first key exchange's two lines, client->server first: what the record keeps
/// (a rekeying repeats them).
pub fn first_pair(lines: &[String]) -> Vec<String> {
    ["client->server", "server->client"]
        .iter()
        .filter_map(|dir| lines.iter().find(|l| l.starts_with(dir)).cloned())
        .collect()
}

/// The client's argv for a connection to a server at `addr:port` whose host key is in
/// `known_hosts` (no algorithms, no command).
pub fn client_argv(progs: &Programs, key: &Path, known_hosts: &Path, port: u16, verbose: &str) -> Vec<String> {
    let mut argv: Vec<String> = vec![
        progs.ssh.to_string_lossy().into_owned(),
        "-F".into(),
        "/dev/null".into(),
        verbose.into(),
        "-p".into(),
        port.to_string(),
        "-i".into(),
        key.to_string_lossy().into_owned(),
    ];
    for o in [
        "IdentitiesOnly=yes".to_string(),
        format!("UserKnownHostsFile={}", known_hosts.display()),
        "GlobalKnownHostsFile=/dev/null".into(),
        "StrictHostKeyChecking=yes".into(),
        "BatchMode=yes".into(),
        "ConnectTimeout=10".into(),
        "Compression=no".into(),
        "ServerAliveInterval=5".into(),
        "ServerAliveCountMax=3".into(),
    ] {
        argv.push("-o".into());
        argv.push(o);
    }
    argv
}

/// The ssh client's own lists (`ssh -Q cipher`, `ssh -Q mac`).
pub fn client_offers(progs: &Programs) -> Result<Offered, Failure> {
    let q = |what: &str| {
        crate::sys::program::output(&progs.ssh, &["-Q", what])
            .map(|t| t.lines().map(|l| l.trim().to_string()).filter(|l| !l.is_empty()).collect())
            .map_err(|e| Failure::Unavailable(format!("ssh -Q {what}: {e}")))
    };
    Ok(Offered {
        ciphers: q("cipher")?,
        macs: q("mac")?,
        software: None,
    })
}

/// sshd (as root) refuses to start without its privilege separation directory, which
/// Debian's service makes when it starts: made here the same way when missing (empty,
/// root's, 0755), and left, as the service leaves it, since another sshd may use it.
fn privsep_dir() -> anyhow::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    let p = Path::new("/run/sshd");
    if !p.is_dir() {
        std::fs::DirBuilder::new()
            .mode(0o755)
            .create(p)
            .or_else(|e| if p.is_dir() { Ok(()) } else { Err(e) })
            .context("cannot make sshd's privilege separation directory /run/sshd")?;
    }
    Ok(())
}

/// The last `n` non-empty lines of a log, joined, for a message.
pub fn last_lines(p: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(p).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(n)..].join(" / ");
    if tail.is_empty() {
        "no message".into()
    } else {
        crate::units::shown(&tail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offered_and_proof_from_logs() {
        let vv = "debug2: local client KEXINIT proposal\ndebug2: ciphers stoc: a,b,c\ndebug2: MACs stoc: m1,m2\ndebug2: peer server KEXINIT proposal\ndebug2: ciphers ctos: aes128-ctr,aes256-ctr\ndebug2: ciphers stoc: aes128-ctr,aes256-ctr\ndebug2: MACs ctos: hmac-sha1\ndebug2: MACs stoc: hmac-sha1,hmac-sha2-256\n";
        let o = parse_offered(vv).unwrap();
        assert_eq!(o.ciphers, ["aes128-ctr", "aes256-ctr"]);
        assert_eq!(o.macs, ["hmac-sha1", "hmac-sha2-256"]);
        assert!(parse_offered("debug2: ciphers stoc: a").is_none());
        let log = "debug1: kex: algorithm: curve25519-sha256 [preauth]\ndebug1: kex: client->server cipher: aes128-ctr MAC: hmac-sha2-256 compression: none [preauth]\ndebug1: kex: server->client cipher: aes128-ctr MAC: hmac-sha2-256 compression: none [preauth]\n";
        let lines = kex_lines(log);
        assert_eq!(lines.len(), 2);
        assert!(proves(&lines, "aes128-ctr", Some("hmac-sha2-256")).is_ok());
        let e = proves(&lines, "aes256-ctr", Some("hmac-sha2-256")).unwrap_err();
        assert!(e.contains("negotiated cipher aes128-ctr"), "{e}");
        let aead = kex_lines("debug1: kex: client->server cipher: chacha20-poly1305@openssh.com MAC: <implicit> compression: none\ndebug1: kex: server->client cipher: chacha20-poly1305@openssh.com MAC: <implicit> compression: none");
        assert!(proves(&aead, "chacha20-poly1305@openssh.com", None).is_ok());
        assert!(proves(&aead[..1], "chacha20-poly1305@openssh.com", None).is_err());
        // A rekeying to another cipher is caught too; the record keeps the first pair.
        let mut rekeyed = lines.clone();
        rekeyed.push("server->client cipher: aes256-ctr MAC: hmac-sha2-256 compression: none".into());
        assert!(proves(&rekeyed, "aes128-ctr", Some("hmac-sha2-256")).is_err());
        assert_eq!(first_pair(&rekeyed), lines);
    }
}
