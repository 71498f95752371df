//! The stack question (`advise --stacks`, and the full advise): which TLS server and
//! library make the most handshakes on one core, and what the best other library buys
//! each server over the system's, in handshakes and in keep-alive throughput.

use super::advice::{Advice, Figure, ANOTHER_LIBRARY};
use super::judge::{compared, limit_verdict, mbit, median_interval, Candidate};
use crate::analyse::compare::ratio_ci;
use crate::record::tls::TlsRecord;

/// The question of the whole stack.
pub const STACKS: &str = "Which TLS server and library handle the most handshakes per core here?";

/// One server on one library over its rounds, and whether the library is the system's.
struct Stack<'a> {
    server: String,
    system: bool,
    c: Candidate<'a, TlsRecord>,
}

fn handshakes(x: f64) -> String {
    format!("{x:.0} handshakes/s")
}

/// "haproxy on AWS-LC 5.12.0", "nginx on the system's OpenSSL 3.0.19".
fn named(r: &TlsRecord) -> Option<(String, String, bool)> {
    let server = r.server.as_ref()?.name.clone();
    let lib = r.tls_lib.as_ref()?;
    // "OpenSSL 3.0.19", "AWS-LC 5.12.0": the version string's first two words.
    let version = lib
        .version
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ");
    let system = lib.name == "system";
    let name = if system {
        format!("{server} on the system's {version}")
    } else {
        format!("{server} on {version}")
    };
    Some((server, name, system))
}

/// The one-thread points of each server and library, handshake or keep-alive, best first.
fn stacks<'a>(tls: &[&'a TlsRecord], handshake: bool) -> Vec<Stack<'a>> {
    let one_core = |r: &&&TlsRecord| {
        r.handshake == handshake
            && r.errors == 0
            && r.server.as_ref().is_some_and(|s| s.threads == 1)
    };
    let mut out: Vec<Stack> = Vec::new();
    for r in tls.iter().filter(one_core) {
        let Some((server, name, system)) = named(r) else {
            continue;
        };
        let value = if handshake {
            r.requests_per_s
        } else {
            r.throughput_bps
        };
        match out.iter_mut().find(|s| s.c.name == name) {
            Some(s) => {
                s.c.values.push(value);
                s.c.records.push(r);
            }
            None => out.push(Stack {
                server,
                system,
                c: Candidate {
                    path: "stacks".into(),
                    name,
                    values: vec![value],
                    records: vec![r],
                },
            }),
        }
    }
    out.sort_by(|a, b| b.c.median().total_cmp(&a.c.median()));
    out
}

/// Per server: its best other library against the system's (both present), best first.
fn per_server<'s, 'a>(all: &'s [Stack<'a>]) -> Vec<(&'s Stack<'a>, &'s Stack<'a>)> {
    let mut out = Vec::new();
    for (i, s) in all.iter().enumerate() {
        if all[..i].iter().any(|x| x.server == s.server) {
            continue;
        }
        let system = all.iter().find(|x| x.server == s.server && x.system);
        let other = all.iter().find(|x| x.server == s.server && !x.system);
        if let (Some(system), Some(other)) = (system, other) {
            out.push((system, other));
        }
    }
    out
}

pub fn verdicts(tls: &[&TlsRecord], a: &mut Advice) {
    let hs = stacks(tls, true);
    if let [first, second, ..] = &hs[..] {
        a.verdicts.push(compared(
            STACKS,
            (&first.c.name, &first.c),
            (&second.c.name, &second.c),
            handshakes,
        ));
    }
    if let Some(top) = hs.first() {
        a.verdicts.push(limit_verdict(
            "What limits the most handshakes per core?",
            &top.c.name,
            &top.c,
            |r| r.limit.as_ref(),
        ));
        a.headline
            .push(handshake_figure("TLS handshakes per core", top));
    }
    let keepalive = stacks(tls, false);
    for (all, what, unit) in [
        (&hs, "handshakes per core", handshakes as fn(f64) -> String),
        (&keepalive, "keep-alive throughput, one core", mbit),
    ] {
        for (system, other) in per_server(all) {
            a.verdicts.push(compared(
                &format!("{ANOTHER_LIBRARY} ({}, {what})", system.server),
                (&system.c.name, &system.c),
                (&other.c.name, &other.c),
                unit,
            ));
        }
    }
    // The row: the system library's figure beside the best stack's, and their ratio.
    if let Some((system, other)) = per_server(&hs).into_iter().next() {
        a.headline.push(handshake_figure(
            "TLS handshakes per core on the system library",
            system,
        ));
        let (ratio, ci) = ratio_ci(&system.c.values, &other.c.values);
        a.headline.push(Figure {
            what: "TLS stack speedup over the system library".into(),
            path: format!("stacks {} / {}", other.c.name, system.c.name),
            value: ratio,
            unit: "x".into(),
            ci: (system.c.values.len() > 1 && other.c.values.len() > 1).then_some(ci),
            limit: None,
        });
    }
}

fn handshake_figure(what: &str, s: &Stack) -> Figure {
    let (value, ci) = median_interval(&s.c.values);
    Figure {
        what: what.into(),
        path: format!("stacks {}", s.c.name),
        value,
        unit: "handshakes/s".into(),
        ci,
        limit: super::judge::middle(&s.c)
            .limit
            .as_ref()
            .map(|l| l.kind.clone()),
    }
}
