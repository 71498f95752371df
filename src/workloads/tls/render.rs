//! What the tls report shows, as tables and lines for the shared render layer: the
//! points, what nginx negotiated, the crypto shares against the null suite, the mixes,
//! what was not measured. Layout (terminal, Markdown, CSV) is `render::model`'s.

use crate::analyse::tls::{Analysis, SuiteShare};
use crate::analyse::tls_threads::ThreadScaling;
use crate::record::tls::{Latency, TlsData, TlsRecord};
use crate::record::{Coordinate, Environment, Exclusion};
use crate::render::document::RunView;
use crate::render::model::{Block, Column, Table};
use crate::units::{mbps, size_label};

/// Every block of one run's tls records.
pub fn blocks(run: &RunView<TlsData>, a: &Analysis) -> Vec<Block> {
    let mut out = vec![Block::Lines(header(run.environment()))];
    let recs = &run.records;
    if !recs.is_empty() {
        out.push(Block::Table(points(recs)));
        out.push(Block::Table(negotiated(recs)));
        if let Some(t) = handshakes(recs) {
            out.push(Block::Table(t));
        }
        if let Some(t) = groups(recs) {
            out.push(Block::Table(t));
        }
    }
    if !a.shares.is_empty() {
        out.push(Block::Table(shares(a)));
    }
    if !a.mix.is_empty() {
        out.push(Block::Table(mixes(a)));
    }
    if !a.threads.is_empty() {
        out.push(Block::Table(threads(&a.threads)));
    }
    if !run.exclusions.is_empty() {
        out.push(Block::Table(not_measured(&run.exclusions)));
    }
    let mut lines: Vec<String> = a.notes.iter().map(|n| format!("Note: {n}")).collect();
    if run.interrupted() {
        lines.push("Interrupted: only the finished points are shown.".into());
    }
    if !lines.is_empty() {
        out.push(Block::Lines(lines));
    }
    out
}

fn file_label(content: &str, size: Option<u64>) -> String {
    match (content, size) {
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
        None => {
            let tag = r.server_tag().map(|t| format!("{t} ")).unwrap_or_default();
            let round = match r.round {
                1 => String::new(),
                n => format!(" round {n}"),
            };
            match &r.group {
                Some(g) => format!("{tag}{} {g}{round}", r.suite),
                None => format!("{tag}{}{round}", r.suite),
            }
        }
    }
}

/// `--threads LIST`: each count of a server and library against its 1-thread point.
pub fn threads(rows: &[ThreadScaling]) -> Table {
    let mut t = Table::new(
        "Thread scaling (each count against the same server and library at 1 thread)",
        vec![
            Column::text("server"),
            Column::text("library"),
            Column::text("suite"),
            Column::num("file"),
            Column::num("conn"),
            Column::num("threads"),
            Column::num("req/s"),
            Column::num("per thread"),
            Column::num("efficiency"),
            Column::num("rounds"),
        ],
    );
    let controls = rows.iter().any(|s| s.handshake);
    for s in rows {
        let efficiency = match (s.efficiency, s.efficiency_ci) {
            _ if s.oversubscribed => "no claim".to_string(),
            (Some(e), Some([lo, hi])) => format!("{} [{}, {}]", pct(e), pct(lo), pct(hi)),
            (Some(e), None) => pct(e),
            (None, _) => "-".into(),
        };
        t.push(vec![
            s.server.clone(),
            s.tls_lib.clone(),
            s.suite.clone()
                + match (s.handshake, controls) {
                    (true, _) => " handshakes",
                    (false, true) => " keep-alive",
                    (false, false) => "",
                },
            file_label(&s.content, Some(s.file_size)),
            s.concurrency.to_string(),
            s.threads.to_string(),
            format!("{:.1}", s.requests_per_s),
            format!("{:.1}", s.per_thread),
            efficiency,
            s.rounds.to_string(),
        ]);
    }
    t.notes.push("req/s = the median over rounds (handshakes/s for handshake points); efficiency = req/s at N threads / (N x req/s at 1 thread) of the same round, the median over the rounds with its 95% interval (from 2 rounds: --rounds); no claim = more threads than the server's CPUs, which they share.".into());
    t
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn or_dash(x: Option<String>) -> String {
    x.unwrap_or_else(|| "-".into())
}

fn lat(r: &TlsRecord, f: fn(&Latency) -> f64) -> String {
    or_dash(r.latency_ms.as_ref().map(|l| format!("{:.2}", f(l))))
}

/// Two lines on the bench: versions, certificate, connection mode, time; CPUs.
fn header(env: Option<&Environment>) -> Vec<String> {
    let Some(env) = env else {
        return vec!["(the run's environment line is missing)".into()];
    };
    let crate::record::WorkloadSettings::Tls(set) = &env.settings.workload else {
        return vec!["(the run's tls settings are in a form this version cannot read)".into()];
    };
    let lib = |name: &str| {
        env.libraries
            .iter()
            .find(|l| l.implementation == name)
            .map(|l| l.version.clone())
            .unwrap_or_default()
    };
    // The servers of the run (nginx alone before --server), each with its OpenSSL.
    let servers: Vec<String> = env
        .libraries
        .iter()
        .filter(|l| ["nginx", "haproxy"].contains(&l.implementation.as_str()))
        .map(|l| {
            format!(
                "{} {} ({})",
                l.implementation,
                l.version.trim_start_matches("nginx/"),
                l.details.openssl.as_deref().unwrap_or("")
            )
        })
        .collect();
    let cpus = |c: &[usize]| {
        c.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    vec![
        format!(
            "{}; generator {}; certificate {}; {}; {} s per point",
            servers.join(" and "),
            lib(if set.generator.is_empty() {
                "wrk"
            } else {
                &set.generator
            }),
            set.cert,
            if set.handshake {
                "a new connection and full handshake per request"
            } else {
                "keep-alive"
            },
            set.duration_s
        ),
        format!(
            "Server CPUs {} ({} {}), generator CPUs {}{}",
            cpus(&set.server_cpus),
            set.nginx_workers,
            if servers.iter().all(|s| s.starts_with("nginx ")) {
                "nginx workers"
            } else {
                "workers or threads, unless --threads"
            },
            cpus(&set.generator_cpus),
            if set.pinned {
                " (pinned, disjoint)"
            } else {
                " (shared)"
            }
        ),
    ]
}

/// One row per point; ~ marks a disturbed point, * a generator-bound one.
fn points(recs: &[&TlsRecord]) -> Table {
    let mut t = Table::new(
        "",
        vec![
            Column::text("suite"),
            Column::num("file"),
            Column::num("conn"),
            Column::num("req/s"),
            Column::num("MB/s"),
            Column::num("p50 ms"),
            Column::num("p99 ms"),
            Column::num("server CPU"),
            Column::num("generator CPU"),
            Column::num("server s/GB"),
            Column::num("server ms/req"),
            Column::text("limit"),
        ],
    );
    t.group_by = Some(1);
    // A --handshake run's keep-alive control points, named as such.
    let controls = recs.iter().any(|r| r.handshake);
    for r in recs {
        t.push(vec![
            suite_label(r)
                + if controls && !r.handshake {
                    " keep-alive"
                } else {
                    ""
                },
            file_label(&r.content, Some(r.file_size)),
            r.concurrency.to_string(),
            format!(
                "{:.1}{}",
                r.requests_per_s,
                if r.disturbed { "~" } else { "" }
            ),
            mbps(r.throughput_bps),
            lat(r, |l| l.p50),
            lat(r, |l| l.p99),
            format!("{:.0}%", r.server_cpu_pct),
            format!(
                "{:.0}%{}",
                r.client_cpu_pct,
                if r.generator_bound { "*" } else { "" }
            ),
            format!("{:.3}", r.cpu_s_per_gb.unwrap_or(0.0)),
            format!("{:.3}", r.cpu_ms_per_request),
            r.limit.as_ref().map_or("-".into(), |l| l.kind.clone()),
        ]);
    }
    t.notes.push("MB/s = 10^6 response bytes/s received; server CPU = all nginx workers (user+sys) in % of the server CPUs; server s/GB and ms/req = server CPU per 10^9 bytes sent and per request; limit = what held the point back (server, generator, cpus or none: its evidence is in the record).".into());
    let bound = recs.iter().filter(|r| r.generator_bound).count();
    if bound > 0 {
        t.notes.push(format!(
            "* generator-bound: the load generator used >= 90% of its CPU in {bound} of {} points, so those measure the client as much as the server; CPU per GB and per request stay valid.",
            recs.len()
        ));
    }
    let disturbed = recs.iter().filter(|r| r.disturbed).count();
    if disturbed > 0 {
        t.notes.push(format!(
            "~ disturbed: other processes used >= 10% of the server and generator CPUs in {disturbed} of {} points (up to {:.0}%); rerun on a quiet machine to trust small differences.",
            recs.len(),
            recs.iter().filter_map(|r| r.others_cpu_pct).fold(0.0, f64::max)
        ));
    }
    t
}

/// `--handshake` points beside the public-key operations a handshake makes, timed alone.
fn handshakes(recs: &[&TlsRecord]) -> Option<Table> {
    let with: Vec<_> = recs
        .iter()
        .filter_map(|r| r.handshake_cost.as_ref().map(|h| (r, h)))
        .collect();
    let (_, first) = with.first()?;
    let cols = vec![
        Column::text("suite"),
        Column::num("file"),
        Column::num("conn"),
        Column::num("handshakes/s"),
        Column::num("per server CPU-s"),
        Column::text("signature"),
        Column::num("sign/CPU-s"),
        Column::num("handshake rate"),
        Column::text("key exchange"),
        Column::num("kx/CPU-s"),
        Column::num("handshake rate"),
    ];
    let mut t = Table::new(
        "Handshakes against the server's public-key operations timed alone",
        cols,
    );
    t.group_by = Some(1);
    for (r, h) in &with {
        let mut row = vec![
            suite_label(r),
            file_label(&r.content, Some(r.file_size)),
            r.concurrency.to_string(),
            format!("{:.1}", h.handshakes_per_s),
            format!("{:.1}", h.handshakes_per_server_cpu_s),
        ];
        for sign in [true, false] {
            match h
                .primitives
                .iter()
                .find(|p| (p.direction == "sign") == sign)
            {
                Some(p) => row.extend([
                    p.alg.clone(),
                    format!("{:.1}", p.ops_per_cpu_s),
                    format!("{:.0}%", p.handshake_pct),
                ]),
                None => row.extend(["-".to_string(), "-".into(), "-".into()]),
            }
        }
        t.push(row);
        if let Some(sign) = h.primitives.iter().find(|p| p.direction == "sign") {
            t.notes.push(format!(
                "{} {} x{}: the server's handshake rate is {:.0}% of its {} signing rate ({:.1} handshakes per server CPU-second, {:.1} signatures per CPU-second alone).",
                suite_label(r),
                file_label(&r.content, Some(r.file_size)),
                r.concurrency,
                sign.handshake_pct,
                sign.alg,
                h.handshakes_per_server_cpu_s,
                sign.ops_per_cpu_s
            ));
        }
    }
    t.notes.push(format!(
        "handshakes/s = requests/s with a new connection and full handshake per request; per server CPU-s = handshakes per CPU-second of all nginx workers; sign/CPU-s and kx/CPU-s = that operation alone on the same libcrypto ({}), one thread, per CPU-second; handshake rate = handshakes per server CPU-second in % of it: the share of the server's CPU per handshake that operation would take alone. The key exchange is the group nginx logged for every request of the point ($ssl_curve): X25519 and P-256 as the server's derive with a fresh peer key, X25519MLKEM768 as its encaps (ML-KEM encapsulation, and an X25519 key pair and derive); a point without one group shows the signature only.",
        first.implementation
    ));
    Some(t)
}

/// `--groups`: per group, what a handshake puts on the wire and costs the server.
fn groups(recs: &[&TlsRecord]) -> Option<Table> {
    let with: Vec<_> = recs.iter().filter(|r| r.group.is_some()).collect();
    if with.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "Key-exchange groups (--groups): one full handshake's hellos, and the server's CPU per request",
        vec![
            Column::text("suite"),
            Column::text("group"),
            Column::text("negotiated"),
            Column::num("file"),
            Column::num("conn"),
            Column::num("ClientHello B"),
            Column::num("ServerHello B"),
            Column::num("hellos B"),
            Column::num("req/s"),
            Column::num("srv ms/req"),
        ],
    );
    for r in with {
        let (ch, sh) = (r.client_hello_bytes, r.server_hello_bytes);
        let n = |x: Option<u64>| x.map_or("-".into(), |x| x.to_string());
        t.push(vec![
            r.suite.clone(),
            or_dash(r.group.clone()),
            or_dash(r.negotiated_group.clone()),
            file_label(&r.content, Some(r.file_size)),
            r.concurrency.to_string(),
            n(ch),
            n(sh),
            n(ch.zip(sh).map(|(a, b)| a + b)),
            format!("{:.1}", r.requests_per_s),
            format!("{:.3}", r.cpu_ms_per_request),
        ]);
    }
    t.notes.push("ClientHello B and ServerHello B = the handshake messages of one full handshake by `openssl s_client -groups G -msg` of the same build (4-byte header included); hellos B = both. negotiated = the group s_client reported; nginx's $ssl_curve named it for every request of the point. With --handshake, req/s are handshakes per second and srv ms/req the server's CPU per handshake.".into());
    Some(t)
}

/// What nginx logged as negotiated, once per suite.
fn negotiated(recs: &[&TlsRecord]) -> Table {
    let mut t = Table::new(
        "Negotiated (nginx's log, every request checked):",
        vec![Column::text("suite"), Column::text("negotiated")],
    );
    for r in recs {
        let row = vec![suite_label(r), r.negotiated.clone()];
        if !t.rows.contains(&row) {
            t.push(row);
        }
    }
    t
}

/// One share's row; `sampled`: with the perf-sampled share (--profile) after the file.
fn share_row(s: &SuiteShare, sampled: bool) -> Vec<String> {
    let x = |v: f64| format!("{v:.2}x");
    let mut row = vec![s.suite.clone(), file_label(&s.content, s.file_size)];
    if sampled {
        row.push(or_dash(s.sampled.as_ref().map(|x| {
            format!(
                "{} [{:.0}-{:.0}%]",
                pct(x.share),
                x.ci[0] * 100.0,
                x.ci[1] * 100.0
            )
        })));
    }
    row.extend([
        format!("{:.3}", s.cpu_s_per_gb),
        format!("{:.3}", s.null_cpu_s_per_gb),
        format!("{}{}", pct(s.share), if s.disturbed { "~" } else { "" }),
        if s.null_costs_more {
            "n/a".into()
        } else {
            x(s.ceiling_speedup)
        },
        or_dash(s.share_without_null_mac.map(pct)),
        or_dash(s.ceiling_speedup_without_null_mac.map(x)),
        or_dash(s.cipher_alone_s_per_gb.map(|c| format!("{c:.3}"))),
        or_dash(s.cipher_alone_share.map(pct)),
    ]);
    row
}

/// Crypto share per suite and file (and all files pooled), with what it is made of.
fn shares(a: &Analysis) -> Table {
    let null = a
        .references
        .iter()
        .find(|r| r.suite == "null" || r.suite.ends_with(" null"))
        .map(|r| r.negotiated.clone())
        .unwrap_or_default();
    let mut t = Table::new(
        format!("Crypto share of the server's CPU per GB, against the null suite ({null}) measured in this run:"),
        vec![
            Column::text("suite"),
            Column::num("file"),
            Column::num("s/GB"),
            Column::num("null s/GB"),
            Column::num("share"),
            Column::num("ceiling"),
            Column::num("share w/o null MAC"),
            Column::num("ceiling w/o null MAC"),
            Column::num("cipher alone s/GB"),
            Column::num("alone of CPU"),
        ],
    );
    t.group_by = Some(0);
    let sampled = a.shares.iter().any(|s| s.sampled.is_some());
    t.rows = a.shares.iter().map(|s| share_row(s, sampled)).collect();
    if sampled {
        t.columns.insert(2, Column::num("sampled [95% CI]"));
        t.notes.push("sampled = the crypto share of the nginx workers' cpu-clock samples (perf, --profile): the direct measurement; the columns after it are cross-checks.".into());
    }
    t.notes.push("share = (s/GB(suite) - s/GB(null)) / s/GB(suite); ceiling = 1/(1 - share), the speed-up of a server-bound run if the suite's crypto were free (Amdahl); ~ = from disturbed points.".into());
    if let Some(mac) = a.shares.iter().find_map(|s| s.null_mac_s_per_gb) {
        t.notes.push(format!(
            "w/o null MAC = the same against the null suite minus its own HMAC-SHA1 ({mac:.3} s/GB measured alone): the null cipher still authenticates every record."
        ));
    }
    t.notes.push("cipher alone = the suite's record protection measured alone on the same libcrypto (16 KiB records, one core), s/GB; alone of CPU = alone / s/GB(suite): a bottom-up estimate of the same share.".into());
    let refs: Vec<String> = a
        .references
        .iter()
        .map(|r| {
            format!(
                "{} {}: {:.3} s/GB",
                r.suite,
                file_label(&r.content, r.file_size),
                r.cpu_s_per_gb
            )
        })
        .collect();
    if !refs.is_empty() {
        t.notes.push(format!(
            "References: {} (plain HTTP uses sendfile, so it is not a TLS ceiling).",
            refs.join(", ")
        ));
    }
    t
}

fn signed(x: Option<f64>) -> String {
    or_dash(x.map(|v| format!("{v:+.1}%")))
}

/// Each mixed point against its suites alone and against what the parts predict.
fn mixes(a: &Analysis) -> Table {
    let one = |x: Option<f64>| or_dash(x.map(|v| format!("{v:.1}")));
    let mut t = Table::new(
        format!("Mixed connections (--mix {}):", a.mix[0].mix),
        vec![
            Column::num("file"),
            Column::num("conn"),
            Column::num("mix req/s"),
            Column::text("baseline"),
            Column::num("alone req/s"),
            Column::num("change"),
            Column::text("other"),
            Column::num("other alone req/s"),
            Column::num("expected req/s"),
            Column::num("vs expected"),
        ],
    );
    for m in &a.mix {
        t.push(vec![
            file_label(&m.content, Some(m.file_size)),
            m.concurrency.to_string(),
            format!(
                "{:.1}{}",
                m.requests_per_s,
                if m.disturbed { "~" } else { "" }
            ),
            m.baseline_suite.clone(),
            one(m.baseline_requests_per_s),
            signed(m.change_pct),
            m.other_suite.clone(),
            one(m.other_requests_per_s),
            one(m.expected_requests_per_s),
            signed(m.vs_expected_pct),
        ]);
    }
    t.notes.push("change = mix against the baseline suite alone; expected = the parts' rates alone, weighted by their share of connections; ~ = disturbed.".into());
    t
}

/// Points refused (a check failed) or skipped (not applicable), with the reason.
fn not_measured(excl: &[&Exclusion]) -> Table {
    let mut t = Table::new(
        "Not measured:",
        vec![
            Column::text("kind"),
            Column::text("suite"),
            Column::num("file"),
            Column::num("conn"),
            Column::text("reason"),
        ],
    );
    for e in excl {
        let get = |k: &str| e.point.get(k).cloned().unwrap_or(Coordinate::Null);
        t.push(vec![
            e.kind.name().to_string(),
            get("suite").as_str().unwrap_or("").to_string(),
            file_label(
                get("content").as_str().unwrap_or(""),
                get("file_size").as_u64(),
            ),
            get("concurrency")
                .as_u64()
                .map(|c| c.to_string())
                .unwrap_or_default(),
            e.reason.clone(),
        ]);
    }
    t
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
    "cpu_user_s",
    "cpu_sys_s",
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
    "limit",
];

/// One row per record with raw values (CSV).
pub fn records_table(records: &[&TlsRecord]) -> Table {
    let mut t = Table::new("", COLUMNS.iter().map(|c| Column::text(c)).collect());
    for r in records {
        let l = |f: fn(&Latency) -> f64| {
            r.latency_ms
                .as_ref()
                .map(|x| format!("{:.3}", f(x)))
                .unwrap_or_default()
        };
        let mix = r.mix.as_ref().map(|m| {
            m.iter()
                .map(|p| format!("{}={}%:{:.1}req/s", p.suite, p.percent, p.requests_per_s))
                .collect::<Vec<_>>()
                .join(";")
        });
        t.push(vec![
            r.workload.to_string(),
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
            r.others_cpu_pct.map_or_else(String::new, |x| format!("{x:.1}")),
            r.disturbed.to_string(),
            format!("{:.4}", r.cpu_s_per_gb.unwrap_or(0.0)),
            format!("{:.4}", r.cpu_ms_per_request),
            r.ports
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(";"),
            mix.unwrap_or_default(),
            r.notes.join("; "),
            r.run_id.clone(),
            r.limit.as_ref().map_or(String::new(), |l| l.kind.clone()),
        ]);
    }
    t
}
