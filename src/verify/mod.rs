//! Correctness of every path, as one function set: the known answers and the
//! cross-implementation round trip (the gate `speed` runs before timing), plus
//! Project Wycheproof's vectors (`cryptobench verify`).
//!
//! Each check adds to a [`Tally`]: vectors passed, failures named by their vector, and
//! vectors the path cannot take counted by reason (never dropped).

pub mod wycheproof;

use crate::algorithms::Algorithm;
use crate::impls::{Implementation, Support};
use crate::kat;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Instant;

pub use crate::kat::tally::{Tally, VectorFailure};

/// The suites of vectors, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Suite {
    KnownAnswers,
    Wycheproof,
    RoundTrip,
}

impl Suite {
    /// What `speed` runs before timing: fast, and enough to refuse a wrong path.
    pub const GATE: &'static [Suite] = &[Suite::KnownAnswers, Suite::RoundTrip];
    /// What `cryptobench verify` runs.
    pub const ALL: &'static [Suite] = &[Suite::KnownAnswers, Suite::Wycheproof, Suite::RoundTrip];
}

/// The checks of one path (implementation, with its variant) on one algorithm.
#[derive(Clone, Debug, Serialize)]
pub struct PathCheck {
    /// Index into the implementation list.
    #[serde(skip)]
    pub index: usize,
    pub alg: Algorithm,
    /// The implementation the round trip ran against, if there was one.
    pub reference: Option<String>,
    pub known_answers: Tally,
    pub wycheproof: Option<Tally>,
    /// None when the known answers failed (nothing is compared with a wrong path) or no
    /// other verified implementation offers the algorithm.
    pub round_trip: Option<Tally>,
    pub seconds: f64,
}

impl PathCheck {
    pub fn tallies(&self) -> impl Iterator<Item = &Tally> {
        [
            Some(&self.known_answers),
            self.wycheproof.as_ref(),
            self.round_trip.as_ref(),
        ]
        .into_iter()
        .flatten()
    }
    pub fn passed(&self) -> usize {
        self.tallies().map(|t| t.passed).sum()
    }
    pub fn failures(&self) -> impl Iterator<Item = &VectorFailure> {
        self.tallies().flat_map(|t| t.failed.iter())
    }
    pub fn not_applicable(&self) -> usize {
        self.tallies().map(Tally::not_applicable_count).sum()
    }
}

/// Preferred second implementations for the round trip, most independent first.
const REFERENCES: &[&str] = &[
    "rustcrypto",
    "openssl",
    "aws-lc",
    "ring",
    "libsodium",
    "boringssl",
];

/// Runs `suites` on every selected implementation that offers each algorithm. The known
/// answers of every implementation offering an algorithm run first, so that the round
/// trip's reference (see [`REFERENCES`]) has itself been verified. Returns the checks and
/// the (index, algorithm, reason) of the pairs not offered.
pub fn check_paths(
    impls: &[Box<dyn Implementation>],
    selected: &[usize],
    algs: &[Algorithm],
    suites: &[Suite],
) -> (Vec<PathCheck>, Vec<(usize, Algorithm, String)>) {
    let mut checks = Vec::new();
    let mut not_offered = Vec::new();
    for &alg in algs {
        let kat_of = |j: usize| -> (Tally, f64) {
            let t0 = Instant::now();
            let mut t = Tally::default();
            kat::check_known_answers(impls[j].as_ref(), alg, &mut t);
            (t, t0.elapsed().as_secs_f64())
        };
        let mut kat_ok: BTreeMap<usize, bool> = BTreeMap::new();
        let mut selected_kats = BTreeMap::new();
        for &i in selected {
            if impls[i].support(alg) == Support::Yes {
                let (t, s) = kat_of(i);
                kat_ok.insert(i, t.failed.is_empty());
                selected_kats.insert(i, (t, s));
            }
        }
        for (j, imp) in impls.iter().enumerate() {
            if !kat_ok.contains_key(&j)
                && REFERENCES.contains(&imp.name())
                && imp.support(alg) == Support::Yes
            {
                kat_ok.insert(j, kat_of(j).0.failed.is_empty());
            }
        }
        for &i in selected {
            let imp = impls[i].as_ref();
            if let Support::No(reason) = imp.support(alg) {
                not_offered.push((i, alg, reason));
                continue;
            }
            let (known_answers, kat_s) = selected_kats.remove(&i).unwrap_or_default();
            let t0 = Instant::now();
            let wycheproof = if suites.contains(&Suite::Wycheproof) {
                wycheproof::check(imp, alg)
            } else {
                None
            };
            let reference = REFERENCES.iter().find_map(|name| {
                impls
                    .iter()
                    .enumerate()
                    .find(|(j, r)| *j != i && r.name() == *name && kat_ok.get(j) == Some(&true))
                    .map(|(_, r)| r.as_ref())
            });
            let round_trip = match reference {
                Some(r)
                    if suites.contains(&Suite::RoundTrip) && known_answers.failed.is_empty() =>
                {
                    let mut t = Tally::default();
                    kat::check_round_trip(imp, r, alg, &mut t);
                    Some(t)
                }
                _ => None,
            };
            checks.push(PathCheck {
                index: i,
                alg,
                reference: reference
                    .filter(|_| round_trip.is_some())
                    .map(|r| r.name().to_string()),
                known_answers,
                wycheproof,
                round_trip,
                seconds: kat_s + t0.elapsed().as_secs_f64(),
            });
        }
    }
    (checks, not_offered)
}

#[cfg(test)]
mod tests;
