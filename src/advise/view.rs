//! advise's output: the verdicts, what could not run here and why, and the shared row
//! beside the others given; as blocks (terminal, Markdown), one JSON document, or one
//! page with the steps' figures.

use super::share::{self, Row};
use crate::analyse::advise::Advice;
use crate::render::model::{Block, Column, Table};
use crate::render::write::{html, json::Json, table};
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

    /// Each answer a block of labelled lines, 100 columns wide: its cells are sentences.
    fn terminal(&self) -> Vec<Block> {
        table::narrow(self.blocks())
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
        let opts = crate::workloads::table::render_options(None);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyse::advise::advice::Verdict;
    use crate::analyse::advise::{Figure, Unavailable};

    fn verdict(question: &str, answer: &str, evidence: &str, runs: &[&str]) -> Verdict {
        Verdict {
            question: question.into(),
            answer: answer.into(),
            ratio: Some(1.5),
            ci: Some([1.3, 1.7]),
            evidence: evidence.into(),
            runs: runs.iter().map(|r| r.to_string()).collect(),
        }
    }

    fn figure(what: &str, path: &str, value: f64, unit: &str, limit: &str) -> Figure {
        Figure {
            what: what.into(),
            path: path.into(),
            value,
            unit: unit.into(),
            ci: Some([value * 0.95, value * 1.05]),
            limit: Some(limit.into()),
        }
    }

    fn row(device: &str, figures: Vec<Figure>) -> Row {
        Row {
            kind: "cryptobench-advise-share".into(),
            schema: 1,
            device: device.into(),
            cpu: "AMD EPYC 7B13 64-Core Processor".into(),
            cores: 2,
            arch: "x86_64".into(),
            os: "Debian GNU/Linux 12 (bookworm)".into(),
            kernel: "6.1.0-28-cloud-amd64".into(),
            cryptobench: "0.1.0".into(),
            figures,
        }
    }

    /// What a quick run on a 2-core VM answers, its sentences as analyse::advise makes them.
    fn advice() -> Advice {
        let runs = ["1795407985-25173", "1795408011-25290", "1795408101-25377"];
        Advice {
            verdicts: vec![
                verdict(
                    "Which tunnel is fastest here?",
                    "wireguard-go CHACHA20-POLY1305 is faster than openvpn AES-256-GCM by 1.52x [1.31x, 1.74x]",
                    "wireguard-go CHACHA20-POLY1305: 1934 Mbit/s (3 values); openvpn AES-256-GCM: 1272 Mbit/s (3 values)",
                    &runs[1..],
                ),
                verdict(
                    "Which cipher for openvpn?",
                    "no difference beyond the noise between AES-256-GCM and CHACHA20-POLY1305: 1.03x [0.91x, 1.17x]",
                    "AES-256-GCM: 1272 Mbit/s (3 values); CHACHA20-POLY1305: 1235 Mbit/s (3 values)",
                    &runs[1..2],
                ),
                verdict(
                    "What limits the fastest tunnel?",
                    "wireguard-go CHACHA20-POLY1305: every CPU was busy: tunnel, load and kernel shared them, not the crypto alone",
                    "all 2 CPU(s) were 97% busy: tunnel, load and kernel shared them; thread wireguard-go used 71% of one core, iperf3 used 54%, CPU 1 spent 22% in softirq",
                    &runs[1..2],
                ),
                verdict(
                    "AES-GCM or ChaCha20-Poly1305 on this CPU (1400 B, one core)?",
                    "openssl aes-128-gcm is faster than ring chacha20-poly1305 by 2.41x [2.30x, 2.52x]",
                    "openssl aes-128-gcm: 31870 Mbit/s (5 values); ring chacha20-poly1305: 13224 Mbit/s (5 values)",
                    &runs[..1],
                ),
            ],
            unavailable: vec![
                Unavailable {
                    path: "wireguard-kernel".into(),
                    reason: "the wireguard module is not loaded and cannot be here (no CAP_SYS_MODULE in this container): load it as root with modprobe wireguard, or run advise on the host".into(),
                },
                Unavailable {
                    path: "ktls".into(),
                    reason: "the tls module is not loaded".into(),
                },
            ],
            headline: Vec::new(),
        }
    }

    fn render(format: Format) -> (String, Advice) {
        let (observed, advice) = (Observed::default(), advice());
        let figures = vec![
            figure(
                "tunnel throughput",
                "wireguard-go CHACHA20-POLY1305",
                1934.0,
                "Mbit/s",
                "cpus",
            ),
            figure(
                "packets per second at 64 B",
                "wireguard-go CHACHA20-POLY1305",
                181_000.0,
                "pps",
                "thread",
            ),
            figure(
                "cipher speed at 1400 B",
                "speed openssl aes-128-gcm",
                31870.0,
                "Mbit/s",
                "none",
            ),
        ];
        let others = [row("Raspberry Pi 4 Model B Rev 1.4", figures[..1].to_vec())];
        let mut report = Report {
            quick: true,
            observed: &observed,
            advice: &advice,
            row: &row("QEMU Standard PC (Q35 + ICH9, 2009)", figures),
            others: &others,
        };
        let out = crate::render::write::string(&mut report, format).unwrap();
        (out, advice)
    }

    /// The answer a user came for once sat in a table 300 columns wide: in the
    /// terminal no line is over 100 columns; each question is a block, its answer, its
    /// evidence and its runs after it in that order, each on its own labelled line; a
    /// long line is broken between words only.
    #[test]
    fn the_terminal_shows_each_answer_as_a_block_within_100_columns() {
        let (out, advice) = render(Format::Table);
        for l in out.lines() {
            assert!(
                l.chars().count() <= 100,
                "{} columns: {l}\n{out}",
                l.chars().count()
            );
        }
        let lines: Vec<&str> = out.lines().collect();
        let at = |from: usize, start: &str| {
            from + lines[from..]
                .iter()
                .position(|l| l.starts_with(start))
                .unwrap_or_else(|| panic!("no line {start:?} after line {from}:\n{out}"))
        };
        let mut next = 0;
        for v in &advice.verdicts {
            let q = at(next, &v.question);
            let (a, e, r) = (
                at(q, "  answer  "),
                at(q, "  evidence  "),
                at(q, "  runs  "),
            );
            assert!(q < a && a < e && e < r, "{q} {a} {e} {r}:\n{out}");
            assert!(
                lines[q..=r].iter().all(|l| !l.is_empty()),
                "one block:\n{out}"
            );
            // Broken at spaces: the lines joined again are the sentence, in the block.
            let text = |from: usize, to: usize| {
                lines[from..to]
                    .iter()
                    .map(|l| l.split_at(12.min(l.len())).1.trim())
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            assert_eq!(text(a, e), v.answer, "\n{out}");
            assert_eq!(text(e, r), v.evidence, "\n{out}");
            assert_eq!(text(r, r + 1), v.runs.join(" "), "\n{out}");
            next = r + 1;
        }
        // What is not available, and both shared rows as labelled lines.
        let n = at(0, "Not available here");
        assert!(lines[n..]
            .iter()
            .any(|l| l.starts_with("wireguard-kernel: the wireguard module")));
        let s = at(n, "Shared row");
        for (device, label) in [
            (
                "QEMU Standard PC (Q35 + ICH9, 2009)",
                "  cipher speed at 1400 B",
            ),
            ("Raspberry Pi 4 Model B Rev 1.4", "  tunnel throughput"),
        ] {
            at(at(s, device), label);
        }
    }

    /// Markdown keeps its table: one row per answer, one per shared row.
    #[test]
    fn markdown_keeps_its_tables() {
        let (md, advice) = render(Format::Markdown);
        assert!(
            md.contains("| question | answer | evidence | runs |\n|---|---|---|---|\n"),
            "{md}"
        );
        assert!(md.contains("| Which tunnel is fastest here? | wireguard-go CHACHA20-POLY1305 is faster than openvpn"), "{md}");
        assert_eq!(
            md.matches("\n| ").count(),
            advice.verdicts.len() + 1 + 2 + 1,
            "{md}"
        );
        assert!(
            md.contains("- ktls: the tls module is not loaded\n"),
            "{md}"
        );
    }
}
