//! The conformance suite: one set of tests that every entry of [`registry`] passes, the
//! way kat.rs's gate runs the known answers over all of them. A new library is one file
//! and one registry line; these checks then hold it to the same rules without a test to
//! copy. What only one library has (its details, its variants, its quirks) stays in its
//! own file.
//!
//! - support: what `support` says is what the library does (an algorithm it refuses is
//!   neither prepared nor keyed; a public-key algorithm is never prepared), and what each
//!   library is known to offer, and how its version reads, is pinned in [`pinned`];
//! - error paths: wrong key, nonce and IV lengths, AEAD input shorter than the tag, a
//!   forged tag, partial CBC blocks and outputs too small are errors, not panics, and the
//!   operation still works after them;
//! - round trips: with itself at the timed sizes (state left between messages), with a
//!   second library, and the same message in place and from a separate buffer; HMAC
//!   with an empty and with a long key.

use crate::algorithms::{Algorithm, Direction, Kind};
use crate::impls::implementation::{Implementation, Operation, Support};
use crate::impls::io::Io;
use crate::impls::registry;
use crate::kat::{pattern, round_trip};
use anyhow::{anyhow, ensure};

fn providers() -> Vec<Box<dyn Implementation>> {
    registry(&[], &[]).expect("registry").found
}

/// The algorithms `imp` offers, `symmetric` ones or public-key ones.
fn offered(imp: &dyn Implementation, symmetric: bool) -> Vec<Algorithm> {
    Algorithm::ALL
        .into_iter()
        .filter(|a| imp.support(*a) == Support::Yes && a.kind().is_public_key() != symmetric)
        .collect()
}

/// Runs `check` for every provider and every algorithm in `algs(provider)`, and fails
/// naming all that failed.
fn for_each(
    algs: impl Fn(&dyn Implementation) -> Vec<Algorithm>,
    check: impl Fn(&dyn Implementation, Algorithm) -> anyhow::Result<()>,
) {
    let mut failed = Vec::new();
    for imp in providers() {
        for alg in algs(imp.as_ref()) {
            if let Err(e) = check(imp.as_ref(), alg) {
                failed.push(format!("{} {alg}: {e}", imp.name()));
            }
        }
    }
    assert!(failed.is_empty(), "\n{}", failed.join("\n"));
}

// ---- support ---------------------------------------------------------------------

/// What a library must answer for one algorithm.
enum Offer {
    Yes,
    /// No, with a reason that contains this.
    No(&'static str),
    /// Either (it depends on the build found).
    Any,
}

fn yes_if(yes: bool) -> Offer {
    if yes {
        Offer::Yes
    } else {
        Offer::No("")
    }
}

/// How each library's version begins.
const VERSIONS: [(&str, &str); 6] = [
    ("aws-lc", "aws-lc-rs 1.19 (AWS-LC "),
    ("boringssl", "BoringSSL"),
    ("libsodium", "libsodium 1."),
    ("openssl", "OpenSSL "),
    ("ring", "ring 0.17"),
    ("rustcrypto", "RustCrypto: "),
];

/// What each library is known to offer, so that a `support` that drops or claims an
/// algorithm fails here. A library without a line is held to the other rules only.
fn pinned(imp: &dyn Implementation, alg: Algorithm) -> Option<Offer> {
    use Algorithm::*;
    let dsa = matches!(alg, Dsa2048 | Dsa3072);
    let post_quantum = matches!(alg, MlKem768 | MlDsa65 | X25519MlKem768);
    Some(match imp.name() {
        "rustcrypto" => Offer::Yes,
        "aws-lc" if dsa => Offer::No("no DSA"),
        "aws-lc" => yes_if(!alg.is_legacy()),
        // No unauthenticated modes, no AES-192, no DSA and nothing post-quantum.
        "ring" => yes_if(alg.kind() != Kind::Cipher && alg != Aes192Gcm && !dsa && !post_quantum),
        // AES-256-GCM only on CPUs with AES-NI and CLMUL.
        "libsodium" => yes_if(
            matches!(
                alg,
                Chacha20Poly1305 | Sha256 | Sha512 | HmacSha256 | Ed25519 | X25519
            ) || (alg == Aes256Gcm && imp.details().aes256gcm_available == Some(true)),
        ),
        "boringssl" => yes_if(!alg.is_legacy() && !dsa && !matches!(alg, MlDsa65 | X25519MlKem768)),
        // ML-KEM, ML-DSA and the hybrid need OpenSSL 3.5 (its support says so).
        "openssl" if post_quantum => Offer::Any,
        "openssl" => Offer::Yes,
        _ => return None,
    })
}

/// A refusal is a refusal whatever the key: the algorithm's own length and two others.
fn keys(alg: Algorithm) -> [Vec<u8>; 3] {
    [vec![0; alg.key_len()], vec![0; 16], vec![0; 32]]
}

fn support_matches(imp: &dyn Implementation, alg: Algorithm) -> anyhow::Result<()> {
    let support = imp.support(alg);
    match (pinned(imp, alg), &support) {
        (Some(Offer::Yes), Support::No(why)) => return Err(anyhow!("not offered: {why}")),
        (Some(Offer::No(_)), Support::Yes) => return Err(anyhow!("offered, unexpectedly")),
        (Some(Offer::No(want)), Support::No(why)) if !why.contains(want) => {
            return Err(anyhow!("refused for another reason than {want:?}: {why}"))
        }
        _ => {}
    }
    let public_key = alg.kind().is_public_key();
    if public_key {
        for dir in [Direction::Enc, Direction::Dec] {
            for key in keys(alg) {
                ensure!(imp.prepare(alg, dir, &key).is_err(), "prepared ({dir})");
            }
        }
    }
    if let Support::No(why) = support {
        ensure!(!why.trim().is_empty(), "refused without a reason");
        if public_key {
            ensure!(imp.key_pair(alg, None).is_err(), "refused, but keyed");
        } else {
            for dir in alg.directions() {
                for key in keys(alg) {
                    let r = imp.prepare(alg, *dir, &key);
                    ensure!(r.is_err(), "refused, but prepared ({dir})");
                }
            }
        }
    }
    Ok(())
}

#[test]
fn support_matches_what_the_library_does() {
    for imp in providers() {
        if let Some((_, prefix)) = VERSIONS.iter().find(|(n, _)| *n == imp.name()) {
            let v = imp.version();
            assert!(v.starts_with(prefix), "{}: {v}", imp.name());
        }
    }
    for_each(|_| Algorithm::ALL.to_vec(), support_matches);
}

// ---- error paths -----------------------------------------------------------------

/// One call reading `input` from its own buffer and writing into `room` bytes.
pub(super) fn separate(
    op: &mut dyn Operation,
    nonce: &[u8],
    input: &[u8],
    room: usize,
) -> anyhow::Result<usize> {
    let mut out = vec![0u8; room];
    let io = Io::Separate {
        input,
        output: &mut out,
    };
    op.process(nonce, &[], io)
}

/// One call on the first `len` bytes of a buffer of `room` bytes.
pub(super) fn in_place(
    op: &mut dyn Operation,
    nonce: &[u8],
    len: usize,
    room: usize,
) -> anyhow::Result<usize> {
    let mut buf = pattern(room, 3);
    op.process(nonce, &[], Io::InPlace { buf: &mut buf, len })
}

/// Err unless `r` is an error; `what` names the call that should have failed.
fn refused<T: std::fmt::Debug>(r: anyhow::Result<T>, what: &str) -> anyhow::Result<()> {
    match r {
        Ok(v) => Err(anyhow!("{what} was accepted ({v:?})")),
        Err(_) => Ok(()),
    }
}

/// Keys one byte short, half as long and one byte long are refused in both directions.
/// RC4 takes keys of 1 to 256 bytes by design; HMAC any key.
fn wrong_keys(imp: &dyn Implementation, alg: Algorithm) -> anyhow::Result<()> {
    let n = alg.key_len();
    for len in [n - 1, n / 2, n + 1] {
        for dir in [Direction::Enc, Direction::Dec] {
            let r = imp.prepare(alg, dir, &pattern(len, 1)).map(|_| ());
            refused(r, &format!("a {len}-byte key ({dir})"))?;
        }
    }
    Ok(())
}

/// An enc and a dec operation with the same key.
fn enc_and_dec(
    imp: &dyn Implementation,
    alg: Algorithm,
) -> anyhow::Result<(Box<dyn Operation>, Box<dyn Operation>)> {
    let key = pattern(alg.key_len(), 1);
    Ok((
        imp.prepare(alg, Direction::Enc, &key)?,
        imp.prepare(alg, Direction::Dec, &key)?,
    ))
}

fn aead_errors(imp: &dyn Implementation, alg: Algorithm) -> anyhow::Result<()> {
    let (mut seal, mut open) = enc_and_dec(imp, alg)?;
    let (seal, open) = (seal.as_mut(), open.as_mut());
    let nonce = [9u8; 12];
    for n in [8, 11, 13] {
        let bad = vec![9u8; n];
        refused(
            in_place(seal, &bad, 16, 80),
            &format!("a seal, {n}-byte nonce"),
        )?;
        let r = separate(open, &bad, &[0; 32], 64);
        refused(r, &format!("an open, {n}-byte nonce"))?;
    }
    // No room for the tag.
    refused(in_place(seal, &nonce, 10, 20), "a seal of 10 bytes in 20")?;
    refused(
        separate(seal, &nonce, &[0; 10], 20),
        "a seal of 10 bytes into 20",
    )?;
    for len in [0, 8, 10, 15] {
        let r = separate(open, &nonce, &vec![0; len], 64);
        refused(r, &format!("an open of {len} bytes (shorter than the tag)"))?;
    }
    match separate(open, &nonce, &[0; 32], 64) {
        Err(e) if e.to_string() == "tag verification failed" => {}
        r => {
            return Err(anyhow!(
                "a forged tag gave {r:?}, not \"tag verification failed\""
            ))
        }
    }
    // The operations still work after all that.
    let mut buf = pattern(16 + 64, 5);
    let io = Io::InPlace {
        buf: &mut buf,
        len: 16,
    };
    ensure!(seal.process(&nonce, &[], io)? == 32, "a seal of 16 bytes");
    let sealed = &buf[..32];
    refused(separate(open, &nonce, sealed, 4), "an open into 4 bytes")?;
    ensure!(
        separate(open, &nonce, sealed, 64)? == 16,
        "an open of 32 bytes"
    );
    Ok(())
}

fn cipher_errors(imp: &dyn Implementation, alg: Algorithm) -> anyhow::Result<()> {
    let (mut enc, mut dec) = enc_and_dec(imp, alg)?;
    let (enc, dec) = (enc.as_mut(), dec.as_mut());
    let (b, iv) = (alg.block_len(), vec![9u8; alg.nonce_len()]);
    if b > 0 {
        for n in [b - 1, b + 1] {
            let bad = vec![9u8; n];
            refused(in_place(enc, &bad, 32, 96), &format!("enc, {n}-byte IV"))?;
            refused(
                separate(dec, &bad, &[0; 32], 96),
                &format!("dec, {n}-byte IV"),
            )?;
        }
    }
    if alg.size_problem(b + 1).is_some() {
        for len in [b - 1, b + 1] {
            refused(
                in_place(enc, &iv, len, 96),
                &format!("CBC enc of {len} bytes"),
            )?;
            let r = separate(dec, &iv, &vec![0; len], 96);
            refused(r, &format!("CBC dec of {len} bytes"))?;
        }
    }
    refused(separate(enc, &iv, &[0; 32], 16), "enc of 32 bytes into 16")?;
    refused(separate(dec, &iv, &[0; 32], 16), "dec of 32 bytes into 16")?;
    ensure!(in_place(enc, &iv, 32, 96)? == 32, "enc of 32 bytes");
    ensure!(separate(dec, &iv, &[0; 32], 96)? == 32, "dec of 32 bytes");
    Ok(())
}

fn digest_errors(imp: &dyn Implementation, alg: Algorithm) -> anyhow::Result<()> {
    let mut op = imp.prepare(alg, Direction::Enc, &pattern(alg.key_len(), 1))?;
    let (op, d) = (op.as_mut(), alg.digest_len());
    refused(
        separate(op, &[], b"abc", d - 1),
        "a digest into too little room",
    )?;
    refused(
        in_place(op, &[], 3, 3 + d - 1),
        "a digest in place without room",
    )?;
    ensure!(separate(op, &[], b"abc", 64)? == d, "a digest");
    Ok(())
}

#[test]
fn bad_lengths_and_forged_tags_are_errors_and_the_operation_carries_on() {
    for_each(
        |imp| offered(imp, true),
        |imp, alg| match alg.kind() {
            Kind::Aead => wrong_keys(imp, alg).and_then(|_| aead_errors(imp, alg)),
            Kind::Cipher if alg == Algorithm::Rc4 => cipher_errors(imp, alg),
            Kind::Cipher => wrong_keys(imp, alg).and_then(|_| cipher_errors(imp, alg)),
            _ => digest_errors(imp, alg),
        },
    );
}

// ---- round trips -----------------------------------------------------------------

/// The library with itself (the gate pairs it with RustCrypto) and with a second one
/// (AWS-LC where built), at the timed sizes; public-key algorithms cross both ways.
#[test]
fn round_trips_with_itself_and_a_second_library() {
    #[cfg(feature = "aws-lc")]
    let second = crate::impls::aws_lc::AwsLc;
    #[cfg(not(feature = "aws-lc"))]
    let second = crate::impls::rustcrypto::RustCrypto;
    for_each(
        |imp| [offered(imp, true), offered(imp, false)].concat(),
        |imp, alg| {
            round_trip(imp, imp, alg).map_err(|e| anyhow!("with itself: {e}"))?;
            if second.support(alg) == Support::Yes {
                round_trip(imp, &second, alg)?;
            }
            Ok(())
        },
    );
}

/// The same message sealed (or digested) in place and from a separate buffer gives the
/// same bytes.
#[test]
fn separate_and_in_place_agree() {
    for_each(
        |imp| offered(imp, true),
        |imp, alg| {
            let key = pattern(alg.key_len(), 1);
            let nonce = pattern(alg.nonce_len(), 2);
            let msg = pattern(64, 3);
            let mut op = imp.prepare(alg, Direction::Enc, &key)?;
            let mut buf = [msg.clone(), vec![0; 64]].concat();
            let io = Io::InPlace {
                buf: &mut buf,
                len: 64,
            };
            let n = op.process(&nonce, b"ad", io)?;
            let mut out = vec![0u8; 64 + 64];
            let io = Io::Separate {
                input: &msg,
                output: &mut out,
            };
            let m = op.process(&nonce, b"ad", io)?;
            let start = if matches!(alg.kind(), Kind::Hash | Kind::Mac) {
                64
            } else {
                0
            };
            ensure!(n == m && buf[start..start + n] == out[..m], "they differ");
            Ok(())
        },
    );
}

/// HMAC-SHA-256 under the empty key (of the empty message) and under a 131-byte key
/// (RFC 4231 test case 6), twice with one operation: a library that rewinds a keyed
/// state must not take an empty key for "no new key", nor a long one in part.
#[test]
fn hmac_takes_empty_and_long_keys() {
    let cases: [(&[u8], &[u8], &str); 2] = [
        (
            b"",
            b"",
            "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad",
        ),
        (
            &[0xaa; 131],
            b"Test Using Larger Than Block-Size Key - Hash Key First",
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
        ),
    ];
    for_each(
        |imp| {
            offered(imp, true)
                .into_iter()
                .filter(|a| *a == Algorithm::HmacSha256)
                .collect()
        },
        |imp, alg| {
            for (key, msg, want) in cases {
                let mut op = imp.prepare(alg, Direction::Enc, key)?;
                for call in 1..=2 {
                    let mut out = [0u8; 64];
                    let io = Io::Separate {
                        input: msg,
                        output: &mut out,
                    };
                    let n = op.process(&[], &[], io)?;
                    let got = hex::encode(&out[..n]);
                    ensure!(got == want, "{}-byte key, call {call}: {got}", key.len());
                }
            }
            Ok(())
        },
    );
}
