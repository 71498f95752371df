//! IPsec as a tunnel kind: the kernel's ESP in tunnel mode between the lab's namespaces,
//! or between the DUT and the controller (`vpn --dut`), with static SAs made by `ip xfrm`
//! (no IKE daemon: the data path is what is measured). Keys and SPIs are random per
//! tunnel, travel to the other end as a private file, and reach `ip` on its stdin
//! (`ip -batch -`), never on a command line. The proof that ESP carried the load is the
//! SAs' own counters.

use super::iperf::{Load, LoadError};
use crate::record::vpn::SaCount;
use crate::record::vpn::VpnRecord;
use crate::sys::guard::{Guard, Resource};
use crate::workloads::e2e::lab::{self, Place, CLIENT, SERVER};
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

/// The --ciphers entries IPsec offers, and those it does not.
pub fn ciphers(asked: &[String]) -> (Vec<String>, Vec<String>) {
    asked.iter().cloned().partition(|c| alg(c).is_some())
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

/// The keys file one end makes and the other receives (a private file, never on a
/// command line): one line per SA, server to client first, "SPI KEY [KEY]" in hex.
pub const KEYS_FILE: &str = "ipsec.keys";

/// The two SAs' SPIs (random, so two runs never collide; also their reqids) and keys.
pub struct Keys {
    /// [server to client, client to server].
    pub spis: [u32; 2],
    text: String,
}

impl Keys {
    /// Fresh keys and SPIs for `cipher`.
    pub fn new(cipher: &str) -> anyhow::Result<Keys> {
        let alg = alg(cipher).ok_or_else(|| anyhow!("IPsec has no cipher {cipher}"))?;
        let mut text = String::new();
        for _ in [SERVER, CLIENT] {
            // Above 255 (reserved), below 2^31: one of ours, whatever the bytes.
            let b = crate::impls::pkey::random_bytes(4)?;
            let spi = (u32::from_be_bytes([b[0], b[1], b[2], b[3]]) >> 1).max(0x100);
            text.push_str(&format!("0x{spi:08x}"));
            for (_, _, key_len, _) in alg.parts {
                text.push_str(&format!(
                    " 0x{}",
                    hex(&crate::impls::pkey::random_bytes(*key_len)?)
                ));
            }
            text.push('\n');
        }
        Keys::parse(&text)
    }

    /// The keys file's text, as the other end received it.
    pub fn parse(text: &str) -> anyhow::Result<Keys> {
        let spi = |l: &str| {
            let w = l.split_whitespace().next()?.strip_prefix("0x")?;
            u32::from_str_radix(w, 16).ok()
        };
        let spis: Vec<u32> = text.lines().filter_map(spi).collect();
        match spis[..] {
            [a, b] => Ok(Keys {
                spis: [a, b],
                text: text.to_string(),
            }),
            _ => Err(anyhow!("{KEYS_FILE}: not two SAs")),
        }
    }

    /// What travels to the other end.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// The two SAs (server to client, client to server) between the outer addresses
/// `outer` ([server, client]), as `ip -batch` lines.
fn states(alg: &Alg, keys: &Keys, outer: [&str; 2]) -> anyhow::Result<String> {
    let mut text = String::new();
    for (from, line) in keys.text.lines().enumerate().take(2) {
        let (src, dst) = (outer[from], outer[1 - from]);
        let mut words = line.split_whitespace();
        let spi = words.next().unwrap_or_default();
        let id = keys.spis[from];
        text.push_str(&format!(
            "xfrm state add src {src} dst {dst} proto esp spi {spi} reqid {id} mode tunnel"
        ));
        for (word, name, _, tail) in alg.parts {
            let key = words
                .next()
                .ok_or_else(|| anyhow!("{KEYS_FILE}: a key short"))?;
            text.push_str(&format!(" {word} {name} {key} {tail}"));
        }
        text.push('\n');
    }
    Ok(text)
}

/// The policies of one end: its inner address to the other's through the SA that
/// leaves it, and the reverse required on the way in.
fn policies(end: usize, keys: &Keys, outer: [&str; 2]) -> String {
    let mut text = String::new();
    for (dir, from) in [("out", end), ("in", 1 - end)] {
        let (src, dst) = (INNER_ADDR[from], INNER_ADDR[1 - from]);
        let (osrc, odst) = (outer[from], outer[1 - from]);
        let id = keys.spis[from];
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
    // A random SPI: the throwaway SA never meets one of this host's own.
    let spi = Keys::new("AES-256-CBC").map_or(0xcb09, |k| k.spis[0]);
    let spi = format!("0x{spi:08x}");
    let sa = format!(
        "xfrm state add src 10.77.9.1 dst 10.77.9.2 proto esp spi {spi} mode tunnel enc cbc(aes) {} auth-trunc hmac(sha256) {key} 128\n",
        &key[..34]
    );
    match batch(ns, &sa) {
        Ok(()) => {
            let del = [
                "xfrm",
                "state",
                "del",
                "src",
                "10.77.9.1",
                "dst",
                "10.77.9.2",
            ];
            let _ = lab::ip(ns, &[&del[..], &["proto", "esp", "spi", &spi]].concat());
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

/// What an SA will bind, fixed before any SA is made: the driver asked for given the
/// highest priority, pcrypt made (all undone by the guard).
pub struct Binding {
    instance: &'static str,
    want: Option<String>,
    before: Vec<crate::kernel::CryptoEntry>,
}

/// Binds the driver for `cipher` here (`--ipsec-driver`, `--ipsec-spread pcrypt`).
pub fn prepare(
    guard: &Guard,
    cipher: &str,
    spread: Spread,
    driver: Option<&str>,
) -> anyhow::Result<Binding> {
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
    Ok(Binding {
        instance: alg.instance,
        want: want.map(String::from),
        before,
    })
}

/// One end of the tunnel at `p`: its inner address and route, the two SAs between the
/// outer addresses `outer` ([server, client]) and its policies. Undone by `guard`, ours
/// alone (by SPI and selector: never a flush, the host may hold SAs of its own).
pub fn end_up(
    guard: &Guard,
    p: &Place,
    cipher: &str,
    keys: &Keys,
    outer: [&str; 2],
) -> anyhow::Result<()> {
    let alg = alg(cipher).ok_or_else(|| anyhow!("IPsec has no cipher {cipher}"))?;
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
    guard.track(Resource::Undo {
        what: format!("IPsec route to {peer}"),
        argv: lab::ip_argv(ns, &["route", "del", peer, "dev", veth]),
    });
    // Deleted before the address goes (undone in reverse order).
    for from in [SERVER, CLIENT] {
        let (src, dst) = (outer[from], outer[1 - from]);
        let spi = format!("0x{:08x}", keys.spis[from]);
        guard.track(Resource::Undo {
            what: format!("IPsec SA {spi}"),
            argv: lab::ip_argv(
                ns,
                &[
                    "xfrm", "state", "del", "src", src, "dst", dst, "proto", "esp", "spi", &spi,
                ],
            ),
        });
        let dir = if from == p.end { "out" } else { "in" };
        let (src, dst) = (
            format!("{}/32", INNER_ADDR[from]),
            format!("{}/32", INNER_ADDR[1 - from]),
        );
        guard.track(Resource::Undo {
            what: format!("IPsec policy {src} to {dst}"),
            argv: lab::ip_argv(
                ns,
                &[
                    "xfrm", "policy", "del", "src", &src, "dst", &dst, "dir", dir,
                ],
            ),
        });
    }
    batch(
        ns,
        &format!(
            "{}{}",
            states(&alg, keys, outer)?,
            policies(p.end, keys, outer)
        ),
    )
}

impl Binding {
    /// The driver the SAs made here bound, from /proc/crypto, and a note saying how it is
    /// known. A driver the user named must be proven, never inferred from its priority.
    pub fn proven(&self) -> anyhow::Result<(crate::kernel::BoundDriver, String)> {
        use crate::kernel::DriverProof;
        let instance = self.instance;
        let bound =
            crate::kernel::bound_driver(&self.before, &crate::kernel::proc_crypto(), instance)
                .ok_or_else(|| anyhow!("no {instance} in /proc/crypto after the SAs were made"))?;
        let driver = &bound.driver;
        if let Some(w) = self.want.as_deref() {
            if *w != *driver && *driver != format!("pcrypt({w})") {
                return Err(anyhow!(
                    "--ipsec-driver {w}: the kernel bound {driver} instead, though {w} had the highest priority"
                ));
            }
            if bound.proof != DriverProof::Refcount {
                return Err(anyhow!(
                    "--ipsec-driver {w}: no reference count in /proc/crypto rose when the SAs were made, so nothing proves they bound it"
                ));
            }
        }
        let how = bound.proof.how();
        let note = format!(
            "IPsec: the kernel's ESP in tunnel mode, static SAs (ip xfrm), {instance} bound to {driver} ({how}); its work is in softirq and the crypto kworkers"
        );
        Ok((bound, note))
    }
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

/// Bytes and packets SA `spi` counted in a namespace (`ip -s xfrm state`).
/// The output holds keys: it is parsed here and never shown.
pub fn sa_counters(ns: Option<&str>, spi: u32) -> anyhow::Result<(u64, u64)> {
    let text = lab::ip(ns, &["-s", "xfrm", "state"])?;
    Ok(parse_counters(&text, spi))
}

fn parse_counters(text: &str, spi: u32) -> (u64, u64) {
    let (mut bytes, mut packets) = (0, 0);
    let mut ours = false;
    let mut current = false;
    let spi = format!("0x{spi:08x}");
    for line in text.lines() {
        if line.starts_with("src ") {
            ours = false;
            current = false;
        } else if line.trim_start().starts_with("proto esp spi ") {
            // "proto esp spi 0x0000cb02(52994) reqid ...": with -s, the SPI in decimal too.
            let word = line.split_whitespace().nth(3).unwrap_or_default();
            ours = word.split('(').next() == Some(spi.as_str());
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

/// The counters of the SA that carries a point's data (`down`: server to client),
/// before the point, where `ns` holds it (the receiver in the lab, the DUT with --dut).
pub struct Proof {
    ns: Option<String>,
    spi: u32,
    before: (u64, u64),
}

impl Proof {
    pub fn start(ns: Option<&str>, spis: [u32; 2], down: bool) -> Result<Proof, LoadError> {
        let spi = spis[if down { SERVER } else { CLIENT }];
        let before = sa_counters(ns, spi).map_err(|e| LoadError::Failed(e.to_string()))?;
        Ok(Proof {
            ns: ns.map(String::from),
            spi,
            before,
        })
    }

    /// The proof of a point on a tunnel with SAs `spis` (None: not IPsec), held in `ns`.
    pub fn of(
        spis: Option<[u32; 2]>,
        ns: Option<&str>,
        load: Load,
    ) -> Result<Option<Proof>, LoadError> {
        spis.map(|spis| Proof::start(ns, spis, load.down))
            .transpose()
    }

    /// The record of a point, with what its SA counted; refused if it did not carry it.
    pub fn checked(proof: Option<Proof>, rec: &mut VpnRecord) -> Result<(), LoadError> {
        if let Some(p) = proof {
            rec.ipsec_sa = Some(p.check(rec.bytes)?);
        }
        Ok(())
    }

    /// What the SA counted over the point, if at least the `payload` bytes iperf3
    /// received.
    pub fn check(&self, payload: u64) -> Result<SaCount, LoadError> {
        let after = sa_counters(self.ns.as_deref(), self.spi)
            .map_err(|e| LoadError::Failed(e.to_string()))?;
        let bytes = after.0.saturating_sub(self.before.0);
        let packets = after.1.saturating_sub(self.before.1);
        if packets == 0 || bytes < payload {
            return Err(LoadError::Failed(format!(
                "IPsec requested but not used: the SA that carries the data counted {bytes} bytes in {packets} packets, iperf3 received {payload} bytes"
            )));
        }
        Ok(SaCount { bytes, packets })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_of_one_sa() {
        let t = "src 10.77.0.2 dst 10.77.0.1\n\tproto esp spi 0x0000cb02(52994) reqid 2 mode tunnel\n\tlifetime current:\n\t  1000(bytes), 7(packets)\n\t  add 2026-01-01 use 2026-01-01\nsrc 10.77.0.1 dst 10.77.0.2\n\tproto esp spi 0x12345678 reqid 3 mode tunnel\n\tlifetime current:\n\t  5(bytes), 1(packets)\n";
        assert_eq!(parse_counters(t, 0xcb02), (1000, 7));
        assert_eq!(parse_counters(t, 0x12345678), (5, 1));
        assert_eq!(parse_counters(t, 0xcb03), (0, 0));
    }

    #[test]
    fn sas_and_policies() {
        let keys = Keys::new("AES-256-CBC").unwrap();
        // What travels is what the other end reads back.
        assert_eq!(Keys::parse(keys.text()).unwrap().spis, keys.spis);
        assert_ne!(keys.spis[0], keys.spis[1]);
        assert!(keys.spis.iter().all(|s| *s >= 0x100));
        let outer = ["10.77.0.1", "10.77.0.2"];
        let text = states(&alg("AES-256-CBC").unwrap(), &keys, outer).unwrap();
        assert_eq!(text.lines().count(), 2);
        assert!(text.contains("enc cbc(aes) 0x") && text.contains("auth-trunc hmac(sha256)"));
        let key = |l: &str| l.split_whitespace().nth(17).unwrap().len();
        assert_eq!(key(text.lines().next().unwrap()), 2 + 64);
        assert!(text.contains(&format!(
            "spi 0x{:08x} reqid {}",
            keys.spis[1], keys.spis[1]
        )));
        assert!(policies(SERVER, &keys, outer).contains(
            "src 10.77.3.1/32 dst 10.77.3.2/32 dir out tmpl src 10.77.0.1 dst 10.77.0.2"
        ));
        assert!(policies(CLIENT, &keys, outer).contains("src 10.77.3.1/32 dst 10.77.3.2/32 dir in"));
        assert!(Keys::parse("0x00000100 0xab\n").is_err());
        assert_eq!(
            ciphers(&["AES-128-GCM".into(), "none".into()]),
            (vec!["AES-128-GCM".into()], vec!["none".into()])
        );
        assert!(parse_spread("all").is_err());
    }
}
