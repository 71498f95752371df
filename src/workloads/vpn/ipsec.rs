//! IPsec as a tunnel kind: the kernel's ESP in tunnel mode between the lab's namespaces,
//! with static SAs made by `ip xfrm` (no IKE daemon: the data path is what is measured).
//! Keys are random per tunnel and reach `ip` on its stdin (`ip -batch -`), never on a
//! command line. The proof that ESP carried the load is the SAs' own counters.

use super::iperf::LoadError;
use super::lab::{self, Place, CLIENT, SERVER, VETH_ADDR};
use crate::record::vpn::SaCount;
use crate::sys::guard::{Guard, Resource};
use anyhow::anyhow;

/// The inner addresses (on the veth, routed through the SAs).
pub const INNER_ADDR: [&str; 2] = ["10.77.3.1", "10.77.3.2"];
/// The authentication beside AES-256-CBC.
pub const AUTH: &str = "HMAC-SHA256";
/// The ciphers offered, by OpenVPN's names.
pub const CIPHERS: &[&str] = &[
    "AES-128-GCM",
    "AES-256-GCM",
    "CHACHA20-POLY1305",
    "AES-256-CBC",
];

/// `--ipsec-spread`: how the tunnel's crypto spreads over cores.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Spread {
    /// One SA per direction: one core's crypto per direction.
    #[default]
    Sa,
    /// The AEAD wrapped in pcrypt(...), which spreads it over the CPUs.
    Pcrypt,
    /// Per-CPU SAs (RFC 9611, Linux 6.13+).
    PerCpu,
}

impl Spread {
    pub fn name(self) -> &'static str {
        match self {
            Spread::Sa => "sa",
            Spread::Pcrypt => "pcrypt",
            Spread::PerCpu => "percpu",
        }
    }
}

pub fn parse_spread(s: &str) -> anyhow::Result<Spread> {
    match s {
        "sa" => Ok(Spread::Sa),
        "pcrypt" => Ok(Spread::Pcrypt),
        "percpu" => Ok(Spread::PerCpu),
        _ => Err(anyhow!(
            "invalid --ipsec-spread '{}': choose sa, pcrypt or percpu",
            crate::units::shown(s)
        )),
    }
}

/// One cipher's xfrm algorithms: the words before and after the key(s), the key
/// lengths, and the name of the crypto API instance the SA binds.
struct Alg {
    /// (xfrm keyword, algorithm, key bytes, trailing ICV/truncation bits)
    parts: &'static [(&'static str, &'static str, usize, &'static str)],
    /// The AEAD the SA allocates (authenc(...) around CBC and HMAC).
    instance: &'static str,
    /// Its C implementation's driver name (`--ipsec-driver generic`), made on demand.
    generic: &'static str,
}

fn alg(cipher: &str) -> Option<Alg> {
    // rfc4106 and rfc7539esp keys end with the 4-byte salt.
    const GCM: &str = "rfc4106(gcm(aes))";
    const CHACHA: &str = "rfc7539esp(chacha20,poly1305)";
    const GCM_GENERIC: &str = "rfc4106(gcm_base(ctr(aes-generic),ghash-generic))";
    Some(match cipher {
        "AES-128-GCM" => Alg {
            parts: &[("aead", GCM, 20, "128")],
            instance: GCM,
            generic: GCM_GENERIC,
        },
        "AES-256-GCM" => Alg {
            parts: &[("aead", GCM, 36, "128")],
            instance: GCM,
            generic: GCM_GENERIC,
        },
        "CHACHA20-POLY1305" => Alg {
            parts: &[("aead", CHACHA, 36, "128")],
            instance: CHACHA,
            generic: "rfc7539esp(chacha20-generic,poly1305-generic)",
        },
        "AES-256-CBC" => Alg {
            parts: &[
                ("enc", "cbc(aes)", 32, ""),
                ("auth-trunc", "hmac(sha256)", 32, "128"),
            ],
            instance: "authenc(hmac(sha256),cbc(aes))",
            generic: "authenc(hmac(sha256-generic),cbc(aes-generic))",
        },
        _ => return None,
    })
}

/// The --ciphers entries IPsec offers (upper-cased), and those it does not.
pub fn ciphers(asked: &[String]) -> (Vec<String>, Vec<String>) {
    asked
        .iter()
        .map(|c| c.to_ascii_uppercase())
        .partition(|c| alg(c).is_some())
}

/// For messages: "ipsec AES-256-CBC+HMAC-SHA256 (pcrypt, driver X)".
pub fn label(cipher: &str, auth: Option<String>, spread: Spread, driver: Option<&str>) -> String {
    let mut l = match auth {
        Some(a) => format!("ipsec {cipher}+{a}"),
        None => format!("ipsec {cipher}"),
    };
    let mut extra: Vec<String> = Vec::new();
    if spread != Spread::Sa {
        extra.push(spread.name().into());
    }
    if let Some(d) = driver {
        extra.push(format!("driver {d}"));
    }
    if !extra.is_empty() {
        l.push_str(&format!(" ({})", extra.join(", ")));
    }
    l
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The two SAs (server to client, client to server), fresh keys each, as `ip -batch`
/// lines. SPI and reqid name the direction: 0x...1 leaves the server.
fn states(alg: &Alg) -> anyhow::Result<String> {
    let mut text = String::new();
    for from in [SERVER, CLIENT] {
        let (src, dst) = (VETH_ADDR[from], VETH_ADDR[1 - from]);
        let id = from + 1;
        text.push_str(&format!(
            "xfrm state add src {src} dst {dst} proto esp spi 0xcb0{id} reqid {id} mode tunnel"
        ));
        for (word, name, key_len, tail) in alg.parts {
            let key = crate::impls::pkey::random_bytes(*key_len)?;
            text.push_str(&format!(" {word} {name} 0x{} {tail}", hex(&key)));
        }
        text.push('\n');
    }
    Ok(text)
}

/// The policies of one end: its inner address to the other's through the SA that
/// leaves it, and the reverse required on the way in.
fn policies(end: usize) -> String {
    let mut text = String::new();
    for (dir, from) in [("out", end), ("in", 1 - end)] {
        let (src, dst) = (INNER_ADDR[from], INNER_ADDR[1 - from]);
        let (osrc, odst) = (VETH_ADDR[from], VETH_ADDR[1 - from]);
        let id = from + 1;
        text.push_str(&format!(
            "xfrm policy add src {src}/32 dst {dst}/32 dir {dir} tmpl src {osrc} dst {odst} proto esp reqid {id} mode tunnel\n"
        ));
    }
    text
}

/// `ip -n NS -batch -` with `text` on stdin: keys never appear on a command line. Its
/// error, without any line that could hold a key.
fn batch(ns: Option<&str>, text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut cmd = Command::new("ip");
    if let Some(ns) = ns {
        cmd.args(["-n", ns]);
    }
    let mut child = cmd
        .args(["-batch", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| anyhow!("cannot run ip: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(text.as_bytes())
            .map_err(|e| anyhow!("ip -batch: {e}"))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| anyhow!("ip -batch: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let gist = err
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.contains("0x"))
        .unwrap_or("no message");
    Err(anyhow!("ip xfrm: {gist}"))
}

/// Whether this kernel makes an ESP SA (tried in `ns` with a throwaway SA and key),
/// else why not.
pub fn esp_usable(ns: Option<&str>) -> Result<(), String> {
    let key = "0x".to_string() + &"00".repeat(32);
    let sa = format!(
        "xfrm state add src 10.77.9.1 dst 10.77.9.2 proto esp spi 0xcb09 mode tunnel enc cbc(aes) {} auth-trunc hmac(sha256) {key} 128\n",
        &key[..34]
    );
    match batch(ns, &sa) {
        Ok(()) => {
            let _ = lab::ip(
                ns,
                &[
                    "xfrm",
                    "state",
                    "del",
                    "src",
                    "10.77.9.1",
                    "dst",
                    "10.77.9.2",
                    "proto",
                    "esp",
                    "spi",
                    "0xcb09",
                ],
            );
            Ok(())
        }
        Err(e) => {
            let k = crate::kernel::offload_paths(&crate::kernel::KernelConfig::read());
            Err(format!(
                "this kernel makes no ESP SA ({e}; {})",
                k.ipsec.reason
            ))
        }
    }
}

/// Brings ESP up between the lab's two ends: inner addresses and routes, the SAs and
/// policies (all undone by `guard`); the driver bound, proven, and a note saying so.
pub fn up(
    guard: &Guard,
    places: &[Place; 2],
    cipher: &str,
    spread: Spread,
    driver: Option<&str>,
) -> anyhow::Result<(String, String)> {
    let alg = alg(cipher).ok_or_else(|| anyhow!("IPsec has no cipher {cipher}"))?;
    let want = match driver {
        Some("generic") => Some(alg.generic),
        d => d,
    };
    if let Some(w) = want {
        bind(guard, &alg, w)?;
    }
    let before = crate::kernel::proc_crypto();
    if spread == Spread::Pcrypt {
        if let Some(made) = pcrypt(alg.instance, &before)? {
            guard.track(Resource::Call {
                what: format!("the {made} instance"),
                undo: Box::new(move || remove_instance(&made)),
            });
        }
    }
    let sas = states(&alg)?;
    for p in places {
        let ns = p.ns();
        let veth = p.outer_if.as_str();
        let (me, peer) = (INNER_ADDR[p.end], INNER_ADDR[1 - p.end]);
        let mine = format!("{me}/32");
        lab::ip(ns, &["addr", "add", &mine, "dev", veth])?;
        guard.track(Resource::Undo {
            what: format!("IPsec address {me}"),
            argv: lab::ip_argv(ns, &["addr", "del", &mine, "dev", veth]),
        });
        lab::ip(ns, &["route", "add", peer, "dev", veth, "src", me])?;
        // Flushed before the address goes (undone in reverse order).
        for what in ["state", "policy"] {
            guard.track(Resource::Undo {
                what: format!("IPsec {what}s in {}", ns.unwrap_or("this host")),
                argv: lab::ip_argv(ns, &["xfrm", what, "flush"]),
            });
        }
        batch(ns, &format!("{sas}{}", policies(p.end)))?;
    }
    let bound = crate::kernel::bound_driver(&before, &crate::kernel::proc_crypto(), alg.instance)
        .ok_or_else(|| {
        anyhow!(
            "no {} in /proc/crypto after the SAs were made",
            alg.instance
        )
    })?;
    if let Some(w) = want.filter(|w| *w != bound && bound != format!("pcrypt({w})")) {
        return Err(anyhow!(
            "--ipsec-driver {w}: the kernel bound {bound} instead, though {w} had the highest priority"
        ));
    }
    let note = format!(
        "IPsec: the kernel's ESP in tunnel mode, static SAs (ip xfrm), {} bound to {bound} (/proc/crypto); its work is in softirq and the crypto kworkers",
        alg.instance
    );
    Ok((bound, note))
}

/// Makes `driver` the one a new SA of `alg` binds, as study 1's FPGA driver was chosen:
/// made through crypto_user if it is a template instance not yet there, then given a
/// priority above every other implementation of the same name. `guard` sets the priority
/// back (and removes an instance it made) when the point ends, on a signal too.
fn bind(guard: &Guard, alg: &Alg, driver: &str) -> anyhow::Result<()> {
    use super::crypto_user::{aead_request, NEWALG, UPDATEALG};
    let find =
        |all: &[crate::kernel::CryptoEntry]| all.iter().find(|e| e.driver == driver).cloned();
    let made = find(&crate::kernel::proc_crypto()).is_none();
    if made {
        let asked = aead_request(NEWALG, driver, None);
        if find(&crate::kernel::proc_crypto()).is_none() {
            return Err(anyhow!(
                "--ipsec-driver {driver}: the kernel cannot make it ({})",
                asked
                    .err()
                    .map_or("no error, and not in /proc/crypto".into(), |e| e
                        .to_string())
            ));
        }
    }
    let now = crate::kernel::proc_crypto();
    let entry = find(&now).expect("checked above");
    let owned = driver.to_string();
    let original = u32::try_from(entry.priority).unwrap_or(0);
    let undo = move || -> anyhow::Result<()> {
        aead_request(UPDATEALG, &owned, Some(original))?;
        if made {
            remove_instance(&owned)?;
        }
        Ok(())
    };
    if entry.name != alg.instance {
        let _ = undo();
        return Err(anyhow!(
            "--ipsec-driver {driver} implements {}, not {}",
            entry.name,
            alg.instance
        ));
    }
    let top = now
        .iter()
        .filter(|e| e.name == alg.instance && e.driver != driver)
        .map(|e| e.priority)
        .max()
        .unwrap_or(0);
    guard.track(Resource::Call {
        what: format!("the priority of {driver} (back to {original})"),
        undo: Box::new(undo),
    });
    if entry.priority <= top {
        aead_request(
            UPDATEALG,
            driver,
            Some(u32::try_from(top + 1).unwrap_or(u32::MAX)),
        )
        .map_err(|e| anyhow!("--ipsec-driver {driver}: cannot raise its priority: {e}"))?;
    }
    // ESP allocates its IV generator around the AEAD (seqiv(rfc4106(gcm(aes)))), and
    // the kernel keeps such wrappers built on the driver that won before. An update
    // (here to the same priority) makes the kernel drop the wrappers built on the other
    // drivers, as registering a better driver would: the next SA builds them on ours.
    for e in now
        .iter()
        .filter(|e| e.name == alg.instance && e.driver != driver)
    {
        let _ = aead_request(UPDATEALG, &e.driver, u32::try_from(e.priority).ok());
    }
    Ok(())
}

/// pcrypt(...) around the AEAD, made through crypto_user unless it is there already: at
/// a higher priority than what it wraps, so the SA binds it. The driver name of the
/// instance made, for its removal; None when it was there before.
fn pcrypt(instance: &str, now: &[crate::kernel::CryptoEntry]) -> anyhow::Result<Option<String>> {
    let of = |all: &[crate::kernel::CryptoEntry]| {
        all.iter()
            .find(|e| e.name == instance && e.driver.starts_with("pcrypt("))
            .map(|e| e.driver.clone())
    };
    if of(now).is_some() {
        return Ok(None);
    }
    let asked = super::crypto_user::aead_request(
        super::crypto_user::NEWALG,
        &format!("pcrypt({instance})"),
        None,
    );
    // The instance takes the name it wraps, not "pcrypt(...)": the kernel's lookup of
    // the name asked for ends in ENOENT even when the instance was made.
    match (of(&crate::kernel::proc_crypto()), asked) {
        (Some(made), _) => Ok(Some(made)),
        (None, Err(e)) => Err(anyhow!(
            "--ipsec-spread pcrypt: cannot make pcrypt({instance}): {e}"
        )),
        (None, Ok(())) => Err(anyhow!(
            "--ipsec-spread pcrypt: pcrypt({instance}) made, but not in /proc/crypto"
        )),
    }
}

/// Removes an instance we made, once the SAs that held it are gone: the kernel frees
/// their transforms a moment after the flush, so a busy answer is asked again (1 s).
fn remove_instance(driver: &str) -> anyhow::Result<()> {
    use super::crypto_user::{aead_request, DELALG};
    let start = std::time::Instant::now();
    loop {
        match aead_request(DELALG, driver, None) {
            Err(_) if start.elapsed() < std::time::Duration::from_secs(1) => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            r => return r,
        }
    }
}

/// Bytes and packets the SAs to `dst` counted in a namespace (`ip -s xfrm state`).
/// The output holds keys: it is parsed here and never shown.
pub fn sa_counters(ns: Option<&str>, dst: &str) -> anyhow::Result<(u64, u64)> {
    let text = lab::ip(ns, &["-s", "xfrm", "state"])?;
    Ok(parse_counters(&text, dst))
}

fn parse_counters(text: &str, dst: &str) -> (u64, u64) {
    let (mut bytes, mut packets) = (0, 0);
    let mut ours = false;
    let mut current = false;
    for line in text.lines() {
        if line.starts_with("src ") {
            ours = line.split_whitespace().nth(3) == Some(dst);
            current = false;
        } else if line.trim() == "lifetime current:" {
            current = true;
        } else if current && ours {
            current = false;
            // "  440(bytes), 5(packets)"
            let n = |unit: &str| -> u64 {
                line.split(',')
                    .find_map(|p| p.trim().strip_suffix(unit)?.parse().ok())
                    .unwrap_or(0)
            };
            bytes += n("(bytes)");
            packets += n("(packets)");
        }
    }
    (bytes, packets)
}

/// The receiver's inbound SA counters before a point (`down`: the client receives).
pub struct Proof {
    ns: Option<String>,
    dst: &'static str,
    before: (u64, u64),
}

impl Proof {
    pub fn start(places: &[Place; 2], down: bool) -> Result<Proof, LoadError> {
        let to = if down { CLIENT } else { SERVER };
        let ns = places[to].ns.clone();
        let dst = VETH_ADDR[to];
        let before =
            sa_counters(ns.as_deref(), dst).map_err(|e| LoadError::Failed(e.to_string()))?;
        Ok(Proof { ns, dst, before })
    }

    /// What the receiver's SA counted over the point, if at least the `payload` bytes
    /// iperf3 received.
    pub fn check(&self, payload: u64) -> Result<SaCount, LoadError> {
        let after = sa_counters(self.ns.as_deref(), self.dst)
            .map_err(|e| LoadError::Failed(e.to_string()))?;
        let bytes = after.0.saturating_sub(self.before.0);
        let packets = after.1.saturating_sub(self.before.1);
        if packets == 0 || bytes < payload {
            return Err(LoadError::Failed(format!(
                "IPsec requested but not used: the receiver's SA counted {bytes} bytes in {packets} packets, iperf3 received {payload} bytes"
            )));
        }
        Ok(SaCount { bytes, packets })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_of_the_sa_to_one_address() {
        let t = "src 10.77.0.2 dst 10.77.0.1\n\tproto esp spi 0x0000cb02 reqid 2 mode tunnel\n\tlifetime current:\n\t  1000(bytes), 7(packets)\n\t  add 2026-01-01 use 2026-01-01\nsrc 10.77.0.1 dst 10.77.0.2\n\tlifetime current:\n\t  5(bytes), 1(packets)\n";
        assert_eq!(parse_counters(t, "10.77.0.1"), (1000, 7));
        assert_eq!(parse_counters(t, "10.77.0.2"), (5, 1));
        assert_eq!(parse_counters(t, "10.0.0.9"), (0, 0));
    }

    #[test]
    fn sas_and_policies() {
        let text = states(&alg("AES-256-CBC").unwrap()).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.contains("enc cbc(aes) 0x") && text.contains("auth-trunc hmac(sha256)"));
        let key = |l: &str| l.split_whitespace().nth(17).unwrap().len();
        assert_eq!(key(text.lines().next().unwrap()), 2 + 64);
        assert!(policies(SERVER).contains("src 10.77.3.1/32 dst 10.77.3.2/32 dir out"));
        assert!(policies(CLIENT).contains("src 10.77.3.1/32 dst 10.77.3.2/32 dir in"));
        assert_eq!(
            ciphers(&["aes-128-gcm".into(), "none".into()]),
            (vec!["AES-128-GCM".into()], vec!["NONE".into()])
        );
        assert!(parse_spread("all").is_err());
    }
}
