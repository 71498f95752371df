//! AF_ALG socket plumbing: control messages, sendmsg/recvmsg, vmsplice + splice, socket
//! options, and the setup of one operation socket.

use crate::sys::{errno, os_err};
use anyhow::anyhow;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Bytes per piece for skcipher messages and per splice: 16 pages, the zero-copy limit
/// the kernel documents, and far below the default socket buffer (~208 KiB).
pub(super) const PIECE: usize = 16 * 4096;

pub(super) const PAGE: usize = 4096;

/// x86_64 and most other architectures (asm-generic/socket.h); libc does not export them
/// for every target.
pub(super) const SO_SNDBUFFORCE: libc::c_int = 32;
pub(super) const SO_RCVBUFFORCE: libc::c_int = 33;

/// A pipe for vmsplice + splice.
pub(super) struct Pipe {
    read: OwnedFd,
    write: OwnedFd,
}

impl Pipe {
    pub(super) fn new() -> anyhow::Result<Pipe> {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: fds has room for the two descriptors pipe2 writes.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
            return Err(anyhow!("pipe2: {}", os_err(errno())));
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
    buf: [u64; 16],
    len: usize,
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

pub(super) fn recv_error(e: i32) -> anyhow::Error {
    if e == libc::EBADMSG {
        anyhow!("tag verification failed")
    } else {
        anyhow!("AF_ALG recvmsg: {}", os_err(e))
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

/// ALG_SET_AEAD_AUTHSIZE on a transform socket: the tag length.
pub(super) fn set_tag_len(tfm: &OwnedFd, len: usize) -> anyhow::Result<()> {
    // SAFETY: ALG_SET_AEAD_AUTHSIZE takes no buffer; the size is optlen.
    let r = unsafe {
        libc::setsockopt(
            tfm.as_raw_fd(),
            libc::SOL_ALG,
            libc::ALG_SET_AEAD_AUTHSIZE,
            std::ptr::null(),
            len as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(anyhow!("ALG_SET_AEAD_AUTHSIZE {len}: {}", os_err(errno())));
    }
    Ok(())
}

/// ALG_SET_KEY on a transform socket.
pub(super) fn set_key(tfm: &OwnedFd, key: &[u8]) -> anyhow::Result<()> {
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
        return Err(anyhow!(
            "ALG_SET_KEY ({} bytes): {}",
            key.len(),
            os_err(errno())
        ));
    }
    Ok(())
}

/// The operation socket of a bound, keyed transform socket.
pub(super) fn accept(tfm: &OwnedFd) -> anyhow::Result<OwnedFd> {
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
        return Err(anyhow!("AF_ALG accept: {}", os_err(errno())));
    }
    // SAFETY: fd is a fresh socket we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
