//! The one skip rule, shared by the integration tests (tests/common) and the unit tests
//! (crates/impls/src/testing.rs includes this file).

/// Call when a test cannot run on this machine, then `return`. Prints `SKIPPED: why`.
/// Under `CRYPTOBENCH_REQUIRE_ALL=1` (CI) a skip is a failure, so that a green run proves
/// that every test ran.
pub fn skip(why: &str) {
    if std::env::var("CRYPTOBENCH_REQUIRE_ALL").as_deref() == Ok("1") {
        panic!("SKIPPED: {why} (CRYPTOBENCH_REQUIRE_ALL=1 makes a skip a failure)");
    }
    eprintln!("SKIPPED: {why}");
}
