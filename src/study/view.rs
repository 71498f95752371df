//! A study's output: `--list`, and its findings as render blocks (terminal, Markdown),
//! one JSON document or one page with the steps' figures.

use super::definition::{Findings, Observed, Opts, Study};
use crate::render::model::Block;
use crate::render::write::{html, json::Json};
use crate::render::{Format, Part};
use serde_json::{json, Value};

/// What a study's findings are written in (`--list` has no page).
pub const FORMATS: &[Format] = &[Format::Table, Format::Markdown, Format::Json, Format::Html];
pub const LIST_FORMATS: &[Format] = &[Format::Table, Format::Markdown, Format::Json];

/// `--list`: each study's question, the original finding and the expected durations: as
/// lines, and the same as one JSON document.
pub fn list(studies: &[Box<dyn Study>], o: &Opts) -> (Vec<String>, Vec<Value>) {
    let mut out = Vec::new();
    let mut doc = Vec::new();
    for s in studies {
        let secs = |quick| {
            let o = Opts {
                quick,
                rounds: super::definition::default_rounds(quick),
                ..o.clone()
            };
            s.steps(&o).iter().map(|s| s.seconds).sum::<f64>()
        };
        let options: serde_json::Map<String, Value> = s
            .options()
            .iter()
            .map(|(o, what)| (o.to_string(), Value::from(*what)))
            .collect();
        doc.push(json!({
            "name": s.name(), "question": s.question(), "original": s.original(),
            "seconds": secs(false).round(), "quick_seconds": secs(true).round(),
            "options": options,
        }));
        out.push(format!("{}: {}", s.name(), s.question()));
        out.push(format!("  original: {}", s.original()));
        out.push(format!(
            "  about {:.0} s, --quick about {:.0} s",
            secs(false),
            secs(true)
        ));
        for (o, what) in s.options() {
            out.push(format!("  {o}: {what}"));
        }
    }
    (out, doc)
}

/// The blocks of a study's report: its tables, then the conclusion and what could not be
/// observed here.
pub fn blocks(study: &dyn Study, o: &Opts, observed: &Observed, f: &Findings) -> Vec<Block> {
    let mut b = first(observed);
    b.extend(head(study, o, f));
    b.extend(conclusion(observed, f));
    b
}

/// What is said first: an interrupted study (its tables hold only what ran) and steps
/// that failed (the study exits 1), each in one line.
pub(crate) fn first(observed: &Observed) -> Vec<Block> {
    let mut lines = Vec::new();
    if !observed.not_run.is_empty() {
        lines.push(format!(
            "INTERRUPTED: steps not run: {}",
            observed.not_run.join(", ")
        ));
    }
    if !observed.failed.is_empty() {
        let steps: Vec<String> = observed
            .failed
            .iter()
            .map(|(tag, why)| format!("{tag} ({why})"))
            .collect();
        lines.push(format!("FAILED: steps: {}", steps.join("; ")));
    }
    if lines.is_empty() {
        Vec::new()
    } else {
        vec![Block::Lines(lines)]
    }
}

/// The study's conclusions, or none when steps did not run: a conclusion drawn from part
/// of the matrix would read as the whole study's.
fn conclusions(observed: &Observed, f: &Findings) -> Vec<String> {
    if observed.not_run.is_empty() {
        f.conclusions.clone()
    } else {
        vec!["No conclusion: the study was interrupted before every step ran (run it again to the end).".into()]
    }
}

/// The heading, the original study's finding and the study's tables.
fn head(study: &dyn Study, o: &Opts, f: &Findings) -> Vec<Block> {
    let mut b = vec![
        Block::Heading(format!(
            "study {}{}: {}",
            study.name(),
            if o.quick { " (--quick)" } else { "" },
            study.question()
        )),
        Block::Lines(vec![format!("Original study: {}", study.original())]),
    ];
    b.extend(f.blocks.iter().cloned());
    b
}

/// The conclusion, then the "Not observable here" section (the study's own reasons and
/// the steps that failed), when there is anything to say there.
fn conclusion(observed: &Observed, f: &Findings) -> Vec<Block> {
    let mut lines = conclusions(observed, f);
    lines.extend(observed.notes.iter().cloned());
    lines.extend(disturbed(observed));
    let mut b = vec![Block::Heading("Conclusion".into()), Block::Lines(lines)];
    let mut missing = f.unobservable.clone();
    missing.extend(
        observed
            .unavailable
            .iter()
            .map(|(tag, why)| format!("{}: {tag}: {why}", super::definition::UNAVAILABLE)),
    );
    if !missing.is_empty() {
        b.push(Block::Heading("Not observable here".into()));
        b.push(Block::Lines(missing));
    }
    b
}

/// A study's findings.
pub struct Report<'a> {
    pub study: &'a dyn Study,
    pub o: &'a Opts,
    pub observed: &'a Observed,
    pub f: &'a Findings,
}

impl Part for Report<'_> {
    fn blocks(&self) -> Vec<Block> {
        blocks(self.study, self.o, self.observed, self.f)
    }

    fn json(&self, out: &mut Json) -> anyhow::Result<()> {
        let (study, o, observed, f) = (self.study, self.o, self.observed, self.f);
        let tables: Vec<_> = f
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::Table(t) => Some(json!({
                    "title": t.title,
                    "columns": t.columns.iter().map(|c| &c.name).collect::<Vec<_>>(),
                    "rows": t.rows,
                    "notes": t.notes,
                })),
                _ => None,
            })
            .collect();
        out.value(&json!({
            "study": study.name(),
            "question": study.question(),
            "original": study.original(),
            "quick": o.quick,
            "tables": tables,
            "interrupted": !observed.not_run.is_empty(),
            "not_run": observed.not_run,
            "conclusions": conclusions(observed, f),
            "notes": observed.notes,
            "not_observable": f.unobservable,
            "failed": observed.failed.iter()
                .map(|(t, w)| json!({"step": t, "why": w})).collect::<Vec<_>>(),
            "not_observed": observed.unavailable.iter()
                .map(|(t, w)| json!({"step": t, "why": w})).collect::<Vec<_>>(),
            "runs": observed.runs.iter()
                .map(|t| json!({"step": t.tag, "run_id": t.run.run_id,
                                "records": t.run.records.len()}))
                .collect::<Vec<_>>(),
        }))
    }

    /// One self-contained page (the report's HTML layer): the tables, each step's figures
    /// drawn from its records, then the conclusion.
    fn html(&self, body: &mut String) -> String {
        let (study, o, observed, f) = (self.study, self.o, self.observed, self.f);
        html::blocks(&first(observed), body);
        html::blocks(&head(study, o, f), body);
        let opts = crate::workloads::table::render_options(None);
        for t in &observed.runs {
            for (workload, figures) in crate::render::document::figures_of(&t.run, &opts) {
                if figures.is_empty() {
                    continue;
                }
                let heading = format!("step {}: {workload} figures", t.tag);
                html::blocks(&[Block::Heading(heading)], body);
                for fig in &figures {
                    html::figure(fig, body);
                }
            }
        }
        html::blocks(&conclusion(observed, f), body);
        format!("cryptobench study {}", study.name())
    }
}

/// The findings in `format`, as a string (the tests read it).
#[cfg(test)]
pub fn render(
    study: &dyn Study,
    o: &Opts,
    observed: &Observed,
    f: &Findings,
    format: Format,
) -> String {
    let mut report = Report {
        study,
        o,
        observed,
        f,
    };
    crate::render::write::string(&mut report, format).unwrap()
}

/// Points that other load disturbed, or whose spread is too wide to trust small
/// differences: said once, with the count, so that a conclusion is read with care.
fn disturbed(o: &Observed) -> Option<String> {
    let mut total = 0;
    let mut bad = 0;
    for t in &o.runs {
        for r in &t.run.records {
            total += 1;
            bad += r.suspect() as usize;
        }
    }
    (bad > 0).then(|| {
        format!(
            "{bad} of {total} points were disturbed by other load or noisy (wide spread): differences under about {:.0}% are not findings here.",
            super::verdict::NOISE_PCT
        )
    })
}
