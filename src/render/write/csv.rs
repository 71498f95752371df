//! CSV: one table per slot (a report's workload), the rows of every part together (a
//! report's run_id tells its runs apart), tables separated by a blank line. Headings
//! and prose are not data and are left out. The first slot is written as its parts come;
//! the others' rows wait in memory (rows, not records) until the last part.

use super::super::model::Table;
use super::parts::Document;
use std::io::Write;

pub fn write(doc: &mut dyn Document, whole: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    // Each slot's rows once it has a table; the first slot's went straight to `out`.
    let mut slots: Vec<Option<Vec<u8>>> = Vec::new();
    doc.parts(whole, &mut |part| {
        for (k, t) in part.csv().into_iter().enumerate() {
            let Some(t) = t else { continue };
            if slots.len() <= k {
                slots.resize(k + 1, None);
            }
            let header = slots[k].is_none();
            let rows = slots[k].get_or_insert_with(Vec::new);
            let sink: &mut dyn Write = if k == 0 { &mut *out } else { rows };
            csv_rows(&t, header, sink)?;
        }
        Ok(())
    })?;
    let mut first = slots.first().is_none_or(Option::is_none);
    for rows in slots.iter().skip(1).flatten() {
        if !first {
            out.write_all(b"\n")?;
        }
        out.write_all(rows)?;
        first = false;
    }
    Ok(())
}

/// One table's CSV lines (after its header line when `header`), written as they are made.
fn csv_rows(t: &Table, header: bool, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    // Cell by cell into `out`: a report of 100,000 records is four million cells.
    let line = |cells: &mut dyn Iterator<Item = &str>, out: &mut dyn std::io::Write| {
        for (i, cell) in cells.enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            // A control character (ESC) from a record never reaches a terminal or a sheet.
            let cell = super::super::model::clean(cell);
            // RFC 4180 quoting.
            if cell.contains([',', '"', '\n', '\r']) {
                write!(out, "\"{}\"", cell.replace('"', "\"\""))?;
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

    /// ESC and the other control characters are replaced; a newline stays, quoted.
    #[test]
    fn csv_escapes_control_characters() {
        let mut t = Table::new("", vec![Column::text("a"), Column::text("b")]);
        t.push(vec!["ring\u{1b}[2J".into(), "x\u{7}\u{9b}y\nz".into()]);
        let mut out = Vec::new();
        csv_rows(&t, false, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "ring?[2J,\"x??y\nz\"\n");
    }
}
