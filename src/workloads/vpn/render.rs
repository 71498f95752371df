//! The vpn report as a terminal table, Markdown, CSV or one JSON document.

use super::record::{by_point, median_of, Share, VpnRecord};
use super::VpnReport;
use crate::render::model::{Block, Column, Table};
use crate::render::Format;
use std::fmt::Write;

pub fn render(format: Format, report: &VpnReport) -> String {
    match format {
        Format::Json => {
            let mut s = serde_json::to_string_pretty(report)
                .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
            s.push('\n');
            s
        }
        Format::Csv => {
            let recs: Vec<&VpnRecord> = report.records.iter().collect();
            crate::render::model::csv(&[records_table(&recs)])
        }
        Format::Markdown => text(report, true),
        Format::Table | Format::Openssl | Format::Html => text(report, false),
    }
}

/// The terminal table as blocks, for the shared render layer.
pub fn blocks(report: &VpnReport) -> Vec<Block> {
    vec![Block::Lines(
        text(report, false).lines().map(str::to_string).collect(),
    )]
}

fn mbit(bps: f64) -> String {
    let m = bps * 8.0 / 1e6;
    if m >= 100.0 {
        format!("{m:.0}")
    } else if m >= 10.0 {
        format!("{m:.1}")
    } else {
        format!("{m:.2}")
    }
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

pub fn cipher_label(cipher: &str, auth: Option<&str>) -> String {
    match auth {
        Some(a) if cipher != "none" && a != "none" => format!("{cipher}+{a}"),
        _ => cipher.to_string(),
    }
}

/// Lays out rows as aligned columns (first `left` columns left-aligned), or as Markdown.
fn grid(out: &mut String, head: &[&str], rows: &[Vec<String>], left: usize, md: bool) {
    if md {
        let _ = writeln!(out, "| {} |", head.join(" | "));
        let seps: Vec<&str> = (0..head.len())
            .map(|i| if i < left { "---" } else { "---:" })
            .collect();
        let _ = writeln!(out, "|{}|", seps.join("|"));
        for r in rows {
            let _ = writeln!(out, "| {} |", r.join(" | "));
        }
        return;
    }
    let mut w: Vec<usize> = head.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            if i < left {
                let _ = write!(s, "{:<1$}", c, w[i]);
            } else {
                let _ = write!(s, "{:>1$}", c, w[i]);
            }
        }
        s.trim_end().to_string()
    };
    let _ = writeln!(out, "{}", line(head.to_vec()));
    for r in rows {
        let _ = writeln!(out, "{}", line(r.iter().map(String::as_str).collect()));
    }
}

/// One point over its rounds: the round with the median throughput, with the medians of
/// throughput, CPU per GB, CPU percentages and the machine figures; and the throughput
/// spread ((max - min) / median, percent).
fn summary(rounds: &[&VpnRecord]) -> (VpnRecord, f64) {
    let tp: Vec<f64> = rounds.iter().map(|r| r.throughput_bps).collect();
    let med = crate::analyse::stats::median(&tp);
    let mid = rounds
        .iter()
        .min_by(|a, b| {
            (a.throughput_bps - med)
                .abs()
                .total_cmp(&(b.throughput_bps - med).abs())
        })
        .copied()
        .unwrap_or(rounds[0]);
    let mut r = mid.clone();
    r.throughput_bps = med;
    r.cpu_s_per_gb = median_of(rounds, |x| x.cpu_s_per_gb);
    r.busiest_thread_cpu_pct = median_of(rounds, |x| x.busiest_thread_cpu_pct);
    r.tunnel_cpu_pct = median_of(rounds, |x| x.tunnel_cpu_pct);
    r.system_busy_pct = median_of(rounds, |x| Some(x.system_busy_pct)).unwrap_or(0.0);
    r.others_cpu_pct = median_of(rounds, |x| Some(x.others_cpu_pct)).unwrap_or(0.0);
    (r, crate::analyse::stats::spread_pct(&tp))
}

fn record_row(r: &VpnRecord) -> Vec<String> {
    let loss = match (r.retransmits, r.lost_pct) {
        (Some(n), _) => n.to_string(),
        (None, Some(l)) => format!("{l:.1}% lost"),
        _ => "-".into(),
    };
    vec![
        r.tunnel.clone(),
        r.implementation.clone(),
        cipher_label(&r.cipher, r.auth.as_deref()),
        r.protocol.clone(),
        r.direction.clone(),
        r.streams.to_string(),
        mbit(r.throughput_bps),
        loss,
        (r.tunnel_dropped + r.outer_dropped + r.udp_rcvbuf_errors).to_string(),
        r.mtu.to_string(),
        opt(r.cpu_s_per_gb, |x| format!("{x:.2}")),
        match (r.cpu_sys_s, r.tunnel_cpu_s) {
            (Some(k), Some(t)) if t > 0.0 => format!("{:.0}%", k / t * 100.0),
            _ => "-".into(),
        },
        opt(r.busiest_thread_cpu_pct, |x| format!("{x:.0}%")),
        opt(r.tunnel_cpu_pct, |x| format!("{x:.0}%")),
        r.threads_used
            .map(|n| n.to_string())
            .unwrap_or_else(|| "-".into()),
        format!("{:.0}%", r.system_busy_pct),
        format!("{:.0}%", r.others_cpu_pct),
    ]
}

fn share_row(s: &Share) -> Vec<String> {
    vec![
        cipher_label(&s.cipher, s.auth.as_deref()),
        s.protocol.clone(),
        s.direction.clone(),
        s.streams.to_string(),
        s.sampled.as_ref().map_or("-".into(), |x| {
            format!(
                "{:.0}% [{:.0}-{:.0}%]",
                x.share * 100.0,
                x.ci[0] * 100.0,
                x.ci[1] * 100.0
            )
        }),
        format!("{:.2}", s.cpu_s_per_gb),
        format!("{:.2}", s.none_cpu_s_per_gb),
        format!("{:.0}%", s.crypto_share * 100.0),
        format!("{:.2}x", s.max_speedup),
        opt(s.busiest_thread_cpu_pct, |x| format!("{x:.0}%")),
        mbit(s.throughput_bps),
        mbit(s.ceiling_bps),
        mbit(s.none_throughput_bps),
    ]
}

/// "server openvpn 99%, client openvpn 48%" for the threads of one point.
fn threads_line(r: &VpnRecord) -> String {
    let shown: Vec<String> = r
        .thread_cpu
        .iter()
        .take(6)
        .map(|t| format!("{} {} {:.0}%", t.end, t.name, t.cpu_pct))
        .collect();
    let more = r.thread_cpu.len().saturating_sub(shown.len());
    let mut s = if shown.is_empty() {
        "no thread over 1%".to_string()
    } else {
        shown.join(", ")
    };
    if more > 0 {
        let _ = write!(s, ", +{more} more");
    }
    s
}

fn text(report: &VpnReport, md: bool) -> String {
    let mut out = String::new();
    let recs = &report.records;
    let (cpus, dur) = report
        .environment
        .as_ref()
        .map(|env| {
            (
                env.cpu["logical_cpus"].as_u64().unwrap_or(0),
                env.settings["duration_s"].as_u64().unwrap_or(0),
            )
        })
        .unwrap_or((0, 0));
    let para = |out: &mut String, s: String| {
        let _ = writeln!(out, "{s}");
        out.push('\n');
    };
    para(
        &mut out,
        format!(
            "Tunnels between two network namespaces over a veth pair, iperf3 for {dur} s per point, on {cpus} logical CPUs. Mbit/s = payload received; CPU = the tunnel's own processes at both ends (100% = one core), in kernel = its system-call share; threads = threads over {:.0}% of a core; machine = busy share of all cores; others = the part of it used by other processes; drops = packets dropped by the tunnel and veth interfaces and by full UDP receive buffers.",
            super::record::THREAD_USED_PCT
        ),
    );
    let head = [
        "tunnel",
        "implementation",
        "cipher",
        "proto",
        "dir",
        "streams",
        "Mbit/s",
        "retr",
        "drops",
        "MTU",
        "CPU s/GB",
        "in kernel",
        "busiest thread",
        "total CPU",
        "threads",
        "machine",
        "others",
    ];
    let points = by_point(recs);
    let rounds = points.iter().map(Vec::len).max().unwrap_or(1);
    let summaries: Vec<(VpnRecord, f64)> = points.iter().map(|g| summary(g)).collect();
    let mut head = head.to_vec();
    if rounds > 1 {
        head.push("spread");
    }
    let rows: Vec<Vec<String>> = summaries
        .iter()
        .map(|(r, spread)| {
            let mut row = record_row(r);
            if rounds > 1 {
                row.push(format!("{spread:.0}%"));
            }
            row
        })
        .collect();
    if rounds > 1 {
        para(
            &mut out,
            format!("Medians over {rounds} rounds (every tunnel measured once per round, in turn); spread = (max - min) / median of the throughput."),
        );
    }
    if rows.is_empty() {
        para(&mut out, "No point was measured.".into());
    } else {
        grid(&mut out, &head, &rows, 5, md);
        out.push('\n');
    }

    // Threads of each tunnel at its heaviest load: how many cores it really used.
    let mut seen: Vec<(String, String, String)> = Vec::new();
    let mut lines = Vec::new();
    let reps: Vec<VpnRecord> = summaries.iter().map(|(r, _)| r.clone()).collect();
    for r in reps.iter().filter(|r| r.tunnel_cpu_s.is_some()) {
        let key = (r.tunnel.clone(), r.cipher.clone(), r.protocol.clone());
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let heaviest = reps
            .iter()
            .filter(|o| o.tunnel == r.tunnel && o.cipher == r.cipher && o.protocol == r.protocol)
            .max_by(|a, b| {
                a.streams
                    .cmp(&b.streams)
                    .then(b.direction.cmp(&a.direction))
            })
            .unwrap_or(r);
        lines.push(format!(
            "{}{} {} {} {} x{}: {}",
            if md { "- " } else { "  " },
            r.tunnel,
            cipher_label(&r.cipher, r.auth.as_deref()),
            heaviest.protocol,
            heaviest.direction,
            heaviest.streams,
            threads_line(heaviest)
        ));
    }
    if !lines.is_empty() {
        let _ = writeln!(
            out,
            "Busiest threads of each tunnel at its most streams (CPU % of one core):"
        );
        if md {
            out.push('\n');
        }
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
        out.push('\n');
    }

    let shares = &report.analysis.shares;
    if !shares.is_empty() {
        para(
            &mut out,
            "Crypto share of OpenVPN's CPU per byte (against cipher none at the same load) and the Amdahl ceiling if the crypto cost nothing:".into(),
        );
        let head = [
            "cipher",
            "proto",
            "dir",
            "streams",
            "sampled crypto",
            "CPU s/GB",
            "none s/GB",
            "crypto share",
            "max speed-up",
            "busiest thread",
            "Mbit/s",
            "ceiling Mbit/s",
            "none Mbit/s",
        ];
        let rows: Vec<Vec<String>> = shares.iter().map(share_row).collect();
        grid(&mut out, &head, &rows, 3, md);
        out.push('\n');
    } else if recs.iter().any(|r| r.tunnel == "openvpn") {
        para(
            &mut out,
            "No crypto share: it needs OpenVPN with cipher none at the same load (add none to --ciphers).".into(),
        );
    }

    let mut notes: Vec<String> = Vec::new();
    for r in recs {
        for n in &r.notes {
            let n = if n.starts_with("every core was busy") {
                "every core was busy during some points (see the machine column): tunnel, iperf3 and the kernel shared them".to_string()
            } else if n.starts_with("other processes used") {
                "other processes used a noticeable share of the CPUs during some points (others_cpu_pct in the records): those numbers are disturbed".to_string()
            } else {
                n.clone()
            };
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
    }
    if shares.iter().any(|s| s.crypto_share < 0.0) {
        notes.push("a negative crypto share means the no-crypto tunnel cost more CPU per byte at that load: the difference is noise (run longer with --duration)".into());
    }
    if shares
        .iter()
        .any(|s| s.notes.iter().any(|n| n.starts_with("disturbed")))
    {
        notes.push("some crypto shares compare points that other processes disturbed: CPU per byte rises under contention, so those shares are unreliable".into());
    }
    if shares.iter().any(|s| {
        s.busiest_thread_cpu_pct
            .is_some_and(|p| p < super::record::BOUND_PCT)
    }) {
        notes.push(format!("a ceiling is an upper bound only where one tunnel thread held the tunnel back (busiest thread near 100%); below {:.0}% it overstates", super::record::BOUND_PCT));
    }
    for e in &report.exclusions {
        notes.push(match &e.load {
            Some(l) => format!("not measured: {} {l}: {}", e.tunnel, e.reason),
            None => format!("not measured: {}: {}", e.tunnel, e.reason),
        });
    }
    if report.interrupted {
        notes.push("interrupted: the points above are those finished before the signal".into());
    }
    if !notes.is_empty() {
        let _ = writeln!(out, "Notes:");
        if md {
            out.push('\n');
        }
        for n in notes {
            let _ = writeln!(out, "- {n}");
        }
        out.push('\n');
    }
    let tools: Vec<String> = report
        .environment
        .iter()
        .flat_map(|env| &env.libraries)
        .map(|l| l["version"].as_str().unwrap_or("?").to_string())
        .collect();
    let _ = writeln!(out, "Tools: {}", tools.join("; "));
    out
}

const CSV_COLUMNS: &[&str] = &[
    "workload",
    "tunnel",
    "implementation",
    "cipher",
    "auth",
    "protocol",
    "direction",
    "streams",
    "round",
    "duration_s",
    "transfer_s",
    "throughput_bps",
    "bytes",
    "sent_bytes",
    "retransmits",
    "lost_pct",
    "mtu",
    "outer_mtu",
    "tcp_mss",
    "tunnel_tx_bytes",
    "tunnel_rx_bytes",
    "outer_tx_bytes",
    "tunnel_dropped",
    "outer_dropped",
    "udp_rcvbuf_errors",
    "tunnel_cpu_s",
    "cpu_user_s",
    "cpu_sys_s",
    "cpu_s_per_gb",
    "tunnel_cpu_pct",
    "busiest_thread_cpu_pct",
    "threads_used",
    "thread_cpu",
    "softirq_s",
    "system_busy_pct",
    "others_cpu_pct",
    "notes",
    "run_id",
];

/// One row per record with raw values (CSV).
pub fn records_table(records: &[&VpnRecord]) -> Table {
    let f = |v: Option<f64>, d: usize| v.map(|x| format!("{x:.d$}")).unwrap_or_default();
    let mut t = Table::new("", CSV_COLUMNS.iter().map(|c| Column::text(c)).collect());
    for r in records {
        let threads: Vec<String> = r
            .thread_cpu
            .iter()
            .map(|t| format!("{}:{}:{}:{:.1}", t.end, t.name, t.tid, t.cpu_pct))
            .collect();
        let row = [
            r.workload.clone(),
            r.tunnel.clone(),
            r.impl_version.clone(),
            r.cipher.clone(),
            r.auth.clone().unwrap_or_default(),
            r.protocol.clone(),
            r.direction.clone(),
            r.streams.to_string(),
            r.round.to_string(),
            r.duration_s.to_string(),
            format!("{:.3}", r.transfer_s),
            format!("{:.0}", r.throughput_bps),
            r.bytes.to_string(),
            r.sent_bytes.to_string(),
            r.retransmits.map(|n| n.to_string()).unwrap_or_default(),
            f(r.lost_pct, 2),
            r.mtu.to_string(),
            r.outer_mtu.to_string(),
            r.tcp_mss.map(|n| n.to_string()).unwrap_or_default(),
            r.tunnel_tx_bytes.to_string(),
            r.tunnel_rx_bytes.to_string(),
            r.outer_tx_bytes.to_string(),
            r.tunnel_dropped.to_string(),
            r.outer_dropped.to_string(),
            r.udp_rcvbuf_errors.to_string(),
            f(r.tunnel_cpu_s, 3),
            f(r.cpu_user_s, 3),
            f(r.cpu_sys_s, 3),
            f(r.cpu_s_per_gb, 4),
            f(r.tunnel_cpu_pct, 1),
            f(r.busiest_thread_cpu_pct, 1),
            r.threads_used.map(|n| n.to_string()).unwrap_or_default(),
            threads.join(";"),
            format!("{:.3}", r.softirq_s),
            format!("{:.1}", r.system_busy_pct),
            format!("{:.1}", r.others_cpu_pct),
            r.notes.join("; "),
            r.run_id.clone(),
        ];
        t.push(row.to_vec());
    }
    t
}

#[cfg(test)]
mod tests {
    use super::super::record::tests::rec;
    use super::*;

    #[test]
    fn labels_and_columns() {
        assert_eq!(
            cipher_label("AES-256-CBC", Some("HMAC-SHA1")),
            "AES-256-CBC+HMAC-SHA1"
        );
        assert_eq!(cipher_label("none", Some("none")), "none");
        let r = rec("openvpn", "AES-128-GCM", 1, 50e6, 9.0);
        let row = record_row(&r);
        assert_eq!(row.len(), 17);
        assert_eq!(row[6], "400");
    }
}
