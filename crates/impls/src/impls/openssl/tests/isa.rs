//! The instruction-set masks: OPENSSL_ia32cap and armcap values, parsed and checked.

use crate::impls::openssl::isa::*;

// Bits of the two OPENSSL_ia32cap words (OPENSSL_ia32cap(3)). First word: CPUID.1:EDX in
// bits 0-31, CPUID.1:ECX in bits 32-63. Second word: CPUID.(EAX=7,ECX=0):EBX in bits
// 0-31, its ECX in bits 32-63.
const W0_PCLMULQDQ: u64 = 1 << (32 + 1);
const W0_AESNI: u64 = 1 << (32 + 25);
const W1_AVX2: u64 = 1 << 5;
/// AVX512 F, DQ, IFMA, PF, ER, CD, BW, VL (EBX) and VBMI, VBMI2, VNNI, BITALG, VPOPCNTDQ (ECX).
const W1_AVX512: u64 = (1 << 16)
    | (1 << 17)
    | (1 << 21)
    | (1 << 26)
    | (1 << 27)
    | (1 << 28)
    | (1 << 30)
    | (1 << 31)
    | (1 << (32 + 1))
    | (1 << (32 + 6))
    | (1 << (32 + 11))
    | (1 << (32 + 12))
    | (1 << (32 + 14));
const W1_VAES_VPCLMULQDQ: u64 = (1 << (32 + 9)) | (1 << (32 + 10));

#[test]
fn named_isa_masks_are_the_documented_bits() {
    let mask = |name: &str| {
        let n = NAMED_ISA.iter().find(|n| n.name == name).unwrap();
        parse_ia32cap(n.mask).unwrap()
    };
    let clear = |value| {
        Some(CapWord {
            complement: true,
            value,
        })
    };
    assert_eq!(
        mask("no-aesni"),
        Ia32cap(clear(W0_AESNI | W0_PCLMULQDQ), clear(W1_VAES_VPCLMULQDQ))
    );
    assert_eq!(
        mask("no-avx512"),
        Ia32cap(None, clear(W1_AVX512 | W1_VAES_VPCLMULQDQ))
    );
    assert_eq!(
        mask("no-avx2"),
        Ia32cap(None, clear(W1_AVX2 | W1_AVX512 | W1_VAES_VPCLMULQDQ))
    );
    // The AVX-512 bits include F (16), VL (31) and VAES/VPCLMULQDQ are ECX 9 and 10.
    assert_eq!(W1_AVX512 & (1 << 16 | 1 << 31), 1 << 16 | 1 << 31);
    assert_eq!(W1_VAES_VPCLMULQDQ, 0x600_0000_0000);
    assert_eq!(W0_AESNI | W0_PCLMULQDQ, 0x200_0002_0000_0000);
}

#[test]
fn ia32cap_masks_are_parsed_strictly() {
    let w = |complement, value| Some(CapWord { complement, value });
    assert_eq!(
        parse_ia32cap("~0x200000200000000:~0").ok(),
        Some(Ia32cap(w(true, 0x200000200000000), w(true, 0)))
    );
    assert_eq!(
        parse_ia32cap(":0x20").ok(),
        Some(Ia32cap(None, w(false, 0x20)))
    );
    assert_eq!(parse_ia32cap("17").ok(), Some(Ia32cap(w(false, 17), None)));
    assert_eq!(
        parse_ia32cap("~017").ok(),
        Some(Ia32cap(w(true, 0o17), None))
    );
    assert_eq!(
        parse_ia32cap("0X1F").ok(),
        Some(Ia32cap(w(false, 0x1f), None))
    );
    for bad in [
        "",
        ":",
        "~",
        "0x",
        "zz",
        "0x1:",
        "1:2:3",
        "08",
        "~~1",
        "0x1g",
        " 1",
        "0x10000000000000000",
    ] {
        let e = parse_ia32cap(bad).expect_err(bad);
        assert!(!e.to_string().contains('\n'), "{e}");
    }
    // Named variants, a raw mask, and what a mask without a second word does.
    assert_eq!(
        isa_request("no-aesni").unwrap().0,
        "~0x200000200000000:~0x60000000000"
    );
    let (m, what) = isa_request("~0x200000200000000").unwrap();
    assert_eq!(m, "~0x200000200000000");
    assert!(what.contains("zeroes that word"), "{what}");
    let e = isa_request("no-sse").unwrap_err();
    assert!(
        e.to_string().starts_with("isa=no-sse: ") && e.to_string().contains("isa=no-avx512"),
        "{e}"
    );
}

#[test]
fn cpu_info_lines_give_both_capability_words() {
    assert_eq!(
        caps_of("CPUINFO: OPENSSL_ia32cap=0xfffa3203078bffff:0x405fc6f1bf07ab"),
        Some((0xfffa3203078bffff, 0x405fc6f1bf07ab))
    );
    assert_eq!(
        caps_of("CPUINFO: OPENSSL_ia32cap=0x1:0x0 env:~0x2:~0"),
        Some((1, 0))
    );
    assert_eq!(caps_of("CPUINFO: N/A"), None);
    // ARM (seen from Debian's arm64 libcrypto 3.0 under qemu -cpu max): one word.
    assert_eq!(caps_of("CPUINFO: OPENSSL_armcap=0xfd"), Some((0xfd, 0)));
    assert_eq!(caps_of("CPUINFO: OPENSSL_armcap=0x1 env:0x1"), Some((1, 0)));
}

#[test]
fn armcap_names_clear_their_bits_from_what_libcrypto_found() {
    // 0xfd: NEON AES SHA1 SHA256 PMULL SHA512 CPUID.
    assert_eq!(armcap_request("no-aes", Some(0xfd)).unwrap().0, "0xd9");
    assert_eq!(armcap_request("no-neon", Some(0xfd)).unwrap().0, "0xfc");
    assert_eq!(armcap_request("no-sha", Some(0xfd)).unwrap().0, "0xa5");
    // A raw value is taken as given; a ~ form (ia32cap's) or a wrong name is refused.
    assert_eq!(armcap_request("0x1", None).unwrap().0, "0x1");
    let e = armcap_request("no-aesni", Some(0xfd)).unwrap_err();
    assert!(
        e.to_string().contains("isa=no-neon") && !e.to_string().contains('\n'),
        "{e}"
    );
    assert!(armcap_request("~0x4", Some(0xfd)).is_err());
    // A name needs the base capabilities (OpenSSL 1.1 does not report them).
    assert!(armcap_request("no-aes", None)
        .unwrap_err()
        .to_string()
        .contains("isa=0x1"));
}

#[test]
fn isa_values_are_checked_with_this_architectures_parser() {
    // The early --variant check must take what this build's libcrypto will be given:
    // ia32cap masks on x86, armcap names and numbers on ARM (isa=no-aes was once refused on ARM).
    let (ok, other) = if cfg!(any(target_arch = "aarch64", target_arch = "arm")) {
        (["no-aes", "no-neon", "0x1"], "no-aesni")
    } else {
        (["no-aesni", "no-avx512", "~0x2:~0"], "no-aes")
    };
    for v in ok {
        assert!(check_request(v).is_ok(), "{v}");
    }
    assert!(check_request(other).is_err(), "{other}");
}
