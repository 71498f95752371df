//! `cryptobench judge-series` (hidden, for bench/changepoints): series of runs, each run
//! its trials, read as JSON on stdin, judged the three ways cryptobench can: change points
//! over the run medians (`history trend`), each run against the run before (one-baseline
//! `compare`), and each run against the runs before it (`compare history`). The same code
//! as the commands, without a store in between.

use crate::analyse::changepoint::{self, Settings};
use crate::analyse::compare::{ratio_ci, verdict, Verdict};
use crate::analyse::history_gate;
use crate::analyse::stats::median;
use crate::failure::Failure;
use serde::{Deserialize, Serialize};

#[derive(clap::Args)]
pub struct JudgeArgs {
    #[arg(long, default_value_t = 50)]
    pub window: usize,
    #[arg(long, default_value_t = 0.001)]
    pub max_pvalue: f64,
    /// compare's and the gate's threshold, in percent.
    #[arg(long, default_value_t = 5.0)]
    pub threshold: f64,
    /// Runs of history for the gate.
    #[arg(long, default_value_t = 20)]
    pub history: usize,
}

#[derive(Deserialize)]
struct Input {
    /// series[s][run][trial]
    series: Vec<Vec<Vec<f64>>>,
}

#[derive(Serialize)]
struct Judged {
    /// Runs that start a new level (`history trend`).
    change_points: Vec<usize>,
    /// Runs that one-baseline `compare` against the run before calls changed.
    baseline_flags: Vec<usize>,
    /// Runs that `compare history` against the runs before calls changed.
    history_flags: Vec<usize>,
}

pub fn run(args: JudgeArgs) -> Result<i32, Failure> {
    let input: Input = serde_json::from_reader(std::io::stdin().lock()).map_err(|e| {
        Failure::Input(format!(
            "judge-series: stdin is not {{\"series\": [[[trials]]]}}: {e}"
        ))
    })?;
    let settings = Settings {
        window: args.window.max(2),
        max_pvalue: args.max_pvalue,
        ..Settings::default()
    };
    let threshold = args.threshold / 100.0;
    let out: Vec<Judged> = input
        .series
        .iter()
        .map(|runs| {
            let medians: Vec<f64> = runs.iter().map(|t| median(t)).collect();
            let changed = |v: Verdict| v != Verdict::Unchanged;
            Judged {
                change_points: changepoint::detect(&medians, &settings)
                    .change_points
                    .iter()
                    .map(|c| c.index)
                    .collect(),
                baseline_flags: (1..runs.len())
                    .filter(|&k| {
                        let (r, ci) = ratio_ci(&runs[k - 1], &runs[k]);
                        changed(verdict(r, ci, threshold))
                    })
                    .collect(),
                history_flags: (1..runs.len())
                    .filter(|&k| {
                        let past = &medians[k.saturating_sub(args.history)..k];
                        history_gate::judge(past, medians[k], threshold)
                            .is_some_and(|j| changed(j.verdict))
                    })
                    .collect(),
            }
        })
        .collect();
    println!("{}", serde_json::to_string(&out).unwrap_or_default());
    Ok(0)
}
