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

use super::{Access, Implementation, Io, Operation, Support};
use crate::algorithms::{Algorithm, Direction, Kind, TAG_LEN};
use crate::kernel::{self, CryptoEntry, KernelConfig, Usable};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

/// The AF_ALG socket types this implementation uses.
const TYPES: [&str; 3] = ["skcipher", "aead", "hash"];

/// Bytes per piece for skcipher messages and per splice: 16 pages, the zero-copy limit
/// the kernel documents, and far below the default socket buffer (~208 KiB).
const PIECE: usize = 16 * 4096;

const PAGE: usize = 4096;

/// x86_64 and most other architectures (asm-generic/socket.h); libc does not export them
/// for every target.
const SO_SNDBUFFORCE: libc::c_int = 32;
const SO_RCVBUFFORCE: libc::c_int = 33;

/// The AF_ALG socket type and the kernel's algorithm name for `alg`.
pub fn kernel_name(alg: Algorithm) -> (&'static str, &'static str) {
    match alg {
        Algorithm::Aes128Gcm | Algorithm::Aes256Gcm => ("aead", "gcm(aes)"),
        Algorithm::Chacha20Poly1305 => ("aead", "rfc7539(chacha20,poly1305)"),
        Algorithm::Aes128Cbc | Algorithm::Aes256Cbc => ("skcipher", "cbc(aes)"),
        Algorithm::Aes128Ctr | Algorithm::Aes256Ctr => ("skcipher", "ctr(aes)"),
        Algorithm::Sha1 => ("hash", "sha1"),
        Algorithm::Sha256 => ("hash", "sha256"),
        Algorithm::Sha512 => ("hash", "sha512"),
        Algorithm::HmacSha256 => ("hash", "hmac(sha256)"),
    }
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn os_err(e: i32) -> String {
    std::io::Error::from_raw_os_error(e).to_string()
}

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
    support: [OnceLock<Support>; 11],
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
    pub fn probe() -> Result<AfAlg, String> {
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
                return Err(types[0].1.reason.clone());
            }
            return Err(reasons.join("; "));
        }
        Ok(AfAlg {
            types,
            driver: None,
            zerocopy: false,
            support: Default::default(),
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
        let (kind, name) = kernel_name(alg);
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
            support: Default::default(),
        }
    }

    /// Binds `name` as each usable socket type; the first that works tells the type,
    /// and /proc/crypto (read while the socket is bound) tells the algorithm.
    fn find_driver(&self, name: &str) -> Result<Driver, String> {
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
        Err(format!(
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

    fn prepare(
        &self,
        alg: Algorithm,
        direction: Direction,
        key: &[u8],
    ) -> Result<Box<dyn Operation>, String> {
        if let Support::No(reason) = self.support(alg) {
            return Err(reason);
        }
        let kind = alg.kind();
        if matches!(kind, Kind::Aead | Kind::Cipher) && key.len() != alg.key_len() {
            return Err(format!(
                "{alg} needs a {}-byte key, got {} bytes",
                alg.key_len(),
                key.len()
            ));
        }
        let (sock_type, _) = kernel_name(alg);
        let bind = self.bind_name(alg);
        let tfm = kernel::af_alg_bind(sock_type, &bind)
            .map_err(|e| format!("AF_ALG bind {sock_type}/{bind}: {}", os_err(e)))?;
        if kind == Kind::Aead {
            // SAFETY: ALG_SET_AEAD_AUTHSIZE takes no buffer; the size is optlen.
            let r = unsafe {
                libc::setsockopt(
                    tfm.as_raw_fd(),
                    libc::SOL_ALG,
                    libc::ALG_SET_AEAD_AUTHSIZE,
                    std::ptr::null(),
                    TAG_LEN as libc::socklen_t,
                )
            };
            if r < 0 {
                return Err(format!("ALG_SET_AEAD_AUTHSIZE 16: {}", os_err(errno())));
            }
        }
        if matches!(kind, Kind::Aead | Kind::Cipher | Kind::Mac) {
            // SAFETY: key is valid for key.len() bytes.
            let r = unsafe {
                libc::setsockopt(
                    tfm.as_raw_fd(),
                    libc::SOL_ALG,
                    libc::ALG_SET_KEY,
                    key.as_ptr().cast(),
                    key.len() as libc::socklen_t,
                )
            };
            if r < 0 {
                return Err(format!(
                    "ALG_SET_KEY ({} bytes): {}",
                    key.len(),
                    os_err(errno())
                ));
            }
        }
        // SAFETY: accept(2) on a bound AF_ALG socket; no peer address is asked for.
        let fd = unsafe {
            libc::accept4(
                tfm.as_raw_fd(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                libc::SOCK_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(format!("AF_ALG accept: {}", os_err(errno())));
        }
        // SAFETY: fd is a fresh socket we own.
        let sock = unsafe { OwnedFd::from_raw_fd(fd) };
        let pipe = if self.zerocopy {
            Some(Pipe::new()?)
        } else {
            None
        };
        Ok(Box::new(AlgOp {
            kind,
            direction,
            digest_len: alg.digest_len(),
            nonce_len: alg.nonce_len(),
            _tfm: tfm,
            sock,
            pipe,
            scratch: Vec::new(),
            fits: 0,
        }))
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
            Kind::Hash | Kind::Mac => {}
        }
        notes
    }

    fn driver(&self, alg: Algorithm) -> Option<String> {
        self.driver_for(alg)
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
            self.find_driver(name)
                .map(|d| Box::new(self.with(Some(d), self.zerocopy)) as Box<dyn Implementation>),
        )
    }

    fn details(&self) -> serde_json::Value {
        let types: serde_json::Map<String, serde_json::Value> = self
            .types
            .iter()
            .map(|(k, u)| (k.to_string(), serde_json::json!(u)))
            .collect();
        let entries = kernel::proc_crypto();
        let mut drivers = serde_json::Map::new();
        for alg in Algorithm::ALL {
            if self.support(alg) != Support::Yes {
                continue;
            }
            let d = match &self.driver {
                Some(d) => Some(d.name.clone()),
                None => chosen(&entries, kernel_name(alg).1),
            };
            drivers.insert(alg.name().to_string(), serde_json::json!(d));
        }
        serde_json::json!({
            "interface": "AF_ALG",
            "types": types,
            "driver": self.driver.as_ref().map(|d| d.name.clone()),
            "driver_implements": self.driver.as_ref().and_then(|d| d.alg_name.clone()),
            "zerocopy": self.zerocopy,
            "drivers": drivers,
        })
    }
}

/// A pipe for vmsplice + splice.
struct Pipe {
    read: OwnedFd,
    write: OwnedFd,
}

impl Pipe {
    fn new() -> Result<Pipe, String> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: fds has room for the two descriptors pipe2 writes.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
            return Err(format!("pipe2: {}", os_err(errno())));
        }
        // SAFETY: both fds are fresh and ours.
        Ok(unsafe {
            Pipe {
                read: OwnedFd::from_raw_fd(fds[0]),
                write: OwnedFd::from_raw_fd(fds[1]),
            }
        })
    }
}

/// Control messages for one sendmsg: op, IV and AAD length.
struct Control {
    buf: [u64; 16],
    len: usize,
}

impl Control {
    fn new(encrypt: bool, iv: &[u8], assoclen: Option<u32>) -> Control {
        let mut c = Control {
            buf: [0; 16],
            len: 0,
        };
        let op: u32 = if encrypt {
            libc::ALG_OP_ENCRYPT as u32
        } else {
            libc::ALG_OP_DECRYPT as u32
        };
        c.push(libc::ALG_SET_OP, &op.to_ne_bytes());
        let mut ivmsg = [0u8; 4 + 32];
        let ivlen = iv.len().min(32);
        ivmsg[..4].copy_from_slice(&(ivlen as u32).to_ne_bytes());
        ivmsg[4..4 + ivlen].copy_from_slice(&iv[..ivlen]);
        c.push(libc::ALG_SET_IV, &ivmsg[..4 + ivlen]);
        if let Some(a) = assoclen {
            c.push(libc::ALG_SET_AEAD_ASSOCLEN, &a.to_ne_bytes());
        }
        c
    }

    fn push(&mut self, kind: libc::c_int, data: &[u8]) {
        // SAFETY: CMSG_* only compute sizes.
        let (space, len) = unsafe {
            (
                libc::CMSG_SPACE(data.len() as u32) as usize,
                libc::CMSG_LEN(data.len() as u32) as usize,
            )
        };
        let bytes = std::mem::size_of_val(&self.buf);
        if self.len + space > bytes {
            return; // cannot happen: at most 3 small messages
        }
        let base = self.buf.as_mut_ptr().cast::<u8>();
        // SAFETY: the header and data fit in buf (checked above); buf is 8-byte aligned
        // and every message starts at a CMSG_SPACE multiple, so the header is aligned.
        unsafe {
            let hdr = base.add(self.len).cast::<libc::cmsghdr>();
            (*hdr).cmsg_len = len as _;
            (*hdr).cmsg_level = libc::SOL_ALG;
            (*hdr).cmsg_type = kind;
            let hdr_len = libc::CMSG_LEN(0) as usize;
            std::ptr::copy_nonoverlapping(data.as_ptr(), base.add(self.len + hdr_len), data.len());
        }
        self.len += space;
    }
}

fn iov(ptr: *const u8, len: usize) -> libc::iovec {
    libc::iovec {
        iov_base: ptr as *mut libc::c_void,
        iov_len: len,
    }
}

/// One sendmsg; returns the bytes taken. Retries on EINTR.
fn send_msg(
    fd: RawFd,
    iovs: &mut [libc::iovec],
    control: Option<&mut Control>,
    more: bool,
) -> Result<usize, i32> {
    // SAFETY: msghdr is plain data; zeroed is valid.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = iovs.as_mut_ptr();
    msg.msg_iovlen = iovs.len() as _;
    if let Some(c) = control {
        msg.msg_control = c.buf.as_mut_ptr().cast();
        msg.msg_controllen = c.len as _;
    }
    let flags = if more { libc::MSG_MORE } else { 0 };
    loop {
        // SAFETY: msg points at live iovecs and control data for the call.
        let r = unsafe { libc::sendmsg(fd, &msg, flags) };
        if r >= 0 {
            return Ok(r as usize);
        }
        let e = errno();
        if e != libc::EINTR {
            return Err(e);
        }
    }
}

/// One recvmsg into the iovecs; returns the bytes written. Retries on EINTR.
fn recv_msg(fd: RawFd, iovs: &mut [libc::iovec]) -> Result<usize, i32> {
    // SAFETY: msghdr is plain data; zeroed is valid.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = iovs.as_mut_ptr();
    msg.msg_iovlen = iovs.len() as _;
    loop {
        // SAFETY: the iovecs point at writable memory of their lengths.
        let r = unsafe { libc::recvmsg(fd, &mut msg, 0) };
        if r >= 0 {
            return Ok(r as usize);
        }
        let e = errno();
        if e != libc::EINTR {
            return Err(e);
        }
    }
}

fn recv_error(e: i32) -> String {
    if e == libc::EBADMSG {
        "tag verification failed".into()
    } else {
        format!("AF_ALG recvmsg: {}", os_err(e))
    }
}

/// Splices `len` bytes at `ptr` into the socket through the pipe. SPLICE_F_MORE is set
/// on every splice but the very last when `last` is true.
fn splice_in(
    pipe: &Pipe,
    sock: RawFd,
    ptr: *const u8,
    len: usize,
    last: bool,
) -> Result<(), (i32, String)> {
    let mut off = 0;
    while off < len {
        let v = iov(
            // SAFETY: off < len, so the pointer stays inside the input.
            unsafe { ptr.add(off) },
            (len - off).min(PIECE),
        );
        // SAFETY: v describes readable memory; the pipe is ours. Without SPLICE_F_GIFT
        // the pages are only referenced, and they stay untouched until recvmsg.
        let n = unsafe { libc::vmsplice(pipe.write.as_raw_fd(), &v, 1, 0) };
        if n < 0 {
            let e = errno();
            if e == libc::EINTR {
                continue;
            }
            return Err((e, format!("vmsplice: {}", os_err(e))));
        }
        let n = n as usize;
        // Without SPLICE_F_MORE the kernel ends the message (a hash finalises).
        let more = !(last && off + n == len);
        let flags = if more { libc::SPLICE_F_MORE } else { 0 };
        let mut left = n;
        while left > 0 {
            // SAFETY: plain splice between two fds we own; no offsets.
            let s = unsafe {
                libc::splice(
                    pipe.read.as_raw_fd(),
                    std::ptr::null_mut(),
                    sock,
                    std::ptr::null_mut(),
                    left,
                    flags,
                )
            };
            if s < 0 {
                let e = errno();
                if e == libc::EINTR {
                    continue;
                }
                return Err((e, format!("splice into the AF_ALG socket: {}", os_err(e))));
            }
            if s == 0 {
                return Err((0, "splice into the AF_ALG socket moved nothing".into()));
            }
            left -= s as usize;
            if left > 0 && !more {
                return Err((
                    0,
                    format!(
                        "splice moved {s} of the last {} bytes: the kernel may have ended the message early",
                        s as usize + left
                    ),
                ));
            }
        }
        off += n;
    }
    Ok(())
}

/// Raw view of one message's buffers, valid for the duration of `process`.
struct Raw {
    input: *const u8,
    in_len: usize,
    out: *mut u8,
    out_cap: usize,
}

fn raw(io: Io<'_>) -> Result<Raw, String> {
    match io {
        Io::InPlace { buf, len } => {
            if len > buf.len() {
                return Err("output buffer too small".into());
            }
            Ok(Raw {
                input: buf.as_ptr(),
                in_len: len,
                out: buf.as_mut_ptr(),
                out_cap: buf.len(),
            })
        }
        Io::Separate { input, output } => Ok(Raw {
            input: input.as_ptr(),
            in_len: input.len(),
            out: output.as_mut_ptr(),
            out_cap: output.len(),
        }),
    }
}

fn getsockopt_int(fd: RawFd, opt: libc::c_int) -> Option<usize> {
    let mut v: libc::c_int = 0;
    let mut l = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: v and l are valid for the call.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            opt,
            (&mut v as *mut libc::c_int).cast(),
            &mut l,
        )
    };
    (r == 0 && v >= 0).then_some(v as usize)
}

fn setsockopt_int(fd: RawFd, opt: libc::c_int, v: usize) -> bool {
    let v = v.min(i32::MAX as usize / 2) as libc::c_int;
    // SAFETY: v is a valid int for the call.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            opt,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        ) == 0
    }
}

fn sysctl(name: &str) -> String {
    std::fs::read_to_string(format!("/proc/sys/net/core/{name}"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into())
}

/// An AEAD message the kernel could not hold whole: AF_ALG allocates the scatterlists of
/// one request (TX pages in ~4 KiB tables of 126 pages, RX in 16-page pieces of ~0.7 KiB)
/// from the socket's option memory, capped by net.core.optmem_max.
fn too_big(what: &str, sent: usize, out_len: usize) -> String {
    let tx_tables = sent.div_ceil(PAGE).div_ceil(126);
    let rx_pieces = out_len.div_ceil(PIECE);
    let estimate = tx_tables * PAGE + rx_pieces * 704 + 2048;
    format!(
        "AF_ALG could not hold this AEAD message whole ({what}): the kernel takes an AEAD message only in one piece and charges its scatterlists, about {estimate} bytes here, to net.core.optmem_max = {} per socket; raise it (sysctl -w net.core.optmem_max=...) to measure AEAD messages this large",
        sysctl("optmem_max")
    )
}

fn aead_error(e: i32, call: &str, sent: usize, out_len: usize) -> String {
    match e {
        libc::EBADMSG => "tag verification failed".into(),
        libc::ENOMEM => too_big(&format!("{call}: ENOMEM"), sent, out_len),
        _ => format!("AF_ALG {call}: {}", os_err(e)),
    }
}

struct AlgOp {
    kind: Kind,
    direction: Direction,
    digest_len: usize,
    nonce_len: usize,
    /// The transform socket; kept open for as long as the operation socket.
    _tfm: OwnedFd,
    sock: OwnedFd,
    pipe: Option<Pipe>,
    /// Where the kernel writes the AAD back (AEAD).
    scratch: Vec<u8>,
    /// The largest AEAD message (bytes sent) the socket buffers are known to take.
    fits: usize,
}

impl AlgOp {
    fn check_nonce(&self, nonce: &[u8]) -> Result<(), String> {
        if nonce.len() != self.nonce_len {
            return Err(format!(
                "the {} must be {} bytes, got {}",
                if self.kind == Kind::Aead {
                    "nonce"
                } else {
                    "IV"
                },
                self.nonce_len,
                nonce.len()
            ));
        }
        Ok(())
    }

    /// Raises SO_SNDBUF and SO_RCVBUF so that a whole AEAD request of `sent` bytes in and
    /// `received` bytes out fits (the kernel processes an AEAD message only whole).
    fn fit(&mut self, sent: usize, received: usize) -> Result<(), String> {
        let need = sent.max(received);
        if need <= self.fits {
            return Ok(());
        }
        // The kernel counts in whole pages and wants one page spare.
        let want = need.div_ceil(PAGE) * PAGE + 2 * PAGE;
        let fd = self.sock.as_raw_fd();
        for (opt, force, what, sysctl_name) in [
            (libc::SO_SNDBUF, SO_SNDBUFFORCE, "SO_SNDBUF", "wmem_max"),
            (libc::SO_RCVBUF, SO_RCVBUFFORCE, "SO_RCVBUF", "rmem_max"),
        ] {
            if getsockopt_int(fd, opt).unwrap_or(0) >= want {
                continue;
            }
            // The kernel doubles the value it is given.
            setsockopt_int(fd, opt, want.div_ceil(2));
            if getsockopt_int(fd, opt).unwrap_or(0) < want {
                setsockopt_int(fd, force, want.div_ceil(2));
            }
            let got = getsockopt_int(fd, opt).unwrap_or(0);
            if got < want {
                return Err(format!(
                    "an AEAD message of {need} bytes must fit whole in the AF_ALG socket buffer, but {what} stays at {got} bytes (net.core.{sysctl_name} = {}; {what}FORCE needs CAP_NET_ADMIN)",
                    sysctl(sysctl_name)
                ));
            }
        }
        self.fits = need;
        Ok(())
    }

    fn cipher(&mut self, nonce: &[u8], io: Io<'_>) -> Result<usize, String> {
        self.check_nonce(nonce)?;
        let r = raw(io)?;
        let n = r.in_len;
        if n > r.out_cap {
            return Err("output buffer too small".into());
        }
        let fd = self.sock.as_raw_fd();
        let mut control = Control::new(self.direction == Direction::Enc, nonce, None);
        let mut off = 0;
        while off < n {
            let piece = (n - off).min(PIECE);
            let last = off + piece == n;
            // SAFETY: off + piece <= n, inside the input.
            let src = unsafe { r.input.add(off) };
            match &self.pipe {
                None => {
                    let mut sent = 0;
                    while sent < piece {
                        let mut v = [iov(
                            // SAFETY: sent < piece, inside this piece.
                            unsafe { src.add(sent) },
                            piece - sent,
                        )];
                        let ctl = (off == 0 && sent == 0).then_some(&mut control);
                        let k = send_msg(fd, &mut v, ctl, !last)
                            .map_err(|e| format!("AF_ALG sendmsg: {}", os_err(e)))?;
                        if k == 0 {
                            return Err("AF_ALG sendmsg took nothing".into());
                        }
                        sent += k;
                        if sent < piece && last {
                            return Err(format!(
                                "AF_ALG sendmsg took {sent} of the last {piece} bytes"
                            ));
                        }
                    }
                }
                Some(pipe) => {
                    if off == 0 {
                        send_msg(fd, &mut [], Some(&mut control), true)
                            .map_err(|e| format!("AF_ALG sendmsg (control): {}", os_err(e)))?;
                    }
                    splice_in(pipe, fd, src, piece, last).map_err(|e| e.1)?;
                }
            }
            let mut got = 0;
            while got < piece {
                let mut v = [iov(
                    // SAFETY: off + got < off + piece <= n <= out_cap.
                    unsafe { r.out.add(off + got) },
                    piece - got,
                )];
                let k = recv_msg(fd, &mut v).map_err(recv_error)?;
                if k == 0 {
                    return Err(format!(
                        "AF_ALG recvmsg returned nothing after {got} of {piece} bytes"
                    ));
                }
                got += k;
            }
            off += piece;
        }
        Ok(n)
    }

    fn aead(&mut self, nonce: &[u8], aad: &[u8], io: Io<'_>) -> Result<usize, String> {
        self.check_nonce(nonce)?;
        let r = raw(io)?;
        let enc = self.direction == Direction::Enc;
        let out_len = if enc {
            r.in_len + TAG_LEN
        } else {
            r.in_len
                .checked_sub(TAG_LEN)
                .ok_or("the input is shorter than the 16-byte tag")?
        };
        if out_len > r.out_cap {
            return Err("output buffer too small".into());
        }
        let sent = aad.len() + r.in_len;
        self.fit(sent, aad.len() + out_len)?;
        // recvmsg does nothing for a zero-length buffer: an empty message with no AAD
        // would stay queued with its tag unchecked. One spare byte (never written)
        // makes the kernel run the request.
        let spare = usize::from(aad.len() + out_len == 0);
        if self.scratch.len() != aad.len() + spare {
            self.scratch.resize(aad.len() + spare, 0);
        }
        let fd = self.sock.as_raw_fd();
        let mut control = Control::new(enc, nonce, Some(aad.len() as u32));
        // An empty message has nothing to splice: it goes with the control message, which
        // then ends it (a control message sent with MSG_MORE would leave recvmsg waiting).
        match self.pipe.as_ref().filter(|_| r.in_len > 0) {
            None => {
                let mut v = [iov(aad.as_ptr(), aad.len()), iov(r.input, r.in_len)];
                let k = send_msg(fd, &mut v, Some(&mut control), false)
                    .map_err(|e| aead_error(e, "sendmsg", sent, out_len))?;
                if k != sent {
                    return Err(too_big(
                        &format!("sendmsg took {k} of {sent} bytes"),
                        sent,
                        out_len,
                    ));
                }
            }
            Some(pipe) => {
                let mut v = [iov(aad.as_ptr(), aad.len())];
                let k = send_msg(fd, &mut v, Some(&mut control), true)
                    .map_err(|e| format!("AF_ALG sendmsg (control, AAD): {}", os_err(e)))?;
                if k != aad.len() {
                    return Err(format!("AF_ALG took {k} of {} bytes of AAD", aad.len()));
                }
                splice_in(pipe, fd, r.input, r.in_len, true).map_err(|(e, m)| {
                    if e == libc::ENOMEM {
                        too_big(&m, sent, out_len)
                    } else {
                        m
                    }
                })?;
            }
        }
        let mut v = [
            iov(self.scratch.as_mut_ptr(), aad.len() + spare),
            iov(r.out, out_len),
        ];
        let k = recv_msg(fd, &mut v).map_err(|e| aead_error(e, "recvmsg", sent, out_len))?;
        if k != aad.len() + out_len {
            return Err(too_big(
                &format!("recvmsg returned {k} of {} bytes", aad.len() + out_len),
                sent,
                out_len,
            ));
        }
        Ok(out_len)
    }

    fn hash(&mut self, io: Io<'_>) -> Result<usize, String> {
        let (input, out) = io.split();
        if out.len() < self.digest_len {
            return Err("output buffer too small".into());
        }
        let fd = self.sock.as_raw_fd();
        match &self.pipe {
            None => {
                let mut v = [iov(input.as_ptr(), input.len())];
                let k = send_msg(fd, &mut v, None, false)
                    .map_err(|e| format!("AF_ALG send: {}", os_err(e)))?;
                if k != input.len() {
                    return Err(format!("AF_ALG hash took {k} of {} bytes", input.len()));
                }
            }
            Some(pipe) => {
                splice_in(pipe, fd, input.as_ptr(), input.len(), true).map_err(|e| e.1)?
            }
        }
        let mut v = [iov(out.as_mut_ptr(), self.digest_len)];
        let k = recv_msg(fd, &mut v)
            .map_err(|e| format!("AF_ALG read of the digest: {}", os_err(e)))?;
        if k != self.digest_len {
            return Err(format!(
                "AF_ALG returned {k} digest bytes, expected {}",
                self.digest_len
            ));
        }
        Ok(k)
    }
}

impl Operation for AlgOp {
    fn process(&mut self, nonce: &[u8], aad: &[u8], io: Io<'_>) -> Result<usize, String> {
        match self.kind {
            Kind::Cipher => self.cipher(nonce, io),
            Kind::Aead => self.aead(nonce, aad, io),
            Kind::Hash | Kind::Mac => self.hash(io),
        }
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
            };
            assert_eq!(kind, expect, "{a}");
            assert!(!name.is_empty());
        }
    }

    #[test]
    fn control_messages_are_laid_out_for_the_kernel() {
        let iv = [7u8; 12];
        let c = Control::new(true, &iv, Some(13));
        // op (4 bytes), iv (4 + 12), assoclen (4): CMSG_SPACE each.
        let space = |n: u32| unsafe { libc::CMSG_SPACE(n) } as usize;
        assert_eq!(c.len, space(4) + space(16) + space(4));
        let bytes: Vec<u8> = c.buf.iter().flat_map(|w| w.to_ne_bytes()).collect();
        let hdr = unsafe { libc::CMSG_LEN(0) } as usize;
        // First message: SOL_ALG / ALG_SET_OP = encrypt.
        let level = i32::from_ne_bytes(bytes[8..12].try_into().unwrap());
        let kind = i32::from_ne_bytes(bytes[12..16].try_into().unwrap());
        assert_eq!((level, kind), (libc::SOL_ALG, libc::ALG_SET_OP));
        assert_eq!(
            u32::from_ne_bytes(bytes[hdr..hdr + 4].try_into().unwrap()),
            libc::ALG_OP_ENCRYPT as u32
        );
        // Second: the IV with its length.
        let o = space(4);
        let kind = i32::from_ne_bytes(bytes[o + 12..o + 16].try_into().unwrap());
        assert_eq!(kind, libc::ALG_SET_IV);
        assert_eq!(
            u32::from_ne_bytes(bytes[o + hdr..o + hdr + 4].try_into().unwrap()),
            12
        );
        assert_eq!(&bytes[o + hdr + 4..o + hdr + 16], &iv);
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
                    statuses.iter().any(|s| reason.contains(&s.reason)),
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
