//! The ssh record: one bulk transfer through an SSH channel, per server, cipher, MAC and
//! direction, repeated `rounds` times. See docs/records.md, "ssh record".

use crate::record::any::KeyValue;
use crate::record::window::Limit;
use serde::{Deserialize, Serialize};

/// An ssh point: the shared envelope (impl = the server, "openssh" or "dropbear";
/// impl_version its version; label = server, cipher, MAC and direction;
/// throughput_bps = the median round's payload bytes per second of the data phase,
/// samples_bps = every round's; cpu_s_per_gb = both ends together) and these. Field
/// names are a public contract (docs/records.md): add, never rename.
pub type SshRecord = crate::record::envelope::Record<SshData>;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SshData {
    /// The server that was measured.
    pub server: ServerId,
    /// The cipher asked for and proven negotiated in both directions (OpenSSH's name,
    /// e.g. "aes128-gcm@openssh.com").
    pub cipher: String,
    /// The MAC asked for and proven negotiated; null for an AEAD cipher (its MAC is
    /// implicit).
    pub mac: Option<String>,
    /// "up": the client sends (a file of zeros), the server's `wc -c` counts; "down": the server's
    /// `head -c BYTES /dev/zero` sends, the client counts.
    pub direction: String,
    /// Payload bytes carried per round, counted at the receiving end.
    pub bytes: u64,
    /// Rounds (transfers) behind this point.
    pub rounds: u32,
    /// The negotiation as the proof's log says it, e.g. "client->server cipher:
    /// aes128-ctr MAC: hmac-sha2-256-etm@openssh.com compression: none".
    pub negotiated: Vec<String>,
    /// Whose log proved the negotiation: "server" (sshd's DEBUG1 log) or "client"
    /// (ssh -v, where the server cannot log it: Dropbear).
    pub negotiated_from: String,
    /// Seconds of the median round's data phase: from the first payload byte taken by
    /// the channel to the last one received.
    pub transfer_s: f64,
    /// Seconds of the median round from starting the client to its first payload byte
    /// (TCP, key exchange, authentication, session): not in throughput_bps.
    pub connect_s: f64,
    /// The median round's session as the client counts it (`ssh -v`'s "Transferred: ...
    /// in X seconds", 0.1 s resolution; from the session's start, so a little more than
    /// transfer_s): a witness of transfer_s; null where ssh did not say.
    #[serde(default)]
    pub client_session_s: Option<f64>,
    /// CPU seconds per 10^9 payload bytes of each end over the whole connection (its
    /// key exchange included), median of the rounds.
    pub cpu_s_per_gb_by_end: EndsCpu,
    /// The busiest single thread of either end, in percent of one core over the data
    /// phase (median round).
    pub busiest_thread_pct: f64,
    /// Each end's busiest thread (name and percent of one core).
    pub busiest_thread: EndsThread,
    /// What held the median round back, and the figures that say so (analyse/limit.rs).
    pub limit: Limit,
    /// Busy share of every CPU during the median round's data phase, in percent.
    pub system_busy_pct: f64,
    /// With --profile: where the client's CPU went over one more, sampled transfer (the
    /// server's is the envelope's `profile`); absent without --profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_profile: Option<crate::record::profile::ProfileField>,
    /// OpenSSH: its cipher and MAC timed alone on the libcrypto sshd runs on, one 32 KiB
    /// packet per call, one thread; absent for Dropbear (libtomcrypt, built in) and where
    /// a primitive is not in the catalogue (the notes say so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primitive: Option<CipherAlone>,
}

/// A cipher and MAC timed alone, in process (see `primitive`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CipherAlone {
    /// The catalogue's algorithms timed, e.g. ["aes-128-ctr", "hmac-sha256"].
    pub algs: Vec<String>,
    /// CPU seconds per 10^9 bytes of all of them together (seal direction).
    pub cpu_s_per_gb: f64,
    /// The library as it names itself, e.g. "OpenSSL 3.0.19 27 Jan 2026".
    pub implementation: String,
    pub note: Option<String>,
}

/// A server as measured: "openssh" or "dropbear", and the version it reports.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ServerId {
    pub name: String,
    pub version: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct EndsCpu {
    pub client: f64,
    pub server: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BusyThread {
    pub name: String,
    pub pct: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct EndsThread {
    pub client: BusyThread,
    pub server: BusyThread,
}

/// The settings of an ssh run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SshSettings {
    /// The servers, as measured: "openssh", "dropbear".
    pub ssh_servers: Vec<String>,
    #[serde(default)]
    pub ciphers: Vec<String>,
    #[serde(default)]
    pub macs: Vec<String>,
    #[serde(default)]
    pub directions: Vec<String>,
    #[serde(default)]
    pub bytes: u64,
    #[serde(default)]
    pub rounds: u32,
    #[serde(default)]
    pub netns: Vec<String>,
}

/// The label of a point: "openssh aes128-ctr+hmac-sha2-256-etm@openssh.com up".
pub fn label(server: &str, cipher: &str, mac: Option<&str>, direction: &str) -> String {
    match mac {
        Some(m) => format!("{server} {cipher}+{m} {direction}"),
        None => format!("{server} {cipher} {direction}"),
    }
}

/// An AEAD cipher carries its own MAC: no MAC is negotiated beside it.
pub fn is_aead(cipher: &str) -> bool {
    cipher.starts_with("chacha20-poly1305") || cipher.contains("-gcm")
}

impl crate::record::any::RecordData for SshData {
    fn identity_keys<'a>(
        r: &'a SshRecord,
        _label: Option<&str>,
    ) -> (&'a str, Vec<(&'static str, KeyValue)>) {
        let text = |s: &str| KeyValue::Text(s.to_string());
        (
            &r.implementation,
            vec![
                ("server", text(&r.server.name)),
                ("cipher", text(&r.cipher)),
                ("mac", text(r.mac.as_deref().unwrap_or("implicit"))),
                ("direction", text(&r.direction)),
                ("bytes", KeyValue::Num(r.bytes)),
            ],
        )
    }

    /// Values no ssh run writes: a proof that does not name the cipher (and MAC), a MAC
    /// beside an AEAD or none beside another cipher, CPU or percentages out of range, a
    /// limit kind outside the documented set.
    fn check(r: &SshRecord) -> anyhow::Result<()> {
        use anyhow::bail;
        if !["openssh", "dropbear"].contains(&r.server.name.as_str()) {
            bail!(
                "server '{}' is neither openssh nor dropbear",
                crate::units::shown(&r.server.name)
            );
        }
        if !["up", "down"].contains(&r.direction.as_str()) {
            bail!(
                "direction '{}' is neither up nor down",
                crate::units::shown(&r.direction)
            );
        }
        if !["server", "client"].contains(&r.negotiated_from.as_str()) {
            bail!(
                "negotiated_from '{}' is neither server nor client",
                crate::units::shown(&r.negotiated_from)
            );
        }
        match (&r.mac, is_aead(&r.cipher)) {
            (Some(m), true) => bail!("a MAC ({m}) beside the AEAD cipher {}", r.cipher),
            (None, false) => bail!("no MAC beside the non-AEAD cipher {}", r.cipher),
            (Some(m), false) if m == "none" => bail!("MAC none is never measured"),
            _ => {}
        }
        if r.negotiated.len() != 2
            || !r
                .negotiated
                .iter()
                .all(|l| l.contains(&format!("cipher: {} ", r.cipher)))
            || r.mac.as_ref().is_some_and(|m| {
                !r.negotiated
                    .iter()
                    .all(|l| l.contains(&format!("MAC: {m} ")))
            })
        {
            bail!(
                "negotiated {:?} does not prove {} in both directions",
                r.negotiated,
                label(&r.server.name, &r.cipher, r.mac.as_deref(), "")
            );
        }
        let positive = |v: f64| v.is_finite() && v > 0.0;
        if r.bytes == 0 || r.rounds == 0 || !positive(r.throughput_bps) || !positive(r.transfer_s) {
            bail!("an ssh point without bytes, rounds, throughput or transfer time");
        }
        let ends = &r.cpu_s_per_gb_by_end;
        let cpu = |v: f64| v.is_finite() && v >= 0.0;
        if !(cpu(ends.client) && cpu(ends.server)) {
            bail!("cpu_s_per_gb_by_end {ends:?} is not CPU time");
        }
        if let Some(p) = r.primitive.as_ref().filter(|p| !positive(p.cpu_s_per_gb)) {
            bail!(
                "primitive cpu_s_per_gb {} is not a positive CPU time",
                p.cpu_s_per_gb
            );
        }
        for (name, v) in [
            ("busiest_thread_pct", r.busiest_thread_pct),
            ("busiest_thread.client", r.busiest_thread.client.pct),
            ("busiest_thread.server", r.busiest_thread.server.pct),
        ] {
            // One thread on one core; a tick's rounding on a short transfer may overshoot.
            if !(0.0..=150.0).contains(&v) {
                bail!("{name} {v} is not a share of one core");
            }
        }
        if !(0.0..=100.0).contains(&r.system_busy_pct) {
            bail!(
                "system_busy_pct {} is not a percentage from 0 to 100",
                r.system_busy_pct
            );
        }
        if !crate::record::window::LIMIT_KINDS.contains(&r.limit.kind.as_str()) {
            bail!(
                "limit kind '{}' is none of {}",
                crate::units::shown(&r.limit.kind),
                crate::record::window::LIMIT_KINDS.join(", ")
            );
        }
        Ok(())
    }
}
