//! Thread scaling: how close N threads come to N times one thread.

use crate::workloads::speed::record::SpeedRecord as Record;

/// Fills `scaling_efficiency` of every record whose 1-thread twin (same implementation,
/// version, variant, algorithm, direction and size) is among `records`.
pub fn fill_scaling_efficiency(records: &mut [Record]) {
    let singles: Vec<(String, f64)> = records
        .iter()
        .filter(|r| r.threads == 1)
        .map(|r| (twin_key(r), r.throughput_bps))
        .collect();
    for r in records.iter_mut() {
        let key = twin_key(r);
        r.scaling_efficiency = singles
            .iter()
            .find(|(k, _)| *k == key)
            .and_then(|(_, one)| efficiency(r.throughput_bps, *one, r.threads));
    }
}

/// throughput(N) / (N x throughput(1)).
pub fn efficiency(aggregate: f64, single: f64, threads: u32) -> Option<f64> {
    (single > 0.0 && threads > 0).then(|| aggregate / (threads as f64 * single))
}

fn twin_key(r: &Record) -> String {
    format!(
        "{}|{}|{:?}|{:?}|{}|{}|{}",
        r.implementation, r.impl_version, r.variant, r.library, r.alg, r.direction, r.size
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perfect_and_half_scaling() {
        assert_eq!(efficiency(200.0, 100.0, 2), Some(1.0));
        assert_eq!(efficiency(200.0, 100.0, 4), Some(0.5));
        assert_eq!(efficiency(200.0, 0.0, 4), None);
    }
}
