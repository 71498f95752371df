//! A real browser for the HTML pages (headless Chromium), and how much of a PNG is ink.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Share of pixels that are not (near) white, and whether any pixel is coloured.
pub fn ink(png: &Path) -> (f64, bool) {
    let p = resvg::tiny_skia::Pixmap::load_png(png)
        .unwrap_or_else(|e| panic!("{}: {e}", png.display()));
    let (mut ink, mut colour) = (0usize, false);
    for px in p.pixels() {
        let (r, g, b) = (px.red() as i32, px.green() as i32, px.blue() as i32);
        if r.min(g).min(b) < 235 {
            ink += 1;
        }
        if (r - g).abs().max((g - b).abs()) > 60 {
            colour = true;
        }
    }
    (ink as f64 / p.pixels().len() as f64, colour)
}

pub fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|n| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|p| p.join(n))
                    .find(|p| p.is_file())
            })
        })
}

pub fn headless(browser: &Path, profile: &Path, extra: &[String], page: &Path) -> Output {
    let mut c = Command::new(browser);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(extra)
    .arg(format!("file://{}", page.display()));
    c.output().unwrap()
}

/// Measures every figure in the DOM: a copy of the page with a probe script (the report
/// itself has none) that writes each figure's rendered size and any error into the DOM,
/// read back with --dump-dom.
pub const PROBE: &str = r#"<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message)));
const ce = console.error; console.error = (...a) => { window.__errors.push(a.join(' ')); ce(...a); };
window.addEventListener('load', () => {
  const sizes = [...document.querySelectorAll('figure.figure')].map(f => {
    const s = f.querySelector('svg'); const r = s ? s.getBoundingClientRect() : {width: 0, height: 0};
    return [f.id, Math.round(r.width), Math.round(r.height)];
  });
  const pre = document.createElement('pre'); pre.id = 'probe';
  pre.textContent = 'PROBE' + JSON.stringify({sizes, errors: window.__errors}) + 'EBORP';
  document.body.appendChild(pre);
});
</script>"#;

/// Opens `page` (whose text is `html`) in `browser`: a screenshot into `dir` with more
/// than `min_ink` of its pixels inked and some colour, no console message, and the probe's JSON (each figure's rendered size, script
/// errors: none) from a copy of the page with the probe in it.
pub fn open_in_browser(
    browser: &Path,
    dir: &Path,
    page: &Path,
    html: &str,
    min_ink: f64,
) -> serde_json::Value {
    let profile = super::tempdir(dir, "profile");
    let shot = dir.join("screenshot.png");
    let o = headless(
        browser,
        &profile,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1400,2600".into(),
            "--hide-scrollbars".into(),
        ],
        page,
    );
    let (_, log) = super::text(&o);
    assert!(shot.is_file(), "no screenshot: {log}");
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:?}");
    let (share, colour) = ink(&shot);
    assert!(
        share > min_ink && colour,
        "the screenshot looks blank: {share:.4}"
    );

    let probe_page = dir.join("page-probe.html");
    std::fs::write(
        &probe_page,
        html.replacen("<head>", &format!("<head>{PROBE}"), 1),
    )
    .unwrap();
    let profile = super::tempdir(dir, "profile2");
    let o = headless(
        browser,
        &profile,
        &["--dump-dom".into(), "--window-size=1400,2600".into()],
        &probe_page,
    );
    let (dom, log) = super::text(&o);
    let json = dom
        .split("<pre id=\"probe\">PROBE")
        .nth(1)
        .and_then(|s| s.split("EBORP").next())
        .unwrap_or_else(|| panic!("no probe output: {log}"));
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(v["errors"].as_array().unwrap().len(), 0, "{v}");
    v
}
