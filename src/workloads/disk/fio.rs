//! fio against a block device: one load, direct I/O, JSON out; and the verify pass that
//! writes with crc32c checksums and reads them back, so that a broken mapping fails.

use super::args::Load;
use crate::sys::guard::Guard;
use crate::sys::spawn::run_bounded;
use anyhow::anyhow;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// What fio measured for one load.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Result {
    pub bytes_per_s: f64,
    pub iops: f64,
    pub lat_p50_us: f64,
    pub lat_p99_us: f64,
    /// Wall seconds fio ran the load.
    pub runtime_s: f64,
}

fn fio(
    guard: &Guard,
    dir: &Path,
    program: &Path,
    args: &[String],
    limit: Duration,
) -> anyhow::Result<Value> {
    let mut argv: Vec<&str> = vec![program.to_str().unwrap_or("fio")];
    argv.extend(args.iter().map(String::as_str));
    argv.push("--output-format=json");
    let (code, out, err) = run_bounded(guard, dir, &argv, &[], limit)?;
    // fio may print lines before its JSON (e.g. verify errors).
    let json = out.find('{').map(|i| &out[i..]).unwrap_or("");
    let v: Value = serde_json::from_str(json).unwrap_or(Value::Null);
    if code != Some(0) {
        let why: Vec<&str> = err
            .lines()
            .chain(out.lines().take_while(|l| !l.starts_with('{')))
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .take(3)
            .collect();
        return Err(anyhow!(
            "fio exited with {}: {}",
            code.map_or("a signal".into(), |c| c.to_string()),
            why.join("; ")
        ));
    }
    if v.is_null() {
        return Err(anyhow!("fio printed no JSON"));
    }
    Ok(v)
}

fn common(dev: &str, name: &str) -> Vec<String> {
    vec![
        format!("--name={name}"),
        format!("--filename={dev}"),
        "--direct=1".into(),
        "--ioengine=libaio".into(),
        "--group_reporting".into(),
        "--randrepeat=0".into(),
    ]
}

/// Writes `bytes` of `dev` with crc32c checksums and reads them back: Err when a block
/// does not read back as written.
pub fn verify(
    guard: &Guard,
    dir: &Path,
    program: &Path,
    dev: &str,
    bytes: u64,
) -> anyhow::Result<()> {
    let mut args = common(dev, "verify");
    args.extend([
        "--rw=write".into(),
        "--bs=64k".into(),
        "--iodepth=8".into(),
        format!("--size={bytes}"),
        "--verify=crc32c".into(),
        "--do_verify=1".into(),
        "--verify_fatal=1".into(),
    ]);
    let v = fio(guard, dir, program, &args, Duration::from_secs(600))?;
    let job = &v["jobs"][0];
    if job["error"].as_i64().unwrap_or(0) != 0 {
        return Err(anyhow!("fio's verify pass: error {}", job["error"]));
    }
    // The read-back pass read what the write pass wrote.
    let (w, r) = (
        job["write"]["io_bytes"].as_u64().unwrap_or(0),
        job["read"]["io_bytes"].as_u64().unwrap_or(0),
    );
    if w == 0 || r < w {
        return Err(anyhow!(
            "fio's verify pass wrote {w} bytes and read back {r}"
        ));
    }
    Ok(())
}

/// Runs `load` on `dev` for `seconds` over its first `bytes`.
pub fn measure(
    guard: &Guard,
    dir: &Path,
    program: &Path,
    dev: &str,
    bytes: u64,
    load: &Load,
    seconds: u32,
) -> anyhow::Result<Result> {
    let mut args = common(dev, load.pattern);
    args.extend([
        format!("--rw={}", load.rw),
        format!("--bs={}", load.block_size),
        format!("--iodepth={}", load.iodepth),
        format!("--size={bytes}"),
        "--time_based".into(),
        format!("--runtime={seconds}"),
        "--norandommap".into(),
    ]);
    let limit = Duration::from_secs(seconds as u64 * 4 + 60);
    let v = fio(guard, dir, program, &args, limit)?;
    parse(
        &v,
        if load.rw.contains("read") {
            "read"
        } else {
            "write"
        },
    )
}

/// One direction's figures from fio's JSON.
pub fn parse(v: &Value, dir: &str) -> anyhow::Result<Result> {
    let side = &v["jobs"][0][dir];
    let pct = |p: &str| side["clat_ns"]["percentile"][p].as_f64().map(|ns| ns / 1e3);
    let r = Result {
        bytes_per_s: side["bw_bytes"].as_f64().unwrap_or(0.0),
        iops: side["iops"].as_f64().unwrap_or(0.0),
        lat_p50_us: pct("50.000000").unwrap_or(f64::NAN),
        lat_p99_us: pct("99.000000").unwrap_or(f64::NAN),
        runtime_s: side["runtime"].as_f64().unwrap_or(0.0) / 1e3,
    };
    if r.bytes_per_s <= 0.0 || !r.lat_p99_us.is_finite() {
        return Err(anyhow!("fio reported no {dir} figures"));
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    #[test]
    fn figures_come_from_fios_json() {
        let v: serde_json::Value = serde_json::from_str(
            r#"{"jobs":[{"error":0,"read":{"bw_bytes":1048576,"iops":256.5,"runtime":1000,
               "clat_ns":{"percentile":{"50.000000":2000,"99.000000":9000}}},
               "write":{"bw_bytes":0,"iops":0}}]}"#,
        )
        .unwrap();
        let r = super::parse(&v, "read").unwrap();
        assert_eq!(
            (r.bytes_per_s, r.iops, r.lat_p50_us, r.lat_p99_us),
            (1048576.0, 256.5, 2.0, 9.0)
        );
        assert!(super::parse(&v, "write").is_err());
    }
}
