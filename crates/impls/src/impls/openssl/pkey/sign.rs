//! Signing and verifying contexts set up once per key (EVP_DigestSign/Verify, or
//! EVP_PKEY_sign_message_init on 3.4 and later), and the digests they need.

use super::table::*;
use crate::algorithms::Algorithm;
use crate::impls::pkey::{is_pss, rsa_bits};
use std::ffi::{c_int, c_uint};
use std::sync::Arc;

const RSA_PKCS1_PADDING: c_int = 1;
const RSA_PKCS1_PSS_PADDING: c_int = 6;

/// What a signing or verifying context does per call.
pub(super) enum Signer {
    /// EVP_PKEY_sign / _verify over a digest (RSA, ECDSA).
    Digest { pctx: Ctx, md: P, max: usize },
    /// EVP_DigestSign / _Verify on a context initialised once (Ed25519, ML-DSA).
    OneShot { mctx: Ctx, max: usize },
    /// EVP_PKEY_sign / _verify of the whole message after EVP_PKEY_sign_message_init
    /// (OpenSSL 3.4 and later: Ed25519, ML-DSA).
    Message { pctx: Ctx, max: usize },
}

pub(super) fn md_of(f: &Fns, alg: Algorithm) -> P {
    if alg == Algorithm::EcdsaP384 {
        f.sha384.0
    } else {
        f.sha256.0
    }
}

/// A context set up once for sign (`sign` true) or verify with `key`.
pub(super) fn signer(
    f: &Arc<Fns>,
    key: &Key,
    alg: Algorithm,
    sign: bool,
) -> anyhow::Result<Signer> {
    // SAFETY: fresh contexts, owned by Ctx; key outlives them (held beside them).
    unsafe {
        let one_shot = matches!(alg, Algorithm::Ed25519 | Algorithm::MlDsa65);
        // OpenSSL 3.4 and later refuse a second EVP_DigestSign on one context ("final
        // error"): their message-signing init signs message after message instead.
        if let (true, Some((sign_init, verify_init))) = (one_shot, f.message_init) {
            let pctx = Ctx((f.ctx_new)(key.0, std::ptr::null_mut()), f.ctx_free);
            let init = if sign { sign_init } else { verify_init };
            if !pctx.0.is_null() && init(pctx.0, std::ptr::null_mut(), std::ptr::null()) == 1 {
                let max = ((f.pkey_size)(key.0).max(0) as usize).max(64);
                return Ok(Signer::Message { pctx, max });
            }
            let _ = fail(f, "EVP_PKEY_sign_message_init");
        }
        if one_shot {
            let mctx = Ctx((f.md_ctx_new)(), f.md_ctx_free);
            let init = if sign {
                f.digest_sign_init
            } else {
                f.digest_verify_init
            };
            let (no_pctx, no_md, no_engine) = (
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
            if mctx.0.is_null() || init(mctx.0, no_pctx, no_md, no_engine, key.0) != 1 {
                return Err(anyhow::Error::msg(fail(f, "EVP_DigestSignInit/VerifyInit")));
            }
            let max = ((f.pkey_size)(key.0).max(0) as usize).max(64);
            return Ok(Signer::OneShot { mctx, max });
        }
        let pctx = Ctx((f.ctx_new)(key.0, std::ptr::null_mut()), f.ctx_free);
        let init = if sign { f.sign_init } else { f.verify_init };
        if pctx.0.is_null() || init(pctx.0) != 1 {
            return Err(anyhow::Error::msg(fail(
                f,
                "EVP_PKEY_sign_init/verify_init",
            )));
        }
        let md = md_of(f, alg);
        if (f.set_signature_md)(pctx.0, md) != 1 {
            return Err(anyhow::Error::msg(fail(f, "EVP_PKEY_CTX_set_signature_md")));
        }
        if rsa_bits(alg).is_some() {
            let pad = if is_pss(alg) {
                RSA_PKCS1_PSS_PADDING
            } else {
                RSA_PKCS1_PADDING
            };
            if (f.set_rsa_padding)(pctx.0, pad) != 1
                || (is_pss(alg) && (f.set_rsa_pss_saltlen)(pctx.0, 32) != 1)
            {
                return Err(anyhow::Error::msg(fail(f, "setting the RSA padding")));
            }
        }
        let max = (f.pkey_size)(key.0).max(0) as usize;
        Ok(Signer::Digest { pctx, md, max })
    }
}

pub(super) fn digest(f: &Fns, md: P, msg: &[u8]) -> anyhow::Result<([u8; 64], usize)> {
    let mut out = [0u8; 64];
    let mut n: c_uint = 0;
    // SAFETY: out holds the largest digest (64 bytes); msg valid for its length.
    if unsafe {
        (f.digest)(
            msg.as_ptr(),
            msg.len(),
            out.as_mut_ptr(),
            &mut n,
            md,
            std::ptr::null_mut(),
        )
    } != 1
    {
        return Err(anyhow::Error::msg(fail(f, "EVP_Digest")));
    }
    Ok((out, n as usize))
}

/// EVP_PKEY_sign of `tbs` (a digest, or the message after sign_message_init) into a
/// signature of at most `max` (EVP_PKEY_get_size) bytes.
pub(super) fn pkey_sign(f: &Fns, pctx: &Ctx, max: usize, tbs: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut sig = vec![0u8; max];
    let mut len = sig.len();
    // SAFETY: sig is writable for `max` bytes; tbs is a live slice.
    if unsafe { (f.sign)(pctx.0, sig.as_mut_ptr(), &mut len, tbs.as_ptr(), tbs.len()) } != 1 {
        return Err(anyhow::Error::msg(fail(f, "EVP_PKEY_sign")));
    }
    sig.truncate(len);
    Ok(sig)
}
