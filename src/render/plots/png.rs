//! PNG from the same SVG a figure has, rendered with resvg. Text needs a font: DejaVu Sans
//! from Debian's fonts-dejavu-core (scripts/deps/report.sh), mapped to "sans-serif".

use anyhow::anyhow;
use std::path::Path;

/// Where fonts-dejavu-core puts DejaVu Sans.
pub const FONT: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";

/// Font options, loaded once per process (reading the font is most of a small render).
pub fn options() -> anyhow::Result<resvg::usvg::Options<'static>> {
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
pub fn write(dir: &Path, stem: &str, svg: &str, opt: &resvg::usvg::Options) -> anyhow::Result<()> {
    let shown = crate::units::shown_path(dir);
    std::fs::write(dir.join(format!("{stem}.svg")), svg)
        .map_err(|e| anyhow!("cannot write into --plots {shown}: {e}"))?;
    let bytes = png(svg, opt)?;
    std::fs::write(dir.join(format!("{stem}.png")), bytes)
        .map_err(|e| anyhow!("cannot write into --plots {shown}: {e}"))
}
