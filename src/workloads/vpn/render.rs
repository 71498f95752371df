//! What the vpn report shows, as tables and lines for the shared render layer: each
//! point (medians over rounds), each tunnel's busiest threads, the crypto shares, notes.
//! Layout (terminal, Markdown, CSV) is `render::model`'s.

use crate::analyse::vpn::{self, by_point, CipherShare};
use crate::record::vpn::{cipher_label, VpnData, VpnRecord};
use crate::record::window::THREAD_USED_PCT;
use crate::record::Environment;
use crate::render::document::RunView;
use crate::render::model::{Block, Column, Table};
use std::fmt::Write;

fn mbit(bps: f64) -> String {
    crate::units::magnitude(bps * 8.0 / 1e6)
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

fn record_row(r: &VpnRecord) -> Vec<String> {
    let loss = match (r.retransmits, r.lost_pct) {
        (Some(n), _) => n.to_string(),
        (None, Some(l)) => format!("{l:.1}% lost"),
        _ => "-".into(),
    };
    vec![
        r.tunnel.clone(),
        r.impl_version.clone(),
        cipher_label(&r.cipher, r.auth.as_deref()),
        match r.packet_size {
            Some(n) => format!("{} {n} B", r.protocol),
            None => r.protocol.clone(),
        },
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
        r.others_cpu_pct.map_or_else(|| "-".into(), |x| format!("{x:.0}%")),
    ]
}

fn share_row(s: &CipherShare) -> Vec<String> {
    vec![
        cipher_label(&s.cipher, s.auth.as_deref()),
        s.protocol.clone(),
        s.direction.clone(),
        s.streams.to_string(),
        s.sampled.as_ref().map_or_else(
            || format!("{:.0}% per byte", s.crypto_share * 100.0),
            |x| {
                format!(
                    "{:.0}% [{:.0}-{:.0}%] sampled",
                    x.share * 100.0,
                    x.ci[0] * 100.0,
                    x.ci[1] * 100.0
                )
            },
        ),
        format!("{:.2}x", s.max_speedup),
        if s.sampled.is_some() {
            format!("{:.0}%", s.per_byte_share * 100.0)
        } else {
            "-".into()
        },
        format!("{:.2}", s.cpu_s_per_gb),
        format!("{:.2}", s.none_cpu_s_per_gb),
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

/// Every block of one run's vpn records.
pub fn blocks(run: &RunView<VpnData>, shares: &[CipherShare]) -> Vec<Block> {
    let records: Vec<VpnRecord> = run.records.iter().map(|r| (*r).clone()).collect();
    let points = by_point(&records);
    let rounds = points.iter().map(Vec::len).max().unwrap_or(1);
    let summaries: Vec<(VpnRecord, f64)> = points.iter().map(|g| vpn::summary(g)).collect();
    let mut intro = vec![intro(run.environment())];
    if rounds > 1 {
        intro.push(format!("Medians over {rounds} rounds (every tunnel measured once per round, in turn); spread = (max - min) / median of the throughput."));
    }
    let mut out = vec![Block::Lines(intro)];
    if summaries.is_empty() {
        out.push(Block::Lines(vec!["No point was measured.".into()]));
    } else {
        out.push(Block::Table(points_table(&summaries, rounds)));
    }
    let reps: Vec<VpnRecord> = summaries.into_iter().map(|(r, _)| r).collect();
    if let Some(t) = packets_and_latency_table(&reps) {
        out.push(Block::Table(t));
        out.push(Block::Lines(
            reps.iter()
                .filter_map(|r| {
                    let l = r.limit.as_ref()?;
                    Some(format!(
                        "Limit of {} {}: {}",
                        r.label,
                        load_of(r),
                        l.evidence
                    ))
                })
                .collect(),
        ));
    }
    let threads = threads_table(&reps);
    if !threads.rows.is_empty() {
        out.push(Block::Table(threads));
    }
    if !shares.is_empty() {
        out.push(Block::Table(shares_table(shares)));
    } else if records.iter().any(|r| r.tunnel == "openvpn") {
        out.push(Block::Lines(vec!["No crypto share: it needs OpenVPN with cipher none at the same load (add none to --ciphers).".into()]));
    }
    let notes = notes(vpn::notes(&records, shares), run);
    if !notes.is_empty() {
        out.push(Block::Lines(
            notes.into_iter().map(|n| format!("Note: {n}")).collect(),
        ));
    }
    let tools: Vec<String> = run
        .environment()
        .iter()
        .flat_map(|env| &env.libraries)
        .map(|l| l.version.clone())
        .collect();
    out.push(Block::Lines(vec![format!("Tools: {}", tools.join("; "))]));
    out
}

fn intro(env: Option<&Environment>) -> String {
    let (cpus, dur) = env
        .map(|env| {
            let duration = match &env.settings.workload {
                crate::record::WorkloadSettings::Vpn(v) => v.duration_s,
                _ => 0,
            };
            (env.cpu.logical_cpus, duration)
        })
        .unwrap_or((0, 0));
    format!(
        "Tunnels between two network namespaces over a veth pair, iperf3 for {dur} s per point, on {cpus} logical CPUs. Mbit/s = payload received; CPU = the tunnel's own processes at both ends (100% = one core), in kernel = its system-call share; threads = threads over {:.0}% of a core; machine = busy share of all cores; others = the part of it used by other processes; drops = packets dropped by the tunnel and veth interfaces and by full UDP receive buffers.",
        THREAD_USED_PCT
    )
}

const POINT_COLUMNS: &[&str] = &[
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

/// The first `left` columns are text, the rest numbers.
fn columns(names: &[&str], left: usize) -> Vec<Column> {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            if i < left {
                Column::text(n)
            } else {
                Column::num(n)
            }
        })
        .collect()
}

fn points_table(summaries: &[(VpnRecord, f64)], rounds: usize) -> Table {
    let mut t = Table::new("", columns(POINT_COLUMNS, 5));
    if rounds > 1 {
        t.columns.push(Column::num("spread"));
    }
    for (r, spread) in summaries {
        let mut row = record_row(r);
        if rounds > 1 {
            row.push(format!("{spread:.0}%"));
        }
        t.push(row);
    }
    t
}

fn load_of(r: &VpnRecord) -> String {
    let size = r.packet_size.map(|n| format!(" {n} B")).unwrap_or_default();
    format!("{}{size} {} x{}", r.protocol, r.direction, r.streams)
}

/// Packets per second at each packet size, round trips idle and under each load, and
/// each point's limit; None when no point has any of them (records before these fields).
fn packets_and_latency_table(reps: &[VpnRecord]) -> Option<Table> {
    let seen = |r: &VpnRecord| r.pps.is_some() || r.rtt_idle_ms.is_some() || r.limit.is_some();
    if !reps.iter().any(seen) {
        return None;
    }
    let mut t = Table::new(
        "Packets per second (UDP datagrams of --packet-sizes received), round trips through the tunnel (irtt, ms) idle and under the load, and what limited each point:",
        columns(
            &[
                "tunnel", "cipher", "load", "pps", "loss", "idle p50", "idle p99", "loaded p50",
                "loaded p99", "limit",
            ],
            3,
        ),
    );
    let ms = |r: Option<f64>| opt(r, |x| format!("{x:.3}"));
    for r in reps {
        t.push(vec![
            format!("{} ({})", r.tunnel, r.impl_version),
            cipher_label(&r.cipher, r.auth.as_deref()),
            load_of(r),
            opt(r.pps, crate::units::magnitude),
            opt(r.loss_pct, |x| format!("{x:.1}%")),
            ms(r.rtt_idle_ms.as_ref().map(|x| x.p50)),
            ms(r.rtt_idle_ms.as_ref().map(|x| x.p99)),
            ms(r.rtt_loaded_ms.as_ref().map(|x| x.p50)),
            ms(r.rtt_loaded_ms.as_ref().map(|x| x.p99)),
            r.limit
                .as_ref()
                .map_or_else(|| "-".into(), |l| l.kind.clone()),
        ]);
    }
    Some(t)
}

/// Threads of each tunnel at its heaviest load: how many cores it really used.
fn threads_table(reps: &[VpnRecord]) -> Table {
    let mut t = Table::new(
        "Busiest threads of each tunnel at its most streams (CPU % of one core):",
        columns(
            &["tunnel", "cipher", "proto", "dir", "streams", "threads"],
            4,
        ),
    );
    t.columns[5].left = true;
    let mut seen: Vec<(&str, &str, &str)> = Vec::new();
    for r in reps.iter().filter(|r| r.tunnel_cpu_s.is_some()) {
        let key = (r.tunnel.as_str(), r.cipher.as_str(), r.protocol.as_str());
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
        t.push(vec![
            r.tunnel.clone(),
            cipher_label(&r.cipher, r.auth.as_deref()),
            heaviest.protocol.clone(),
            heaviest.direction.clone(),
            heaviest.streams.to_string(),
            threads_line(heaviest),
        ]);
    }
    t
}

fn shares_table(shares: &[CipherShare]) -> Table {
    let mut t = Table::new(
        "Crypto share of OpenVPN's CPU (sampled with perf where profiled, else per byte against cipher none at the same load) and the Amdahl ceiling if the crypto cost nothing:",
        columns(
            &[
                "cipher",
                "proto",
                "dir",
                "streams",
                "crypto share",
                "max speed-up",
                "per-byte cross-check",
                "CPU s/GB",
                "none s/GB",
                "busiest thread",
                "Mbit/s",
                "ceiling Mbit/s",
                "none Mbit/s",
            ],
            3,
        ),
    );
    t.rows = shares.iter().map(share_row).collect();
    let mut sources: Vec<&str> = shares
        .iter()
        .filter(|s| s.sampled.is_none())
        .map(|s| s.share_source.as_str())
        .collect();
    sources.dedup();
    t.notes.extend(sources.into_iter().map(String::from));
    t
}

/// The notes of the records and shares, then what was not measured.
fn notes(mut notes: Vec<String>, run: &RunView<VpnData>) -> Vec<String> {
    for e in &run.exclusions {
        let tunnel = e
            .point
            .get("tunnel")
            .and_then(|t| t.as_str())
            .unwrap_or(&e.implementation);
        notes.push(match e.point.get("load").and_then(|l| l.as_str()) {
            Some(l) => format!("not measured: {tunnel} {l}: {}", e.reason),
            None => format!("not measured: {tunnel}: {}", e.reason),
        });
    }
    if run.interrupted() {
        notes.push("interrupted: the points above are those finished before the signal".into());
    }
    notes
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
    "packet_size",
    "pps",
    "loss_pct",
    "rtt_idle_p50_ms",
    "rtt_idle_p99_ms",
    "rtt_loaded_p50_ms",
    "rtt_loaded_p99_ms",
    "limit",
    "throttled",
];

/// One row per record with raw values (CSV).
pub fn records_table(records: &[&VpnRecord]) -> Table {
    // A figure that rounds to zero is written 0, never "-0.000" (a difference of two
    // readings can fall a hair below zero).
    let f = |v: Option<f64>, d: usize| {
        v.map(|x| {
            let x = if x.abs() < 0.5 / 10f64.powi(d as i32) {
                0.0
            } else {
                x
            };
            format!("{x:.d$}")
        })
        .unwrap_or_default()
    };
    let mut t = Table::new("", CSV_COLUMNS.iter().map(|c| Column::text(c)).collect());
    for r in records {
        let threads: Vec<String> = r
            .thread_cpu
            .iter()
            .map(|t| format!("{}:{}:{}:{:.1}", t.end, t.name, t.tid, t.cpu_pct))
            .collect();
        let row = [
            r.workload.to_string(),
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
            f(Some(r.softirq_s), 3),
            f(Some(r.system_busy_pct), 1),
            f(r.others_cpu_pct, 1),
            r.notes.join("; "),
            r.run_id.clone(),
            r.packet_size.map(|n| n.to_string()).unwrap_or_default(),
            f(r.pps, 0),
            f(r.loss_pct, 2),
            f(r.rtt_idle_ms.as_ref().map(|x| x.p50), 4),
            f(r.rtt_idle_ms.as_ref().map(|x| x.p99), 4),
            f(r.rtt_loaded_ms.as_ref().map(|x| x.p50), 4),
            f(r.rtt_loaded_ms.as_ref().map(|x| x.p99), 4),
            r.limit.as_ref().map(|l| l.kind.clone()).unwrap_or_default(),
            r.throttled.map(|b| b.to_string()).unwrap_or_default(),
        ];
        t.push(row.to_vec());
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyse::vpn::tests::rec;

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

    #[test]
    fn a_figure_that_rounds_to_zero_is_never_negative_zero() {
        let mut r = rec("openvpn", "AES-128-GCM", 1, 50e6, 9.0);
        r.cpu_sys_s = Some(-0.0002);
        r.others_cpu_pct = Some(-0.0);
        let t = records_table(&[&r]);
        let col = |name: &str| CSV_COLUMNS.iter().position(|c| *c == name).unwrap();
        assert_eq!(t.rows[0][col("cpu_sys_s")], "0.000");
        assert_eq!(t.rows[0][col("others_cpu_pct")], "0.0");
    }
}
