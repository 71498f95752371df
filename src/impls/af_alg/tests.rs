use super::*;

#[test]
fn kernel_names_cover_every_algorithm() {
    for a in Algorithm::ALL {
        let (kind, name) = kernel_name(a);
        let expect = match a.kind() {
            Kind::Aead => "aead",
            Kind::Cipher => "skcipher",
            Kind::Hash | Kind::Mac => "hash",
        };
        assert_eq!(kind, expect, "{a}");
        assert!(!name.is_empty());
    }
}

#[test]
fn control_messages_are_laid_out_for_the_kernel() {
    let iv = [7u8; 12];
    let c = Control::new(true, &iv, Some(13));
    // op (4 bytes), iv (4 + 12), assoclen (4): CMSG_SPACE each.
    let space = |n: u32| unsafe { libc::CMSG_SPACE(n) } as usize;
    assert_eq!(c.len, space(4) + space(16) + space(4));
    let bytes: Vec<u8> = c.buf.iter().flat_map(|w| w.to_ne_bytes()).collect();
    let hdr = unsafe { libc::CMSG_LEN(0) } as usize;
    // First message: SOL_ALG / ALG_SET_OP = encrypt.
    let level = i32::from_ne_bytes(bytes[8..12].try_into().unwrap());
    let kind = i32::from_ne_bytes(bytes[12..16].try_into().unwrap());
    assert_eq!((level, kind), (libc::SOL_ALG, libc::ALG_SET_OP));
    assert_eq!(
        u32::from_ne_bytes(bytes[hdr..hdr + 4].try_into().unwrap()),
        libc::ALG_OP_ENCRYPT as u32
    );
    // Second: the IV with its length.
    let o = space(4);
    let kind = i32::from_ne_bytes(bytes[o + 12..o + 16].try_into().unwrap());
    assert_eq!(kind, libc::ALG_SET_IV);
    assert_eq!(
        u32::from_ne_bytes(bytes[o + hdr..o + hdr + 4].try_into().unwrap()),
        12
    );
    assert_eq!(&bytes[o + hdr + 4..o + hdr + 16], &iv);
}

#[test]
fn variant_specs() {
    assert!(understands_variant("zerocopy"));
    assert!(understands_variant("driver=cbc(aes-generic)"));
    assert!(!understands_variant("driver="));
    assert!(!understands_variant("isa=no-avx512"));
}

/// On a kernel without AF_ALG, probe fails with the reason kernel::af_alg_status
/// gives; with AF_ALG, every algorithm has an answer and offered ones name a driver.
/// The real known-answer checks run in the guest (tests/guest_kernel_paths.rs).
#[test]
fn probe_reports_the_kernels_reason() {
    let config = KernelConfig::read();
    let statuses: Vec<Usable> = TYPES
        .iter()
        .map(|k| kernel::af_alg_status(k, &config))
        .collect();
    match AfAlg::probe() {
        Err(reason) => {
            assert!(statuses.iter().all(|s| !s.usable));
            assert!(
                statuses.iter().any(|s| reason.contains(&s.reason)),
                "{reason}"
            );
        }
        Ok(a) => {
            assert!(statuses.iter().any(|s| s.usable));
            for alg in Algorithm::ALL {
                if a.support(alg) == Support::Yes {
                    assert!(a.driver_for(alg).is_some_and(|d| !d.is_empty()), "{alg}");
                }
            }
        }
    }
}
