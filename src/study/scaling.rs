//! Study 3: `openssl speed -multi`'s question asked properly (threads 1, 2, 4 ... per
//! governor), then HTTP against HTTPS over concurrency and file sizes.

use super::definition::{argv, thread_counts, Action, Findings, Observed, Opts, Step, Study};
use super::quote::mbit;
use crate::analyse::decide::Decision;
use crate::render::model::{Block, Column, Table};

pub struct Scaling;

const ALGS: [&str; 3] = ["aes-128-cbc", "aes-256-cbc", "aes-128-gcm"];

impl Study for Scaling {
    fn name(&self) -> &'static str {
        "scaling"
    }
    fn question(&self) -> &'static str {
        "how does this machine scale over threads, governors and HTTPS load (run it on two machines and compare)?"
    }
    fn original(&self) -> &'static str {
        "study 3: thread scaling and frequency matter as much as the cipher, and only the application-level number (HTTP against HTTPS) settles it"
    }
    fn notes(&self, o: &Opts) -> Vec<String> {
        o.governors.as_ref().err().cloned().into_iter().collect()
    }
    fn steps(&self, o: &Opts) -> Vec<Step> {
        let (t, d) = if o.quick { ("0.05", "1") } else { ("0.3", "3") };
        let tf: f64 = t.parse().unwrap_or(0.3);
        let df: f64 = d.parse().unwrap_or(3.0);
        let threads: Vec<String> = thread_counts(o.cores)
            .iter()
            .map(|n| n.to_string())
            .collect();
        let speed = argv(&[
            "speed",
            "--impl",
            "openssl",
            "--alg",
            &ALGS.join(","),
            "--direction",
            "enc",
            "--sizes",
            "16k",
            "--threads",
            &threads.join(","),
            "--time",
            t,
        ]);
        let speed_s = 3.0 * threads.len() as f64 * tf * 1.2 + 2.0;
        let mut steps = Vec::new();
        let governors: Vec<String> = match &o.governors {
            Ok(g) => ["powersave", "performance"]
                .into_iter()
                .filter(|w| g.iter().any(|x| x == w))
                .map(str::to_string)
                .collect(),
            Err(_) => Vec::new(),
        };
        if governors.is_empty() {
            steps.push(Step {
                tag: "threads".into(),
                seconds: speed_s,
                action: Action::Workload(speed.clone()),
            });
        }
        for g in governors {
            steps.push(Step {
                tag: format!("governor {g}"),
                seconds: 0.1,
                action: Action::Governor(g.clone()),
            });
            steps.push(Step {
                tag: format!("threads {g}"),
                seconds: speed_s,
                action: Action::Workload(speed.clone()),
            });
        }
        let (files, conc) = if o.quick {
            ("4k", "1,10")
        } else {
            ("4k,100k,100m", "1,2,4,10,100,1000")
        };
        let mut tls = argv(&[
            "tls",
            "--suites",
            "http,aes256gcm",
            "--files",
            files,
            "--concurrency",
            conc,
            "--duration",
            d,
        ]);
        if !o.quick {
            tls.push("--gzip".into());
        }
        let points = files.split(',').count() as f64 + if o.quick { 0.0 } else { 2.0 };
        let n_conc = conc.split(',').count() as f64;
        steps.push(Step {
            tag: "https".into(),
            seconds: 2.0 * points * n_conc * (df + 1.0),
            action: Action::Workload(tls),
        });
        steps
    }
    fn analyse(&self, o: &Observed) -> Findings {
        analyse(o)
    }
}

fn analyse(o: &Observed) -> Findings {
    let mut blocks = Vec::new();
    let mut conclusions = Vec::new();
    let tags: Vec<String> = {
        let mut t: Vec<String> = o
            .runs
            .iter()
            .map(|r| r.tag.clone())
            .filter(|t| t.starts_with("threads"))
            .collect();
        t.dedup();
        t
    };
    for tag in &tags {
        let recs = o.speed(tag);
        let mut table = Table::new(
            format!(
                "{tag}: openssl, 16 KiB, encrypt (efficiency = throughput / (threads x 1-thread))"
            ),
            vec![
                Column::text("alg"),
                Column::num("threads"),
                Column::num("MB/s"),
                Column::num("per core %"),
            ],
        );
        table.group_by = Some(0);
        for alg in ALGS {
            let one_rec = recs.iter().find(|r| r.alg.name() == alg && r.threads == 1);
            let one = one_rec.map(|r| r.throughput_bps);
            let mut rows: Vec<_> = recs.iter().filter(|r| r.alg.name() == alg).collect();
            rows.sort_by_key(|r| r.threads);
            for r in &rows {
                let e = one.and_then(|s| {
                    crate::analyse::scaling::efficiency(r.throughput_bps, s, r.threads)
                });
                table.push(vec![
                    alg.into(),
                    r.threads.to_string(),
                    crate::units::mbps(r.throughput_bps),
                    e.map(|e| format!("{:.0}", e * 100.0)).unwrap_or("-".into()),
                ]);
            }
            if let (Some(s), Some(top)) = (one, rows.last().filter(|r| r.threads > 1)) {
                let e = top.throughput_bps / (s * top.threads as f64);
                // Perfect scaling: each one-thread trial times the threads, against the
                // top point's trials.
                let perfect: Vec<f64> = one_rec
                    .map(|r| super::verdict::values([*r]))
                    .unwrap_or_default()
                    .iter()
                    .map(|x| x * top.threads as f64)
                    .collect();
                let d = super::verdict::differ(&perfect, &super::verdict::values([**top]));
                conclusions.push(format!(
                    "{tag}: {alg} gives {:.2}x at {} threads over 1 thread ({:.0}% per core){}",
                    top.throughput_bps / s,
                    top.threads,
                    e * 100.0,
                    match d.decision {
                        Decision::Lower => ": threads do not scale perfectly, so the thread count matters as study 3 found.".to_string(),
                        Decision::CannotDecide => format!(": {} (one value a side, no interval).", super::verdict::UNDECIDED),
                        _ => ": perfect scaling within this machine's noise.".into(),
                    }
                ));
            }
        }
        blocks.push(Block::Table(table));
    }
    if tags.is_empty() {
        conclusions.push(format!(
            "Thread scaling not observed: {}",
            o.why_missing("threads")
        ));
    }
    let tls = o.tls("https");
    if tls.is_empty() {
        conclusions.push(format!(
            "HTTP against HTTPS not observed: {}",
            o.why_missing("https")
        ));
    } else {
        let mut table = Table::new(
            "Transfer rate (Mbit/s), HTTP against HTTPS (AES-256-GCM)",
            vec![
                Column::text("content"),
                Column::num("file"),
                Column::num("concurrency"),
                Column::num("HTTP"),
                Column::num("HTTPS"),
                Column::num("HTTPS/HTTP"),
            ],
        );
        let mut ratios = Vec::new();
        let mut failed = 0;
        for r in tls.iter().filter(|r| r.suite == "http") {
            let s = tls.iter().find(|x| {
                x.suite != "http"
                    && x.file_size == r.file_size
                    && x.concurrency == r.concurrency
                    && x.content == r.content
            });
            let ratio = s.map(|s| s.throughput_bps / r.throughput_bps);
            // A point with failed requests measures the failures, not the cipher.
            let clean = s.is_some_and(|s| s.errors == 0 && s.requests > 0) && r.errors == 0;
            match ratio {
                Some(x) if clean => ratios.push((x, r.file_size, r.concurrency)),
                Some(_) => failed += 1,
                None => {}
            }
            table.push(vec![
                r.content.clone(),
                crate::units::size_label(r.file_size),
                r.concurrency.to_string(),
                mbit(r.throughput_bps),
                s.map(|s| mbit(s.throughput_bps)).unwrap_or("-".into()),
                ratio.map(|x| format!("{x:.2}")).unwrap_or("-".into()),
            ]);
        }
        if failed > 0 {
            table.notes.push(format!("{failed} pairs had failed requests (errors in the records) and are left out of the conclusion"));
        }
        blocks.push(Block::Table(table));
        if let Some(worst) = ratios.iter().cloned().min_by(|a, b| a.0.total_cmp(&b.0)) {
            let best = ratios.iter().map(|r| r.0).fold(f64::MIN, f64::max);
            conclusions.push(format!(
                "HTTPS delivers {:.0}% of HTTP's transfer rate at worst ({} file, concurrency {}), and {:.0}% at best: {}",
                worst.0 * 100.0,
                crate::units::size_label(worst.1),
                worst.2,
                best * 100.0,
                // The rule every study uses (analyse::decide): one run a point has no
                // interval, so the worst and the best cannot be told apart by it alone.
                match crate::analyse::decide::decide(&[best], &[worst.0], super::verdict::NOISE_PCT / 100.0).decision {
                    Decision::Lower => "the application-level cost of the cipher differs by load, as study 3 found.".to_string(),
                    Decision::CannotDecide => "one run a point cannot decide whether that differs by load (no interval).".to_string(),
                    _ => format!("no difference by load beyond this machine's noise (±{:.0}%), unlike study 3.", super::verdict::NOISE_PCT),
                }
            ));
        }
    }
    conclusions.push("To compare two machines (study 3's ARM against Atom): run `cryptobench study scaling --output A.jsonl` on each, then `cryptobench compare A.jsonl B.jsonl`.".into());
    Findings {
        blocks,
        conclusions,
        ..Findings::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::tests::{observed, speed_rec, tls_rec};

    #[test]
    fn efficiency_and_https_share_with_known_answers() {
        let s = |alg, n, bps| speed_rec("openssl", None, alg, "enc", 16384, n, bps);
        let o = observed(vec![
            (
                "threads",
                vec![s("aes-128-cbc", 1, 1e9), s("aes-128-cbc", 2, 1.5e9)],
            ),
            (
                "https",
                vec![
                    tls_rec("http", 4096, 1, 1e9),
                    tls_rec("aes256gcm", 4096, 1, 6e8),
                ],
            ),
        ]);
        let c = analyse(&o).conclusions.join("\n");
        assert!(c.contains("aes-128-cbc gives 1.50x at 2 threads over 1 thread (75% per core): threads do not scale perfectly"), "{c}");
        assert!(
            c.contains(
                "HTTPS delivers 60% of HTTP's transfer rate at worst (4k file, concurrency 1)"
            ),
            "{c}"
        );
    }

    /// One rule: a difference by load needs an interval, which one run a point lacks.
    #[test]
    fn differs_by_load_only_beyond_the_noise() {
        let https = |ratios: [f64; 2]| {
            let mut recs = Vec::new();
            for (c, r) in [1, 10].into_iter().zip(ratios) {
                recs.push(tls_rec("http", 4096, c, 1e9));
                recs.push(tls_rec("aes256gcm", 4096, c, r * 1e9));
            }
            analyse(&observed(vec![("https", recs)]))
                .conclusions
                .join("\n")
        };
        // One run a point: neither 75% against 78% nor 60% against 90% has an interval,
        // so neither "as study 3 found" nor "unlike study 3" (analyse::decide's rule).
        for (ratios, worst) in [([0.75, 0.78], "75%"), ([0.6, 0.9], "60%")] {
            let c = https(ratios);
            assert!(
                c.contains(&format!("{worst} of HTTP's transfer rate at worst"))
                    && c.contains(
                        "one run a point cannot decide whether that differs by load (no interval)."
                    )
                    && !c.contains("study 3 found")
                    && !c.contains("unlike study 3"),
                "{c}"
            );
        }
        // Thread scaling: 95% per core is perfect within the noise, 75% is not.
        let s = |n, bps| speed_rec("openssl", None, "aes-128-gcm", "enc", 16384, n, bps);
        let c = analyse(&observed(vec![("threads", vec![s(1, 1e9), s(2, 1.9e9)])]))
            .conclusions
            .join("\n");
        assert!(
            c.contains("(95% per core): perfect scaling within this machine's noise"),
            "{c}"
        );
    }
}
