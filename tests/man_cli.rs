//! Shell completions and the man pages: one page per subcommand, each listing its flags,
//! with the exit codes and environment on the main page.
mod common;

use common::{run, text, BIN};
use std::process::Command;

#[test]
fn completions_and_man_page() {
    for (shell, needle) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef cryptobench"),
        ("fish", "complete -c cryptobench"),
    ] {
        let o = run(&["completions", shell]);
        let (out, err) = text(&o);
        assert!(o.status.success(), "{err}");
        assert!(
            out.contains(needle) && out.contains("compare"),
            "{shell}: {}",
            &out[..out.len().min(200)]
        );
    }
    let o = run(&["man"]);
    let (out, _) = text(&o);
    assert!(
        o.status.success() && out.contains(".TH cryptobench") && out.contains("report"),
        "{}",
        &out[..out.len().min(300)]
    );
}

/// The subcommands `--help` lists under "Commands:" (clap's `help` has no page).
fn subcommands_of(path: &[String]) -> Vec<String> {
    let o = Command::new(BIN).args(path).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&o.stdout).into_owned();
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// The long flags `--help` lists under its options.
fn flags_of(path: &[String]) -> Vec<String> {
    let o = Command::new(BIN).args(path).arg("--help").output().unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('-'))
        .flat_map(|l| l.split([' ', ',', '=', '<', '[']))
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(str::to_string)
        .collect()
}

/// `man --dir` writes a page for every subcommand at any depth, each listing its flags;
/// every page a page refers to exists; the main page has the exit codes and environment.
#[test]
fn man_pages_cover_every_subcommand_and_its_flags() {
    let dir = std::env::temp_dir().join(format!("cbench-man-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let o = run(&["man", "--dir", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{:?}", text(&o));
    // Roff writes a hyphen as \-.
    let page = |name: &str| -> Option<String> {
        std::fs::read_to_string(dir.join(format!("{name}.1")))
            .ok()
            .map(|p| p.replace("\\-", "-"))
    };
    let mut todo: Vec<Vec<String>> = vec![Vec::new()];
    let mut checked = 0;
    while let Some(path) = todo.pop() {
        let name = std::iter::once("cryptobench".to_string())
            .chain(path.iter().cloned())
            .collect::<Vec<_>>()
            .join("-");
        let text = page(&name).unwrap_or_else(|| panic!("no page {name}.1"));
        for flag in flags_of(&path) {
            assert!(text.contains(&flag), "{name}.1 does not list {flag}");
        }
        for sub in subcommands_of(&path) {
            let mut p = path.clone();
            p.push(sub);
            todo.push(p);
        }
        checked += 1;
    }
    assert!(checked > 12, "only {checked} pages");
    // Every NAME(1) any page refers to is a page.
    for entry in std::fs::read_dir(&dir).unwrap() {
        let file = entry.unwrap().path();
        let text = std::fs::read_to_string(&file).unwrap().replace("\\-", "-");
        for (at, _) in text.match_indices("(1)") {
            let before = &text[..at];
            let start = before
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .map_or(0, |i| i + 1);
            let referred = &before[start..];
            assert!(
                page(referred).is_some(),
                "{} refers to {referred}(1), which has no page",
                file.display()
            );
        }
    }
    let main = page("cryptobench").unwrap();
    for needle in [
        ".SH \"EXIT STATUS\"",
        ".SH \"ENVIRONMENT\"",
        "CRYPTOBENCH_STORE",
        "XDG_DATA_HOME",
        "CRYPTOBENCH_REQUIRE_ALL",
        "130",
    ] {
        assert!(main.contains(needle), "the main page lacks {needle}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
