//! Study 2's RAM disk row: a file of the study's size (330 MB; --quick 33 MB) written then
//! read through dm-crypt over a RAM disk, the kernel's choice of AES-XTS driver against the
//! generic C code, as a time; beside the same two drivers through AF_ALG (the primitive's
//! gain) and the study's 7 s -> 4 s.
//!
//! The time is fio's rate turned into seconds: `disk`'s seq-write then seq-read (1 MiB,
//! direct) over a RAM disk just larger than the file, each a window of --time seconds, and
//! the file's bytes over each rate. It is not one timed copy: the window gives the rate the
//! disk holds, and the table says how the time was made.

use crate::analyse::decide::{decide, Decision};
use crate::analyse::stats::median;
use crate::record::disk::{DiskData, DiskRecord};
use crate::record::Listed;
use crate::render::model::{Block, Column, Table};
use crate::study::definition::{argv, Action, Observed, Opts, Step};
use crate::study::quote::times;
use crate::study::verdict::NOISE_PCT;

/// The step's tag on this host, and in the qemu guest (--guest).
pub const TAG: &str = "ram disk";
pub const GUEST_TAG: &str = "guest ram disk";
const CIPHER: &str = "aes-xts-plain64/512";
/// The generic C AES under XTS as Debian 6.1 takes it: it refuses
/// capi:xts(aes-generic)-plain64 (ENOENT).
const GENERIC: &str = "capi:xts(ecb(aes-generic))-plain64";
/// The study's file (330 MB) and --quick's (33 MB); a run's file is the largest its RAM
/// disk holds.
const FILES: [u64; 2] = [330_000_000, 33_000_000];

/// The `disk` runs: one (--quick) or three rounds, on this host or all in one guest boot.
pub fn steps(o: &Opts) -> Vec<Step> {
    // Whole MiB just above the file.
    let (size, t, rounds) = if o.quick {
        ("32m", 1u32, 1)
    } else {
        ("315m", 5, 3)
    };
    let cmd = argv(&[
        "disk",
        "--ciphers",
        CIPHER,
        "--disk-driver",
        GENERIC,
        "--queues",
        "default",
        "--patterns",
        "seq-write,seq-read",
        "--size",
        size,
        "--time",
        &t.to_string(),
    ]);
    // The bare disk and two mappings, two loads each, a verify pass and AF_ALG per mapping.
    let run_s = 3.0 * 2.0 * (t as f64 + 1.0) + 8.0;
    if o.guest {
        return vec![Step {
            tag: GUEST_TAG.into(),
            seconds: 90.0 + 3.0 * rounds as f64 * run_s,
            action: Action::Guest(vec![cmd; rounds]),
        }];
    }
    (0..rounds)
        .map(|_| Step {
            tag: TAG.into(),
            seconds: run_s,
            action: Action::Workload(cmd.clone()),
        })
        .collect()
}

/// One driver's side over the rounds: the file's seconds written and read, AF_ALG's rate.
#[derive(Default)]
struct Side {
    bound: String,
    write_s: Vec<f64>,
    read_s: Vec<f64>,
    total_s: Vec<f64>,
    primitive_bps: Vec<f64>,
}

fn generic(r: &DiskRecord) -> bool {
    r.kernel_driver.contains("aes-generic")
}

/// The two sides from the runs of `tag`: [the kernel's choice, the generic C code].
fn sides(o: &Observed, tag: &str) -> ([Side; 2], u64, String) {
    let mut sides = [Side::default(), Side::default()];
    let (mut file, mut device) = (0, String::new());
    for run in o.tagged(tag) {
        let recs: Vec<&DiskRecord> = run
            .records
            .iter()
            .filter_map(<DiskData as Listed>::pick)
            .collect();
        for (i, side) in sides.iter_mut().enumerate() {
            let of = |p: &str| {
                recs.iter()
                    .find(|r| generic(r) == (i == 1) && r.pattern == p)
            };
            let (Some(w), Some(r)) = (of("seq-write"), of("seq-read")) else {
                continue;
            };
            file = FILES
                .into_iter()
                .find(|f| *f <= w.size_bytes)
                .unwrap_or(w.size_bytes);
            device = w.device.clone();
            let (ws, rs) = (
                file as f64 / w.throughput_bps,
                file as f64 / r.throughput_bps,
            );
            side.bound = w.kernel_driver.clone();
            side.write_s.push(ws);
            side.read_s.push(rs);
            side.total_s.push(ws + rs);
            side.primitive_bps.extend(w.primitive_bps);
        }
    }
    (sides, file, device)
}

/// The row and its conclusion, from the runs of whichever tag ran; nothing when neither
/// step was part of the study.
pub fn ram_disk(o: &Observed, blocks: &mut Vec<Block>, conclusions: &mut Vec<String>) {
    let guest = o.tagged(GUEST_TAG).next().is_some() || o.failure(GUEST_TAG).is_some();
    let tag = if guest { GUEST_TAG } else { TAG };
    let where_ = if guest {
        " (guest, emulated CPU: shapes only)"
    } else {
        ""
    };
    let ([k, g], file, device) = sides(o, tag);
    if k.total_s.is_empty() || g.total_s.is_empty() {
        if let Some(why) = o.failure(tag) {
            conclusions.push(format!(
                "RAM disk{where_}: not observed: {why}{}",
                if guest {
                    ""
                } else {
                    " (give --guest to run it in the qemu guest)"
                }
            ));
        } else if o.tagged(tag).next().is_some() {
            conclusions.push(format!(
                "RAM disk{where_}: a driver was not measured: {}",
                o.why_missing(tag)
            ));
        }
        return;
    }
    let mb = file / 1_000_000;
    let rounds = k.total_s.len().min(g.total_s.len());
    let mut t = Table::new(
        format!(
            "RAM disk{where_}: a {mb} MB file written then read through dm-crypt aes-xts-plain64 (512-bit key) over {device}, per kernel driver; seconds = {mb} MB / fio's 1 MiB direct rate (median of {rounds} round{})",
            if rounds == 1 { "" } else { "s" }
        ),
        vec![
            Column::text("driver"),
            Column::text("bound"),
            Column::num("write s"),
            Column::num("read s"),
            Column::num("total s"),
            Column::num("AF_ALG MB/s"),
        ],
    );
    if guest {
        t.notes.push("emulated CPU: shapes only".into());
    }
    let med = |v: &[f64]| {
        if v.is_empty() {
            f64::NAN
        } else {
            median(v)
        }
    };
    let num = |x: f64| {
        if x.is_finite() {
            crate::render::plots::axis_number(x)
        } else {
            "-".into()
        }
    };
    for (what, s) in [("the kernel's choice", &k), ("generic C code", &g)] {
        t.push(vec![
            what.into(),
            s.bound.clone(),
            num(med(&s.write_s)),
            num(med(&s.read_s)),
            num(med(&s.total_s)),
            num(med(&s.primitive_bps) / 1e6),
        ]);
    }
    blocks.push(Block::Table(t));
    let d = decide(&g.total_s, &k.total_s, NOISE_PCT / 100.0);
    // The time falls by the gain: generic's over the kernel's choice's.
    let gain = 1.0 / d.ratio;
    let verdict = match (d.decision, d.ci) {
        (Decision::CannotDecide, _) | (_, None) => "One round each: it cannot decide".to_string(),
        (Decision::NoDifference, Some(_)) => "No difference beyond the noise".into(),
        (dir, Some([lo, hi])) => format!(
            "The kernel's choice is {} than the generic C code [{} to {}]",
            if dir == Decision::Lower {
                "faster"
            } else {
                "slower"
            },
            times(1.0 / hi),
            times(1.0 / lo)
        ),
    };
    let prim = med(&k.primitive_bps) / med(&g.primitive_bps);
    let reach = if prim.is_finite() && prim > 1.0 {
        format!(
            "; {:.0}% of the primitive's gain reaches the disk",
            ((gain - 1.0) / (prim - 1.0)).clamp(0.0, 9.99) * 100.0
        )
    } else {
        String::new()
    };
    conclusions.push(format!(
        "RAM disk{where_}: {mb} MB written then read in {:.2} s with the kernel's choice ({}) against {:.2} s with the generic C code ({}): {}, against {} for the same two drivers through AF_ALG{reach}; study 2 found 7 s -> 4 s (1.75x). {verdict}.",
        med(&k.total_s),
        k.bound,
        med(&g.total_s),
        g.bound,
        times(gain),
        times(prim),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::read::AnyRecord;
    use crate::study::tests::observed;

    fn rec(driver: &str, pattern: &str, bps: f64, primitive: f64) -> AnyRecord {
        AnyRecord::Disk(
            serde_json::from_value(serde_json::json!({
                "kind": "record", "schema": 1, "run_id": "r", "workload": "disk",
                "impl": "dm-crypt", "impl_version": "6.1", "variant": null,
                "label": driver, "throughput_bps": bps, "throughput_bps_ci": null,
                "samples_bps": [bps], "wall_s": 1.0, "cpu_user_s": null, "cpu_sys_s": null,
                "cpu_s_per_gb": null, "others_cpu_pct": 0.0, "disturbed": false, "notes": [],
                "cipher": "aes-xts-plain64", "key_bits": 512, "kernel_driver": driver,
                "queues": "default", "pattern": pattern, "block_size": 1048576, "iodepth": 1,
                "iops": bps / 1048576.0, "lat_p50_us": 1.0, "lat_p99_us": 2.0,
                "bare_throughput_bps": 1e9, "bare_iops": 1000.0, "primitive_bps": primitive,
                "device": "brd", "size_bytes": 32u64 << 20,
            }))
            .unwrap(),
        )
    }

    /// One round's records: the kernel's choice writes and reads at `k`, generic at `g`.
    fn round(k: f64, g: f64) -> Vec<AnyRecord> {
        vec![
            rec("xts-aes-aesni", "seq-write", k, 4e8),
            rec("xts-aes-aesni", "seq-read", k, 4e8),
            rec("xts(ecb(aes-generic))", "seq-write", g, 1e8),
            rec("xts(ecb(aes-generic))", "seq-read", g, 1e8),
        ]
    }

    fn said(o: &Observed) -> (Vec<Block>, String) {
        let (mut b, mut c) = (Vec::new(), Vec::new());
        ram_disk(o, &mut b, &mut c);
        (b, c.join("\n"))
    }

    #[test]
    fn one_round_gives_the_times_and_cannot_decide() {
        // 33 MB at 33 MB/s each way: 2 s; at 16.5 MB/s: 4 s. AF_ALG 4x: (2-1)/(4-1) = 33%.
        let (b, c) = said(&observed(vec![(GUEST_TAG, round(33e6, 16.5e6))]));
        assert_eq!(b.len(), 1);
        assert!(c.contains("RAM disk (guest, emulated CPU: shapes only): 33 MB written then read in 2.00 s with the kernel's choice (xts-aes-aesni) against 4.00 s with the generic C code (xts(ecb(aes-generic))): 2.00x, against 4.00x for the same two drivers through AF_ALG; 33% of the primitive's gain reaches the disk; study 2 found 7 s -> 4 s (1.75x). One round each: it cannot decide."), "{c}");
        assert!(!c.contains("faster"), "{c}");
    }

    #[test]
    fn rounds_decide_and_a_missing_side_is_said() {
        let rounds: Vec<(&str, Vec<AnyRecord>)> = [(33e6, 16.5e6), (34e6, 16.0e6), (32e6, 17e6)]
            .into_iter()
            .map(|(k, g)| (TAG, round(k, g)))
            .collect();
        let (_, c) = said(&observed(rounds));
        assert!(
            c.contains("The kernel's choice is faster than the generic C code ["),
            "{c}"
        );
        assert!(!c.contains("guest"), "{c}");
        // Close rounds either way: no verdict.
        let rounds: Vec<(&str, Vec<AnyRecord>)> = [(33e6, 34e6), (34e6, 32e6), (32e6, 33e6)]
            .into_iter()
            .map(|(k, g)| (TAG, round(k, g)))
            .collect();
        assert!(said(&observed(rounds))
            .1
            .contains("No difference beyond the noise"));
        // The generic side missing: no table, and the reason.
        let (b, c) = said(&observed(vec![(TAG, round(33e6, 16e6)[..2].to_vec())]));
        assert!(b.is_empty());
        assert!(c.contains("a driver was not measured"), "{c}");
        // Not run at all: nothing said.
        assert!(said(&Observed::default()).1.is_empty());
    }
}
