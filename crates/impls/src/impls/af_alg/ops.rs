//! One message through an operation socket: skcipher, aead and hash.

use super::socket::*;
use crate::algorithms::{Algorithm, Direction, Kind};
use crate::impls::implementation::Operation;
use crate::impls::io::{opened_len, sealed_len, Io};
use crate::sys::os_err;
use anyhow::anyhow;
use std::os::fd::{AsRawFd, OwnedFd};

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

fn aead_error(e: i32, call: &str, sent: usize, out_len: usize) -> anyhow::Error {
    match e {
        libc::EBADMSG => anyhow!("tag verification failed"),
        libc::ENOMEM => anyhow::Error::msg(too_big(&format!("{call}: ENOMEM"), sent, out_len)),
        _ => anyhow!("AF_ALG {call}: {}", os_err(e)),
    }
}

pub(super) struct AlgOp {
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
    pub(super) fn new(
        alg: Algorithm,
        direction: Direction,
        tfm: OwnedFd,
        sock: OwnedFd,
        pipe: Option<Pipe>,
    ) -> AlgOp {
        let mut op = AlgOp::cipher_op(direction, alg.nonce_len(), tfm, sock, pipe);
        op.kind = alg.kind();
        op.digest_len = alg.digest_len();
        op
    }

    /// A skcipher operation with an IV of `nonce_len` bytes, of any algorithm the kernel
    /// names (xts(aes), adiantum(xchacha12,aes)), not only those `Algorithm` lists.
    pub(super) fn cipher_op(
        direction: Direction,
        nonce_len: usize,
        tfm: OwnedFd,
        sock: OwnedFd,
        pipe: Option<Pipe>,
    ) -> AlgOp {
        AlgOp {
            kind: Kind::Cipher,
            direction,
            digest_len: 0,
            nonce_len,
            _tfm: tfm,
            sock,
            pipe,
            scratch: Vec::new(),
            fits: 0,
        }
    }

    fn check_nonce(&self, nonce: &[u8]) -> anyhow::Result<()> {
        if nonce.len() != self.nonce_len {
            return Err(anyhow!(
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
    fn fit(&mut self, sent: usize, received: usize) -> anyhow::Result<()> {
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
                return Err(anyhow!(
                    "an AEAD message of {need} bytes must fit whole in the AF_ALG socket buffer, but {what} stays at {got} bytes (net.core.{sysctl_name} = {}; {what}FORCE needs CAP_NET_ADMIN)",
                    sysctl(sysctl_name)
                ));
            }
        }
        self.fits = need;
        Ok(())
    }

    fn cipher(&mut self, nonce: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        self.check_nonce(nonce)?;
        let r = io.raw_for(Some)?;
        let n = r.in_len;
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
                            .map_err(|e| anyhow!("AF_ALG sendmsg: {}", os_err(e)))?;
                        if k == 0 {
                            return Err(anyhow!("AF_ALG sendmsg took nothing"));
                        }
                        sent += k;
                        if sent < piece && last {
                            return Err(anyhow!(
                                "AF_ALG sendmsg took {sent} of the last {piece} bytes"
                            ));
                        }
                    }
                }
                Some(pipe) => {
                    if off == 0 {
                        send_msg(fd, &mut [], Some(&mut control), true)
                            .map_err(|e| anyhow!("AF_ALG sendmsg (control): {}", os_err(e)))?;
                    }
                    splice_in(pipe, fd, src, piece, last)
                        .map_err(|e| e.1)
                        .map_err(anyhow::Error::msg)?;
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
                    return Err(anyhow!(
                        "AF_ALG recvmsg returned nothing after {got} of {piece} bytes"
                    ));
                }
                got += k;
            }
            off += piece;
        }
        Ok(n)
    }

    fn aead(&mut self, nonce: &[u8], aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        self.check_nonce(nonce)?;
        let enc = self.direction == Direction::Enc;
        let out_len = if enc {
            sealed_len(io.input_len())?
        } else {
            opened_len(io.input_len())?
        };
        let r = io.raw_for(|_| Some(out_len))?;
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
                    return Err(anyhow::Error::msg(too_big(
                        &format!("sendmsg took {k} of {sent} bytes"),
                        sent,
                        out_len,
                    )));
                }
            }
            Some(pipe) => {
                let mut v = [iov(aad.as_ptr(), aad.len())];
                let k = send_msg(fd, &mut v, Some(&mut control), true)
                    .map_err(|e| anyhow!("AF_ALG sendmsg (control, AAD): {}", os_err(e)))?;
                if k != aad.len() {
                    return Err(anyhow!("AF_ALG took {k} of {} bytes of AAD", aad.len()));
                }
                splice_in(pipe, fd, r.input, r.in_len, true)
                    .map_err(|(e, m)| {
                        if e == libc::ENOMEM {
                            too_big(&m, sent, out_len)
                        } else {
                            m
                        }
                    })
                    .map_err(anyhow::Error::msg)?;
            }
        }
        let mut v = [
            iov(self.scratch.as_mut_ptr(), aad.len() + spare),
            iov(r.out, out_len),
        ];
        let k = recv_msg(fd, &mut v).map_err(|e| aead_error(e, "recvmsg", sent, out_len))?;
        if k != aad.len() + out_len {
            return Err(anyhow::Error::msg(too_big(
                &format!("recvmsg returned {k} of {} bytes", aad.len() + out_len),
                sent,
                out_len,
            )));
        }
        Ok(out_len)
    }

    fn hash(&mut self, io: Io<'_>) -> anyhow::Result<usize> {
        let (input, out) = io.digest_room(self.digest_len)?;
        let fd = self.sock.as_raw_fd();
        match &self.pipe {
            None => {
                let mut v = [iov(input.as_ptr(), input.len())];
                let k = send_msg(fd, &mut v, None, false)
                    .map_err(|e| anyhow!("AF_ALG send: {}", os_err(e)))?;
                if k != input.len() {
                    return Err(anyhow!("AF_ALG hash took {k} of {} bytes", input.len()));
                }
            }
            Some(pipe) => splice_in(pipe, fd, input.as_ptr(), input.len(), true)
                .map_err(|e| e.1)
                .map_err(anyhow::Error::msg)?,
        }
        let mut v = [iov(out.as_mut_ptr(), self.digest_len)];
        let k = recv_msg(fd, &mut v)
            .map_err(|e| anyhow!("AF_ALG read of the digest: {}", os_err(e)))?;
        if k != self.digest_len {
            return Err(anyhow!(
                "AF_ALG returned {k} digest bytes, expected {}",
                self.digest_len
            ));
        }
        Ok(k)
    }
}

impl Operation for AlgOp {
    fn process(&mut self, nonce: &[u8], aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        match self.kind {
            Kind::Cipher => self.cipher(nonce, io),
            Kind::Aead => self.aead(nonce, aad, io),
            Kind::Hash | Kind::Mac => self.hash(io),
            _ => Err(anyhow!("AF_ALG offers no public-key operations")),
        }
    }
}
