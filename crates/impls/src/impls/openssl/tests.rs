use super::*;
use crate::impls::implementation::Symmetric;
use crate::impls::io::Io;
use anyhow::anyhow;
use std::path::Path;

mod isa;

fn system() -> OpenSsl {
    match OpenSsl::load_system() {
        Ok(o) => o,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn version_and_details() {
    let o = system();
    assert!(o.version().starts_with("OpenSSL "), "{}", o.version());
    assert!(o.path().is_absolute() || o.path().to_string_lossy().starts_with("libcrypto"));
    assert!(o.version_info(OPENSSL_BUILT_ON).is_some());
    assert_eq!(o.version_info(-1), None);
    let d = o.details();
    assert!(d.path.is_some());
    assert!(d.cflags.is_some());
    if o.version_num() >= V3_0_0 {
        assert!(d.cpu_info.is_some(), "{d:?}");
    }
}

#[test]
fn load_path_of_the_system_library() {
    let sys = system();
    let again = match OpenSsl::load_path(sys.path()) {
        Ok(o) => o,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(again.version(), sys.version());
    assert!(crate::kat::known_answers(&again, Algorithm::Aes128Gcm).is_ok());
}

/// The libcrypto of `scripts/build-openssl 3.5` (scripts/test builds it before the tests,
/// so it comes from the cache), or why there is none.
fn built_libcrypto() -> anyhow::Result<String> {
    let script = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scripts/build-openssl"
    ));
    let o = std::process::Command::new(script)
        .arg("3.5")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| anyhow!("cannot run {}: {e}", script.display()))?;
    if !o.status.success() {
        let err = String::from_utf8_lossy(&o.stderr);
        return Err(anyhow!(
            "scripts/build-openssl 3.5 failed: {}",
            err.lines().last().unwrap_or("")
        ));
    }
    let dir = String::from_utf8_lossy(&o.stdout).trim().to_string();
    ["lib64", "lib"]
        .iter()
        .map(|l| Path::new(&dir).join(l).join("libcrypto.so.3"))
        .find(|p| p.is_file())
        .map(|p| p.display().to_string())
        .ok_or_else(|| anyhow!("{dir}: no lib/libcrypto.so.3"))
}

/// Other builds than the system's, through every known answer and a round trip with the
/// system's: `CRYPTOBENCH_TEST_LIBCRYPTO=/path/libcrypto.so.1.1:/other/libcrypto.so.3`,
/// or by default OpenSSL 3.5 as scripts/build-openssl builds it.
#[test]
fn known_answers_for_other_builds_from_env() {
    let list = match std::env::var("CRYPTOBENCH_TEST_LIBCRYPTO") {
        Ok(l) => l,
        Err(_) => match built_libcrypto() {
            Ok(l) => l,
            Err(why) => {
                return crate::testing::skip(&format!(
                    "no other libcrypto to check ({why}): set CRYPTOBENCH_TEST_LIBCRYPTO"
                ))
            }
        },
    };
    let mut checked = 0;
    for p in list.split(':').filter(|p| !p.is_empty()) {
        checked += 1;
        let o = match OpenSsl::load_path(Path::new(p)) {
            Ok(o) => o,
            Err(e) => panic!("{e}"),
        };
        // Everything the system's libcrypto offers through cryptobench, the other build
        // offers too (what cryptobench does not reach, e.g. OpenSSL's ML-KEM, on neither).
        let offered: Vec<Algorithm> = Algorithm::ALL
            .iter()
            .copied()
            .filter(|&a| system().support(a) == Support::Yes)
            .collect();
        assert!(
            offered.len() > 10,
            "the system libcrypto offers {offered:?}"
        );
        for &alg in &offered {
            // A second libcrypto.so.3 in this process (the system's is loaded too) cannot
            // load its own legacy.so, which binds to the first one's symbols: the tool must
            // then say so, and not measure single DES or RC4 on that build.
            if alg.is_legacy() {
                if let Support::No(why) = o.support(alg) {
                    assert!(why.contains("legacy provider"), "{p}: {alg}: {why}");
                    continue;
                }
            }
            assert_eq!(o.support(alg), Support::Yes, "{p}: {alg}");
            if let Err(e) = crate::kat::known_answers(&o, alg) {
                panic!("{p} ({}): {alg}: {e}", o.version());
            }
            if let Err(e) = crate::kat::round_trip(&o, &system(), alg) {
                panic!("{p} ({}) vs system: {alg}: {e}", o.version());
            }
        }
        // 3.5 and later: ML-KEM, ML-DSA and the TLS hybrid, through the same known
        // answers as aws-lc and against aws-lc both ways.
        for alg in [
            Algorithm::MlKem768,
            Algorithm::MlDsa65,
            Algorithm::X25519MlKem768,
        ] {
            if o.version_num() < 0x3050_0000 {
                assert!(
                    matches!(o.support(alg), Support::No(ref why) if why.contains("before 3.5")),
                    "{p}: {alg}"
                );
                continue;
            }
            assert_eq!(o.support(alg), Support::Yes, "{p}: {alg}");
            crate::kat::known_answers(&o, alg).unwrap_or_else(|e| panic!("{p}: {alg}: {e}"));
            crate::kat::pkey::cross_check(&o, &crate::impls::aws_lc::AwsLc, alg)
                .unwrap_or_else(|e| panic!("{p} vs aws-lc: {alg}: {e}"));
        }
        let d = o.details();
        assert!(d.version.is_some() && d.built_on.is_some(), "{d:?}");
    }
    assert!(checked > 0, "CRYPTOBENCH_TEST_LIBCRYPTO names no file");
}

fn one_line_error(path: &str, expect: &str) {
    let err = match OpenSsl::load_path(Path::new(path)) {
        Ok(_) => panic!("{path} loaded as a libcrypto"),
        Err(e) => e,
    };
    assert!(!err.to_string().contains('\n'), "{err}");
    assert!(
        err.to_string()
            .starts_with(&format!("--libcrypto {path}: ")),
        "{err}"
    );
    assert!(err.to_string().contains(expect), "{err}");
    assert!(err.to_string().ends_with(HOW_TO_FIX), "{err}");
}

#[test]
fn load_path_refuses_what_is_not_a_libcrypto() {
    one_line_error("/bin/ls", "cannot load");
    one_line_error(
        "/nonexistent/libcrypto.so.3",
        "cannot load (file not found)",
    );
    one_line_error("/tmp", "cannot load (is a directory)");
    // A real shared library that is not OpenSSL.
    let libc_path = [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/usr/lib/x86_64-linux-gnu/libc.so.6",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists());
    if let Some(p) = libc_path {
        one_line_error(p, "not a libcrypto (no OpenSSL_version symbol)");
    }
}

fn speed_loop() -> Box<dyn Implementation> {
    match system().with_variant("speed-loop") {
        Some(Ok(v)) => v,
        Some(Err(e)) => panic!("{e}"),
        None => panic!("speed-loop not understood"),
    }
}

#[test]
fn variants_are_understood_only_by_a_base_instance() {
    let base = system();
    assert!(base.with_variant("turbo").is_none());
    assert!(base.with_variant("isa").is_none());
    // Refused before anything is loaded.
    match base.with_variant("isa=nonsense") {
        Some(Err(e)) => assert!(!e.contains('\n') && e.contains("isa=nonsense"), "{e}"),
        _ => panic!("isa=nonsense accepted"),
    }
    let sl = speed_loop();
    assert_eq!(sl.variant().as_deref(), Some("speed-loop"));
    assert_eq!(sl.details().variant.unwrap().spec, "speed-loop");
    assert!(sl.with_variant("isa=no-aesni").is_none());
    assert!(sl.with_variant("speed-loop").is_none());
}

#[test]
fn speed_loop_passes_known_answers_and_round_trips() {
    let sl = speed_loop();
    let base = system();
    for alg in Algorithm::ALL {
        match sl.support(alg) {
            Support::Yes => {
                if let Err(e) = crate::kat::known_answers(sl.as_ref(), alg) {
                    panic!("{alg}: {e}");
                }
                if let Err(e) = crate::kat::round_trip(sl.as_ref(), &base, alg) {
                    panic!("{alg}: {e}");
                }
                let note = &sl.notes(alg, Direction::Enc)[0];
                assert!(note.starts_with("speed-loop: "), "{note}");
            }
            Support::No(why) => {
                assert!(
                    matches!(alg, Algorithm::Chacha20Poly1305)
                        || matches!(alg.kind(), Kind::Hash | Kind::Mac)
                        || alg.kind().is_public_key()
                        || alg.is_legacy(),
                    "{alg}: {why}"
                );
                assert!(sl.prepare(alg, Direction::Enc, &[0u8; 32]).is_err());
            }
        }
    }
}

/// Many calls on one operation, shaped like the timed loop (seal in place over the
/// previous output with a new nonce each time; open the same sealed message again and
/// again) and unlike it (sizes and nonces changing, in place and out of place):
/// every call must give exactly what a fresh per-message operation gives.
#[test]
fn speed_loop_gives_every_call_its_own_message_answer() {
    use crate::kat::pattern;
    let sl = speed_loop();
    let base = system();
    let algs = [
        Algorithm::Aes128Gcm,
        Algorithm::Aes256Gcm,
        Algorithm::Aes128Cbc,
        Algorithm::Aes256Cbc,
        Algorithm::Aes128Ctr,
        Algorithm::Aes256Ctr,
    ];
    for alg in algs {
        let key = pattern(alg.key_len(), 3);
        let aad = if alg.kind() == Kind::Aead {
            pattern(13, 4)
        } else {
            Vec::new()
        };
        let sizes: Vec<usize> = [16usize, 1344, 32, 16384, 48, 1350, 5, 0]
            .into_iter()
            .filter(|s| alg.size_problem(*s).is_none())
            .collect();
        let nonce_of = |k: usize| pattern(alg.nonce_len(), 40 + k as u8);
        let reference = |nonce: &[u8], msg: &[u8]| -> Vec<u8> {
            let mut op = base.prepare(alg, Direction::Enc, &key).unwrap();
            let mut b = msg.to_vec();
            b.resize(msg.len() + 64, 0);
            let n = op
                .process(
                    nonce,
                    &aad,
                    Io::InPlace {
                        buf: &mut b,
                        len: msg.len(),
                    },
                )
                .unwrap();
            b.truncate(n);
            b
        };
        // Seal: one operation, the buffer keeps the previous output.
        let mut op = sl.prepare(alg, Direction::Enc, &key).unwrap();
        let mut buf = pattern(16384 + 64, 9);
        for k in 0..24 {
            let size = sizes[k % sizes.len()];
            let nonce = nonce_of(k % 5);
            let expect = reference(&nonce, &buf[..size]);
            let n = op
                .process(
                    &nonce,
                    &aad,
                    Io::InPlace {
                        buf: &mut buf,
                        len: size,
                    },
                )
                .unwrap_or_else(|e| panic!("{alg} seal {k}: {e}"));
            assert_eq!(&buf[..n], &expect[..], "{alg} seal call {k} ({size} bytes)");
        }
        // Out of place too (the harness never seals that way, but it must be right).
        let msg = pattern(sizes[0], 1);
        let mut out = vec![0u8; msg.len() + 64];
        let n = op
            .process(
                &nonce_of(7),
                &aad,
                Io::Separate {
                    input: &msg,
                    output: &mut out,
                },
            )
            .unwrap();
        assert_eq!(
            &out[..n],
            &reference(&nonce_of(7), &msg)[..],
            "{alg} separate seal"
        );
        // Open: one operation, varying messages, then the same one many times.
        let mut op = sl.prepare(alg, Direction::Dec, &key).unwrap();
        for k in 0..24 {
            let size = sizes[k % sizes.len()];
            let msg = pattern(size, k as u8);
            let nonce = nonce_of(if k < 12 { k % 3 } else { 1 });
            let sealed = reference(&nonce, &msg);
            let n = if k % 2 == 0 {
                let mut out = vec![0u8; sealed.len() + 64];
                let n = op
                    .process(
                        &nonce,
                        &aad,
                        Io::Separate {
                            input: &sealed,
                            output: &mut out,
                        },
                    )
                    .unwrap_or_else(|e| panic!("{alg} open {k}: {e}"));
                out.truncate(n);
                out
            } else {
                let mut b = sealed.clone();
                b.resize(sealed.len() + 64, 0);
                let n = op
                    .process(
                        &nonce,
                        &aad,
                        Io::InPlace {
                            buf: &mut b,
                            len: sealed.len(),
                        },
                    )
                    .unwrap_or_else(|e| panic!("{alg} open {k}: {e}"));
                b.truncate(n);
                b
            };
            assert_eq!(n, msg, "{alg} open call {k} ({size} bytes)");
        }
    }
}

#[test]
fn speed_loop_refuses_forgeries_and_bad_sizes_then_carries_on() {
    use crate::impls::conformance::{in_place, separate};
    use crate::kat::pattern;
    let sl = speed_loop();
    let key = [7u8; 16];
    let nonce = [9u8; 12];
    let aad = pattern(13, 1);
    let mut seal = sl
        .prepare(Algorithm::Aes128Gcm, Direction::Enc, &key)
        .unwrap();
    let mut buf = pattern(64 + 64, 2);
    let n = seal
        .process(
            &nonce,
            &aad,
            Io::InPlace {
                buf: &mut buf,
                len: 64,
            },
        )
        .unwrap();
    let sealed = buf[..n].to_vec();
    let mut open = sl
        .prepare(Algorithm::Aes128Gcm, Direction::Dec, &key)
        .unwrap();
    let mut out = vec![0u8; 200];
    let mut forged = sealed.clone();
    forged[n - 1] ^= 1;
    assert_eq!(
        open.process(
            &nonce,
            &aad,
            Io::Separate {
                input: &forged,
                output: &mut out
            }
        )
        .map_err(|e| e.to_string()),
        Err(anyhow!("tag verification failed")).map_err(|e| e.to_string())
    );
    assert!(separate(open.as_mut(), &nonce, &sealed[..8], 200).is_err());
    assert!(separate(open.as_mut(), &[0u8; 8], &sealed, 200).is_err());
    assert_eq!(
        open.process(
            &nonce,
            &aad,
            Io::Separate {
                input: &sealed,
                output: &mut out
            }
        )
        .ok(),
        Some(64)
    );
    assert_eq!(&out[..64], &pattern(64, 2)[..]);
    // CBC: a partial block and a short IV are errors; the stream still gives the
    // right answer afterwards.
    let mut cbc = sl
        .prepare(Algorithm::Aes128Cbc, Direction::Enc, &key)
        .unwrap();
    assert!(in_place(cbc.as_mut(), &[0u8; 16], 15, 64).is_err());
    assert!(in_place(cbc.as_mut(), &[0u8; 8], 16, 64).is_err());
    assert!(in_place(cbc.as_mut(), &[0u8; 16], 16, 20).is_err());
    assert!(separate(cbc.as_mut(), &[0u8; 16], &[0u8; 32], 20).is_err());
    let base = system();
    let mut reference = base
        .prepare(Algorithm::Aes128Cbc, Direction::Enc, &key)
        .unwrap();
    let mut a = [5u8; 64];
    let mut r = [5u8; 64];
    for _ in 0..3 {
        assert_eq!(
            cbc.process(
                &[1u8; 16],
                &[],
                Io::InPlace {
                    buf: &mut a,
                    len: 32
                }
            )
            .ok(),
            Some(32)
        );
        reference
            .process(
                &[1u8; 16],
                &[],
                Io::InPlace {
                    buf: &mut r,
                    len: 32,
                },
            )
            .unwrap();
        assert_eq!(a, r);
    }
}

#[test]
fn operations_are_send() {
    fn is_send<T: Send>(_: &T) {}
    let o = system();
    let op = o.prepare(Algorithm::Sha256, Direction::Enc, &[]).unwrap();
    is_send(&op);
    let handle = std::thread::spawn(move || {
        let mut op = op;
        let mut buf = [0u8; 3 + 64];
        buf[..3].copy_from_slice(b"abc");
        let n = op
            .process(
                &[],
                &[],
                Io::InPlace {
                    buf: &mut buf,
                    len: 3,
                },
            )
            .unwrap();
        hex::encode(&buf[3..3 + n])
    });
    assert_eq!(
        handle.join().unwrap(),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}
