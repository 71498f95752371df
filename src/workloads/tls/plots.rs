//! Tls figures of one run: requests/s and MB/s per suite as bars, one figure per file
//! size, content, concurrency and handshake setting, with the null and http references
//! as lines; and the crypto share per suite against its ceiling.

use crate::analyse::tls;
use crate::record::tls::{CipherAlone, TlsRecord as Record};
use crate::record::RunEnd;
use crate::render::plots::{slug, svg, Bars, Figure};
use crate::units::size_label;

/// Suites that are references, not ciphers.
fn reference(suite: &str) -> bool {
    suite == "null" || suite == "http"
}

type Load = (u64, String, u32, bool);

pub fn figures(recs: &[&Record], end: Option<&RunEnd>, run: &str) -> Vec<Figure> {
    let loads: Vec<Load> = crate::render::plots::distinct(
        recs.iter()
            .filter(|r| r.mix.is_none())
            .map(|r| (r.file_size, r.content.clone(), r.concurrency, r.handshake)),
    );
    let mut out = Vec::new();
    for load in &loads {
        let at: Vec<&Record> = recs
            .iter()
            .copied()
            .filter(|r| {
                r.mix.is_none()
                    && (r.file_size, r.content.clone(), r.concurrency, r.handshake) == *load
            })
            .collect();
        out.push(bars(&at, load, run, Metric::Requests));
        out.push(bars(&at, load, run, Metric::Bytes));
    }
    out.extend(share(recs, end, run));
    out
}

#[derive(Clone, Copy)]
enum Metric {
    Requests,
    Bytes,
}

fn bars(at: &[&Record], load: &Load, run: &str, metric: Metric) -> Figure {
    let value = |r: &Record| match metric {
        Metric::Requests => r.requests_per_s,
        Metric::Bytes => r.throughput_bps / 1e6,
    };
    let (unit, name) = match metric {
        Metric::Requests => ("requests/s", "req"),
        Metric::Bytes => ("MB/s", "mbps"),
    };
    let suites: Vec<&Record> = at
        .iter()
        .copied()
        .filter(|r| !reference(&r.suite))
        .collect();
    let refs: Vec<(String, f64)> = at
        .iter()
        .filter(|r| reference(&r.suite))
        .map(|r| (format!("{} (reference)", r.suite), value(r)))
        .collect();
    let (fs, content, conc, hs) = load;
    let setting = format!(
        "{} {content}, {conc} connections{}",
        size_label(*fs),
        if *hs { ", a handshake per request" } else { "" }
    );
    let caption = format!("tls {unit} per suite: {setting}");
    let best = suites.iter().max_by(|a, b| value(a).total_cmp(&value(b)));
    let worst = suites.iter().min_by(|a, b| value(a).total_cmp(&value(b)));
    let mut shows = match (best, worst) {
        (Some(b), Some(w)) if suites.len() > 1 && value(w) > 0.0 => format!(
            "{} serves {:.2}x the {unit} of {} ({:.0} against {:.0})",
            b.suite,
            value(b) / value(w),
            w.suite,
            value(b),
            value(w)
        ),
        (Some(b), _) => format!("{} serves {:.0} {unit}", b.suite, value(b)),
        _ => "only reference points at this setting".into(),
    };
    if let (Some(b), Some((n, v))) = (best, refs.first()) {
        if *v > 0.0 {
            shows.push_str(&format!(
                "; the best suite reaches {:.0}% of {n}",
                value(b) / v * 100.0
            ));
        }
    }
    let b = Bars {
        categories: suites.iter().map(|r| r.suite.clone()).collect(),
        series: vec![unit.to_string()],
        values: suites.iter().map(|r| vec![Some(value(r))]).collect(),
        intervals: Vec::new(),
        references: refs,
        y_label: unit,
        caption: &caption,
    };
    Figure {
        id: slug(&[
            run,
            "tls",
            &size_label(*fs),
            content,
            &format!("c{conc}"),
            if *hs { "handshake" } else { "" },
            name,
        ]),
        title: caption.clone(),
        shows,
        svg: svg(|root| b.draw(root)),
    }
}

/// The crypto share of each suite's server CPU per byte against null, and the ceiling.
fn share(recs: &[&Record], end: Option<&RunEnd>, run: &str) -> Option<Figure> {
    let owned: Vec<Record> = recs.iter().map(|r| (*r).clone()).collect();
    let alone: Vec<CipherAlone> = end
        .map(|e| e.analysis_inputs.tls_cipher_alone())
        .unwrap_or_default();
    let (shares, _) = tls::shares(&owned, &alone);
    if shares.is_empty() {
        return None;
    }
    let caption = "tls: crypto share of the server's CPU per byte (against null)";
    let top = shares.iter().max_by(|a, b| a.share.total_cmp(&b.share))?;
    let shows = format!(
        "{} spends {:.0}% of nginx's CPU per byte on crypto ({}): at most {:.2}x faster if it cost nothing",
        top.suite,
        top.share * 100.0,
        top.file_size.map(size_label).unwrap_or_else(|| "all sizes".into()),
        top.ceiling_speedup
    );
    let b = Bars {
        categories: shares
            .iter()
            .map(|s| {
                format!(
                    "{} {}",
                    s.suite,
                    s.file_size.map(size_label).unwrap_or_default()
                )
            })
            .collect(),
        series: vec!["crypto share %".into(), "ceiling speed-up x100".into()],
        values: shares
            .iter()
            .map(|s| vec![Some(s.share * 100.0), Some(s.ceiling_speedup * 100.0)])
            .collect(),
        intervals: Vec::new(),
        references: vec![("100% (all CPU is crypto)".into(), 100.0)],
        y_label: "percent",
        caption,
    };
    Some(Figure {
        id: slug(&[run, "tls", "crypto-share"]),
        title: caption.into(),
        shows,
        svg: svg(|root| b.draw(root)),
    })
}
