//! Signature files: RSA PKCS#1 v1.5 and PSS (SHA-256), DSA and ECDSA P-256 and P-384 (DER
//! signatures), Ed25519 and ML-DSA-65. Each group has one public key, given to the path
//! in the interchange encoding of pkey.rs: Wycheproof's own `publicKeyAsn` is the PKCS#1
//! RSAPublicKey, `publicKeyDer` DSA's SubjectPublicKeyInfo, `uncompressed` the SEC1
//! point, `pk` the raw Ed25519 and ML-DSA key.
//! A valid signature must verify, an invalid one must not (a refused public key refuses
//! its signatures too). Vectors the path's algorithm does not sign with (another salt,
//! hash or key size, an ML-DSA context) are not applicable.

use super::vectors::{cached_with, judge, Case, Outcome};
use crate::algorithms::Algorithm;
use crate::impls::pkey::rsa_bits;
use crate::impls::Implementation;
use crate::kat::tally::Tally;
use std::sync::OnceLock;
use wycheproof::{dsa, ecdsa, eddsa, mldsa_verify, rsa_pkcs1_verify, rsa_pss_verify, HashFunction};

/// One group of a signature file in a shape shared by every file.
struct Group {
    public: Vec<u8>,
    /// Why none of the group's vectors fits the algorithm, if none does.
    unfit: Option<String>,
    tests: Vec<Vector>,
}

struct Vector {
    case: Case,
    msg: Vec<u8>,
    sig: Vec<u8>,
    /// ML-DSA's context string; empty everywhere else.
    ctx: Vec<u8>,
}

/// The Wycheproof file of each signature algorithm.
const FILES: &[(Algorithm, &str)] = &[
    (Algorithm::Rsa2048Pkcs1, "rsa_signature_2048_sha256"),
    (Algorithm::Rsa3072Pkcs1, "rsa_signature_3072_sha256"),
    (Algorithm::Rsa4096Pkcs1, "rsa_signature_4096_sha256"),
    (Algorithm::Rsa2048Pss, "rsa_pss_2048_sha256_mgf1_32"),
    (Algorithm::Rsa3072Pss, "rsa_pss_3072_sha256_mgf1_32"),
    (Algorithm::Rsa4096Pss, "rsa_pss_4096_sha256_mgf1_32"),
    (Algorithm::Dsa2048, "dsa_2048_256_sha256"),
    (Algorithm::Dsa3072, "dsa_3072_256_sha256"),
    (Algorithm::EcdsaP256, "ecdsa_secp256r1_sha256"),
    (Algorithm::EcdsaP384, "ecdsa_secp384r1_sha384"),
    (Algorithm::Ed25519, "ed25519"),
    (Algorithm::MlDsa65, "mldsa_65_verify"),
];

/// A test's fields common to every file, through one macro since each file's crate
/// module has its own `Test` type.
macro_rules! vectors {
    ($tests:expr, $ctx:expr) => {
        $tests
            .iter()
            .map(|v| Vector {
                case: Case::of(v.tc_id, &v.comment, v.result, &v.flags),
                msg: v.msg.to_vec(),
                sig: v.sig.to_vec(),
                ctx: $ctx(v),
            })
            .collect()
    };
}

fn no_ctx<T>(_: &T) -> Vec<u8> {
    Vec::new()
}

fn load(alg: Algorithm, file: &str) -> anyhow::Result<Vec<Group>> {
    let sha256 = |h: HashFunction| (h != HashFunction::Sha2_256).then(|| format!("hash {h:?}"));
    let bits = rsa_bits(alg).unwrap_or(0);
    let rsa_size = |n: usize| (n != bits).then(|| format!("{n}-bit key, not {bits}"));
    Ok(match alg {
        Algorithm::Rsa2048Pkcs1 | Algorithm::Rsa3072Pkcs1 | Algorithm::Rsa4096Pkcs1 => {
            super::vectors::load::<rsa_pkcs1_verify::TestSet>(file)?
                .test_groups
                .into_iter()
                .map(|g| Group {
                    public: g.asn_key.to_vec(),
                    unfit: sha256(g.hash).or(rsa_size(g.key_size)),
                    tests: vectors!(g.tests, no_ctx),
                })
                .collect()
        }
        Algorithm::Rsa2048Pss | Algorithm::Rsa3072Pss | Algorithm::Rsa4096Pss => {
            super::vectors::load::<rsa_pss_verify::TestSet>(file)?
                .test_groups
                .into_iter()
                .map(|g| Group {
                    public: g.asn_key.to_vec(),
                    unfit: sha256(g.hash)
                        .or(rsa_size(g.key_size))
                        .or((g.mgf_hash != Some(HashFunction::Sha2_256))
                            .then(|| format!("MGF {:?} {:?}", g.mgf, g.mgf_hash)))
                        .or((g.salt_size != 32)
                            .then(|| format!("{}-byte salt, not 32", g.salt_size))),
                    tests: vectors!(g.tests, no_ctx),
                })
                .collect()
        }
        Algorithm::EcdsaP256 | Algorithm::EcdsaP384 => {
            super::vectors::load::<ecdsa::TestSet>(file)?
                .test_groups
                .into_iter()
                .map(|g| Group {
                    public: g.key.key.to_vec(),
                    unfit: None,
                    tests: vectors!(g.tests, no_ctx),
                })
                .collect()
        }
        Algorithm::Dsa2048 | Algorithm::Dsa3072 => super::vectors::load::<dsa::TestSet>(file)?
            .test_groups
            .into_iter()
            .map(|g| Group {
                public: g.der.to_vec(),
                unfit: sha256(g.hash),
                tests: vectors!(g.tests, no_ctx),
            })
            .collect(),
        Algorithm::Ed25519 => super::vectors::load::<eddsa::TestSet>(file)?
            .test_groups
            .into_iter()
            .map(|g| Group {
                public: g.key.pk.to_vec(),
                unfit: None,
                tests: vectors!(g.tests, no_ctx),
            })
            .collect(),
        _ => super::vectors::load::<mldsa_verify::TestSet>(file)?
            .test_groups
            .into_iter()
            .map(|g| Group {
                public: g.pubkey.to_vec(),
                unfit: None,
                tests: vectors!(g.tests, |v: &mldsa_verify::Test| v
                    .ctx
                    .as_ref()
                    .map(|c| c.to_vec())
                    .unwrap_or_default()),
            })
            .collect(),
    })
}

pub fn check(imp: &dyn Implementation, alg: Algorithm, t: &mut Tally) {
    static SETS: [OnceLock<Result<Vec<Group>, String>>; FILES.len()] =
        [const { OnceLock::new() }; FILES.len()];
    let Some(at) = FILES.iter().position(|(a, _)| *a == alg) else {
        return t.fail(format!("wycheproof: no file for {alg}"), "", "not wired");
    };
    let file = FILES[at].1;
    let groups = match cached_with(&SETS[at], file, || load(alg, file)) {
        Ok(g) => g,
        Err(e) => return t.fail(format!("wycheproof {file}"), "", e),
    };
    for g in groups {
        if let Some(why) = &g.unfit {
            for _ in &g.tests {
                t.not_applicable(format!("{why}: not the parameters of {alg}"));
            }
            continue;
        }
        let mut public = imp.public_key(alg, &g.public);
        for v in &g.tests {
            if !v.ctx.is_empty() {
                t.not_applicable("a context string: the path signs with the empty context");
                continue;
            }
            let outcome = match &mut public {
                Err(e) => Outcome::Refused(format!("the public key was refused: {e}")),
                Ok(pk) => match pk.verify(&v.msg, &v.sig) {
                    Ok(()) => Outcome::Accepted,
                    Err(e) => Outcome::Refused(e.to_string()),
                },
            };
            judge(t, file, &v.case, outcome);
        }
    }
}
