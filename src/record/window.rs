//! What an end-to-end point's CPU window saw (`vpn`, `tls`, `disk`): each process and
//! thread of the workload, what held the point back, and the CPU shares the rules and the
//! `disturbed` verdict read it by. `analyse::limit` names the limit.

use serde::{Deserialize, Deserializer, Serialize};

/// A thread, a CPU's softirq, a server or the generator counts as saturated from this
/// share of its CPU; every CPU counts as busy from this share of all.
pub const SATURATED_PCT: f64 = 90.0;

/// Other processes' CPU, in percent of the CPUs a point used, from which it is disturbed.
pub const DISTURBED_PCT: f64 = 10.0;

/// Whether others' share of the CPUs (`others_cpu_pct`) disturbed a point.
pub fn disturbed(others_pct: f64) -> bool {
    others_pct >= DISTURBED_PCT
}

/// A thread counts as used from this share of a core.
pub const THREAD_USED_PCT: f64 = 5.0;

/// Every limit kind a vpn or tls point names (docs/vpn.md).
pub const LIMIT_KINDS: [&str; 7] = [
    "thread",
    "softirq",
    "server",
    "generator",
    "cpus",
    "rate_cap",
    "none",
];

/// A point's limit: "thread", "softirq", "server", "generator", "cpus", "rate_cap" or
/// "none", with its evidence in a sentence.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Limit {
    pub kind: String,
    pub evidence: String,
}

impl<'de> Deserialize<'de> for Limit {
    /// Also reads the bare word older `tls --dut` records wrote ("server", "generator",
    /// "neither"), whose evidence was not kept.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Limit, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Wire {
            Now { kind: String, evidence: String },
            Word(String),
        }
        Ok(match Wire::deserialize(d)? {
            Wire::Now { kind, evidence } => Limit { kind, evidence },
            Wire::Word(w) => Limit {
                kind: if w == "neither" {
                    "none".into()
                } else {
                    w.clone()
                },
                evidence: format!("\"{w}\", recorded before cryptobench kept the evidence"),
            },
        })
    }
}

/// One thread's share of a point.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ThreadCpu {
    /// "server" or "client" end of the tunnel, "kernel" for kworkers, or the role of a
    /// workload's process ("fio").
    pub end: String,
    pub pid: i32,
    pub tid: i32,
    pub name: String,
    pub cpu_s: f64,
    /// CPU seconds / transfer seconds x 100: 100 = one core all the time.
    pub cpu_pct: f64,
}

/// One process of the workload (a tunnel end, nginx, fio) over a point.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ProcessCpu {
    pub end: String,
    pub pid: i32,
    pub name: String,
    pub user_s: f64,
    pub sys_s: f64,
    pub cpu_pct: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_old_tls_word_reads_as_a_limit() {
        let old: Limit = serde_json::from_str("\"neither\"").unwrap();
        assert_eq!(old.kind, "none");
        let old: Limit = serde_json::from_str("\"server\"").unwrap();
        assert_eq!(old.kind, "server");
        let now: Limit = serde_json::from_str(r#"{"kind":"softirq","evidence":"CPU 1"}"#).unwrap();
        assert_eq!(now.evidence, "CPU 1");
    }
}
