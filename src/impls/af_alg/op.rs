//! One prepared AF_ALG operation: skcipher, aead and hash messages on the operation
//! socket (see the module documentation for the message layout).

use super::socket::*;
use super::*;

pub(super) struct AlgOp {
    pub(super) kind: Kind,
    pub(super) direction: Direction,
    pub(super) digest_len: usize,
    pub(super) nonce_len: usize,
    /// The transform socket; kept open for as long as the operation socket.
    pub(super) _tfm: OwnedFd,
    pub(super) sock: OwnedFd,
    pub(super) pipe: Option<Pipe>,
    /// Where the kernel writes the AAD back (AEAD).
    pub(super) scratch: Vec<u8>,
    /// The largest AEAD message (bytes sent) the socket buffers are known to take.
    pub(super) fits: usize,
}

impl AlgOp {
    pub(super) fn check_nonce(&self, nonce: &[u8]) -> Result<(), String> {
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
    pub(super) fn fit(&mut self, sent: usize, received: usize) -> Result<(), String> {
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

    pub(super) fn cipher(&mut self, nonce: &[u8], io: Io<'_>) -> Result<usize, String> {
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

    pub(super) fn aead(&mut self, nonce: &[u8], aad: &[u8], io: Io<'_>) -> Result<usize, String> {
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

    pub(super) fn hash(&mut self, io: Io<'_>) -> Result<usize, String> {
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
