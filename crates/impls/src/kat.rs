//! Correctness before timing: known-answer vectors, a forged-tag check, and a round
//! trip against a second implementation. An Operation that fails here is never timed.

use crate::algorithms::{Algorithm, Direction, Kind, TIMED_AAD_LEN};
use crate::impls::{Implementation, Io};
use anyhow::anyhow;
pub use tally::Tally;
pub use vector::Vector;
use vectors::vectors;

pub mod pkey;
pub mod tally;
pub mod vector;
pub mod vectors;
pub mod vectors_legacy;
pub(crate) mod vectors_pkey;

/// Extra output room every buffer gets (a tag or the largest digest).
pub const SLACK: usize = 64;

fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s).expect("catalogue vectors are valid hex")
}

/// Runs one message through a fresh Operation the way the timed loop does: enc in
/// place, dec from a separate input. The same Operation is used twice, so that state
/// left over from the first message is caught.
pub fn run_twice(
    imp: &dyn Implementation,
    alg: Algorithm,
    dir: Direction,
    key: &[u8],
    nonce: &[u8],
    aad: &[u8],
    input: &[u8],
) -> anyhow::Result<Vec<u8>> {
    let mut op = imp.prepare(alg, dir, key)?;
    let mut first = Vec::new();
    for round in 0..2 {
        let out = match dir {
            Direction::Enc => {
                let mut buf = vec![0u8; input.len() + SLACK];
                buf[..input.len()].copy_from_slice(input);
                let n = op.process(
                    nonce,
                    aad,
                    Io::InPlace {
                        buf: &mut buf,
                        len: input.len(),
                    },
                )?;
                let start = if matches!(alg.kind(), Kind::Hash | Kind::Mac) {
                    input.len()
                } else {
                    0
                };
                buf[start..start + n].to_vec()
            }
            _ => {
                let mut out = vec![0u8; input.len() + SLACK];
                let n = op.process(
                    nonce,
                    aad,
                    Io::Separate {
                        input,
                        output: &mut out,
                    },
                )?;
                out.truncate(n);
                out
            }
        };
        let expect = match dir {
            Direction::Enc => alg.output_len(dir, input.len()),
            _ => alg.output_len(dir, input.len().saturating_sub(alg.input_len(dir, 0))),
        };
        if out.len() != expect {
            return Err(anyhow!(
                "returned {} output bytes, expected {expect}",
                out.len()
            ));
        }
        if round == 0 {
            first = out;
        } else if out != first {
            return Err(anyhow!("a second message with the same inputs gave a different result (state leaks between calls)"));
        }
    }
    Ok(first)
}

/// An AEAD open of `sealed` must fail, on the first call and again on a second call to
/// the same Operation. (A path that accepts and only then breaks would pass a check on
/// the last call.) Err says on which call it was accepted.
pub fn open_refuses(
    imp: &dyn Implementation,
    alg: Algorithm,
    (key, nonce, aad): (&[u8], &[u8], &[u8]),
    sealed: &[u8],
) -> anyhow::Result<()> {
    let mut op = imp.prepare(alg, Direction::Dec, key)?;
    for call in 1..=2 {
        let mut out = vec![0u8; sealed.len() + SLACK];
        let io = Io::Separate {
            input: sealed,
            output: &mut out,
        };
        if let Ok(n) = op.process(nonce, aad, io) {
            return Err(anyhow!("was accepted on call {call} (opened to {n} bytes)"));
        }
    }
    Ok(())
}

pub fn short(b: &[u8]) -> String {
    let h = hex::encode(b);
    if h.len() > 48 {
        format!("{}…", &h[..48])
    } else {
        h
    }
}

/// Checks every known-answer vector for `alg` in both directions, and that an AEAD
/// open refuses the vector with its tag's last bit flipped. One vector, one count.
pub fn check_known_answers(imp: &dyn Implementation, alg: Algorithm, tally: &mut Tally) {
    if alg.kind().is_public_key() {
        let source = "public-key known answers (kat/vectors_pkey.rs) and own-key checks";
        tally.record(
            source,
            "",
            pkey::known_answers(imp, alg).map_err(|e| e.to_string()),
        );
        return;
    }
    for v in vectors(alg) {
        tally.record(
            v.source,
            "",
            known_answer(imp, alg, v).map_err(|e| e.to_string()),
        );
    }
}

/// The gate's form of [`check_known_answers`]: the first failure, if any.
pub fn known_answers(imp: &dyn Implementation, alg: Algorithm) -> anyhow::Result<()> {
    let mut t = Tally::default();
    check_known_answers(imp, alg, &mut t);
    t.first_failure()
}

fn known_answer(imp: &dyn Implementation, alg: Algorithm, v: &Vector) -> anyhow::Result<()> {
    let (key, nonce, aad, input, output) = (
        unhex(v.key),
        unhex(v.nonce),
        unhex(v.aad),
        unhex(v.input),
        unhex(v.output),
    );
    let check = |dir: Direction, from: &[u8], expected: &[u8]| {
        let got = run_twice(imp, alg, dir, &key, &nonce, &aad, from)
            .map_err(|e| anyhow!("({dir}) {e}"))?;
        if got != expected {
            return Err(anyhow!(
                "({dir}) expected {}, got {}",
                short(expected),
                short(&got)
            ));
        }
        Ok(())
    };
    check(Direction::Enc, &input, &output)?;
    if alg.directions().contains(&Direction::Dec) {
        check(Direction::Dec, &output, &input)?;
    }
    if alg.kind() == Kind::Aead {
        let mut forged = output.clone();
        let last = forged.len() - 1;
        forged[last] ^= 1;
        open_refuses(imp, alg, (&key, &nonce, &aad), &forged)
            .map_err(|e| anyhow!("(dec) a forged tag {e}"))?;
    }
    Ok(())
}

/// Deterministic, non-trivial bytes.
pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| {
            (i as u32)
                .wrapping_mul(2654435761)
                .rotate_left(seed as u32 % 31) as u8
                ^ seed
        })
        .collect()
}

/// Round trip against a second, already verified implementation, at message shapes
/// the timed loop uses: A seals and B opens, then B seals and A opens; digests match.
/// One size, one count.
pub fn check_round_trip(
    a: &dyn Implementation,
    b: &dyn Implementation,
    alg: Algorithm,
    tally: &mut Tally,
) {
    if alg.kind().is_public_key() {
        let what = "signature made by one verifies with the other; same shared secret; decapsulation recovers the secret";
        tally.record(
            what,
            "",
            pkey::cross_check(a, b, alg).map_err(|e| e.to_string()),
        );
        return;
    }
    let key = pattern(alg.key_len(), 7);
    let nonce = pattern(alg.nonce_len(), 9);
    let aad = if alg.kind() == Kind::Aead {
        pattern(TIMED_AAD_LEN, 11)
    } else {
        Vec::new()
    };
    for size in [16usize, 1344, 1350, 16400] {
        if let Some(reason) = alg.size_problem(size) {
            tally.not_applicable(reason);
            continue;
        }
        let msg = pattern(size, size as u8);
        let r = [(a, b), (b, a)]
            .into_iter()
            .try_for_each(|(x, y)| round_trip_once(x, y, alg, (&key, &nonce, &aad), &msg));
        tally.record(
            format!("round trip at {size} bytes with {}", b.name()),
            "",
            r.map_err(|e| e.to_string()),
        );
    }
}

/// The gate's form of [`check_round_trip`]: the first failure, if any.
#[cfg_attr(not(test), allow(dead_code))] // the gate runs check_round_trip; unit tests use this
pub fn round_trip(
    a: &dyn Implementation,
    b: &dyn Implementation,
    alg: Algorithm,
) -> anyhow::Result<()> {
    let mut t = Tally::default();
    check_round_trip(a, b, alg, &mut t);
    t.first_failure()
}

/// X seals (or digests) and Y opens (or digests again); both must give the message back.
fn round_trip_once(
    x: &dyn Implementation,
    y: &dyn Implementation,
    alg: Algorithm,
    (key, nonce, aad): (&[u8], &[u8], &[u8]),
    msg: &[u8],
) -> anyhow::Result<()> {
    let sealed = run_twice(x, alg, Direction::Enc, key, nonce, aad, msg)
        .map_err(|e| anyhow!("{} enc: {e}", x.name()))?;
    let opens = alg.directions().contains(&Direction::Dec);
    let back = if opens {
        run_twice(y, alg, Direction::Dec, key, nonce, aad, &sealed)
            .map_err(|e| anyhow!("{} sealed, {} opened: {e}", x.name(), y.name()))?
    } else {
        run_twice(y, alg, Direction::Enc, key, nonce, aad, msg)
            .map_err(|e| anyhow!("{} enc: {e}", y.name()))?
    };
    let expect = if opens { msg } else { &sealed[..] };
    if back != expect {
        return Err(anyhow!(
            "{} and {} disagree ({} vs {})",
            x.name(),
            y.name(),
            short(expect),
            short(&back)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::impls::rustcrypto::RustCrypto;
    use crate::impls::{registry, Access, Support};

    /// Every in-process implementation of this build, on every algorithm it offers:
    /// the known answers, and a round trip with RustCrypto (RustCrypto with itself).
    #[test]
    fn every_in_process_implementation_passes_the_gate() {
        let reg = registry(&[], &[]).expect("registry");
        let names: Vec<&str> = reg.found.iter().map(|i| i.name()).collect();
        for required in ["openssl", "aws-lc", "ring", "rustcrypto", "libsodium"] {
            assert!(names.contains(&required), "{required} missing: {names:?}");
        }
        #[cfg(feature = "boringssl")]
        assert!(names.contains(&"boringssl"), "{names:?}");
        for imp in reg.found.iter().filter(|i| i.access() == Access::InProcess) {
            for alg in Algorithm::ALL
                .into_iter()
                .filter(|a| imp.support(*a) == Support::Yes)
            {
                known_answers(imp.as_ref(), alg)
                    .unwrap_or_else(|e| panic!("{} {alg}: {e}", imp.name()));
                round_trip(imp.as_ref(), &RustCrypto, alg)
                    .unwrap_or_else(|e| panic!("{} {alg} with rustcrypto: {e}", imp.name()));
            }
        }
    }
}
