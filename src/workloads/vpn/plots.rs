//! Vpn figures of one run: Mbit/s per tunnel and cipher as bars with the no-crypto
//! ceiling, the busiest thread's CPU against 100% of one core, and OpenVPN's crypto share.

use crate::analyse::vpn::median_of;
use crate::record::vpn::VpnRecord as Record;
use crate::render::plots::{slug, svg, Bars, Figure};

type Load = (String, String, u32);

fn label(r: &Record) -> String {
    r.label.clone()
}

/// The records of one label.
fn of<'a>(at: &[&'a Record], l: &str) -> Vec<&'a Record> {
    at.iter().copied().filter(|r| r.label == l).collect()
}

pub fn figures(recs: &[&Record], run: &str) -> Vec<Figure> {
    let loads: Vec<Load> = crate::render::plots::distinct(
        recs.iter()
            .map(|r| (r.protocol.clone(), r.direction.clone(), r.streams)),
    );
    let mut out = Vec::new();
    for load in &loads {
        let at: Vec<&Record> = recs
            .iter()
            .copied()
            .filter(|r| (r.protocol.clone(), r.direction.clone(), r.streams) == *load)
            .collect();
        let labels: Vec<String> = crate::render::plots::distinct(at.iter().map(|r| label(r)));
        out.push(throughput(&labels, &at, load, run));
        if at.iter().any(|r| r.busiest_thread_cpu_pct.is_some()) {
            out.push(busiest(&labels, &at, load, run));
        }
    }
    out.extend(share(recs, run));
    out
}

fn setting((proto, dir, streams): &Load) -> String {
    format!(
        "{proto} {dir}, {streams} stream{}",
        if *streams == 1 { "" } else { "s" }
    )
}

fn throughput(labels: &[String], at: &[&Record], load: &Load, run: &str) -> Figure {
    let mbit = |l: &str| median_of(&of(at, l), |r| Some(r.throughput_bps * 8.0 / 1e6));
    // The ceiling: the bare veth (no tunnel), and OpenVPN with no cipher.
    let is_ref = |l: &str| l == "veth" || l == "openvpn none";
    let refs: Vec<(String, f64)> = labels
        .iter()
        .filter(|l| is_ref(l))
        .filter_map(|l| mbit(l).map(|v| (format!("{l} (no crypto)"), v)))
        .collect();
    let tunnels: Vec<&String> = labels.iter().filter(|l| !is_ref(l)).collect();
    let caption = format!("vpn Mbit/s per tunnel and cipher: {}", setting(load));
    let best = tunnels
        .iter()
        .filter_map(|l| mbit(l).map(|v| (l.as_str(), v)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let shows = match (
        best,
        refs.iter()
            .find(|(n, _)| n.starts_with("openvpn none"))
            .or(refs.first()),
    ) {
        (Some((l, v)), Some((n, c))) if *c > 0.0 => format!(
            "{l} carries {v:.0} Mbit/s, {:.0}% of {n} at {c:.0} Mbit/s",
            v / c * 100.0
        ),
        (Some((l, v)), _) => format!("{l} carries {v:.0} Mbit/s"),
        _ => "only no-crypto points at this load".into(),
    };
    let b = Bars {
        categories: tunnels.iter().map(|l| l.to_string()).collect(),
        series: vec!["Mbit/s".into()],
        values: tunnels.iter().map(|l| vec![mbit(l)]).collect(),
        intervals: Vec::new(),
        references: refs,
        y_label: "Mbit/s (payload)",
        caption: &caption,
    };
    Figure {
        id: slug(&[
            run,
            "vpn",
            &load.0,
            &load.1,
            &format!("x{}", load.2),
            "mbits",
        ]),
        title: caption.clone(),
        shows,
        svg: svg(|root| b.draw(root)),
    }
}

fn busiest(labels: &[String], at: &[&Record], load: &Load, run: &str) -> Figure {
    let pct = |l: &str| median_of(&of(at, l), |r| r.busiest_thread_cpu_pct);
    let with: Vec<&String> = labels.iter().filter(|l| pct(l).is_some()).collect();
    let caption = format!(
        "vpn busiest tunnel thread, % of one core: {}",
        setting(load)
    );
    let top = with
        .iter()
        .filter_map(|l| pct(l).map(|p| (l.as_str(), p)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let shows = match top {
        Some((l, p)) if p >= crate::record::window::SATURATED_PCT => {
            format!("{l}'s busiest thread uses {p:.0}% of a core: one thread holds the tunnel back")
        }
        Some((l, p)) => format!(
            "the busiest thread ({l}) uses {p:.0}% of a core: no tunnel is held back by one thread"
        ),
        None => "no per-thread CPU in these records".into(),
    };
    let b = Bars {
        categories: with.iter().map(|l| l.to_string()).collect(),
        series: vec!["busiest thread %".into()],
        values: with.iter().map(|l| vec![pct(l)]).collect(),
        intervals: Vec::new(),
        references: vec![("100% of one core".into(), 100.0)],
        y_label: "% of one core",
        caption: &caption,
    };
    Figure {
        id: slug(&[
            run,
            "vpn",
            &load.0,
            &load.1,
            &format!("x{}", load.2),
            "busiest-thread",
        ]),
        title: caption.clone(),
        shows,
        svg: svg(|root| b.draw(root)),
    }
}

fn share(recs: &[&Record], run: &str) -> Option<Figure> {
    let owned: Vec<Record> = recs.iter().map(|r| (*r).clone()).collect();
    let shares = crate::analyse::vpn::shares(&owned);
    if shares.is_empty() {
        return None;
    }
    let caption = "vpn: OpenVPN's crypto share of CPU (sampled where profiled, else per byte against cipher none)";
    let top = shares
        .iter()
        .max_by(|a, b| a.crypto_share.total_cmp(&b.crypto_share))?;
    let shows = format!(
        "{} is {:.0}% of OpenVPN's CPU ({}; {} {} x{}): free crypto would give at most {:.2}x ({:.0} Mbit/s ceiling)",
        top.cipher,
        top.crypto_share * 100.0,
        top.share_source,
        top.protocol,
        top.direction,
        top.streams,
        top.max_speedup,
        top.ceiling_bps * 8.0 / 1e6
    );
    let b = Bars {
        categories: shares
            .iter()
            .map(|s| format!("{} {} x{}", s.cipher, s.direction, s.streams))
            .collect(),
        series: vec!["crypto share %".into()],
        values: shares
            .iter()
            .map(|s| vec![Some(s.crypto_share * 100.0)])
            .collect(),
        intervals: Vec::new(),
        references: vec![],
        y_label: "% of CPU per byte",
        caption,
    };
    Some(Figure {
        id: slug(&[run, "vpn", "crypto-share"]),
        title: caption.into(),
        shows,
        svg: svg(|root| b.draw(root)),
    })
}
