//! Study 1's question in the path the kernel itself uses: IPsec through the generic C
//! driver against the kernel's choice (bound by priority), in the guest, beside AF_ALG's
//! figure for the same two drivers.

use crate::algorithms::Direction;
use crate::render::model::{Block, Column, Table};
use crate::study::definition::{argv, Observed};
use crate::study::quote::{mbit, times};

/// The C code's AES-GCM driver as AF_ALG binds it: what `--ipsec-driver generic` makes,
/// without the rfc4106 wrapper.
const GCM_GENERIC: &str = "gcm_base(ctr(aes-generic),ghash-generic)";

/// Seconds of each tunnel point in the guest (the study's guest tunnels and IPsec's).
pub(super) const GUEST_TUNNEL_S: f64 = 3.0;

/// IPsec AES-128-GCM with the kernel's choice and with the generic C driver (bound by
/// priority), and AF_ALG's AES-128-GCM at the same packet size through the same two.
pub(super) fn ipsec_per_driver() -> [Vec<String>; 3] {
    let t = GUEST_TUNNEL_S.to_string();
    let ipsec = |driver: &[&str]| {
        let mut a = argv(&[
            "vpn",
            "--tunnels",
            "ipsec",
            "--ciphers",
            "AES-128-GCM",
            "--streams",
            "1",
            "--direction",
            "up",
            "--time",
            &t,
        ]);
        a.extend(argv(driver));
        a
    };
    let variant = format!("driver={GCM_GENERIC}");
    [
        ipsec(&[]),
        ipsec(&["--ipsec-driver", "generic"]),
        argv(&[
            "speed",
            "--impl",
            "af_alg",
            "--alg",
            "aes-128-gcm",
            "--direction",
            "enc",
            "--sizes",
            "1400",
            "--time",
            "0.1",
            "--variant",
            &variant,
        ]),
    ]
}

/// Study 1's question in the path the kernel itself uses: IPsec through the generic C
/// driver against the kernel's choice, beside AF_ALG's ratio for the same two drivers.
/// Does the primitive's gain reach the tunnel?
pub(super) fn ipsec_drivers(o: &Observed, blocks: &mut Vec<Block>, conclusions: &mut Vec<String>) {
    let generic = |d: &str| d.contains("aes-generic");
    let tunnel = |c: bool| {
        o.vpn("guest")
            .into_iter()
            .filter(|r| r.tunnel == "ipsec" && r.cipher == "AES-128-GCM")
            .find(|r| r.kernel_driver.as_deref().is_some_and(|d| generic(d) == c))
            .map(|r| {
                (
                    r.kernel_driver.clone().unwrap_or_default(),
                    r.throughput_bps,
                )
            })
    };
    let primitive = |c: bool| {
        o.speed("guest")
            .into_iter()
            .filter(|r| r.implementation == "af_alg" && r.alg.name() == "aes-128-gcm")
            .filter(|r| r.size == 1400 && r.direction == Direction::Enc)
            .find(|r| r.driver.as_deref().is_some_and(|d| generic(d) == c))
            .map(|r| (r.driver.clone().unwrap_or_default(), r.throughput_bps))
    };
    let rows = [("the kernel's choice", false), ("generic C code", true)];
    if rows.iter().all(|(_, c)| tunnel(*c).is_none()) {
        if o.tagged("guest").next().is_some() {
            conclusions.push(format!(
                "IPsec per driver not observed in the guest: {}",
                o.why_missing("guest")
            ));
        }
        return;
    }
    let mut t = Table::new(
        "guest (emulated CPU: shapes only): IPsec AES-128-GCM per kernel driver, 1 stream up, beside AF_ALG's AES-128-GCM at 1400 B",
        vec![
            Column::text("driver"),
            Column::text("IPsec bound"),
            Column::num("IPsec Mbit/s"),
            Column::text("AF_ALG driver"),
            Column::num("AF_ALG Mbit/s"),
        ],
    );
    t.notes.push("emulated CPU: shapes only".into());
    for (what, c) in rows {
        let (d, bps) = tunnel(c).unwrap_or(("-".into(), f64::NAN));
        let (pd, pbps) = primitive(c).unwrap_or(("-".into(), f64::NAN));
        let shown = |x: f64| if x.is_nan() { "-".into() } else { mbit(x) };
        t.push(vec![what.into(), d, shown(bps), pd, shown(pbps)]);
    }
    blocks.push(Block::Table(t));
    let ratio = |f: &dyn Fn(bool) -> Option<(String, f64)>| match (f(false), f(true)) {
        (Some((_, a)), Some((_, b))) if b > 0.0 => Some(a / b),
        _ => None,
    };
    conclusions.push(match (ratio(&tunnel), ratio(&primitive)) {
        (Some(k), Some(p)) => format!(
            "IPsec per driver (guest, emulated CPU: shapes only, one round: it cannot decide): the kernel's choice carries {} the generic driver's tunnel throughput, against {} through AF_ALG at 1400 B: {} of the primitive's gain reaches the tunnel.",
            times(k),
            times(p),
            if p > 1.0 { format!("{:.0}%", ((k - 1.0) / (p - 1.0)).clamp(0.0, 9.99) * 100.0) } else { "none".into() }
        ),
        (Some(k), None) => format!(
            "IPsec per driver (guest, emulated CPU: shapes only): the kernel's choice carries {} the generic driver's tunnel throughput; AF_ALG's figure for the two drivers is missing.",
            times(k)
        ),
        _ => format!(
            "IPsec per driver (guest): one of the two drivers was not measured: {}",
            o.why_missing("guest")
        ),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::any::AnyRecord;
    use crate::study::tests::{observed, speed_rec_load, vpn_rec};

    #[test]
    fn ipsec_per_driver_beside_af_alg_says_how_much_of_the_gain_reaches_the_tunnel() {
        let ipsec = |driver: &str, bps: f64| {
            let mut r = vpn_rec("ipsec", "AES-128-GCM", 1, bps, 10.0);
            if let AnyRecord::Vpn(v) = &mut r {
                v.kernel_driver = Some(driver.into());
            }
            r
        };
        let af_alg = |driver: &str, bps: f64| {
            let mut r = speed_rec_load("af_alg", None, "aes-128-gcm", "enc", 1400, 1, bps, 100.0);
            if let AnyRecord::Speed(v) = &mut r {
                v.driver = Some(driver.into());
            }
            r
        };
        let o = observed(vec![(
            "guest",
            vec![
                ipsec("rfc4106-gcm-aesni", 3e8),
                ipsec("rfc4106(gcm_base(ctr(aes-generic),ghash-generic))", 2e8),
                af_alg("generic-gcm-aesni", 8e8),
                af_alg(GCM_GENERIC, 2e8),
            ],
        )]);
        let mut blocks = Vec::new();
        let mut c = Vec::new();
        ipsec_drivers(&o, &mut blocks, &mut c);
        assert_eq!(blocks.len(), 1);
        // Tunnel 1.5x, primitive 4x: (1.5 - 1) / (4 - 1) = 17% of the gain.
        let c = c.join("\n");
        assert!(c.contains("carries 1.50x the generic driver's tunnel throughput, against 4.00x through AF_ALG at 1400 B: 17% of the primitive's gain"), "{c}");
        assert!(c.contains("it cannot decide"), "{c}");
        // Without IPsec records in the guest's runs: no table, no claim.
        let mut blocks = Vec::new();
        let mut c = Vec::new();
        ipsec_drivers(
            &observed(vec![("guest", vec![af_alg(GCM_GENERIC, 2e8)])]),
            &mut blocks,
            &mut c,
        );
        assert!(blocks.is_empty());
    }
}
