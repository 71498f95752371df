//! What every workload hands the render layer: blocks of headings, tables and text lines.
//! The writers (terminal, Markdown, CSV) are each written once, here; JSON is written
//! once in `json.rs`. Workloads never format a grid themselves.

use std::fmt::Write;

/// A table: named columns, rows of cells already formatted, notes under it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// One line above the table (units, what a mark means); may be empty.
    pub title: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<String>>,
    /// Facts a reader needs, printed under the table.
    pub notes: Vec<String>,
    /// A blank line (terminal) between rows where this column's cell changes.
    pub group_by: Option<usize>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub name: String,
    /// Text columns are left-aligned, numbers right-aligned.
    pub left: bool,
}

impl Column {
    pub fn text(name: &str) -> Self {
        Column {
            name: name.into(),
            left: true,
        }
    }
    pub fn num(name: &str) -> Self {
        Column {
            name: name.into(),
            left: false,
        }
    }
}

impl Table {
    pub fn new(title: impl Into<String>, columns: Vec<Column>) -> Self {
        Table {
            title: title.into(),
            columns,
            ..Table::default()
        }
    }
    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    Heading(String),
    Table(Table),
    /// Lines of prose, printed as they are (a list item each in Markdown).
    Lines(Vec<String>),
}

/// Control characters (ANSI escapes among them) from a record never reach the terminal.
pub fn clean(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() && c != '\n' { '?' } else { c })
        .collect()
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
        .map(|r| r.iter().map(|c| clean(c)).collect())
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

/// Text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in clean(s).chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
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

/// RFC 4180 quoting.
pub fn csv_quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// CSV: each table as a header line and rows; tables of different workloads are separated
/// by a blank line. Headings and prose are not data and are left out.
pub fn csv(tables: &[Table]) -> String {
    let mut out = Vec::new();
    for (i, t) in tables.iter().enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        // Writing into memory cannot fail.
        let _ = csv_rows(t, true, &mut out);
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One table's CSV lines (after its header line when `header`), written as they are made.
pub fn csv_rows(t: &Table, header: bool, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    // Cell by cell into `out`: a report of 100,000 records is four million cells.
    let line = |cells: &mut dyn Iterator<Item = &str>, out: &mut dyn std::io::Write| {
        for (i, cell) in cells.enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            if cell.contains([',', '"', '\n', '\r']) {
                out.write_all(csv_quote(cell).as_bytes())?;
            } else {
                out.write_all(cell.as_bytes())?;
            }
        }
        out.write_all(b"\n")
    };
    if header {
        line(&mut t.columns.iter().map(|c| c.name.as_str()), out)?;
    }
    for r in &t.rows {
        line(&mut r.iter().map(String::as_str), out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Block> {
        let mut t = Table::new("MB/s", vec![Column::text("impl"), Column::num("16 B")]);
        t.push(vec!["openssl".into(), "86.8".into()]);
        t.push(vec!["aws-lc\u{1b}[31m".into(), "177|~".into()]);
        t.notes.push("a note".into());
        vec![Block::Heading("speed".into()), Block::Table(t)]
    }

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
    fn terminal_aligns_and_escapes() {
        let s = terminal(&sample());
        assert!(s.contains("speed\n=====\n"), "{s}");
        assert!(s.contains("impl          16 B\n"), "{s}");
        assert!(s.contains("openssl       86.8\n"), "{s}");
        assert!(!s.contains('\u{1b}'), "{s}");
        assert!(s.contains("  a note"), "{s}");
    }

    #[test]
    fn markdown_escapes_pipes() {
        let s = markdown(&sample());
        assert!(s.contains("| impl | 16 B |\n|---|---:|\n"), "{s}");
        assert!(s.contains("177\\|~"), "{s}");
    }

    #[test]
    fn csv_quotes() {
        let mut t = Table::new("", vec![Column::text("a"), Column::text("b")]);
        t.push(vec!["x,y".into(), "say \"hi\"".into()]);
        assert_eq!(csv(&[t]), "a,b\n\"x,y\",\"say \"\"hi\"\"\"\n");
    }
}
