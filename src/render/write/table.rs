//! The terminal: aligned columns, two spaces apart, an empty line between blocks.

use super::super::model::{clean, Block, Table};
use super::Document;
use std::fmt::Write;
use std::io;

pub fn write(doc: &mut dyn Document, whole: bool, out: &mut dyn io::Write) -> anyhow::Result<()> {
    super::blocks(doc, whole, out, terminal, b"\n")
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
