//! The known-answer vectors of the symmetric catalogue (NIST CAVP, FIPS 180, RFC 8439,
//! RFC 4231), each with its source; the legacy ciphers' are in vectors_legacy.rs.

use super::vector::Vector;
use crate::algorithms::Algorithm;

const SP800_38A_PT: &str = "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710";
const GCM_PT: &str = "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39";
const GCM_AAD: &str = "feedfacedeadbeeffeedfacedeadbeefabaddad2";
const GCM_IV: &str = "cafebabefacedbaddecaf888";
const RFC8439_PT: &str = "4c616469657320616e642047656e746c656d656e206f662074686520636c617373206f66202739393a204966204920636f756c64206f6666657220796f75206f6e6c79206f6e652074697020666f7220746865206675747572652c2073756e73637265656e20776f756c642062652069742e";
/// "abc"
const ABC: &str = "616263";
/// "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
const ABC448: &str = "6162636462636465636465666465666765666768666768696768696a68696a6b696a6b6c6a6b6c6d6b6c6d6e6c6d6e6f6d6e6f706e6f7071";
/// "abcdefghbcdefghi...nopqrstu" (896 bits)
const ABC896: &str = "61626364656667686263646566676869636465666768696a6465666768696a6b65666768696a6b6c666768696a6b6c6d6768696a6b6c6d6e68696a6b6c6d6e6f696a6b6c6d6e6f706a6b6c6d6e6f70716b6c6d6e6f7071726c6d6e6f707172736d6e6f70717273746e6f707172737475";

/// Known-answer vectors: NIST (SP 800-38A, the GCM spec's test cases, FIPS 180
/// examples), RFC 8439 and RFC 4231.
pub fn vectors(alg: Algorithm) -> &'static [Vector] {
    match alg {
        Algorithm::Aes128Gcm => &[
            Vector {
                source: "NIST GCM spec test case 4",
                key: "feffe9928665731c6d6a8f9467308308",
                nonce: GCM_IV,
                aad: GCM_AAD,
                input: GCM_PT,
                output: "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091\
                         5bc94fbc3221a5db94fae95ae7121a47",
            },
            Vector {
                source: "NIST GCM spec test case 1 (empty message, no AAD)",
                key: "00000000000000000000000000000000",
                nonce: "000000000000000000000000",
                aad: "",
                input: "",
                output: "58e2fccefa7e3061367f1d57a4e7455a",
            },
            Vector {
                source: "NIST GCM spec test case 2",
                key: "00000000000000000000000000000000",
                nonce: "000000000000000000000000",
                aad: "",
                input: "00000000000000000000000000000000",
                output: "0388dace60b6a392f328c2b971b2fe78ab6e47d42cec13bdf53a67b21257bddf",
            },
        ],
        Algorithm::Aes256Gcm => &[
            Vector {
                source: "NIST GCM spec test case 16",
                key: "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
                nonce: GCM_IV,
                aad: GCM_AAD,
                input: GCM_PT,
                output: "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662\
                         76fc6ece0f4e1768cddf8853bb2d551b",
            },
            Vector {
                source: "NIST GCM spec test case 13 (empty message, no AAD)",
                key: "0000000000000000000000000000000000000000000000000000000000000000",
                nonce: "000000000000000000000000",
                aad: "",
                input: "",
                output: "530f8afbc74536b9a963b4f1c4cb738b",
            },
            Vector {
                source: "NIST GCM spec test case 14",
                key: "0000000000000000000000000000000000000000000000000000000000000000",
                nonce: "000000000000000000000000",
                aad: "",
                input: "00000000000000000000000000000000",
                output: "cea7403d4d606b6e074ec5d3baf39d18d0d1c8a799996bf0265b98b5d48ab919",
            },
        ],
        Algorithm::Chacha20Poly1305 => &[Vector {
            source: "RFC 8439 section 2.8.2",
            key: "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f",
            nonce: "070000004041424344454647",
            aad: "50515253c0c1c2c3c4c5c6c7",
            input: RFC8439_PT,
            output: "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc3ff4def08e4b7a9de576d26586cec64b6116\
                     1ae10b594f09e26a7e902ecbd0600691",
        }],
        Algorithm::Aes192Gcm => &[
            Vector {
                source: "NIST GCM spec test case 10",
                key: "feffe9928665731c6d6a8f9467308308feffe9928665731c",
                nonce: GCM_IV,
                aad: GCM_AAD,
                input: GCM_PT,
                output: "3980ca0b3c00e841eb06fac4872a2757859e1ceaa6efd984628593b40ca1e19c7d773d00c144c525ac619d18c84a3f4718e2448b2fe324d9ccda2710\
                         2519498e80f1478f37ba55bd6d27618c",
            },
            Vector {
                source: "NIST GCM spec test case 8",
                key: "000000000000000000000000000000000000000000000000",
                nonce: "000000000000000000000000",
                aad: "",
                input: "00000000000000000000000000000000",
                output: "98e7247c07f0fe411c267e4384b0f6002ff58d80033927ab8ef4d4587514f0fb",
            },
        ],
        Algorithm::Aes192Cbc => &[Vector {
            source: "NIST SP 800-38A F.2.3",
            key: "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
            nonce: "000102030405060708090a0b0c0d0e0f",
            aad: "",
            input: SP800_38A_PT,
            output: "4f021db243bc633d7178183a9fa071e8b4d9ada9ad7dedf4e5e738763f69145a571b242012fb7ae07fa9baac3df102e008b0e27988598881d920a9e64f5615cd",
        }],
        Algorithm::Aes192Ctr => &[Vector {
            source: "NIST SP 800-38A F.5.3",
            key: "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
            nonce: "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
            aad: "",
            input: SP800_38A_PT,
            output: "1abc932417521ca24f2b0459fe7e6e0b090339ec0aa6faefd5ccc2c6f4ce8e941e36b26bd1ebc670d1bd1d665620abf74f78a7f6d29809585a97daec58c6b050",
        }],
        Algorithm::Aes128Cbc => &[Vector {
            source: "NIST SP 800-38A F.2.1",
            key: "2b7e151628aed2a6abf7158809cf4f3c",
            nonce: "000102030405060708090a0b0c0d0e0f",
            aad: "",
            input: SP800_38A_PT,
            output: "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b273bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7",
        }],
        Algorithm::Aes256Cbc => &[Vector {
            source: "NIST SP 800-38A F.2.5",
            key: "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
            nonce: "000102030405060708090a0b0c0d0e0f",
            aad: "",
            input: SP800_38A_PT,
            output: "f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d39f23369a9d9bacfa530e26304231461b2eb05e2c39be9fcda6c19078c6a9d1b",
        }],
        Algorithm::Aes128Ctr => &[Vector {
            source: "NIST SP 800-38A F.5.1",
            key: "2b7e151628aed2a6abf7158809cf4f3c",
            nonce: "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
            aad: "",
            input: SP800_38A_PT,
            output: "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee",
        }],
        Algorithm::Aes256Ctr => &[Vector {
            source: "NIST SP 800-38A F.5.5",
            key: "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
            nonce: "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff",
            aad: "",
            input: SP800_38A_PT,
            output: "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c52b0930daa23de94ce87017ba2d84988ddfc9c58db67aada613c2dd08457941a6",
        }],
        Algorithm::Sha1 => &[
            Vector { source: "FIPS 180 example \"abc\"", key: "", nonce: "", aad: "", input: ABC, output: "a9993e364706816aba3e25717850c26c9cd0d89d" },
            Vector { source: "FIPS 180 example, 448 bits", key: "", nonce: "", aad: "", input: ABC448, output: "84983e441c3bd26ebaae4aa1f95129e5e54670f1" },
        ],
        Algorithm::Sha256 => &[
            Vector { source: "FIPS 180 example \"abc\"", key: "", nonce: "", aad: "", input: ABC, output: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
            Vector { source: "FIPS 180 example, 448 bits", key: "", nonce: "", aad: "", input: ABC448, output: "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
        ],
        Algorithm::Sha512 => &[
            Vector { source: "FIPS 180 example \"abc\"", key: "", nonce: "", aad: "", input: ABC, output: "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f" },
            Vector { source: "FIPS 180 example, 896 bits", key: "", nonce: "", aad: "", input: ABC896, output: "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909" },
        ],
        Algorithm::HmacSha256 => &[
            Vector {
                source: "RFC 4231 test case 1",
                key: "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b",
                nonce: "",
                aad: "",
                input: "4869205468657265",
                output: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
            },
            Vector {
                source: "RFC 4231 test case 2",
                key: "4a656665",
                nonce: "",
                aad: "",
                input: "7768617420646f2079612077616e7420666f72206e6f7468696e673f",
                output: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
            },
        ],
        Algorithm::DesCbc => super::vectors_legacy::DES_CBC,
        Algorithm::DesEde3Cbc => super::vectors_legacy::DES_EDE3_CBC,
        Algorithm::Rc4 => super::vectors_legacy::RC4,
        // Public-key vectors live in kat/vectors_pkey.rs: they have another shape. (A
        // test holds every symmetric algorithm to vectors of its own.)
        _ => &[],
    }
}
