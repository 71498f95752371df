//! The one rule for every study's verdicts: this machine's noise (`NOISE_PCT`), a
//! difference decided at it (`differ`, over `values`), and how a decision is said against
//! the original study's finding (`agreement`, `UNDECIDED`).

use crate::analyse::decide::{decide, Decision, Difference};
use crate::record::Record;

/// Differences within this many percent are this shared machine's noise: no study calls
/// them a finding. The one rule for every study's verdicts and for the note on disturbed
/// points.
pub const NOISE_PCT: f64 = 15.0;

/// What a study says instead of a verdict when a side has one value and so no interval
/// (analyse::decide's CannotDecide), however large the difference.
pub const UNDECIDED: &str = "one round cannot decide: run without --quick";

/// NEW against BASE at this machine's noise (analyse::decide, the one rule).
pub fn differ(base: &[f64], new: &[f64]) -> Difference {
    decide(base, new, NOISE_PCT / 100.0)
}

/// One side's values for [`differ`], as compare takes them: each record's figure when
/// several rounds measured the point, else the one record's trials.
pub fn values<'a, D: 'a>(recs: impl IntoIterator<Item = &'a Record<D>>) -> Vec<f64> {
    let recs: Vec<&Record<D>> = recs.into_iter().collect();
    match &recs[..] {
        [one] if !one.samples_bps.is_empty() => one.samples_bps.clone(),
        several => several.iter().map(|r| r.throughput_bps).collect(),
    }
}

/// What a decision says against study N, which found `found` (Higher or Lower): "as
/// study N found", "the opposite of study N's finding", "no difference beyond the noise,
/// unlike study N", or [`UNDECIDED`].
pub fn agreement(d: Decision, found: Decision, study: u32) -> String {
    match d {
        Decision::CannotDecide => UNDECIDED.into(),
        Decision::NoDifference => {
            format!("no difference beyond this machine's noise (±{NOISE_PCT:.0}%), unlike study {study}")
        }
        d if d == found => format!("as study {study} found"),
        _ => format!("the opposite of study {study}'s finding"),
    }
}
