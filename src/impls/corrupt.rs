//! A deliberately wrong implementation for the test suite: it wraps a real one and
//! flips one bit of every output. Reached only through the hidden `--test-corrupt`
//! flag, so that tests can prove the known-answer check refuses it before timing.

use super::{Implementation, Io, Operation, Support};
use crate::algorithms::{Algorithm, Direction, Kind};

pub struct Corrupt(pub Box<dyn Implementation>);

struct FlipBit {
    inner: Box<dyn Operation>,
    digest: bool,
}

impl Operation for FlipBit {
    fn process(&mut self, nonce: &[u8], aad: &[u8], mut io: Io<'_>) -> Result<usize, String> {
        let raw = io.raw();
        let (in_len, out) = (raw.in_len, raw.out);
        // An in-place digest sits after the message; everything else starts at 0.
        let offset = match (&io, self.digest) {
            (Io::InPlace { .. }, true) => in_len,
            _ => 0,
        };
        let n = self.inner.process(nonce, aad, io)?;
        if n > 0 {
            // SAFETY: the wrapped operation just wrote `n` bytes at `out + offset`.
            unsafe { *out.add(offset) ^= 0x01 };
        }
        Ok(n)
    }
}

impl Implementation for Corrupt {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn version(&self) -> String {
        self.0.version()
    }
    fn variant(&self) -> Option<String> {
        Some("test-corrupt".into())
    }
    fn support(&self, alg: Algorithm) -> Support {
        self.0.support(alg)
    }
    fn prepare(
        &self,
        alg: Algorithm,
        dir: Direction,
        key: &[u8],
    ) -> Result<Box<dyn Operation>, String> {
        Ok(Box::new(FlipBit {
            inner: self.0.prepare(alg, dir, key)?,
            digest: matches!(alg.kind(), Kind::Hash | Kind::Mac),
        }))
    }
}
