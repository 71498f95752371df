//! The list of measurement points, checked before anything runs: filters, sizes,
//! threads, and the correctness gate (known answers and round trip).

use crate::algorithms::{parse_size, Algorithm, Direction, DEFAULT_SIZES};
use crate::impls::{Implementation, Unavailable};
use crate::verify;
use anyhow::anyhow;

/// Largest thread count accepted: far beyond any core count we expect to meet.
pub const MAX_THREADS: usize = 1024;

/// One algorithm, direction and size, measured on several implementations at every
/// thread count, with all their trials interleaved (so that drift hits the 1-thread and
/// N-thread points of a scaling efficiency alike).
#[derive(Clone, Debug)]
pub struct Group {
    pub alg: Algorithm,
    pub direction: Direction,
    pub size: usize,
    pub threads: Vec<usize>,
    /// Indexes into the implementation list.
    pub impls: Vec<usize>,
}

impl Group {
    /// The group's points, in the order their trials run: (implementation, threads).
    pub fn points(&self) -> Vec<(usize, usize)> {
        self.threads
            .iter()
            .flat_map(|&t| self.impls.iter().map(move |&i| (i, t)))
            .collect()
    }
}

pub use crate::record::{Exclusion, ExclusionKind, Workload};

/// A speed point not measured: the path's label, the algorithm and, where it matters, the size.
pub fn excluded(
    label: &str,
    alg: Algorithm,
    kind: ExclusionKind,
    size: Option<usize>,
    reason: String,
) -> Exclusion {
    let point = [
        ("alg".to_string(), alg.name().into()),
        ("size".to_string(), size.map(|s| s as u64).into()),
    ]
    .into();
    Exclusion {
        workload: Workload::Speed,
        implementation: label.into(),
        kind,
        reason,
        point,
    }
}

/// A shell-style pattern over a name: `*` (any run), `?` (one character) and `[...]` (one
/// of a set or range, `[!...]` none of them). Names have no `/`, so that is all of it, and
/// it costs no regex engine in the router build.
pub struct Glob(Vec<Tok>);

enum Tok {
    Char(char),
    Any,
    Star,
    Set {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

impl Glob {
    pub fn new(pattern: &str) -> Result<Glob, String> {
        let mut toks = Vec::new();
        let mut chars = pattern.chars();
        while let Some(c) = chars.next() {
            toks.push(match c {
                '*' => Tok::Star,
                '?' => Tok::Any,
                '[' => {
                    let mut body: Vec<char> = Vec::new();
                    // A `]` first in the set is a member, as in the shell.
                    loop {
                        match chars.next() {
                            Some(']') if !body.is_empty() && body != ['!'] => break,
                            Some(c) => body.push(c),
                            None => return Err("unclosed character class; missing ']'".into()),
                        }
                    }
                    let negated = body[0] == '!';
                    let body = &body[negated as usize..];
                    let mut ranges = Vec::new();
                    let mut i = 0;
                    while i < body.len() {
                        if i + 2 < body.len() && body[i + 1] == '-' {
                            ranges.push((body[i], body[i + 2]));
                            i += 3;
                        } else {
                            ranges.push((body[i], body[i]));
                            i += 1;
                        }
                    }
                    Tok::Set { negated, ranges }
                }
                c => Tok::Char(c),
            });
        }
        Ok(Glob(toks))
    }

    pub fn is_match(&self, name: &str) -> bool {
        let name: Vec<char> = name.chars().collect();
        matches(&self.0, &name)
    }
}

fn matches(toks: &[Tok], name: &[char]) -> bool {
    match toks.split_first() {
        None => name.is_empty(),
        Some((Tok::Star, rest)) => (0..=name.len()).any(|i| matches(rest, &name[i..])),
        Some((tok, rest)) => {
            let Some((&c, tail)) = name.split_first() else {
                return false;
            };
            let one = match tok {
                Tok::Char(p) => *p == c,
                Tok::Any => true,
                Tok::Set { negated, ranges } => {
                    ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != *negated
                }
                Tok::Star => unreachable!("handled above"),
            };
            one && matches(rest, tail)
        }
    }
}

fn glob_list(list: &str, what: &str) -> anyhow::Result<Vec<(String, Glob)>> {
    if list.split(',').all(|s| s.trim().is_empty()) {
        return Err(anyhow!(
            "{what} is empty: name at least one, e.g. {what} {}",
            if what == "--impl" {
                "openssl,ring"
            } else {
                "aes-128-gcm"
            }
        ));
    }
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|p| {
            let p = p.to_ascii_lowercase();
            Glob::new(&p)
                .map(|g| (p.clone(), g))
                .map_err(|e| anyhow!("invalid {what} pattern '{p}': {e}"))
        })
        .collect()
}

/// Implementations selected by `--impl` (comma-separated globs). A pattern that names no
/// implementation at all is an input error; one that names only missing ones is not.
pub fn select_impls(
    list: Option<&str>,
    found: &[Box<dyn Implementation>],
    missing: &[Unavailable],
) -> anyhow::Result<(Vec<usize>, Vec<Unavailable>)> {
    let Some(list) = list else {
        return Ok(((0..found.len()).collect(), missing.to_vec()));
    };
    let known: Vec<&str> = crate::impls::NAMES.to_vec();
    let mut chosen = Vec::new();
    let mut absent = Vec::new();
    for (pat, m) in glob_list(list, "--impl")? {
        let any_known = known.iter().any(|n| m.is_match(n));
        if !any_known {
            return Err(anyhow!(
                "unknown implementation '{pat}': choose from {} (globs allowed)",
                known.join(", ")
            ));
        }
        for (i, imp) in found.iter().enumerate() {
            if m.is_match(imp.name()) && !chosen.contains(&i) {
                chosen.push(i);
            }
        }
        // A missing variant is named "openssl [engine=afalg]": match its base name.
        let base = |n: &str| n.split(" [").next().unwrap_or(n).to_string();
        for u in missing
            .iter()
            .filter(|u| m.is_match(&u.name) || m.is_match(&base(&u.name)))
        {
            absent.push(u.clone());
        }
    }
    Ok((chosen, absent))
}

/// Algorithms selected by `--alg` (comma-separated globs such as `aes-*-gcm`).
pub fn select_algs(list: Option<&str>) -> anyhow::Result<Vec<Algorithm>> {
    let Some(list) = list else {
        return Ok(Algorithm::ALL.to_vec());
    };
    let mut out = Vec::new();
    for (pat, m) in glob_list(list, "--alg")? {
        let hits: Vec<Algorithm> = Algorithm::ALL
            .into_iter()
            .filter(|a| m.is_match(a.name()))
            .collect();
        if hits.is_empty() {
            let names: Vec<&str> = Algorithm::ALL.iter().map(|a| a.name()).collect();
            return Err(anyhow!(
                "unknown algorithm '{pat}': choose from {} (globs allowed, e.g. aes-*-gcm)",
                names.join(", ")
            ));
        }
        for a in hits {
            if !out.contains(&a) {
                out.push(a);
            }
        }
    }
    if out.is_empty() {
        return Err(anyhow!(
            "--alg is empty: name at least one algorithm, e.g. --alg aes-128-gcm"
        ));
    }
    Ok(out)
}

/// A comma list, parsed once by clap into its values (`--sizes`, `--threads`,
/// `--direction`).
pub use crate::shell::args::List;

pub fn sizes_arg(s: &str) -> anyhow::Result<List<usize>> {
    parse_sizes(Some(s)).map(List)
}

pub fn threads_arg(s: &str) -> anyhow::Result<List<usize>> {
    parse_threads(Some(s)).map(List)
}

pub fn directions_arg(s: &str) -> anyhow::Result<List<Direction>> {
    parse_directions(Some(s)).map(List)
}

pub fn parse_directions(list: Option<&str>) -> anyhow::Result<Vec<Direction>> {
    let Some(list) = list else {
        return Ok(Direction::ALL.to_vec());
    };
    let mut out = Vec::new();
    for d in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let d = Direction::parse(&d.to_ascii_lowercase())
            .ok_or_else(|| {
                format!("unknown direction '{d}': use enc, dec, sign, verify, derive, keygen, encaps or decaps (comma-separated)")
            }).map_err(anyhow::Error::msg)?;
        if !out.contains(&d) {
            out.push(d);
        }
    }
    if out.is_empty() {
        return Err(anyhow!("--direction is empty: use enc, dec or enc,dec"));
    }
    Ok(out)
}

pub fn parse_sizes(list: Option<&str>) -> anyhow::Result<Vec<usize>> {
    let Some(list) = list else {
        return Ok(DEFAULT_SIZES.to_vec());
    };
    let mut out = Vec::new();
    for s in list.split(',') {
        let n = parse_size(s)?;
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out.sort_unstable();
    Ok(out)
}

pub fn parse_threads(list: Option<&str>) -> anyhow::Result<Vec<usize>> {
    let Some(list) = list else {
        return Ok(vec![1]);
    };
    let n = crate::units::counts(list, "--threads", 1..=MAX_THREADS as u64, "1,2,4")?;
    Ok(n.into_iter().map(|n| n as usize).collect())
}

/// The correctness gate: known answers and the round trip ([`verify::Suite::GATE`]) of
/// every selected (implementation, algorithm). Returns the pairs that may be timed and
/// the rest with the reason.
pub fn verify(
    impls: &[Box<dyn Implementation>],
    labels: &[String],
    selected: &[usize],
    algs: &[Algorithm],
) -> (Vec<(usize, Algorithm)>, Vec<Exclusion>) {
    let (checks, not_offered) = verify::check_paths(impls, selected, algs, verify::Suite::GATE);
    let mut ok = Vec::new();
    let mut refused: Vec<Exclusion> = not_offered
        .into_iter()
        .map(|(i, alg, reason)| excluded(&labels[i], alg, ExclusionKind::NotOffered, None, reason))
        .collect();
    for c in checks {
        let problem = match (c.known_answers.first_failure(), &c.round_trip) {
            (Err(e), _) => Some(format!("failed known-answer test: {e}")),
            (Ok(()), Some(t)) => t.first_failure().err().map(|e| {
                format!(
                    "failed round trip against {}: {e}",
                    c.reference.as_deref().unwrap_or("?")
                )
            }),
            // Known answers alone: there is nothing else to compare with.
            (Ok(()), None) => None,
        };
        match problem {
            Some(reason) => refused.push(excluded(
                &labels[c.index],
                c.alg,
                ExclusionKind::Refused,
                None,
                reason,
            )),
            None => ok.push((c.index, c.alg)),
        }
    }
    (ok, refused)
}

/// Groups of points to measure, and the sizes some algorithms cannot take.
pub fn build(
    verified: &[(usize, Algorithm)],
    labels: &[String],
    directions: &[Direction],
    sizes: &[usize],
    threads: &[usize],
) -> (Vec<Group>, Vec<Exclusion>) {
    let mut groups = Vec::new();
    let mut out = Vec::new();
    let mut algs: Vec<Algorithm> = verified.iter().map(|(_, a)| *a).collect();
    algs.sort();
    algs.dedup();
    for &alg in &algs {
        let impls: Vec<usize> = verified
            .iter()
            .filter(|(_, a)| *a == alg)
            .map(|(i, _)| *i)
            .collect();
        // Public-key operations have no size axis: one point, recorded as size 0.
        let sizes: &[usize] = if alg.kind().is_public_key() {
            &[0]
        } else {
            sizes
        };
        for &dir in alg.directions().iter().filter(|d| directions.contains(d)) {
            for &size in sizes {
                if let Some(reason) = alg.size_problem(size) {
                    if dir == alg.directions()[0] {
                        for &i in &impls {
                            out.push(excluded(
                                &labels[i],
                                alg,
                                ExclusionKind::SizeUnsupported,
                                Some(size),
                                reason.clone(),
                            ));
                        }
                    }
                    continue;
                }
                groups.push(Group {
                    alg,
                    direction: dir,
                    size,
                    threads: threads.to_vec(),
                    impls: impls.clone(),
                });
            }
        }
    }
    (groups, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matches_as_the_shell_does() {
        let m = |p: &str, n: &str| Glob::new(p).unwrap().is_match(n);
        assert!(m("aes-*-gcm", "aes-128-gcm") && !m("aes-*-gcm", "aes-128-cbc"));
        assert!(m("*", "") && m("sha*", "sha256") && !m("sha", "sha256"));
        assert!(m("aes-12?-gcm", "aes-128-gcm") && !m("aes-1?-gcm", "aes-128-gcm"));
        assert!(m("aes-[12]*", "aes-256-gcm") && !m("aes-[!12]*", "aes-256-gcm"));
        assert!(m("rsa[0-9]*-pss", "rsa2048-pss") && !m("rsa[a-f]*", "rsa2048"));
        assert!(m("[]x]", "]") && m("*-*-*", "aes-128-gcm"));
        assert!(Glob::new("aes-[12").is_err());
    }

    #[test]
    fn alg_globs_expand() {
        let a = select_algs(Some("aes-*-gcm")).unwrap();
        assert_eq!(
            a,
            vec![
                Algorithm::Aes128Gcm,
                Algorithm::Aes192Gcm,
                Algorithm::Aes256Gcm
            ]
        );
        assert!(select_algs(Some("rc5"))
            .unwrap_err()
            .to_string()
            .contains("unknown algorithm 'rc5'"));
    }

    #[test]
    fn threads_and_directions_validate() {
        assert_eq!(parse_threads(Some("4,1,2")).unwrap(), vec![1, 2, 4]);
        assert!(parse_threads(Some("0")).is_err());
        assert!(parse_threads(Some("x")).is_err());
        assert!(parse_directions(Some("up")).is_err());
    }

    #[test]
    fn cbc_skips_partial_blocks() {
        let labels = vec!["x".to_string()];
        let (groups, excl) = build(
            &[(0, Algorithm::Aes128Cbc)],
            &labels,
            &Direction::ALL,
            &[16, 1350],
            &[1],
        );
        assert_eq!(groups.len(), 2);
        assert!(groups.iter().all(|g| g.size == 16));
        assert_eq!(excl.len(), 1);
        assert_eq!(excl[0].kind, ExclusionKind::SizeUnsupported);
    }

    #[test]
    fn thread_counts_share_a_group() {
        let labels = vec!["a".to_string(), "b".to_string()];
        let (groups, _) = build(
            &[(0, Algorithm::Sha256), (1, Algorithm::Sha256)],
            &labels,
            &Direction::ALL,
            &[16],
            &[1, 2],
        );
        assert_eq!(groups.len(), 1);
        // Every implementation's 1-thread and 2-thread points, interleaved in one group.
        assert_eq!(groups[0].points(), vec![(0, 1), (1, 1), (0, 2), (1, 2)]);
    }
}
