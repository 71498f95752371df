//! The RAM disk (brd, or a loop device over /dev/shm where brd is missing or taken) and
//! the dm-crypt mappings on it, made with dmsetup: a random key per mapping, handed to
//! dmsetup in a table file in a 0700 temp dir (never on a command line, never printed);
//! the driver the mapping bound, proven from /proc/crypto. Everything is owned by a guard.

use super::args::Cipher;
use crate::sys::guard::{Guard, Resource, PREFIX};
use crate::sys::spawn::{run_bounded, run_bounded_bytes};
use anyhow::anyhow;
use std::path::{Path, PathBuf};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// The programs the workload runs.
#[derive(Clone, Debug)]
pub struct Programs {
    pub dmsetup: PathBuf,
    pub fio: PathBuf,
    pub modprobe: PathBuf,
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap_or_default()
}

/// Runs `argv` owned by `guard`, its output in `dir`; Err with its stderr on failure.
pub fn run(guard: &Guard, dir: &Path, argv: &[&str]) -> anyhow::Result<String> {
    let (code, out, err) = run_bounded(guard, dir, argv, &[], LIMIT)?;
    if code != Some(0) {
        return Err(anyhow!("{} failed: {}", argv.join(" "), one_line(&err)));
    }
    Ok(out)
}

fn one_line(text: &str) -> String {
    let t: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && *l != "Command failed.")
        .collect();
    t.join("; ")
}

/// Whether this kernel can make dm-crypt mappings (loading dm_crypt where it is a
/// module): Err with the reason.
pub fn dm_crypt_usable(guard: &Guard, dir: &Path, progs: &Programs) -> Result<(), String> {
    if Path::new("/sys/module/dm_crypt").exists() {
        return Ok(());
    }
    match run(guard, dir, &[s(&progs.modprobe), "dm_crypt"]) {
        Ok(_) if Path::new("/sys/module/dm_crypt").exists() => Ok(()),
        Ok(_) => Err("modprobe dm_crypt ran, but the kernel lists no dm_crypt".into()),
        Err(e) => Err(format!(
            "this kernel has no dm-crypt ({e}; CONFIG_DM_CRYPT)"
        )),
    }
}

/// The block device the mappings sit on.
pub struct RamDisk {
    /// "/dev/ram0" or "/dev/loopN".
    pub path: String,
    /// "brd" or "loop".
    pub kind: &'static str,
    pub size: u64,
    /// The run's private dir (tables, fio's output).
    pub dir: PathBuf,
    guard: Guard,
}

impl RamDisk {
    /// brd with one disk of `size` when the module is not loaded already (another user's
    /// disks are left alone), else a loop device over a file in /dev/shm.
    pub fn new(progs: &Programs, size: u64) -> anyhow::Result<RamDisk> {
        let guard = Guard::new();
        let dir = guard.temp_dir("disk")?;
        let kib = (size / 1024).to_string();
        let brd_free = !Path::new("/sys/module/brd").exists();
        let brd = brd_free
            && run(
                &guard,
                &dir,
                &[
                    s(&progs.modprobe),
                    "brd",
                    "rd_nr=1",
                    &format!("rd_size={kib}"),
                    "max_part=0",
                ],
            )
            .is_ok()
            && Path::new("/dev/ram0").exists();
        if brd {
            // A marker names the run that loaded brd, for `disk --cleanup`.
            let marker = brd_marker(std::process::id());
            std::fs::write(&marker, b"")?;
            guard.track(Resource::Undo {
                what: format!("the marker {marker}"),
                argv: vec!["rm".into(), "-f".into(), marker],
            });
            guard.track(Resource::Undo {
                what: "the brd RAM disk".into(),
                argv: vec![s(&progs.modprobe).into(), "-r".into(), "brd".into()],
            });
            return Ok(RamDisk {
                path: "/dev/ram0".into(),
                kind: "brd",
                size,
                dir,
                guard,
            });
        }
        let shm = guard.temp_dir_in(Path::new("/dev/shm"), "disk")?;
        let file = shm.join("disk.img");
        std::fs::File::create(&file)?.set_len(size)?;
        let file = file.to_string_lossy().to_string();
        let dev = run(&guard, &dir, &["losetup", "--find", "--show", &file])
            .map_err(|e| anyhow!("no brd ({}) and no loop device: {e}", brd_why(brd_free)))?
            .trim()
            .to_string();
        if !dev.starts_with("/dev/loop") {
            return Err(anyhow!("losetup named no loop device ({dev})"));
        }
        guard.track(Resource::Undo {
            what: format!("the loop device {dev}"),
            argv: vec!["losetup".into(), "-d".into(), dev.clone()],
        });
        Ok(RamDisk {
            path: dev,
            kind: "loop",
            size,
            dir,
            guard,
        })
    }

    pub fn guard(&self) -> &Guard {
        &self.guard
    }
}

fn brd_why(free: bool) -> &'static str {
    if free {
        "modprobe brd failed"
    } else {
        "brd is loaded already, by another user"
    }
}

/// The file that says run `pid` loaded brd.
pub fn brd_marker(pid: u32) -> String {
    format!("/run/{PREFIX}-disk-brd-{pid}")
}

/// A dm-crypt mapping, removed when dropped; `bound` is the driver it bound.
pub struct Mapping {
    pub path: String,
    pub bound: crate::kernel::BoundDriver,
    guard: Guard,
}

impl Mapping {
    pub fn guard(&self) -> &Guard {
        &self.guard
    }
}

static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The mapping name: the run's PID in it, so that a sweep spares a live run's.
pub fn mapping_name() -> String {
    format!(
        "{PREFIX}-disk-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// A random key of `bits`, from the kernel.
fn random_key(bits: u32) -> anyhow::Result<Vec<u8>> {
    let mut key = vec![0u8; bits as usize / 8];
    let mut got = 0;
    while got < key.len() {
        // SAFETY: writes at most key.len() - got bytes into key[got..].
        let n = unsafe { libc::getrandom(key[got..].as_mut_ptr().cast(), key.len() - got, 0) };
        if n <= 0 {
            return Err(anyhow!("getrandom: {}", std::io::Error::last_os_error()));
        }
        got += n as usize;
    }
    Ok(key)
}

/// The table line, key included: only ever written to a 0600 file in the run's dir.
/// dmsetup splits fields at whitespace and targets at newlines, so a field holding
/// either (or any control character) is refused, whatever let it through.
fn table(
    device: &str,
    sectors: u64,
    cipher: &str,
    queues: &str,
    key: &[u8],
) -> anyhow::Result<String> {
    for (field, value) in [("cipher", cipher), ("device", device)] {
        if let Some(ch) = value.chars().find(|c| c.is_whitespace() || c.is_control()) {
            return Err(anyhow!(
                "the dm-crypt table's {field} '{}' holds U+{:04X}: refused before dmsetup",
                crate::units::shown(value),
                ch as u32
            ));
        }
    }
    let mut opts: Vec<&str> = queues.split_whitespace().collect();
    opts.push("sector_size:4096");
    Ok(format!(
        "0 {sectors} crypt {cipher} {} 0 {device} 0 {} {}\n",
        hex::encode(key),
        opts.len(),
        opts.join(" ")
    ))
}

/// Makes a mapping of `cipher` on `disk` and proves the driver it bound. A refusal
/// carries the kernel's reason (dmsetup's error and the kernel log's device-mapper line).
pub fn create(
    progs: &Programs,
    disk: &RamDisk,
    cipher: &Cipher,
    queues: &str,
) -> anyhow::Result<Mapping> {
    use std::os::unix::fs::OpenOptionsExt;
    let guard = Guard::new();
    let name = mapping_name();
    let key = random_key(cipher.key_bits)?;
    let table = table(&disk.path, disk.size / 512, &cipher.spec, queues, &key)?;
    let table_path = disk.dir.join(format!("{name}.table"));
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&table_path)?;
        f.write_all(table.as_bytes())?;
    }
    let before = crate::kernel::proc_crypto();
    let made = run_bounded_bytes(
        &guard,
        &disk.dir,
        &[s(&progs.dmsetup), "create", &name],
        &[],
        Some(&table_path),
        LIMIT,
    );
    let _ = std::fs::remove_file(&table_path);
    // dmsetup removes what it made when the table is refused; a device left without a
    // table (dmsetup killed halfway) is the guard's too.
    let (code, _, err) = made?;
    if code == Some(0) || run(&guard, &disk.dir, &[s(&progs.dmsetup), "info", &name]).is_ok() {
        guard.track(Resource::Undo {
            what: format!("the dm-crypt mapping {name}"),
            argv: vec![
                s(&progs.dmsetup).into(),
                "remove".into(),
                "--retry".into(),
                name.clone(),
            ],
        });
    }
    if code != Some(0) {
        return Err(anyhow!(
            "dmsetup refused {} ({} bits): {}{}",
            cipher.spec,
            cipher.key_bits,
            one_line(&err),
            kernel_reason(&guard, &disk.dir)
        ));
    }
    // Without udev, dmsetup makes the node itself here.
    let _ = run(&guard, &disk.dir, &[s(&progs.dmsetup), "mknodes", &name]);
    let after = crate::kernel::proc_crypto();
    // A capi: spec names an instance: its algorithm is what /proc/crypto calls it.
    let algorithm = after
        .iter()
        .find(|e| e.driver == cipher.kernel_name)
        .map(|e| e.name.clone())
        .unwrap_or_else(|| cipher.kernel_name.clone());
    let bound = crate::kernel::bound_driver(&before, &after, &algorithm)
        .ok_or_else(|| anyhow!("no {algorithm} in /proc/crypto after the mapping was made"))?;
    if cipher.spec.starts_with("capi:") {
        if bound.driver != cipher.kernel_name {
            return Err(anyhow!(
                "{}: the mapping bound {}, not {}",
                cipher.spec,
                bound.driver,
                cipher.kernel_name
            ));
        }
        if bound.proof != crate::kernel::DriverProof::Refcount {
            return Err(anyhow!(
                "{}: no reference count in /proc/crypto rose when the mapping was made, so nothing proves it bound {}",
                cipher.spec,
                cipher.kernel_name
            ));
        }
    }
    let path = format!("/dev/mapper/{name}");
    if !Path::new(&path).exists() {
        return Err(anyhow!("dmsetup made {name}, but there is no {path}"));
    }
    Ok(Mapping { path, bound, guard })
}

/// The kernel log's last two device-mapper lines (the target's reason, then the
/// table's), as "; kernel: ...", or nothing.
fn kernel_reason(guard: &Guard, dir: &Path) -> String {
    let log = run(guard, dir, &["dmesg"]).unwrap_or_default();
    let mut lines: Vec<&str> = log
        .lines()
        .rev()
        .filter(|l| l.contains("device-mapper:"))
        .take(2)
        .map(|l| l.split_once("] ").map_or(l, |p| p.1).trim())
        .collect();
    lines.reverse();
    if lines.is_empty() {
        String::new()
    } else {
        format!("; kernel: {}", lines.join("; "))
    }
}

/// The first 4 KiB through the mapping and underneath it differ: the mapping encrypts
/// (fio's verify proves it reads back what it wrote).
pub fn encrypts(mapping: &Mapping, disk: &RamDisk) -> anyhow::Result<()> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    // O_DIRECT: the RAM disk's page cache may hold an earlier mapping's sectors.
    let head = |p: &str| -> anyhow::Result<Vec<u8>> {
        let mut b = vec![0u8; 8192];
        let at = b.as_ptr().align_offset(4096);
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(p)?
            .read_exact(&mut b[at..at + 4096])?;
        Ok(b[at..at + 4096].to_vec())
    };
    if head(&mapping.path)? == head(&disk.path)? {
        return Err(anyhow!(
            "the RAM disk holds what was written through the mapping: nothing was encrypted"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::table;

    #[test]
    fn a_table_is_one_line_of_whitespace_free_fields() {
        let t = table(
            "/dev/ram0",
            131072,
            "aes-xts-plain64",
            "same_cpu_crypt",
            &[0xab; 4],
        )
        .unwrap();
        assert_eq!(
            t,
            "0 131072 crypt aes-xts-plain64 abababab 0 /dev/ram0 0 2 same_cpu_crypt sector_size:4096\n"
        );
        for cipher in [
            "capi:xts(aes)-plain64 00 0 /dev/sda 0 0\n131072 1 error",
            "capi:xts(aes)-plain64\t",
            "aes\u{1b}-xts-plain64",
            "aes-xts-plain64\u{a0}",
        ] {
            let e = table("/dev/ram0", 8, cipher, "", &[0; 4])
                .unwrap_err()
                .to_string();
            assert!(e.contains("cipher") && e.contains("U+"), "{e}");
        }
        let e = table("/dev/ram0 /dev/sda", 8, "aes-xts-plain64", "", &[0; 4]).unwrap_err();
        assert!(e.to_string().contains("device"), "{e}");
    }
}
