//! How ssh records are shown, for `ssh` and `report`: per server, cipher, MAC and
//! direction, the median rate with its interval, each end's CPU per GB, the busiest
//! thread, the limit and where the negotiation was proven. Pure functions of one run's
//! records.

use crate::record::profile::ProfileField;
use crate::record::ssh::{SshData, SshRecord};
use crate::render::document::{Options, RunView, View};
use crate::render::model::{Block, Column, Table};
use crate::units::mbps;
use serde_json::{json, Value};

pub struct SshView;

fn mac(r: &SshRecord) -> String {
    r.mac.clone().unwrap_or_else(|| "(AEAD)".into())
}

fn interval(r: &SshRecord) -> String {
    match r.throughput_bps_ci {
        Some([lo, hi]) => format!("{}-{}", mbps(lo), mbps(hi)),
        None => "-".into(),
    }
}

fn points_table(records: &[&SshRecord]) -> Table {
    let mut t = Table::new(
        "MB/s: the median round's data phase (interval over the rounds); CPU s/GB: each end's whole connection; busiest thread: percent of one core over the data phase; proof: whose log showed the negotiated cipher and MAC",
        vec![
            Column::text("server"),
            Column::text("cipher"),
            Column::text("MAC"),
            Column::text("dir"),
            Column::num("MB/s"),
            Column::text("interval"),
            Column::num("client s/GB"),
            Column::num("server s/GB"),
            Column::text("busiest thread"),
            Column::text("limit"),
            Column::text("proof"),
        ],
    );
    t.group_by = Some(0);
    for r in records {
        let (end, b) = if r.busiest_thread.server.pct >= r.busiest_thread.client.pct {
            ("server", &r.busiest_thread.server)
        } else {
            ("client", &r.busiest_thread.client)
        };
        t.push(vec![
            format!("{} {}", r.server.name, r.server.version),
            r.cipher.clone(),
            mac(r),
            r.direction.clone(),
            mbps(r.throughput_bps),
            interval(r),
            format!("{:.2}", r.cpu_s_per_gb_by_end.client),
            format!("{:.2}", r.cpu_s_per_gb_by_end.server),
            format!("{end} {} {:.0}%", b.name, b.pct),
            r.limit.kind.clone(),
            r.negotiated_from.clone(),
        ]);
    }
    t
}

/// What a point's crypto cost: the share perf found of each end's CPU (--profile), and
/// OpenSSH's cipher and MAC alone beside the server's CPU per GB.
fn crypto_line(r: &SshRecord) -> Option<String> {
    let share = |p: Option<&ProfileField>| match p {
        Some(ProfileField::Measured(m)) => Some(format!(
            "{:.0}% [{:.0}, {:.0}]",
            m.crypto.share * 100.0,
            m.crypto.ci[0] * 100.0,
            m.crypto.ci[1] * 100.0
        )),
        _ => None,
    };
    let mut parts = Vec::new();
    if let Some(s) = share(r.profile.as_deref()) {
        parts.push(format!("crypto {s} of the server's CPU"));
    }
    if let Some(s) = share(r.client_profile.as_ref()) {
        parts.push(format!("{s} of the client's"));
    }
    if let Some(a) = &r.primitive {
        let server = r.cpu_s_per_gb_by_end.server;
        let of_server = match server > 0.0 {
            true => format!(", {:.0}% of the server's {server:.2}", a.cpu_s_per_gb / server * 100.0),
            false => String::new(),
        };
        parts.push(format!(
            "{} alone on {}: {:.2} CPU s/GB{of_server}",
            a.algs.join("+"),
            a.implementation,
            a.cpu_s_per_gb
        ));
    }
    (!parts.is_empty()).then(|| format!("{}: {}", r.label, parts.join("; ")))
}

impl View for SshView {
    type Data = SshData;

    fn blocks(run: &RunView<SshData>, _opts: &Options) -> Vec<Block> {
        let mut out = vec![Block::Heading(
            "SSH: a bulk transfer through the channel, per server, cipher and MAC".into(),
        )];
        if run.records.is_empty() {
            out.push(Block::Lines(vec!["No point was measured.".into()]));
        } else {
            out.push(Block::Table(points_table(&run.records)));
            let limits: Vec<String> = run
                .records
                .iter()
                .map(|r| format!("{}: {} ({})", r.label, r.limit.kind, r.limit.evidence))
                .collect();
            out.push(Block::Lines(limits));
            let crypto: Vec<String> = run.records.iter().filter_map(|r| crypto_line(r)).collect();
            if !crypto.is_empty() {
                out.push(Block::Lines(crypto));
            }
        }
        let refused: Vec<String> = run
            .exclusions
            .iter()
            .map(|e| {
                let at = |k: &str| {
                    e.point
                        .get(k)
                        .and_then(|v| v.as_str())
                        .unwrap_or("")
                        .to_string()
                };
                format!(
                    "Not measured: {} {} {} {}: {}",
                    e.implementation,
                    at("cipher"),
                    at("mac"),
                    at("direction"),
                    e.reason
                )
            })
            .collect();
        if !refused.is_empty() {
            out.push(Block::Lines(refused));
        }
        out
    }

    fn records_table(records: &[&SshRecord]) -> Table {
        let cols = [
            "workload",
            "server",
            "server_version",
            "cipher",
            "mac",
            "direction",
            "bytes",
            "rounds",
            "throughput_bps",
            "throughput_bps_low",
            "throughput_bps_high",
            "transfer_s",
            "connect_s",
            "client_session_s",
            "client_cpu_s_per_gb",
            "server_cpu_s_per_gb",
            "busiest_thread_pct",
            "client_busiest_thread",
            "client_busiest_thread_pct",
            "server_busiest_thread",
            "server_busiest_thread_pct",
            "limit",
            "negotiated_from",
            "others_cpu_pct",
        ];
        let mut t = Table::new("", cols.iter().map(|c| Column::text(c)).collect());
        for r in records {
            let [lo, hi] = r.ci();
            t.push(vec![
                r.workload.to_string(),
                r.server.name.clone(),
                r.server.version.clone(),
                r.cipher.clone(),
                r.mac.clone().unwrap_or_default(),
                r.direction.clone(),
                r.bytes.to_string(),
                r.rounds.to_string(),
                format!("{:.0}", r.throughput_bps),
                format!("{lo:.0}"),
                format!("{hi:.0}"),
                format!("{:.4}", r.transfer_s),
                format!("{:.4}", r.connect_s),
                r.client_session_s.map_or(String::new(), |v| format!("{v:.1}")),
                format!("{:.3}", r.cpu_s_per_gb_by_end.client),
                format!("{:.3}", r.cpu_s_per_gb_by_end.server),
                format!("{:.1}", r.busiest_thread_pct),
                r.busiest_thread.client.name.clone(),
                format!("{:.1}", r.busiest_thread.client.pct),
                r.busiest_thread.server.name.clone(),
                format!("{:.1}", r.busiest_thread.server.pct),
                r.limit.kind.clone(),
                r.negotiated_from.clone(),
                r.others_cpu_pct.map_or_else(String::new, |x| format!("{x:.1}")),
            ]);
        }
        t
    }

    /// Per server and direction, the fastest cipher and each point's rate against it.
    fn analysis(run: &RunView<SshData>, _opts: &Options) -> Value {
        let mut groups: Vec<(String, String)> = Vec::new();
        for r in &run.records {
            let g = (r.server.name.clone(), r.direction.clone());
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
        let fastest: Vec<Value> = groups
            .iter()
            .filter_map(|(server, dir)| {
                let of: Vec<&&SshRecord> = run
                    .records
                    .iter()
                    .filter(|r| &r.server.name == server && &r.direction == dir)
                    .collect();
                let best = of
                    .iter()
                    .max_by(|a, b| a.throughput_bps.total_cmp(&b.throughput_bps))?;
                let points: Vec<Value> = of
                    .iter()
                    .map(|r| {
                        json!({
                            "label": r.label,
                            "of_fastest": r.throughput_bps / best.throughput_bps,
                            "limit": r.limit.kind,
                        })
                    })
                    .collect();
                Some(json!({
                    "server": server,
                    "direction": dir,
                    "fastest": best.label,
                    "fastest_bps": best.throughput_bps,
                    "points": points,
                }))
            })
            .collect();
        json!({ "fastest_per_server_and_direction": fastest })
    }
}
