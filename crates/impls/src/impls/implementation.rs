//! What every library implements: [`Implementation`] (its name, version, what it
//! supports, and how a request reaches it: [`Access`]), [`Symmetric`], which prepares an
//! [`Operation`] (one key for one algorithm and direction, timed a [`Batch`] at a time),
//! and the optional capabilities, [`PublicKeyOps`] and [`KernelDriver`].

use super::details;
use super::io::Io;
use super::pkey;
use crate::algorithms::{Algorithm, Direction};
use serde::Serialize;

/// How a request reaches the code that does the work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// A library called in this process.
    InProcess,
    /// System calls into the kernel's crypto drivers (AF_ALG, /dev/crypto); early files
    /// called it `syscall`.
    #[serde(alias = "syscall")]
    KernelDriver,
    /// libcrypto, through an ENGINE that hands the work to the kernel.
    Engine,
    /// A program timed end to end, start-up and file I/O included (`openssl enc`).
    Process,
}

impl Access {
    pub fn name(self) -> &'static str {
        match self {
            Access::InProcess => "in_process",
            Access::KernelDriver => "kernel_driver",
            Access::Engine => "engine",
            Access::Process => "process",
        }
    }
}

/// What every message of a timed batch uses: one worker's buffers, nonce and AAD.
pub struct Batch<'a> {
    pub direction: Direction,
    /// Bytes per message.
    pub size: usize,
    /// enc: the message, sealed in place (`size` + 64 bytes); dec: the plaintext's room.
    pub buf: &'a mut [u8],
    /// dec only: a genuinely sealed message (ciphertext || tag), opened by every call.
    pub sealed: &'a [u8],
    /// A seal's last 8 nonce bytes carry `counter`, bumped before every seal, so that no
    /// nonce is used twice.
    pub nonce: &'a mut [u8],
    pub counter: &'a mut u64,
    pub aad: &'a [u8],
}

impl Batch<'_> {
    /// The next seal's nonce: the counter, big-endian, in the nonce's last 8 bytes.
    #[inline(always)]
    pub fn next_nonce(&mut self) {
        let n = self.nonce.len();
        if n >= 8 {
            *self.counter = self.counter.wrapping_add(1);
            self.nonce[n - 8..].copy_from_slice(&self.counter.to_be_bytes());
        }
    }
}

/// One prepared key for one algorithm and direction.
pub trait Operation: Send {
    /// Processes one message with this nonce (AEAD) or IV (cipher) and AAD (AEAD only;
    /// empty otherwise). Returns the number of output bytes. An AEAD open whose tag does
    /// not verify returns an error.
    fn process(&mut self, nonce: &[u8], aad: &[u8], io: Io<'_>) -> anyhow::Result<usize>;

    /// The timed loop: `calls` messages back to back, each sealed with a fresh nonce in
    /// place or opening the sealed message. One dynamic call per batch; inside, this
    /// default is compiled for each implementation, so `process` is a direct call (and
    /// inlined where the compiler sees fit), with the direction decided once. An
    /// implementation may override it with a leaner loop that hoists its checks.
    #[inline]
    fn process_batch(&mut self, b: &mut Batch<'_>, calls: u64) -> anyhow::Result<()> {
        each_message(self, b, calls)
    }
}

/// A digest or MAC from a one-shot function of the message that returns the tag: the same
/// operation for every library with such an API (ring's and aws-lc's `digest`, ring's
/// `hmac::sign`).
pub struct OneShot<F>(pub F);

impl<F, D> Operation for OneShot<F>
where
    F: FnMut(&[u8]) -> D + Send,
    D: AsRef<[u8]>,
{
    fn process(&mut self, _nonce: &[u8], _aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        io.put_digest(|msg| (self.0)(msg))
    }
}

/// The default timed loop: `process` once per message.
#[inline(always)]
pub fn each_message<O: Operation + ?Sized>(
    op: &mut O,
    b: &mut Batch<'_>,
    calls: u64,
) -> anyhow::Result<()> {
    match b.direction {
        Direction::Enc => {
            for _ in 0..calls {
                b.next_nonce();
                let io = Io::InPlace {
                    buf: b.buf,
                    len: b.size,
                };
                op.process(b.nonce, b.aad, io)?;
            }
        }
        Direction::Dec => {
            for _ in 0..calls {
                let io = Io::Separate {
                    input: b.sealed,
                    output: b.buf,
                };
                op.process(b.nonce, b.aad, io)?;
            }
        }
        // Public-key operations take their input from their own pool.
        _ => {
            for _ in 0..calls {
                let io = Io::InPlace { buf: b.buf, len: 0 };
                op.process(&[], &[], io)?;
            }
        }
    }
    Ok(())
}

/// Whether an implementation offers an algorithm, and why not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Support {
    Yes,
    No(String),
}

impl Support {
    /// Ok for Yes; for No, the reason as the error (what `prepare` answers first).
    pub fn check(self) -> anyhow::Result<()> {
        match self {
            Support::Yes => Ok(()),
            Support::No(why) => Err(anyhow::Error::msg(why)),
        }
    }
}

/// One library or kernel path reached in one way: what it is and what it offers. What it
/// can do comes in separate capabilities: symmetric operations (every implementation),
/// public-key operations and kernel drivers (the ones that have them).
pub trait Implementation: Symmetric + Send + Sync {
    /// Short stable name used by `--impl` and in records: "openssl", "aws-lc", ...
    fn name(&self) -> &str;
    /// The library's own version string.
    fn version(&self) -> String;
    /// A switch on the implementation (ISA mask, kernel driver, mode), part of a point's identity.
    fn variant(&self) -> Option<String> {
        None
    }
    fn access(&self) -> Access {
        Access::InProcess
    }
    fn support(&self, alg: Algorithm) -> Support;
    /// Facts a reader of the numbers must know (e.g. a copy inside the timed call).
    fn notes(&self, _alg: Algorithm, _direction: Direction) -> Vec<String> {
        Vec::new()
    }
    /// Another instance of this implementation with a switch set by `--variant SPEC`
    /// (e.g. `isa=no-avx512`, `driver=cbc-aes-aesni`), if it understands SPEC: Err when
    /// it does but this machine cannot provide it.
    fn with_variant(&self, _spec: &str) -> Option<Result<Box<dyn Implementation>, String>> {
        None
    }
    /// Where the code came from: a path, build flags, features. Goes into the environment.
    fn details(&self) -> details::Details {
        details::Details::default()
    }
    /// Public-key operations, where the library has them.
    fn public_key_ops(&self) -> Option<&dyn PublicKeyOps> {
        None
    }
    /// The kernel drivers behind its algorithms, for paths through the kernel.
    fn kernel_driver(&self) -> Option<&dyn KernelDriver> {
        None
    }
}

/// What [`Symmetric::prepare`] gives: one keyed operation, or why there is none.
pub type Prepared = anyhow::Result<Box<dyn Operation>>;

/// Ciphers, AEADs, MACs and digests.
pub trait Symmetric {
    /// Key setup, outside any timed loop.
    fn prepare(&self, alg: Algorithm, direction: Direction, key: &[u8]) -> Prepared;
}

/// What [`PublicKeyOps::key_pair`] gives: a key pair, or why there is none.
pub type KeyPairResult = anyhow::Result<Box<dyn pkey::KeyPair>>;
/// What [`PublicKeyOps::public_key`] gives: a parsed public key, or why there is none.
pub type PublicKeyResult = anyhow::Result<Box<dyn pkey::PublicKey>>;

/// Signatures, key agreement and KEMs.
pub trait PublicKeyOps {
    /// A key pair, imported from `private` (the interchange encoding in pkey.rs) or
    /// generated when None. Outside any timed loop.
    fn key_pair(&self, alg: Algorithm, private: Option<&[u8]>) -> KeyPairResult;
    /// A peer's public key in the interchange encoding, for verify and encaps.
    fn public_key(&self, alg: Algorithm, public: &[u8]) -> PublicKeyResult;
}

/// The public-key operations of a library whose pkey module has them as two functions,
/// `key_pair` and `public_key`: its whole declaration is
/// `Some(&PkeyFns(pkey::key_pair, pkey::public_key))` in
/// [`Implementation::public_key_ops`].
pub struct PkeyFns(
    pub fn(Algorithm, Option<&[u8]>) -> KeyPairResult,
    pub fn(Algorithm, &[u8]) -> PublicKeyResult,
);

impl PublicKeyOps for PkeyFns {
    fn key_pair(&self, alg: Algorithm, private: Option<&[u8]>) -> KeyPairResult {
        (self.0)(alg, private)
    }
    fn public_key(&self, alg: Algorithm, public: &[u8]) -> PublicKeyResult {
        (self.1)(alg, public)
    }
}

/// A path through the kernel's crypto drivers.
pub trait KernelDriver {
    /// The kernel driver that serves `alg`.
    fn driver(&self, alg: Algorithm) -> Option<String>;
}

/// The capabilities as callers use them: an implementation without one says so.
impl dyn Implementation + '_ {
    pub fn key_pair(
        &self,
        alg: Algorithm,
        private: Option<&[u8]>,
    ) -> anyhow::Result<Box<dyn pkey::KeyPair>> {
        match self.public_key_ops() {
            Some(p) => p.key_pair(alg, private),
            None => Err(pkey::not_offered(self.name(), alg)),
        }
    }
    pub fn public_key(
        &self,
        alg: Algorithm,
        public: &[u8],
    ) -> anyhow::Result<Box<dyn pkey::PublicKey>> {
        match self.public_key_ops() {
            Some(p) => p.public_key(alg, public),
            None => Err(pkey::not_offered(self.name(), alg)),
        }
    }
    pub fn driver(&self, alg: Algorithm) -> Option<String> {
        self.kernel_driver().and_then(|k| k.driver(alg))
    }
}
