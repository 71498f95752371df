//! The cpufreq governor for the scaling study: which ones the machine offers, setting
//! one on every CPU, and putting the old ones back (at the end, on error and after
//! SIGINT, which ends the step and reaches `restore` through the runner or `Drop`).

use anyhow::anyhow;
use std::path::{Path, PathBuf};

const CPUS: &str = "/sys/devices/system/cpu";

/// The governors every CPU offers, or why none can be set here.
pub fn offered(root: &Path) -> anyhow::Result<Vec<String>> {
    let cpus = policy_dirs(root);
    let Some(first) = cpus.first() else {
        return Err(anyhow!(
            "governor not settable: no cpufreq in {}/cpu*/cpufreq (a virtual machine or a kernel without CONFIG_CPU_FREQ)",
            root.display()
        ));
    };
    let avail = std::fs::read_to_string(first.join("scaling_available_governors"))
        .map_err(|e| anyhow!("governor not settable: scaling_available_governors: {e}"))?;
    let probe = first.join("scaling_governor");
    let writable = std::fs::OpenOptions::new().write(true).open(&probe);
    if let Err(e) = writable {
        return Err(anyhow!(
            "governor not settable: {}: {e} (run as root)",
            probe.display()
        ));
    }
    Ok(avail.split_whitespace().map(str::to_string).collect())
}

fn policy_dirs(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("cpu") && n[3..].parse::<u32>().is_ok())
        })
        .map(|p| p.join("cpufreq"))
        .filter(|p| p.join("scaling_governor").exists())
        .collect();
    out.sort();
    out
}

/// The governors to put back, per CPU, and what happened.
#[derive(Default)]
pub struct Restore {
    old: Vec<(PathBuf, String)>,
    log: Vec<String>,
}

impl Restore {
    pub fn set(&mut self, governor: &str) -> anyhow::Result<()> {
        offered(Path::new(CPUS))?;
        for dir in policy_dirs(Path::new(CPUS)) {
            let f = dir.join("scaling_governor");
            let was = std::fs::read_to_string(&f)
                .map_err(|e| anyhow!("{}: {e}", f.display()))?
                .trim()
                .to_string();
            if !self.old.iter().any(|(p, _)| p == &f) {
                self.old.push((f.clone(), was));
            }
            std::fs::write(&f, governor)
                .map_err(|e| anyhow!("governor not settable: {}: {e}", f.display()))?;
        }
        self.log.push(format!("governor set to {governor}"));
        Ok(())
    }

    pub fn restore(&mut self) {
        for (f, was) in self.old.drain(..) {
            if let Err(e) = std::fs::write(&f, &was) {
                eprintln!(
                    "cryptobench: could not restore {} to {was}: {e}",
                    f.display()
                );
            }
        }
    }

    pub fn note(&self) -> Option<String> {
        (!self.log.is_empty()).then(|| format!("{}; restored after", self.log.join(", ")))
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        self.restore();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_cpufreq_says_why() {
        let d = std::env::temp_dir().join(format!("cbench-gov-test-{}", std::process::id()));
        std::fs::create_dir_all(d.join("cpu0")).unwrap();
        let e = offered(&d).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("governor not settable: no cpufreq"),
            "{e}"
        );
        std::fs::create_dir_all(d.join("cpu0/cpufreq")).unwrap();
        std::fs::write(d.join("cpu0/cpufreq/scaling_governor"), "powersave\n").unwrap();
        std::fs::write(
            d.join("cpu0/cpufreq/scaling_available_governors"),
            "performance powersave\n",
        )
        .unwrap();
        assert_eq!(offered(&d).unwrap(), ["performance", "powersave"]);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
