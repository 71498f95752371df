//! One self-contained HTML page: inline CSS and inline SVG, no script, nothing fetched;
//! readable offline and printable. Per run: its environment, status and notes beside
//! the figures (each with a "what this shows" line) and the workload's tables.

use super::super::model::{esc, Block, Table};
use super::super::plots::Figure;
use super::parts::Document;
use crate::record::read::Run;
use std::fmt::Write;
use std::io;

/// The page: the part's body, under its title.
pub fn write(doc: &mut dyn Document, whole: bool, out: &mut dyn io::Write) -> anyhow::Result<()> {
    let (mut title, mut body) = (String::new(), String::new());
    doc.parts(whole, &mut |part| {
        title = part.html(&mut body);
        Ok(())
    })?;
    Ok(out.write_all(page(&title, &body).as_bytes())?)
}

const STYLE: &str = "
body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;margin:1.5em;color:#111;max-width:1500px}
h1{font-size:1.5em} h2{font-size:1.25em;border-bottom:2px solid #888;padding-bottom:.2em;margin-top:2em}
h3{font-size:1.1em;margin:1.2em 0 .4em}
.run{display:flex;gap:1.5em;align-items:flex-start;flex-wrap:wrap}
.env{flex:0 0 320px;font-size:.82em;background:#f4f4f4;border:1px solid #ccc;padding:.6em .8em;word-break:break-word}
.env dt{font-weight:bold;margin-top:.4em} .env dd{margin:0 0 0 .6em}
.main{flex:1 1 780px;min-width:0}
figure.figure{margin:1em 0;padding:.4em;border:1px solid #ddd;break-inside:avoid}
figure.figure>svg{max-width:100%;height:auto;display:block}
p.shows{font-weight:bold;margin:.2em 0 .4em} figcaption{font-size:.8em;color:#444}
table{border-collapse:collapse;font-size:.8em;margin:.4em 0} caption{text-align:left;font-weight:bold;padding:.3em 0}
th,td{border:1px solid #ccc;padding:.15em .45em} td.num{text-align:right;font-variant-numeric:tabular-nums}
ul.lines{font-size:.85em;white-space:pre-wrap;padding-left:1.2em}
.warn{color:#a00;font-weight:bold}
@media print{.run{display:block}.env{page-break-inside:avoid}}
";

/// The page around `body`.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>{}</title>\n<style>{STYLE}</style></head>\n<body>\n<h1>{}</h1>\n{body}</body></html>\n",
        esc(title),
        esc(title)
    )
}

pub fn figure(f: &Figure, out: &mut String) {
    let _ = write!(
        out,
        "<figure class=\"figure\" id=\"{}\">\n<p class=\"shows\">What this shows: {}</p>\n{}\n<figcaption>{}</figcaption></figure>\n",
        esc(&f.id),
        esc(&f.shows),
        f.svg,
        esc(&f.title)
    );
}

/// Blocks as HTML: the same content the terminal and Markdown get.
pub fn blocks(blocks: &[Block], out: &mut String) {
    for b in blocks {
        match b {
            Block::Heading(h) => {
                let _ = writeln!(out, "<h3>{}</h3>", esc(h));
            }
            Block::Table(t) => table(t, out),
            Block::Lines(lines) => {
                out.push_str("<ul class=\"lines\">\n");
                for l in lines {
                    let _ = writeln!(out, "<li>{}</li>", esc(l));
                }
                out.push_str("</ul>\n");
            }
        }
    }
}

fn table(t: &Table, out: &mut String) {
    out.push_str("<table>");
    if !t.title.is_empty() {
        let _ = write!(out, "<caption>{}</caption>", esc(&t.title));
    }
    out.push_str("<thead><tr>");
    for c in &t.columns {
        let _ = write!(out, "<th>{}</th>", esc(&c.name));
    }
    out.push_str("</tr></thead><tbody>\n");
    for row in &t.rows {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let num = t.columns.get(i).is_some_and(|c| !c.left);
            let _ = write!(
                out,
                "<td{}>{}</td>",
                if num { " class=\"num\"" } else { "" },
                esc(cell)
            );
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
    if !t.notes.is_empty() {
        out.push_str("<ul class=\"lines\">");
        for n in &t.notes {
            let _ = write!(out, "<li>{}</li>", esc(n));
        }
        out.push_str("</ul>\n");
    }
}

/// The run's environment, status and what was unavailable: shown beside its figures.
fn environment(run: &Run, out: &mut String) {
    out.push_str("<aside class=\"env\"><dl>\n");
    let mut item = |k: &str, v: &str| {
        let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v));
    };
    item("run", &run.run_id);
    item(
        "status",
        match &run.end {
            Some(e) if e.interrupted => "interrupted: the finished points are shown",
            Some(_) => "finished",
            None => "unfinished: no end line (killed, or written before schema 2)",
        },
    );
    let sources: Vec<String> = run
        .sources
        .iter()
        .map(|p| crate::units::shown_path(p))
        .collect();
    item("file", &sources.join(", "));
    let Some(e) = &run.environment else {
        out.push_str("<dt class=\"warn\">environment</dt><dd class=\"warn\">its line is missing from the file</dd></dl></aside>\n");
        return;
    };
    item("host", &e.hostname);
    item("CPU", e.cpu.model.as_deref().unwrap_or("-"));
    item("architecture", &e.cpu.arch);
    item("logical CPUs", &e.cpu.logical_cpus.to_string());
    item("crypto flags", &e.cpu.crypto_flags.join(" "));
    item("kernel", &e.kernel);
    item("frequency", &e.frequency.source.to_string());
    if let Some(g) = &e.frequency.governor {
        item("governor", g);
    }
    for l in &e.libraries {
        item(
            &format!("library {}", l.label.as_deref().unwrap_or("-")),
            &l.version,
        );
    }
    item("command", &e.command_line.join(" "));
    item("cryptobench", &e.cryptobench_version);
    item("started (unix)", &e.started_unix.to_string());
    // The environment and the end line may both list a path: once each.
    let mut unavailable: Vec<&crate::record::Unavailable> = Vec::new();
    for u in e
        .unavailable
        .iter()
        .chain(run.end.iter().flat_map(|x| &x.unavailable))
    {
        if !unavailable.contains(&u) {
            unavailable.push(u);
        }
    }
    for u in unavailable {
        item(&format!("unavailable: {}", u.name), &u.reason);
    }
    out.push_str("</dl></aside>\n");
}

/// One run's section: its environment beside its figures and tables, then `flames` (its
/// flame graphs, `flame::section`, already written).
pub fn run_section(
    run: &Run,
    heading: &str,
    figures: &[(String, Vec<Figure>)],
    run_blocks: &[Block],
    flames: &str,
    out: &mut String,
) {
    let _ = writeln!(out, "<h2>{}</h2>\n<div class=\"run\">", esc(heading));
    environment(run, out);
    out.push_str("<div class=\"main\">\n");
    for (workload, figs) in figures {
        let _ = writeln!(out, "<h3>{} figures</h3>", esc(workload));
        for f in figs {
            figure(f, out);
        }
    }
    blocks(run_blocks, out);
    out.push_str(flames);
    out.push_str("</div></div>\n");
}
