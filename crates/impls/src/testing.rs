//! What unit tests share with the integration tests: the one skip rule (honouring
//! CRYPTOBENCH_REQUIRE_ALL), and the system libcrypto as the loader finds it.

#[path = "../../../tests/common/skip.rs"]
mod skip_rule;
pub use skip_rule::skip;

/// The file of the system libcrypto, as the openssl implementation loads it (whatever the
/// architecture's library directory), or why there is none.
pub fn system_libcrypto() -> anyhow::Result<std::path::PathBuf> {
    crate::impls::openssl::OpenSsl::load_system().map(|l| l.path().to_path_buf())
}
