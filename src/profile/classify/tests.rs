//! The rules on real code: functions of the installed libcrypto, found by decoding its
//! own bytes (its assembly has no names), never made-up bytes.

use super::super::decode::{self, Decoded, Mark};
use super::super::elf::Elf;
use super::*;
use std::path::Path;

/// Every function of the system libcrypto with its decoded instructions, or None after
/// saying why the test cannot run here (the skip rule honours CRYPTOBENCH_REQUIRE_ALL).
/// An error of the ELF reader itself fails the test.
fn library() -> Option<(Elf, Vec<Decoded>)> {
    if !cfg!(target_arch = "x86_64") {
        crate::testing::skip("the instruction rules decode x86-64 code only");
        return None;
    }
    let path = match crate::testing::system_libcrypto() {
        Ok(p) => p,
        Err(why) => {
            crate::testing::skip(&format!("no system libcrypto: {why}"));
            return None;
        }
    };
    let elf = Elf::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let decoded: Vec<Decoded> = elf
        .functions()
        .iter()
        .map(|f| {
            let code = elf
                .code(f.start, f.end)
                .unwrap_or_else(|| panic!("{}: no code at {:#x}", path.display(), f.start));
            decode::decode(code, true, f.start).expect("x86-64 code decodes")
        })
        .collect();
    assert!(!decoded.is_empty(), "{}: no functions", path.display());
    Some((elf, decoded))
}

/// Address of the first instruction with mark `m` whose nearest marked neighbour is
/// itself (so the window sees it first).
fn address_of(d: &Decoded, m: Mark) -> Option<u64> {
    d.instrs
        .iter()
        .find(|(_, x)| *x == Some(m))
        .map(|(a, _)| *a)
}

#[test]
fn stitched_aes_gcm_splits_into_aes_and_ghash_by_the_nearest_instruction() {
    let Some((_, lib)) = library() else {
        return;
    };
    let stitched: Vec<&Decoded> = lib
        .iter()
        .filter(|d| d.count(Mark::Aes) > 20 && d.count(Mark::Clmul) > 10)
        .collect();
    assert!(
        !stitched.is_empty(),
        "libcrypto has stitched AES-GCM (aesni_gcm_encrypt)"
    );
    for d in stitched {
        let aes = address_of(d, Mark::Aes).unwrap();
        assert_eq!(by_instructions(d, aes), Some(Category::Aes));
        let clmul = address_of(d, Mark::Clmul).unwrap();
        assert_eq!(by_instructions(d, clmul), Some(Category::Ghash));
    }
}

#[test]
fn sha_extension_code_is_sha1_or_sha2() {
    let Some((_, lib)) = library() else {
        return;
    };
    let sha256: Vec<&Decoded> = lib.iter().filter(|d| d.count(Mark::Sha256Ni) > 0).collect();
    let sha1: Vec<&Decoded> = lib.iter().filter(|d| d.count(Mark::Sha1Ni) > 0).collect();
    assert!(!sha256.is_empty() && !sha1.is_empty());
    for d in sha256.iter().filter(|d| d.count(Mark::Aes) == 0) {
        let a = address_of(d, Mark::Sha256Ni).unwrap();
        assert_eq!(by_instructions(d, a), Some(Category::Sha2));
    }
    for d in sha1.iter().filter(|d| d.count(Mark::Aes) == 0) {
        let a = address_of(d, Mark::Sha1Ni).unwrap();
        assert_eq!(by_instructions(d, a), Some(Category::Sha1));
    }
}

#[test]
fn chacha20_and_poly1305_have_their_own_functions_and_neither_has_aes() {
    let Some((_, lib)) = library() else {
        return;
    };
    let mut chacha = 0;
    let mut poly = 0;
    for d in &lib {
        // Classify every instruction of the function as a sample would be.
        let cats: Vec<Option<Category>> = d
            .instrs
            .iter()
            .map(|&(a, _)| by_instructions(d, a))
            .collect();
        let any = |c| cats.contains(&Some(c));
        if any(Category::Chacha20) {
            chacha += 1;
            assert_eq!(d.count(Mark::Aes), 0);
            assert_eq!(d.count(Mark::Clmul), 0);
        }
        if any(Category::Poly1305) {
            poly += 1;
            assert_eq!(d.count(Mark::Aes), 0);
            assert!(d.count(Mark::Fold5) > 0);
        }
    }
    // OpenSSL 3 on x86-64 ships ChaCha20 in SSSE3, AVX2 and AVX-512 flavours, Poly1305
    // in scalar, AVX, AVX2 and AVX-512 ones.
    assert!(chacha >= 2, "{chacha} ChaCha20 functions");
    assert!(poly >= 2, "{poly} Poly1305 functions");
}

#[test]
fn bignum_multiplication_is_not_poly1305() {
    let Some((_, lib)) = library() else {
        return;
    };
    // Montgomery and P-256 code (RSA, ECDHE handshakes) multiply as much as Poly1305
    // does; without the times-5 fold none of it may count as Poly1305.
    let bignum: Vec<&Decoded> = lib
        .iter()
        .filter(|d| d.count(Mark::Mul64) >= 20 && d.count(Mark::Fold5) == 0)
        .collect();
    assert!(
        bignum.len() >= 5,
        "{} multiply-heavy functions",
        bignum.len()
    );
    for d in bignum {
        for &(a, _) in &d.instrs {
            assert_ne!(by_instructions(d, a), Some(Category::Poly1305));
        }
    }
}

#[test]
fn names_and_callers_follow_the_table() {
    let frame = |sym: &str, dso: &str| Frame {
        ip: 0xffff_ffff_8100_0000,
        symbol: Some(sym.into()),
        dso: Some(dso.into()),
    };
    let k = "[kernel.kallsyms]";
    let mut c = Classifier::default();
    let mut cat = |frames: Vec<Frame>| {
        c.classify(&Sample {
            comm: "t".into(),
            tid: 1,
            frames,
        })
        .category
    };
    assert_eq!(
        cat(vec![frame("copy_user_enhanced_fast_string", k)]),
        Category::Memcpy
    );
    assert_eq!(
        cat(vec![
            frame("_raw_spin_lock", k),
            frame("tcp_sendmsg", k),
            frame("__x64_sys_sendto", k)
        ]),
        Category::KernelNet
    );
    assert_eq!(
        cat(vec![frame("_raw_spin_lock", k), frame("__schedule", k)]),
        Category::SchedIdle
    );
    assert_eq!(cat(vec![frame("entry_SYSCALL_64", k)]), Category::Syscall);
    assert_eq!(
        cat(vec![frame("aesni_gcm_enc_update_avx_gen4", k)]),
        Category::Aes
    );
    assert_eq!(cat(vec![frame("some_driver_fn", k)]), Category::KernelOther);
    // Dropbear's libtomcrypt: AES is rijndael, ChaCha20 and Poly1305 by their names.
    let tomcrypt = "/usr/lib/x86_64-linux-gnu/libtomcrypt.so.1";
    assert_eq!(
        cat(vec![frame("rijndael_ecb_encrypt", tomcrypt)]),
        Category::Aes
    );
    assert_eq!(
        cat(vec![frame("chacha_crypt", tomcrypt)]),
        Category::Chacha20
    );
    assert_eq!(
        cat(vec![frame("poly1305_process", tomcrypt)]),
        Category::Poly1305
    );
    // AF_ALG's per-call work (stacks as perf records them in the guest): the socket
    // allocation under af_alg_sendmsg is the crypto interface, not the network stack,
    // while the cipher itself and the user copy keep their own categories.
    // A leaf (inner frames first) under a chain of kernel callers.
    let under = |leaf: Vec<Frame>, callers: [&str; 5]| {
        let mut v = leaf;
        v.extend(callers.map(|n| frame(n, k)));
        v
    };
    let af_alg = |leaf: Vec<Frame>| {
        under(
            leaf,
            [
                "af_alg_sendmsg",
                "__sock_sendmsg",
                "____sys_sendmsg",
                "__sys_sendmsg",
                "do_syscall_64",
            ],
        )
    };
    assert_eq!(
        cat(af_alg(vec![
            frame("memset_erms", k),
            frame("__kmalloc", k),
            frame("sock_kmalloc", k)
        ])),
        Category::CryptoApi
    );
    assert_eq!(
        cat(af_alg(vec![frame("aesni_cbc_enc", "[aesni_intel]")])),
        Category::Aes
    );
    assert_eq!(
        cat(af_alg(vec![frame("copy_user_enhanced_fast_string", k)])),
        Category::Memcpy
    );
    // The same allocation under TCP stays network stack.
    assert_eq!(
        cat(vec![
            frame("memset_erms", k),
            frame("sock_kmalloc", k),
            frame("tcp_sendmsg", k)
        ]),
        Category::KernelNet
    );
    // Kernel TLS (nginx's SSL_sendfile): the record work under tls_sw_sendpage is
    // kernel-tls, the kernel's AES-GCM under it stays aes.
    let ktls = |leaf: Vec<Frame>| {
        under(
            leaf,
            [
                "tls_sw_do_sendpage",
                "tls_sw_sendpage",
                "inet_sendpage",
                "kernel_sendpage",
                "do_sendfile",
            ],
        )
    };
    assert_eq!(
        cat(ktls(vec![
            frame("sg_init_table", k),
            frame("tls_push_record", k)
        ])),
        Category::KernelTls
    );
    assert_eq!(
        cat(ktls(vec![frame(
            "aesni_gcm_enc_update_avx_gen4",
            "[aesni_intel]"
        )])),
        Category::Aes
    );
    assert_eq!(cat(vec![]), Category::Unknown);
}

/// An ARM DUT profiles its own code: the classifier tells it by names alone and never
/// reads its bytes as x86-64 (that gave AES or ChaCha marks to arbitrary ARM words).
/// The aarch64 C library of Debian's cross compiler (scripts/deps/arm.sh) is real ARM code.
#[test]
fn another_machines_code_is_never_decoded_as_x86_64() {
    let path = "/usr/aarch64-linux-gnu/lib/libc.so.6";
    if !Path::new(path).is_file() {
        crate::testing::skip(&format!("no {path}: scripts/deps/arm.sh installs it"));
        return;
    }
    let elf = Elf::open(Path::new(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert!(!elf.is_x86_64(), "{path} read as x86-64");
    let f = elf
        .functions()
        .iter()
        .find(|f| f.end - f.start >= 256 && elf.code(f.start, f.end).is_some())
        .expect("a function of some size");
    let mut c = Classifier::default();
    assert!(c.decoded(path, f.start, f.end).is_none());
    if let Ok(ours) = crate::testing::system_libcrypto() {
        assert!(
            Elf::open(&ours).expect("the system libcrypto").is_x86_64()
                == cfg!(target_arch = "x86_64")
        );
    }
}
