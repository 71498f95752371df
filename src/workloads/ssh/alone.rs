//! An OpenSSH point's cipher and MAC timed alone, in process, on the libcrypto sshd runs
//! on (the system's): the bottom-up cost set beside the point's measured server CPU.
//! Dropbear's crypto is libtomcrypt's, built into it: nothing to time it through here,
//! its cost is what `--profile` finds of the point's own CPU.

use crate::algorithms::Algorithm;
use crate::impls::Implementation;
use crate::record::ssh::CipherAlone;
use std::time::Duration;

/// Bytes per call: OpenSSH's channel packet (32 KiB), which a bulk transfer fills.
pub const PACKET: usize = 32 << 10;
/// Each algorithm's timing (a fifth of it more to warm up).
const BUDGET: Duration = Duration::from_millis(300);

/// The catalogue's algorithms for an SSH cipher and MAC; None where one is not in it.
pub fn algorithms(cipher: &str, mac: Option<&str>) -> Option<Vec<Algorithm>> {
    let c = match cipher {
        "chacha20-poly1305@openssh.com" => Algorithm::Chacha20Poly1305,
        "aes128-gcm@openssh.com" => Algorithm::Aes128Gcm,
        "aes256-gcm@openssh.com" => Algorithm::Aes256Gcm,
        "aes128-ctr" => Algorithm::Aes128Ctr,
        "aes192-ctr" => Algorithm::Aes192Ctr,
        "aes256-ctr" => Algorithm::Aes256Ctr,
        _ => return None,
    };
    let m = match mac {
        None => None,
        Some("hmac-sha2-256" | "hmac-sha2-256-etm@openssh.com") => Some(Algorithm::HmacSha256),
        Some(_) => return None,
    };
    Some([Some(c), m].into_iter().flatten().collect())
}

/// CPU seconds per GB of the cipher and MAC together on the system libcrypto, or why
/// they were not timed.
pub fn measure(cipher: &str, mac: Option<&str>) -> Result<CipherAlone, String> {
    let Some(algs) = algorithms(cipher, mac) else {
        return Err(format!(
            "{cipher}{} has a primitive the catalogue lacks",
            mac.map(|m| format!(" with {m}")).unwrap_or_default()
        ));
    };
    let imp = crate::impls::openssl::OpenSsl::load_system().map_err(|e| e.to_string())?;
    let mut cpu_s_per_gb = 0.0;
    for &a in &algs {
        cpu_s_per_gb += crate::measure::alone::cpu_s_per_gb(&imp, a, PACKET, BUDGET)
            .map_err(|e| format!("{a}: {e}"))?;
    }
    // OpenSSH's chacha20-poly1305@openssh.com takes ChaCha20 from libcrypto but its
    // Poly1305 is OpenSSH's own C (poly1305-donna): the AEAD alone is a floor for it.
    let note = (algs == [Algorithm::Chacha20Poly1305]).then(|| {
        "OpenSSH's chacha20-poly1305@openssh.com is its own construction, with its own Poly1305 in C; timed as libcrypto's ChaCha20-Poly1305 AEAD, a floor for it".to_string()
    });
    Ok(CipherAlone {
        algs: algs.iter().map(|a| a.name().to_string()).collect(),
        cpu_s_per_gb,
        implementation: imp.version(),
        note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_names_map_onto_the_catalogue() {
        assert_eq!(
            algorithms("aes128-ctr", Some("hmac-sha2-256-etm@openssh.com")),
            Some(vec![Algorithm::Aes128Ctr, Algorithm::HmacSha256])
        );
        assert_eq!(
            algorithms("aes256-gcm@openssh.com", None),
            Some(vec![Algorithm::Aes256Gcm])
        );
        assert_eq!(algorithms("aes128-ctr", Some("hmac-sha1")), None);
        assert_eq!(algorithms("3des-cbc", None), None);
    }
}
