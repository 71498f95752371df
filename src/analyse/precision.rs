//! How precise a speed run's points are, said once at the end of the run (the table's
//! last line, the JSON analysis' `precision`): the median of the points' CI half-widths,
//! the noisy points, and why each point stopped.

use crate::measure::adaptive::StopReason;
use crate::record::speed::SpeedRecord;
use serde::Serialize;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Precision {
    pub points: usize,
    /// The median over the points of their median's CI half-width, in percent.
    pub median_ci_pct: Option<f64>,
    pub noisy: usize,
    /// Points that stopped at `--target-ci`.
    pub at_target: usize,
    /// Points whose own budget (`--time`) was spent, short of the target, with no savings
    /// left to lend them.
    pub at_budget: usize,
    /// Points that reached `--max-time` short of the target.
    pub at_max_time: usize,
    pub interrupted: usize,
}

/// The run's precision over its records.
pub fn precision(records: &[&SpeedRecord]) -> Precision {
    let ci: Vec<f64> = records
        .iter()
        .filter_map(|r| r.ci_pct)
        .filter(|c| c.is_finite())
        .collect();
    let stopped = |why: StopReason| {
        records
            .iter()
            .filter(|r| r.stop_reason == Some(why))
            .count()
    };
    Precision {
        points: records.len(),
        median_ci_pct: (!ci.is_empty()).then(|| crate::stats::median(&ci)),
        noisy: records.iter().filter(|r| r.noisy).count(),
        at_target: stopped(StopReason::TargetCi),
        at_budget: stopped(StopReason::Budget),
        at_max_time: stopped(StopReason::MaxTime),
        interrupted: stopped(StopReason::Interrupted),
    }
}

/// The line the table ends with. `target_ci`: the run's `--target-ci`, if known.
pub fn line(p: &Precision, target_ci: Option<f64>) -> Option<String> {
    let ci = p.median_ci_pct?;
    let target = match target_ci {
        Some(t) if t > 0.0 => format!(" (target ±{t}%)"),
        _ => String::new(),
    };
    let mut stops = Vec::new();
    if p.at_target > 0 {
        stops.push(format!("{} at the target", p.at_target));
    }
    if p.at_budget > 0 {
        stops.push(format!(
            "{} at their budget (--time) short of it",
            p.at_budget
        ));
    }
    if p.at_max_time > 0 {
        stops.push(format!("{} at --max-time short of it", p.at_max_time));
    }
    if p.interrupted > 0 {
        stops.push(format!("{} interrupted", p.interrupted));
    }
    let stops = match stops.is_empty() {
        true => String::new(),
        false => format!("; stopped: {}", stops.join(", ")),
    };
    Some(format!(
        "Precision: median CI half-width ±{ci:.2}% over {} points{target}{stops}; {} noisy.",
        p.points, p.noisy
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::record::read::{parse_line, AnyRecord, Line};

    /// The fixture's speed record, as a template.
    fn speed_record() -> SpeedRecord {
        include_str!("../../tests/fixtures/schema1-mixed.jsonl")
            .lines()
            .find_map(|l| match parse_line(l).ok()? {
                Line::Record(r) => match *r {
                    AnyRecord::Speed(r) => Some(r),
                    _ => None,
                },
                _ => None,
            })
            .expect("the fixture has a speed record")
    }

    #[test]
    fn counts_each_stop_and_takes_the_median_ci() {
        let mut recs = Vec::new();
        for (ci, stop, noisy) in [
            (0.4, StopReason::TargetCi, false),
            (0.9, StopReason::TargetCi, false),
            (2.5, StopReason::Budget, false),
            (7.0, StopReason::MaxTime, true),
        ] {
            let mut r = speed_record();
            r.data.ci_pct = Some(ci);
            r.data.stop_reason = Some(stop);
            r.data.noisy = noisy;
            recs.push(r);
        }
        let refs: Vec<&SpeedRecord> = recs.iter().collect();
        let p = precision(&refs);
        assert_eq!(p.median_ci_pct, Some(1.7));
        assert_eq!((p.points, p.noisy), (4, 1));
        assert_eq!((p.at_target, p.at_budget, p.at_max_time), (2, 1, 1));
        let l = line(&p, Some(1.0)).unwrap();
        assert!(l.contains("±1.70% over 4 points (target ±1%)"), "{l}");
        assert!(l.contains("1 at their budget (--time) short of it"), "{l}");
        assert!(line(&precision(&[]), None).is_none());
    }
}
