//! PNG from the same SVG a figure has, rendered with resvg. Text needs a font: DejaVu Sans
//! from Debian's fonts-dejavu-core (scripts/deps/report.sh), mapped to "sans-serif".
//! A build without the `png` feature (the lean router build) has no resvg: it refuses
//! `--plots` before anything is read.

use anyhow::anyhow;
use std::path::Path;

/// Where fonts-dejavu-core puts DejaVu Sans.
#[cfg(feature = "png")]
pub const FONT: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

/// What rendering needs, loaded once per process: the font.
#[cfg(feature = "png")]
pub type Font = resvg::usvg::Options<'static>;
#[cfg(not(feature = "png"))]
pub struct Font;

#[cfg(not(feature = "png"))]
const NO_PNG: &str = "this build has no PNG figures (built without the `png` feature, as the lean router build is): run report --plots with a full build";

#[cfg(not(feature = "png"))]
pub fn options() -> anyhow::Result<Font> {
    Err(anyhow!(NO_PNG))
}

#[cfg(not(feature = "png"))]
pub fn write(_dir: &Path, _stem: &str, _svg: &str, _font: &Font) -> anyhow::Result<()> {
    Err(anyhow!(NO_PNG))
}

/// Font options, loaded once per process (reading the font is most of a small render).
#[cfg(feature = "png")]
pub fn options() -> anyhow::Result<Font> {
    let font = std::fs::read(FONT).map_err(|e| {
        anyhow!(
            "cannot read the font {FONT}: {e}: install fonts-dejavu-core (scripts/deps/report.sh)"
        )
    })?;
    let mut opt = resvg::usvg::Options::default();
    let db = opt.fontdb_mut();
    db.load_font_data(font);
    db.set_sans_serif_family("DejaVu Sans");
    db.set_serif_family("DejaVu Sans");
    db.set_monospace_family("DejaVu Sans");
    Ok(opt)
}

/// Renders an SVG document to PNG bytes at its own size.
#[cfg(feature = "png")]
pub fn png(svg: &str, opt: &resvg::usvg::Options) -> anyhow::Result<Vec<u8>> {
    let tree = resvg::usvg::Tree::from_str(svg, opt).map_err(|e| anyhow!("SVG: {e}"))?;
    let size = tree.size().to_int_size();
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| anyhow!("an empty figure"))?;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::default(),
        &mut pixmap.as_mut(),
    );
    pixmap.encode_png().map_err(|e| anyhow!("PNG: {e}"))
}

/// Writes `stem.svg` and `stem.png` into `dir`.
#[cfg(feature = "png")]
pub fn write(dir: &Path, stem: &str, svg: &str, opt: &resvg::usvg::Options) -> anyhow::Result<()> {
    let shown = crate::units::shown_path(dir);
    std::fs::write(dir.join(format!("{stem}.svg")), svg)
        .map_err(|e| anyhow!("cannot write into --plots {shown}: {e}"))?;
    let bytes = png(svg, opt)?;
    std::fs::write(dir.join(format!("{stem}.png")), bytes)
        .map_err(|e| anyhow!("cannot write into --plots {shown}: {e}"))
}

/// Writes every figure (`stem`, SVG) into `dir` as SVG and PNG, all or none: into a
/// private dir beside `dir` first, moved in at the end. A stop (SIGINT, SIGTERM) part way
/// leaves `dir` as it was and nothing beside it (a partial dir looked finished).
/// Ok(None): stopped; else the figures written.
pub fn write_all(
    dir: &Path,
    figures: impl Iterator<Item = (String, String)>,
    font: &Font,
) -> anyhow::Result<Option<usize>> {
    let shown = crate::units::shown_path(dir);
    crate::sys::signal::install_signal_handler();
    std::fs::create_dir_all(dir).map_err(|e| anyhow!("cannot create --plots {shown}: {e}"))?;
    let guard = crate::sys::guard::Guard::new();
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let staged = guard.temp_dir_in(parent, "plots")?;
    let mut written = 0;
    for (stem, svg) in figures {
        if crate::sys::signal::stopped() {
            return Ok(None);
        }
        write(&staged, &stem, &svg, font)?;
        written += 1;
    }
    for e in std::fs::read_dir(&staged)?.flatten() {
        if e.file_name() != crate::sys::guard::LOCK_FILE {
            std::fs::rename(e.path(), dir.join(e.file_name()))
                .map_err(|e| anyhow!("cannot move a figure into --plots {shown}: {e}"))?;
        }
    }
    Ok(Some(written))
}
