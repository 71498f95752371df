//! Output formats of `tls`, from the finished report only: table, JSON, CSV, Markdown.
//! Same Exporter shape as src/render (one type per format, `render(&report)`).

use super::analysis::{Analysis, Share};
use super::record::{Refusal, TlsRecord};
use super::TlsFormat;
use crate::record::Environment;
use crate::render::model::{Block, Column, Table as Grid};
use crate::render::{mbps, size_label};
use serde::Serialize;
use std::fmt::Write;

#[derive(Serialize)]
pub struct TlsReport {
    pub schema: u32,
    pub environment: Option<Environment>,
    pub records: Vec<TlsRecord>,
    /// Points measured but not kept (a check failed), or not applicable.
    pub refused: Vec<Refusal>,
    pub interrupted: bool,
    pub analysis: Analysis,
}

pub trait Exporter {
    fn render(&self, report: &TlsReport) -> String;
}

pub struct Table;
pub struct Json;
/// The terminal table as blocks, for the shared render layer.
pub fn blocks(report: &TlsReport) -> Vec<Block> {
    vec![Block::Lines(
        Table.render(report).lines().map(str::to_string).collect(),
    )]
}

pub struct Markdown;

pub fn render(format: TlsFormat, report: &TlsReport) -> String {
    let e: Box<dyn Exporter> = match format {
        TlsFormat::Table => Box::new(Table),
        TlsFormat::Json => Box::new(Json),
        TlsFormat::Csv => {
            let recs: Vec<&TlsRecord> = report.records.iter().collect();
            return crate::render::model::csv(&[records_table(&recs)]);
        }
        TlsFormat::Markdown => Box::new(Markdown),
    };
    e.render(report)
}

fn file_label(r: &TlsRecord) -> String {
    match r.content.as_str() {
        "random" => size_label(r.file_size),
        c => c.to_string(),
    }
}

fn share_file(s: &Share) -> String {
    match (s.content.as_str(), s.file_size) {
        ("random", Some(n)) => size_label(n),
        (_, None) => "all".into(),
        (c, _) => c.to_string(),
    }
}

fn suite_label(r: &TlsRecord) -> String {
    match &r.mix {
        Some(parts) => format!(
            "mix {}",
            parts
                .iter()
                .map(|p| format!("{:.0}%", p.percent))
                .collect::<Vec<_>>()
                .join("/")
        ),
        None => r.suite.clone(),
    }
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn lat(r: &TlsRecord, f: fn(&super::record::Latency) -> f64) -> String {
    r.latency_ms
        .as_ref()
        .map(|l| format!("{:.2}", f(l)))
        .unwrap_or_else(|| "-".into())
}

fn setting<'a>(env: &'a Environment, k: &str) -> &'a serde_json::Value {
    &env.settings[k]
}

fn header(report: &TlsReport) -> String {
    let Some(env) = &report.environment else {
        return "(the run's environment line is missing)\n".into();
    };
    let lib = |name: &str| {
        env.libraries
            .iter()
            .find(|l| l["impl"] == name)
            .map(|l| l["version"].as_str().unwrap_or("?").to_string())
    };
    let nginx_ssl = env
        .libraries
        .iter()
        .find(|l| l["impl"] == "nginx")
        .and_then(|l| l["details"]["openssl"].as_str())
        .unwrap_or("");
    let mut out = String::new();
    let _ = writeln!(
        out,
        "nginx {} ({nginx_ssl}); generator {}; certificate {}; {}; {} s per point",
        lib("nginx")
            .unwrap_or_default()
            .trim_start_matches("nginx/"),
        lib(setting(env, "generator").as_str().unwrap_or("wrk")).unwrap_or_default(),
        setting(env, "cert").as_str().unwrap_or("?"),
        if setting(env, "handshake").as_bool() == Some(true) {
            "a new connection and full handshake per request"
        } else {
            "keep-alive"
        },
        setting(env, "duration_s").as_f64().unwrap_or(0.0)
    );
    let cpus = |k: &str| {
        setting(env, k)
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_u64())
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default()
    };
    let _ = writeln!(
        out,
        "Server CPUs {} ({} nginx workers), generator CPUs {}{}",
        cpus("server_cpus"),
        setting(env, "nginx_workers"),
        cpus("generator_cpus"),
        if setting(env, "pinned").as_bool() == Some(true) {
            " (pinned, disjoint)"
        } else {
            " (shared)"
        }
    );
    out
}

impl Exporter for Table {
    fn render(&self, report: &TlsReport) -> String {
        let mut out = header(report);
        out.push('\n');
        let recs = &report.records;
        let w = recs
            .iter()
            .map(|r| suite_label(r).len())
            .max()
            .unwrap_or(5)
            .max(5);
        if !recs.is_empty() {
            let _ = writeln!(
                out,
                "{:<w$} {:>9} {:>5} {:>10}  {:>8} {:>7} {:>7} {:>7} {:>7}  {:>8} {:>8}",
                "suite",
                "file",
                "conn",
                "req/s",
                "MB/s",
                "p50 ms",
                "p99 ms",
                "srv CPU",
                "gen CPU",
                "srv s/GB",
                "ms/req"
            );
            let mut last: Option<(String, u64)> = None;
            for r in recs {
                let k = (r.content.clone(), r.file_size);
                if last.as_ref().is_some_and(|l| *l != k) {
                    out.push('\n');
                }
                last = Some(k);
                let _ = writeln!(
                    out,
                    "{:<w$} {:>9} {:>5} {:>10.1}{} {:>8} {:>7} {:>7} {:>6.0}% {:>6.0}%{} {:>8.3} {:>8.3}",
                    suite_label(r),
                    file_label(r),
                    r.concurrency,
                    r.requests_per_s,
                    if r.disturbed { "~" } else { " " },
                    mbps(r.throughput_bps),
                    lat(r, |l| l.p50),
                    lat(r, |l| l.p99),
                    r.server_cpu_pct,
                    r.client_cpu_pct,
                    if r.generator_bound { "*" } else { " " },
                    r.cpu_s_per_gb.unwrap_or(0.0),
                    r.cpu_ms_per_request
                );
            }
            out.push('\n');
            let _ = writeln!(
                out,
                "MB/s = 10^6 response bytes/s received; srv CPU = all nginx workers (user+sys) in % of the server CPUs; srv s/GB and ms/req = server CPU per 10^9 bytes sent and per request."
            );
            let bound: Vec<&TlsRecord> = recs.iter().filter(|r| r.generator_bound).collect();
            if !bound.is_empty() {
                let _ = writeln!(
                    out,
                    "* generator-bound: the load generator used >= 90% of its CPU in {} of {} points, so those measure the client as much as the server; CPU per GB and per request stay valid.",
                    bound.len(),
                    recs.len()
                );
            }
            let disturbed = recs.iter().filter(|r| r.disturbed).count();
            if disturbed > 0 {
                let _ = writeln!(
                    out,
                    "~ disturbed: other processes used >= 10% of the server and generator CPUs in {disturbed} of {} points (up to {:.0}%); rerun on a quiet machine to trust small differences.",
                    recs.len(),
                    recs.iter().map(|r| r.others_cpu_pct).fold(0.0, f64::max)
                );
            }
            let mut neg: Vec<(String, String)> = Vec::new();
            for r in recs {
                let x = (suite_label(r), r.negotiated.clone());
                if !neg.contains(&x) {
                    neg.push(x);
                }
            }
            let _ = writeln!(out, "\nNegotiated (nginx's log, every request checked):");
            for (s, n) in neg {
                let _ = writeln!(out, "  {s:<w$}  {n}");
            }
        }
        shares_table(&mut out, &report.analysis);
        mix_lines(&mut out, &report.analysis);
        refusals(&mut out, &report.refused);
        for n in &report.analysis.notes {
            let _ = writeln!(out, "Note: {n}");
        }
        if report.interrupted {
            let _ = writeln!(out, "\nInterrupted: only the finished points are shown.");
        }
        out
    }
}

fn shares_table(out: &mut String, a: &Analysis) {
    if a.shares.is_empty() {
        return;
    }
    let null = a
        .references
        .iter()
        .find(|r| r.suite == "null")
        .map(|r| r.negotiated.clone())
        .unwrap_or_default();
    let w = a
        .shares
        .iter()
        .map(|s| s.suite.len())
        .max()
        .unwrap_or(5)
        .max(5);
    let _ = writeln!(
        out,
        "\nCrypto share of the server's CPU per GB, against the null suite ({null}) measured in this run:"
    );
    let _ = writeln!(
        out,
        "{:<w$} {:>9} {:>17} | {:>8} {:>9} {:>7} {:>8} | {:>7} {:>8} | {:>8} {:>7}",
        "suite",
        "file",
        "sampled [95% CI]",
        "s/GB",
        "null s/GB",
        "share",
        "ceiling",
        "share'",
        "ceiling'",
        "alone",
        "of CPU"
    );
    let mut last = String::new();
    for s in &a.shares {
        if !last.is_empty() && last != s.suite {
            out.push('\n');
        }
        last = s.suite.clone();
        let ceiling = if s.null_costs_more {
            "n/a".to_string()
        } else {
            format!("{:.2}x", s.ceiling_speedup)
        };
        let _ = writeln!(
            out,
            "{:<w$} {:>9} {:>17} | {:>8.3} {:>9.3} {:>7}{}{:>8} | {:>7} {:>8} | {:>8} {:>7}",
            s.suite,
            share_file(s),
            s.sampled
                .as_ref()
                .map(|x| format!(
                    "{} [{:.0}-{:.0}%]",
                    pct(x.share),
                    x.ci[0] * 100.0,
                    x.ci[1] * 100.0
                ))
                .unwrap_or("-".into()),
            s.cpu_s_per_gb,
            s.null_cpu_s_per_gb,
            pct(s.share),
            if s.disturbed { "~" } else { " " },
            ceiling,
            s.share_without_null_mac.map(pct).unwrap_or("-".into()),
            s.ceiling_speedup_without_null_mac
                .map(|c| format!("{c:.2}x"))
                .unwrap_or("-".into()),
            s.cipher_alone_s_per_gb
                .map(|c| format!("{c:.3}"))
                .unwrap_or("-".into()),
            s.cipher_alone_share.map(pct).unwrap_or("-".into()),
        );
    }
    if a.shares.iter().any(|s| s.sampled.is_some()) {
        let _ = writeln!(
            out,
            "sampled = the crypto share of the nginx workers' cpu-clock samples (perf, --profile): the direct measurement; the columns after it are cross-checks."
        );
    }
    let _ = writeln!(
        out,
        "share = (s/GB(suite) - s/GB(null)) / s/GB(suite); ceiling = 1/(1 - share), the speed-up of a server-bound run if the suite's crypto were free (Amdahl); ~ = from disturbed points."
    );
    if let Some(mac) = a.shares.iter().find_map(|s| s.null_mac_s_per_gb) {
        let _ = writeln!(
            out,
            "share', ceiling' = the same against the null suite minus its own HMAC-SHA1 ({mac:.3} s/GB measured alone): the null cipher still authenticates every record."
        );
    }
    let _ = writeln!(
        out,
        "alone = the suite's record protection measured alone on the same libcrypto (16 KiB records, one core), s/GB; of CPU = alone / s/GB(suite): a bottom-up estimate of the same share."
    );
    let refs: Vec<String> = a
        .references
        .iter()
        .map(|r| {
            format!(
                "{} {}: {:.3} s/GB",
                r.suite,
                match (r.content.as_str(), r.file_size) {
                    ("random", Some(n)) => size_label(n),
                    (c, _) => c.to_string(),
                },
                r.cpu_s_per_gb
            )
        })
        .collect();
    if !refs.is_empty() {
        let _ = writeln!(
            out,
            "References: {} (plain HTTP uses sendfile, so it is not a TLS ceiling).",
            refs.join(", ")
        );
    }
}

fn mix_lines(out: &mut String, a: &Analysis) {
    if a.mix.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nMixed connections (--mix {}):", a.mix[0].mix);
    for m in &a.mix {
        let f = match m.content.as_str() {
            "random" => size_label(m.file_size),
            c => c.to_string(),
        };
        let opt = |x: Option<f64>, unit: &str| {
            x.map(|v| format!("{v:.1}{unit}"))
                .unwrap_or_else(|| "-".into())
        };
        let _ = writeln!(
            out,
            "  {f} c={}: mix {:.1} req/s; {} alone {} ({}); {} alone {}; expected from the parts {} ({}){}",
            m.concurrency,
            m.requests_per_s,
            m.baseline_suite,
            opt(m.baseline_requests_per_s, ""),
            signed(m.change_pct),
            m.other_suite,
            opt(m.other_requests_per_s, ""),
            opt(m.expected_requests_per_s, ""),
            signed(m.vs_expected_pct),
            if m.disturbed { " ~ disturbed" } else { "" },
        );
    }
}

fn signed(x: Option<f64>) -> String {
    x.map(|v| format!("{v:+.1}%")).unwrap_or_else(|| "-".into())
}

fn refusals(out: &mut String, refused: &[Refusal]) {
    if refused.is_empty() {
        return;
    }
    out.push('\n');
    for r in refused {
        let f = match r.content.as_str() {
            "random" => size_label(r.file_size),
            c => c.to_string(),
        };
        let _ = writeln!(
            out,
            "{} {} {f} c={}: {}",
            r.kind, r.suite, r.concurrency, r.reason
        );
    }
}

impl Exporter for Json {
    fn render(&self, report: &TlsReport) -> String {
        let mut s = serde_json::to_string_pretty(report)
            .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
        s.push('\n');
        s
    }
}

const COLUMNS: &[&str] = &[
    "workload",
    "suite",
    "protocol",
    "negotiated",
    "generator",
    "handshake",
    "cert",
    "content",
    "file_size",
    "concurrency",
    "duration_s",
    "wall_s",
    "requests",
    "errors",
    "bytes",
    "requests_per_s",
    "throughput_bps",
    "latency_p50_ms",
    "latency_p90_ms",
    "latency_p99_ms",
    "latency_p999_ms",
    "latency_max_ms",
    "server_requests",
    "server_bytes",
    "server_connections",
    "negotiated_requests",
    "server_cpu_s",
    "server_cpu_user_s",
    "server_cpu_sys_s",
    "server_cpu_pct",
    "client_cpu_s",
    "client_cpu_user_s",
    "client_cpu_sys_s",
    "client_cpu_pct",
    "generator_bound",
    "others_cpu_pct",
    "disturbed",
    "cpu_s_per_gb",
    "cpu_ms_per_request",
    "ports",
    "mix",
    "notes",
    "run_id",
];

/// One row per record with raw values (CSV).
pub fn records_table(records: &[&TlsRecord]) -> Grid {
    let mut t = Grid::new("", COLUMNS.iter().map(|c| Column::text(c)).collect());
    {
        for r in records {
            let l = |f: fn(&super::record::Latency) -> f64| {
                r.latency_ms
                    .as_ref()
                    .map(|x| format!("{:.3}", f(x)))
                    .unwrap_or_default()
            };
            let row = [
                r.workload.clone(),
                r.suite.clone(),
                r.protocol.clone(),
                r.negotiated.clone(),
                r.generator.clone(),
                r.handshake.to_string(),
                r.cert.clone(),
                r.content.clone(),
                r.file_size.to_string(),
                r.concurrency.to_string(),
                format!("{}", r.duration_s),
                format!("{:.6}", r.wall_s),
                r.requests.to_string(),
                r.errors.to_string(),
                r.bytes.to_string(),
                format!("{:.2}", r.requests_per_s),
                format!("{:.0}", r.throughput_bps),
                l(|x| x.p50),
                l(|x| x.p90),
                l(|x| x.p99),
                l(|x| x.p999),
                l(|x| x.max),
                r.server_requests.to_string(),
                r.server_bytes.to_string(),
                r.server_connections.to_string(),
                r.negotiated_requests.to_string(),
                format!("{:.4}", r.server_cpu_s),
                format!("{:.4}", r.cpu_user_s.unwrap_or(0.0)),
                format!("{:.4}", r.cpu_sys_s.unwrap_or(0.0)),
                format!("{:.1}", r.server_cpu_pct),
                format!("{:.4}", r.client_cpu_s),
                format!("{:.4}", r.client_cpu_user_s),
                format!("{:.4}", r.client_cpu_sys_s),
                format!("{:.1}", r.client_cpu_pct),
                r.generator_bound.to_string(),
                format!("{:.1}", r.others_cpu_pct),
                r.disturbed.to_string(),
                format!("{:.4}", r.cpu_s_per_gb.unwrap_or(0.0)),
                format!("{:.4}", r.cpu_ms_per_request),
                r.ports
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(";"),
                r.mix
                    .as_ref()
                    .map(|m| {
                        m.iter()
                            .map(|p| {
                                format!("{}={}%:{:.1}req/s", p.suite, p.percent, p.requests_per_s)
                            })
                            .collect::<Vec<_>>()
                            .join(";")
                    })
                    .unwrap_or_default(),
                r.notes.join("; "),
                r.run_id.clone(),
            ];
            t.push(row.to_vec());
        }
    }
    t
}

impl Exporter for Markdown {
    fn render(&self, report: &TlsReport) -> String {
        let mut out = header(report).replace('\n', "  \n");
        out.push('\n');
        let _ = writeln!(
            out,
            "| suite | file | conn | req/s | MB/s | p50 ms | p99 ms | server CPU | generator CPU | server s/GB | server ms/req |"
        );
        let _ = writeln!(
            out,
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        );
        for r in &report.records {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.1} | {} | {} | {} | {:.0}% | {:.0}%{} | {:.3} | {:.3} |",
                suite_label(r),
                file_label(r),
                r.concurrency,
                r.requests_per_s,
                mbps(r.throughput_bps),
                lat(r, |l| l.p50),
                lat(r, |l| l.p99),
                r.server_cpu_pct,
                r.client_cpu_pct,
                if r.generator_bound { " *" } else { "" },
                r.cpu_s_per_gb.unwrap_or(0.0),
                r.cpu_ms_per_request
            );
        }
        let a = &report.analysis;
        if !a.shares.is_empty() {
            let _ = writeln!(
                out,
                "\n| suite | file | s/GB | null s/GB | share | ceiling | share w/o null MAC | cipher alone s/GB |\n|---|---|---:|---:|---:|---:|---:|---:|"
            );
            for s in &a.shares {
                let _ = writeln!(
                    out,
                    "| {} | {} | {:.3} | {:.3} | {} | {} | {} | {} |",
                    s.suite,
                    share_file(s),
                    s.cpu_s_per_gb,
                    s.null_cpu_s_per_gb,
                    pct(s.share),
                    if s.null_costs_more {
                        "n/a".into()
                    } else {
                        format!("{:.2}x", s.ceiling_speedup)
                    },
                    s.share_without_null_mac.map(pct).unwrap_or("-".into()),
                    s.cipher_alone_s_per_gb
                        .map(|c| format!("{c:.3}"))
                        .unwrap_or("-".into())
                );
            }
        }
        let mut tail = String::new();
        mix_lines(&mut tail, a);
        refusals(&mut tail, &report.refused);
        for n in &a.notes {
            let _ = writeln!(tail, "Note: {n}");
        }
        if !tail.is_empty() {
            out.push('\n');
            for l in tail.lines().filter(|l| !l.trim().is_empty()) {
                let _ = writeln!(out, "- {}", l.trim());
            }
        }
        out
    }
}
