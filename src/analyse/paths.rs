//! From records to per-path cost models and crossovers. A path is one implementation
//! with its variant (and library build), for one algorithm and direction, on one thread.

use super::crossover::{crossover, Crossover};
use super::model::{Curve, Fit, Fitted};
use crate::algorithms::{Algorithm, Direction};
use crate::record::speed::SpeedRecord as Record;
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct PathFit {
    pub path: String,
    #[serde(rename = "impl")]
    pub implementation: String,
    pub variant: Option<String>,
    pub alg: Algorithm,
    pub direction: Direction,
    #[serde(flatten)]
    pub fit: Fit,
}

#[derive(Clone, Debug, Serialize)]
pub struct PathCrossover {
    pub alg: Algorithm,
    pub direction: Direction,
    pub a: String,
    pub b: String,
    /// Path that is faster below the crossover, or at every size when there is none.
    pub faster_below: String,
    #[serde(flatten)]
    pub crossover: Crossover,
}

impl PathCrossover {
    /// The path that is not `faster_below`: faster above the crossover, or slower at
    /// every size without one.
    pub fn other(&self) -> &str {
        if self.faster_below == self.a {
            &self.b
        } else {
            &self.a
        }
    }

    /// Which path is faster where, naming both: "aws-lc is faster than openssl at every
    /// size measured", "ring is faster below 279 bytes and aws-lc above". Every sentence
    /// of this kind is made here.
    pub fn faster(&self) -> String {
        match self.crossover.size_bytes {
            Some(n) => format!(
                "{} is faster below {} bytes and {} above",
                self.faster_below,
                n.round(),
                self.other()
            ),
            None => format!(
                "{} is faster than {} at every size measured",
                self.faster_below,
                self.other()
            ),
        }
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Analysis {
    pub fits: Vec<PathFit>,
    pub crossovers: Vec<PathCrossover>,
}

pub use crate::units::short_version;

/// The label of a path: the name, the short version when builds of different versions
/// of one library are measured together, and the variant. Implementations (before a run)
/// and records (after it) are labelled by this one rule.
pub fn label(name: &str, version: &str, versions_of_name: usize, variant: Option<&str>) -> String {
    let mut label = name.to_string();
    if versions_of_name > 1 {
        label = format!("{label} {}", short_version(version));
    }
    if let Some(v) = variant {
        label = format!("{label} [{v}]");
    }
    label
}

/// Does `wanted` (from `--crossover`) name this path: its label or its bare name?
pub fn names_path(wanted: &str, label: &str, implementation: &str) -> bool {
    wanted == label || wanted == implementation
}

/// Fits every single-thread path with at least two sizes, and the crossovers between
/// paths of the same algorithm and direction (only `pair` when given).
pub fn analyse(records: &[&Record], pair: Option<(&str, &str)>) -> Analysis {
    // Each path's label, its first record and its curve.
    let mut curves: Vec<(&str, &Record, Curve)> = Vec::new();
    for r in records.iter().copied().filter(|r| r.threads == 1) {
        let label = r.label.as_str();
        match curves
            .iter_mut()
            .find(|(l, f, _)| *l == label && f.alg == r.alg && f.direction == r.direction)
        {
            Some((_, _, c)) => {
                c.sizes.push(r.size as f64);
                c.samples.push(r.samples_bps.clone());
            }
            None => curves.push((
                label,
                r,
                Curve {
                    sizes: vec![r.size as f64],
                    samples: vec![r.samples_bps.clone()],
                },
            )),
        }
    }
    #[cfg(test)]
    tests::ANALYSES.with(|n| n.set(n.get() + 1));
    // One bootstrap per curve, shared by its fit and its crossovers.
    let fitted: Vec<Fitted> = curves
        .iter()
        .enumerate()
        .map(|(i, (_, _, c))| Fitted::new(c, 1000 + i as u64))
        .collect();
    let mut out = Analysis::default();
    for ((label, r, _), f) in curves.iter().zip(&fitted) {
        if let Some(f) = f.fit() {
            out.fits.push(PathFit {
                path: label.to_string(),
                implementation: r.implementation.clone(),
                variant: r.variant.clone(),
                alg: r.alg,
                direction: r.direction,
                fit: f,
            });
        }
    }
    for (i, (la, ra, ca)) in curves.iter().enumerate() {
        for (j, (lb, rb, cb)) in curves.iter().enumerate().skip(i + 1) {
            if ra.alg != rb.alg || ra.direction != rb.direction {
                continue;
            }
            let (first, second) = match pair {
                None => ((la, ra, ca), (lb, rb, cb)),
                Some((x, y)) => {
                    if names_path(x, la, &ra.implementation)
                        && names_path(y, lb, &rb.implementation)
                    {
                        ((la, ra, ca), (lb, rb, cb))
                    } else if names_path(y, la, &ra.implementation)
                        && names_path(x, lb, &rb.implementation)
                    {
                        ((lb, rb, cb), (la, ra, ca))
                    } else {
                        continue;
                    }
                }
            };
            let (first_fit, second_fit) = if std::ptr::eq(first.2, ca) {
                (&fitted[i], &fitted[j])
            } else {
                (&fitted[j], &fitted[i])
            };
            if let Some(c) = crossover(first_fit, second_fit) {
                out.crossovers.push(PathCrossover {
                    alg: ra.alg,
                    direction: ra.direction,
                    a: first.0.to_string(),
                    b: second.0.to_string(),
                    faster_below: if c.faster_below == "a" {
                        first.0.to_string()
                    } else {
                        second.0.to_string()
                    },
                    crossover: c,
                });
            }
        }
    }
    out
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use std::cell::Cell;
    thread_local! {
        /// `analyse` calls on this thread: what the report's tests count.
        pub static ANALYSES: Cell<usize> = const { Cell::new(0) };
    }

    fn crossing(a: &str, b: &str, faster_below: &str, size: Option<f64>) -> PathCrossover {
        PathCrossover {
            alg: Algorithm::Aes128Gcm,
            direction: Direction::Enc,
            a: a.into(),
            b: b.into(),
            faster_below: faster_below.into(),
            crossover: Crossover {
                size_bytes: size,
                bounds: [None, None],
                faster_below: "a",
                measured: [16.0, 16384.0],
                beyond_measured: None,
            },
        }
    }

    /// A sentence that names only the faster path reads as a contradiction beside
    /// another: both are named, whichever of `a` and `b` wins.
    #[test]
    fn which_is_faster_names_both_paths() {
        let s = crossing("openssl", "aws-lc", "aws-lc", None).faster();
        assert_eq!(s, "aws-lc is faster than openssl at every size measured");
        let s = crossing("openssl", "ring", "openssl", None).faster();
        assert_eq!(s, "openssl is faster than ring at every size measured");
        let s = crossing("aws-lc", "ring", "ring", Some(278.6)).faster();
        assert_eq!(s, "ring is faster below 279 bytes and aws-lc above");
    }
}
