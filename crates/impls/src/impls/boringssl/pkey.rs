//! BoringSSL's public-key operations through boring-sys: RSA and ECDSA through
//! EVP_PKEY, Ed25519, X25519 and ML-KEM-768 through their own APIs (curve25519.h,
//! mlkem.h, which BoringSSL's TLS stack and `bssl speed` call), ECDH through
//! ECDH_compute_key.
//!
//! Per call, as the openssl path does: RSA and ECDSA hash the 64-byte message (SHA-256;
//! SHA-384 for P-384) and sign or verify the digest with EVP_PKEY_sign/EVP_PKEY_verify on
//! a context set up once. Ed25519 is one ED25519_sign or ED25519_verify. Derive takes a
//! fresh peer's public key: X25519 is one X25519(); ecdh-p256 parses the peer's point
//! (EC_POINT_oct2point, which checks that it is on the curve), then ECDH_compute_key.

use crate::algorithms::{Algorithm, Kind};
use crate::impls::pkey::{self, is_pss, rsa_bits, KeyPair, PublicKey, NO_IMPORT};
use anyhow::anyhow;
use boring_sys as bssl;
use std::ffi::{c_char, c_long, CStr};
use std::ptr;

pub const SIGN_NOTE: &str = "RSA and ECDSA: each call hashes the 64-byte message (SHA-256; SHA-384 for P-384) and signs or verifies the digest with EVP_PKEY_sign/EVP_PKEY_verify on a context set up once; Ed25519: one ED25519_sign or ED25519_verify per call";
pub const DERIVE_NOTE: &str = "each call takes a fresh peer's public key: X25519 is one X25519() (as BoringSSL's TLS key share does); ecdh-p256 parses the peer's point with EC_POINT_oct2point (which checks it is on the curve), then ECDH_compute_key";
pub const KEM_NOTE: &str =
    "MLKEM768_generate_key, MLKEM768_encap and MLKEM768_decap on keys parsed once";

const LIB: &str = "boringssl";
const MLKEM768_PUBLIC: usize = bssl::MLKEM768_PUBLIC_KEY_BYTES as usize;
const MLKEM768_CIPHERTEXT: usize = bssl::MLKEM768_CIPHERTEXT_BYTES as usize;

/// The public-key algorithms this file reaches.
pub fn offers(alg: Algorithm) -> bool {
    rsa_bits(alg).is_some()
        || matches!(
            alg,
            Algorithm::EcdsaP256
                | Algorithm::EcdsaP384
                | Algorithm::Ed25519
                | Algorithm::X25519
                | Algorithm::EcdhP256
                | Algorithm::MlKem768
        )
}

/// What the library says went wrong; clears this thread's error queue.
fn fail(what: &str) -> anyhow::Error {
    // SAFETY: this thread's error queue; the buffer is ours and its size is passed.
    unsafe {
        let code = bssl::ERR_get_error();
        let mut buf = [0 as c_char; 256];
        if code != 0 {
            bssl::ERR_error_string_n(code, buf.as_mut_ptr(), buf.len());
        }
        bssl::ERR_clear_error();
        let detail = CStr::from_ptr(buf.as_ptr()).to_string_lossy();
        if detail.is_empty() {
            anyhow!("boringssl: {what} failed")
        } else {
            anyhow!("boringssl: {what} failed ({detail})")
        }
    }
}

/// `$name` owns a `$t`: used by one thread at a time (BoringSSL refcounts shared
/// objects atomically), freed once on drop by `$free`, which accepts NULL.
macro_rules! owned {
    ($name:ident, $t:ty, $free:path) => {
        struct $name(*mut $t);

        // SAFETY: see above.
        unsafe impl Send for $name {}

        impl Drop for $name {
            fn drop(&mut self) {
                // SAFETY: owned, freed once (NULL is accepted).
                unsafe { $free(self.0) }
            }
        }
    };
}
owned!(Pkey, bssl::EVP_PKEY, bssl::EVP_PKEY_free);
owned!(EcKey, bssl::EC_KEY, bssl::EC_KEY_free);
owned!(PkeyCtx, bssl::EVP_PKEY_CTX, bssl::EVP_PKEY_CTX_free);

impl Pkey {
    fn new(p: *mut bssl::EVP_PKEY, what: &str) -> anyhow::Result<Pkey> {
        if p.is_null() {
            return Err(fail(what));
        }
        Ok(Pkey(p))
    }

    /// PKCS#8 (or any DER private key BoringSSL recognises).
    fn private_der(der: &[u8]) -> anyhow::Result<Pkey> {
        let mut p = der.as_ptr();
        // SAFETY: p and the length describe `der`.
        Pkey::new(
            unsafe { bssl::d2i_AutoPrivateKey(ptr::null_mut(), &mut p, der.len() as c_long) },
            "d2i_AutoPrivateKey",
        )
    }

    /// A DER private key, checked to be of the algorithm's type (RSA or EC).
    fn private_der_of(alg: Algorithm, der: &[u8]) -> anyhow::Result<Pkey> {
        let key = Pkey::private_der(der)?;
        let want = if rsa_bits(alg).is_some() {
            bssl::NID_rsaEncryption
        } else {
            bssl::NID_X9_62_id_ecPublicKey
        };
        // SAFETY: our key.
        if unsafe { bssl::EVP_PKEY_id(key.0) } != want {
            return Err(anyhow!("boringssl: that private key is not for {alg}"));
        }
        Ok(key)
    }

    /// An EVP_PKEY that owns `ec`.
    fn from_ec(ec: EcKey) -> anyhow::Result<Pkey> {
        // SAFETY: a fresh EVP_PKEY; on success assign takes over `ec`, so it is not freed.
        unsafe {
            let k = Pkey::new(bssl::EVP_PKEY_new(), "EVP_PKEY_new")?;
            if bssl::EVP_PKEY_assign_EC_KEY(k.0, ec.0) != 1 {
                return Err(fail("EVP_PKEY_assign_EC_KEY"));
            }
            std::mem::forget(ec);
            Ok(k)
        }
    }

    /// The public key in the interchange encoding: RSAPublicKey DER for an RSA
    /// algorithm, else the SEC1 point. (Asking for the wrong type would leave an error
    /// in the queue.)
    fn encoded_public(&self, alg: Algorithm) -> Vec<u8> {
        // SAFETY: get0 borrows from our key; RSA_public_key_to_bytes allocates a buffer
        // we copy and free.
        unsafe {
            if rsa_bits(alg).is_none() {
                return ec_public(bssl::EVP_PKEY_get0_EC_KEY(self.0));
            }
            let rsa = bssl::EVP_PKEY_get0_RSA(self.0);
            let (mut out, mut len) = (ptr::null_mut(), 0usize);
            if rsa.is_null() || bssl::RSA_public_key_to_bytes(&mut out, &mut len, rsa) != 1 {
                let _ = fail("RSA_public_key_to_bytes");
                return Vec::new();
            }
            let v = std::slice::from_raw_parts(out, len).to_vec();
            bssl::OPENSSL_free(out.cast());
            v
        }
    }
}

impl EcKey {
    /// An empty key on the algorithm's curve (P-384 for ecdsa-p384, else P-256).
    fn on_curve(alg: Algorithm) -> anyhow::Result<EcKey> {
        let nid = if alg == Algorithm::EcdsaP384 {
            bssl::NID_secp384r1
        } else {
            bssl::NID_X9_62_prime256v1
        };
        // SAFETY: returns a fresh key or NULL.
        let k = unsafe { bssl::EC_KEY_new_by_curve_name(nid) };
        if k.is_null() {
            return Err(fail("EC_KEY_new_by_curve_name"));
        }
        Ok(EcKey(k))
    }

    fn generate(alg: Algorithm) -> anyhow::Result<EcKey> {
        let k = EcKey::on_curve(alg)?;
        // SAFETY: our key, with its group set.
        if unsafe { bssl::EC_KEY_generate_key(k.0) } != 1 {
            return Err(fail("EC_KEY_generate_key"));
        }
        Ok(k)
    }

    /// A key from a big-endian scalar, with its public point computed.
    fn from_scalar(alg: Algorithm, scalar: &[u8]) -> anyhow::Result<EcKey> {
        let k = EcKey::on_curve(alg)?;
        // SAFETY: our key; the point is fresh, freed below; the private key is set first.
        unsafe {
            if bssl::EC_KEY_oct2priv(k.0, scalar.as_ptr(), scalar.len()) != 1 {
                return Err(fail("EC_KEY_oct2priv"));
            }
            let group = bssl::EC_KEY_get0_group(k.0);
            let point = bssl::EC_POINT_new(group);
            let ok = !point.is_null()
                && bssl::EC_POINT_mul(
                    group,
                    point,
                    bssl::EC_KEY_get0_private_key(k.0),
                    ptr::null(),
                    ptr::null(),
                    ptr::null_mut(),
                ) == 1
                && bssl::EC_KEY_set_public_key(k.0, point) == 1;
            bssl::EC_POINT_free(point);
            if !ok {
                return Err(fail("computing the public point"));
            }
        }
        Ok(k)
    }

    /// A public key from a SEC1 point (checked to be on the curve).
    fn from_point(alg: Algorithm, point: &[u8]) -> anyhow::Result<EcKey> {
        let k = EcKey::on_curve(alg)?;
        let mut key = k.0;
        let mut p = point.as_ptr();
        // SAFETY: key has its group; p and the length describe `point`. o2i fills `key`
        // in place and returns it (or NULL).
        if unsafe { bssl::o2i_ECPublicKey(&mut key, &mut p, point.len() as c_long) }.is_null() {
            return Err(fail("parsing the public point"));
        }
        Ok(k)
    }
}

/// SEC1 uncompressed encoding of an EC_KEY's public point.
fn ec_public(key: *const bssl::EC_KEY) -> Vec<u8> {
    // SAFETY: the first call asks for the length, the second fills a buffer of it.
    unsafe {
        let n = bssl::i2o_ECPublicKey(key, ptr::null_mut());
        if n <= 0 {
            let _ = fail("i2o_ECPublicKey");
            return Vec::new();
        }
        let mut out = vec![0u8; n as usize];
        let mut p = out.as_mut_ptr();
        bssl::i2o_ECPublicKey(key, &mut p);
        out
    }
}

/// What signs or verifies per call.
enum Sig {
    /// EVP_PKEY_sign / EVP_PKEY_verify over a digest on a context set up once.
    Digest {
        ctx: PkeyCtx,
        p384: bool,
        max: usize,
        // After ctx, so dropped after it (the context also holds a reference).
        _key: Pkey,
    },
    /// The 64-byte expanded private key (none for a verifier) and the public key.
    Ed25519 {
        private: Option<[u8; 64]>,
        public: [u8; 32],
    },
}

impl Sig {
    /// A context on `key` set up once to sign (`sign`) or verify.
    fn digest(key: Pkey, alg: Algorithm, sign: bool) -> anyhow::Result<Sig> {
        // SAFETY: a fresh context on our key, owned by PkeyCtx.
        unsafe {
            let ctx = PkeyCtx(bssl::EVP_PKEY_CTX_new(key.0, ptr::null_mut()));
            if ctx.0.is_null() {
                return Err(fail("EVP_PKEY_CTX_new"));
            }
            let init = if sign {
                bssl::EVP_PKEY_sign_init(ctx.0)
            } else {
                bssl::EVP_PKEY_verify_init(ctx.0)
            };
            let p384 = alg == Algorithm::EcdsaP384;
            let md = if p384 {
                bssl::EVP_sha384()
            } else {
                bssl::EVP_sha256()
            };
            if init != 1 || bssl::EVP_PKEY_CTX_set_signature_md(ctx.0, md) != 1 {
                return Err(fail("EVP_PKEY_sign_init/verify_init"));
            }
            if rsa_bits(alg).is_some() {
                let padding = if is_pss(alg) {
                    bssl::RSA_PKCS1_PSS_PADDING
                } else {
                    bssl::RSA_PKCS1_PADDING
                };
                if bssl::EVP_PKEY_CTX_set_rsa_padding(ctx.0, padding) != 1
                    || (is_pss(alg) && bssl::EVP_PKEY_CTX_set_rsa_pss_saltlen(ctx.0, 32) != 1)
                {
                    return Err(fail("setting the RSA padding"));
                }
            }
            let max = bssl::EVP_PKEY_size(key.0).max(0) as usize;
            Ok(Sig::Digest {
                ctx,
                p384,
                max,
                _key: key,
            })
        }
    }

    fn sign(&self, msg: &[u8]) -> anyhow::Result<Vec<u8>> {
        match self {
            Sig::Digest { ctx, p384, max, .. } => {
                let (d, n) = hash(*p384, msg);
                let mut sig = vec![0u8; *max];
                let mut len = sig.len();
                // SAFETY: sig has EVP_PKEY_size bytes; d holds n bytes.
                if unsafe { bssl::EVP_PKEY_sign(ctx.0, sig.as_mut_ptr(), &mut len, d.as_ptr(), n) }
                    != 1
                {
                    return Err(fail("EVP_PKEY_sign"));
                }
                sig.truncate(len);
                Ok(sig)
            }
            Sig::Ed25519 {
                private: Some(private),
                ..
            } => {
                let mut sig = vec![0u8; 64];
                // SAFETY: 64 bytes out, the 64-byte private key, msg valid for its length.
                if unsafe {
                    bssl::ED25519_sign(sig.as_mut_ptr(), msg.as_ptr(), msg.len(), private.as_ptr())
                } != 1
                {
                    return Err(fail("ED25519_sign"));
                }
                Ok(sig)
            }
            Sig::Ed25519 { private: None, .. } => Err(anyhow!("a public key does not sign")),
        }
    }

    fn verify(&self, msg: &[u8], sig: &[u8]) -> anyhow::Result<()> {
        // SAFETY (both arms): every pointer and length describes a live slice; an
        // Ed25519 signature is checked to be 64 bytes first.
        let ok = match self {
            Sig::Digest { ctx, p384, .. } => {
                let (d, n) = hash(*p384, msg);
                unsafe { bssl::EVP_PKEY_verify(ctx.0, sig.as_ptr(), sig.len(), d.as_ptr(), n) }
            }
            Sig::Ed25519 { public, .. } => {
                if sig.len() != 64 {
                    return Err(anyhow!(
                        "boringssl: an Ed25519 signature has 64 bytes, not {}",
                        sig.len()
                    ));
                }
                unsafe {
                    bssl::ED25519_verify(msg.as_ptr(), msg.len(), sig.as_ptr(), public.as_ptr())
                }
            }
        };
        if ok != 1 {
            // Drain the queue so a failed verify leaves nothing for the next call.
            let _ = fail("verify");
            return Err(anyhow!("boringssl: the signature does not verify"));
        }
        Ok(())
    }
}

/// SHA-256 (SHA-384 for P-384) of msg: the digest buffer and its length.
fn hash(p384: bool, msg: &[u8]) -> ([u8; 48], usize) {
    let mut d = [0u8; 48];
    // SAFETY: d has room for either digest; msg is valid for its length.
    unsafe {
        if p384 {
            bssl::SHA384(msg.as_ptr(), msg.len(), d.as_mut_ptr());
            (d, 48)
        } else {
            bssl::SHA256(msg.as_ptr(), msg.len(), d.as_mut_ptr());
            (d, 32)
        }
    }
}

struct SignKeyPair {
    sig: Sig,
    public: Vec<u8>,
}

impl KeyPair for SignKeyPair {
    fn public_key(&self) -> Vec<u8> {
        self.public.clone()
    }
    fn sign(&mut self, msg: &[u8]) -> anyhow::Result<Vec<u8>> {
        self.sig.sign(msg)
    }
}

struct Verifier(Sig);

impl PublicKey for Verifier {
    fn verify(&mut self, msg: &[u8], sig: &[u8]) -> anyhow::Result<()> {
        self.0.verify(msg, sig)
    }
}

enum Agree {
    X25519 { private: [u8; 32], public: [u8; 32] },
    EcdhP256(EcKey),
}

impl KeyPair for Agree {
    fn public_key(&self) -> Vec<u8> {
        match self {
            Agree::X25519 { public, .. } => public.to_vec(),
            Agree::EcdhP256(k) => ec_public(k.0),
        }
    }
    fn derive(&mut self, peer: &[u8]) -> anyhow::Result<Vec<u8>> {
        let mut out = vec![0u8; 32];
        match self {
            Agree::X25519 { private, .. } => {
                if peer.len() != 32 {
                    return Err(anyhow!(
                        "boringssl: an X25519 public key has 32 bytes, not {}",
                        peer.len()
                    ));
                }
                // SAFETY: three 32-byte buffers.
                if unsafe { bssl::X25519(out.as_mut_ptr(), private.as_ptr(), peer.as_ptr()) } != 1 {
                    return Err(anyhow!(
                        "boringssl: X25519 gave the all-zero secret (a low-order peer key)"
                    ));
                }
            }
            Agree::EcdhP256(key) => {
                // SAFETY: our key and its group; the point is fresh and freed below; out
                // has 32 bytes.
                let n = unsafe {
                    let group = bssl::EC_KEY_get0_group(key.0);
                    let point = bssl::EC_POINT_new(group);
                    let n = if !point.is_null()
                        && bssl::EC_POINT_oct2point(
                            group,
                            point,
                            peer.as_ptr(),
                            peer.len(),
                            ptr::null_mut(),
                        ) == 1
                    {
                        bssl::ECDH_compute_key(
                            out.as_mut_ptr().cast(),
                            out.len(),
                            point,
                            key.0,
                            None,
                        )
                    } else {
                        -1
                    };
                    bssl::EC_POINT_free(point);
                    n
                };
                if n != 32 {
                    return Err(fail("ECDH with the peer's point"));
                }
            }
        }
        Ok(out)
    }
}

/// A zeroed value of a C struct made only of bytes (the ML-KEM key structs, CBB).
fn zeroed<T>() -> Box<T> {
    // SAFETY: only used for plain C structs, for which all-zero bytes are valid.
    Box::new(unsafe { std::mem::zeroed() })
}

struct Kem {
    private: Box<bssl::MLKEM768_private_key>,
    public: Vec<u8>,
    /// Where keygen writes, so that no timed call allocates.
    scratch: Box<bssl::MLKEM768_private_key>,
    scratch_public: Vec<u8>,
}

impl Kem {
    fn generate() -> Kem {
        let mut kem = Kem {
            private: zeroed(),
            public: vec![0u8; MLKEM768_PUBLIC],
            scratch: zeroed(),
            scratch_public: vec![0u8; MLKEM768_PUBLIC],
        };
        // SAFETY: a 1184-byte public key buffer, no seed wanted, our private key struct.
        unsafe {
            bssl::MLKEM768_generate_key(kem.public.as_mut_ptr(), ptr::null_mut(), &mut *kem.private)
        };
        kem
    }
}

impl KeyPair for Kem {
    fn public_key(&self) -> Vec<u8> {
        self.public.clone()
    }
    fn decaps(&mut self, ciphertext: &[u8]) -> anyhow::Result<Vec<u8>> {
        let mut ss = vec![0u8; bssl::MLKEM_SHARED_SECRET_BYTES as usize];
        // SAFETY: a 32-byte secret; the ciphertext's length is passed and checked.
        if unsafe {
            bssl::MLKEM768_decap(
                ss.as_mut_ptr(),
                ciphertext.as_ptr(),
                ciphertext.len(),
                &*self.private,
            )
        } != 1
        {
            return Err(anyhow!(
                "boringssl: an ML-KEM-768 ciphertext has {MLKEM768_CIPHERTEXT} bytes, not {}",
                ciphertext.len()
            ));
        }
        Ok(ss)
    }
    fn keygen(&mut self) -> anyhow::Result<()> {
        // SAFETY: as in Kem::generate, into the scratch buffers.
        unsafe {
            bssl::MLKEM768_generate_key(
                self.scratch_public.as_mut_ptr(),
                ptr::null_mut(),
                &mut *self.scratch,
            )
        };
        Ok(())
    }
}

struct Encapsulator(Box<bssl::MLKEM768_public_key>);

impl Encapsulator {
    fn parse(public: &[u8]) -> anyhow::Result<Encapsulator> {
        let mut key: Box<bssl::MLKEM768_public_key> = zeroed();
        let mut cbs = bssl::CBS {
            data: public.as_ptr(),
            len: public.len(),
        };
        // SAFETY: the CBS describes `public`; the key struct is ours.
        if unsafe { bssl::MLKEM768_parse_public_key(&mut *key, &mut cbs) } != 1 {
            return Err(fail(&format!(
                "parsing the {}-byte ML-KEM-768 public key",
                public.len()
            )));
        }
        Ok(Encapsulator(key))
    }
}

impl PublicKey for Encapsulator {
    fn encaps(&mut self) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
        let mut ct = vec![0u8; MLKEM768_CIPHERTEXT];
        let mut ss = vec![0u8; bssl::MLKEM_SHARED_SECRET_BYTES as usize];
        // SAFETY: a 1088-byte ciphertext and a 32-byte secret; the parsed key.
        unsafe { bssl::MLKEM768_encap(ct.as_mut_ptr(), ss.as_mut_ptr(), &*self.0) };
        Ok((ct, ss))
    }
}

fn raw32(private: Option<&[u8]>, alg: Algorithm) -> anyhow::Result<[u8; 32]> {
    let raw = match private {
        Some(p) => p.to_vec(),
        None => pkey::random_bytes(32)?,
    };
    raw.try_into()
        .map_err(|r: Vec<u8>| anyhow!("a {alg} private key has 32 bytes, not {}", r.len()))
}

pub fn key_pair(alg: Algorithm, private: Option<&[u8]>) -> anyhow::Result<Box<dyn KeyPair>> {
    bssl::init();
    match alg {
        Algorithm::Ed25519 => {
            let seed = raw32(private, alg)?;
            let (mut public, mut expanded) = ([0u8; 32], [0u8; 64]);
            // SAFETY: 32-, 64- and 32-byte buffers.
            unsafe {
                bssl::ED25519_keypair_from_seed(
                    public.as_mut_ptr(),
                    expanded.as_mut_ptr(),
                    seed.as_ptr(),
                )
            };
            Ok(Box::new(SignKeyPair {
                sig: Sig::Ed25519 {
                    private: Some(expanded),
                    public,
                },
                public: public.to_vec(),
            }))
        }
        Algorithm::X25519 => {
            let private = raw32(private, alg)?;
            let mut public = [0u8; 32];
            // SAFETY: two 32-byte buffers.
            unsafe { bssl::X25519_public_from_private(public.as_mut_ptr(), private.as_ptr()) };
            Ok(Box::new(Agree::X25519 { private, public }))
        }
        Algorithm::EcdhP256 => Ok(Box::new(Agree::EcdhP256(match private {
            Some(scalar) => EcKey::from_scalar(alg, scalar)?,
            None => EcKey::generate(alg)?,
        }))),
        Algorithm::MlKem768 => match private {
            Some(p) => Err(anyhow!(
                "boringssl {NO_IMPORT} a {}-byte ML-KEM-768 private key: its API takes only the 64-byte seed, not FIPS 203's expanded form",
                p.len()
            )),
            None => Ok(Box::new(Kem::generate())),
        },
        Algorithm::EcdsaP256 | Algorithm::EcdsaP384 => {
            let scalar_len = if alg == Algorithm::EcdsaP384 { 48 } else { 32 };
            let key = match private {
                Some(s) if s.len() == scalar_len => Pkey::from_ec(EcKey::from_scalar(alg, s)?)?,
                Some(der) => Pkey::private_der_of(alg, der)?,
                None => Pkey::from_ec(EcKey::generate(alg)?)?,
            };
            let public = key.encoded_public(alg);
            if public.len() != 1 + 2 * scalar_len {
                return Err(anyhow!("boringssl: the private key is not on {alg}'s curve"));
            }
            Ok(Box::new(SignKeyPair {
                sig: Sig::digest(key, alg, true)?,
                public,
            }))
        }
        a => {
            let (bits, der) = pkey::rsa_key(LIB, a, private)?;
            let key = Pkey::private_der_of(a, &der)?;
            // SAFETY: our key.
            let got = unsafe { bssl::EVP_PKEY_bits(key.0) } as usize;
            if got != bits {
                return Err(anyhow!("the key has {got} bits, not {bits}"));
            }
            let public = key.encoded_public(a);
            Ok(Box::new(SignKeyPair {
                sig: Sig::digest(key, a, true)?,
                public,
            }))
        }
    }
}

pub fn public_key(alg: Algorithm, public: &[u8]) -> anyhow::Result<Box<dyn PublicKey>> {
    bssl::init();
    match alg {
        Algorithm::MlKem768 => Ok(Box::new(Encapsulator::parse(public)?)),
        Algorithm::Ed25519 => {
            let public: [u8; 32] = public.try_into().map_err(|_| {
                anyhow!(
                    "boringssl: an Ed25519 public key has 32 bytes, not {}",
                    public.len()
                )
            })?;
            Ok(Box::new(Verifier(Sig::Ed25519 {
                private: None,
                public,
            })))
        }
        Algorithm::EcdsaP256 | Algorithm::EcdsaP384 => {
            let key = Pkey::from_ec(EcKey::from_point(alg, public)?)?;
            Ok(Box::new(Verifier(Sig::digest(key, alg, false)?)))
        }
        a if rsa_bits(a).is_some() => {
            // SAFETY: the pointer and length describe `public`; on success the EVP_PKEY
            // takes over the RSA key, which is freed here otherwise.
            let key = unsafe {
                let rsa = bssl::RSA_public_key_from_bytes(public.as_ptr(), public.len());
                if rsa.is_null() {
                    return Err(fail("parsing the RSA public key"));
                }
                let key = Pkey::new(bssl::EVP_PKEY_new(), "EVP_PKEY_new");
                match key {
                    Ok(k) if bssl::EVP_PKEY_assign_RSA(k.0, rsa) == 1 => k,
                    _ => {
                        bssl::RSA_free(rsa);
                        return Err(fail("EVP_PKEY_assign_RSA"));
                    }
                }
            };
            Ok(Box::new(Verifier(Sig::digest(key, a, false)?)))
        }
        a if a.kind() == Kind::Agreement => {
            Err(anyhow!("{a} has no public-key operation of its own"))
        }
        a => Err(pkey::not_offered(LIB, a)),
    }
}

#[cfg(test)]
mod tests;
