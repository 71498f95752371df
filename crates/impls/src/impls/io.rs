//! One message's buffers, and the checks every implementation makes on them.

use crate::algorithms::TAG_LEN;
use anyhow::anyhow;

/// The buffers of one message.
///
/// Layouts, for a message of n bytes:
/// - AEAD enc: input n bytes of plaintext; output n bytes of ciphertext then the 16-byte tag.
/// - AEAD dec: input ciphertext || tag (n + 16 bytes); output n bytes of plaintext.
/// - Cipher enc/dec: n bytes in, n bytes out.
/// - Hash/MAC: n bytes in, the digest out.
///
/// Timed runs use `InPlace` for enc (the content of the plaintext does not change the
/// cost) and `Separate` for dec, so that every open verifies a genuinely sealed message.
pub enum Io<'a> {
    /// `buf[..len]` holds the input. The output replaces it, followed by the tag; a
    /// digest is written at `buf[len..]`. `buf` has room for `len + 64`.
    InPlace { buf: &'a mut [u8], len: usize },
    /// Read `input`, write `output`. `output` has room for `input.len() + 64`.
    Separate {
        input: &'a [u8],
        output: &'a mut [u8],
    },
}

impl<'a> Io<'a> {
    /// Input length in bytes (for AEAD open this includes the tag).
    pub fn input_len(&self) -> usize {
        match self {
            Io::InPlace { len, .. } => *len,
            Io::Separate { input, .. } => input.len(),
        }
    }

    /// The whole buffer with the input in `[..len]`, for libraries that only work in
    /// place. A `Separate` call pays a copy here; implementations that take this path
    /// for dec must say so in [`Implementation::notes`].
    pub fn into_in_place(self) -> (&'a mut [u8], usize) {
        match self {
            Io::InPlace { buf, len } => (buf, len),
            Io::Separate { input, output } => {
                output[..input.len()].copy_from_slice(input);
                (output, input.len())
            }
        }
    }

    /// Non-overlapping (input, output) for hashes and MACs: in place, the digest goes
    /// after the message.
    pub fn split(self) -> (&'a [u8], &'a mut [u8]) {
        match self {
            Io::InPlace { buf, len } => {
                let (a, b) = buf.split_at_mut(len);
                (&*a, b)
            }
            Io::Separate { input, output } => (input, output),
        }
    }

    /// Raw pointers for C calls that accept in == out. Unchecked: see [`Io::raw_for`].
    pub fn raw(&mut self) -> RawIo {
        match self {
            Io::InPlace { buf, len } => RawIo {
                input: buf.as_ptr(),
                in_len: *len,
                out: buf.as_mut_ptr(),
                out_cap: buf.len(),
            },
            Io::Separate { input, output } => RawIo {
                input: input.as_ptr(),
                in_len: input.len(),
                out: output.as_mut_ptr(),
                out_cap: output.len(),
            },
        }
    }

    /// Raw pointers after checking that the input lies inside the buffer and that
    /// `out_len(input length)` bytes fit at the output (None: the length overflows, or
    /// the input is too short to give an output).
    pub fn raw_for(mut self, out_len: impl Fn(usize) -> Option<usize>) -> anyhow::Result<RawIo> {
        let r = self.raw();
        if let Io::InPlace { buf, len } = &self {
            if *len > buf.len() {
                return Err(too_small());
            }
        }
        if out_len(r.in_len).ok_or_else(too_small)? > r.out_cap {
            return Err(too_small());
        }
        Ok(r)
    }

    /// Hashes and MACs: the message, and exactly `len` bytes of output for the digest.
    pub fn digest_room(self, len: usize) -> anyhow::Result<(&'a [u8], &'a mut [u8])> {
        let (msg, out) = self.split();
        Ok((msg, out.get_mut(..len).ok_or_else(too_small)?))
    }

    /// Hashes and MACs: computes `f(message)` and writes it to the output; returns its
    /// length.
    pub fn put_digest<D: AsRef<[u8]>>(self, f: impl FnOnce(&[u8]) -> D) -> anyhow::Result<usize> {
        let (msg, out) = self.split();
        let d = f(msg);
        let d = d.as_ref();
        out.get_mut(..d.len())
            .ok_or_else(too_small)?
            .copy_from_slice(d);
        Ok(d.len())
    }
}

/// One message's buffers as raw pointers, for C calls; valid while the [`Io`] they came
/// from is borrowed. In place, `input == out`.
pub struct RawIo {
    pub input: *const u8,
    pub in_len: usize,
    pub out: *mut u8,
    /// Bytes writable at `out`.
    pub out_cap: usize,
}

/// The error of an output buffer that cannot hold the result.
pub fn too_small() -> anyhow::Error {
    anyhow!("output buffer too small")
}

/// Bytes an AEAD seal writes for `n` bytes of plaintext: the ciphertext and the tag.
pub fn sealed_len(n: usize) -> anyhow::Result<usize> {
    n.checked_add(TAG_LEN).ok_or_else(too_small)
}

/// Plaintext bytes of an AEAD open of `in_len` bytes (ciphertext || tag).
pub fn opened_len(in_len: usize) -> anyhow::Result<usize> {
    in_len
        .checked_sub(TAG_LEN)
        .ok_or_else(|| anyhow!("the input is shorter than the {TAG_LEN}-byte tag"))
}
