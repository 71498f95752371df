//! `cryptobench report FILE`: render saved JSON Lines records in any format. It never
//! re-runs anything.

use super::Failure;
use crate::analyse::scaling;
use crate::record::read_json_lines;
use crate::render::{self, Format, Report};
use std::path::Path;

pub fn run(file: &Path, format: Format) -> Result<i32, Failure> {
    let saved = read_json_lines(file).map_err(Failure::Input)?;
    let (envs, mut records) = (saved.environments, saved.records);
    if records.is_empty() && !saved.other_workloads.is_empty() {
        return Err(Failure::Input(format!(
            "{}: holds {} records, and report renders speed records only so far: rerun that workload with --format",
            file.display(),
            saved.other_workloads.join(" and ")
        )));
    }
    let Some(environment) = envs.last().cloned() else {
        return Err(Failure::Input(format!(
            "{}: no environment line: give a file written by `cryptobench speed --output`",
            file.display()
        )));
    };
    scaling::fill_scaling_efficiency(&mut records);
    let records_for_analysis = records.clone();
    let report = Report {
        schema: crate::record::SCHEMA,
        environment,
        records,
        exclusions: Vec::new(),
        unavailable: Vec::new(),
        interrupted: false,
        analysis: crate::analyse::paths::analyse(&records_for_analysis, None),
        show_analysis: true,
    };
    print!("{}", render::exporter(format).render(&report));
    Ok(0)
}
