//! The flags the README and the docs show are the flags the binary has: every
//! `cryptobench SUBCOMMAND ... --flag` in README.md, docs/*.md, bench/README.md and
//! guest/README.md (command lines and inline code alike) is looked up in that
//! subcommand's `--help`.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The documents checked.
fn documents() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut v = vec![
        root.join("README.md"),
        root.join("bench/README.md"),
        root.join("guest/README.md"),
    ];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    v.extend(docs);
    v
}

/// The subcommands `cryptobench --help` lists.
fn subcommands() -> BTreeSet<String> {
    let (out, _) = common::text(&common::run(&["--help"]));
    let (_, list) = out.split_once("Commands:").expect("a Commands: section");
    list.lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| *w != "help")
        .map(str::to_string)
        .collect()
}

/// `--flag` as written in a document: "--time=5," gives "--time".
fn flag_of(token: &str) -> Option<String> {
    let t = token.trim_matches(|c: char| "`'\"()[],.;:".contains(c));
    let t = t.split('=').next()?;
    (t.starts_with("--")
        && t.len() > 2
        && t[2..]
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
    .then(|| t.to_string())
}

/// Each (subcommand path, flag, where) documented: a command line starting with
/// `cryptobench SUB` (or a code span starting with `SUB `), its flags up to the end of
/// that command (a `&&`, `|`, `;` or `#` ends it). history's actions are part of the path.
fn documented(text: &str, file: &str, subs: &BTreeSet<String>) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let at = format!("{file}:{}", n + 1);
        // Command starts: after "cryptobench ", or at the start of a code span.
        let mut starts: Vec<&str> = line.split("cryptobench ").skip(1).collect();
        starts.extend(line.split('`').skip(1).step_by(2));
        for s in starts {
            let command = s
                .split(['`', '#', ';', '|', '&'])
                .next()
                .unwrap_or_default();
            let mut words = command.split_whitespace();
            let Some(sub) = words.next().filter(|w| subs.contains(*w)) else {
                continue;
            };
            let mut path = sub.to_string();
            let rest: Vec<&str> = words.collect();
            if sub == "history" {
                if let Some(action) = rest
                    .first()
                    .filter(|w| ["show", "tag", "rm", "export", "import", "trend"].contains(w))
                {
                    path = format!("history {action}");
                }
            }
            // A `$(other command ...)` inside is that command's flags, not these.
            let mut nested = 0usize;
            for w in rest {
                nested += w.matches("$(").count();
                if nested > 0 {
                    nested = nested.saturating_sub(w.matches(')').count());
                    continue;
                }
                if let Some(f) = flag_of(w) {
                    found.push((path.clone(), f, at.clone()));
                }
            }
        }
    }
    found
}

#[test]
fn every_documented_flag_is_in_its_commands_help() {
    let subs = subcommands();
    assert!(subs.contains("speed") && subs.contains("study"), "{subs:?}");
    let mut helps: BTreeMap<String, String> = BTreeMap::new();
    let mut checked = 0;
    let mut missing = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let name = doc
            .strip_prefix(env!("CARGO_MANIFEST_DIR"))
            .unwrap()
            .display()
            .to_string();
        for (path, flag, at) in documented(&text, &name, &subs) {
            let help = helps.entry(path.clone()).or_insert_with(|| {
                let mut args: Vec<&str> = path.split(' ').collect();
                args.push("--help");
                let o = common::run(&args);
                assert!(o.status.success(), "{path} --help: {:?}", common::text(&o));
                common::text(&o).0
            });
            checked += 1;
            let listed = help
                .split(|c: char| c.is_whitespace() || c == ',' || c == '=' || c == '[')
                .any(|w| w == flag);
            if !listed && flag != "--help" && flag != "--version" {
                missing.push(format!("{at}: cryptobench {path} {flag}"));
            }
        }
    }
    // The README alone documents well over a hundred flags: a parser that found none
    // would pass vacuously.
    assert!(checked > 100, "only {checked} documented flags found");
    assert!(
        missing.is_empty(),
        "documented but not in --help:\n{}",
        missing.join("\n")
    );
}

/// What `documented` finds on one line, without the places.
fn paths_and_flags(line: &str, subs: &BTreeSet<String>) -> Vec<(String, String)> {
    documented(line, "x", subs)
        .into_iter()
        .map(|(p, f, _)| (p, f))
        .collect()
}

/// The parser on a known line: flags after the subcommand, history's action in the
/// path, a comment or a second command ends the first.
#[test]
fn the_parser_reads_command_lines_and_code_spans() {
    let subs: BTreeSet<String> = ["speed", "history", "compare"]
        .into_iter()
        .map(String::from)
        .collect();
    let line = "cryptobench history show last --format json # --nope && cryptobench compare a b --fail-on-regression; see `speed --time 0.1` or `--bare`";
    let got = paths_and_flags(line, &subs);
    assert_eq!(
        got,
        [
            ("history show".to_string(), "--format".to_string()),
            ("compare".into(), "--fail-on-regression".into()),
            ("speed".into(), "--time".into()),
        ]
    );
    // A nested command's flags are its own; history trend is an action too.
    let line = r#"cryptobench speed --openssl "$(scripts/build-openssl 3.5 --no-asm)" --quick; `history trend --alg x`"#;
    let got = paths_and_flags(line, &subs);
    assert_eq!(
        got,
        [
            ("speed".to_string(), "--openssl".to_string()),
            ("speed".into(), "--quick".into()),
            ("history trend".into(), "--alg".into()),
        ]
    );
}
