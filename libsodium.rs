pub struct Libsodium;
impl Libsodium { pub fn init() -> Result<Libsodium, String> { Err("stub".into()) } }
impl super::Implementation for Libsodium {
    fn name(&self) -> &str { "libsodium" }
    fn version(&self) -> String { "stub".into() }
    fn support(&self, _a: crate::algorithms::Algorithm) -> super::Support { super::Support::No("stub".into()) }
    fn prepare(&self, _a: crate::algorithms::Algorithm, _d: crate::algorithms::Direction, _k: &[u8]) -> Result<Box<dyn super::Operation>, String> { Err("stub".into()) }
}
