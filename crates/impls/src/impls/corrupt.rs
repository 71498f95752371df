//! A deliberately wrong implementation for the test suite: it wraps a real one and
//! flips one bit of every output (signatures and shared secrets included). Reached only
//! through the hidden `--test-corrupt` flag, so that tests can prove the known-answer
//! check refuses it before timing.

use super::implementation::{
    Implementation, Operation, Prepared, PublicKeyOps, Support, Symmetric,
};
use super::io::Io;
use super::pkey::{KeyPair, PublicKey};
use crate::algorithms::{Algorithm, Direction, Kind};

pub struct Corrupt(pub Box<dyn Implementation>);

struct FlipBit {
    inner: Box<dyn Operation>,
    digest: bool,
}

impl Operation for FlipBit {
    fn process(&mut self, nonce: &[u8], aad: &[u8], mut io: Io<'_>) -> anyhow::Result<usize> {
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
    fn public_key_ops(&self) -> Option<&dyn PublicKeyOps> {
        Some(self)
    }
}

impl Symmetric for Corrupt {
    fn prepare(&self, alg: Algorithm, dir: Direction, key: &[u8]) -> Prepared {
        Ok(Box::new(FlipBit {
            inner: self.0.prepare(alg, dir, key)?,
            digest: matches!(alg.kind(), Kind::Hash | Kind::Mac),
        }))
    }
}

impl PublicKeyOps for Corrupt {
    fn key_pair(&self, alg: Algorithm, private: Option<&[u8]>) -> anyhow::Result<Box<dyn KeyPair>> {
        Ok(Box::new(FlipKeyPair(self.0.key_pair(alg, private)?)))
    }

    fn public_key(&self, alg: Algorithm, public: &[u8]) -> anyhow::Result<Box<dyn PublicKey>> {
        Ok(Box::new(AcceptAll(self.0.public_key(alg, public)?)))
    }
}

fn flip(mut b: Vec<u8>) -> Vec<u8> {
    if let Some(x) = b.first_mut() {
        *x ^= 0x01;
    }
    b
}

struct FlipKeyPair(Box<dyn KeyPair>);

impl KeyPair for FlipKeyPair {
    fn public_key(&self) -> Vec<u8> {
        self.0.public_key()
    }
    fn sign(&mut self, msg: &[u8]) -> anyhow::Result<Vec<u8>> {
        self.0.sign(msg).map(flip)
    }
    fn derive(&mut self, peer: &[u8]) -> anyhow::Result<Vec<u8>> {
        self.0.derive(peer).map(flip)
    }
    fn decaps(&mut self, ciphertext: &[u8]) -> anyhow::Result<Vec<u8>> {
        self.0.decaps(ciphertext).map(flip)
    }
    fn keygen(&mut self) -> anyhow::Result<()> {
        self.0.keygen()
    }
}

/// Accepts every signature, forged or not.
struct AcceptAll(Box<dyn PublicKey>);

impl PublicKey for AcceptAll {
    fn verify(&mut self, _msg: &[u8], _signature: &[u8]) -> anyhow::Result<()> {
        Ok(())
    }
    fn encaps(&mut self) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
        self.0.encaps().map(|(ct, ss)| (ct, flip(ss)))
    }
}
