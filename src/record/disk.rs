//! The disk record: one fio pattern through a dm-crypt mapping over a RAM disk, beside the
//! bare RAM disk and the cipher alone through AF_ALG. See docs/records.md, "disk record".

use crate::record::any::KeyValue;
use serde::{Deserialize, Serialize};

/// A disk point: the shared envelope (impl "dm-crypt", impl_version the kernel release,
/// label = cipher, key size, driver and queue option; throughput_bps = through the
/// mapping) and these. Field names are a public contract (docs/records.md): add, never
/// rename.
pub type DiskRecord = crate::record::envelope::Record<DiskData>;

/// A disk point's note on `others_cpu_pct`, null: measured, in an idle guest (TCG), the
/// machine's busy CPU less fio's own (its usr_cpu and sys_cpu), the kcryptd workers', the
/// dmcrypt_write threads' and softirq left 8-23% per point (fio's start and exit in the
/// window, kernel workers that ran kcryptd's queue then another), which would have marked
/// idle points disturbed.
pub const OTHERS_NOT_OBSERVABLE: &str = "others_cpu_pct: not observable for disk (null): the encryption and the I/O run in kernel threads that cannot be told apart from other work";

/// Older disk records wrote `others_cpu_pct` 0 with a note that began so.
const OTHERS_WAS_ZERO: &str = "others_cpu_pct: not observable for disk, recorded as 0";

/// An older disk record read as this version writes it: its "not observable" 0 becomes
/// null, and its note says so.
pub fn upgrade_others(r: &mut DiskRecord) {
    if let Some(k) = r.notes.iter().position(|n| n.starts_with(OTHERS_WAS_ZERO)) {
        r.others_cpu_pct = None;
        r.notes[k] = OTHERS_NOT_OBSERVABLE.into();
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct DiskData {
    /// dm-crypt's cipher specification as given: "aes-xts-plain64",
    /// "aes-cbc-essiv:sha256", "xchacha12,aes-adiantum-plain64", or a `capi:` one.
    pub cipher: String,
    /// Bits of the mapping's key.
    pub key_bits: u32,
    /// The crypto API driver the mapping bound (/proc/crypto's driver name whose
    /// reference count rose when the mapping was made), e.g. "xts-aes-aesni" or
    /// "xts(aes-generic)".
    pub kernel_driver: String,
    /// How kernel_driver is known: "refcount" (proven) or "priority" (the kernel's
    /// choice, nothing proved it); absent in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_driver_proof: Option<crate::kernel::DriverProof>,
    /// dm-crypt's optional parameters as the table carries them: "default" (none),
    /// "no_read_workqueue no_write_workqueue" or "same_cpu_crypt".
    pub queues: String,
    /// "seq-read", "seq-write", "rand-read" or "rand-write".
    pub pattern: String,
    /// fio's block size in bytes (1 MiB sequential, 4 KiB random).
    pub block_size: u64,
    /// fio's queue depth (libaio).
    pub iodepth: u32,
    /// I/Os per second through the mapping.
    pub iops: f64,
    /// fio's completion latency percentiles through the mapping, in microseconds.
    pub lat_p50_us: f64,
    pub lat_p99_us: f64,
    /// The same pattern on the bare RAM disk: the ceiling.
    pub bare_throughput_bps: f64,
    pub bare_iops: f64,
    /// The cipher alone, same driver, through AF_ALG in 4 KiB messages (the mapping's
    /// sector): what `cryptsetup benchmark` would say. Null where AF_ALG cannot bind it.
    pub primitive_bps: Option<f64>,
    /// "brd" (the kernel's RAM disk) or "loop" (a loop device over a file in /dev/shm).
    pub device: String,
    /// Bytes of the RAM disk.
    pub size_bytes: u64,
    /// CPU seconds of the kcryptd workers during the point (kworkers whose last work
    /// was kcryptd's queue); null where none ran (no-workqueue).
    #[serde(default)]
    pub kcryptd_cpu_s: Option<f64>,
    /// Whether the CPU clock fell during the point; null where no clock reads or the
    /// point is too short (under 2 s).
    #[serde(default)]
    pub throttled: Option<bool>,
}

/// The settings of a disk run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct DiskSettings {
    pub disk_ciphers: Vec<String>,
    #[serde(default)]
    pub disk_drivers: Vec<String>,
    #[serde(default)]
    pub queues: Vec<String>,
    #[serde(default)]
    pub patterns: Vec<String>,
    #[serde(default)]
    pub device: String,
    #[serde(default)]
    pub size_bytes: u64,
    #[serde(default)]
    pub duration_s: u32,
}

/// The label of a mapping: "aes-xts-plain64 512 xts-aes-aesni default".
#[cfg_attr(not(feature = "disk"), allow(dead_code))]
pub fn label(cipher: &str, key_bits: u32, driver: &str, queues: &str) -> String {
    let q = match queues {
        "default" => "default".to_string(),
        q if q.contains("no_read_workqueue") => "no-workqueue".into(),
        q if q.contains("same_cpu_crypt") => "same-cpu".into(),
        q => q.replace(' ', "+"),
    };
    format!("{cipher} {key_bits} {driver} {q}")
}

impl crate::record::any::RecordData for DiskData {
    fn identity_keys<'a>(
        r: &'a DiskRecord,
        _label: Option<&str>,
    ) -> (&'a str, Vec<(&'static str, KeyValue)>) {
        let text = |s: &str| KeyValue::Text(s.to_string());
        (
            &r.implementation,
            vec![
                ("cipher", text(&r.cipher)),
                ("key_bits", KeyValue::Num(r.key_bits as u64)),
                ("kernel_driver", text(&r.kernel_driver)),
                ("queues", text(&r.queues)),
                ("pattern", text(&r.pattern)),
                ("block_size", KeyValue::Num(r.block_size)),
                ("iodepth", KeyValue::Num(r.iodepth as u64)),
            ],
        )
    }

    fn point_key(r: &DiskRecord) -> (String, u32) {
        (
            format!(
                "{} {} {}k qd{}",
                r.label,
                r.pattern,
                r.block_size / 1024,
                r.iodepth
            ),
            0,
        )
    }

    fn check(r: &DiskRecord) -> anyhow::Result<()> {
        let positive = |v: f64| v.is_finite() && v > 0.0;
        if !positive(r.throughput_bps) || !positive(r.iops) {
            anyhow::bail!("a disk point without throughput or IOPS");
        }
        if !(r.lat_p50_us >= 0.0 && r.lat_p50_us <= r.lat_p99_us) {
            anyhow::bail!(
                "lat_p50_us {} above lat_p99_us {}",
                r.lat_p50_us,
                r.lat_p99_us
            );
        }
        if ![4096, 1 << 20].contains(&r.block_size) || ![1, 32].contains(&r.iodepth) {
            anyhow::bail!(
                "block_size {} and iodepth {} are not a disk pattern's (4 KiB or 1 MiB; depth 1 or 32)",
                r.block_size,
                r.iodepth
            );
        }
        if !(128..=1024).contains(&r.key_bits) || !r.key_bits.is_multiple_of(64) {
            anyhow::bail!(
                "key_bits {} is not a multiple of 64 from 128 to 1024",
                r.key_bits
            );
        }
        // Through the mapping the disk cannot outrun the bare disk by much (the bare
        // figure is one run of fio, so a little above is noise; ten times is not).
        if r.bare_throughput_bps > 0.0 && r.throughput_bps > 1.5 * r.bare_throughput_bps {
            anyhow::bail!(
                "throughput_bps {} is {:.1}x the bare disk's {}",
                r.throughput_bps,
                r.throughput_bps / r.bare_throughput_bps,
                r.bare_throughput_bps
            );
        }
        if let Some(k) = r.kcryptd_cpu_s.filter(|k| !(k.is_finite() && *k >= 0.0)) {
            anyhow::bail!("kcryptd_cpu_s {k} is not a CPU time");
        }
        Ok(())
    }
}
