//! Figures as the studies quote them: Mbit/s, ratios, and a tunnel's crypto share
//! (per byte, or sampled with perf in a step's OpenVPN records).

use super::definition::Observed;
use crate::analyse::share::{self, Share};
use crate::analyse::vpn::CipherShare;
use crate::record::vpn::VpnRecord;

/// Mbit/s, as the studies quote them.
pub fn mbit(bps: f64) -> String {
    format!("{:.0}", bps * 8.0 / 1e6)
}

/// A tunnel's crypto share as quoted: "4% [3-5%]" when sampled, "27%" per byte.
pub fn share_text(s: &CipherShare) -> String {
    match &s.sampled {
        Some(x) => sampled_text(x),
        None => format!("{:.0}%", s.crypto_share * 100.0),
    }
}

/// Where the quoted share comes from, with the per-byte cross-check beside a sampled one.
pub fn share_source_text(s: &CipherShare) -> String {
    match &s.sampled {
        Some(_) => format!(
            "sampled with perf; per byte against cipher none: {:.0}%",
            s.per_byte_share * 100.0
        ),
        None => s.share_source.clone(),
    }
}

/// The crypto share sampled in the OpenVPN records of step `tag` for `cipher` (samples
/// pooled over its points), or why it was not sampled; None without such records.
pub fn sampled_share(o: &Observed, tag: &str, cipher: &str) -> Option<Result<Share, String>> {
    let recs: Vec<&VpnRecord> = o
        .vpn(tag)
        .into_iter()
        .filter(|r| r.tunnel == "openvpn" && r.cipher == cipher)
        .collect();
    if recs.is_empty() {
        return None;
    }
    let fields = || recs.iter().filter_map(|r| r.profile.as_deref());
    Some(share::pooled_crypto(fields()).ok_or_else(|| {
        share::unavailable(fields()).unwrap_or_else(|| "perf cannot sample here".into())
    }))
}

/// A sampled share as quoted: "12% [10-14%]".
pub fn sampled_text(x: &Share) -> String {
    format!(
        "{:.0}% [{:.0}-{:.0}%]",
        x.share * 100.0,
        x.ci[0] * 100.0,
        x.ci[1] * 100.0
    )
}

/// [`sampled_share`] as a conclusion's clause: "12% [10-14%] of the tunnel's CPU
/// (sampled with perf), so free crypto gives at most 1.14x", or why it was not sampled.
pub fn sampled_clause(o: &Observed, tag: &str, cipher: &str) -> Option<String> {
    Some(match sampled_share(o, tag, cipher)? {
        Ok(x) => format!(
            "{} of the tunnel's CPU (sampled with perf), so free crypto gives at most {}",
            sampled_text(&x),
            times(share::amdahl_ceiling(x.share))
        ),
        Err(why) => format!("not sampled (no profile: {why})"),
    })
}

/// A ratio as "3.2x".
pub fn times(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}x")
    } else {
        "n/a".into()
    }
}
