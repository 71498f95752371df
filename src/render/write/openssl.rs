//! The `openssl speed` layout, where the speed view provides it (`View::openssl`). It
//! needs every run at once.

use super::{Document, Part, Writer};

pub struct Openssl<'a>(pub &'a mut dyn std::io::Write);

impl Writer for Openssl<'_> {
    fn whole(&self) -> bool {
        true
    }
    fn part(&mut self, part: &dyn Part) -> anyhow::Result<()> {
        self.0.write_all(part.openssl().as_bytes())?;
        Ok(())
    }
    fn finish(self: Box<Self>, _doc: &dyn Document) -> anyhow::Result<()> {
        Ok(())
    }
}
