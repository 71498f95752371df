//! A point's profile as text: one line per category, biggest first.

use super::{Profile, ProfileField};

/// `measured_bps`: the point's throughput without sampling, for the overhead line.
pub fn render(label: &str, field: &ProfileField, measured_bps: Option<f64>) -> String {
    let p: &Profile = match field {
        ProfileField::Measured(p) => p,
        ProfileField::Unavailable { unavailable } => {
            return format!("\nprofile {label}: none ({unavailable})\n")
        }
    };
    let mut out = format!("\nprofile {label}: {} {} samples", p.samples, p.event);
    if p.idle_samples > 0 {
        out += &format!(" (and {} of idle CPUs, left out)", p.idle_samples);
    }
    out += "\n";
    out += &format!(
        "  {:<13} {:>7} {:>17} {:>8}\n",
        "category", "share", "95% CI", "samples"
    );
    let mut rows: Vec<_> = p.categories.iter().collect();
    rows.sort_by(|a, b| b.1.samples.cmp(&a.1.samples).then(a.0.cmp(b.0)));
    for (name, s) in rows {
        out += &format!(
            "  {:<13} {:>6.1}% {:>7.1}%–{:>6.1}% {:>8}\n",
            name,
            s.share * 100.0,
            s.ci[0] * 100.0,
            s.ci[1] * 100.0,
            s.samples
        );
    }
    out += &format!(
        "  crypto {:.1}% [{:.1}–{:.1}%], Amdahl ceiling {:.2}x; unknown {:.1}%\n",
        p.crypto.share * 100.0,
        p.crypto.ci[0] * 100.0,
        p.crypto.ci[1] * 100.0,
        p.amdahl_ceiling,
        p.unknown_share * 100.0
    );
    if let (Some(with), Some(without)) = (p.throughput_bps, measured_bps) {
        if without > 0.0 {
            out += &format!(
                "  sampling overhead: {:.1} MB/s sampled vs {:.1} MB/s not ({:+.1}%)\n",
                with / 1e6,
                without / 1e6,
                (with / without - 1.0) * 100.0
            );
        }
    }
    if let Some(svg) = &p.flame_graph {
        out += &format!("  flame graph: {}\n", svg.display());
    }
    out
}
