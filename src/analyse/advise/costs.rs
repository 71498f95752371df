//! What a path costs besides its throughput: the CPU seconds a kernel path spends per GB
//! against the same path in user space, and the round trips through a tunnel idle and
//! under its load. Each decided by `decide` over the repeats: a direction only when the
//! interval excludes no difference.

use super::advice::{Unavailable, Verdict, THRESHOLD};
use super::judge::{times, Candidate, CpuPerGb, RunId};
use crate::analyse::decide::{decide, Decision, Difference};
use crate::analyse::stats::median;
use crate::record::vpn::VpnRecord;

/// The interval of a decided difference, as shown after its ratio.
fn interval(d: &Difference) -> String {
    d.ci.map(|[l, h]| format!(" [{}, {}]", times(l), times(h)))
        .unwrap_or_default()
}

/// One side's values of a point: each repeat's, where it has one.
fn values<R>(c: &Candidate<R>, of: impl Fn(&R) -> Option<f64>) -> Vec<f64> {
    c.records
        .iter()
        .filter_map(|r| of(r))
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect()
}

/// The runs of both sides, once each.
fn runs<R: RunId>(a: &Candidate<R>, b: &Candidate<R>) -> Vec<String> {
    a.runs().union(&b.runs()).cloned().collect()
}

/// `high` against `low` (their values), the larger on top so that a decided ratio is above
/// 1; with "cannot decide" when a side has one value.
fn ordered(low: &[f64], high: &[f64]) -> (Difference, bool) {
    let d = decide(low, high, THRESHOLD);
    match d.decision {
        Decision::Lower => (decide(high, low, THRESHOLD), true),
        _ => (d, false),
    }
}

/// Whether a kernel path (DCO, kernel WireGuard, kTLS) spends less CPU per GB than the
/// same path in user space; None where a side recorded no CPU.
pub(super) fn cpu_per_gb<R: RunId + CpuPerGb>(
    question: &str,
    (kname, kernel): (&str, &Candidate<R>),
    (uname, user): (&str, &Candidate<R>),
) -> Option<Verdict> {
    let (k, u) = (values(kernel, R::cpu), values(user, R::cpu));
    if k.is_empty() || u.is_empty() {
        return None;
    }
    let (km, um) = (median(&k), median(&u));
    let evidence = format!(
        "{kname}: {km:.2} CPU s/GB ({} values); {uname}: {um:.2} CPU s/GB ({} values)",
        k.len(),
        u.len()
    );
    // User space over the kernel path: above 1 when the kernel path saves CPU.
    let (d, costs_more) = ordered(&k, &u);
    let answer = match d.decision {
        Decision::CannotDecide => format!(
            "one round cannot decide: {kname} {km:.2} against {uname} {um:.2} CPU s/GB, with no interval (give more rounds)"
        ),
        Decision::NoDifference => format!(
            "no difference beyond the noise in CPU per GB between {kname} and {uname}: {}{}",
            times(d.ratio),
            interval(&d)
        ),
        _ if costs_more => format!(
            "{kname} costs more here, by {:.2} CPU s/GB: {km:.2} against {uname}'s {um:.2}, {}{} of it",
            km - um,
            times(d.ratio),
            interval(&d)
        ),
        _ => format!(
            "{kname} helps here by {:.2} CPU s/GB: {km:.2} against {uname}'s {um:.2}, which takes {}{} of it",
            um - km,
            times(d.ratio),
            interval(&d)
        ),
    };
    Some(Verdict {
        question: question.into(),
        answer,
        ratio: Some(d.ratio),
        ci: d.ci,
        evidence,
        runs: runs(kernel, user),
    })
}

fn list(v: &[f64]) -> String {
    let shown: Vec<String> = v.iter().map(|x| format!("{x:.2}")).collect();
    shown.join(", ")
}

fn idle(r: &VpnRecord) -> Option<f64> {
    r.rtt_idle_ms.as_ref().map(|t| t.p50)
}

fn loaded(r: &VpnRecord) -> Option<f64> {
    r.rtt_loaded_ms.as_ref().map(|t| t.p50)
}

/// Round trips (median of each repeat's probes) through the tunnels' best points: what the
/// load adds to the fastest one's, and which tunnel keeps them lowest under load. Where no
/// point recorded any, one `unavailable` entry says why.
pub(super) fn round_trips(
    best: &[&Candidate<VpnRecord>],
    verdicts: &mut Vec<Verdict>,
    unavailable: &mut Vec<Unavailable>,
) {
    let with: Vec<&&Candidate<VpnRecord>> = best
        .iter()
        .filter(|c| !values(c, loaded).is_empty())
        .collect();
    let Some(top) = with.first() else {
        if !best.is_empty() {
            unavailable.push(Unavailable {
                path: "round trips".into(),
                reason: "no tunnel point recorded them: vpn --dut does not measure them yet; here, irtt is missing (see the vpn run's notes)".into(),
            });
        }
        return;
    };
    let name = |c: &Candidate<VpnRecord>| format!("{} {}", c.path, c.name);
    let (i, l) = (values(top, idle), values(top, loaded));
    if !i.is_empty() {
        let (d, _) = ordered(&i, &l);
        let (im, lm) = (median(&i), median(&l));
        let answer = match d.decision {
            Decision::CannotDecide => format!(
                "one round cannot decide: {im:.2} ms idle, {lm:.2} ms under load, with no interval (give more rounds)"
            ),
            Decision::NoDifference => format!(
                "no difference beyond the noise: {im:.2} ms idle, {lm:.2} ms under load, {}{}",
                times(d.ratio),
                interval(&d)
            ),
            _ if lm >= im => format!(
                "load adds {:.2} ms: {im:.2} ms idle, {lm:.2} ms under load, {}{}",
                lm - im,
                times(d.ratio),
                interval(&d)
            ),
            _ => format!(
                "round trips are shorter under load: {im:.2} ms idle, {lm:.2} ms loaded, {}{}",
                times(d.ratio),
                interval(&d)
            ),
        };
        verdicts.push(Verdict {
            question: format!("Latency under load through {}?", name(top)),
            answer,
            ratio: Some(d.ratio),
            ci: d.ci,
            evidence: format!(
                "each repeat's median round trip: idle {} ms, loaded {} ms",
                list(&i),
                list(&l)
            ),
            runs: top.runs().into_iter().collect(),
        });
    }
    // The two tunnels with the lowest round trips under load.
    let mut by_rtt: Vec<(&Candidate<VpnRecord>, Vec<f64>)> =
        with.iter().map(|c| (**c, values(c, loaded))).collect();
    by_rtt.sort_by(|a, b| median(&a.1).total_cmp(&median(&b.1)));
    if let [(low, lv), (high, hv), ..] = &by_rtt[..] {
        let d = decide(lv, hv, THRESHOLD);
        let (ln, hn) = (name(low), name(high));
        let (lm, hm) = (median(lv), median(hv));
        let answer = match d.decision {
            Decision::CannotDecide => format!(
                "one round cannot decide: {ln} {lm:.2} ms, {hn} {hm:.2} ms, with no interval (give more rounds)"
            ),
            Decision::Higher => format!(
                "{ln} keeps round trips lower under load than {hn}: {lm:.2} ms against {hm:.2} ms, {}{}",
                times(d.ratio),
                interval(&d)
            ),
            _ => format!(
                "no difference beyond the noise between {ln} and {hn} under load: {lm:.2} ms against {hm:.2} ms, {}{}",
                times(d.ratio),
                interval(&d)
            ),
        };
        verdicts.push(Verdict {
            question: "Which tunnel keeps round trips lowest under load?".into(),
            answer,
            ratio: Some(d.ratio),
            ci: d.ci,
            evidence: format!(
                "{ln}: {lm:.2} ms ({} values); {hn}: {hm:.2} ms ({} values)",
                lv.len(),
                hv.len()
            ),
            runs: runs(low, high),
        });
    }
}
