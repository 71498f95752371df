//! The `speed-loop` variant: the per-call work of `openssl speed -evp`.

use super::cipher::CipherOp;
use super::ffi::*;
use super::instance::OpenSsl;
use crate::algorithms::{Algorithm, Direction, Kind, TAG_LEN};
use crate::impls::implementation::Operation;
use crate::impls::implementation::{each_message, Batch};
use crate::impls::io::{too_small, Io, RawIo};
use anyhow::anyhow;
use std::ffi::c_int;

/// The `--variant` that makes each call do `openssl speed -evp`'s per-operation work.
pub(super) const SPEED_LOOP: &str = "speed-loop";

impl OpenSsl {
    /// A keyed context like the base instance's, driven the way `openssl speed` drives it.
    pub(super) fn prepare_speed_loop(
        &self,
        alg: Algorithm,
        dir: Direction,
        key: &[u8],
    ) -> anyhow::Result<Box<dyn Operation>> {
        let api = &self.api;
        let op = self.keyed_cipher(alg, dir, key, None)?;
        // openssl speed turns padding off on every EVP context it sets up, GCM and CTR
        // included, and 3.0 re-applies that setting inside every later EVP_CipherInit_ex
        // (a provider parameter call per message): do the same.
        // SAFETY: a keyed context; padding changes nothing for GCM and CTR themselves.
        if unsafe { (api.cipher_ctx_set_padding)(op.ctx.0, 0) } != 1 {
            return Err(anyhow::Error::msg(api.fail("EVP_CIPHER_CTX_set_padding")));
        }
        let kind = match alg {
            Algorithm::Aes128Gcm | Algorithm::Aes192Gcm | Algorithm::Aes256Gcm => {
                SpeedKind::Gcm { key: key.to_vec() }
            }
            Algorithm::Aes128Cbc | Algorithm::Aes192Cbc | Algorithm::Aes256Cbc => {
                // The stream starts from a zero chaining value.
                let zero = [0u8; CIPHER_IV_LEN];
                op.set_iv(&zero, CIPHER_IV_LEN)?;
                SpeedKind::Cbc { chain: zero }
            }
            Algorithm::Aes128Ctr | Algorithm::Aes192Ctr | Algorithm::Aes256Ctr => SpeedKind::Ctr,
            other => return Err(anyhow!("speed-loop does not offer {other}")),
        };
        Ok(Box::new(SpeedLoopOp { cipher: op, kind }))
    }
}

/// Why the speed-loop variant does not offer `alg`, if it does not.
pub(super) fn speed_loop_gap(alg: Algorithm) -> Option<&'static str> {
    match alg {
        Algorithm::Chacha20Poly1305 => Some(
            "speed-loop: `openssl speed -evp` streams ChaCha20-Poly1305 (one EVP_EncryptUpdate per operation on one endless message: no nonce, AAD, Final or tag), which leaves no per-message result for the known-answer gate to check; the base openssl instance measures whole messages",
        ),
        _ if alg.is_legacy() => Some(
            "speed-loop covers the AES loops of `openssl speed -evp`; the legacy ciphers (DES, 3DES, RC4) are measured by the base openssl instance (RC4 has no IV, so a stream continued across calls would give no message its own answer)",
        ),
        _ if matches!(alg.kind(), Kind::Hash | Kind::Mac) => Some(
            "speed-loop covers the cipher loops of `openssl speed -evp` (AES-GCM, AES-CBC, AES-CTR); digests and HMAC are measured by the base openssl instance",
        ),
        _ => None,
    }
}

/// What the speed-loop variant does per call, for the records' notes.
pub(super) fn speed_loop_note(alg: Algorithm, direction: Direction) -> &'static str {
    match (alg, direction) {
        (Algorithm::Aes128Gcm | Algorithm::Aes192Gcm | Algorithm::Aes256Gcm, Direction::Enc) => {
            "speed-loop: per call the calls `openssl speed -evp -aead` 3.0 makes per message, on a context set up like its own (padding off, which 3.0 re-applies in every EVP_CipherInit_ex): EVP_CTRL_AEAD_SET_IVLEN, EVP_CipherInit_ex with key AND nonce (key schedule and GHASH key every message), EVP_EncryptUpdate with the AAD, EVP_EncryptUpdate in place, EVP_EncryptFinal_ex (which computes the tag). openssl speed never fetches the tag; the timed loop fetches it (EVP_CTRL_AEAD_GET_TAG, about 60 ns on 3.0: bench/extra-work-cost) once per batch, for the batch's last message, which the known-answer gate and the batch test check whole"
        }
        (Algorithm::Aes128Gcm | Algorithm::Aes192Gcm | Algorithm::Aes256Gcm, Direction::Dec) => {
            "speed-loop: per call the calls `openssl speed -evp -aead -decrypt` 3.0 makes per message, on a context set up like its own (padding off, which 3.0 re-applies in every EVP_CipherInit_ex): EVP_CTRL_AEAD_SET_IVLEN, EVP_CipherInit_ex with key AND nonce, EVP_DecryptInit_ex with the nonce, EVP_CTRL_AEAD_SET_TAG, EVP_DecryptUpdate with the AAD, EVP_DecryptUpdate out of place, EVP_DecryptFinal_ex (the tag is verified)"
        }
        (Algorithm::Aes128Cbc | Algorithm::Aes192Cbc | Algorithm::Aes256Cbc, Direction::Enc) => {
            "speed-loop: one EVP_EncryptUpdate in place per call on a context that is never re-initialised or finalised, as `openssl speed -evp` streams CBC; instead of re-setting the IV, the first plaintext block is XORed with (IV xor chaining value) before the call, which makes each output exactly its own message's CBC encryption (a 16-byte XOR and copy per call that openssl speed does not do)"
        }
        (Algorithm::Aes128Cbc | Algorithm::Aes192Cbc | Algorithm::Aes256Cbc, Direction::Dec) => {
            "speed-loop: one EVP_DecryptUpdate per call on a context that is never re-initialised or finalised, as `openssl speed -evp -decrypt` streams CBC (it decrypts in place; this harness decrypts out of place); instead of re-setting the IV, the first output block is XORed with (IV xor chaining value) after the call, which makes it exactly the message's plaintext (a 16-byte XOR and copy per call that openssl speed does not do)"
        }
        (Algorithm::Aes128Ctr | Algorithm::Aes192Ctr | Algorithm::Aes256Ctr, _) => {
            "speed-loop: EVP_CipherInit_ex with the IV, then one EVP_EncryptUpdate/EVP_DecryptUpdate, no Final; `openssl speed -evp` streams CTR without ever re-setting the IV, but a continued counter cannot give a message its own answer, so this makes one IV set per call more than openssl speed"
        }
        _ => "speed-loop: not offered",
    }
}

/// `openssl speed -evp` (3.0)'s work per counted operation, wherever that still gives each
/// call its own message's answer; see [`speed_loop_note`] for each algorithm:
///
/// - AES-GCM: the same EVP calls, re-keying every message, on a context set up the same
///   way (padding off, which 3.0 re-applies inside each EVP_CipherInit_ex). A single
///   seal also fetches the tag, which openssl speed skips but the known-answer gate must
///   see; the timed loop fetches it once per batch (see [`SpeedLoopOp::gcm_batch`]).
/// - AES-CBC: one Update per call on a context never re-initialised (openssl speed
///   streams). The IV is not re-set; the first block is corrected instead. CBC's first
///   block is E(P1 ^ IV); the stream computes E(X ^ C) where C is the chaining value (the
///   previous call's last ciphertext block), so sealing X = P1 ^ IV ^ C gives exactly
///   E(P1 ^ IV). Opening, the stream gives D(C1) ^ C, and XOR with C ^ IV gives P1. Every
///   call, the first and the second of the gate's `run_twice` alike, therefore returns
///   the message's true CBC result under the nonce passed, and the gate checks it.
/// - AES-CTR: a continued counter cannot be corrected that way, so each call sets the IV.
pub(super) struct SpeedLoopOp {
    pub(super) cipher: CipherOp,
    pub(super) kind: SpeedKind,
}

pub(super) enum SpeedKind {
    /// The key, set again with every message, as openssl speed does.
    Gcm {
        key: Vec<u8>,
    },
    /// The chaining value the stream will XOR into the next first block.
    Cbc {
        chain: [u8; CIPHER_IV_LEN],
    },
    Ctr,
}

/// `block[..16] ^= nonce ^ chain`.
///
/// The nonce is read as two 8-byte halves that the compiler may not merge: the harness
/// rewrites the nonce's last 8 bytes before each seal, and a 16-byte load right after that
/// 8-byte store cannot be forwarded from the store buffer (a stall of about 7 ns per call,
/// measured at 16 bytes, which is half of what `EVP_EncryptUpdate` itself takes).
pub(super) fn xor_block(
    block: &mut [u8],
    nonce: &[u8; CIPHER_IV_LEN],
    chain: &[u8; CIPHER_IV_LEN],
) {
    let Some(first) = block.first_chunk_mut::<CIPHER_IV_LEN>() else {
        return;
    };
    let half = |x: &[u8; CIPHER_IV_LEN], i: usize| {
        let mut h = [0u8; 8];
        h.copy_from_slice(&x[i..i + 8]);
        u64::from_ne_bytes(h)
    };
    // black_box keeps the two halves apart (else they become one 16-byte load).
    let (n0, n1) = (half(nonce, 0), std::hint::black_box(half(nonce, 8)));
    let lo = half(first, 0) ^ n0 ^ half(chain, 0);
    let hi = half(first, 8) ^ n1 ^ half(chain, 8);
    first[..8].copy_from_slice(&lo.to_ne_bytes());
    first[8..].copy_from_slice(&hi.to_ne_bytes());
}

impl SpeedLoopOp {
    pub(super) fn gcm(
        &mut self,
        nonce: &[u8],
        aad: &[u8],
        mut io: Io<'_>,
    ) -> anyhow::Result<usize> {
        let c = &self.cipher;
        if nonce.len() != AEAD_NONCE_LEN {
            return Err(anyhow!(
                "the nonce must be {AEAD_NONCE_LEN} bytes, got {}",
                nonce.len()
            ));
        }
        let RawIo {
            input: inp,
            in_len,
            out,
            out_cap: room,
        } = io.raw();
        let n =
            if c.enc {
                in_len
            } else {
                in_len.checked_sub(TAG_LEN).ok_or_else(|| {
                format!("an AEAD input of {in_len} bytes is shorter than the {TAG_LEN}-byte tag")
            }).map_err(anyhow::Error::msg)?
            };
        if room < n + TAG_LEN {
            return Err(anyhow!(
                "output buffer too small: {room} bytes for {n} bytes and the tag"
            ));
        }
        let mut tag = [0u8; TAG_LEN];
        if !c.enc {
            // SAFETY: the input is n + 16 readable bytes; the tag is its last 16, copied
            // before anything is written (in place, the output starts at `inp`).
            unsafe { std::ptr::copy_nonoverlapping(inp.add(n), tag.as_mut_ptr(), TAG_LEN) };
        }
        // SAFETY: the nonce is 12 bytes (checked); `inp` has n readable bytes, `out` has
        // room >= n + 16 (checked); Io gives the same buffer or two distinct ones.
        unsafe { self.gcm_message(nonce.as_ptr(), aad, inp, out, n, &mut tag)? };
        if !c.enc {
            return Ok(n);
        }
        // SAFETY: `out + n` has TAG_LEN writable bytes (checked above).
        unsafe { c.get_tag(out.add(n))? };
        Ok(n + TAG_LEN)
    }

    /// One GCM message, making the calls `openssl speed -evp -aead` 3.0 makes per message:
    /// SET_IVLEN, EVP_CipherInit_ex with key and nonce (key schedule and GHASH key every
    /// message), to open also EVP_DecryptInit_ex with the nonce and SET_TAG (`tag`, unused
    /// by a seal), the AAD, the data, then Final, which computes a seal's tag or verifies
    /// an open's. The tag of a seal is left in the context.
    ///
    /// # Safety
    /// `nonce` is readable for 12 bytes, `inp` for `n`; `out` is writable for n + 16
    /// bytes, equal to `inp` or not overlapping it.
    #[inline(always)]
    unsafe fn gcm_message(
        &self,
        nonce: *const u8,
        aad: &[u8],
        inp: *const u8,
        out: *mut u8,
        n: usize,
        tag: &mut [u8; TAG_LEN],
    ) -> anyhow::Result<()> {
        let SpeedKind::Gcm { key } = &self.kind else {
            return Err(anyhow!("not a GCM operation"));
        };
        let c = &self.cipher;
        let api = &c.api;
        c.set_nonce_len()?;
        // SAFETY: cipher and engine NULL keep the context's; the key has the length it
        // expects (checked in prepare), the nonce is 12 bytes (this function's contract);
        // -1 keeps the direction.
        let ok = unsafe {
            (api.cipher_init_ex)(
                c.ctx.0,
                std::ptr::null(),
                std::ptr::null_mut(),
                key.as_ptr(),
                nonce,
                -1,
            )
        };
        api.check(ok, "EVP_CipherInit_ex with key and nonce")?;
        if !c.enc {
            // SAFETY: as above; EVP_DecryptInit_ex with only the nonce, as openssl speed.
            let ok = unsafe {
                (api.decrypt_init_ex)(
                    c.ctx.0,
                    std::ptr::null(),
                    std::ptr::null_mut(),
                    std::ptr::null(),
                    nonce,
                )
            };
            api.check(ok, "EVP_DecryptInit_ex with the nonce")?;
            c.set_tag(tag)?;
        }
        if !aad.is_empty() {
            // SAFETY: out NULL: `aad` is AAD, readable for its length.
            unsafe { c.update(std::ptr::null_mut(), aad.as_ptr(), aad.len())? };
        }
        // SAFETY: per this function's contract.
        let outl = unsafe { c.update(out, inp, n)? };
        if outl > n {
            return Err(anyhow!("OpenSSL wrote {outl} bytes for a {n}-byte message"));
        }
        // SAFETY: `out + outl` is within the output room; GCM's Final writes nothing.
        let fin = unsafe { c.final_ex(out.add(outl))? };
        if outl + fin != n {
            return Err(anyhow!(
                "OpenSSL wrote {} bytes for a {n}-byte message",
                outl + fin
            ));
        }
        Ok(())
    }

    pub(super) fn cbc(&mut self, nonce: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        let iv: &[u8; CIPHER_IV_LEN] = nonce
            .try_into()
            .map_err(|_| anyhow!("the IV must be {CIPHER_IV_LEN} bytes, got {}", nonce.len()))?;
        let SpeedKind::Cbc { chain } = &mut self.kind else {
            return Err(anyhow!("not a CBC operation"));
        };
        let c = &self.cipher;
        let n = io.input_len();
        if !n.is_multiple_of(CIPHER_IV_LEN) {
            return Err(anyhow!("CBC takes whole 16-byte blocks; got {n} bytes"));
        }
        let room = match &io {
            Io::InPlace { buf, .. } => buf.len(),
            Io::Separate { output, .. } => output.len(),
        };
        if room < n + CIPHER_IV_LEN {
            return Err(too_small());
        }
        if n == 0 {
            return Ok(0);
        }
        let result = if c.enc {
            // The harness seals in place; a separate input is copied here first.
            let (buf, len) = io.into_in_place();
            xor_block(&mut buf[..CIPHER_IV_LEN], iv, chain);
            let p = buf.as_mut_ptr();
            // SAFETY: `buf` has len + 16 bytes; input and output are the same buffer.
            let r = unsafe { c.update(p, p, len) };
            chain.copy_from_slice(&buf[len - CIPHER_IV_LEN..len]);
            r
        } else {
            let mut io = io;
            let RawIo {
                input: inp,
                in_len: len,
                out,
                ..
            } = io.raw();
            let mut next = [0u8; CIPHER_IV_LEN];
            // SAFETY: the input has `len` >= 16 readable bytes; read before an in-place
            // call overwrites them.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    inp.add(len - CIPHER_IV_LEN),
                    next.as_mut_ptr(),
                    CIPHER_IV_LEN,
                )
            };
            // SAFETY: `inp` readable for len bytes, `out` writable for len + 16; the same
            // buffer or distinct ones.
            let r = unsafe { c.update(out, inp, len) };
            if r.is_ok() {
                // SAFETY: `out` has at least 16 written bytes, and we hold the only
                // reference to the output for the rest of this call.
                let first = unsafe { std::slice::from_raw_parts_mut(out, CIPHER_IV_LEN) };
                xor_block(first, iv, chain);
            }
            *chain = next;
            r
        };
        match result {
            Ok(written) if written == n => Ok(n),
            other => {
                // The stream's state is unknown: start it again from a zero IV.
                self.resync_cbc()?;
                match other {
                    Ok(w) => Err(anyhow!("OpenSSL wrote {w} bytes for a {n}-byte message")),
                    Err(e) => Err(e),
                }
            }
        }
    }

    /// Re-sets the CBC stream to a known chaining value (zero).
    pub(super) fn resync_cbc(&mut self) -> anyhow::Result<()> {
        if let SpeedKind::Cbc { chain } = &mut self.kind {
            *chain = [0u8; CIPHER_IV_LEN];
            self.cipher.set_iv(chain, CIPHER_IV_LEN)?;
        }
        Ok(())
    }

    pub(super) fn ctr(&mut self, nonce: &[u8], mut io: Io<'_>) -> anyhow::Result<usize> {
        let c = &self.cipher;
        let RawIo {
            input: inp,
            in_len: n,
            out,
            out_cap: room,
        } = io.raw();
        if room < n + CIPHER_IV_LEN {
            return Err(too_small());
        }
        c.set_iv(nonce, CIPHER_IV_LEN)?;
        // SAFETY: `inp` readable for n bytes, `out` writable for n + 16; the same buffer
        // or distinct ones.
        let written = unsafe { c.update(out, inp, n)? };
        if written != n {
            return Err(anyhow!(
                "OpenSSL wrote {written} bytes for a {n}-byte message"
            ));
        }
        Ok(n)
    }
}

impl Operation for SpeedLoopOp {
    fn process(&mut self, nonce: &[u8], aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        match self.kind {
            SpeedKind::Gcm { .. } => self.gcm(nonce, aad, io),
            SpeedKind::Cbc { .. } => self.cbc(nonce, io),
            SpeedKind::Ctr => self.ctr(nonce, io),
        }
    }

    fn process_batch(&mut self, b: &mut Batch<'_>, calls: u64) -> anyhow::Result<()> {
        let n = b.size;
        let fits = n > 0
            && n.is_multiple_of(CIPHER_IV_LEN)
            && b.nonce.len() == CIPHER_IV_LEN
            && b.buf.len() >= n + CIPHER_IV_LEN
            && (b.direction == Direction::Enc || b.sealed.len() == n);
        let gcm_fits = b.nonce.len() == AEAD_NONCE_LEN
            && b.buf.len() >= n + TAG_LEN
            && (b.direction == Direction::Enc || b.sealed.len() == n + TAG_LEN);
        match (&self.kind, c_int::try_from(n)) {
            (SpeedKind::Cbc { .. }, Ok(n_c)) if fits => self.cbc_batch(b, n_c, calls),
            (SpeedKind::Gcm { .. }, _) if gcm_fits => self.gcm_batch(b, calls),
            // Anything unusual takes the checked path, which says what is wrong.
            _ => each_message(self, b, calls),
        }
    }
}

/// 16-byte blocks in one vector register, loaded and stored whole: OpenSSL's AES code
/// reads a block with one 16-byte load, which cannot be forwarded from two 8-byte stores
/// (a stall of about 4 ns per call, seen with perf at 16 bytes).
#[cfg(target_arch = "x86_64")]
mod block {
    use std::arch::x86_64::{
        __m128i, _mm_loadu_si128, _mm_set_epi64x, _mm_storeu_si128, _mm_xor_si128,
    };
    pub type Block = __m128i;

    /// # Safety
    /// `p` is readable for 16 bytes.
    #[inline(always)]
    pub unsafe fn load(p: *const u8) -> Block {
        // SAFETY: per this function's contract; SSE2 is part of x86_64.
        unsafe { _mm_loadu_si128(p as *const __m128i) }
    }

    /// # Safety
    /// `p` is writable for 16 bytes.
    #[inline(always)]
    pub unsafe fn store(p: *mut u8, b: Block) {
        // SAFETY: per this function's contract.
        unsafe { _mm_storeu_si128(p as *mut __m128i, b) }
    }

    #[inline(always)]
    pub fn xor(a: Block, b: Block) -> Block {
        // SAFETY: SSE2 is part of x86_64.
        unsafe { _mm_xor_si128(a, b) }
    }

    /// `b` as it is, computed before anything that uses it: keeps the compiler from
    /// re-associating XORs (which would put two of them after the value that comes last).
    #[inline(always)]
    pub fn opaque(mut b: Block) -> Block {
        // SAFETY: an empty asm block that only names the register.
        unsafe {
            std::arch::asm!("/* {0} */", inout(xmm_reg) b, options(pure, nomem, nostack, preserves_flags))
        };
        b
    }

    /// The block whose bytes are `lo` then `hi`, in memory order.
    #[inline(always)]
    pub fn from_halves(lo: [u8; 8], hi: [u8; 8]) -> Block {
        // SAFETY: SSE2 is part of x86_64.
        unsafe { _mm_set_epi64x(i64::from_ne_bytes(hi), i64::from_ne_bytes(lo)) }
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod block {
    pub type Block = u128;

    /// # Safety
    /// `p` is readable for 16 bytes.
    #[inline(always)]
    pub unsafe fn load(p: *const u8) -> Block {
        // SAFETY: per this function's contract.
        unsafe { std::ptr::read_unaligned(p as *const u128) }
    }

    /// # Safety
    /// `p` is writable for 16 bytes.
    #[inline(always)]
    pub unsafe fn store(p: *mut u8, b: Block) {
        // SAFETY: per this function's contract.
        unsafe { std::ptr::write_unaligned(p as *mut u128, b) }
    }

    #[inline(always)]
    pub fn xor(a: Block, b: Block) -> Block {
        a ^ b
    }

    /// Identity here: black_box would send the block through memory, the very cost the
    /// x86_64 version avoids.
    #[inline(always)]
    pub fn opaque(b: Block) -> Block {
        b
    }

    #[inline(always)]
    pub fn from_halves(lo: [u8; 8], hi: [u8; 8]) -> Block {
        let mut x = [0u8; 16];
        x[..8].copy_from_slice(&lo);
        x[8..].copy_from_slice(&hi);
        u128::from_ne_bytes(x)
    }
}

impl SpeedLoopOp {
    /// The CBC timed loop, as lean as openssl speed's: every check is done once per
    /// batch (by the caller), so a message costs one EVP_EncryptUpdate (DecryptUpdate),
    /// the first-block correction of [`SpeedLoopOp::cbc`] and the chaining value, held
    /// in registers. The seal's IV is built from the counter in a register, as the
    /// harness's nonce would hold it, so no 8-byte store is read back as 16 bytes.
    fn cbc_batch(&mut self, b: &mut Batch<'_>, n_c: c_int, calls: u64) -> anyhow::Result<()> {
        let SpeedKind::Cbc { chain } = &mut self.kind else {
            return Err(anyhow!("not a CBC operation"));
        };
        let c = &self.cipher;
        let n = n_c as usize;
        let half = |x: &[u8], i: usize| -> [u8; 8] {
            let mut h = [0u8; 8];
            h.copy_from_slice(&x[i..i + 8]);
            h
        };
        let mut ch = block::from_halves(half(chain, 0), half(chain, 8));
        let mut outl: c_int = 0;
        let mut failed = false;
        let head = half(b.nonce, 0);
        if c.enc {
            let update = c.api.encrypt_update;
            let p = b.buf.as_mut_ptr();
            let mut counter = *b.counter;
            // In place, after the first call a one-block message is the previous output,
            // which is the chaining value itself: P1 ^ C = 0, so the correction is the
            // IV alone, made in registers. That keeps our load and store off the chain
            // of dependent calls, which openssl speed's loop does not have either.
            let iv_alone = n == CIPHER_IV_LEN;
            for k in 0..calls {
                counter = counter.wrapping_add(1);
                let iv = block::from_halves(head, counter.to_be_bytes());
                // SAFETY: `buf` has n + 16 >= 32 bytes (checked by the caller); the call
                // works in place on its first n.
                unsafe {
                    let x = if iv_alone && k > 0 {
                        iv
                    } else {
                        // The chaining value comes last (it ends the previous call's
                        // chain of blocks): one XOR after it, not two.
                        block::xor(block::opaque(block::xor(block::load(p), iv)), ch)
                    };
                    block::store(p, x);
                    if update(c.ctx.0, p, &mut outl, p, n_c) != 1 || outl != n_c {
                        failed = true;
                        break;
                    }
                    ch = block::load(p.add(n - CIPHER_IV_LEN));
                }
            }
            *b.counter = counter;
            b.nonce[8..].copy_from_slice(&counter.to_be_bytes());
        } else {
            let update = c.api.decrypt_update;
            let (inp, out) = (b.sealed.as_ptr(), b.buf.as_mut_ptr());
            let iv = block::from_halves(head, half(b.nonce, 8));
            // SAFETY: `sealed` is n >= 16 bytes (checked by the caller).
            let next = unsafe { block::load(inp.add(n - CIPHER_IV_LEN)) };
            for _ in 0..calls {
                // SAFETY: `sealed` is n bytes, `buf` has room for n + 16; distinct buffers.
                unsafe {
                    if update(c.ctx.0, out, &mut outl, inp, n_c) != 1 || outl != n_c {
                        failed = true;
                        break;
                    }
                    block::store(out, block::xor(block::xor(block::load(out), iv), ch));
                }
                ch = next;
            }
        }
        // SAFETY: `chain` is 16 writable bytes.
        unsafe { block::store(chain.as_mut_ptr(), ch) };
        if failed {
            let what = if c.enc {
                "EVP_EncryptUpdate"
            } else {
                "EVP_DecryptUpdate"
            };
            let e = c.api.fail(what);
            self.resync_cbc()?;
            return Err(anyhow::Error::msg(e));
        }
        Ok(())
    }
}

impl SpeedLoopOp {
    /// The GCM timed loop: per message [`SpeedLoopOp::gcm_message`], the calls of
    /// `openssl speed -evp -aead`, with every length checked once by the caller. A seal's
    /// tag is computed by every EVP_EncryptFinal_ex, as in openssl speed, and fetched
    /// (EVP_CTRL_AEAD_GET_TAG) once, after the batch's last message: the buffer then holds
    /// that message whole, as [`SpeedLoopOp::gcm`] leaves it. On 3.0 that ctrl is a
    /// provider parameter lookup of about 60 ns, 11-15% of a seal up to 1 KiB
    /// (bench/extra-work-cost), which openssl speed never pays.
    fn gcm_batch(&mut self, b: &mut Batch<'_>, calls: u64) -> anyhow::Result<()> {
        let n = b.size;
        // The nonce lives in a 16-byte block written whole: OpenSSL copies 12 bytes with
        // loads that an 8-byte store of the counter alone could not forward.
        let mut nonce = [0u8; 16];
        nonce[..AEAD_NONCE_LEN].copy_from_slice(b.nonce);
        let nonce_p = nonce.as_mut_ptr();
        let mut tag = [0u8; TAG_LEN];
        if !self.cipher.enc {
            tag.copy_from_slice(&b.sealed[n..]);
            for _ in 0..calls {
                // SAFETY: `sealed` is n + 16 readable bytes, `buf` has room for n + 16
                // (checked by the caller); distinct buffers.
                unsafe {
                    self.gcm_message(
                        nonce_p,
                        b.aad,
                        b.sealed.as_ptr(),
                        b.buf.as_mut_ptr(),
                        n,
                        &mut tag,
                    )?
                };
            }
            return Ok(());
        }
        let p = b.buf.as_mut_ptr();
        let mut head = [0u8; 4];
        head.copy_from_slice(&b.nonce[..4]);
        let mut counter = *b.counter;
        let mut sealed = Ok(());
        for _ in 0..calls {
            counter = counter.wrapping_add(1);
            let be = counter.to_be_bytes();
            let lo = [
                head[0], head[1], head[2], head[3], be[0], be[1], be[2], be[3],
            ];
            let hi = [be[4], be[5], be[6], be[7], 0, 0, 0, 0];
            // SAFETY: `nonce` is 16 bytes; `buf` has n + 16 bytes (checked by the
            // caller), sealed in place.
            sealed = unsafe {
                block::store(nonce_p, block::from_halves(lo, hi));
                self.gcm_message(nonce_p, b.aad, p, p, n, &mut tag)
            };
            if sealed.is_err() {
                break;
            }
        }
        *b.counter = counter;
        b.nonce.copy_from_slice(&nonce[..AEAD_NONCE_LEN]);
        sealed?;
        if calls > 0 {
            // SAFETY: `buf` has 16 writable bytes after the message (checked by the caller).
            unsafe { self.cipher.get_tag(p.add(n))? };
        }
        Ok(())
    }
}

impl Drop for SpeedLoopOp {
    fn drop(&mut self) {
        if let SpeedKind::Gcm { key } = &mut self.kind {
            for b in key.iter_mut() {
                // SAFETY: a valid, aligned byte of our own Vec; volatile so the wipe stays.
                unsafe { std::ptr::write_volatile(b, 0) };
            }
        }
    }
}
