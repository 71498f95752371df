//! What a suite of vectors found on one path and algorithm: shared by the known-answer
//! gate and `verify`.

use serde::Serialize;
use std::collections::BTreeMap;

/// One vector a path got wrong.
#[derive(Clone, Debug, Serialize)]
pub struct VectorFailure {
    /// Where the vector comes from, e.g. "NIST GCM spec test case 4 (enc)" or
    /// "wycheproof aes_gcm tcId 12".
    pub vector: String,
    /// The vector's own comment (Wycheproof), empty otherwise.
    pub comment: String,
    /// What went wrong.
    pub problem: String,
}

/// What one suite of vectors found on one path and algorithm.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Tally {
    pub passed: usize,
    pub failed: Vec<VectorFailure>,
    /// Vectors this path cannot take, counted per reason.
    pub not_applicable: BTreeMap<String, usize>,
    /// Wycheproof's "acceptable" vectors (either outcome is right), counted in `passed`
    /// and here by their flags and what the path did, e.g. "LowOrderPublic: refused".
    pub acceptable: BTreeMap<String, usize>,
}

impl Tally {
    pub fn pass(&mut self) {
        self.passed += 1;
    }
    pub fn fail(
        &mut self,
        vector: impl Into<String>,
        comment: &str,
        problem: impl std::fmt::Display,
    ) {
        self.failed.push(VectorFailure {
            vector: vector.into(),
            comment: comment.to_string(),
            problem: problem.to_string(),
        });
    }
    /// An acceptable vector: passed, and counted by `what` (its flags and the outcome).
    pub fn acceptable(&mut self, what: impl Into<String>) {
        self.passed += 1;
        *self.acceptable.entry(what.into()).or_default() += 1;
    }
    pub fn not_applicable(&mut self, reason: impl std::fmt::Display) {
        *self.not_applicable.entry(reason.to_string()).or_default() += 1;
    }
    /// Records the outcome of one vector.
    pub fn record(&mut self, vector: impl Into<String>, comment: &str, r: Result<(), String>) {
        match r {
            Ok(()) => self.pass(),
            Err(e) => self.fail(vector, comment, e),
        }
    }
    pub fn not_applicable_count(&self) -> usize {
        self.not_applicable.values().sum()
    }
    /// The first failure as one line, for the gate.
    pub fn first_failure(&self) -> anyhow::Result<()> {
        match self.failed.first() {
            None => Ok(()),
            Some(f) => Err(anyhow::Error::msg(f.line())),
        }
    }
}

impl VectorFailure {
    pub fn line(&self) -> String {
        if self.comment.is_empty() {
            format!("{}: {}", self.vector, self.problem)
        } else {
            format!("{} ({}): {}", self.vector, self.comment, self.problem)
        }
    }
}
