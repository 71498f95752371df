//! Correctness before timing: known-answer vectors, a forged-tag check, and a round
//! trip against a second implementation. An Operation that fails here is never timed.

use crate::algorithms::{vectors, Algorithm, Direction, Kind, TIMED_AAD_LEN};
use crate::impls::{Implementation, Io};

pub mod pkey;
mod vectors_pkey;

/// Extra output room every buffer gets (a tag or the largest digest).
pub const SLACK: usize = 64;

fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s).expect("catalogue vectors are valid hex")
}

/// Runs one message through a fresh Operation the way the timed loop does: enc in
/// place, dec from a separate input. The same Operation is used twice, so that state
/// left over from the first message is caught.
fn run_twice(
    imp: &dyn Implementation,
    alg: Algorithm,
    dir: Direction,
    key: &[u8],
    nonce: &[u8],
    aad: &[u8],
    input: &[u8],
) -> Result<Vec<u8>, String> {
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
            return Err(format!(
                "returned {} output bytes, expected {expect}",
                out.len()
            ));
        }
        if round == 0 {
            first = out;
        } else if out != first {
            return Err("a second message with the same inputs gave a different result (state leaks between calls)".into());
        }
    }
    Ok(first)
}

fn short(b: &[u8]) -> String {
    let h = hex::encode(b);
    if h.len() > 48 {
        format!("{}…", &h[..48])
    } else {
        h
    }
}

/// Checks every known-answer vector for `alg` in both directions.
pub fn known_answers(imp: &dyn Implementation, alg: Algorithm) -> Result<(), String> {
    if alg.kind().is_public_key() {
        return pkey::known_answers(imp, alg);
    }
    for v in vectors(alg) {
        let (key, nonce, aad, input, output) = (
            unhex(v.key),
            unhex(v.nonce),
            unhex(v.aad),
            unhex(v.input),
            unhex(v.output),
        );
        let got = run_twice(imp, alg, Direction::Enc, &key, &nonce, &aad, &input)
            .map_err(|e| format!("{} (enc): {e}", v.source))?;
        if got != output {
            return Err(format!(
                "{} (enc): expected {}, got {}",
                v.source,
                short(&output),
                short(&got)
            ));
        }
        if alg.directions().contains(&Direction::Dec) {
            let got = run_twice(imp, alg, Direction::Dec, &key, &nonce, &aad, &output)
                .map_err(|e| format!("{} (dec): {e}", v.source))?;
            if got != input {
                return Err(format!(
                    "{} (dec): expected {}, got {}",
                    v.source,
                    short(&input),
                    short(&got)
                ));
            }
        }
        if alg.kind() == Kind::Aead {
            let mut forged = output.clone();
            let last = forged.len() - 1;
            forged[last] ^= 1;
            if run_twice(imp, alg, Direction::Dec, &key, &nonce, &aad, &forged).is_ok() {
                return Err(format!("{} (dec): a forged tag was accepted", v.source));
            }
        }
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
pub fn round_trip(
    a: &dyn Implementation,
    b: &dyn Implementation,
    alg: Algorithm,
) -> Result<(), String> {
    if alg.kind().is_public_key() {
        return pkey::cross_check(a, b, alg);
    }
    let key = pattern(alg.key_len(), 7);
    let nonce = pattern(alg.nonce_len(), 9);
    let aad = if alg.kind() == Kind::Aead {
        pattern(TIMED_AAD_LEN, 11)
    } else {
        Vec::new()
    };
    for size in [16usize, 1344, 1350, 16400] {
        if alg.size_problem(size).is_some() {
            continue;
        }
        let msg = pattern(size, size as u8);
        for (x, y) in [(a, b), (b, a)] {
            let sealed = run_twice(x, alg, Direction::Enc, &key, &nonce, &aad, &msg)
                .map_err(|e| format!("round trip at {size} bytes: {} enc: {e}", x.name()))?;
            let back = if alg.directions().contains(&Direction::Dec) {
                run_twice(y, alg, Direction::Dec, &key, &nonce, &aad, &sealed).map_err(|e| {
                    format!(
                        "round trip at {size} bytes: {} sealed, {} opened: {e}",
                        x.name(),
                        y.name()
                    )
                })?
            } else {
                run_twice(y, alg, Direction::Enc, &key, &nonce, &aad, &msg)?
            };
            let expect = if alg.directions().contains(&Direction::Dec) {
                &msg
            } else {
                &sealed
            };
            if &back != expect {
                return Err(format!(
                    "round trip at {size} bytes: {} and {} disagree ({} vs {})",
                    x.name(),
                    y.name(),
                    short(expect),
                    short(&back)
                ));
            }
        }
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
