//! The timed operation of a public-key point: one sign, verify, derive, keygen, encaps
//! or decaps per call, on inputs made before timing and cycled through.

use crate::algorithms::{Algorithm, Direction};
use crate::impls::pkey::{KeyPair, PublicKey};
use crate::impls::{Implementation, Io, Operation};
use crate::kat::pattern;
use anyhow::anyhow;

/// Inputs per pool: distinct messages, signatures, peer keys or ciphertexts, so that no
/// library can answer from a cache of the last call. Four are enough for that, and each
/// verify input costs a signature before timing: an RSA-4096 one takes about a second on
/// a MIPS router (16 took 4.3 s per library per point under qemu-mipsel).
const POOL: usize = 4;
/// Bytes of each message signed or verified.
pub const MESSAGE_LEN: usize = 64;

enum Work {
    Sign(Box<dyn KeyPair>, Vec<Vec<u8>>),
    /// (message, signature) pairs, each made by the same library's sign.
    Verify(Box<dyn PublicKey>, Vec<(Vec<u8>, Vec<u8>)>),
    /// Peers' public keys, each from a fresh key pair.
    Derive(Box<dyn KeyPair>, Vec<Vec<u8>>),
    Keygen(Box<dyn KeyPair>),
    Encaps(Box<dyn PublicKey>),
    /// (ciphertext, shared secret) pairs.
    Decaps(Box<dyn KeyPair>, Vec<(Vec<u8>, Vec<u8>)>),
}

pub struct PkeyOp {
    work: Work,
    next: usize,
}

/// Keys and input pools for one thread's point; the gate already checked the library.
pub fn operation(
    imp: &dyn Implementation,
    alg: Algorithm,
    direction: Direction,
    thread: usize,
) -> anyhow::Result<Box<dyn Operation>> {
    if !alg.directions().contains(&direction) {
        return Err(anyhow!("{alg} has no {direction} operation"));
    }
    let messages: Vec<Vec<u8>> = (0..POOL)
        .map(|i| pattern(MESSAGE_LEN, (thread * POOL + i) as u8))
        .collect();
    let mut kp = imp.key_pair(alg, None)?;
    let work = match direction {
        Direction::Sign => Work::Sign(kp, messages),
        Direction::Verify => {
            let mut pk = imp.public_key(alg, &kp.public_key())?;
            let mut signed = Vec::new();
            for m in messages {
                let sig = kp.sign(&m)?;
                pk.verify(&m, &sig)?;
                signed.push((m, sig));
            }
            Work::Verify(pk, signed)
        }
        Direction::Derive => {
            let peers = (0..POOL)
                .map(|_| imp.key_pair(alg, None).map(|p| p.public_key()))
                .collect::<Result<_, _>>()?;
            Work::Derive(kp, peers)
        }
        Direction::Keygen => Work::Keygen(kp),
        Direction::Encaps => Work::Encaps(imp.public_key(alg, &kp.public_key())?),
        Direction::Decaps => {
            let mut pk = imp.public_key(alg, &kp.public_key())?;
            let sealed = (0..POOL)
                .map(|_| pk.encaps())
                .collect::<Result<Vec<_>, _>>()?;
            for (ct, ss) in &sealed {
                if &kp.decaps(ct)? != ss {
                    return Err(anyhow!(
                        "decapsulation does not recover the encapsulated secret"
                    ));
                }
            }
            Work::Decaps(kp, sealed)
        }
        Direction::Enc | Direction::Dec => {
            return Err(anyhow!("{alg} is a public-key algorithm: no {direction}"))
        }
    };
    Ok(Box::new(PkeyOp { work, next: 0 }))
}

impl Operation for PkeyOp {
    /// One operation on the next pooled input; nonce, AAD and buffers are unused.
    fn process(&mut self, _nonce: &[u8], _aad: &[u8], _io: Io<'_>) -> anyhow::Result<usize> {
        let i = self.next;
        self.next = (i + 1) % POOL;
        match &mut self.work {
            Work::Sign(kp, msgs) => kp.sign(&msgs[i]).map(|s| s.len()),
            Work::Verify(pk, signed) => pk.verify(&signed[i].0, &signed[i].1).map(|()| 0),
            Work::Derive(kp, peers) => kp.derive(&peers[i]).map(|s| s.len()),
            Work::Keygen(kp) => kp.keygen().map(|()| 0),
            Work::Encaps(pk) => pk.encaps().map(|(ct, _)| ct.len()),
            Work::Decaps(kp, sealed) => {
                // A 32-byte comparison: decapsulation never fails outright (implicit
                // rejection), so a wrong secret is only seen here.
                let ss = kp.decaps(&sealed[i].0)?;
                if ss != sealed[i].1 {
                    return Err(anyhow!("decapsulation gave a wrong shared secret"));
                }
                Ok(ss.len())
            }
        }
    }
}
