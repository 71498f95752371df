//! Socket plumbing for AF_ALG: control messages, sendmsg/recvmsg, vmsplice + splice,
//! socket buffer sizes, and the kernel's errors in words.

use super::*;

/// A pipe for vmsplice + splice.
pub(super) struct Pipe {
    pub(super) read: OwnedFd,
    pub(super) write: OwnedFd,
}

impl Pipe {
    pub(super) fn new() -> Result<Pipe, String> {
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
pub(super) struct Control {
    pub(super) buf: [u64; 16],
    pub(super) len: usize,
}

impl Control {
    pub(super) fn new(encrypt: bool, iv: &[u8], assoclen: Option<u32>) -> Control {
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

    pub(super) fn push(&mut self, kind: libc::c_int, data: &[u8]) {
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

pub(super) fn iov(ptr: *const u8, len: usize) -> libc::iovec {
    libc::iovec {
        iov_base: ptr as *mut libc::c_void,
        iov_len: len,
    }
}

/// One sendmsg; returns the bytes taken. Retries on EINTR.
pub(super) fn send_msg(
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
pub(super) fn recv_msg(fd: RawFd, iovs: &mut [libc::iovec]) -> Result<usize, i32> {
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

pub(super) fn recv_error(e: i32) -> String {
    if e == libc::EBADMSG {
        "tag verification failed".into()
    } else {
        format!("AF_ALG recvmsg: {}", os_err(e))
    }
}

/// Splices `len` bytes at `ptr` into the socket through the pipe. SPLICE_F_MORE is set
/// on every splice but the very last when `last` is true.
pub(super) fn splice_in(
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
pub(super) struct Raw {
    pub(super) input: *const u8,
    pub(super) in_len: usize,
    pub(super) out: *mut u8,
    pub(super) out_cap: usize,
}

pub(super) fn raw(io: Io<'_>) -> Result<Raw, String> {
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

pub(super) fn getsockopt_int(fd: RawFd, opt: libc::c_int) -> Option<usize> {
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

pub(super) fn setsockopt_int(fd: RawFd, opt: libc::c_int, v: usize) -> bool {
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

pub(super) fn sysctl(name: &str) -> String {
    std::fs::read_to_string(format!("/proc/sys/net/core/{name}"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into())
}

/// An AEAD message the kernel could not hold whole: AF_ALG allocates the scatterlists of
/// one request (TX pages in ~4 KiB tables of 126 pages, RX in 16-page pieces of ~0.7 KiB)
/// from the socket's option memory, capped by net.core.optmem_max.
pub(super) fn too_big(what: &str, sent: usize, out_len: usize) -> String {
    let tx_tables = sent.div_ceil(PAGE).div_ceil(126);
    let rx_pieces = out_len.div_ceil(PIECE);
    let estimate = tx_tables * PAGE + rx_pieces * 704 + 2048;
    format!(
        "AF_ALG could not hold this AEAD message whole ({what}): the kernel takes an AEAD message only in one piece and charges its scatterlists, about {estimate} bytes here, to net.core.optmem_max = {} per socket; raise it (sysctl -w net.core.optmem_max=...) to measure AEAD messages this large",
        sysctl("optmem_max")
    )
}

pub(super) fn aead_error(e: i32, call: &str, sent: usize, out_len: usize) -> String {
    match e {
        libc::EBADMSG => "tag verification failed".into(),
        libc::ENOMEM => too_big(&format!("{call}: ENOMEM"), sent, out_len),
        _ => format!("AF_ALG {call}: {}", os_err(e)),
    }
}
