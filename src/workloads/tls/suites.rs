//! Cipher suites: what this OpenSSL offers with our certificate, the names a user may
//! give (OpenSSL names, short names, `http`, `null`), and `--mix`.

use crate::algorithms::Algorithm;
use anyhow::anyhow;
use serde::{Deserialize, Serialize};

/// The certificate's key type, which decides the TLS 1.2 suites that can be served.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CertKind {
    /// RSA-2048.
    Rsa,
    /// ECDSA on P-256.
    Ecdsa,
}

impl CertKind {
    pub fn label(self) -> &'static str {
        match self {
            CertKind::Rsa => "rsa2048",
            CertKind::Ecdsa => "ecdsa-p256",
        }
    }
    /// OpenSSL's `Au=` value for suites this certificate can serve.
    fn au(self) -> &'static str {
        match self {
            CertKind::Rsa => "RSA",
            CertKind::Ecdsa => "ECDSA",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Proto {
    #[serde(rename = "http")]
    Http,
    #[serde(rename = "TLSv1.2")]
    Tls12,
    #[serde(rename = "TLSv1.3")]
    Tls13,
}

impl Proto {
    pub fn name(self) -> &'static str {
        match self {
            Proto::Http => "http",
            Proto::Tls12 => "TLSv1.2",
            Proto::Tls13 => "TLSv1.3",
        }
    }
}

/// One line of `openssl ciphers -v`.
#[derive(Clone, Debug, PartialEq)]
pub struct Offered {
    pub name: String,
    pub version: String,
    pub kx: String,
    pub au: String,
    pub enc: String,
    pub mac: String,
}

pub fn parse_ciphers(text: &str) -> Vec<Offered> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let get = |k: &str| {
                f.iter()
                    .find_map(|x| x.strip_prefix(k))
                    .unwrap_or("")
                    .to_string()
            };
            (f.len() >= 6).then(|| Offered {
                name: f[0].to_string(),
                version: f[1].to_string(),
                kx: get("Kx="),
                au: get("Au="),
                enc: get("Enc="),
                mac: get("Mac="),
            })
        })
        .collect()
}

/// A suite as measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Suite {
    /// The name in records: "http", "null", or the OpenSSL name.
    pub name: String,
    /// The OpenSSL suite configured on both ends; None for plain HTTP.
    pub cipher: Option<String>,
    pub proto: Proto,
    /// An eNULL suite: both ends need @SECLEVEL=0.
    pub null: bool,
    /// OpenSSL's description of the record protection, e.g. "AESGCM(128)/AEAD".
    pub enc: String,
    /// Kernel TLS asked for (`NAME+ktls`, `--ktls`): nginx hands the records to the
    /// kernel's `tls` module and sends files with SSL_sendfile.
    pub ktls: bool,
    /// `--groups`: the one key-exchange group both ends are restricted to (a name of
    /// `groups::GROUPS`); None: OpenSSL's defaults.
    #[serde(default)]
    pub group: Option<String>,
}

impl Suite {
    pub fn http() -> Suite {
        Suite {
            name: "http".into(),
            cipher: None,
            proto: Proto::Http,
            null: false,
            enc: "none (plain HTTP)".into(),
            ktls: false,
            group: None,
        }
    }

    /// The kernel's AEAD that would protect this suite's records under kTLS; None when
    /// the kernel's `tls` module cannot take the suite (it does AES-GCM, AES-CCM and,
    /// since 5.11, ChaCha20-Poly1305; no CBC, no null cipher).
    pub fn kernel_aead(&self) -> Option<&'static str> {
        let enc = self.enc.to_ascii_uppercase();
        if enc.starts_with("AESGCM(") {
            Some("gcm(aes)")
        } else if enc.starts_with("AESCCM(") && !enc.starts_with("AESCCM8") {
            Some("ccm(aes)")
        } else if enc.starts_with("CHACHA20") {
            Some("rfc7539(chacha20,poly1305)")
        } else {
            None
        }
    }

    /// The same suite restricted to one key-exchange group (`--groups`).
    pub fn with_group(&self, group: &str) -> Suite {
        Suite {
            group: Some(group.into()),
            ..self.clone()
        }
    }

    /// "TLS_AES_128_GCM_SHA256 x25519mlkem768": the suite and its group, for messages.
    pub fn shown(&self) -> String {
        match &self.group {
            Some(g) => format!("{} {g}", self.name),
            None => self.name.clone(),
        }
    }

    /// The same suite with kernel TLS: "NAME+ktls".
    pub fn with_ktls(&self) -> Suite {
        Suite {
            name: format!("{}{KTLS_SUFFIX}", self.name),
            ktls: true,
            ..self.clone()
        }
    }

    /// What nginx logs as `$ssl_protocol $ssl_cipher` for every request of this suite
    /// (nginx writes "-" for an empty variable).
    pub fn expected_log(&self) -> String {
        match &self.cipher {
            None => "- -".into(),
            Some(c) => format!("{} {c}", self.proto.name()),
        }
    }

    /// The primitives that protect its records, for the cost of the cipher measured
    /// alone; None when the catalogue lacks one of them.
    pub fn primitives(&self) -> Option<Vec<Algorithm>> {
        let enc = self.enc.to_ascii_uppercase();
        let (e, m) = enc.split_once('/').unwrap_or((&enc, ""));
        let mut out = Vec::new();
        match e {
            "AESGCM(128)" => out.push(Algorithm::parse("aes-128-gcm")?),
            "AESGCM(256)" => out.push(Algorithm::parse("aes-256-gcm")?),
            "CHACHA20/POLY1305(256)" | "CHACHA20" => {
                out.push(Algorithm::parse("chacha20-poly1305")?)
            }
            "AES(128)" => out.push(Algorithm::parse("aes-128-cbc")?),
            "AES(256)" => out.push(Algorithm::parse("aes-256-cbc")?),
            "NONE" => {}
            _ => return None,
        }
        // CHACHA20/POLY1305(256) splits at the '/', leaving "POLY1305(256)/AEAD".
        let mac = m.rsplit('/').next().unwrap_or("");
        match mac {
            "AEAD" | "" => {}
            // HMAC over a 16 KiB record costs the hash of it plus two blocks.
            "SHA1" => out.push(Algorithm::parse("sha1")?),
            "SHA256" => out.push(Algorithm::parse("hmac-sha256")?),
            _ => return None,
        }
        if e.starts_with("CHACHA20") && out.len() > 1 {
            out.truncate(1);
        }
        Some(out)
    }
}

/// Appended to a suite's name (`tls12-aes128gcm+ktls`): the same suite with kernel TLS.
pub const KTLS_SUFFIX: &str = "+ktls";

/// Short names: TLS 1.3 by default, `tls12-` for the TLS 1.2 ECDHE suites.
const ALIASES: &[(&str, &str)] = &[
    ("aes128gcm", "TLS_AES_128_GCM_SHA256"),
    ("aes256gcm", "TLS_AES_256_GCM_SHA384"),
    ("chacha", "TLS_CHACHA20_POLY1305_SHA256"),
    ("chacha20", "TLS_CHACHA20_POLY1305_SHA256"),
    ("tls12-aes128gcm", "ECDHE-{AU}-AES128-GCM-SHA256"),
    ("tls12-aes256gcm", "ECDHE-{AU}-AES256-GCM-SHA384"),
    ("tls12-chacha", "ECDHE-{AU}-CHACHA20-POLY1305"),
    ("tls12-aes128cbc", "ECDHE-{AU}-AES128-SHA256"),
];

/// The default suites, in the order measured.
const DEFAULTS: &[&str] = &[
    "ECDHE-{AU}-AES128-GCM-SHA256",
    "ECDHE-{AU}-AES256-GCM-SHA384",
    "ECDHE-{AU}-CHACHA20-POLY1305",
    "ECDHE-{AU}-AES128-SHA256",
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
    "http",
    "null",
];

/// The null-cipher ceiling: same key exchange and authentication as the ECDHE suites,
/// no encryption (HMAC-SHA1 still protects each record: TLS has no MAC-less suite).
const NULL_SUITE: &str = "ECDHE-{AU}-NULL-SHA";

/// What this OpenSSL can serve with our certificate.
pub struct Catalogue {
    pub cert: CertKind,
    offered: Vec<Offered>,
}

impl Catalogue {
    pub fn new(offered: Vec<Offered>, cert: CertKind) -> Catalogue {
        Catalogue { cert, offered }
    }

    fn fill(&self, template: &str) -> String {
        template.replace("{AU}", self.cert.au())
    }

    /// Suites we can configure: every TLS 1.3 suite, and TLS 1.2 suites with ECDHE (or
    /// RSA) key exchange authenticated by our certificate.
    fn servable(&self, o: &Offered) -> bool {
        if o.version == "TLSv1.3" {
            return true;
        }
        o.au == self.cert.au() && (o.kx == "ECDH" || (o.kx == "RSA" && self.cert == CertKind::Rsa))
    }

    fn lookup(&self, cipher: &str) -> Option<&Offered> {
        self.offered
            .iter()
            .find(|o| o.name.eq_ignore_ascii_case(cipher) && self.servable(o))
    }

    fn suite(&self, name: &str, o: &Offered) -> Suite {
        Suite {
            name: name.to_string(),
            cipher: Some(o.name.clone()),
            proto: if o.version == "TLSv1.3" {
                Proto::Tls13
            } else {
                Proto::Tls12
            },
            null: o.enc.eq_ignore_ascii_case("None"),
            enc: format!("{}/{}", o.enc, o.mac),
            ktls: false,
            group: None,
        }
    }

    /// Every name `--suites` accepts here.
    pub fn valid_names(&self) -> Vec<String> {
        let mut v: Vec<String> = vec!["http".into()];
        if self.lookup(&self.fill(NULL_SUITE)).is_some() {
            v.push("null".into());
        }
        for (a, t) in ALIASES {
            if self.lookup(&self.fill(t)).is_some() {
                v.push((*a).into());
            }
        }
        v.extend(
            self.offered
                .iter()
                .filter(|o| self.servable(o))
                .map(|o| o.name.clone()),
        );
        v
    }

    /// One name as given by the user.
    pub fn resolve(&self, given: &str) -> anyhow::Result<Suite> {
        let g = given.trim();
        let lower = g.to_ascii_lowercase();
        if let Some(base) = lower.strip_suffix(KTLS_SUFFIX) {
            let s = self.resolve(&g[..base.len()])?;
            if s.cipher.is_none() {
                return Err(anyhow!(
                    "'{g}': kernel TLS needs a TLS suite, not plain HTTP: e.g. tls12-aes128gcm{KTLS_SUFFIX}"
                ));
            }
            return Ok(s.with_ktls());
        }
        if g.eq_ignore_ascii_case("http") {
            return Ok(Suite::http());
        }
        if g.eq_ignore_ascii_case("null") {
            let c = self.fill(NULL_SUITE);
            return match self.lookup(&c) {
                Some(o) => Ok(self.suite("null", o)),
                None => Err(anyhow!(
                    "suite null ({c}) is not offered by this OpenSSL: valid suites here: {}",
                    self.valid_names().join(", ")
                )),
            };
        }
        let cipher = ALIASES
            .iter()
            .find(|(a, _)| a.eq_ignore_ascii_case(g))
            .map(|(_, t)| self.fill(t))
            .unwrap_or_else(|| g.to_string());
        if let Some(o) = self.lookup(&cipher) {
            return Ok(self.suite(&o.name.clone(), o));
        }
        // A TLS 1.2 suite for the other certificate type: say which to use.
        let other = match self.cert {
            CertKind::Rsa => ("-ECDSA-", "-RSA-"),
            CertKind::Ecdsa => ("-RSA-", "-ECDSA-"),
        };
        let upper = cipher.to_ascii_uppercase();
        if upper.contains(other.0) && self.offered.iter().any(|o| o.name == upper) {
            let twin = upper.replace(other.0, other.1);
            let known_for = if self.cert == CertKind::Rsa {
                "an ECDSA certificate (--cert ecdsa)"
            } else {
                "an RSA certificate (--cert rsa)"
            };
            return Err(anyhow!(
                "suite {upper} needs {known_for}; with this certificate use {twin}"
            ));
        }
        Err(anyhow!(
            "suite '{g}' is not offered by this OpenSSL with a{} certificate: valid suites here: {}",
            if self.cert == CertKind::Rsa {
                "n RSA"
            } else {
                "n ECDSA"
            },
            self.valid_names().join(", ")
        ))
    }

    /// `--suites LIST`'s names (empty items dropped: `select` says an empty list is empty,
    /// with the names this OpenSSL offers).
    pub fn names(list: &str) -> Vec<String> {
        list.split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(String::from)
            .collect()
    }

    /// `--suites LIST`, or the defaults (skipping, with a note, any default this OpenSSL
    /// lacks). Duplicates are dropped.
    pub fn select(&self, list: Option<&[String]>) -> anyhow::Result<(Vec<Suite>, Vec<String>)> {
        let mut out: Vec<Suite> = Vec::new();
        let mut notes = Vec::new();
        match list {
            Some(names) => {
                if names.is_empty() {
                    return Err(anyhow!(
                        "--suites is empty: valid suites here: {}",
                        self.valid_names().join(", ")
                    ));
                }
                for n in names {
                    let s = self.resolve(n)?;
                    if !out.iter().any(|x| x.name == s.name) {
                        out.push(s);
                    }
                }
            }
            None => {
                for t in DEFAULTS {
                    match self.resolve(&self.fill(t)) {
                        Ok(s) => out.push(s),
                        Err(_) => notes.push(format!(
                            "default suite {} skipped: this OpenSSL does not offer it",
                            self.fill(t)
                        )),
                    }
                }
            }
        }
        Ok((out, notes))
    }
}

/// `--ktls`: each TLS suite the kernel can take is followed by its `+ktls` twin, so that
/// user space and the kernel are measured back to back; the others get a note.
pub fn add_ktls_twins(list: Vec<Suite>, notes: &mut Vec<String>) -> Vec<Suite> {
    let mut out: Vec<Suite> = Vec::new();
    for s in &list {
        if !out.iter().any(|x| x.name == s.name) {
            out.push(s.clone());
        }
        if s.ktls || s.cipher.is_none() || s.null {
            continue;
        }
        if s.kernel_aead().is_none() {
            notes.push(format!(
                "{}: no kTLS twin: the kernel's TLS takes AES-GCM, AES-CCM and ChaCha20-Poly1305, not {}",
                s.name, s.enc
            ));
            continue;
        }
        let twin = s.with_ktls();
        if !out.iter().any(|x| x.name == twin.name) {
            out.push(twin);
        }
    }
    out
}

/// `--mix a=10%,b=90%`: two suites sharing one server, with their share of connections.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mix {
    /// As given, for display and records.
    pub spec: String,
    pub parts: Vec<(Suite, f64)>,
}

/// `--mix` as given: two suite names with their share of connections, checked for form;
/// which suites the names are is the catalogue's (`resolve`).
#[derive(Clone, Debug, PartialEq)]
pub struct MixSpec {
    pub spec: String,
    pub parts: Vec<(String, f64)>,
}

impl MixSpec {
    pub fn parse(spec: &str) -> anyhow::Result<MixSpec> {
        let bad = || {
            anyhow!("invalid --mix '{spec}': give two suites with their share of connections, e.g. --mix chacha=10%,aes128gcm=90%")
        };
        let mut parts = Vec::new();
        for p in spec.split(',') {
            let (name, pct) = p.split_once('=').ok_or_else(bad)?;
            let pct: f64 = pct.trim().trim_end_matches('%').parse().map_err(|_| bad())?;
            if !(pct > 0.0 && pct < 100.0) {
                return Err(bad());
            }
            parts.push((name.to_string(), pct));
        }
        if parts.len() != 2 || (parts[0].1 + parts[1].1 - 100.0).abs() > 0.01 {
            return Err(anyhow!(
                "invalid --mix '{spec}': two suites whose shares add up to 100%, e.g. --mix chacha=10%,aes128gcm=90%"
            ));
        }
        Ok(MixSpec {
            spec: spec.to_string(),
            parts,
        })
    }

    /// The two suites this OpenSSL offers under the names given, which must differ.
    pub fn resolve(&self, cat: &Catalogue) -> anyhow::Result<Mix> {
        let mut parts = Vec::new();
        for (name, pct) in &self.parts {
            parts.push((cat.resolve(name)?, *pct));
        }
        if parts[0].0.name == parts[1].0.name {
            return Err(anyhow!(
                "invalid --mix '{}': the two suites must differ",
                self.spec
            ));
        }
        Ok(Mix {
            spec: self.spec.clone(),
            parts,
        })
    }
}

/// Connections of each part of a mix at total concurrency `c` (each at least 1); None
/// when `c` is too small to split.
pub fn split_connections(c: u32, pcts: &[f64]) -> Option<Vec<u32>> {
    if c < pcts.len() as u32 {
        return None;
    }
    let first = ((c as f64 * pcts[0] / 100.0).round() as u32).clamp(1, c - 1);
    Some(vec![first, c - first])
}

#[cfg(test)]
mod tests {
    use super::*;

    const CIPHERS: &str = "\
TLS_AES_256_GCM_SHA384         TLSv1.3 Kx=any      Au=any   Enc=AESGCM(256)            Mac=AEAD
TLS_CHACHA20_POLY1305_SHA256   TLSv1.3 Kx=any      Au=any   Enc=CHACHA20/POLY1305(256) Mac=AEAD
TLS_AES_128_GCM_SHA256         TLSv1.3 Kx=any      Au=any   Enc=AESGCM(128)            Mac=AEAD
ECDHE-ECDSA-AES256-GCM-SHA384  TLSv1.2 Kx=ECDH     Au=ECDSA Enc=AESGCM(256)            Mac=AEAD
ECDHE-RSA-AES256-GCM-SHA384    TLSv1.2 Kx=ECDH     Au=RSA   Enc=AESGCM(256)            Mac=AEAD
ECDHE-RSA-CHACHA20-POLY1305    TLSv1.2 Kx=ECDH     Au=RSA   Enc=CHACHA20/POLY1305(256) Mac=AEAD
ECDHE-RSA-AES128-GCM-SHA256    TLSv1.2 Kx=ECDH     Au=RSA   Enc=AESGCM(128)            Mac=AEAD
ECDHE-RSA-AES128-SHA256        TLSv1.2 Kx=ECDH     Au=RSA   Enc=AES(128)               Mac=SHA256
ECDHE-RSA-NULL-SHA             TLSv1   Kx=ECDH     Au=RSA   Enc=None                   Mac=SHA1
DHE-RSA-AES128-GCM-SHA256      TLSv1.2 Kx=DH       Au=RSA   Enc=AESGCM(128)            Mac=AEAD
PSK-NULL-SHA                   SSLv3   Kx=PSK      Au=PSK   Enc=None                   Mac=SHA1
";

    fn cat() -> Catalogue {
        Catalogue::new(parse_ciphers(CIPHERS), CertKind::Rsa)
    }

    #[test]
    fn ktls_twins_follow_the_suites_the_kernel_takes() {
        let c = cat();
        let (s, _) = c
            .select(Some(&Catalogue::names(
                "tls12-aes128gcm,chacha,tls12-aes128cbc,http,aes128gcm+ktls",
            )))
            .unwrap();
        assert!(s[4].ktls && s[4].name == "TLS_AES_128_GCM_SHA256+ktls");
        let mut notes = Vec::new();
        let t = add_ktls_twins(s, &mut notes);
        let names: Vec<&str> = t.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "ECDHE-RSA-AES128-GCM-SHA256",
                "ECDHE-RSA-AES128-GCM-SHA256+ktls",
                "TLS_CHACHA20_POLY1305_SHA256",
                "TLS_CHACHA20_POLY1305_SHA256+ktls",
                "ECDHE-RSA-AES128-SHA256",
                "http",
                "TLS_AES_128_GCM_SHA256+ktls",
            ]
        );
        assert_eq!(t[3].kernel_aead(), Some("rfc7539(chacha20,poly1305)"));
        assert_eq!(t[1].kernel_aead(), Some("gcm(aes)"));
        assert!(notes[0].contains("no kTLS twin"), "{notes:?}");
        // An explicit +ktls on a suite the kernel cannot take is measured (and refused
        // with the reason); on plain HTTP it is an input error.
        assert!(c.resolve("tls12-aes128cbc+ktls").unwrap().ktls);
        assert!(c
            .resolve("http+ktls")
            .unwrap_err()
            .to_string()
            .contains("needs a TLS suite"));
    }

    #[test]
    fn defaults_resolve_with_rsa() {
        let (s, notes) = cat().select(None).unwrap();
        let names: Vec<&str> = s.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names.len(), 9, "{names:?} {notes:?}");
        assert_eq!(names[7], "http");
        assert_eq!(names[8], "null");
        let null = &s[8];
        assert!(null.null);
        assert_eq!(null.expected_log(), "TLSv1.2 ECDHE-RSA-NULL-SHA");
        assert_eq!(s[4].expected_log(), "TLSv1.3 TLS_AES_128_GCM_SHA256");
        assert_eq!(s[7].expected_log(), "- -");
    }

    #[test]
    fn ecdsa_lacks_most_defaults_here_and_says_so() {
        let c = Catalogue::new(parse_ciphers(CIPHERS), CertKind::Ecdsa);
        let (s, notes) = c.select(None).unwrap();
        assert!(s.iter().any(|s| s.name == "ECDHE-ECDSA-AES256-GCM-SHA384"));
        assert!(!notes.is_empty());
        let e = c.resolve("ECDHE-RSA-AES256-GCM-SHA384").unwrap_err();
        assert!(
            e.to_string().contains("ECDHE-ECDSA-AES256-GCM-SHA384"),
            "{e}"
        );
    }

    #[test]
    fn unknown_and_unservable_suites_list_valid_ones() {
        let e = cat().resolve("RC4-MD5").unwrap_err();
        assert!(
            e.to_string().contains("valid suites here")
                && e.to_string().contains("TLS_AES_128_GCM_SHA256")
        );
        assert!(
            !e.to_string().contains(" DHE-RSA-AES128-GCM") && !e.to_string().contains("PSK-NULL"),
            "{e}"
        );
        assert!(cat().resolve("DHE-RSA-AES128-GCM-SHA256").is_err());
        assert_eq!(
            cat().resolve("chacha").unwrap().name,
            "TLS_CHACHA20_POLY1305_SHA256"
        );
        assert_eq!(
            cat().resolve("tls12-aes128cbc").unwrap().name,
            "ECDHE-RSA-AES128-SHA256"
        );
    }

    #[test]
    fn primitives_of_suites() {
        let c = cat();
        let p = |n: &str| {
            c.resolve(n)
                .unwrap()
                .primitives()
                .unwrap()
                .iter()
                .map(|a| a.name())
                .collect::<Vec<_>>()
        };
        assert_eq!(p("aes128gcm"), ["aes-128-gcm"]);
        assert_eq!(p("chacha"), ["chacha20-poly1305"]);
        assert_eq!(p("tls12-chacha"), ["chacha20-poly1305"]);
        assert_eq!(p("tls12-aes128cbc"), ["aes-128-cbc", "hmac-sha256"]);
        assert_eq!(p("null"), ["sha1"]);
        assert_eq!(Suite::http().primitives(), None);
    }

    #[test]
    fn mixes_parse_and_split() {
        let mix = |s: &str| MixSpec::parse(s).and_then(|m| m.resolve(&cat()));
        let m = mix("chacha=10%,aes128gcm=90%").unwrap();
        assert_eq!(m.parts[0].0.name, "TLS_CHACHA20_POLY1305_SHA256");
        assert_eq!(m.parts[1].1, 90.0);
        assert!(MixSpec::parse("chacha=10%").is_err());
        assert!(MixSpec::parse("chacha=10%,aes128gcm=80%").is_err());
        assert!(MixSpec::parse("chacha=50,chacha=50").is_ok());
        assert!(mix("chacha=50,chacha=50").is_err());
        assert_eq!(split_connections(10, &[10.0, 90.0]), Some(vec![1, 9]));
        assert_eq!(split_connections(2, &[10.0, 90.0]), Some(vec![1, 1]));
        assert_eq!(split_connections(100, &[25.0, 75.0]), Some(vec![25, 75]));
        assert_eq!(split_connections(1, &[10.0, 90.0]), None);
    }
}
