//! What every workload hands the render layer: blocks of headings, tables and text lines.
//! Each format's writer is in `write/`. Workloads never format a grid themselves.

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
pub fn clean(s: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| c.is_control() && c != '\n';
    if !s.contains(bad) {
        return s.into();
    }
    s.chars().map(|c| if bad(c) { '?' } else { c }).collect()
}

/// `text` in lines of at most `width` characters, broken at spaces; a word longer than
/// `width` is not broken, and has a line of its own.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let line = lines.last_mut().expect("one line at least");
        let used = line.chars().count();
        if used == 0 {
            line.push_str(word);
        } else if used + 1 + word.chars().count() <= width {
            line.push(' ');
            line.push_str(word);
        } else {
            lines.push(word.to_string());
        }
    }
    lines
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
