//! The `openssl speed` layout, where the speed view provides it (`View::openssl`). It
//! needs every run at once.

use super::parts::Document;
use std::io;

pub fn write(doc: &mut dyn Document, whole: bool, out: &mut dyn io::Write) -> anyhow::Result<()> {
    doc.parts(whole, &mut |part| {
        Ok(out.write_all(part.openssl().as_bytes())?)
    })
}
