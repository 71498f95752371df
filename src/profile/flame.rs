//! Folded stacks and a flame graph SVG per point, crypto frames coloured by category.

#[cfg(feature = "flame")]
use super::classify::Category;
use anyhow::anyhow;
#[cfg(feature = "flame")]
use inferno::flamegraph::{self, color::PaletteMap, Options};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One colour per crypto category, so AES, GHASH, ChaCha20... read apart at a glance.
#[cfg(feature = "flame")]
fn colour(c: Category) -> Option<(u8, u8, u8)> {
    Some(match c {
        Category::Aes => (214, 39, 40),
        Category::Ghash => (255, 127, 14),
        Category::Chacha20 => (148, 103, 189),
        Category::Poly1305 => (227, 119, 194),
        Category::Sha1 => (44, 160, 44),
        Category::Sha2 => (23, 190, 207),
        Category::Hmac => (188, 189, 34),
        _ => return None,
    })
}

/// Writes `<stem>.folded` and `<stem>.svg` into `dir`; returns the SVG path.
pub fn write(
    dir: &Path,
    stem: &str,
    title: &str,
    folded: &BTreeMap<String, u64>,
) -> anyhow::Result<PathBuf> {
    let lines: Vec<String> = folded.iter().map(|(s, n)| format!("{s} {n}")).collect();
    let folded_path = dir.join(format!("{stem}.folded"));
    std::fs::write(&folded_path, lines.join("\n") + "\n")
        .map_err(|e| anyhow!("cannot write {}: {e}", folded_path.display()))?;
    draw(dir, stem, title, folded, &lines)
}

/// Without the `flame` feature (the lean router build) the folded stacks are all there is.
#[cfg(not(feature = "flame"))]
fn draw(
    dir: &Path,
    stem: &str,
    _title: &str,
    _folded: &BTreeMap<String, u64>,
    _lines: &[String],
) -> anyhow::Result<PathBuf> {
    Err(anyhow!(
        "{}: folded stacks written, no flame graph drawn: this build has no flame graphs (built without the `flame` feature); draw them with a full build or inferno-flamegraph",
        dir.join(format!("{stem}.folded")).display()
    ))
}

/// The flame graph SVG of the folded stacks, crypto frames coloured; returns its path.
#[cfg(feature = "flame")]
fn draw(
    dir: &Path,
    stem: &str,
    title: &str,
    folded: &BTreeMap<String, u64>,
    lines: &[String],
) -> anyhow::Result<PathBuf> {
    let mut palette = PaletteMap::default();
    for stack in folded.keys() {
        let leaf = stack.rsplit(';').next().unwrap_or("");
        for c in Category::ALL {
            if let Some((r, g, b)) = colour(c) {
                if leaf.ends_with(&format!("[{}]", c.name())) {
                    palette.insert(leaf, flamegraph::color::Color { r, g, b });
                }
            }
        }
    }
    let mut opts = Options::default();
    opts.title = title.to_string();
    opts.count_name = "samples".into();
    opts.palette_map = Some(&mut palette);
    let svg_path = dir.join(format!("{stem}.svg"));
    let file = std::fs::File::create(&svg_path)
        .map_err(|e| anyhow!("cannot write {}: {e}", svg_path.display()))?;
    flamegraph::from_lines(
        &mut opts,
        lines.iter().map(String::as_str),
        std::io::BufWriter::new(file),
    )
    .map_err(|e| anyhow!("cannot draw {}: {e}", svg_path.display()))?;
    Ok(svg_path)
}

/// A file-name-safe stem for a point's label.
pub fn stem(label: &str) -> String {
    label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}
