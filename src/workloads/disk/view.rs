//! How disk records are shown, for `disk` and `report`: per cipher, driver and queue
//! option, each fio load through the mapping against the bare RAM disk (the ceiling) and
//! the cipher alone through AF_ALG, with the ratios. Pure functions of one run's records.

use crate::record::disk::{DiskData, DiskRecord};
use crate::render::document::{Options, RunView, View};
use crate::render::model::{Block, Column, Table};
use crate::units::mbps;
use serde_json::{json, Value};

pub struct DiskView;

fn ratio(a: f64, b: Option<f64>) -> Option<f64> {
    b.filter(|b| *b > 0.0 && a.is_finite()).map(|b| a / b)
}

fn load(r: &DiskRecord) -> String {
    let bs = if r.block_size >= 1 << 20 {
        format!("{}M", r.block_size >> 20)
    } else {
        format!("{}k", r.block_size >> 10)
    };
    format!("{} {bs} qd{}", r.pattern, r.iodepth)
}

fn cell(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

fn pct(v: f64) -> String {
    format!("{:.0}%", v * 100.0)
}

fn points_table(records: &[&DiskRecord]) -> Table {
    let mut t = Table::new(
        "MB/s through the mapping, on the bare RAM disk (the ceiling) and of the cipher alone (AF_ALG, same driver, 4 KiB sectors); latency: fio's completion p50/p99; CPU: the machine's busy seconds per GB, and the kcryptd workers' share of them",
        vec![
            Column::text("cipher"),
            Column::text("driver"),
            Column::text("queues"),
            Column::text("load"),
            Column::num("disk MB/s"),
            Column::num("IOPS"),
            Column::num("p50 us"),
            Column::num("p99 us"),
            Column::num("bare MB/s"),
            Column::num("primitive MB/s"),
            Column::num("disk/bare"),
            Column::num("disk/primitive"),
            Column::num("CPU s/GB"),
            Column::num("kcryptd"),
        ],
    );
    t.group_by = Some(0);
    for r in records {
        t.push(vec![
            format!("{} {}", r.cipher, r.key_bits),
            r.kernel_driver.clone(),
            r.queues.clone(),
            load(r),
            mbps(r.throughput_bps),
            format!("{:.0}", r.iops),
            format!("{:.0}", r.lat_p50_us),
            format!("{:.0}", r.lat_p99_us),
            mbps(r.bare_throughput_bps),
            cell(r.primitive_bps, mbps),
            cell(ratio(r.throughput_bps, Some(r.bare_throughput_bps)), pct),
            cell(ratio(r.throughput_bps, r.primitive_bps), pct),
            cell(r.cpu_s_per_gb, |v| format!("{v:.1}")),
            cell(r.kcryptd_cpu_s.and_then(|k| ratio(k, r.cpu_sys_s)), pct),
        ]);
    }
    t
}

impl View for DiskView {
    type Data = DiskData;

    fn blocks(run: &RunView<DiskData>, _opts: &Options) -> Vec<Block> {
        let mut out = vec![Block::Heading(
            "Disk encryption: dm-crypt over a RAM disk".into(),
        )];
        if run.records.is_empty() {
            out.push(Block::Lines(vec!["No point was measured.".into()]));
        } else {
            out.push(Block::Table(points_table(&run.records)));
        }
        let refused: Vec<String> = run
            .exclusions
            .iter()
            .map(|e| format!("Not measured: {}", e.reason))
            .collect();
        if !refused.is_empty() {
            out.push(Block::Lines(refused));
        }
        out
    }

    fn records_table(records: &[&DiskRecord]) -> Table {
        let cols = [
            "workload",
            "cipher",
            "key_bits",
            "kernel_driver",
            "queues",
            "pattern",
            "block_size",
            "iodepth",
            "throughput_bps",
            "iops",
            "lat_p50_us",
            "lat_p99_us",
            "bare_throughput_bps",
            "primitive_bps",
            "device",
            "size_bytes",
            "cpu_s_per_gb",
        ];
        let mut t = Table::new("", cols.iter().map(|c| Column::text(c)).collect());
        let opt = |v: Option<f64>| v.map(|x| format!("{x:.3}")).unwrap_or_default();
        for r in records {
            t.push(vec![
                r.workload.to_string(),
                r.cipher.clone(),
                r.key_bits.to_string(),
                r.kernel_driver.clone(),
                r.queues.clone(),
                r.pattern.clone(),
                r.block_size.to_string(),
                r.iodepth.to_string(),
                format!("{:.0}", r.throughput_bps),
                format!("{:.1}", r.iops),
                format!("{:.1}", r.lat_p50_us),
                format!("{:.1}", r.lat_p99_us),
                format!("{:.0}", r.bare_throughput_bps),
                r.primitive_bps
                    .map(|v| format!("{v:.0}"))
                    .unwrap_or_default(),
                r.device.clone(),
                r.size_bytes.to_string(),
                opt(r.cpu_s_per_gb),
                opt(r.kcryptd_cpu_s),
            ]);
        }
        t
    }

    fn analysis(run: &RunView<DiskData>, _opts: &Options) -> Value {
        let points: Vec<Value> = run
            .records
            .iter()
            .map(|r| {
                json!({
                    "label": r.label,
                    "load": load(r),
                    "disk_over_bare": ratio(r.throughput_bps, Some(r.bare_throughput_bps)),
                    "disk_over_primitive": ratio(r.throughput_bps, r.primitive_bps),
                })
            })
            .collect();
        json!({ "ratios": points })
    }
}
