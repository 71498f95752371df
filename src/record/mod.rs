//! The Record: one self-describing measured point, and the run's Environment.
//! Both are written as JSON Lines as soon as they exist; see docs/records.md.

use anyhow::anyhow;
pub mod any;
pub mod disk;
pub mod end;
pub mod envelope;
pub mod environment;
pub mod identity;
pub mod profile;
pub mod speed;
pub mod ssh;
pub mod tls;
pub mod vpn;
pub mod window;

pub use any::{AnyRecord, Listed, RecordData, Workload, WorkloadSettings};
pub use end::{AnalysisInputs, Coordinate, Exclusion, ExclusionKind, RunEnd};
pub use envelope::{LineKind, Record, SCHEMA};
pub use environment::{Environment, Library, Settings, Unavailable};
use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

pub use crate::impls::openssl::build::OpenSslBuild;

/// Appends JSON Lines to a file and flushes each line, so that an interrupted run keeps
/// every finished point. Lines are synced to disk only where that means something (a
/// regular file); a pipe, FIFO or /dev/null just gets the bytes.
pub struct JsonLinesWriter {
    file: File,
    shown: String,
    sync: bool,
}

impl JsonLinesWriter {
    /// Refuses what can never be a results file, without creating or touching anything:
    /// call before any other work, then `append` when the run starts.
    pub fn check(path: &Path) -> anyhow::Result<()> {
        let shown = crate::units::shown_path(path);
        if path.as_os_str() == "-" {
            return Err(anyhow!(
                "--output -: give a file path (for results on stdout use --format json)"
            ));
        }
        match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => {
                Err(anyhow!("--output {shown} is a directory: give a file path"))
            }
            Ok(_) => Ok(()),
            Err(_) => {
                let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
                match parent.map(std::fs::metadata) {
                    Some(Ok(m)) if !m.is_dir() => Err(anyhow!(
                        "--output {shown}: {} is not a directory: give a writable file path",
                        crate::units::shown_path(parent.unwrap_or(path))
                    )),
                    Some(Err(e)) => Err(anyhow!(
                        "--output {shown}: {e}: give a file path in an existing directory"
                    )),
                    _ => Ok(()),
                }
            }
        }
    }

    pub fn append(path: &Path) -> anyhow::Result<Self> {
        Self::check(path)?;
        let shown = crate::units::shown_path(path);
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(path)
            .or_else(|_| OpenOptions::new().create(true).append(true).open(path))
            .map_err(|e| anyhow!("cannot open --output {shown}: {e}: give a writable file path"))?;
        let meta = file
            .metadata()
            .map_err(|e| anyhow!("cannot open --output {shown}: {e}"))?;
        let sync = meta.is_file();
        // A run killed mid-line leaves a partial last line: start ours on a fresh one.
        if sync && meta.len() > 0 {
            use std::io::{Read, Seek, SeekFrom};
            let mut last = [0u8; 1];
            let ends_clean = file.seek(SeekFrom::End(-1)).is_ok()
                && file.read_exact(&mut last).is_ok()
                && last[0] == b'\n';
            if !ends_clean {
                file.write_all(b"\n")
                    .map_err(|e| anyhow!("cannot write --output {shown}: {e}"))?;
            }
        }
        Ok(JsonLinesWriter { file, shown, sync })
    }

    /// Lines on standard output (an agent's, read by its controller).
    pub fn stdout() -> anyhow::Result<Self> {
        use std::os::fd::AsFd;
        let fd = std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| anyhow!("cannot write to stdout: {e}"))?;
        Ok(JsonLinesWriter {
            file: File::from(fd),
            shown: "stdout".into(),
            sync: false,
        })
    }

    pub fn write<T: Serialize>(&mut self, value: &T) -> anyhow::Result<()> {
        let mut line = serde_json::to_string(value)?;
        line.push('\n');
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| {
                if self.sync {
                    self.file.sync_data()
                } else {
                    Ok(())
                }
            })
            .map_err(|e| anyhow!("cannot write --output {}: {e}", self.shown))
    }
}

pub mod read;

/// Where a run's lines go as they are made: the `--output` file and the store.
pub trait Sink {
    fn environment(&mut self, env: &Environment) -> anyhow::Result<()>;
    fn record(&mut self, record: &AnyRecord) -> anyhow::Result<()>;
    fn end(&mut self, end: &RunEnd) -> anyhow::Result<()>;
}

impl Sink for JsonLinesWriter {
    fn environment(&mut self, env: &Environment) -> anyhow::Result<()> {
        self.write(env)
    }
    fn record(&mut self, record: &AnyRecord) -> anyhow::Result<()> {
        self.write(record)
    }
    fn end(&mut self, end: &RunEnd) -> anyhow::Result<()> {
        self.write(end)
    }
}
