//! DSA: the key sizes, and the one key per size every library is timed with.
//!
//! Keys are fixed, as `openssl speed` uses fixed keys: generating FIPS 186-4 domain
//! parameters takes seconds (minutes in pure Rust), and no library here but libcrypto can
//! generate them. Made once with OpenSSL 3.0.19 on 2026-11-26:
//! `openssl genpkey -genparam -algorithm DSA -pkeyopt dsa_paramgen_bits:L
//! -pkeyopt dsa_paramgen_q_bits:256`, then `openssl genpkey -paramfile ... -outform DER`
//! (OpenSSL's own DSAPrivateKey) and `openssl pkcs8 -topk8 -nocrypt` to PKCS#8.
//! They are benchmark keys: published here, so they protect nothing.

use crate::algorithms::Algorithm;

/// What a reader of DSA numbers must know about the key.
pub const KEY_NOTE: &str = "DSA: one fixed key per size (L = 2048 or 3072, N = 256, SHA-256), made once with openssl genpkey and built into cryptobench, as `openssl speed` times fixed built-in keys; its dsa2048 key (apps/testdsa.h) has a 160-bit q, so its exponents are 160 bits against our 256 and it does less work per operation";

/// Modulus bits (L) of a DSA algorithm; the subgroup (N) is 256 bits for both.
pub fn dsa_bits(alg: Algorithm) -> Option<usize> {
    match alg {
        Algorithm::Dsa2048 => Some(2048),
        Algorithm::Dsa3072 => Some(3072),
        _ => None,
    }
}

/// The timing key of a DSA algorithm as PKCS#8 DER (the interchange encoding).
pub fn shared_dsa_pkcs8(alg: Algorithm) -> Option<Vec<u8>> {
    let hex = match alg {
        Algorithm::Dsa2048 => DSA2048_PKCS8,
        Algorithm::Dsa3072 => DSA3072_PKCS8,
        _ => return None,
    };
    Some(hex::decode(hex).expect("constant hex"))
}

const DSA2048_PKCS8: &str = "308202650201003082023906072a8648ce3804013082022c028201010096079200da65a47dbf1f56bc85a9d6914e1c0acb25163d20c7016afcfd4744772fd0fe3b6a13f759ac3b39003484cbc6b3fbda5e542ab3017b9e3e7ec2cc023c0a6369366beedb459dcc4fc7f0347ad774fde93d1bfc797d41430e64092f3ce25bce11c5e7b35e24fcfafb6db55bbdf82f5ccb874c67f1d98d22974aef69a607aba794d390e7d2681cff79f6be5b3516a216915c78f7f390873cbdac6ae143b0168610816656fe328ffd279dd4b52a8987ebcb465d395073da33c91bf081b17a261a5a3ded835fc67bf105119a49140a0f8843cd6ac05845ee2db4323c25bc99ebd498e96f1d91bce978132461b2731bc5f74dffc7d59d59b26e7a5492362033022100e9db455d216832e593ddb168bddcede503c8e6e9142f9e8310a3d7fb2979dab1028201001881e8f2dfc5121e7807b8ba604be8c19727c2eab44f625da9cfa4ad93813ab977fc044edfdf793470f26bbb27bc8675560d16db2b71f25250301d1ce34cfd777a54beb4bba6159ee81940727bc50cd3ec30e52da7c422e5e9d64a40c081a572a664b0c08b20448f674b8787029b632813cff22391ee536021c90375a08c8c0428f1cb5eb392157d68493e1d2bee893ddcbba696353b9791da8ad51346d322844e4277eedb81d525d708c63c8f0ac2277b144f8da4be8bc683395cb5a81ea0073938ac660e6a151fb8caad1d178b899a1124eb13ce1d98b6fb41c11e45a7f766d542a1e518021bac5eeeaf238cc50dffe9a55a0d44ebd40e6afdfbd7f9dc8af80423022100c09bf8cc613a65e94068307723b75828272d7fae7413f54a92478b26567967dc";

const DSA3072_PKCS8: &str = "308203650201003082033906072a8648ce3804013082032c0282018100f2242314f5c0d3ee85742226e5f158106a55dfa6cb308a4aeb1817fa436912e42864e16ea394ede7b3c152ae61eb759066cfec715eb90e026c4afb3883e849a93e261f3f1887f8be6a992897739b418f782627264f444e566f1b336065079c3916ae699f99d1915c6fe32d406ea569e97c7e321d2c98a6098e20461ac78ee8ef9c27d7799adcc1a70681b9a95e81c489c7adf43ac0dda30b274fcd9abfef97bc0e7ee97ea47720cfb48a6a705a965ccc121f9fe792f2385d9e1affb67ccd64bec88ff01c0a8666dca52b456e3253aa6db61efaa9f24b5a6b79a0f86188d3ef424682b3bd0dd1b8933ba5ecdf3e326163f084c9730d8f480e6fc2830ada2b70aef125025a58eec086da585fb1d3915204d846f742cf9546438e2f793d533c3e0f0a636e18ad2882610be9a9e4f45aa78fa61cbb2ba7a768b6bee618090024adca355161fd80165f198b68488c4fb870dee32f91612f8c8a824fdbe2612ed4483d22db60c8cf6fe8a089a1102c59ba0de559749ea453828539d87f0f62685aace7022100c2bde1adeb9d1f174fb2f7ce198c9bf15a79c8d955f604f7aefa976c380eb34d028201803726e5223fa05aaab6a94e307642732eac769878e195d62674d0224b1d74ae4234e3d0b6bea0dd4c9992f7c03063f74ca6ed2c19ed3b8ea1bf725b59a1e6d47294d24f7a632a217dbce4064a7295baaf82376f5165605aa8895747fc79529d7c9f06f181c6fc151ab64615169c4f75ac8fa83e0847b93d7d1b4bda7072773625be921fb1c233662ab9e93e5df19355c92b1ddcd14041a0be6473343277611659d08d5d6736ebe801a0bb46ab5b473da0192b8746f78c42adf886cd700298f24e3c2e1ed28ce3eacec38acc96242c73c2643a14573f3cde507634c50a0d98802549c6516c2aa48796323de2aa66b16cc376cd137ef738dcf672ebeb2093af91f78d3e1d0b0d2820e7500791953710acf15b04b91588c812e6fe12304d989b52531f748524605303369773a953909c9c08fc28143827fdab318fec5a797d826197013145c11fd3306f111000e86d1697830eace8de59d1ee3bc10d017821c607462e450f752658d52e763de09286875e5b91f0261c680d06dcc3f297b24512a5030423022100a01c16b5e25b5301c8f067ca6e1b1015bd1cfec7b34ba2665965662e9eeead85";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::impls::implementation::{Implementation, Support};
    use crate::impls::openssl::OpenSsl;
    use crate::impls::rustcrypto::RustCrypto;
    use crate::kat::pkey::{cross_check, known_answers};
    use crate::testing::skip;

    const DSA: [Algorithm; 2] = [Algorithm::Dsa2048, Algorithm::Dsa3072];

    /// The system libcrypto, when it offers DSA (a `no-dsa` build would not).
    fn openssl(alg: Algorithm) -> Option<OpenSsl> {
        let o = OpenSsl::load_system().unwrap_or_else(|e| panic!("{e}"));
        match o.support(alg) {
            Support::Yes => Some(o),
            Support::No(why) => {
                skip(&format!("the system libcrypto offers no {alg}: {why}"));
                None
            }
        }
    }

    #[test]
    fn dsa_known_answers_pass_in_openssl_and_rustcrypto() {
        for alg in DSA {
            assert_eq!(RustCrypto.support(alg), Support::Yes);
            known_answers(&RustCrypto, alg).unwrap_or_else(|e| panic!("rustcrypto {alg}: {e}"));
            if let Some(o) = openssl(alg) {
                known_answers(&o, alg).unwrap_or_else(|e| panic!("openssl {alg}: {e}"));
            }
        }
    }

    #[test]
    fn dsa_forged_wycheproof_signatures_are_refused() {
        for alg in DSA {
            let vectors = crate::kat::vectors_pkey::signature_vectors(alg);
            assert!(vectors.iter().any(|v| v.valid), "{alg}: a valid vector");
            let mut imps: Vec<Box<dyn Implementation>> = vec![Box::new(RustCrypto)];
            if let Some(o) = openssl(alg) {
                imps.push(Box::new(o));
            }
            for imp in &imps {
                for v in vectors {
                    let mut pk = imp
                        .public_key(alg, &hex::decode(v.public).unwrap())
                        .unwrap();
                    let ok = pk
                        .verify(&hex::decode(v.msg).unwrap(), &hex::decode(v.sig).unwrap())
                        .is_ok();
                    assert_eq!(ok, v.valid, "{} {}", imp.name(), v.source);
                }
            }
            assert!(
                vectors.iter().filter(|v| !v.valid).count() >= 2,
                "{alg}: a forged value and a bad encoding"
            );
        }
    }

    #[test]
    fn dsa_signatures_cross_between_openssl_and_rustcrypto() {
        for alg in DSA {
            if let Some(o) = openssl(alg) {
                cross_check(&o, &RustCrypto, alg).unwrap_or_else(|e| panic!("{alg}: {e}"));
            }
        }
    }

    #[test]
    fn dsa_timing_keys_have_the_sizes_they_claim() {
        use dsa::pkcs8::DecodePrivateKey;
        for alg in DSA {
            let der = shared_dsa_pkcs8(alg).unwrap();
            let key = dsa::SigningKey::from_pkcs8_der(&der).unwrap();
            let c = key.verifying_key().components();
            assert_eq!(Some(c.p().bits()), dsa_bits(alg), "{alg}: L");
            assert_eq!(c.q().bits(), 256, "{alg}: N");
        }
        assert_eq!(dsa_bits(Algorithm::Rsa2048Pkcs1), None);
        assert!(shared_dsa_pkcs8(Algorithm::EcdsaP256).is_none());
    }

    #[cfg(feature = "test-corrupt")]
    #[test]
    fn a_wrong_dsa_backend_fails_the_known_answers() {
        use crate::impls::corrupt::Corrupt;
        for alg in DSA {
            assert!(known_answers(&Corrupt(Box::new(RustCrypto)), alg).is_err());
            if let Some(o) = openssl(alg) {
                assert!(known_answers(&Corrupt(Box::new(o)), alg).is_err());
            }
        }
    }
}
