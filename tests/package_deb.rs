//! scripts/package-deb: the .deb of this build installs into a clean Debian 12 root
//! (debootstrap minbase with man-db and bash-completion, kept as a tarball in
//! ~/.cache/cryptobench/deb-root), with `apt-get install ./…deb` pulling its Depends; in
//! it `cryptobench --version`, a short `speed`, `man cryptobench-speed` and the bash
//! completion work; purged, none of its files is left. An architecture not built: exit 2,
//! one line. About 20 s once the root is cached (its first debootstrap: about 2 min).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn script(arch: &str, target: &Path, dist: &Path) -> Output {
    common::package_script("package-deb", &[arch], target, dist)
}

#[test]
fn an_architecture_not_built_is_refused_in_one_line() {
    common::package_refusals(
        "package-deb",
        &[
            ("arm64", "no arm64 binary at"),
            ("mips", "unknown architecture"),
        ],
    );
}

/// The clean root, from the cache or made once by debootstrap; None when it cannot be.
fn clean_root() -> Result<PathBuf, String> {
    let cache = PathBuf::from(std::env::var("HOME").unwrap_or_default())
        .join(".cache/cryptobench/deb-root");
    let tarball = cache.join("bookworm-minbase.tar.gz");
    if !tarball.exists() {
        let made = cache.join("bookworm");
        let _ = std::fs::remove_dir_all(&made);
        std::fs::create_dir_all(&cache).map_err(|e| e.to_string())?;
        let o = Command::new("debootstrap")
            .args([
                "--variant=minbase",
                "--include=man-db,bash-completion",
                "bookworm",
            ])
            .arg(&made)
            .arg("http://deb.debian.org/debian")
            .output()
            .map_err(|e| format!("debootstrap: {e} (apt-get install debootstrap)"))?;
        if !o.status.success() {
            return Err(format!("debootstrap failed: {}", common::stderr(&o)));
        }
        sh(&format!(
            "tar -C {} -czf {}.tmp . && mv {1}.tmp {1} && rm -rf {0}",
            made.display(),
            tarball.display()
        ));
    }
    let root = common::tempdir(Path::new(env!("CARGO_TARGET_TMPDIR")), "deb-root");
    sh(&format!(
        "tar -C {} -xzf {}",
        root.display(),
        tarball.display()
    ));
    Ok(root)
}

fn sh(cmd: &str) -> String {
    let o = Command::new("sh").args(["-c", cmd]).output().unwrap();
    assert!(o.status.success(), "{cmd}: {}", common::stderr(&o));
    common::stdout(&o)
}

/// /proc mounted in the root while the test runs, unmounted however it ends.
struct Proc(PathBuf);
impl Drop for Proc {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn the_package_installs_works_and_purges_cleanly_in_a_clean_debian_12() {
    if !common::is_root() {
        common::skip("installing into a chroot needs root");
        return;
    }
    let root = match clean_root() {
        Ok(r) => r,
        Err(why) => {
            common::skip(&format!("no clean Debian 12 root: {why}"));
            return;
        }
    };
    // This build's binary, as `cargo build --release` leaves it.
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_cryptobench"));
    let target = bin.parent().unwrap().parent().unwrap();
    let o = script("amd64", target, &root.join("tmp"));
    assert!(o.status.success(), "{}", common::stderr(&o));
    let deb = common::stdout(&o).trim().to_string();
    let inside = format!(
        "/tmp/{}",
        Path::new(&deb).file_name().unwrap().to_str().unwrap()
    );
    sh(&format!("mount -t proc proc {}/proc", root.display()));
    let _proc = Proc(root.join("proc"));
    let chroot = |cmd: &str| sh(&format!("chroot {} sh -c '{cmd}'", root.display()));
    chroot(&format!(
        "apt-get install -y --no-install-recommends {inside}"
    ));
    assert!(chroot("cryptobench --version").starts_with("cryptobench "));
    let speed = chroot(
        "HOME=/root cryptobench speed --impl ring --alg aes-128-gcm --sizes 1k --time 0.05 --no-store --format json",
    );
    assert!(speed.contains("\"throughput_bps\""), "{speed}");
    assert!(chroot("MANPAGER=cat man cryptobench-speed").contains("cryptobench-speed"));
    let complete = chroot(
        "bash -c \". /usr/share/bash-completion/bash_completion; _completion_loader cryptobench; complete -p cryptobench\"",
    );
    assert!(
        complete.contains("-F _cryptobench cryptobench"),
        "{complete}"
    );
    let files = chroot("dpkg -L cryptobench");
    chroot("apt-get purge -y cryptobench");
    let left: Vec<&str> = files
        .lines()
        .filter(|f| root.join(f.trim_start_matches('/')).is_file())
        .collect();
    assert!(left.is_empty(), "left after purge: {left:?}");
    drop(_proc);
    let _ = std::fs::remove_dir_all(&root);
}
