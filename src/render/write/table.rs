//! The terminal: aligned columns, two spaces apart, an empty line between blocks.

use super::super::model::{clean, wrap, Block, Table};
use super::parts::Document;
use std::fmt::Write;
use std::io;

pub fn write(doc: &mut dyn Document, whole: bool, out: &mut dyn io::Write) -> anyhow::Result<()> {
    super::parts::blocks(doc, whole, out, |p| p.terminal(), terminal, b"\n")
}

/// The terminal: aligned columns, two spaces apart.
pub fn terminal(blocks: &[Block]) -> String {
    let mut out = String::new();
    for (i, b) in blocks.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match b {
            Block::Heading(h) => {
                let h = clean(h);
                let _ = writeln!(out, "{h}\n{}", "=".repeat(h.chars().count()));
            }
            Block::Lines(lines) => {
                for l in lines {
                    let _ = writeln!(out, "{}", clean(l));
                }
            }
            Block::Table(t) => terminal_table(&mut out, t),
        }
    }
    out
}

/// The columns `narrow` fits its blocks in.
pub const WIDTH: usize = 100;

/// The blocks for a terminal `WIDTH` columns wide, for tables whose cells are sentences
/// (too wide to align): each row of a table becomes a block of lines, its first cell on
/// a line of its own, then each other cell after its column's name, all on one left
/// edge; every line is broken at spaces, its continuation indented.
pub fn narrow(blocks: Vec<Block>) -> Vec<Block> {
    blocks
        .into_iter()
        .map(|b| match b {
            Block::Heading(_) => b,
            Block::Lines(lines) => Block::Lines(lines.iter().flat_map(|l| fit(l, "")).collect()),
            Block::Table(t) => Block::Lines(labelled(&t)),
        })
        .collect()
}

/// One line in lines of at most `WIDTH` characters: `first` before it, its continuations
/// under its text; a line's own leading spaces are kept.
fn fit(line: &str, first: &str) -> Vec<String> {
    let text = line.trim_start_matches(' ');
    let first = format!("{first}{}", &line[..line.len() - text.len()]);
    let indent = first.chars().count() + if first.trim().is_empty() { 2 } else { 0 };
    let width = WIDTH.saturating_sub(indent).max(20);
    wrap(text, width)
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            let lead = if i == 0 {
                first.clone()
            } else {
                " ".repeat(indent)
            };
            format!("{lead}{l}").trim_end().to_string()
        })
        .collect()
}

/// A table as labelled blocks: its title, then per row its first cell and the others
/// after their column's name, a blank line between rows; its notes last.
fn labelled(t: &Table) -> Vec<String> {
    let mut out = Vec::new();
    if !t.title.is_empty() {
        out.extend(fit(&t.title, ""));
    }
    let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
    let w = names
        .iter()
        .skip(1)
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(0);
    for r in &t.rows {
        out.push(String::new());
        for (i, cell) in r.iter().enumerate() {
            match i {
                0 => out.extend(fit(cell, "")),
                _ => out.extend(fit(
                    cell,
                    &format!("  {:w$}  ", names.get(i).unwrap_or(&"")),
                )),
            }
        }
    }
    if !t.notes.is_empty() {
        out.push(String::new());
    }
    out.extend(t.notes.iter().flat_map(|n| fit(n, "  ")));
    out
}

fn terminal_table(out: &mut String, t: &Table) {
    if !t.title.is_empty() {
        let _ = writeln!(out, "{}", clean(&t.title));
    }
    let rows: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|r| r.iter().map(|c| clean(c).into_owned()).collect())
        .collect();
    let mut w: Vec<usize> = t.columns.iter().map(|c| c.name.chars().count()).collect();
    for r in &rows {
        for (i, c) in r.iter().enumerate().take(w.len()) {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate().take(w.len()) {
            if i > 0 {
                s.push_str("  ");
            }
            let pad = w[i].saturating_sub(c.chars().count());
            if t.columns[i].left {
                s.push_str(c);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            }
        }
        s.trim_end().to_string()
    };
    let head: Vec<String> = t.columns.iter().map(|c| c.name.clone()).collect();
    let _ = writeln!(out, "{}", line(&head));
    let mut last: Option<&str> = None;
    for r in &rows {
        if let Some(col) = t.group_by {
            let first = r.get(col).map(String::as_str);
            if last.is_some() && first != last {
                out.push('\n');
            }
            last = first;
        }
        let _ = writeln!(out, "{}", line(r));
    }
    for n in &t.notes {
        let _ = writeln!(out, "  {}", clean(n));
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::render::model::Column;

    pub fn sample() -> Vec<Block> {
        let mut t = Table::new("MB/s", vec![Column::text("impl"), Column::num("16 B")]);
        t.push(vec!["openssl".into(), "86.8".into()]);
        t.push(vec!["aws-lc\u{1b}[31m".into(), "177|~".into()]);
        t.notes.push("a note".into());
        vec![Block::Heading("speed".into()), Block::Table(t)]
    }

    #[test]
    fn terminal_aligns_and_escapes() {
        let s = terminal(&sample());
        assert!(s.contains("speed\n=====\n"), "{s}");
        assert!(s.contains("impl          16 B\n"), "{s}");
        assert!(s.contains("openssl       86.8\n"), "{s}");
        assert!(!s.contains('\u{1b}'), "{s}");
        assert!(s.contains("  a note"), "{s}");
    }
}
