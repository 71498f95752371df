//! How a command fails, and the exit code each failure gets: decided here only.

/// How a command failed: bad input (exit 2), a prerequisite this machine lacks (exit 2
/// too: the message says what to install or how to run), or a failure at run time
/// (exit 1). A study keeps the second apart: a step that cannot run here is "not
/// observable here", one that broke is a failure.
#[derive(Debug)]
pub enum Failure {
    Input(String),
    Unavailable(String),
    Runtime(String),
}

impl Failure {
    pub fn exit_code(&self) -> i32 {
        match self {
            Failure::Input(_) | Failure::Unavailable(_) => 2,
            Failure::Runtime(_) => 1,
        }
    }
    pub fn message(&self) -> &str {
        match self {
            Failure::Input(m) | Failure::Unavailable(m) | Failure::Runtime(m) => m,
        }
    }
}

/// Exit code of a run stopped by SIGINT or SIGTERM after keeping its finished points.
pub const EXIT_INTERRUPTED: i32 = 130;
