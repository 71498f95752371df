//! libsodium through libsodium-sys-stable: AES-256-GCM (only on CPUs with AES-NI and
//! CLMUL), ChaCha20-Poly1305 (IETF, 96-bit nonce), SHA-256, SHA-512 and HMAC-SHA-256.
//!
//! Every call uses the detached API with separate input and output pointers, which
//! libsodium also accepts equal, so neither direction copies. AES-256-GCM expands the
//! key once (`crypto_aead_aes256gcm_beforenm`) and seals/opens with the `_afternm`
//! functions; HMAC keeps the keyed state from `prepare` and copies it per message.

use super::implementation::{
    Implementation, Operation, PkeyFns, Prepared, PublicKeyOps, Support, Symmetric,
};
use super::io::{opened_len, Io};
use crate::algorithms::{Algorithm, Direction, Kind, TAG_LEN};
use anyhow::anyhow;
use libsodium_sys as sodium;
use std::ffi::CStr;

mod pkey;

pub struct Libsodium {
    /// `crypto_aead_aes256gcm_is_available()`: AES-NI and CLMUL on this CPU.
    aes_gcm: bool,
}

impl Libsodium {
    /// Initialises libsodium (`sodium_init`); safe to call more than once.
    pub fn init() -> anyhow::Result<Libsodium> {
        // SAFETY: sodium_init is thread-safe and idempotent.
        if unsafe { sodium::sodium_init() } < 0 {
            return Err(anyhow!("sodium_init() failed"));
        }
        // SAFETY: libsodium is initialised.
        let aes_gcm = unsafe { sodium::crypto_aead_aes256gcm_is_available() } != 0;
        Ok(Libsodium { aes_gcm })
    }
}

impl Implementation for Libsodium {
    fn name(&self) -> &str {
        "libsodium"
    }

    fn version(&self) -> String {
        // SAFETY: returns a pointer to a static NUL-terminated string.
        let v = unsafe { CStr::from_ptr(sodium::sodium_version_string()) };
        format!("libsodium {}", v.to_string_lossy())
    }

    fn support(&self, alg: Algorithm) -> Support {
        match alg {
            Algorithm::Aes256Gcm if !self.aes_gcm => {
                Support::No("libsodium's AES-256-GCM needs AES-NI and CLMUL".into())
            }
            Algorithm::Aes256Gcm
            | Algorithm::Chacha20Poly1305
            | Algorithm::Sha256
            | Algorithm::Sha512
            | Algorithm::HmacSha256 => Support::Yes,
            Algorithm::Aes128Gcm => Support::No("libsodium has no AES-128-GCM".into()),
            Algorithm::Aes128Cbc | Algorithm::Aes256Cbc => {
                Support::No("libsodium has no AES-CBC".into())
            }
            Algorithm::Aes128Ctr | Algorithm::Aes256Ctr => {
                Support::No("libsodium has no AES-CTR".into())
            }
            Algorithm::Sha1 => Support::No("libsodium has no SHA-1".into()),
            Algorithm::Aes192Gcm | Algorithm::Aes192Cbc | Algorithm::Aes192Ctr => {
                Support::No("libsodium has no AES-192".into())
            }
            a if pkey::offers(a) => Support::Yes,
            a => Support::No((super::pkey::not_offered("libsodium", a)).to_string()),
        }
    }

    fn details(&self) -> super::details::Details {
        super::details::Details {
            crate_version: Some("libsodium-sys-stable 1.24".into()),
            aes256gcm_available: Some(self.aes_gcm),
            ..Default::default()
        }
    }
    fn public_key_ops(&self) -> Option<&dyn PublicKeyOps> {
        Some(&PkeyFns(pkey::key_pair, pkey::public_key))
    }
}

impl Symmetric for Libsodium {
    fn prepare(&self, alg: Algorithm, direction: Direction, key: &[u8]) -> Prepared {
        self.support(alg).check()?;
        if alg.kind() == Kind::Aead {
            alg.check_key(key)?;
        }
        Ok(match alg {
            Algorithm::Aes256Gcm => {
                // SAFETY: an all-zero byte array is a valid (not yet keyed) state.
                let mut state: Box<[sodium::crypto_aead_aes256gcm_state]> =
                    Box::new([unsafe { std::mem::zeroed() }]);
                // SAFETY: state is a valid, aligned state; key is 32 bytes.
                if unsafe { sodium::crypto_aead_aes256gcm_beforenm(&mut state[0], key.as_ptr()) }
                    != 0
                {
                    return Err(anyhow!("crypto_aead_aes256gcm_beforenm failed"));
                }
                Box::new(AeadOp {
                    key: state,
                    seal: sodium::crypto_aead_aes256gcm_encrypt_detached_afternm,
                    open: sodium::crypto_aead_aes256gcm_decrypt_detached_afternm,
                    direction,
                })
            }
            Algorithm::Chacha20Poly1305 => Box::new(AeadOp {
                key: key.into(),
                seal: sodium::crypto_aead_chacha20poly1305_ietf_encrypt_detached,
                open: sodium::crypto_aead_chacha20poly1305_ietf_decrypt_detached,
                direction,
            }),
            Algorithm::Sha256 => Box::new(HashOp { sha512: false }),
            Algorithm::Sha512 => Box::new(HashOp { sha512: true }),
            Algorithm::HmacSha256 => {
                // SAFETY: an all-zero state is valid input to _init, which overwrites it.
                let mut state: sodium::crypto_auth_hmacsha256_state = unsafe { std::mem::zeroed() };
                // SAFETY: key is valid for key.len() bytes; any key length is accepted.
                if unsafe {
                    sodium::crypto_auth_hmacsha256_init(&mut state, key.as_ptr(), key.len())
                } != 0
                {
                    return Err(anyhow!("crypto_auth_hmacsha256_init failed"));
                }
                Box::new(HmacOp { state })
            }
            _ => return Err(anyhow!("libsodium does not offer {alg} through prepare")),
        })
    }
}

fn check_nonce(nonce: &[u8]) -> anyhow::Result<()> {
    if nonce.len() != 12 {
        return Err(anyhow!("the nonce must be 12 bytes, got {}", nonce.len()));
    }
    Ok(())
}

/// libsodium's detached seal and open: the same calls for both AEADs but for the key
/// they take, AES-256-GCM's expanded state or ChaCha20-Poly1305's 32 bytes.
type Seal<K> = unsafe extern "C" fn(
    *mut u8,
    *mut u8,
    *mut u64,
    *const u8,
    u64,
    *const u8,
    u64,
    *const u8,
    *const u8,
    *const K,
) -> libc::c_int;
type Open<K> = unsafe extern "C" fn(
    *mut u8,
    *mut u8,
    *const u8,
    u64,
    *const u8,
    *const u8,
    u64,
    *const u8,
    *const K,
) -> libc::c_int;

struct AeadOp<K> {
    /// One expanded AES-GCM state, or the ChaCha20-Poly1305 key bytes.
    key: Box<[K]>,
    seal: Seal<K>,
    open: Open<K>,
    direction: Direction,
}

impl<K: Send> Operation for AeadOp<K> {
    fn process(&mut self, nonce: &[u8], aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        check_nonce(nonce)?;
        match self.direction {
            Direction::Enc => {
                let r = io.raw_for(|n| n.checked_add(TAG_LEN))?;
                // SAFETY: `raw_for` checked that in_len bytes are readable at input and
                // in_len + 16 writable at out; input == out or they do not overlap.
                let rc = unsafe {
                    (self.seal)(
                        r.out,
                        r.out.add(r.in_len),
                        std::ptr::null_mut(),
                        r.input,
                        r.in_len as u64,
                        aad.as_ptr(),
                        aad.len() as u64,
                        std::ptr::null(),
                        nonce.as_ptr(),
                        self.key.as_ptr(),
                    )
                };
                if rc != 0 {
                    return Err(anyhow!("libsodium refused to seal the message"));
                }
                Ok(r.in_len + TAG_LEN)
            }
            _ => {
                let n = opened_len(io.input_len())?;
                let r = io.raw_for(|n| n.checked_sub(TAG_LEN))?;
                // SAFETY: as for enc; the tag is the 16 bytes after the ciphertext.
                let rc = unsafe {
                    (self.open)(
                        r.out,
                        std::ptr::null_mut(),
                        r.input,
                        n as u64,
                        r.input.add(n),
                        aad.as_ptr(),
                        aad.len() as u64,
                        nonce.as_ptr(),
                        self.key.as_ptr(),
                    )
                };
                if rc != 0 {
                    return Err(anyhow!("tag verification failed"));
                }
                Ok(n)
            }
        }
    }
}

struct HashOp {
    sha512: bool,
}

impl Operation for HashOp {
    fn process(&mut self, _nonce: &[u8], _aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        let len = if self.sha512 { 64 } else { 32 };
        let (msg, out) = io.digest_room(len)?;
        // SAFETY: out has room for the digest; msg is readable.
        let rc = unsafe {
            if self.sha512 {
                sodium::crypto_hash_sha512(out.as_mut_ptr(), msg.as_ptr(), msg.len() as u64)
            } else {
                sodium::crypto_hash_sha256(out.as_mut_ptr(), msg.as_ptr(), msg.len() as u64)
            }
        };
        if rc != 0 {
            return Err(anyhow!("libsodium hash failed"));
        }
        Ok(len)
    }
}

struct HmacOp {
    /// Keyed state: the inner and outer pads already absorbed.
    state: sodium::crypto_auth_hmacsha256_state,
}

impl Operation for HmacOp {
    fn process(&mut self, _nonce: &[u8], _aad: &[u8], io: Io<'_>) -> anyhow::Result<usize> {
        let (msg, out) = io.digest_room(32)?;
        let mut st = self.state;
        // SAFETY: st is a keyed state; msg is readable; out has 32 bytes.
        let rc = unsafe {
            [
                sodium::crypto_auth_hmacsha256_update(&mut st, msg.as_ptr(), msg.len() as u64),
                sodium::crypto_auth_hmacsha256_final(&mut st, out.as_mut_ptr()),
            ]
        };
        if rc != [0, 0] {
            return Err(anyhow!("libsodium HMAC failed"));
        }
        Ok(32)
    }
}
