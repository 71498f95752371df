//! Pure functions over tls records: the crypto share per suite against the null-cipher
//! ceiling of the same run, and mixed points against their single-suite runs.

use super::share::{against_null, amdahl_ceiling, pooled_crypto, Share};
use crate::record::tls::{CipherAlone, TlsRecord};
use serde::Serialize;

/// The share of one suite's server CPU per GB that is crypto, against the null suite.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SuiteShare {
    pub suite: String,
    /// "random", "html", "html+gzip"; "all" when pooled over every content.
    pub content: String,
    /// The file size; null when pooled over every file.
    pub file_size: Option<u64>,
    /// Concurrencies where both the suite and null were measured (pooled).
    pub concurrency: Vec<u32>,
    /// Server CPU seconds per 10^9 bytes sent: sum of CPU / sum of bytes over the points.
    pub cpu_s_per_gb: f64,
    /// The null suite's CPU per GB at the same points, weighted by this suite's bytes at
    /// each (the same weights, so that pooling cannot favour either side).
    pub null_cpu_s_per_gb: f64,
    /// (cpu_per_GB(suite) - cpu_per_GB(null)) / cpu_per_GB(suite).
    pub share: f64,
    /// 1 / (1 - share): the speed-up of a server-bound run if this suite's crypto were
    /// free (Amdahl). Below 1 when the null suite cost more.
    pub ceiling_speedup: f64,
    /// The null suite costs more per GB than this suite (its HMAC-SHA1 is not free).
    pub null_costs_more: bool,
    /// The suite's record protection measured alone (same libcrypto), s/GB, and its
    /// fraction of the suite's server CPU per GB.
    pub cipher_alone_s_per_gb: Option<f64>,
    pub cipher_alone_share: Option<f64>,
    /// The null suite's own MAC measured alone, and the share against the null suite with
    /// that MAC taken out: (cpu(suite) - (cpu(null) - mac)) / cpu(suite).
    pub null_mac_s_per_gb: Option<f64>,
    pub share_without_null_mac: Option<f64>,
    pub ceiling_speedup_without_null_mac: Option<f64>,
    /// Some point behind it (the suite's or the null's) was disturbed by other processes.
    pub disturbed: bool,
    /// The crypto share sampled with perf in the nginx workers (--profile), samples of
    /// the suite's points pooled: the direct measurement the other two cross-check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampled: Option<Share>,
}

/// Server CPU per GB of a reference (null, http) at one content and size.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Reference {
    pub suite: String,
    pub negotiated: String,
    pub content: String,
    pub file_size: Option<u64>,
    pub cpu_s_per_gb: f64,
    pub cpu_ms_per_request: f64,
}

/// A mixed point against the single-suite runs at the same file and concurrency.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MixResult {
    pub mix: String,
    pub content: String,
    pub file_size: u64,
    pub concurrency: u32,
    pub requests_per_s: f64,
    /// The suite with the larger share of connections ("all-AES" in study 4).
    pub baseline_suite: String,
    pub baseline_requests_per_s: Option<f64>,
    /// (mix - baseline) / baseline, in percent.
    pub change_pct: Option<f64>,
    pub other_suite: String,
    pub other_requests_per_s: Option<f64>,
    /// What the mix would reach if each request cost what it costs in its own suite's
    /// run: 1 / sum(f_i / r_i), f_i = the part's fraction of the mix's requests.
    pub expected_requests_per_s: Option<f64>,
    /// (mix - expected) / expected, in percent: interference beyond the cost mix.
    pub vs_expected_pct: Option<f64>,
    /// The mix or one of its single-suite points was disturbed by other processes.
    pub disturbed: bool,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Analysis {
    pub shares: Vec<SuiteShare>,
    pub references: Vec<Reference>,
    pub mix: Vec<MixResult>,
    pub cipher_alone: Vec<CipherAlone>,
    /// `--threads LIST` with a 1-thread point: each count against it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<super::tls_threads::ThreadScaling>,
    pub notes: Vec<String>,
}

/// A point's place: its server (when not the default nginx), content, size, concurrency.
fn key(r: &TlsRecord) -> (Option<String>, String, u64, u32) {
    (
        r.server_tag(),
        r.content.clone(),
        r.file_size,
        r.concurrency,
    )
}

/// The suite as the analysis names it: "haproxy 1t TLS_AES_128_GCM_SHA256" for a server
/// other than the default (each server's suites are set against its own null points).
fn named(r: &TlsRecord) -> String {
    match r.server_tag() {
        Some(t) => format!("{t} {}", r.suite),
        None => r.suite.clone(),
    }
}

fn pooled<'a>(rs: impl Iterator<Item = &'a TlsRecord>) -> Option<(f64, f64, u64)> {
    let (mut cpu, mut bytes, mut reqs) = (0.0, 0u64, 0u64);
    for r in rs {
        cpu += r.server_cpu_s;
        bytes += r.server_bytes;
        reqs += r.server_requests;
    }
    (bytes > 0).then(|| (cpu / (bytes as f64 / 1e9), cpu, reqs))
}

fn share_of(suite: f64, null: f64) -> (f64, f64) {
    let share = against_null(suite, null);
    (share, amdahl_ceiling(share))
}

/// Shares of every TLS suite (not http, null or mixes), per content and size and pooled
/// over all of them, with the null suite's points at the same (content, size,
/// concurrency).
pub fn shares(records: &[TlsRecord], alone: &[CipherAlone]) -> (Vec<SuiteShare>, Vec<String>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let null: Vec<&TlsRecord> = records.iter().filter(|r| r.suite == "null").collect();
    let mut suites: Vec<(String, &str)> = Vec::new();
    for r in records {
        let n = named(r);
        if !["null", "http", "mix"].contains(&r.suite.as_str())
            && !suites.iter().any(|(s, _)| *s == n)
        {
            suites.push((n, &r.suite));
        }
    }
    if suites.is_empty() {
        return (out, notes);
    }
    if null.is_empty() {
        notes.push(
            "no null-suite point: the crypto share needs `null` in --suites (it is the ceiling)"
                .into(),
        );
        return (out, notes);
    }
    let null_mac = alone
        .iter()
        .find(|c| c.suite == "null")
        .map(|c| c.cpu_s_per_gb);
    let mut groups: Vec<(String, u64)> = Vec::new();
    for r in records {
        let g = (r.content.clone(), r.file_size);
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    for (s, suite) in &suites {
        let s = s.as_str();
        let alone_s = alone
            .iter()
            .find(|c| c.suite == *suite)
            .map(|c| c.cpu_s_per_gb);
        let mut all_s: Vec<&TlsRecord> = Vec::new();
        let mut all_n: Vec<&TlsRecord> = Vec::new();
        let make = |content: String,
                    file_size: Option<u64>,
                    ss: &[&TlsRecord],
                    nn: &[&TlsRecord]|
         -> Option<SuiteShare> {
            let (cs, _, _) = pooled(ss.iter().copied())?;
            // The null suite's cost for the same bytes at the same points: its CPU per GB
            // at each point, weighted by the suite's bytes there (pooling the null's own
            // bytes would weigh the points differently, and a mix of sizes could then
            // favour either side).
            let mut weighted = 0.0;
            let mut weight = 0u64;
            for r in ss {
                let n = nn.iter().find(|n| key(n) == key(r))?;
                let (per_gb, _, _) = pooled(std::iter::once(*n))?;
                weighted += per_gb * r.server_bytes as f64;
                weight += r.server_bytes;
            }
            let cn = if weight > 0 {
                weighted / weight as f64
            } else {
                return None;
            };
            let (share, ceiling) = share_of(cs, cn);
            let mut conc: Vec<u32> = ss.iter().map(|r| r.concurrency).collect();
            conc.sort_unstable();
            conc.dedup();
            let without = null_mac.map(|m| share_of(cs, (cn - m).max(0.0)));
            Some(SuiteShare {
                suite: s.to_string(),
                content,
                file_size,
                concurrency: conc,
                cpu_s_per_gb: cs,
                null_cpu_s_per_gb: cn,
                share,
                ceiling_speedup: ceiling,
                null_costs_more: cn > cs,
                cipher_alone_s_per_gb: alone_s,
                cipher_alone_share: alone_s.filter(|_| cs > 0.0).map(|a| a / cs),
                null_mac_s_per_gb: null_mac,
                share_without_null_mac: without.map(|w| w.0),
                ceiling_speedup_without_null_mac: without.map(|w| w.1),
                disturbed: ss.iter().chain(nn).any(|r| r.disturbed),
                sampled: pooled_crypto(ss.iter().filter_map(|r| r.profile.as_deref())),
            })
        };
        let mut any = false;
        for (content, size) in &groups {
            let ss: Vec<&TlsRecord> = records
                .iter()
                .filter(|r| named(r) == s && r.content == *content && r.file_size == *size)
                .filter(|r| null.iter().any(|n| key(n) == key(r)))
                .collect();
            let nn: Vec<&TlsRecord> = null
                .iter()
                .copied()
                .filter(|n| ss.iter().any(|r| key(n) == key(r)))
                .collect();
            if let Some(sh) = make(content.clone(), Some(*size), &ss, &nn) {
                out.push(sh);
                any = true;
            }
            all_s.extend(&ss);
            all_n.extend(&nn);
        }
        if !any {
            notes.push(format!(
                "{s}: no point shares a file and concurrency with a null-suite point, so no share"
            ));
            continue;
        }
        if groups.len() > 1 {
            if let Some(sh) = make("all".into(), None, &all_s, &all_n) {
                out.push(sh);
            }
        }
    }
    notes.extend(out.iter().flat_map(disagreements));
    (out, notes)
}

/// Where the null-ceiling or the alone-measured share falls outside the sampled share's
/// 95% interval, and why that is expected.
fn disagreements(s: &SuiteShare) -> Vec<String> {
    let Some(sampled) = &s.sampled else {
        return Vec::new();
    };
    let [lo, hi] = sampled.ci;
    let what = format!(
        "{} {}: sampled crypto {:.1}% [{:.1}-{:.1}%]",
        s.suite,
        s.file_size.map_or("all".to_string(), |f| format!("{f} B")),
        sampled.share * 100.0,
        lo * 100.0,
        hi * 100.0
    );
    let mut out = Vec::new();
    if s.share < lo || s.share > hi {
        out.push(format!(
            "{what} vs null ceiling {:.1}%: {}",
            s.share * 100.0,
            if s.share < lo {
                "the null suite is no free ceiling: it still runs HMAC-SHA1 over every record, so the difference understates the cipher"
            } else {
                "the null suite cost less than the sampled non-crypto work (noise between runs, or a different record/packet pattern)"
            }
        ));
    }
    if let Some(a) = s.cipher_alone_share.filter(|a| *a < lo || *a > hi) {
        out.push(format!(
            "{what} vs alone {:.1}%: {}",
            a * 100.0,
            if a < lo {
                "alone times hot 16 KiB records on a warm cache; in nginx the cipher also pays cache misses on data the kernel just copied, and the sampled share counts the MAC/hash glue too"
            } else {
                "alone times the record protection by itself, with its own cache and clock state; in nginx part of it may sit in the unknown and other-user samples (unnamed glue), so either can be off by a few points"
            }
        ));
    }
    out
}

/// Server CPU per GB and per request of the references (null, http), per content and size.
pub fn references(records: &[TlsRecord]) -> Vec<Reference> {
    let mut out = Vec::new();
    for name in ["null", "http"] {
        let mut groups: Vec<(String, String, u64)> = Vec::new();
        for r in records.iter().filter(|r| r.suite == name) {
            let g = (named(r), r.content.clone(), r.file_size);
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
        for (named_as, content, size) in groups {
            let rs: Vec<&TlsRecord> = records
                .iter()
                .filter(|r| named(r) == named_as && r.content == content && r.file_size == size)
                .collect();
            if let Some((per_gb, cpu, reqs)) = pooled(rs.iter().copied()) {
                out.push(Reference {
                    suite: named_as,
                    negotiated: rs[0].negotiated.clone(),
                    content,
                    file_size: Some(size),
                    cpu_s_per_gb: per_gb,
                    cpu_ms_per_request: if reqs > 0 {
                        cpu * 1e3 / reqs as f64
                    } else {
                        0.0
                    },
                });
            }
        }
    }
    out
}

/// The whole analysis of a run's records: shares, references, mixes, and the notes that
/// explain them. `alone` is each suite's cipher timed in-process during the run.
pub fn analyse(records: &[TlsRecord], alone: Vec<CipherAlone>) -> Analysis {
    let (shares, mut notes) = shares(records, &alone);
    if shares.iter().any(|s| s.null_costs_more) {
        notes.push(
            "the null suite still computes HMAC-SHA1 on every record, which can cost more than an AEAD: where it does, its share is negative; the columns without the null's MAC take that cost out".into(),
        );
    }
    let tls13_shared = records
        .iter()
        .any(|r| r.protocol == "TLSv1.3" && shares.iter().any(|s| s.suite == named(r)));
    if tls13_shared {
        let handshake = records.iter().any(|r| r.handshake);
        notes.push(format!(
            "the null suite is TLS 1.2 (TLS 1.3 has no null cipher here): a TLS 1.3 suite's share also holds the difference between the two record layers{}",
            if handshake {
                " and, with --handshake, between the two handshakes, which dominates"
            } else {
                ""
            }
        ));
    }
    // The mix as it was asked for, from the mixed point's own parts.
    let spec = records.iter().find_map(|r| r.mix.as_ref()).map(|parts| {
        parts
            .iter()
            .map(|p| format!("{}={}%", p.suite, p.percent))
            .collect::<Vec<_>>()
            .join(",")
    });
    Analysis {
        shares,
        references: references(records),
        mix: spec.map(|s| mixes(records, &s)).unwrap_or_default(),
        cipher_alone: alone,
        threads: super::tls_threads::sweep(records),
        notes,
    }
}

/// Every mixed point against the single-suite points of the same run.
pub fn mixes(records: &[TlsRecord], spec: &str) -> Vec<MixResult> {
    let mut out = Vec::new();
    for m in records.iter().filter(|r| r.suite == "mix") {
        let Some(parts) = &m.mix else { continue };
        if parts.len() != 2 {
            continue;
        }
        let find = |suite: &str| {
            records
                .iter()
                .find(|r| r.suite == suite && key(r) == key(m))
        };
        let alone = |suite: &str| find(suite).map(|r| r.requests_per_s);
        let disturbed = m.disturbed
            || parts
                .iter()
                .any(|p| find(&p.suite).is_some_and(|r| r.disturbed));
        let (bi, oi) = if parts[1].percent >= parts[0].percent {
            (1, 0)
        } else {
            (0, 1)
        };
        let base = alone(&parts[bi].suite);
        let other = alone(&parts[oi].suite);
        let total: u64 = parts.iter().map(|p| p.requests).sum();
        let expected = match (base, other) {
            (Some(b), Some(o)) if b > 0.0 && o > 0.0 && total > 0 => {
                let f = |i: usize| parts[i].requests as f64 / total as f64;
                Some(1.0 / (f(bi) / b + f(oi) / o))
            }
            _ => None,
        };
        let pct = |x: f64, of: f64| (x - of) / of * 100.0;
        out.push(MixResult {
            mix: spec.to_string(),
            content: m.content.clone(),
            file_size: m.file_size,
            concurrency: m.concurrency,
            requests_per_s: m.requests_per_s,
            baseline_suite: parts[bi].suite.clone(),
            baseline_requests_per_s: base,
            change_pct: base.filter(|b| *b > 0.0).map(|b| pct(m.requests_per_s, b)),
            other_suite: parts[oi].suite.clone(),
            other_requests_per_s: other,
            expected_requests_per_s: expected,
            vs_expected_pct: expected.map(|e| pct(m.requests_per_s, e)),
            disturbed,
        });
    }
    out
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::record::tls::MixPart;

    pub fn rec(suite: &str, size: u64, conc: u32, cpu: f64, bytes: u64, rps: f64) -> TlsRecord {
        crate::record::read::from_v1(serde_json::json!({
            "kind": "record".to_string(),
            "run_id": "r".to_string(),
            "workload": "tls".to_string(),
            "suite": suite.to_string(),
            "protocol": "TLSv1.3".to_string(),
            "negotiated": format!("TLSv1.3 {suite}"),
            "mix": null,
            "generator": "wrk".to_string(),
            "handshake": false,
            "cert": "rsa2048".to_string(),
            "content": "random".to_string(),
            "file_size": size,
            "concurrency": conc,
            "duration_s": 1.0,
            "wall_s": 1.0,
            "requests": (rps as u64).max(1),
            "errors": 0,
            "bytes": bytes,
            "requests_per_s": rps,
            "throughput_bps": bytes as f64,
            "latency_ms": null,
            "server_requests": (rps as u64).max(1),
            "server_bytes": bytes,
            "server_body_bytes": bytes,
            "server_connections": conc as u64,
            "negotiated_requests": (rps as u64).max(1),
            "server_cpu_s": cpu,
            "server_cpu_user_s": cpu / 2.0,
            "server_cpu_sys_s": cpu / 2.0,
            "server_cpu_pct": cpu * 100.0,
            "server_workers": 1,
            "server_cpus": vec![0],
            "client_cpu_s": 0.5,
            "client_cpu_user_s": 0.25,
            "client_cpu_sys_s": 0.25,
            "client_cpu_pct": 50.0,
            "client_threads": 1,
            "client_cpus": vec![1],
            "generator_bound": false,
            "others_cpu_pct": 0.0,
            "disturbed": false,
            "cpu_s_per_gb": cpu / (bytes as f64 / 1e9),
            "cpu_ms_per_request": cpu * 1e3 / rps,
            "ports": vec![1],
            "notes": [],
        }))
    }

    #[test]
    fn share_and_ceiling_from_known_costs() {
        // Suite: 1.0 s per GB; null: 0.6 s per GB -> share 0.4, ceiling 1/0.6.
        let rs = vec![
            rec("AES", 4096, 1, 0.5, 500_000_000, 100.0),
            rec("AES", 4096, 10, 0.5, 500_000_000, 100.0),
            rec("null", 4096, 1, 0.3, 500_000_000, 100.0),
            rec("null", 4096, 10, 0.3, 500_000_000, 100.0),
            rec("http", 4096, 10, 0.1, 500_000_000, 100.0),
        ];
        let alone = vec![CipherAlone {
            suite: "null".into(),
            algs: vec!["sha1".into()],
            cpu_s_per_gb: 0.2,
            implementation: "x".into(),
            note: None,
        }];
        let (s, notes) = shares(&rs, &alone);
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(s.len(), 1, "one size: no pooled entry");
        let sh = &s[0];
        assert_eq!(sh.suite, "AES");
        assert!((sh.cpu_s_per_gb - 1.0).abs() < 1e-12);
        assert!((sh.null_cpu_s_per_gb - 0.6).abs() < 1e-12);
        assert!((sh.share - 0.4).abs() < 1e-12);
        assert!((sh.ceiling_speedup - 1.0 / 0.6).abs() < 1e-12);
        assert!(!sh.null_costs_more);
        assert_eq!(sh.concurrency, vec![1, 10]);
        // Without the null's MAC (0.2 s/GB) the ceiling is 0.4 s/GB: share 0.6.
        assert!((sh.share_without_null_mac.unwrap() - 0.6).abs() < 1e-12);
        let refs = references(&rs);
        assert_eq!(refs.len(), 2);
        assert!((refs[1].cpu_s_per_gb - 0.2).abs() < 1e-12);
    }

    #[test]
    fn sampled_share_pools_profiles_and_names_the_disagreements() {
        use crate::record::profile::{Profile, ProfileField};
        let field = |k: u64, n: u64| {
            ProfileField::Measured(Profile {
                samples: n,
                event: "cpu-clock".into(),
                idle_samples: 0,
                categories: Default::default(),
                unknown_share: 0.0,
                crypto: Share::of(k, n),
                amdahl_ceiling: 1.0,
                throughput_bps: None,
                flame_graph: None,
            })
        };
        // Suite 1.0 s/GB, null 1.5 s/GB: share -50%; sampled 250 of 1000 = 25%.
        let mut rs = vec![
            rec("AES", 4096, 1, 1.0, 1_000_000_000, 1.0),
            rec("AES", 4096, 10, 1.0, 1_000_000_000, 1.0),
            rec("null", 4096, 1, 1.5, 1_000_000_000, 1.0),
            rec("null", 4096, 10, 1.5, 1_000_000_000, 1.0),
        ];
        rs[0].profile = Some(Box::new(field(100, 400)));
        rs[1].profile = Some(Box::new(field(150, 600)));
        let (s, notes) = shares(&rs, &[]);
        let sampled = s[0].sampled.as_ref().expect("pooled");
        assert_eq!(sampled.samples, 250);
        assert!((sampled.share - 0.25).abs() < 1e-12);
        assert!(sampled.ci[0] < 0.25 && sampled.ci[1] > 0.25);
        assert!(
            notes
                .iter()
                .any(|n| n.contains("null ceiling -50.0%") && n.contains("HMAC-SHA1")),
            "{notes:?}"
        );
        // Within the interval: no note.
        rs[2] = rec("null", 4096, 1, 0.75, 1_000_000_000, 1.0);
        rs[3] = rec("null", 4096, 10, 0.75, 1_000_000_000, 1.0);
        let (_, notes) = shares(&rs, &[]);
        assert!(
            !notes.iter().any(|n| n.contains("null ceiling")),
            "{notes:?}"
        );
    }

    #[test]
    fn pooled_share_per_suite_and_unmatched_points() {
        let rs = vec![
            rec("AES", 4096, 1, 1.0, 1_000_000_000, 1.0),
            rec("AES", 1 << 20, 1, 3.0, 1_000_000_000, 1.0),
            rec("AES", 1 << 20, 100, 9.0, 1_000_000_000, 1.0), // no null at c=100
            rec("null", 4096, 1, 0.5, 1_000_000_000, 1.0),
            rec("null", 1 << 20, 1, 1.5, 1_000_000_000, 1.0),
        ];
        let (s, _) = shares(&rs, &[]);
        assert_eq!(s.len(), 3);
        assert!(
            (s[1].cpu_s_per_gb - 3.0).abs() < 1e-12,
            "c=100 is not matched"
        );
        assert_eq!(s[2].file_size, None);
        assert!((s[2].cpu_s_per_gb - 2.0).abs() < 1e-12);
        assert!((s[2].null_cpu_s_per_gb - 1.0).abs() < 1e-12);
        assert!((s[2].share - 0.5).abs() < 1e-12);
        assert_eq!(s[0].share_without_null_mac, None);
    }

    #[test]
    fn pooling_weighs_the_null_by_the_suites_bytes() {
        // The suite moved 9x more bytes at 1m than at 4k; the null the other way round.
        // Per size the suite costs half the null; pooled it must too.
        let rs = vec![
            rec("AES", 4096, 1, 1.0, 1_000_000_000, 1.0),
            rec("AES", 1 << 20, 1, 0.9, 9_000_000_000, 1.0),
            rec("null", 4096, 1, 18.0, 9_000_000_000, 1.0),
            rec("null", 1 << 20, 1, 0.2, 1_000_000_000, 1.0),
        ];
        let (s, _) = shares(&rs, &[]);
        for sh in &s {
            assert!((sh.share + 1.0).abs() < 1e-9, "{sh:?}");
        }
        assert_eq!(s[2].file_size, None);
        assert!((s[2].cpu_s_per_gb - 0.19).abs() < 1e-12);
        assert!((s[2].null_cpu_s_per_gb - 0.38).abs() < 1e-12);
    }

    #[test]
    fn null_costing_more_is_flagged_and_no_null_is_a_note() {
        let rs = vec![
            rec("AES", 4096, 1, 1.0, 1_000_000_000, 1.0),
            rec("null", 4096, 1, 1.25, 1_000_000_000, 1.0),
        ];
        let (s, _) = shares(&rs, &[]);
        assert!(s[0].null_costs_more);
        assert!((s[0].share + 0.25).abs() < 1e-12);
        let (s, notes) = shares(&rs[..1], &[]);
        assert!(s.is_empty() && notes[0].contains("null"));
    }

    #[test]
    fn mix_against_single_suites() {
        let mut m = rec("mix", 4096, 10, 1.0, 1, 900.0);
        let part = |suite: &str, pct: f64, requests: u64| MixPart {
            suite: suite.into(),
            negotiated: String::new(),
            percent: pct,
            connections: 1,
            requests,
            requests_per_s: requests as f64,
            bytes: 0,
            errors: 0,
            latency_ms: None,
            server_requests: requests,
            port: 1,
        };
        m.mix = Some(vec![part("CHACHA", 10.0, 100), part("AES", 90.0, 800)]);
        let rs = vec![
            rec("CHACHA", 4096, 10, 1.0, 1, 500.0),
            rec("AES", 4096, 10, 1.0, 1, 1000.0),
            m,
        ];
        let r = &mixes(&rs, "chacha=10%,aes=90%")[0];
        assert_eq!(r.baseline_suite, "AES");
        assert!((r.change_pct.unwrap() + 10.0).abs() < 1e-9);
        // f = 1/9 chacha, 8/9 aes: 1 / (1/9/500 + 8/9/1000) = 900.
        assert!((r.expected_requests_per_s.unwrap() - 900.0).abs() < 1e-9);
        assert!(r.vs_expected_pct.unwrap().abs() < 1e-9);
    }
}
