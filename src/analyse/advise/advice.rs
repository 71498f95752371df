//! What `advise` answers with: its verdicts (`Verdict`), the paths it could not measure
//! (`Unavailable`), the headline figures (`Figure`), all of them (`Advice`), the threshold
//! a winner must pass, and the question its library verdicts and the stack question share.

use serde::{Deserialize, Serialize};

/// A ratio within this fraction of 1 is no winner even when its interval excludes 1 (the
/// shared machine's drift between points): the threshold `compare` uses.
pub const THRESHOLD: f64 = 0.05;

/// One answer: the question, the answer in a sentence, the ratio and its 95 % interval
/// where two paths were compared, the figures behind it, and the runs they came from.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Verdict {
    pub question: String,
    pub answer: String,
    pub ratio: Option<f64>,
    pub ci: Option<[f64; 2]>,
    pub evidence: String,
    pub runs: Vec<String>,
}

/// A path that could not be measured here, and why.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Unavailable {
    pub path: String,
    pub reason: String,
}

/// A headline figure for the shared row: the best point of a kind, with its interval and
/// limit.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Figure {
    pub what: String,
    pub path: String,
    pub value: f64,
    pub unit: String,
    pub ci: Option<[f64; 2]>,
    pub limit: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Advice {
    pub verdicts: Vec<Verdict>,
    pub unavailable: Vec<Unavailable>,
    pub headline: Vec<Figure>,
}

/// The question of `library_verdicts`.
pub const ANOTHER_LIBRARY: &str = "Would another crypto library help here?";
