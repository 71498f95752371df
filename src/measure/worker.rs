//! The per-thread state of one point: an Operation with its own buffers and nonce.
use anyhow::anyhow;

use crate::algorithms::{Algorithm, Direction, Kind, TIMED_AAD_LEN};
use crate::impls::{Batch, Implementation, Io, Operation};
use crate::kat::{pattern, SLACK};

pub struct Worker {
    op: Box<dyn Operation>,
    direction: Direction,
    size: usize,
    /// enc: the message, transformed in place; dec: where the plaintext goes.
    buf: Vec<u8>,
    /// dec only: a genuinely sealed message (ciphertext || tag), opened on every call.
    sealed: Vec<u8>,
    /// The message `sealed` holds, to check the last open against.
    plaintext: Vec<u8>,
    nonce: Vec<u8>,
    aad: Vec<u8>,
    counter: u64,
}

impl Worker {
    /// Key setup and, for dec, sealing the message with the implementation's own enc
    /// (which passed the known answers and the cross-implementation round trip).
    pub fn new(
        imp: &dyn Implementation,
        alg: Algorithm,
        direction: Direction,
        size: usize,
        thread: usize,
    ) -> anyhow::Result<Worker> {
        if alg.kind().is_public_key() {
            return Ok(Worker {
                op: super::pkey::operation(imp, alg, direction, thread)?,
                direction,
                size: 0,
                buf: Vec::new(),
                sealed: Vec::new(),
                plaintext: Vec::new(),
                nonce: Vec::new(),
                aad: Vec::new(),
                counter: 0,
            });
        }
        let seed = thread as u8;
        let key = pattern(alg.key_len(), 0x5a ^ seed);
        let nonce = pattern(alg.nonce_len(), 0x33 ^ seed);
        let aad = if alg.kind() == Kind::Aead {
            pattern(TIMED_AAD_LEN, 0x21)
        } else {
            Vec::new()
        };
        let plaintext = pattern(size, 0x77 ^ seed);
        let mut sealed = Vec::new();
        if direction == Direction::Dec {
            let mut enc = imp.prepare(alg, Direction::Enc, &key)?;
            let mut buf = vec![0u8; size + SLACK];
            buf[..size].copy_from_slice(&plaintext);
            let n = enc.process(
                &nonce,
                &aad,
                Io::InPlace {
                    buf: &mut buf,
                    len: size,
                },
            )?;
            buf.truncate(n);
            sealed = buf;
        }
        let op = imp.prepare(alg, direction, &key)?;
        let mut buf = vec![0u8; alg.input_len(direction, size) + SLACK];
        if direction == Direction::Enc {
            buf[..size].copy_from_slice(&plaintext);
        }
        Ok(Worker {
            op,
            direction,
            size,
            buf,
            sealed,
            plaintext,
            nonce,
            aad,
            counter: 0,
        })
    }

    /// What one call adds to a sample: its bytes, or one operation for public-key
    /// algorithms (size 0), whose samples are then operations/s.
    pub fn units_per_call(&self) -> u64 {
        match self.direction {
            Direction::Enc | Direction::Dec => self.size as u64,
            _ => 1,
        }
    }

    /// `calls` messages: a fresh nonce per seal; every open verifies the sealed message.
    #[inline]
    pub fn run_batch(&mut self, calls: u64) -> anyhow::Result<()> {
        let mut batch = Batch {
            direction: self.direction,
            size: self.size,
            buf: &mut self.buf,
            sealed: &self.sealed,
            nonce: &mut self.nonce,
            counter: &mut self.counter,
            aad: &self.aad,
        };
        self.op.process_batch(&mut batch, calls)
    }

    /// After timing: the last open must have produced the original message.
    pub fn check_output(&self) -> anyhow::Result<()> {
        if self.direction == Direction::Dec && self.buf[..self.size] != self.plaintext[..] {
            return Err(anyhow!(
                "after timing, the decrypted output differs from the original message"
            ));
        }
        Ok(())
    }
}
