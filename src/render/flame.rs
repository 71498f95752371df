//! `--profile-dir` flame graphs inlined in the HTML report, with their category table.
//!
//! inferno's SVG carries a script (zoom, search) and event handlers. The page promises no
//! script and nothing fetched, and the SVG file could have been edited since, so it is
//! rebuilt from an allow-list: drawing elements and plain attributes only. Frames keep
//! their `<title>`, so hovering still names a frame and its samples; ids get a per-graph
//! prefix so several graphs can share one page.

use super::model::{esc, Block, Column, Table};
use crate::profile::{Profile, ProfileField};
use crate::record::read::{AnyRecord, Run};
use anyhow::anyhow;
#[cfg(feature = "flame")]
use quick_xml::events::{BytesStart, Event};
#[cfg(feature = "flame")]
use quick_xml::XmlVersion;
use std::fmt::Write;

/// Elements kept; anything else is dropped with everything inside it, as is any element
/// painted with a `url()` (inferno's background gradient: the page has no url() at all).
#[cfg(feature = "flame")]
const ELEMENTS: [&str; 5] = ["svg", "g", "rect", "text", "title"];
/// Attributes kept (no event handlers, links, styles or classes).
#[cfg(feature = "flame")]
const ATTRIBUTES: [&str; 7] = ["x", "y", "width", "height", "fill", "viewBox", "id"];
/// inferno's interactive controls: without the script they do nothing.
#[cfg(feature = "flame")]
const CONTROLS: [&str; 4] = ["unzoom", "search", "matched", "details"];

/// Without the `flame` feature (the lean router build) a graph is not inlined: the
/// section says so under each category table.
#[cfg(not(feature = "flame"))]
pub fn sanitise(_svg: &str, _prefix: &str) -> anyhow::Result<Sanitised> {
    Err(anyhow!(
        "not inlined: this build has no flame graphs (built without the `flame` feature); report with a full build"
    ))
}

/// A flame graph made safe to inline.
pub struct Sanitised {
    pub svg: String,
    /// inferno's title line: the point's label and its sample count.
    pub title: Option<String>,
}

/// A flame graph SVG as a self-contained, script-free fragment; ids start with `prefix`.
#[cfg(feature = "flame")]
pub fn sanitise(svg: &str, prefix: &str) -> anyhow::Result<Sanitised> {
    let mut reader = quick_xml::Reader::from_str(svg);
    let mut out = String::with_capacity(svg.len());
    // Depth inside a dropped element (0: keeping).
    let mut dropped = 0usize;
    let mut root = true;
    // Kept elements open: text outside the root element (a doctype's leftovers) goes.
    let mut open_elements = 0usize;
    // Inside the title's <text> (it has no child elements): its text is collected.
    let mut title: Option<String> = None;
    let mut in_title = false;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| anyhow!("not a readable SVG ({e})"))?;
        match event {
            Event::Start(ref e) if dropped > 0 || !keep(e) => dropped += 1,
            Event::End(_) if dropped > 0 => dropped -= 1,
            Event::Start(e) => {
                open_elements += 1;
                in_title = open(&e, prefix, &mut root, false, &mut out)?;
                if in_title {
                    title = Some(String::new());
                }
            }
            Event::Empty(e) if dropped == 0 && keep(&e) => {
                open(&e, prefix, &mut root, true, &mut out)?;
            }
            Event::End(e) => {
                open_elements = open_elements.saturating_sub(1);
                in_title = false;
                let _ = write!(out, "</{}>", String::from_utf8_lossy(e.name().as_ref()));
            }
            Event::Text(t) if dropped == 0 && open_elements > 0 => {
                let text = t.decode()?;
                out.push_str(&esc(&text));
                if let (true, Some(s)) = (in_title, title.as_mut()) {
                    s.push_str(&text);
                }
            }
            Event::GeneralRef(r) if dropped == 0 && open_elements > 0 => {
                let c = match r.resolve_char_ref()? {
                    Some(c) => c.to_string(),
                    None => quick_xml::escape::resolve_predefined_entity(&r.decode()?)
                        .unwrap_or("")
                        .to_string(),
                };
                out.push_str(&esc(&c));
                if let (true, Some(s)) = (in_title, title.as_mut()) {
                    s.push_str(&c);
                }
            }
            Event::Eof => break,
            // Comments, CDATA (the script), the doctype and declarations go.
            _ => {}
        }
    }
    if root {
        return Err(anyhow!("no <svg> element"));
    }
    Ok(Sanitised { svg: out, title })
}

#[cfg(feature = "flame")]
fn keep(e: &BytesStart) -> bool {
    let name = e.name();
    if !ELEMENTS.iter().any(|k| k.as_bytes() == name.as_ref()) {
        return false;
    }
    let control = |a: &quick_xml::events::attributes::Attribute| {
        name.as_ref() == b"text"
            && a.key.as_ref() == b"id"
            && CONTROLS.iter().any(|c| c.as_bytes() == &*a.value)
    };
    let url = |a: &quick_xml::events::attributes::Attribute| {
        a.key.as_ref() == b"fill" && a.value.windows(4).any(|w| w.eq_ignore_ascii_case(b"url("))
    };
    !e.attributes().flatten().any(|a| control(&a) || url(&a))
}

/// Writes a kept element's start tag with its allowed attributes; true for the title.
#[cfg(feature = "flame")]
fn open(
    e: &BytesStart,
    prefix: &str,
    root: &mut bool,
    empty: bool,
    out: &mut String,
) -> anyhow::Result<bool> {
    let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
    out.push('<');
    out.push_str(&name);
    let mut id = String::new();
    for a in e.attributes() {
        let a = a.map_err(|e| anyhow!("not a readable SVG ({e})"))?;
        let key = String::from_utf8_lossy(a.key.as_ref()).into_owned();
        if !ATTRIBUTES.contains(&key.as_str()) {
            continue;
        }
        let value = a
            .normalized_value(XmlVersion::Implicit1_0)
            .map_err(|e| anyhow!("not a readable SVG ({e})"))?;
        let value = match key.as_str() {
            "id" => {
                id = value.to_string();
                format!("{prefix}{value}")
            }
            // Numbers, lengths, colours: nothing else belongs in these attributes.
            _ if !value.contains("url(")
                && value
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || " #(),.%-".contains(c)) =>
            {
                value.into_owned()
            }
            _ => continue,
        };
        let _ = write!(out, " {key}=\"{}\"", esc(&value));
    }
    if name == "svg" && std::mem::take(root) {
        // inferno's stylesheet, as inherited presentation attributes.
        out.push_str(
            " xmlns=\"http://www.w3.org/2000/svg\" font-family=\"monospace\" font-size=\"12\"",
        );
    }
    if id == "title" {
        out.push_str(" text-anchor=\"middle\" font-size=\"17\"");
    }
    out.push_str(if empty { "/>" } else { ">" });
    Ok(name == "text" && id == "title")
}

/// The category table of one profile, biggest share first.
pub fn category_table(title: &str, p: &Profile) -> Table {
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    let mut t = Table::new(
        title,
        vec![
            Column::text("category"),
            Column::num("share"),
            Column::num("95% CI"),
            Column::num("samples"),
        ],
    );
    let mut rows: Vec<_> = p.categories.iter().collect();
    rows.sort_by(|a, b| b.1.samples.cmp(&a.1.samples).then(a.0.cmp(b.0)));
    for (name, s) in rows {
        t.push(vec![
            name.clone(),
            pct(s.share),
            format!("{}–{}", pct(s.ci[0]), pct(s.ci[1])),
            s.samples.to_string(),
        ]);
    }
    t.notes.push(format!(
        "{} {} samples; crypto {} [{}–{}], Amdahl ceiling {:.2}x; unknown {}",
        p.samples,
        p.event,
        pct(p.crypto.share),
        pct(p.crypto.ci[0]),
        pct(p.crypto.ci[1]),
        p.amdahl_ceiling,
        pct(p.unknown_share)
    ));
    if p.idle_samples > 0 {
        t.notes
            .push(format!("{} samples of idle CPUs left out", p.idle_samples));
    }
    t
}

fn profile_of(r: &AnyRecord) -> Option<(&str, &Profile)> {
    match r.profile()? {
        ProfileField::Measured(p) => Some((r.label(), p)),
        ProfileField::Unavailable { .. } => None,
    }
}

/// The run's flame graphs, each after its category table; nothing without any.
pub fn section(run: &Run, out: &mut String) {
    let mut n = 0;
    for r in &run.records {
        let Some((label, p)) = profile_of(r) else {
            continue;
        };
        let Some(path) = &p.flame_graph else {
            continue;
        };
        if n == 0 {
            out.push_str("<h3>Where the CPU time went (--profile)</h3>\n");
        }
        n += 1;
        let file = crate::units::shown_path(path);
        let graph = std::fs::read_to_string(path)
            .map_err(|e| anyhow!("cannot read it ({e})"))
            .and_then(|s| sanitise(&s, &format!("fg{n}-")));
        let title = match &graph {
            Ok(g) => g.title.clone().unwrap_or_else(|| label.to_string()),
            Err(_) => label.to_string(),
        };
        super::write::html::blocks(&[Block::Table(category_table(&title, p))], out);
        match graph {
            Ok(g) => {
                let _ = writeln!(
                    out,
                    "<figure class=\"figure flame\">\n<p class=\"shows\">What this shows: where the sampled CPU time went, callers below callees; crypto frames are coloured by category and labelled [aes], [ghash]...; hover a frame for its samples.</p>\n{}\n<figcaption>{}</figcaption></figure>",
                    g.svg,
                    esc(&file)
                );
            }
            Err(why) => {
                let _ = writeln!(
                    out,
                    "<ul class=\"lines\"><li class=\"warn\">flame graph {}: {}; the table above stands</li></ul>",
                    esc(&file),
                    esc(&why.to_string())
                );
            }
        }
    }
}

#[cfg(all(test, feature = "flame"))]
mod tests;
