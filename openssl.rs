pub struct OpenSsl;
impl OpenSsl { pub fn load_system() -> Result<OpenSsl, String> { Err("stub".into()) } pub fn load_path(_p: &std::path::Path) -> Result<OpenSsl, String> { Err("stub".into()) } }
impl super::Implementation for OpenSsl {
    fn name(&self) -> &str { "openssl" }
    fn version(&self) -> String { "stub".into() }
    fn support(&self, _a: crate::algorithms::Algorithm) -> super::Support { super::Support::No("stub".into()) }
    fn prepare(&self, _a: crate::algorithms::Algorithm, _d: crate::algorithms::Direction, _k: &[u8]) -> Result<Box<dyn super::Operation>, String> { Err("stub".into()) }
}
