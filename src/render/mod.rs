//! Output. Every command hands `emit` a document (`write::Document`): its parts made of
//! blocks (`model`), a JSON value, and figures or CSV tables where it has them. `emit`
//! writes it with the format's writer, one file per format in `write/`. The report over
//! any runs is `document`. Records are never re-run here.

pub mod document;
pub mod flame;
#[cfg(feature = "manuals")]
pub mod man;
pub mod model;
pub mod plots;
pub mod trend;
pub mod write;

pub use write::{emit, Document, Format, Part, Single};

pub use crate::analyse::paths::short_version;
