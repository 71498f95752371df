use super::*;
use serde_json::{json, Value};

/// The description as it is written to a results file.
fn described(arch: ArmArch, hwcap: u64, hwcap2: u64, midr: Option<u64>, cpuinfo: &str) -> Value {
    serde_json::to_value(describe(arch, hwcap, hwcap2, midr, cpuinfo)).unwrap()
}

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/cpuinfo/{name}.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn cortex_a9_with_and_without_neon() {
    let nas = fixture("cortex-a9-armada385");
    let midr = Midr::from_cpuinfo(&nas).expect("midr");
    assert_eq!(midr.model(), "ARM Cortex-A9 r4p1");
    assert!(cpuinfo_features(&nas)
        .unwrap()
        .contains(&"neon".to_string()));
    // Broadcom Northstar routers have Cortex-A9 cores without NEON (nor VFP).
    let router = fixture("cortex-a9-bcm4708-router");
    assert_eq!(
        Midr::from_cpuinfo(&router).unwrap().model(),
        "ARM Cortex-A9 r3p0"
    );
    assert!(!cpuinfo_features(&router)
        .unwrap()
        .contains(&"neon".to_string()));
}

#[test]
fn cortex_a7_and_a53() {
    let a7 = fixture("cortex-a7-rpi2");
    assert_eq!(
        Midr::from_cpuinfo(&a7).unwrap().model(),
        "ARM Cortex-A7 r0p5"
    );
    let a53 = fixture("cortex-a53-aarch64");
    assert_eq!(
        Midr::from_cpuinfo(&a53).unwrap().model(),
        "ARM Cortex-A53 r0p4"
    );
    let feats = cpuinfo_features(&a53).unwrap();
    for f in ["asimd", "aes", "pmull", "sha1", "sha2"] {
        assert!(feats.iter().any(|x| x == f), "{f} in {feats:?}");
    }
    // The Raspberry Pi 3's A53 was licensed without the crypto extensions.
    let rpi3 = cpuinfo_features(&fixture("cortex-a53-rpi3-no-crypto")).unwrap();
    assert!(rpi3.iter().any(|x| x == "asimd") && !rpi3.iter().any(|x| x == "aes"));
}

#[test]
fn family_tells_the_host_cpuinfo_qemu_user_passes_through() {
    assert_eq!(cpuinfo_family(&fixture("qemu72-host-x86")), Some("x86"));
    assert_eq!(cpuinfo_family(&fixture("qemu8-arm-emulated")), Some("arm"));
    assert_eq!(cpuinfo_family(&fixture("cortex-a53-aarch64")), Some("arm"));
    assert_eq!(cpuinfo_family(""), None);
    // An MT7621 router's, in the layout of the kernel's arch/mips/kernel/proc.c.
    assert_eq!(cpuinfo_family(&fixture("mt7621-1004kc-mips")), Some("mips"));
    // qemu 8's emulated cpuinfo writes the variant as 0x0f.
    let q = Midr::from_cpuinfo(&fixture("qemu8-arm-emulated")).unwrap();
    assert_eq!((q.part, q.variant), (0xc07, 15));
}

#[test]
fn hwcap_bits_name_the_kernel_features() {
    // Cortex-A9 with NEON (HWCAP_NEON = 1 << 12), no ARMv8 crypto in HWCAP2.
    let a9 = ArmArch::Aarch32.features_from_hwcap(1 << 12 | 1 << 6, 0);
    assert!(a9["neon"]);
    assert!(["aes", "pmull", "sha1", "sha2"].iter().all(|f| !a9[f]));
    // An ARMv8 core in AArch32 state: the crypto bits are in HWCAP2.
    let v8 = ArmArch::Aarch32.features_from_hwcap(1 << 12, 0b1111);
    assert!(v8.values().all(|on| *on));
    // aarch64: FP | ASIMD | AES | PMULL | SHA1 | SHA2 | SHA3 | SHA512.
    let max = 1 | 1 << 1 | 1 << 3 | 1 << 4 | 1 << 5 | 1 << 6 | 1 << 17 | 1 << 21;
    let all = ArmArch::Aarch64.features_from_hwcap(max, 0);
    assert_eq!(all.len(), 7);
    assert!(all.values().all(|on| *on));
    let a53 =
        ArmArch::Aarch64.features_from_hwcap(1 | 1 << 1 | 1 << 3 | 1 << 4 | 1 << 5 | 1 << 6, 0);
    assert!(!a53["sha512"] && !a53["sha3"] && a53["aes"]);
}

#[test]
fn describe_cross_checks_hwcap_with_cpuinfo() {
    let a53 = fixture("cortex-a53-aarch64");
    let hw = 1 | 1 << 1 | 1 << 3 | 1 << 4 | 1 << 5 | 1 << 6 | 1 << 11;
    let v = described(ArmArch::Aarch64, hw, 0, None, &a53);
    assert_eq!(v["model"], "ARM Cortex-A53 r0p4");
    assert_eq!(v["features"]["aes"], true);
    assert_eq!(v["features_disagreeing_with_cpuinfo"], json!([]));
    // The RPi 3 cpuinfo against a HWCAP that claims AES: the disagreement is named.
    let v = described(
        ArmArch::Aarch64,
        hw,
        0,
        None,
        &fixture("cortex-a53-rpi3-no-crypto"),
    );
    assert_eq!(
        v["features_disagreeing_with_cpuinfo"],
        json!(["aes", "pmull", "sha1", "sha2"])
    );
    // Under qemu-user 7.2 the cpuinfo is the host's: no cpuinfo features, and the
    // model comes from the register when there is one.
    let host = fixture("qemu72-host-x86");
    let v = described(ArmArch::Aarch64, hw, 0, Some(0x410f_d034), &host);
    assert_eq!(v["cpuinfo_features"], Value::Null);
    assert_eq!(v["model"], "ARM Cortex-A53 r0p4");
    let v = described(ArmArch::Aarch32, 1 << 12, 0, None, &host);
    assert_eq!(v["model"], Value::Null);
    assert_eq!(v["features"]["neon"], true);
}

#[test]
fn midr_register_fields() {
    let m = Midr::from_register(0x413f_c090);
    assert_eq!(
        (m.implementer, m.variant, m.part, m.revision),
        (0x41, 3, 0xc09, 0)
    );
    assert_eq!(
        Midr::from_register(0x5100_04d0).model(),
        "Qualcomm Krait r0p0"
    );
    assert_eq!(
        Midr::from_register(0x4400_1230).model(),
        "implementer 0x44 part 0x123 r0p0"
    );
}
