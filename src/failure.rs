//! How a command fails, and the exit code each failure gets: decided here only.
//!
//! Deeper code returns `anyhow::Result` with the message a user reads; a command turns
//! it into a `Failure`, which says what kind of failure it was. A `Failure` raised deep
//! down (inside an `anyhow::Error`) keeps its kind on the way up.

/// How a command failed: bad input (exit 2), a prerequisite this machine lacks (exit 2
/// too: the message says what to install or how to run), or a failure at run time
/// (exit 1), or stopped by SIGINT or SIGTERM before anything was kept (128 + the signal).
/// A study keeps the second apart: a step that cannot run here is "not observable here",
/// one that broke is a failure.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    #[error("{0}")]
    Input(String),
    #[error("{0}")]
    Unavailable(String),
    #[error("{0}")]
    Runtime(String),
    #[error("{0}")]
    Interrupted(String),
}

impl Failure {
    pub fn input(e: impl std::fmt::Display) -> Self {
        Failure::Input(e.to_string())
    }
    pub fn unavailable(e: impl std::fmt::Display) -> Self {
        Failure::Unavailable(e.to_string())
    }
    pub fn runtime(e: impl std::fmt::Display) -> Self {
        Failure::Runtime(e.to_string())
    }
    pub fn exit_code(&self) -> i32 {
        match self {
            Failure::Input(_) | Failure::Unavailable(_) => 2,
            Failure::Runtime(_) => 1,
            Failure::Interrupted(_) => crate::sys::signal::stop_signal()
                .map(|s| 128 + s)
                .unwrap_or(EXIT_INTERRUPTED),
        }
    }
    pub fn message(&self) -> &str {
        match self {
            Failure::Input(m)
            | Failure::Unavailable(m)
            | Failure::Runtime(m)
            | Failure::Interrupted(m) => m,
        }
    }
}

/// An error from below: the `Failure` it carries, else a failure at run time.
impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        match e.downcast::<Failure>() {
            Ok(f) => f,
            Err(e) => Failure::Runtime(e.to_string()),
        }
    }
}

/// Exit code of `compare` when `--fail-on-regression` finds a regressed point.
pub const EXIT_REGRESSED: i32 = 3;

/// Exit code of `compare` when `--fail-on-regression` finds points of BASE missing from NEW: a gate
/// that passed because half the points vanished would prove nothing.
pub const EXIT_MISSING: i32 = 4;

/// Exit code of a run stopped by SIGINT or SIGTERM after keeping its finished points.
pub const EXIT_INTERRUPTED: i32 = 130;
