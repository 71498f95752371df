//! The cipher under a mapping, alone: the same kernel driver through AF_ALG, one 4 KiB
//! message (the mapping's sector) per call, as `cryptsetup benchmark` times it.

use crate::impls::Io;
use std::time::{Duration, Instant};

/// Bytes per message: the mapping's sector size (the table's sector_size:4096).
pub const SECTOR: usize = 4096;

/// Bytes per second of `driver` (a /proc/crypto driver name or template instance)
/// encrypting 4 KiB sectors with a fresh IV each, over about `budget`.
pub fn bytes_per_s(
    driver: &str,
    key_bits: u32,
    iv_len: usize,
    budget: Duration,
) -> anyhow::Result<f64> {
    // Any key of the size does: the cost does not depend on it.
    let key: Vec<u8> = (0..key_bits / 8)
        .map(|i| (i as u8).wrapping_mul(37))
        .collect();
    let mut op = crate::impls::af_alg::skcipher(driver, &key, iv_len)?;
    let mut buf = vec![0u8; SECTOR + 64];
    let mut iv = vec![0u8; iv_len];
    let mut one = |n: u64, buf: &mut [u8]| -> anyhow::Result<()> {
        iv[..8].copy_from_slice(&n.to_le_bytes());
        op.process(&iv, &[], Io::InPlace { buf, len: SECTOR })?;
        Ok(())
    };
    let warm = Instant::now();
    let mut n = 0u64;
    while warm.elapsed() < budget / 5 {
        one(n, &mut buf)?;
        n += 1;
    }
    let start = Instant::now();
    let mut calls = 0u64;
    while start.elapsed() < budget {
        for _ in 0..16 {
            one(n + calls, &mut buf)?;
            calls += 1;
        }
    }
    Ok(calls as f64 * SECTOR as f64 / start.elapsed().as_secs_f64())
}
