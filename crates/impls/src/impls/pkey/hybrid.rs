//! The hybrid key exchange X25519MLKEM768 as TLS 1.3 uses it (draft-ietf-tls-ecdhe-mlkem),
//! built from one library's own ML-KEM-768 and X25519, so that each library is timed on
//! its own primitives:
//!
//! - keygen (the client's key share): an ML-KEM-768 key pair and an X25519 key pair, and
//!   the share `encapsulation key (1184 bytes) || X25519 public key (32)`;
//! - encaps (the server): encapsulate to the client's key, make its own X25519 key pair and
//!   derive with the client's; its share is `ciphertext (1088) || X25519 public key (32)`;
//! - decaps (the client): decapsulate, and derive with the server's X25519 key.
//!
//! Both sides' secret is `ML-KEM shared secret (32) || X25519 shared secret (32)`. The
//! private key (interchange) is `ML-KEM decapsulation key (2400) || X25519 scalar (32)`.

use super::{KeyPair, PublicKey};
use crate::algorithms::Algorithm;

const EK_LEN: usize = 1184;
const DK_LEN: usize = 2400;
const CT_LEN: usize = 1088;
const X25519_LEN: usize = 32;

/// A library's `key_pair`: private key in the interchange encoding, or None to generate.
pub type MakeKeyPair = fn(Algorithm, Option<&[u8]>) -> anyhow::Result<Box<dyn KeyPair>>;
/// A library's `public_key`: a peer's public key in the interchange encoding.
pub type MakePublicKey = fn(Algorithm, &[u8]) -> anyhow::Result<Box<dyn PublicKey>>;

/// One library's constructors for its ML-KEM-768 and X25519 keys.
#[derive(Clone, Copy)]
pub struct Parts {
    pub key_pair: MakeKeyPair,
    pub public_key: MakePublicKey,
}

/// `bytes` split after its ML-KEM part of `kem_len` bytes, or why not: an X25519MLKEM768
/// `what` is that part, then X25519's (as `layout` says).
fn split<'a>(
    bytes: &'a [u8],
    kem_len: usize,
    what: &str,
    layout: &str,
) -> anyhow::Result<(&'a [u8], &'a [u8])> {
    let (want, got) = (kem_len + X25519_LEN, bytes.len());
    if got != want {
        return Err(anyhow::Error::msg(format!(
            "an X25519MLKEM768 {what} has {want} bytes ({layout}), not {got}"
        )));
    }
    Ok(bytes.split_at(kem_len))
}

/// The client: its ML-KEM and X25519 key pairs.
struct Client {
    kem: Box<dyn KeyPair>,
    x25519: Box<dyn KeyPair>,
    parts: Parts,
}

impl KeyPair for Client {
    fn public_key(&self) -> Vec<u8> {
        let ek = self.kem.public_key();
        // aws-lc gives no encapsulation key for an imported decapsulation key.
        if ek.is_empty() {
            return ek;
        }
        [ek, self.x25519.public_key()].concat()
    }
    fn decaps(&mut self, server_share: &[u8]) -> anyhow::Result<Vec<u8>> {
        let layout = "ML-KEM ciphertext, then X25519 public key";
        let (ct, x25519) = split(server_share, CT_LEN, "server share", layout)?;
        let mut secret = self.kem.decaps(ct)?;
        secret.extend(self.x25519.derive(x25519)?);
        Ok(secret)
    }
    fn keygen(&mut self) -> anyhow::Result<()> {
        let kem = (self.parts.key_pair)(Algorithm::MlKem768, None)?;
        let x25519 = (self.parts.key_pair)(Algorithm::X25519, None)?;
        std::hint::black_box([kem.public_key(), x25519.public_key()].concat());
        Ok(())
    }
}

/// The server, holding the client's key share (parsed once, outside the timed loop).
struct Server {
    kem: Box<dyn PublicKey>,
    client_x25519: Vec<u8>,
    parts: Parts,
}

impl PublicKey for Server {
    fn encaps(&mut self) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
        let (ct, mut secret) = self.kem.encaps()?;
        let mut x25519 = (self.parts.key_pair)(Algorithm::X25519, None)?;
        secret.extend(x25519.derive(&self.client_x25519)?);
        Ok(([ct, x25519.public_key()].concat(), secret))
    }
}

/// A client key pair: imported from `dk || scalar`, or generated when None.
pub fn key_pair(parts: Parts, private: Option<&[u8]>) -> anyhow::Result<Box<dyn KeyPair>> {
    let layout = "ML-KEM decapsulation key, then X25519 scalar";
    let (dk, scalar) = private
        .map(|p| split(p, DK_LEN, "private key", layout))
        .transpose()?
        .unzip();
    Ok(Box::new(Client {
        kem: (parts.key_pair)(Algorithm::MlKem768, dk)?,
        x25519: (parts.key_pair)(Algorithm::X25519, scalar)?,
        parts,
    }))
}

/// The server's view of a client key share `ek || X25519 public key`.
pub fn public_key(parts: Parts, client_share: &[u8]) -> anyhow::Result<Box<dyn PublicKey>> {
    let layout = "ML-KEM encapsulation key, then X25519 public key";
    let (ek, x25519) = split(client_share, EK_LEN, "client share", layout)?;
    Ok(Box::new(Server {
        kem: (parts.public_key)(Algorithm::MlKem768, ek)?,
        client_x25519: x25519.to_vec(),
        parts,
    }))
}

#[cfg(all(test, feature = "aws-lc"))]
mod tests {
    use super::*;
    use crate::impls::aws_lc::AwsLc;
    use crate::impls::implementation::Implementation;
    use crate::impls::rustcrypto::RustCrypto;
    use ml_kem::{EncodedSizeUser, KemCore, MlKem768};

    /// TLS's layout, checked against each half on its own: the server's share is the
    /// ML-KEM ciphertext then its X25519 key, and the secret is the ML-KEM secret then
    /// the X25519 secret. Clients and servers of aws-lc and RustCrypto, in all pairings.
    #[test]
    fn secrets_follow_the_tls_layout_within_and_across_libraries() {
        let (aws, rc): (&dyn Implementation, &dyn Implementation) = (&AwsLc, &RustCrypto);
        for (client_lib, server_lib) in [(aws, rc), (rc, aws), (aws, aws), (rc, rc)] {
            let (dk, ek) = MlKem768::generate(&mut rand_core_06::OsRng);
            let scalar = super::super::random_bytes(X25519_LEN).unwrap();
            let private = [dk.as_bytes().to_vec(), scalar.clone()].concat();
            let mut x25519 = rc.key_pair(Algorithm::X25519, Some(&scalar)).unwrap();
            let share = [ek.as_bytes().to_vec(), x25519.public_key()].concat();

            let mut client = client_lib
                .key_pair(Algorithm::X25519MlKem768, Some(&private))
                .unwrap();
            let public = client.public_key();
            assert!(public.is_empty() || public == share, "client share");
            let mut server = server_lib
                .public_key(Algorithm::X25519MlKem768, &share)
                .unwrap();
            let (reply, secret) = server.encaps().unwrap();
            assert_eq!((reply.len(), secret.len()), (CT_LEN + X25519_LEN, 64));

            let mut kem = rc
                .key_pair(Algorithm::MlKem768, Some(&private[..DK_LEN]))
                .unwrap();
            let kem_secret = kem.decaps(&reply[..CT_LEN]).unwrap();
            let x25519_secret = x25519.derive(&reply[CT_LEN..]).unwrap();
            assert_eq!(secret, [kem_secret, x25519_secret].concat());
            assert_eq!(
                client.decaps(&reply).unwrap(),
                secret,
                "{} client, {} server",
                client_lib.name(),
                server_lib.name()
            );
            assert!(client.decaps(&reply[..CT_LEN]).is_err(), "short share");
        }
    }
}
