//! The correctness gate over everything, checked the same way for each cross build
//! (tests/arm_emulated.rs on glibc, tests/musl_emulated.rs on musl).
#![allow(dead_code)]

use serde_json::Value;

/// A short `speed` over every algorithm and implementation.
pub const SPEED_EVERYTHING: &[&str] = &[
    "speed", "--alg", "*", "--time", "0.01", "--sizes", "1k", "--format", "json",
];

/// What a speed document's gate refused (anything excluded but not merely not offered).
pub fn refused(v: &Value) -> Vec<&Value> {
    v["exclusions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] != "not_offered")
        .collect()
}

/// `speed --list` (`list`) and the `SPEED_EVERYTHING` document `v` of the build `what`:
/// every implementation of `in_process` is there, nothing is refused by the gate, every
/// offered (implementation, algorithm) is measured in both directions, the records are of
/// `arch`, and, when `emulated`, each says so.
pub fn check(what: &str, list: &str, v: &Value, in_process: &[&str], arch: &str, emulated: bool) {
    let text = list;
    for &name in in_process {
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!("{name}: ")) && !l.contains("not available")),
            "{name} missing from --list on {what}:\n{text}"
        );
    }
    assert_eq!(v["environment"]["emulated"], emulated, "{what}");
    assert_eq!(v["environment"]["cpu"]["arch"], arch, "{what}");
    let refused = refused(v);
    assert!(
        refused.is_empty(),
        "the gate refused on {what}: {refused:?}"
    );
    let records = v["records"].as_array().unwrap();
    for &name in in_process {
        let mine: Vec<&Value> = records.iter().filter(|r| r["impl"] == name).collect();
        assert!(!mine.is_empty(), "{name}: nothing measured on {}", what);
        // Each offered algorithm: enc always, dec for everything but hashes and HMAC.
        for alg in mine.iter().map(|r| r["alg"].as_str().unwrap()) {
            let dirs: Vec<&str> = mine
                .iter()
                .filter(|r| r["alg"] == alg)
                .map(|r| r["direction"].as_str().unwrap())
                .collect();
            let hash = alg.starts_with("sha") || alg.starts_with("hmac");
            // Public-key operations: a signature both ways, a KEM both ways, an agreement.
            let whole = if dirs.contains(&"sign") || dirs.contains(&"verify") {
                dirs.contains(&"sign") && dirs.contains(&"verify")
            } else if dirs.contains(&"encaps") || dirs.contains(&"decaps") {
                dirs.contains(&"encaps") && dirs.contains(&"decaps")
            } else if dirs.contains(&"derive") {
                true
            } else {
                dirs.contains(&"enc") && (hash || dirs.contains(&"dec"))
            };
            assert!(whole, "{name} {alg}: {dirs:?}");
        }
    }
    // What --list says each implementation offers was all measured.
    let mut current = "";
    for line in text.lines() {
        if let Some((name, _)) = line.split_once(": ").filter(|_| !line.starts_with(' ')) {
            current = name;
        } else if let Some(algs) = line.trim_start().strip_prefix("offers: ") {
            // Legacy ciphers carry a "(legacy)" mark in the list; records use the name.
            for alg in algs.split(", ").map(|a| a.trim_end_matches(" (legacy)")) {
                assert!(
                    records
                        .iter()
                        .any(|r| r["impl"] == current && r["alg"] == alg),
                    "{current} offers {alg} on {} but it was not measured",
                    what
                );
            }
        }
    }
    for r in records {
        // Bulk points have a byte rate; public-key points an operation rate instead.
        let rate = r["throughput_bps"]
            .as_f64()
            .or_else(|| r["ops_per_s"].as_f64())
            .unwrap_or_else(|| panic!("neither throughput_bps nor ops_per_s: {r}"));
        assert!(rate > 0.0, "{r}");
        let noted = r["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("emulated"));
        assert!(
            noted || !emulated,
            "{what}: record without the emulation note: {r}"
        );
    }
}
