//! CSV: one table per slot (a report's workload), the rows of every part together (a
//! report's run_id tells its runs apart), tables separated by a blank line. Headings
//! and prose are not data and are left out. The first slot is written as its parts come;
//! the others' rows wait in memory (rows, not records) until the last part.

use super::super::model::Table;
use super::{Document, Part, Writer};
use std::io::Write;

pub struct Csv<'a> {
    out: &'a mut dyn Write,
    later: Vec<Vec<u8>>,
    started: Vec<bool>,
}

impl<'a> Csv<'a> {
    pub fn new(out: &'a mut dyn Write) -> Self {
        Csv {
            out,
            later: Vec::new(),
            started: Vec::new(),
        }
    }
}

impl Writer for Csv<'_> {
    fn part(&mut self, part: &dyn Part) -> anyhow::Result<()> {
        for (k, t) in part.csv().into_iter().enumerate() {
            let Some(t) = t else { continue };
            if self.started.len() <= k {
                self.started.resize(k + 1, false);
                self.later.resize(k + 1, Vec::new());
            }
            let sink: &mut dyn Write = if k == 0 {
                &mut *self.out
            } else {
                &mut self.later[k]
            };
            csv_rows(&t, !self.started[k], sink)?;
            self.started[k] = true;
        }
        Ok(())
    }

    fn finish(self: Box<Self>, _doc: &dyn Document) -> anyhow::Result<()> {
        let mut first = !self.started.first().copied().unwrap_or(false);
        for (rows, _) in self
            .later
            .iter()
            .zip(&self.started)
            .skip(1)
            .filter(|(_, s)| **s)
        {
            if !first {
                self.out.write_all(b"\n")?;
            }
            self.out.write_all(rows)?;
            first = false;
        }
        Ok(())
    }
}

/// RFC 4180 quoting.
pub fn csv_quote(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
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
    use crate::render::model::Column;

    #[test]
    fn csv_quotes() {
        let mut t = Table::new("", vec![Column::text("a"), Column::text("b")]);
        t.push(vec!["x,y".into(), "say \"hi\"".into()]);
        let mut out = Vec::new();
        csv_rows(&t, true, &mut out).unwrap();
        assert_eq!(out, b"a,b\n\"x,y\",\"say \"\"hi\"\"\"\n");
    }
}
