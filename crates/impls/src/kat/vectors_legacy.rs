//! Known-answer vectors of the legacy ciphers (DES, Triple DES, RC4).

use super::vector::Vector;

/// FIPS 81 appendix C, the CBC example: "Now is the time for all ".
pub const DES_CBC: &[Vector] = &[Vector {
    source: "FIPS 81 appendix C (CBC mode example)",
    key: "0123456789abcdef",
    nonce: "1234567890abcdef",
    aad: "",
    input: "4e6f77206973207468652074696d6520666f7220616c6c20",
    output: "e5c7cdde872bf27c43e934008c389c0f683788499a7c05f6",
}];

/// NIST SP 800-67 rev. 2, the TDEA example (keys K1, K2, K3; "The qufck brown fox jump").
/// The example is ECB; CBC with a zero IV gives the same first block, and feeding CBC each
/// later plaintext block XORed with the ciphertext block before it gives the example's
/// ciphertext unchanged, so the chaining is checked against the published bytes.
pub const DES_EDE3_CBC: &[Vector] = &[
    Vector {
        source: "NIST SP 800-67 TDEA example, first block (CBC, zero IV)",
        key: "0123456789abcdef23456789abcdef01456789abcdef0123",
        nonce: "0000000000000000",
        aad: "",
        input: "5468652071756663",
        output: "a826fd8ce53b855f",
    },
    Vector {
        source: "NIST SP 800-67 TDEA example, three blocks chained (CBC, zero IV, P2 and P3 XORed with C1 and C2)",
        key: "0123456789abcdef23456789abcdef01456789abcdef0123",
        nonce: "0000000000000000",
        aad: "",
        input: "5468652071756663c3069ffe8a4ceb7faa8d64a178500296",
        output: "a826fd8ce53b855fcce21c8112256fe668d5c05dd9b6b900",
    },
];

/// RFC 6229 section 2, 128-bit keys: the keystream at offsets 0 and 16 (the message is
/// zeros, so the ciphertext is the keystream).
pub const RC4: &[Vector] = &[
    Vector {
        source: "RFC 6229 section 2, 128-bit key 0x0102..10, offsets 0-31",
        key: "0102030405060708090a0b0c0d0e0f10",
        nonce: "",
        aad: "",
        input: "0000000000000000000000000000000000000000000000000000000000000000",
        output: "9ac7cc9a609d1ef7b2932899cde41b975248c4959014126a6e8a84f11d1a9e1c",
    },
    Vector {
        source: "RFC 6229 section 2, 128-bit key 0xebb462..2a, offsets 0-31",
        key: "ebb46227c6cc8b37641910833222772a",
        nonce: "",
        aad: "",
        input: "0000000000000000000000000000000000000000000000000000000000000000",
        output: "720c94b63edf44e131d950ca211a5a30c366fdeacf9ca80436be7c358424d20b",
    },
];
