//! `--groups`: the TLS key-exchange groups nginx is restricted to (`ssl_ecdh_curve`), one
//! point per group, the OpenSSL release each needs, and the handshake's size on the wire
//! per group (one `openssl s_client -msg` against the running server).

use crate::sys;
use crate::sys::guard::Guard;
use anyhow::anyhow;
use std::path::Path;
use std::time::Duration;

/// One group as cryptobench names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Group {
    /// The name `--groups` takes and records carry: "x25519mlkem768".
    pub name: &'static str,
    /// OpenSSL's name (`ssl_ecdh_curve`, `Groups =`, `s_client -groups`).
    pub openssl: &'static str,
    /// What nginx's `$ssl_curve` and s_client's "Negotiated ... group" may say for it:
    /// the short name, or (an nginx that predates the group) its code point in hex.
    pub logged: &'static [&'static str],
    /// The first OpenSSL release with it (OpenSSL_version_num).
    pub since: u64,
    /// TLS 1.3 only (the ML-KEM groups): a TLS 1.2 suite cannot negotiate it.
    pub tls13_only: bool,
}

const V3_5: u64 = 0x3050_0000;

pub const GROUPS: &[Group] = &[
    Group {
        name: "x25519",
        openssl: "X25519",
        logged: &["X25519", "x25519", "0x001d"],
        since: 0,
        tls13_only: false,
    },
    Group {
        name: "secp256r1",
        openssl: "P-256",
        logged: &["prime256v1", "secp256r1", "P-256", "0x0017"],
        since: 0,
        tls13_only: false,
    },
    Group {
        name: "secp384r1",
        openssl: "P-384",
        logged: &["secp384r1", "P-384", "0x0018"],
        since: 0,
        tls13_only: false,
    },
    Group {
        name: "x448",
        openssl: "X448",
        logged: &["X448", "x448", "0x001e"],
        since: 0,
        tls13_only: false,
    },
    Group {
        name: "x25519mlkem768",
        openssl: "X25519MLKEM768",
        logged: &["X25519MLKEM768", "0x11ec"],
        since: V3_5,
        tls13_only: true,
    },
    Group {
        name: "secp256r1mlkem768",
        openssl: "SecP256r1MLKEM768",
        logged: &["SecP256r1MLKEM768", "0x11eb"],
        since: V3_5,
        tls13_only: true,
    },
    Group {
        name: "mlkem768",
        openssl: "MLKEM768",
        logged: &["MLKEM768", "0x0201"],
        since: V3_5,
        tls13_only: true,
    },
];

/// The group cryptobench calls `name` (any case; OpenSSL's names and P-256 too).
pub fn find(name: &str) -> Option<&'static Group> {
    GROUPS.iter().find(|g| {
        g.name.eq_ignore_ascii_case(name)
            || g.openssl.eq_ignore_ascii_case(name)
            || g.logged.iter().any(|l| l.eq_ignore_ascii_case(name))
    })
}

/// `--groups LIST`: every name known, duplicates dropped; an unknown one is bad input
/// naming the valid ones.
pub fn parse(list: &str) -> anyhow::Result<Vec<&'static Group>> {
    let valid = || GROUPS.iter().map(|g| g.name).collect::<Vec<_>>().join(", ");
    let mut out: Vec<&'static Group> = Vec::new();
    for n in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let g = find(n).ok_or_else(|| {
            anyhow!(
                "unknown group '{n}' in --groups: valid groups are {}",
                valid()
            )
        })?;
        if !out.contains(&g) {
            out.push(g);
        }
    }
    if out.is_empty() {
        return Err(anyhow!("--groups is empty: valid groups are {}", valid()));
    }
    Ok(out)
}

impl Group {
    /// Why an OpenSSL of `version_num` (`version`, for the message) cannot do this group.
    pub fn gap(&self, version_num: u64, version: &str) -> Option<String> {
        (version_num < self.since).then(|| {
            format!(
                "{version} has no {} (OpenSSL 3.5 added it): give --openssl DIR of a 3.5 or later build (scripts/build-openssl 3.5)",
                self.openssl
            )
        })
    }
    pub fn is_logged_as(&self, logged: &str) -> bool {
        self.logged.iter().any(|l| l.eq_ignore_ascii_case(logged))
    }
}

/// What one handshake put on the wire, from the client's message callback.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Hello {
    /// Handshake message lengths, header included (4 bytes).
    pub client_hello: u64,
    pub server_hello: u64,
    /// "Negotiated TLS1.3 group: X25519MLKEM768" (s_client of OpenSSL 3.x).
    pub negotiated: Option<String>,
}

/// Reads `openssl s_client -msg`: ">>> TLS 1.3, Handshake [length 05b5], ClientHello" and
/// "<<< ... ServerHello" (the first of each: a HelloRetryRequest would be a second).
pub fn parse_msg(text: &str) -> Option<Hello> {
    let len = |l: &str| -> Option<u64> {
        let hex = l.split("[length ").nth(1)?.split(']').next()?;
        u64::from_str_radix(hex.trim(), 16).ok()
    };
    let first = |dir: &str, msg: &str| {
        text.lines()
            .find(|l| l.starts_with(dir) && l.trim_end().ends_with(msg))
            .and_then(len)
    };
    Some(Hello {
        client_hello: first(">>>", ", ClientHello")?,
        server_hello: first("<<<", ", ServerHello")?,
        negotiated: text.lines().find_map(|l| {
            l.split_once("group: ")
                .filter(|(h, _)| h.starts_with("Negotiated"))
                .map(|(_, g)| g.trim().to_string())
        }),
    })
}

/// One full handshake with `openssl s_client -groups G -msg` against host:port: the
/// ClientHello and ServerHello sizes and the group it reports. `env`: the build's
/// library path, so that an older openssl command speaks the group too.
pub fn probe(
    guard: &Guard,
    dir: &Path,
    openssl: &Path,
    env: &[(&str, &Path)],
    (host, port): (&str, u16),
    group: &Group,
    tls13: bool,
) -> anyhow::Result<Hello> {
    let connect = format!("{}:{port}", sys::net::url_host(host));
    let openssl_s = openssl.to_string_lossy();
    let mut argv = vec![
        &*openssl_s,
        "s_client",
        "-connect",
        &connect,
        "-groups",
        group.openssl,
        "-msg",
        "-no_ticket",
    ];
    if tls13 {
        argv.push("-tls1_3");
    }
    let (_, out, err) = sys::spawn::run_bounded(guard, dir, &argv, env, Duration::from_secs(10))?;
    parse_msg(&out).ok_or_else(|| {
        anyhow!(
            "openssl s_client -groups {} saw no ClientHello and ServerHello: {}",
            group.openssl,
            err.lines()
                .find(|l| l.contains("error"))
                .unwrap_or(err.trim())
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_unknown_ones_name_the_valid() {
        let g = parse("x25519,X25519MLKEM768,P-256,x25519").unwrap();
        let names: Vec<_> = g.iter().map(|g| g.name).collect();
        assert_eq!(names, ["x25519", "x25519mlkem768", "secp256r1"]);
        let e = parse("nonsense").unwrap_err().to_string();
        assert!(
            e.contains("'nonsense'") && e.contains("x25519mlkem768"),
            "{e}"
        );
        assert!(!e.contains('\n'));
        assert!(parse(" , ").is_err());
        let pq = find("x25519mlkem768").unwrap();
        assert!(pq
            .gap(0x3000_0130, "OpenSSL 3.0.19")
            .unwrap()
            .contains("3.5"));
        assert!(pq.gap(0x3050_0050, "OpenSSL 3.5.5").is_none());
        assert!(pq.is_logged_as("0x11ec") && pq.is_logged_as("X25519MLKEM768"));
        assert_eq!(find("prime256v1").unwrap().name, "secp256r1");
    }

    #[test]
    fn s_client_messages_give_the_hello_sizes() {
        let out = "CONNECTED(00000003)\n\
            >>> TLS 1.3, Handshake [length 05b5], ClientHello\n\
            <<< TLS 1.3, Handshake [length 04ba], ServerHello\n\
            <<< TLS 1.3, Handshake [length 0017], EncryptedExtensions\n\
            Negotiated TLS1.3 group: X25519MLKEM768\n";
        let h = parse_msg(out).unwrap();
        assert_eq!((h.client_hello, h.server_hello), (0x5b5, 0x4ba));
        assert_eq!(h.negotiated.as_deref(), Some("X25519MLKEM768"));
        assert!(parse_msg("CONNECTED\n").is_none());
    }
}
