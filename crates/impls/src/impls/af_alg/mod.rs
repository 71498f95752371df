//! The kernel crypto API from user space through AF_ALG sockets: skcipher (cbc(aes),
//! ctr(aes)), aead (gcm(aes), rfc7539(chacha20,poly1305)) and hash (sha1, sha256,
//! sha512, hmac(sha256)).
//!
//! `prepare` binds a transform socket to the kernel's algorithm name (or to one driver,
//! with the `driver=NAME` variant), sets the key (and the 16-byte tag for AEADs) and
//! accepts one operation socket, reused for every message. One `process` call is one
//! message:
//! - skcipher: a `sendmsg` carrying ALG_SET_OP and ALG_SET_IV with the data, then a
//!   `recvmsg` into the output. Messages over 64 KiB go in 64 KiB pieces (MSG_MORE on
//!   all but the last), each read back before the next is sent, so that the socket
//!   buffer never fills; the kernel carries the IV from piece to piece.
//! - aead: one `sendmsg` with ALG_SET_OP, ALG_SET_IV, ALG_SET_AEAD_ASSOCLEN and the
//!   iovecs [aad, input], then one `recvmsg` with the iovecs [scratch, output]: the
//!   kernel writes AAD || ciphertext || tag (enc) or AAD || plaintext (dec); the AAD
//!   lands in a scratch buffer, so the payload needs no copy in user space. The kernel
//!   takes an AEAD message only whole, so the socket buffers are raised to fit it.
//!   A tag that does not verify is EBADMSG.
//! - hash: one `send` without MSG_MORE (the kernel finalises), then a `read` of the
//!   digest.
//!
//! The `zerocopy` variant hands the input pages to the kernel with vmsplice + splice
//! instead of the copying `sendmsg` (Documentation/crypto/userspace-if.rst, "Zero-Copy
//! Interface"), in pieces of at most 16 pages.

use anyhow::anyhow;
mod ops;
mod socket;

use super::implementation::{Access, Implementation, KernelDriver, Prepared, Support, Symmetric};
use crate::algorithms::{Algorithm, Direction, Kind, TAG_LEN};
use crate::kernel::{self, CryptoEntry, KernelConfig, Usable};
use crate::sys::os_err;
use std::sync::OnceLock;

/// The AF_ALG socket types this implementation uses.
const TYPES: [&str; 3] = ["skcipher", "aead", "hash"];

/// The AF_ALG socket type and the kernel's algorithm name for `alg`.
pub fn kernel_name(alg: Algorithm) -> (&'static str, &'static str) {
    match alg {
        Algorithm::Aes128Gcm | Algorithm::Aes192Gcm | Algorithm::Aes256Gcm => ("aead", "gcm(aes)"),
        Algorithm::Chacha20Poly1305 => ("aead", "rfc7539(chacha20,poly1305)"),
        Algorithm::Aes128Cbc | Algorithm::Aes192Cbc | Algorithm::Aes256Cbc => {
            ("skcipher", "cbc(aes)")
        }
        Algorithm::Aes128Ctr | Algorithm::Aes192Ctr | Algorithm::Aes256Ctr => {
            ("skcipher", "ctr(aes)")
        }
        Algorithm::Sha1 => ("hash", "sha1"),
        Algorithm::Sha256 => ("hash", "sha256"),
        Algorithm::Sha512 => ("hash", "sha512"),
        Algorithm::HmacSha256 => ("hash", "hmac(sha256)"),
        // The kernel's names; `support` does not bind them (not wired, see there).
        Algorithm::DesCbc => ("skcipher", "cbc(des)"),
        Algorithm::DesEde3Cbc => ("skcipher", "cbc(des3_ede)"),
        Algorithm::Rc4 => ("skcipher", "ecb(arc4)"),
        // Never bound: `support` refuses public-key algorithms first.
        a => (PUBLIC_KEY, a.name()),
    }
}

/// The socket type `kernel_name` gives public-key algorithms, which AF_ALG lacks.
const PUBLIC_KEY: &str = "none";

fn alg_index(alg: Algorithm) -> usize {
    Algorithm::ALL.iter().position(|a| *a == alg).unwrap_or(0)
}

/// Which driver the kernel picks for `name`, as /proc/crypto shows it: the highest
/// priority entry that passed its self-test (any entry with that name when none says so).
fn chosen(entries: &[CryptoEntry], name: &str) -> Option<String> {
    kernel::chosen_driver(entries, name)
        .or_else(|| {
            entries
                .iter()
                .filter(|e| e.name == name && !e.internal)
                .max_by_key(|e| e.priority)
        })
        .map(|e| e.driver.clone())
}

/// The variant spec parts this implementation understands, for a registry that must
/// report a variant of AF_ALG on a machine without AF_ALG.
pub fn understands_variant(spec: &str) -> bool {
    spec == "zerocopy" || spec.strip_prefix("driver=").is_some_and(|d| !d.is_empty())
}

/// AF_ALG as found on this kernel.
pub struct AfAlg {
    /// Usability of each socket type, in the order of `TYPES`.
    types: Vec<(&'static str, Usable)>,
    /// `driver=NAME`: bind to this driver instead of the generic name.
    driver: Option<Driver>,
    zerocopy: bool,
    /// Support per algorithm (index into `Algorithm::ALL`), found by binding on first use.
    support: [OnceLock<Support>; Algorithm::ALL.len()],
}

/// A driver chosen with `driver=NAME`, and the algorithm it implements.
#[derive(Clone)]
struct Driver {
    name: String,
    /// The socket type it bound as.
    kind: &'static str,
    /// Its algorithm name (e.g. cbc(aes)), from /proc/crypto; None when not listed.
    alg_name: Option<String>,
}

impl AfAlg {
    /// Checks which AF_ALG socket types this kernel offers. Err with the probe's reasons
    /// when none is usable.
    pub fn probe() -> anyhow::Result<AfAlg> {
        let config = KernelConfig::read();
        let types: Vec<(&'static str, Usable)> = TYPES
            .iter()
            .map(|k| (*k, kernel::af_alg_status(k, &config)))
            .collect();
        if types.iter().all(|(_, u)| !u.usable) {
            let mut reasons: Vec<String> = Vec::new();
            for (k, u) in &types {
                let r = format!("{k}: {}", u.reason);
                if !reasons
                    .iter()
                    .any(|x| x.split_once(": ").map(|p| p.1) == Some(&u.reason))
                {
                    reasons.push(r);
                }
            }
            // One reason for all three types reads better without the type names.
            if reasons.len() == 1 {
                return Err(anyhow::Error::msg(types[0].1.reason.clone()));
            }
            return Err(anyhow::Error::msg(reasons.join("; ")));
        }
        Ok(AfAlg {
            types,
            driver: None,
            zerocopy: false,
            support: [const { OnceLock::new() }; Algorithm::ALL.len()],
        })
    }

    fn type_status(&self, kind: &str) -> Option<&Usable> {
        self.types.iter().find(|(k, _)| *k == kind).map(|(_, u)| u)
    }

    /// The name bound for `alg`: the explicit driver, or the kernel's algorithm name.
    fn bind_name(&self, alg: Algorithm) -> String {
        match &self.driver {
            Some(d) => d.name.clone(),
            None => kernel_name(alg).1.to_string(),
        }
    }

    fn compute_support(&self, alg: Algorithm) -> Support {
        if alg.is_legacy() {
            return Support::No(
                "cryptobench does not bind the kernel's legacy ciphers (cbc(des), cbc(des3_ede), ecb(arc4)) through AF_ALG".into(),
            );
        }
        let (kind, name) = kernel_name(alg);
        if kind == PUBLIC_KEY {
            return Support::No(
                "AF_ALG offers no public-key operations (mainline Linux has no akcipher socket type)"
                    .into(),
            );
        }
        match self.type_status(kind) {
            Some(u) if !u.usable => return Support::No(format!("AF_ALG {kind}: {}", u.reason)),
            None => return Support::No(format!("AF_ALG {kind} was not probed")),
            _ => {}
        }
        if let Some(d) = &self.driver {
            match &d.alg_name {
                Some(a) if a == name && d.kind == kind => {}
                Some(a) => {
                    return Support::No(format!(
                        "driver {} implements {a} ({}), not {name}",
                        d.name, d.kind
                    ))
                }
                None => {
                    return Support::No(format!(
                        "cannot tell which algorithm driver {} implements: /proc/crypto does not list it",
                        d.name
                    ))
                }
            }
        }
        let bind = self.bind_name(alg);
        match kernel::af_alg_bind(kind, &bind) {
            Ok(_) => Support::Yes,
            Err(e) if e == libc::ENOENT => Support::No(format!(
                "the kernel has no {bind} for AF_ALG {kind} (bind: ENOENT; module not loaded or not built?)"
            )),
            Err(e) => Support::No(format!("AF_ALG {kind} bind to {bind}: {}", os_err(e))),
        }
    }

    /// The kernel driver that does the work for `alg`: the explicit driver of a
    /// `driver=` variant, else the one the kernel picks for the algorithm's name
    /// (highest priority in /proc/crypto). None when the kernel does not offer `alg`
    /// here or /proc/crypto does not list it.
    pub fn driver_for(&self, alg: Algorithm) -> Option<String> {
        if self.support(alg) != Support::Yes {
            return None;
        }
        if let Some(d) = &self.driver {
            return Some(d.name.clone());
        }
        chosen(&kernel::proc_crypto(), kernel_name(alg).1)
    }

    fn with(&self, driver: Option<Driver>, zerocopy: bool) -> AfAlg {
        AfAlg {
            types: self.types.clone(),
            driver,
            zerocopy,
            support: [const { OnceLock::new() }; Algorithm::ALL.len()],
        }
    }

    /// Binds `name` as each usable socket type; the first that works tells the type,
    /// and /proc/crypto (read while the socket is bound) tells the algorithm.
    fn find_driver(&self, name: &str) -> anyhow::Result<Driver> {
        let mut errors = Vec::new();
        for (kind, u) in &self.types {
            if !u.usable {
                errors.push(format!("{kind}: {}", u.reason));
                continue;
            }
            match kernel::af_alg_bind(kind, name) {
                Ok(_fd) => {
                    let entries = kernel::proc_crypto();
                    let alg_name = entries
                        .iter()
                        .find(|e| e.driver == name)
                        .map(|e| e.name.clone());
                    return Ok(Driver {
                        name: name.to_string(),
                        kind,
                        alg_name,
                    });
                }
                Err(e) if e == libc::ENOENT => errors.push(format!("{kind}: ENOENT")),
                Err(e) => errors.push(format!("{kind}: {}", os_err(e))),
            }
        }
        Err(anyhow!(
            "no kernel driver '{name}' can be bound through AF_ALG ({}); see /proc/crypto for driver names",
            errors.join(", ")
        ))
    }
}

impl Implementation for AfAlg {
    fn name(&self) -> &str {
        "af_alg"
    }

    fn version(&self) -> String {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        format!("Linux {} AF_ALG", release.trim())
    }

    fn variant(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(d) = &self.driver {
            parts.push(format!("driver={}", d.name));
        }
        if self.zerocopy {
            parts.push("zerocopy".to_string());
        }
        (!parts.is_empty()).then(|| parts.join(","))
    }

    /// Each call is a pair of system calls into the kernel's crypto API, where the
    /// driver named in the record does the work (a CPU-instruction driver such as
    /// aesni, a generic C one, or an accelerator). KernelDriver says where the work
    /// happens; the syscalls are part of every number.
    fn access(&self) -> Access {
        Access::KernelDriver
    }

    fn support(&self, alg: Algorithm) -> Support {
        self.support[alg_index(alg)]
            .get_or_init(|| self.compute_support(alg))
            .clone()
    }

    fn notes(&self, alg: Algorithm, direction: Direction) -> Vec<String> {
        let (sock_type, name) = kernel_name(alg);
        let mut notes = vec![format!(
            "kernel crypto API through an AF_ALG {sock_type} socket ({}): the system calls of every message are timed",
            match self.driver_for(alg) {
                Some(d) => format!("{name}, driver {d}"),
                None => name.to_string(),
            }
        )];
        if self.zerocopy {
            notes.push(
                "zerocopy: the input pages are spliced into the kernel (vmsplice + splice, at most 16 pages per splice) instead of copied by sendmsg; the buffers are not page-aligned, so a piece may share its first and last page"
                    .into(),
            );
        } else if alg.kind() != Kind::Hash && alg.kind() != Kind::Mac {
            notes.push("sendmsg copies the input into kernel pages; the output is written straight into the buffer by recvmsg".into());
        } else {
            notes.push(
                "send copies the input into the kernel's hash in pieces of at most 16 pages".into(),
            );
        }
        match alg.kind() {
            Kind::Cipher => notes.push(
                "messages over 64 KiB are sent in 64 KiB pieces (MSG_MORE), each read back before the next; the kernel carries the IV across pieces"
                    .into(),
            ),
            Kind::Aead => {
                notes.push(format!(
                    "the kernel returns the AAD in front of the {}; it is received into a scratch buffer, so the payload is not copied in user space",
                    if direction == Direction::Enc { "ciphertext and tag" } else { "plaintext" }
                ));
                notes.push("an AEAD message must fit whole in the socket buffers: SO_SNDBUF/SO_RCVBUF are raised to fit (SO_*BUFFORCE when allowed); net.core.optmem_max also bounds the message size".into());
            }
            _ => {}
        }
        notes
    }

    fn with_variant(&self, spec: &str) -> Option<Result<Box<dyn Implementation>, String>> {
        if spec == "zerocopy" {
            if self.zerocopy {
                return None;
            }
            return Some(Ok(Box::new(self.with(self.driver.clone(), true))));
        }
        let name = spec.strip_prefix("driver=")?;
        if name.is_empty() || self.driver.is_some() {
            return None;
        }
        Some(
            (self
                .find_driver(name)
                .map(|d| Box::new(self.with(Some(d), self.zerocopy)) as Box<dyn Implementation>))
            .map_err(|e| e.to_string()),
        )
    }

    fn details(&self) -> crate::impls::details::Details {
        let types = self
            .types
            .iter()
            .map(|(k, u)| (k.to_string(), u.clone()))
            .collect();
        let entries = kernel::proc_crypto();
        let mut drivers = std::collections::BTreeMap::new();
        for alg in Algorithm::ALL {
            if self.support(alg) != Support::Yes {
                continue;
            }
            let d = match &self.driver {
                Some(d) => Some(d.name.clone()),
                None => chosen(&entries, kernel_name(alg).1),
            };
            drivers.insert(alg.name().to_string(), d);
        }
        crate::impls::details::Details {
            interface: Some("AF_ALG".into()),
            types: Some(types),
            driver: self.driver.as_ref().map(|d| d.name.clone()),
            driver_implements: self.driver.as_ref().and_then(|d| d.alg_name.clone()),
            zerocopy: Some(self.zerocopy),
            drivers: Some(drivers),
            ..Default::default()
        }
    }
    fn kernel_driver(&self) -> Option<&dyn KernelDriver> {
        Some(self)
    }
}

impl Symmetric for AfAlg {
    fn prepare(&self, alg: Algorithm, direction: Direction, key: &[u8]) -> Prepared {
        self.support(alg).check()?;
        let kind = alg.kind();
        if matches!(kind, Kind::Aead | Kind::Cipher) {
            alg.check_key(key)?;
        }
        let (sock_type, _) = kernel_name(alg);
        let bind = self.bind_name(alg);
        let tfm = kernel::af_alg_bind(sock_type, &bind)
            .map_err(|e| anyhow!("AF_ALG bind {sock_type}/{bind}: {}", os_err(e)))?;
        if kind == Kind::Aead {
            socket::set_tag_len(&tfm, TAG_LEN)?;
        }
        if matches!(kind, Kind::Aead | Kind::Cipher | Kind::Mac) {
            socket::set_key(&tfm, key)?;
        }
        let sock = socket::accept(&tfm)?;
        let pipe = if self.zerocopy {
            Some(socket::Pipe::new()?)
        } else {
            None
        };
        Ok(Box::new(ops::AlgOp::new(alg, direction, tfm, sock, pipe)))
    }
}

/// An encrypting skcipher bound by the kernel's name for it, a driver's or a template
/// instance's (`xts(aes-generic)`, `essiv(cbc(aes),sha256)`), with `key` and an IV of
/// `iv_len` bytes: the primitive under dm-crypt, as `cryptsetup benchmark` times it.
pub fn skcipher(name: &str, key: &[u8], iv_len: usize) -> Prepared {
    let tfm = kernel::af_alg_bind("skcipher", name)
        .map_err(|e| anyhow!("AF_ALG bind skcipher/{name}: {}", os_err(e)))?;
    socket::set_key(&tfm, key)?;
    let sock = socket::accept(&tfm)?;
    Ok(Box::new(ops::AlgOp::cipher_op(
        Direction::Enc,
        iv_len,
        tfm,
        sock,
        None,
    )))
}

impl KernelDriver for AfAlg {
    fn driver(&self, alg: Algorithm) -> Option<String> {
        self.driver_for(alg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_cover_every_algorithm() {
        for a in Algorithm::ALL {
            let (kind, name) = kernel_name(a);
            let expect = match a.kind() {
                Kind::Aead => "aead",
                Kind::Cipher => "skcipher",
                Kind::Hash | Kind::Mac => "hash",
                _ => PUBLIC_KEY,
            };
            assert_eq!(kind, expect, "{a}");
            assert!(!name.is_empty());
        }
    }

    #[test]
    fn variant_specs() {
        assert!(understands_variant("zerocopy"));
        assert!(understands_variant("driver=cbc(aes-generic)"));
        assert!(!understands_variant("driver="));
        assert!(!understands_variant("isa=no-avx512"));
    }

    /// On a kernel without AF_ALG, probe fails with the reason kernel::af_alg_status
    /// gives; with AF_ALG, every algorithm has an answer and offered ones name a driver.
    /// The real known-answer checks run in the guest (tests/guest_kernel_paths.rs).
    #[test]
    fn probe_reports_the_kernels_reason() {
        let config = KernelConfig::read();
        let statuses: Vec<Usable> = TYPES
            .iter()
            .map(|k| kernel::af_alg_status(k, &config))
            .collect();
        match AfAlg::probe() {
            Err(reason) => {
                assert!(statuses.iter().all(|s| !s.usable));
                assert!(
                    statuses
                        .iter()
                        .any(|s| reason.to_string().contains(&s.reason)),
                    "{reason}"
                );
            }
            Ok(a) => {
                assert!(statuses.iter().any(|s| s.usable));
                for alg in Algorithm::ALL {
                    if a.support(alg) == Support::Yes {
                        assert!(a.driver_for(alg).is_some_and(|d| !d.is_empty()), "{alg}");
                    }
                }
            }
        }
    }
}
