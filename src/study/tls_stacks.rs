//! Study 6: HAProxy's users' comparison of TLS stacks in one command: each server on each
//! library built here, at one thread and across the thread counts, full handshakes and
//! their keep-alive controls, the crypto share per library where perf samples, and what
//! another library buys each server (the verdicts `advise --stacks` gives).

use super::definition::{argv, thread_counts, Action, Findings, Observed, Opts, Step, Study};
use crate::analyse::advise::{stacks, Advice};
use crate::analyse::share::pooled_crypto;
use crate::analyse::stats::median;
use crate::record::tls::TlsRecord;
use crate::render::model::{Block, Column, Table};
use crate::workloads::tls::tls_lib;

pub struct TlsStacks;

/// The tag of the step of one server.
fn tag(server: &str) -> String {
    format!("stack {server}")
}

const SERVERS: [&str; 2] = ["haproxy", "nginx"];

impl Study for TlsStacks {
    fn name(&self) -> &'static str {
        "tls-stacks"
    }
    fn question(&self) -> &'static str {
        "which TLS server and library make the most handshakes per core here, and how do they scale with threads?"
    }
    fn original(&self) -> &'static str {
        "HAProxy's users: on one core every library ties; with threads OpenSSL 3.0 collapses (openssl#20286: 224 threads, 1.1.1 44k connections/s, 3.0.8 10-15k, wolfSSL 120k); HAProxy 3.2 on AWS-LC makes about 65% more new connections per second than on OpenSSL 3.0 (p95 at saturation 11.2 against 23.6 ms); keep-alive ties"
    }
    fn steps(&self, o: &Opts) -> Vec<Step> {
        let (time, profile) = if o.quick {
            ("1", Vec::new())
        } else {
            ("3", o.profile_flag())
        };
        // The server gets the CPUs the generator leaves (half, at least one); HAProxy's
        // threads share one process (where its users saw locks), nginx's workers are
        // processes, so one is its per-core figure.
        let threads: Vec<String> = thread_counts((o.cores / 2).max(1) * 2)
            .iter()
            .map(|n| n.to_string())
            .collect();
        let threads = threads.join(",");
        stack_steps(
            &|server| tag(server),
            &threads,
            &o.rounds.to_string(),
            time,
            &profile,
            &tls_lib::found(),
        )
    }
    fn analyse(&self, o: &Observed) -> Findings {
        analyse(o)
    }
}

/// One tls step per server (HAProxy, then nginx): every library built here that the
/// server can load, full handshakes with their keep-alive controls, 4 KiB, 10 connections,
/// in rounds; HAProxy at `haproxy_threads`, nginx at one worker; `profile` is `--profile`
/// or nothing (a sampled point runs twice); `libs`: the libraries built where the servers
/// run (`tls_lib::found()`, or a DUT's probe). `advise --stacks` runs the same steps.
pub fn stack_steps(
    tag: &dyn Fn(&str) -> String,
    haproxy_threads: &str,
    rounds: &str,
    time: &str,
    profile: &[String],
    libs: &[tls_lib::LibName],
) -> Vec<Step> {
    let per_point = time.parse::<f64>().unwrap_or(3.0) + 1.5;
    let n_rounds = rounds.parse::<f64>().unwrap_or(1.0);
    SERVERS
        .into_iter()
        .filter_map(|server| {
            let on: Vec<&str> = libs
                .iter()
                .filter(|l| l.refusal(server).is_none())
                .map(|l| l.name())
                .collect();
            if on.is_empty() {
                return None;
            }
            let threads = if server == "haproxy" {
                haproxy_threads
            } else {
                "1"
            };
            let mut tls = argv(&[
                "tls",
                "--server",
                server,
                "--tls-lib",
                &on.join(","),
                "--threads",
                threads,
                "--handshake",
                "--rounds",
                rounds,
                "--suites",
                "aes128gcm",
                "--files",
                "4k",
                "--concurrency",
                "10",
                "--time",
                time,
            ]);
            tls.extend_from_slice(profile);
            let points = (on.len() * threads.split(',').count() * 2) as f64 * n_rounds;
            Some(Step {
                tag: tag(server),
                seconds: points * per_point * (1.0 + profile.len() as f64),
                action: Action::Workload(tls),
            })
        })
        .collect()
}

fn analyse(o: &Observed) -> Findings {
    let recs: Vec<&TlsRecord> = SERVERS.iter().flat_map(|s| o.tls(&tag(s))).collect();
    let mut f = Findings::default();
    for s in SERVERS {
        if let Some(why) = o.failure(&tag(s)) {
            f.unobservable.push(format!("{s}: {why}"));
        }
    }
    if recs.is_empty() {
        f.conclusions
            .push("nothing measured: no server ran (see above)".into());
        return f;
    }
    f.blocks.push(Block::Table(per_core(&recs)));
    let owned: Vec<TlsRecord> = recs.iter().map(|r| (*r).clone()).collect();
    let sweep = crate::analyse::tls_threads::sweep(&owned);
    if !sweep.is_empty() {
        f.blocks
            .push(Block::Table(crate::workloads::tls::render::threads(&sweep)));
    }
    let mut advice = Advice::default();
    stacks::verdicts(&recs, &mut advice);
    for v in &advice.verdicts {
        f.conclusions.push(format!("{} {}", v.question, v.answer));
    }
    let cpus = recs.iter().map(|r| r.server_cpus.len()).min().unwrap_or(0);
    let claimed = sweep.iter().any(|s| s.efficiency.is_some());
    if !claimed {
        f.unobservable.push(format!(
            "thread scaling: the server had {cpus} CPU(s) here, so no thread count beyond it is a claim; the lock contention HAProxy's users saw needs many cores: run `cryptobench study tls-stacks --dut root@SERVER` on a bigger machine"
        ));
    } else if cpus < 16 {
        f.unobservable.push(format!(
            "lock contention: the server had {cpus} CPUs here; HAProxy's users saw OpenSSL 3.0 collapse at tens to hundreds of threads: run `cryptobench study tls-stacks --dut root@SERVER` on a bigger machine"
        ));
    }
    f
}

/// Each server on each library at one thread: its handshakes, their latency and cost, the
/// keep-alive control, and the crypto share where perf sampled.
fn per_core(recs: &[&TlsRecord]) -> Table {
    let mut t = Table::new(
        "Each server and library on one core (medians over the rounds)",
        vec![
            Column::text("server"),
            Column::text("library"),
            Column::num("handshakes/s"),
            Column::num("p50 ms"),
            Column::num("p99 ms"),
            Column::num("server CPU ms/handshake"),
            Column::num("keep-alive MB/s"),
            Column::text("crypto share (sampled)"),
            Column::num("rounds"),
        ],
    );
    let mut seen: Vec<(String, String)> = Vec::new();
    for r in recs {
        let (Some(s), Some(l)) = (&r.server, &r.tls_lib) else {
            continue;
        };
        let key = (s.name.clone(), l.name.clone());
        if s.threads != 1 || seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let same = |hs: bool| -> Vec<&TlsRecord> {
            recs.iter()
                .copied()
                .filter(|x| {
                    x.handshake == hs
                        && x.server
                            .as_ref()
                            .is_some_and(|y| y.name == s.name && y.threads == 1)
                        && x.tls_lib.as_ref().is_some_and(|y| y.name == l.name)
                })
                .collect()
        };
        let (hs, ka) = (same(true), same(false));
        let med = |rs: &[&TlsRecord], f: &dyn Fn(&TlsRecord) -> Option<f64>| {
            let v: Vec<f64> = rs.iter().filter_map(|r| f(r)).collect();
            (!v.is_empty()).then(|| median(&v))
        };
        let num = |x: Option<f64>, digits: usize| x.map_or("-".into(), |x| format!("{x:.digits$}"));
        let share = pooled_crypto(hs.iter().filter_map(|r| r.profile.as_deref()))
            .map_or("-".into(), |s| format!("{:.0}%", s.share * 100.0));
        t.push(vec![
            s.name.clone(),
            format!("{} ({})", l.name, l.version),
            num(med(&hs, &|r| Some(r.requests_per_s)), 1),
            num(med(&hs, &|r| r.handshake_ms.as_ref().map(|h| h.p50)), 2),
            num(med(&hs, &|r| r.handshake_ms.as_ref().map(|h| h.p99)), 2),
            num(med(&hs, &|r| r.server_cpu_per_handshake_ms), 3),
            num(med(&ka, &|r| Some(r.throughput_bps / 1e6)), 1),
            share,
            hs.len().to_string(),
        ]);
    }
    // HAProxy on AWS-LC is HAProxy 3.0 built for it; Debian's is 2.6: say so where it differs.
    for server in SERVERS {
        let mut versions: Vec<String> = recs
            .iter()
            .filter_map(|r| r.server.as_ref().filter(|s| s.name == server))
            .map(|s| s.version.clone())
            .collect();
        versions.sort();
        versions.dedup();
        if versions.len() > 1 {
            t.notes.push(format!(
                "{server} is not the same build on every library ({}): part of a difference between them may be the server's own",
                versions.join(", ")
            ));
        }
    }
    t.notes.push("handshakes/s = full handshakes (a new connection per request) per second on one server thread, TLS_AES_128_GCM_SHA256, a 4 KiB file, 10 connections; p50/p99 = the generator's per-request latency of those connections; keep-alive MB/s = the same server and library with connections kept (the control); crypto share = perf's samples in crypto code over the handshake points (--profile, the full run where perf samples).".into());
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::read::{AnyRecord, Run};
    use crate::study::definition::Tagged;

    #[test]
    fn one_core_figures_and_the_verdicts_come_from_the_records() {
        let mut runs = Vec::new();
        for (server, lib, version, hs) in [
            ("haproxy", "system", "OpenSSL 3.0.19 27 Jan 2026", 600.0),
            ("haproxy", "aws-lc", "AWS-LC 5.12.0", 800.0),
        ] {
            let mut records = Vec::new();
            for (round, d) in [(1, 0.0), (2, 10.0), (3, -10.0)] {
                let mut r = crate::analyse::tls::tests::rec(
                    "TLS_AES_128_GCM_SHA256",
                    4096,
                    10,
                    1.0,
                    1,
                    hs + d,
                );
                r.data.handshake = true;
                r.data.round = round;
                r.label = format!("{lib} {round}");
                r.data.server = Some(crate::record::tls::ServerInfo {
                    name: server.into(),
                    version: "x".into(),
                    threads: 1,
                });
                r.data.tls_lib = Some(crate::record::tls::TlsLib {
                    name: lib.into(),
                    version: version.into(),
                    proof: crate::record::tls::TlsLibProof {
                        process: "haproxy (pid 1)".into(),
                        libcrypto: "/x/libcrypto.so.3".into(),
                        libssl: None,
                    },
                });
                records.push(AnyRecord::Tls(r));
            }
            runs.push(Tagged {
                tag: tag(server),
                run: Run {
                    run_id: lib.into(),
                    records,
                    ..Run::default()
                },
            });
        }
        let o = Observed {
            runs,
            ..Observed::default()
        };
        let f = analyse(&o);
        let c = f.conclusions.join("\n");
        assert!(
            c.contains("haproxy on AWS-LC 5.12.0 is faster than haproxy on the system's OpenSSL 3.0.19 by 1.33x"),
            "{c}"
        );
        assert!(
            f.unobservable.iter().any(|u| u.contains("--dut")),
            "{:?}",
            f.unobservable
        );
        let Block::Table(t) = &f.blocks[0] else {
            panic!("a table first")
        };
        assert_eq!(t.rows.len(), 2, "one row per server and library");
    }
}
