//! What every workload needs from the operating system, written once: /proc readings,
//! CPU accounting (with the one definition of busy CPU), spawning children that die with
//! us, and finding programs and asking them their version.

pub mod clock;
pub mod cpu;
pub mod guard;
pub mod net;
pub mod procfs;
pub mod program;
pub mod signal;
pub mod spawn;

/// The calling thread's errno after a failed system call.
pub fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// An errno as the C library words it, e.g. "Address family not supported by protocol".
pub fn os_err(e: i32) -> String {
    std::io::Error::from_raw_os_error(e).to_string()
}

/// The C library this binary runs on and how it is linked, as `--version` and `probe`
/// say it: "glibc, dynamic", "musl, dynamic" (OpenWrt's ld-musl), "musl, static". Asked
/// at run time, as the link decided it: a static executable has no program interpreter,
/// so the kernel gives it no AT_BASE.
pub fn libc() -> &'static str {
    // SAFETY: getauxval has no preconditions; it reads the auxiliary vector.
    let is_static = unsafe { libc::getauxval(libc::AT_BASE) } == 0;
    match (cfg!(target_env = "musl"), is_static) {
        (true, true) => "musl, static",
        (true, false) => "musl, dynamic",
        (false, true) => "glibc, static",
        (false, false) => "glibc, dynamic",
    }
}

/// Why this binary cannot load a library at run time: musl's static libc has no dlopen.
pub fn cannot_dlopen() -> Option<String> {
    let libc = libc();
    (libc == "musl, static").then(|| {
        format!(
            "this binary is linked statically ({libc}) and musl's static libc cannot dlopen a libcrypto: use the dynamic musl build (the release file without -static) for the openssl path"
        )
    })
}

/// A machine's identity, stable across runs: /etc/machine-id and the CPU model, hashed
/// (the machine id itself is meant to stay private).
pub fn machine_id(cpu_model: &str) -> String {
    let id = std::fs::read_to_string("/etc/machine-id")
        .or_else(|_| std::fs::read_to_string("/var/lib/dbus/machine-id"))
        .unwrap_or_default();
    machine_hash(id.trim(), cpu_model)
}

/// The hash behind `machine_id`: 12 hex digits of SHA-256 over the id and the CPU model.
pub fn machine_hash(id: &str, cpu_model: &str) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(format!("{id}\n{cpu_model}").as_bytes());
    hex::encode(&d[..6])
}

/// Raises the soft open-file limit towards `want` (children inherit it). Returns the
/// soft limit now in force.
pub fn raise_nofile(want: u64) -> u64 {
    // SAFETY: getrlimit/setrlimit on our own process with a struct we own.
    unsafe {
        let mut rl: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) != 0 {
            return 1024;
        }
        // rlim_t is 32 bits on 32-bit ARM (the cast is needed there only).
        #[allow(clippy::unnecessary_cast)]
        let want = want.min(libc::rlim_t::MAX as u64) as libc::rlim_t;
        if rl.rlim_cur < want {
            let new = libc::rlimit {
                rlim_cur: want.min(rl.rlim_max),
                rlim_max: rl.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &new) == 0 {
                return new.rlim_cur as u64;
            }
        }
        rl.rlim_cur as u64
    }
}

/// Whether we run as root (effective user id 0).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A regular file's text, up to `max` bytes: /dev/zero would take all memory and a FIFO
/// would block with no writer.
pub fn read_regular(f: &std::path::Path, max: u64) -> std::io::Result<String> {
    use std::io::Read;
    if !std::fs::metadata(f)?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut text = String::new();
    std::fs::File::open(f)?
        .take(max + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > max {
        let (n, unit) = match max >> 20 {
            0 => (max >> 10, "KiB"),
            m => (m, "MiB"),
        };
        return Err(std::io::Error::other(format!("larger than {n} {unit}")));
    }
    Ok(text)
}

/// Whether a shared object is the distribution's own (under /lib or /usr/lib, lib64
/// included), not a build loaded from elsewhere: what "the system's OpenSSL" means.
pub fn system_library(p: &std::path::Path) -> bool {
    ["/lib", "/usr/lib", "/lib64", "/usr/lib64"]
        .iter()
        .any(|d| p.starts_with(d))
}

/// Whether `p` is on /proc or /sys: the kernel's files, never a place to write ours.
// The types of f_type and of the constants differ between targets.
#[allow(clippy::unnecessary_cast)]
pub fn on_kernel_fs(p: &std::path::Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(p.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: statfs fills a struct we own from a NUL-terminated path.
    let mut s: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut s) } != 0 {
        return false;
    }
    let t = s.f_type as i64;
    t == libc::PROC_SUPER_MAGIC as i64 || t == libc::SYSFS_MAGIC as i64
}
