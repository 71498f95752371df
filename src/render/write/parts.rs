//! What a command shows, as every writer reads it: a `Document` of `Part`s, and the
//! blocks of its parts for the terminal and Markdown.

use super::super::model::{Block, Table};
use super::json;
use crate::record::read::Skipped;
use std::io::Write;

/// What a command shows: its parts, as they are made.
pub trait Document {
    /// Hands each part to `each` as it is made. `whole`: the writer needs everything at
    /// once (one part for the whole document).
    fn parts(
        &mut self,
        whole: bool,
        each: &mut dyn FnMut(&dyn Part) -> anyhow::Result<()>,
    ) -> anyhow::Result<()>;
    /// Input lines that were skipped, said after the last part.
    fn skipped(&self) -> &Skipped {
        &crate::record::read::NONE_SKIPPED
    }
}

/// A part alone is a document: what every command but the report shows.
impl<P: Part> Document for P {
    fn parts(
        &mut self,
        _whole: bool,
        each: &mut dyn FnMut(&dyn Part) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        each(self)
    }
}

/// One part of a document, as each writer reads it. Only what a format shows is
/// computed (a run's analysis is most of the work, and only JSON shows all of it).
pub trait Part {
    /// Headings, tables and lines: the terminal and Markdown.
    fn blocks(&self) -> Vec<Block> {
        Vec::new()
    }
    /// The terminal's blocks: by default the same as Markdown's.
    fn terminal(&self) -> Vec<Block> {
        self.blocks()
    }
    /// Shown above the part's blocks when the document has several parts.
    fn heading(&self) -> Option<String> {
        None
    }
    /// CSV tables by slot: one slot's rows across parts make one table. By default the
    /// tables of the blocks.
    fn csv(&self) -> Vec<Option<Table>> {
        let tables = self.blocks().into_iter().filter_map(|b| match b {
            Block::Table(t) => Some(Some(t)),
            _ => None,
        });
        tables.collect()
    }
    /// Puts the part's JSON: one value, or a run of the report's layout.
    fn json(&self, _out: &mut json::Json) -> anyhow::Result<()> {
        Ok(())
    }
    /// The HTML page's title and body.
    fn html(&self, _body: &mut String) -> String {
        String::new()
    }
    /// The `openssl speed` layout.
    fn openssl(&self) -> String {
        String::new()
    }
}

/// A command's one part from closures, each called only for its format.
pub struct Single<'a> {
    pub blocks: &'a dyn Fn() -> Vec<Block>,
    pub json: &'a dyn Fn(&mut json::Json) -> anyhow::Result<()>,
    /// The page's title, its body written into the string.
    pub html: Option<&'a dyn Fn(&mut String) -> String>,
}

impl Part for Single<'_> {
    fn blocks(&self) -> Vec<Block> {
        (self.blocks)()
    }
    fn json(&self, out: &mut json::Json) -> anyhow::Result<()> {
        (self.json)(out)
    }
    fn html(&self, body: &mut String) -> String {
        self.html.map_or_else(String::new, |h| h(body))
    }
}

/// The terminal and Markdown: the blocks `pick` takes of each part, as the parts come,
/// `gap` between two. Parts get their headings only when there are several, so the first
/// part waits for a second.
pub(super) fn blocks(
    doc: &mut dyn Document,
    whole: bool,
    out: &mut dyn Write,
    pick: fn(&dyn Part) -> Vec<Block>,
    show: fn(&[Block]) -> String,
    gap: &[u8],
) -> anyhow::Result<()> {
    let mut wrote = false;
    let mut put = |heading: Option<String>, blocks: Vec<Block>| -> std::io::Result<()> {
        for b in heading.map(Block::Heading).into_iter().chain(blocks) {
            if wrote {
                out.write_all(gap)?;
            }
            out.write_all(show(std::slice::from_ref(&b)).as_bytes())?;
            wrote = true;
        }
        Ok(())
    };
    let (mut first, mut parts) = (None, 0);
    doc.parts(whole, &mut |part| {
        parts += 1;
        if parts == 1 {
            first = Some((part.heading(), pick(part)));
            return Ok(());
        }
        if let Some((heading, blocks)) = first.take() {
            put(heading, blocks)?;
        }
        Ok(put(part.heading(), pick(part))?)
    })?;
    if let Some((_, blocks)) = first {
        put(None, blocks)?;
    }
    put(None, skipped_block(doc.skipped()).into_iter().collect())?;
    Ok(())
}

/// The lines that were skipped (the first 20), as a block; None when there were none.
pub fn skipped_block(skipped: &Skipped) -> Option<Block> {
    if skipped.total() == 0 {
        return None;
    }
    let mut lines = vec![format!(
        "Skipped {} unreadable line(s); every other line was kept{}:",
        skipped.total(),
        if skipped.total() > skipped.len() {
            format!(" (the first {} listed)", skipped.len())
        } else {
            String::new()
        }
    )];
    for s in skipped.iter() {
        lines.push(format!(
            "  {} line {}: {}",
            crate::units::shown_path(&s.file),
            s.line,
            crate::units::shown(&s.reason)
        ));
    }
    Some(Block::Lines(lines))
}
