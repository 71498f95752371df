//! Where the store and its spool live: the data directory, created private.

use anyhow::anyhow;

/// Where the default store and the spool live: $XDG_DATA_HOME/cryptobench, else
/// ~/.local/share/cryptobench.
pub fn data_dir() -> Option<std::path::PathBuf> {
    let xdg = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty());
    match xdg {
        Some(d) => Some(std::path::PathBuf::from(d).join("cryptobench")),
        None => std::env::var_os("HOME")
            .filter(|v| !v.is_empty())
            .map(|h| std::path::PathBuf::from(h).join(".local/share/cryptobench")),
    }
}

/// Creates `dir` (and parents) readable by the owner only, where it does not exist.
pub fn private_dir(dir: &std::path::Path) -> anyhow::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| anyhow!("cannot create {}: {e}", crate::units::shown_path(dir)))
}
