//! BoringSSL through what the binary builds on the providers: the timed loop's
//! public-key operations and the correctness gate (the provider's own tests are in
//! crates/impls/src/impls/boringssl).

use crate::algorithms::{Algorithm, Direction};
use crate::impls::boringssl::BoringSsl;
use crate::impls::rustcrypto::RustCrypto;
use crate::impls::{Implementation, Io};

/// The public-key operations BoringSSL offers here (12: see its own tests).
fn wanted() -> Vec<Algorithm> {
    let algs: Vec<Algorithm> = Algorithm::ALL
        .into_iter()
        .filter(|a| crate::impls::boringssl::pkey::offers(*a))
        .collect();
    assert_eq!(algs.len(), 12, "{algs:?}");
    algs
}

#[test]
fn every_direction_runs_as_the_timed_loop_calls_it() {
    for alg in wanted() {
        for &dir in alg.directions() {
            let mut op = crate::measure::pkey::operation(&BoringSsl, alg, dir, 0)
                .unwrap_or_else(|e| panic!("{alg} {dir}: {e}"));
            let mut buf = [0u8; 8];
            // More calls than the input pool holds, so it wraps around.
            for _ in 0..20 {
                op.process(
                    &[],
                    &[],
                    Io::InPlace {
                        buf: &mut buf,
                        len: 0,
                    },
                )
                .unwrap_or_else(|e| panic!("{alg} {dir}: {e}"));
            }
        }
    }
    assert!(
        crate::measure::pkey::operation(&BoringSsl, Algorithm::Ed25519, Direction::Derive, 0)
            .is_err()
    );
}

/// The test suite's deliberately wrong wrapper around BoringSSL never passes the gate
/// that `speed` runs before timing. (For ML-KEM the round trip refuses it: BoringSSL
/// cannot import the FIPS 203 vector's expanded key, and a corrupt encaps and decaps
/// agree with each other.)
#[cfg(feature = "test-corrupt")]
#[test]
fn a_corrupted_boringssl_is_refused_before_timing() {
    use crate::verify::{check_paths, Suite};
    let impls: Vec<Box<dyn Implementation>> = vec![
        Box::new(crate::impls::corrupt::Corrupt(Box::new(BoringSsl))),
        Box::new(RustCrypto),
    ];
    let algs = wanted();
    let (checks, not_offered) = check_paths(&impls, &[0], &algs, Suite::GATE);
    assert!(not_offered.is_empty(), "{not_offered:?}");
    assert_eq!(checks.len(), algs.len());
    for c in &checks {
        assert!(c.failures().next().is_some(), "{} passed the gate", c.alg);
    }
    // The real one passes the same gate.
    let impls: Vec<Box<dyn Implementation>> = vec![Box::new(BoringSsl), Box::new(RustCrypto)];
    let (checks, _) = check_paths(&impls, &[0], &algs, Suite::GATE);
    for c in &checks {
        let first = c.failures().next().map(|f| format!("{f:?}"));
        assert!(first.is_none(), "{}: {first:?}", c.alg);
        assert_eq!(c.reference.as_deref(), Some("rustcrypto"), "{}", c.alg);
    }
}
