use super::*;
use anyhow::anyhow;

fn fixture(p: &str) -> PathBuf {
    // The repository's fixtures: this crate sits in crates/impls.
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("tests/fixtures/clock")
        .join(p)
}

fn no_perf(_: usize) -> anyhow::Result<()> {
    Err(anyhow!(
        "perf_event_open(cycles): No such file or directory"
    ))
}

#[test]
fn msr_counters_are_8_little_endian_bytes_at_their_offsets() {
    // /dev/cpu/N/msr returns register N's 8 bytes at offset N: one read each.
    let read = |f: &str| parse_counter(&std::fs::read(fixture(f)).unwrap()).unwrap();
    assert_eq!(read("mperf.bin"), 1_000_000_000);
    assert_eq!(read("aperf.bin"), 500_000_000);
    assert!(read_at(&fixture("dev/cpu/0/msr"), MSR_APERF).is_ok());
    assert_eq!(parse_counter(&[1, 0, 0, 0, 0, 0, 0, 1]), Some(1 | 1 << 56));
    assert_eq!(parse_counter(&[1, 2, 3]), None);
    // Half as many APERF as MPERF ticks at a 2.4 GHz TSC: 1200 MHz delivered.
    assert_eq!(aperf_mperf_mhz(500, 1000, 2.4e9), Some(1200.0));
    assert_eq!(aperf_mperf_mhz(500, 0, 2.4e9), None);
}

#[test]
fn sources_best_first_from_fixture_trees() {
    let sys = fixture("sysfs");
    assert_eq!(cpus_in(&sys), [0, 1]);
    assert_eq!(
        detect_in(&fixture("dev/cpu"), &sys, no_perf).ok(),
        Some(Source::AperfMperf)
    );
    assert_eq!(
        detect_in(&fixture("nodev"), &sys, |_| Ok(())).ok(),
        Some(Source::PerfCycles)
    );
    assert_eq!(
        detect_in(&fixture("nodev"), &sys, no_perf).ok(),
        Some(Source::Cpufreq)
    );
    let why = detect_in(&fixture("nodev"), &fixture("nocpufreq"), no_perf).unwrap_err();
    assert!(
        why.to_string()
            .starts_with("clock not observable: no APERF/MPERF"),
        "{why}"
    );
    assert!(
        why.to_string().contains("modprobe msr")
            && why.to_string().contains("perf_event_open")
            && why.to_string().contains("scaling_cur_freq"),
        "{why}"
    );
}

#[test]
fn cpufreq_khz_and_the_per_core_mean() {
    let t = std::fs::read_to_string(fixture("sysfs/cpu1/cpufreq/scaling_cur_freq")).unwrap();
    assert_eq!(parse_khz(&t), Some(1199.998));
    assert_eq!(parse_khz("0\n"), None);
    assert_eq!(parse_khz("x"), None);
    let a = mean(Source::Cpufreq, [(0, 2400.0), (1, 1200.0)].into()).unwrap();
    assert_eq!(a.mhz, 1800.0);
    let b = mean(Source::Cpufreq, [(0, 2000.0)].into()).unwrap();
    let m = merge(&[a, b]).unwrap();
    assert_eq!(m.per_core_mhz[&0], 2200.0);
    assert_eq!(m.mhz, 1700.0);
    assert!(mean(Source::Cpufreq, BTreeMap::new()).is_none());
}
