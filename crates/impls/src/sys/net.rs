//! Loopback addresses and ports for the servers a workload starts.

use anyhow::anyhow;

/// An address as a URL or nginx `listen` takes it: an IPv6 one in brackets.
pub fn url_host(addr: &str) -> String {
    if addr.contains(':') {
        format!("[{addr}]")
    } else {
        addr.to_string()
    }
}

/// `n` distinct free TCP ports on 127.0.0.1 (held together while chosen, then released
/// for nginx to bind).
pub fn free_ports(n: usize) -> anyhow::Result<Vec<u16>> {
    let listeners: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
        .collect::<Result<_, _>>()
        .map_err(|e| anyhow!("cannot find a free port on 127.0.0.1: {e}"))?;
    listeners
        .iter()
        .map(|l| {
            l.local_addr()
                .map(|a| a.port())
                .map_err(|e| anyhow!("cannot find a free port on 127.0.0.1: {e}"))
        })
        .collect()
}
