//! Public-key known-answer vectors, in the interchange encodings of impls/pkey.rs.

use crate::algorithms::Algorithm;

/// A signature to verify: `valid` says whether it must verify.
pub struct SignatureVector {
    pub source: &'static str,
    pub public: &'static str,
    pub msg: &'static str,
    pub sig: &'static str,
    pub valid: bool,
}

/// A deterministic signature from a known private key.
pub struct SigningVector {
    pub source: &'static str,
    pub private: &'static str,
    pub public: &'static str,
    pub msg: &'static str,
    pub sig: &'static str,
}

/// A shared secret from a known private key and a peer's public key.
pub struct AgreementVector {
    pub source: &'static str,
    pub private: &'static str,
    pub public: &'static str,
    pub peer: &'static str,
    pub shared: &'static str,
}

/// Wycheproof's RSA-2048 test key (RSAPublicKey DER), shared by its PKCS#1 and PSS files.
const WYCHEPROOF_RSA2048: &str = "3082010a0282010100a2b451a07d0aa5f96e455671513550514a8a5b462ebef717094fa1fee82224e637f9746d3f7cafd31878d80325b6ef5a1700f65903b469429e89d6eac8845097b5ab393189db92512ed8a7711a1253facd20f79c15e8247f3d3e42e46e48c98e254a2fe9765313a03eff8f17e1a029397a1fa26a8dce26f490ed81299615d9814c22da610428e09c7d9658594266f5c021d0fceca08d945a12be82de4d1ece6b4c03145b5d3495d4ed5411eb878daf05fd7afc3e09ada0f1126422f590975a1969816f48698bcbba1b4d9cae79d460d8f9f85e7975005d9bc22c4e5ac0f7c1a45d12569a62807d3b9a02e5a530e773066f453d1f5b4c2e9cf7820283f742b9d50203010001";

const RFC6979_P256_PUBLIC: &str = "0460fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb67903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299";
/// RFC 6979 A.2.5, SHA-256, "sample": r and s as ASN.1 DER.
const RFC6979_P256_SAMPLE: &str = "3046022100efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716022100f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8";
const RFC6979_P384_PUBLIC: &str = "04ec3a4e415b4e19a4568618029f427fa5da9a8bc4ae92e02e06aae5286b300c64def8f0ea9055866064a254515480bc138015d9b72d7d57244ea8ef9ac0c621896708a59367f9dfb9f54ca84b3f1c9db1288b231c3ae0d4fe7344fd2533264720";
/// RFC 6979 A.2.6, SHA-384, "sample".
const RFC6979_P384_SAMPLE: &str = "306602310094edbb92a5ecb8aad4736e56c691916b3f88140666ce9fa73d64c4ea95ad133c81a648152e44acf96e36dd1e80fabe4602310099ef4aeb15f178cea1fe40db2603138f130e740a19624526203b6351d0a3a94fa329c145786e679e7b82c71a38628ac8";
/// "sample"
const SAMPLE: &str = "73616d706c65";

pub fn signature_vectors(alg: Algorithm) -> &'static [SignatureVector] {
    match alg {
        Algorithm::Rsa2048Pkcs1 => &[
            SignatureVector {
                source: "Wycheproof rsa_signature_2048_sha256 tcId 5",
                public: WYCHEPROOF_RSA2048,
                msg: "4d657373616765",
                sig: "513a5abde16b5e0ecb8659d3ca0845800adf75cfc4437d42fa34e7aafbbe35fc5984d3560cba938f9a622e932bb6162b7fbb6cd8c1cf8815f28c495995ac18cdbe8fabfdce29c17aa021df192ac02d080d7c5eda6bd4c99154178a9d5e1cf3ff4177106315f4e6d74c991b601069acd60b55b3bb4dbf6316c35096a487d6756181d3394944f1c742a2f4d608ce4f6abbfb72347ad7d342ae15dd6d1049fbd0ff55f4d7c43ab805f81ff1fbe9256b5c78c2de6beb787f4b6d66d290a3d4c4857368aea5f7ebaa1296020c8f9e3670441a08038bb810e853a654e44316a4e52428745123ce2714020d00e55a9eb82f7fb41c73d852a82b003670246c6ca2045fc8",
                valid: true,
            },
            SignatureVector {
                source: "Wycheproof rsa_signature_2048_sha256 tcId 9 (long-form length: invalid)",
                public: WYCHEPROOF_RSA2048,
                msg: "313233343030",
                sig: "8a0e82d4f334aca72a718b6f8f643f69c6048d619d5eba71263a5d2d3ac7a7af133b780c7595ca2c982c006e861948f543cd0210c758691f9626842c25de2843ea314ca8eff285d47e0cffa54180af416004017034962a80a5959c3d3f1bfc154a4824462a93c014f6dfe920824f414a6e30e0e5944d480b99949ec7bf64c4a7461575933b17d7d6b0178b5192392ace3ed8469e8ac1dacae51ad5d3ad73dcb213e056d04596e64d8c0703def3110c7cecc93ba8ac8059f0f3d66b89d8712c62b41d407e4b4a104f4569558b0290c213cad6d0653898b9df8f4a453ab07d13bfb7598d505abbd0c4987e4f1ac66e1a523e113e370ab7cf990f0cc63f50f4f0a4",
                valid: false,
            },
        ],
        Algorithm::Rsa2048Pss => &[SignatureVector {
            source: "Wycheproof rsa_pss_2048_sha256_mgf1_32 tcId 5",
            public: WYCHEPROOF_RSA2048,
            msg: "4d657373616765",
            sig: "599724adc1bae31e84eb6e1399cd90cd67f48b432c63719b600402384aaea9b21ee864cdcf259029180877c847a223912b0647f066a59a65df6c2d3a6675b1450f0b05185cee486bfac56cfded182babcefe60568a6954f026cb2f59002a2f755e9bce49793f280d89822c9bd3a06a7ad2209c3d6cab7c1f74c8bbf4bf374e7ae8a539fccb83a78cff96a4f538adeba0869659d0e9647d98f96cb55d9cb7e58440c4c9d85b8e9dc602e909e29e45f2b82ded44f40e9ceb1292da20063967e3a116f4aeb202863cea523f215b8ec7fc4f6a22cd8652ed661e33803f3fa1be966fa8754cc7b0fa894cee0f045efba14c4f4a1d7cb837cea69e30522526b8a5878f",
            valid: true,
        }],
        Algorithm::EcdsaP256 => &[SignatureVector {
            source: "RFC 6979 A.2.5 (P-256, SHA-256, \"sample\")",
            public: RFC6979_P256_PUBLIC,
            msg: SAMPLE,
            sig: RFC6979_P256_SAMPLE,
            valid: true,
        }],
        Algorithm::EcdsaP384 => &[SignatureVector {
            source: "RFC 6979 A.2.6 (P-384, SHA-384, \"sample\")",
            public: RFC6979_P384_PUBLIC,
            msg: SAMPLE,
            sig: RFC6979_P384_SAMPLE,
            valid: true,
        }],
        // RSA-3072/4096: no vector here; the gate's own-key and cross-library checks apply.
        _ => &[],
    }
}

pub fn signing_vectors(alg: Algorithm) -> &'static [SigningVector] {
    match alg {
        Algorithm::Ed25519 => &[
            SigningVector {
                source: "RFC 8032 7.1 test 1",
                private: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
                public: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
                msg: "",
                sig: "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
            },
            SigningVector {
                source: "RFC 8032 7.1 test 2",
                private: "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
                public: "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
                msg: "72",
                sig: "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
            },
        ],
        _ => &[],
    }
}

pub fn agreement_vectors(alg: Algorithm) -> &'static [AgreementVector] {
    match alg {
        Algorithm::X25519 => &[
            AgreementVector {
                source: "RFC 7748 6.1 (Alice)",
                private: "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a",
                public: "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a",
                peer: "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f",
                shared: "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742",
            },
            AgreementVector {
                source: "RFC 7748 6.1 (Bob)",
                private: "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb",
                public: "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f",
                peer: "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a",
                shared: "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742",
            },
        ],
        Algorithm::EcdhP256 => &[AgreementVector {
            source: "NIST CAVP KAS ECC CDH primitive, P-256 COUNT 0",
            private: "7d7dc5f71eb29ddaf80d6214632eeae03d9058af1fb6d22ed80badb62bc1a534",
            public: "04ead218590119e8876b29146ff89ca61770c4edbbf97d38ce385ed281d8a6b23028af61281fd35e2fa7002523acc85a429cb06ee6648325389f59edfce1405141",
            peer: "04700c48f77f56584c5cc632ca65640db91b6bacce3a4df6b42ce7cc838833d287db71e509e3fd9b060ddb20ba5c51dcc5948d46fbf640dfe0441782cab85fa4ac",
            shared: "46fc62106420ff012e54a434fbdd2d25ccc5852060561e68040dd7778997bd7b",
        }],
        _ => &[],
    }
}
