//! GitHub-flavoured Markdown: blocks as they come, nothing between them.

use super::super::model::{esc, Block};
use super::parts::Document;
use std::fmt::Write;
use std::io;

pub fn write(doc: &mut dyn Document, whole: bool, out: &mut dyn io::Write) -> anyhow::Result<()> {
    super::parts::blocks(doc, whole, out, |p| p.blocks(), markdown, b"")
}

/// Text as Markdown shows it literally: HTML's `&`, `<` and `>` as entities (a renderer
/// would pass raw HTML through) and Markdown's own metacharacters backslash-escaped.
fn md_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in esc(s).chars() {
        // Not `_`: GFM never reads an intraword underscore (TLS_AES_128) as emphasis.
        if matches!(c, '\\' | '`' | '*' | '[' | ']' | '|') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A table cell: literal text on one line.
fn md_cell(s: &str) -> String {
    md_text(s).replace('\n', " ")
}

/// GitHub-flavoured Markdown.
pub fn markdown(blocks: &[Block]) -> String {
    let mut out = String::new();
    for b in blocks {
        match b {
            Block::Heading(h) => {
                let _ = writeln!(out, "## {}\n", md_text(h));
            }
            Block::Lines(lines) => {
                for l in lines {
                    let _ = writeln!(out, "- {}", md_text(l));
                }
                out.push('\n');
            }
            Block::Table(t) => {
                if !t.title.is_empty() {
                    let _ = writeln!(out, "{}\n", md_text(&t.title));
                }
                let head: Vec<String> = t.columns.iter().map(|c| md_cell(&c.name)).collect();
                let _ = writeln!(out, "| {} |", head.join(" | "));
                let seps: Vec<&str> = t
                    .columns
                    .iter()
                    .map(|c| if c.left { "---" } else { "---:" })
                    .collect();
                let _ = writeln!(out, "|{}|", seps.join("|"));
                for r in &t.rows {
                    let cells: Vec<String> = r.iter().map(|c| md_cell(c)).collect();
                    let _ = writeln!(out, "| {} |", cells.join(" | "));
                }
                out.push('\n');
                for n in &t.notes {
                    let _ = writeln!(out, "- {}", md_text(n));
                }
                if !t.notes.is_empty() {
                    out.push('\n');
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::model::{Column, Table};

    #[test]
    fn markdown_shows_html_and_metacharacters_literally() {
        let mut t = Table::new("<b>t</b>", vec![Column::text("<script>x")]);
        t.push(vec![
            "<script>alert(1)</script> & *bold* [link](u) `c` a|b\nc".into(),
        ]);
        t.notes.push("<img src=x onerror=y>".into());
        let md = markdown(&[
            Block::Heading("<script>h".into()),
            Block::Lines(vec!["<iframe>".into()]),
            Block::Table(t),
        ]);
        assert!(!md.contains('<') && !md.contains('>'), "{md}");
        assert!(md.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; \\*bold\\* \\[link\\](u) \\`c\\` a\\|b c"), "{md}");
        assert_eq!(md_text("TLS_AES_128_GCM_SHA256"), "TLS_AES_128_GCM_SHA256");
    }

    #[test]
    fn markdown_escapes_pipes() {
        let s = markdown(&super::super::table::tests::sample());
        assert!(s.contains("| impl | 16 B |\n|---|---:|\n"), "{s}");
        assert!(s.contains("177\\|~"), "{s}");
    }
}
