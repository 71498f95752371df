//! Kernel TLS at a `+ktls` point: proof that the kernel protected the records, or the
//! reason it did not. A point whose /proc/net/tls_stat counters did not move is refused
//! ("kTLS requested but not used: why"), never recorded as a kTLS number.

use super::bench::Bench;
use super::server::Content;
use super::suites::Suite;
use crate::kernel;
use crate::record::tls::KtlsUse;
use anyhow::anyhow;
use std::collections::BTreeMap;
use std::time::Duration;

type Counters = BTreeMap<String, u64>;

/// Sockets the kernel switched to TLS for sending (software or NIC offload).
fn tx(c: &Counters) -> u64 {
    c.get("TlsTxSw").copied().unwrap_or(0) + c.get("TlsTxDevice").copied().unwrap_or(0)
}

fn rx(c: &Counters) -> u64 {
    c.get("TlsRxSw").copied().unwrap_or(0) + c.get("TlsRxDevice").copied().unwrap_or(0)
}

fn delta(after: &Counters, before: &Counters, f: fn(&Counters) -> u64) -> u64 {
    f(after).saturating_sub(f(before))
}

/// Why kernel TLS was not used for `suite`, from what can be known: the kernel, the
/// cipher, then nginx and its OpenSSL.
pub fn why_not_used(b: &Bench, suite: &Suite) -> String {
    let k = kernel::ktls_status(&kernel::KernelConfig::read());
    let why = if !k.usable {
        k.reason
    } else if suite.kernel_aead().is_none() {
        format!(
            "the kernel's TLS takes AES-GCM, AES-CCM and ChaCha20-Poly1305, not {}",
            suite.enc
        )
    } else {
        format!(
            "the kernel has TLS, but {} did not hand the connection to it (the tls_stat counters did not move: an OpenSSL built without kTLS, or no SSL_sendfile)",
            b.impl_version
        )
    };
    format!("kTLS requested but not used: {why}")
}

/// Before the load: the counters, and one response fetched through the kTLS server
/// block with `openssl s_client`, compared byte for byte with the file on disk.
pub struct Before {
    counters: Counters,
    body_bytes: u64,
    /// None for a gzip'd response (compressed on the fly: nothing on disk to compare).
    identical: Option<bool>,
}

pub fn before_load(b: &Bench, suite_index: usize, content: Content) -> anyhow::Result<Before> {
    let suite = &b.suites[suite_index];
    // Asking for the protocol loads the module where it can (then the counters appear).
    let c0 = match kernel::tls_stat() {
        Some(c) => c,
        None => match (
            kernel::ktls_status(&kernel::KernelConfig::read()).usable,
            kernel::tls_stat(),
        ) {
            (true, Some(c)) => c,
            _ => return Err(anyhow::Error::msg(why_not_used(b, suite))),
        },
    };
    let body = fetch(b, suite_index, content)?;
    let c1 = kernel::tls_stat().unwrap_or_default();
    if delta(&c1, &c0, tx) == 0 {
        return Err(anyhow::Error::msg(why_not_used(b, suite)));
    }
    let mut identical = None;
    if !content.gzip() {
        let file = b
            .dir
            .join("www")
            .join(content.path().trim_start_matches('/'));
        let want = std::fs::read(&file).map_err(|e| anyhow!("{}: {e}", file.display()))?;
        if body != want {
            return Err(anyhow!(
                "kTLS: the body fetched through the kernel's TLS ({} bytes) differs from {} ({} bytes)",
                body.len(),
                file.display(),
                want.len()
            ));
        }
        identical = Some(true);
    }
    // The check's request is not part of the point.
    let _ = std::fs::File::create(super::server::log_path(&b.dir, suite_index));
    Ok(Before {
        counters: c1,
        body_bytes: body.len() as u64,
        identical,
    })
}

/// One HTTP/1.0 request through s_client, offering only the suite; the response body.
fn fetch(b: &Bench, suite_index: usize, content: Content) -> anyhow::Result<Vec<u8>> {
    let req = b.dir.join(format!("ktls-request-{suite_index}.txt"));
    std::fs::write(
        &req,
        format!(
            "GET {} HTTP/1.0\r\nHost: localhost\r\nConnection: close\r\n\r\n",
            content.path()
        ),
    )
    .map_err(|e| anyhow!("{}: {e}", req.display()))?;
    let conf = b.dir.join(format!("client-{suite_index}.cnf"));
    let connect = format!(
        "{}:{}",
        crate::sys::net::url_host(&b.host),
        b.ports[suite_index]
    );
    let openssl = b.openssl.to_string_lossy();
    let argv = [
        &*openssl,
        "s_client",
        "-connect",
        &connect,
        "-servername",
        "localhost",
        "-quiet",
    ];
    let (code, out, err) = crate::sys::spawn::run_bounded_bytes(
        &b.guard,
        &b.dir,
        &argv,
        &[("OPENSSL_CONF", conf.as_path())],
        Some(req.as_path()),
        Duration::from_secs(60),
    )?;
    let Some(split) = out.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Err(anyhow!(
            "kTLS check: openssl s_client got no HTTP response (exit {code:?}): {}",
            err.lines().last().unwrap_or("no message")
        ));
    };
    let head = String::from_utf8_lossy(&out[..split]);
    if !head.starts_with("HTTP/1.1 200") {
        return Err(anyhow!(
            "kTLS check: nginx answered '{}'",
            head.lines().next().unwrap_or("")
        ));
    }
    Ok(out[split + 4..].to_vec())
}

/// After the load: what the kernel did, or why the point is refused. `connections`:
/// those nginx logged; each must have been switched to kernel TLS for sending.
pub fn after_load(
    b: &Bench,
    suite: &Suite,
    before: &Before,
    connections: u64,
) -> anyhow::Result<(KtlsUse, Vec<String>)> {
    let after = kernel::tls_stat().unwrap_or_default();
    let sent = delta(&after, &before.counters, tx);
    if sent == 0 {
        return Err(anyhow::Error::msg(why_not_used(b, suite)));
    }
    if sent < connections {
        return Err(anyhow!(
            "kTLS used by only {sent} of the {connections} connections: not a kTLS number"
        ));
    }
    let mut notes = Vec::new();
    let errors = after
        .get("TlsDecryptError")
        .copied()
        .unwrap_or(0)
        .saturating_sub(before.counters.get("TlsDecryptError").copied().unwrap_or(0));
    if errors > 0 {
        notes.push(format!("kTLS: {errors} records failed to decrypt"));
    }
    Ok((
        KtlsUse {
            kernel_aead: suite.kernel_aead().unwrap_or("").into(),
            tx_sockets: sent,
            rx_sockets: delta(&after, &before.counters, rx),
            decrypt_errors: errors,
            body_identical: before.identical,
            body_bytes: before.body_bytes,
            tls_stat_before: before.counters.clone(),
            tls_stat_after: after,
        },
        notes,
    ))
}
