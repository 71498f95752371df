//! advise's output: the verdicts, what could not run here and why, and the shared row
//! beside the others given; as blocks (terminal, Markdown), one JSON document, or one
//! page with the steps' figures.

use super::share::{self, Row};
use crate::analyse::advise::Advice;
use crate::render::model::{Block, Column, Table};
use crate::render::write::{html, json::Json};
use crate::render::{Format, Part};
use crate::study::Observed;
use serde_json::json;

pub const FORMATS: &[Format] = &[Format::Table, Format::Markdown, Format::Json, Format::Html];

pub struct Report<'a> {
    pub quick: bool,
    pub observed: &'a Observed,
    pub advice: &'a Advice,
    pub row: &'a Row,
    pub others: &'a [Row],
}

impl Report<'_> {
    /// An interrupted run or steps that broke, said first in one line each (as a study
    /// says them).
    fn first(&self) -> Vec<Block> {
        crate::study::view::first(self.observed)
    }

    fn verdicts(&self) -> Vec<Block> {
        let mut t = Table::new(
            "Each answer from this run's records; a winner only where the 95% interval of the ratio excludes no difference",
            vec![
                Column::text("question"),
                Column::text("answer"),
                Column::text("evidence"),
                Column::text("runs"),
            ],
        );
        for v in &self.advice.verdicts {
            t.push(vec![
                v.question.clone(),
                v.answer.clone(),
                v.evidence.clone(),
                v.runs.join(" "),
            ]);
        }
        let mut b = vec![
            Block::Heading(format!(
                "advise{}: which tunnel, cipher and TLS setup for this box",
                if self.quick { " (--quick)" } else { "" }
            )),
            Block::Table(t),
        ];
        if !self.advice.unavailable.is_empty() {
            b.push(Block::Heading("Not available here".into()));
            b.push(Block::Lines(
                self.advice
                    .unavailable
                    .iter()
                    .map(|u| format!("{}: {}", u.path, u.reason))
                    .collect(),
            ));
        }
        b
    }

    /// This box's row, then the others given with --compare.
    fn rows(&self) -> Vec<Block> {
        let mut all: Vec<&Row> = vec![self.row];
        all.extend(self.others.iter());
        let cols = share::columns(&all);
        let mut t = Table::new(
            if self.others.is_empty() {
                "This box's shared row (advise --share FILE writes it; --compare FILE... puts others beside it)".to_string()
            } else {
                format!("This box (first) beside {} shared rows", self.others.len())
            },
            cols.iter().map(|c| Column::text(c)).collect(),
        );
        for r in &all {
            t.push(share::cells(r, &cols));
        }
        vec![Block::Heading("Shared row".into()), Block::Table(t)]
    }
}

impl Part for Report<'_> {
    fn blocks(&self) -> Vec<Block> {
        let mut b = self.first();
        b.extend(self.verdicts());
        b.extend(self.rows());
        b
    }

    fn json(&self, out: &mut Json) -> anyhow::Result<()> {
        let o = self.observed;
        out.value(&json!({
            "quick": self.quick,
            "verdicts": self.advice.verdicts,
            "unavailable": self.advice.unavailable,
            "share": share::document(self.row),
            "compare": self.others,
            "interrupted": !o.not_run.is_empty(),
            "not_run": o.not_run,
            "failed": o.failed.iter()
                .map(|(t, w)| json!({"step": t, "why": w})).collect::<Vec<_>>(),
            "runs": o.runs.iter()
                .map(|t| json!({"step": t.tag, "run_id": t.run.run_id,
                                "records": t.run.records.len()}))
                .collect::<Vec<_>>(),
        }))
    }

    /// One page: the verdicts, each step's figures drawn from its records, the rows.
    fn html(&self, body: &mut String) -> String {
        html::blocks(&self.first(), body);
        html::blocks(&self.verdicts(), body);
        let opts = crate::workloads::render_options(None);
        for t in &self.observed.runs {
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
        html::blocks(&self.rows(), body);
        "cryptobench advise".into()
    }
}
