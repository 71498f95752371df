use super::*;
use crate::impls::aws_lc::AwsLc;
use crate::impls::implementation::Implementation;

/// AWS-LC, whose keys these are compared with.
const AWS_LC: &dyn Implementation = &AwsLc;

/// The same private key gives the same public key in BoringSSL and aws-lc, and PKCS#1
/// v1.5 (deterministic) the same signature bytes.
#[test]
fn same_key_same_public_key_and_pkcs1_signature_as_aws_lc() {
    let msg = b"same key, same bytes";
    for alg in [
        Algorithm::Rsa2048Pkcs1,
        Algorithm::Rsa3072Pkcs1,
        Algorithm::Ed25519,
    ] {
        let private = match rsa_bits(alg) {
            Some(bits) => pkey::shared_rsa_pkcs8(bits).unwrap(),
            None => pkey::random_bytes(32).unwrap(),
        };
        let mut ours = key_pair(alg, Some(&private)).unwrap();
        let mut theirs = AWS_LC.key_pair(alg, Some(&private)).unwrap();
        assert_eq!(ours.public_key(), theirs.public_key(), "{alg}");
        assert_eq!(ours.sign(msg).unwrap(), theirs.sign(msg).unwrap(), "{alg}");
    }
    for alg in [Algorithm::X25519, Algorithm::EcdhP256] {
        let scalar = pkey::random_bytes(32).unwrap();
        let ours = key_pair(alg, Some(&scalar)).unwrap();
        let theirs = AWS_LC.key_pair(alg, Some(&scalar)).unwrap();
        assert_eq!(ours.public_key(), theirs.public_key(), "{alg}");
    }
}

#[test]
fn bad_peers_keys_and_ciphertexts_are_errors() {
    // A P-256 point off the curve (y + 1), and points of the wrong length.
    let mut kp = key_pair(Algorithm::EcdhP256, None).unwrap();
    let mut off = key_pair(Algorithm::EcdhP256, None).unwrap().public_key();
    assert_eq!(off.len(), 65);
    off[64] ^= 1;
    assert!(kp.derive(&off).is_err());
    assert!(kp.derive(&off[..33]).is_err());
    let own = kp.public_key();
    assert!(kp.derive(&own).is_ok(), "the error queue was left clean");
    // X25519: a low-order point gives the all-zero secret, which BoringSSL refuses.
    let mut x = key_pair(Algorithm::X25519, None).unwrap();
    assert!(x.derive(&[0u8; 32]).is_err());
    assert!(x.derive(&[9u8; 31]).is_err());
    // Ed25519 and ECDSA signatures of the wrong length or shape.
    let ed = key_pair(Algorithm::Ed25519, None).unwrap();
    let mut pk = public_key(Algorithm::Ed25519, &ed.public_key()).unwrap();
    assert!(pk.verify(b"m", &[0u8; 63]).is_err());
    assert!(public_key(Algorithm::Ed25519, &[0u8; 31]).is_err());
    let ec = key_pair(Algorithm::EcdsaP256, None).unwrap();
    let mut pk = public_key(Algorithm::EcdsaP256, &ec.public_key()).unwrap();
    assert!(pk.verify(b"m", &[0x30, 0x00]).is_err());
    assert!(public_key(Algorithm::EcdsaP384, &ec.public_key()).is_err());
    assert!(public_key(Algorithm::Rsa2048Pss, &[0x30, 0x03, 0x02, 0x01, 0x01]).is_err());
    assert!(key_pair(Algorithm::Rsa2048Pss, Some(&[0x30, 0x00])).is_err());
    let rsa = pkey::shared_rsa_pkcs8(2048).unwrap();
    let e = key_pair(Algorithm::EcdsaP256, Some(&rsa))
        .err()
        .expect("an RSA key");
    assert!(e.to_string().contains("not for ecdsa-p256"), "{e}");
    assert!(
        key_pair(Algorithm::Rsa3072Pss, Some(&rsa)).is_err(),
        "2048 bits"
    );
    // ML-KEM: the expanded private key is refused with the reason; short inputs fail.
    let e = key_pair(Algorithm::MlKem768, Some(&[0u8; 2400]))
        .err()
        .expect("no import");
    assert!(
        e.to_string().contains(NO_IMPORT) && e.to_string().contains("seed"),
        "{e}"
    );
    let mut kem = key_pair(Algorithm::MlKem768, None).unwrap();
    assert_eq!(kem.public_key().len(), MLKEM768_PUBLIC);
    assert!(kem.decaps(&[0u8; MLKEM768_CIPHERTEXT - 1]).is_err());
    assert!(public_key(Algorithm::MlKem768, &kem.public_key()[1..]).is_err());
    // A key from keygen is not the key that decapsulates: keygen leaves it alone.
    let mut enc = public_key(Algorithm::MlKem768, &kem.public_key()).unwrap();
    let (ct, ss) = enc.encaps().unwrap();
    kem.keygen().unwrap();
    assert_eq!(kem.decaps(&ct).unwrap(), ss);
}
