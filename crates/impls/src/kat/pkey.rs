//! The correctness gate for public-key algorithms: known answers (RFC 8032, RFC 7748,
//! RFC 6979, NIST CAVP, Wycheproof, FIPS 203 and FIPS 204 via NIST ACVP), a forged
//! signature that must fail, and checks
//! across two libraries (a signature made by one verifies with the other, both derive
//! the same secret, one decapsulates what the other encapsulated).

use super::vectors_pkey::{
    agreement_vectors, kem_vectors, keygen_vectors, signature_vectors, signing_vectors,
};
use crate::algorithms::{Algorithm, Kind};
use crate::impls::pkey::NO_IMPORT;
use crate::impls::Implementation;
use anyhow::anyhow;

fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s.replace([' ', '\n'], "")).expect("catalogue vectors are valid hex")
}

/// A copy of `b` with one bit flipped at `at`.
fn flipped(b: &[u8], at: usize) -> Vec<u8> {
    let mut f = b.to_vec();
    f[at % b.len()] ^= 0x01;
    f
}

/// The message the gate signs: as long as a TLS 1.3 CertificateVerify input's hash.
const MESSAGE: &[u8] = b"cryptobench public-key gate message, 64 bytes long, no meaning..";

/// A signature `sig` over `msg` verifies with `verifier`'s copy of `public`, and neither
/// a forged signature nor another message does.
fn verify_strictly(
    verifier: &dyn Implementation,
    alg: Algorithm,
    public: &[u8],
    msg: &[u8],
    sig: &[u8],
) -> anyhow::Result<()> {
    let mut pk = verifier.public_key(alg, public)?;
    pk.verify(msg, sig)
        .map_err(|e| anyhow!("{} rejects a valid signature: {e}", verifier.name()))?;
    for forged in [flipped(sig, sig.len() / 2), flipped(sig, sig.len() - 1)] {
        if pk.verify(msg, &forged).is_ok() {
            return Err(anyhow!("{} accepted a forged signature", verifier.name()));
        }
    }
    if pk.verify(&flipped(msg, 0), sig).is_ok() {
        return Err(anyhow!(
            "{} accepted a signature over another message",
            verifier.name()
        ));
    }
    Ok(())
}

/// Known answers of `imp` for a public-key algorithm.
pub fn known_answers(imp: &dyn Implementation, alg: Algorithm) -> anyhow::Result<()> {
    match alg.kind() {
        Kind::Signature => {
            for v in signature_vectors(alg) {
                let mut pk = imp
                    .public_key(alg, &unhex(v.public))
                    .map_err(|e| anyhow!("{}: {e}", v.source))?;
                let ok = pk.verify(&unhex(v.msg), &unhex(v.sig)).is_ok();
                if ok != v.valid {
                    return Err(anyhow!(
                        "{}: a {} signature was {}",
                        v.source,
                        if v.valid { "valid" } else { "invalid" },
                        if ok { "accepted" } else { "rejected" }
                    ));
                }
                if v.valid {
                    verify_strictly(imp, alg, &unhex(v.public), &unhex(v.msg), &unhex(v.sig))
                        .map_err(|e| anyhow!("{}: {e}", v.source))?;
                }
            }
            for v in keygen_vectors(alg) {
                let kp = imp
                    .key_pair(alg, Some(&unhex(v.seed)))
                    .map_err(|e| anyhow!("{}: {e}", v.source))?;
                if kp.public_key() != unhex(v.public) {
                    return Err(anyhow!("{}: wrong public key from the seed", v.source));
                }
            }
            for v in signing_vectors(alg) {
                let mut kp = imp.key_pair(alg, Some(&unhex(v.private)))?;
                if kp.public_key() != unhex(v.public) {
                    return Err(anyhow!("{}: wrong public key from the seed", v.source));
                }
                same(
                    v.source,
                    "signature",
                    &kp.sign(&unhex(v.msg))?,
                    &unhex(v.sig),
                )?;
            }
            // Its own fresh key: sign, then verify strictly.
            let mut kp = imp.key_pair(alg, None)?;
            let sig = kp.sign(MESSAGE)?;
            verify_strictly(imp, alg, &kp.public_key(), MESSAGE, &sig)
                .map_err(|e| anyhow!("own key: {e}"))
        }
        Kind::Agreement => {
            for v in agreement_vectors(alg) {
                let mut kp = match imp.key_pair(alg, Some(&unhex(v.private))) {
                    Ok(kp) => kp,
                    // ring's keys are ephemeral: the cross-check covers it.
                    Err(e) if e.to_string().contains(NO_IMPORT) => continue,
                    Err(e) => return Err(anyhow!("{}: {e}", v.source)),
                };
                if kp.public_key() != unhex(v.public) {
                    return Err(anyhow!("{}: wrong public key", v.source));
                }
                let secret = kp.derive(&unhex(v.peer))?;
                same(v.source, "shared secret", &secret, &unhex(v.shared))?;
            }
            agree(imp, imp, alg)
        }
        Kind::Kem => {
            for v in kem_vectors(alg) {
                let private = unhex(&v.private.concat());
                let mut kp = match imp.key_pair(alg, Some(&private)) {
                    Ok(kp) => kp,
                    Err(e) if e.to_string().contains(NO_IMPORT) => continue,
                    Err(e) => return Err(anyhow!("{}: {e}", v.source)),
                };
                // FIPS 203: dk = dk_PKE (384k bytes) || ek || H(ek) || z; k = 3 here; the
                // hybrid's public key starts with ek too. aws-lc-rs returns no
                // encapsulation key for an imported decapsulation key (empty): the
                // decapsulation below still checks the whole key.
                let public = kp.public_key();
                if !public.is_empty() && private.get(1152..2336) != public.get(..1184) {
                    return Err(anyhow!(
                        "{}: wrong public key from the private key",
                        v.source
                    ));
                }
                let secret = kp.decaps(&unhex(&v.ciphertext.concat()))?;
                same(
                    v.source,
                    "shared secret",
                    &secret,
                    &unhex(&v.shared.concat()),
                )?;
            }
            kem(imp, imp, alg)
        }
        _ => Err(anyhow!("{alg} is not a public-key algorithm")),
    }
}

/// A vector's expected output, or the error naming what came instead.
fn same(source: &str, what: &str, got: &[u8], expected: &[u8]) -> anyhow::Result<()> {
    if got != expected {
        return Err(anyhow!("{source}: wrong {what} {}", hex::encode(got)));
    }
    Ok(())
}

/// Two key pairs, one from each library, derive the same secret.
fn agree(a: &dyn Implementation, b: &dyn Implementation, alg: Algorithm) -> anyhow::Result<()> {
    let mut ka = a.key_pair(alg, None)?;
    let mut kb = b.key_pair(alg, None)?;
    let (pa, pb) = (ka.public_key(), kb.public_key());
    let sa = ka.derive(&pb)?;
    let sb = kb.derive(&pa)?;
    if sa != sb || sa.iter().all(|&x| x == 0) {
        return Err(anyhow!(
            "{} and {} derived different secrets",
            a.name(),
            b.name()
        ));
    }
    Ok(())
}

/// `b` encapsulates to `a`'s public key; `a` recovers the secret; a modified
/// ciphertext gives another secret (implicit rejection).
fn kem(a: &dyn Implementation, b: &dyn Implementation, alg: Algorithm) -> anyhow::Result<()> {
    let mut ka = a.key_pair(alg, None)?;
    let mut pk = b.public_key(alg, &ka.public_key())?;
    let (ct, ss) = pk.encaps()?;
    if ka.decaps(&ct)? != ss {
        return Err(anyhow!(
            "{} could not decapsulate what {} encapsulated",
            a.name(),
            b.name()
        ));
    }
    if ka
        .decaps(&flipped(&ct, 7))
        .map(|s| s == ss)
        .unwrap_or(false)
    {
        return Err(anyhow!(
            "{} recovered the secret from a modified ciphertext",
            a.name()
        ));
    }
    Ok(())
}

/// A and B against each other, both ways.
pub fn cross_check(
    a: &dyn Implementation,
    b: &dyn Implementation,
    alg: Algorithm,
) -> anyhow::Result<()> {
    for (x, y) in [(a, b), (b, a)] {
        match alg.kind() {
            Kind::Signature => {
                let mut kp = x.key_pair(alg, None)?;
                let sig = kp.sign(MESSAGE)?;
                verify_strictly(y, alg, &kp.public_key(), MESSAGE, &sig)
                    .map_err(|e| anyhow!("{} signed: {e}", x.name()))?;
            }
            Kind::Agreement => agree(x, y, alg)?,
            Kind::Kem => kem(x, y, alg)?,
            _ => return Err(anyhow!("{alg} is not a public-key algorithm")),
        }
    }
    Ok(())
}
