//! Shared by the integration tests: how a test that cannot run here says so.
#![allow(dead_code)]

/// Call when a test cannot run on this machine, then `return`. Prints `SKIPPED: why`.
/// Under `CRYPTOBENCH_REQUIRE_ALL=1` (CI) a skip is a failure, so that a green run proves
/// that every test ran.
pub fn skip(why: &str) {
    if std::env::var("CRYPTOBENCH_REQUIRE_ALL").as_deref() == Ok("1") {
        panic!("SKIPPED: {why} (CRYPTOBENCH_REQUIRE_ALL=1 makes a skip a failure)");
    }
    eprintln!("SKIPPED: {why}");
}

/// The one switch for every guest (qemu) test: `CRYPTOBENCH_SKIP_GUEST=1` turns them off.
/// Returns false (after reporting the skip) when they are off.
pub fn guest_enabled() -> bool {
    if std::env::var("CRYPTOBENCH_SKIP_GUEST").as_deref() == Ok("1") {
        skip("CRYPTOBENCH_SKIP_GUEST=1 turns the guest tests off");
        return false;
    }
    true
}

/// True when running as root (namespaces, nginx on any port, perf on every process).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Equal line by line; on a difference, says where (the lines are long).
pub fn same_lines(a: &str, b: &str) {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    assert_eq!(a.len(), b.len(), "line counts differ");
    if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
        let at = a[i]
            .bytes()
            .zip(b[i].bytes())
            .take_while(|(x, y)| x == y)
            .count();
        panic!(
            "line {} differs at byte {at}: {:?} / {:?}",
            i + 1,
            &a[i][at.saturating_sub(40)..(at + 40).min(a[i].len())],
            &b[i][at.saturating_sub(40)..(at + 40).min(b[i].len())]
        );
    }
}
