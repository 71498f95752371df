//! The kernel crypto API's netlink configuration (crypto_user, NETLINK_CRYPTO): make a
//! template instance (`pcrypt(...)`, a generic `rfc4106(gcm_base(...))`), remove it again,
//! or change a driver's priority, which decides what a new user (an SA) binds. Needs
//! CAP_NET_ADMIN and the crypto_user module (loaded on demand as net-pf-16-proto-21).

use anyhow::anyhow;

const NETLINK_CRYPTO: libc::c_int = 21;
pub const NEWALG: u16 = 0x10;
pub const DELALG: u16 = 0x11;
pub const UPDATEALG: u16 = 0x12;
/// The attribute that carries a new priority (u32), CRYPTOCFGA_PRIORITY_VAL.
const CRYPTOCFGA_PRIORITY_VAL: u16 = 1;
const CRYPTO_ALG_TYPE_AEAD: u32 = 0x3;
const CRYPTO_ALG_TYPE_MASK: u32 = 0xf;
/// struct crypto_user_alg: three 64-byte names, then type, mask, refcnt and flags.
const NAME_LEN: usize = 64;
const ALG_LEN: usize = 3 * NAME_LEN + 16;

/// Sends one request about the AEAD whose driver name is `driver` (with a new `priority`
/// for NEWALG and UPDATEALG) and waits for the kernel's answer: Ok, or its error.
pub fn aead_request(msg: u16, driver: &str, priority: Option<u32>) -> anyhow::Result<()> {
    if driver.len() >= NAME_LEN {
        return Err(anyhow!("driver name {driver} is too long for crypto_user"));
    }
    let mut body = vec![0u8; ALG_LEN];
    body[NAME_LEN..NAME_LEN + driver.len()].copy_from_slice(driver.as_bytes());
    body[3 * NAME_LEN..3 * NAME_LEN + 4].copy_from_slice(&CRYPTO_ALG_TYPE_AEAD.to_ne_bytes());
    body[3 * NAME_LEN + 4..3 * NAME_LEN + 8].copy_from_slice(&CRYPTO_ALG_TYPE_MASK.to_ne_bytes());
    if let Some(p) = priority {
        body.extend(8u16.to_ne_bytes());
        body.extend(CRYPTOCFGA_PRIORITY_VAL.to_ne_bytes());
        body.extend(p.to_ne_bytes());
    }
    let len = (16 + body.len()) as u32;
    let mut req = Vec::with_capacity(len as usize);
    req.extend(len.to_ne_bytes());
    req.extend(msg.to_ne_bytes());
    req.extend(((libc::NLM_F_REQUEST | libc::NLM_F_ACK) as u16).to_ne_bytes());
    req.extend(1u32.to_ne_bytes());
    req.extend(0u32.to_ne_bytes());
    req.extend(body);
    // SAFETY: plain socket(2); the fd is owned below.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            NETLINK_CRYPTO,
        )
    };
    if fd < 0 {
        return Err(anyhow!(
            "no crypto_user netlink ({}): the kernel needs CONFIG_CRYPTO_USER (modprobe crypto_user)",
            crate::sys::os_err(crate::sys::errno())
        ));
    }
    // SAFETY: fd is a fresh socket we own.
    let _owned = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    // SAFETY: sockaddr_nl is plain data; zero is a valid value (the kernel as peer).
    let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    addr.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    // SAFETY: sendto reads req.len() bytes of req and the address of its given size.
    let sent = unsafe {
        libc::sendto(
            fd,
            req.as_ptr().cast(),
            req.len(),
            0,
            (&addr as *const libc::sockaddr_nl).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
        )
    };
    if sent < 0 {
        return Err(anyhow!(
            "crypto_user: {}",
            crate::sys::os_err(crate::sys::errno())
        ));
    }
    let mut buf = [0u8; 4096];
    // SAFETY: recv writes at most buf.len() bytes into buf.
    let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n < 20 {
        return Err(anyhow!("crypto_user: no answer from the kernel"));
    }
    // An NLMSG_ERROR answer: its error code (0: done) follows the header.
    let kind = u16::from_ne_bytes([buf[4], buf[5]]);
    let code = i32::from_ne_bytes([buf[16], buf[17], buf[18], buf[19]]);
    if kind == libc::NLMSG_ERROR as u16 && code != 0 {
        return Err(anyhow!("crypto_user: {}", crate::sys::os_err(-code)));
    }
    Ok(())
}
