//! IPsec's inputs (`--ciphers` as IPsec offers them, `--ipsec-driver`, `--ipsec-spread`),
//! checked before anything starts: bad input exits 2, what this kernel cannot do exits
//! with the unavailable code, each in one line.

use super::ipsec::{self, Spread};
use super::tunnel::Spec;
use super::args::{VpnArgs, Wanted};
use crate::failure::Failure;

#[derive(Default)]
pub struct Input {
    ciphers: Vec<String>,
    /// --ciphers entries IPsec does not offer (none among them).
    skipped: Vec<String>,
    /// --ipsec-driver, or the kernel's choice alone (None).
    drivers: Vec<Option<String>>,
    spread: Spread,
}

impl Input {
    pub fn new(args: &VpnArgs, wanted: &[Wanted]) -> Result<Input, Failure> {
        let wants = wanted.contains(&Wanted::Ipsec);
        if !wants {
            if args.ipsec_driver.is_some() || args.ipsec_spread != Spread::Sa {
                return Err(Failure::Input(
                    "--ipsec-driver and --ipsec-spread are IPsec's: add ipsec to --tunnels".into(),
                ));
            }
            return Ok(Input::default());
        }
        let (ciphers, skipped) = ipsec::ciphers(&args.ciphers.0);
        if ciphers.is_empty() {
            return Err(Failure::Input(format!(
                "--tunnels ipsec: none of --ciphers {} is offered for IPsec: choose from {} (no none: IPsec always encrypts here)",
                crate::units::shown(&args.ciphers.0.join(",")),
                ipsec::CIPHERS.join(", ")
            )));
        }
        let mut drivers = vec![None];
        if let Some(list) = &args.ipsec_driver {
            let known = crate::kernel::proc_crypto();
            drivers.clear();
            for d in &list.0 {
                // A template instance ("rfc4106(gcm_base(ctr(aes-generic),ghash-generic))")
                // is made on demand; the kernel says then whether it can be.
                // With --dut it names one of the DUT's, checked there.
                let here = !args.dut.named();
                if here
                    && d != "generic"
                    && !d.contains('(')
                    && !known.iter().any(|e| &e.driver == d)
                {
                    return Err(Failure::Input(format!(
                        "invalid --ipsec-driver '{}': no such driver in /proc/crypto: name one of its driver lines (e.g. rfc4106-gcm-aesni), a template instance, or generic",
                        crate::units::shown(d)
                    )));
                }
                drivers.push(Some(d.clone()));
            }
        }
        if args.dut.named() {
            // The controller, before it starts the DUT's agent: its own end (the DUT
            // checks its end, and --ipsec-driver, itself).
            ipsec::esp_usable(None).map_err(|why| {
                Failure::Unavailable(format!(
                    "--tunnels ipsec: the controller (the client end): {why}"
                ))
            })?;
        }
        if args.ipsec_spread == Spread::PerCpu {
            let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap_or_default()
                .trim()
                .to_string();
            return Err(Failure::Unavailable(if per_cpu_sas(&release) {
                format!("--ipsec-spread percpu: not yet (kernel {release} has per-CPU SAs, but this iproute2 cannot make them)")
            } else {
                format!("--ipsec-spread percpu: not available: kernel {release} has no per-CPU SAs (6.13+)")
            }));
        }
        Ok(Input {
            ciphers,
            skipped,
            drivers,
            spread: args.ipsec_spread,
        })
    }

    /// One tunnel per cipher and driver.
    pub fn specs(&self) -> Vec<Spec> {
        let mut out = Vec::new();
        for c in &self.ciphers {
            for d in &self.drivers {
                out.push(Spec::Ipsec {
                    cipher: c.clone(),
                    spread: self.spread,
                    driver: d.clone(),
                });
            }
        }
        out
    }

    /// The ciphers asked for that IPsec does not offer, for the run's notes.
    pub fn skipped(&self) -> Vec<crate::record::Unavailable> {
        self.skipped
            .iter()
            .map(|c| crate::record::Unavailable {
                name: format!("ipsec {c}"),
                reason: format!(
                    "not offered for IPsec (it has {})",
                    ipsec::CIPHERS.join(", ")
                ),
            })
            .collect()
    }
}

/// Whether a kernel release ("6.1.0-56-cloud-amd64") has per-CPU SAs (6.13+).
fn per_cpu_sas(release: &str) -> bool {
    let mut n = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().unwrap_or(0));
    (n.next().unwrap_or(0), n.next().unwrap_or(0)) >= (6, 13)
}

#[cfg(test)]
mod tests {
    #[test]
    fn per_cpu_sas_from_6_13() {
        assert!(!super::per_cpu_sas("6.1.0-56-cloud-amd64"));
        assert!(super::per_cpu_sas("6.13.0"));
        assert!(super::per_cpu_sas("6.18.44-fc"));
        assert!(!super::per_cpu_sas("5.15.0"));
    }
}
