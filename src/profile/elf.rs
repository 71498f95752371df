//! The function around an address in an ELF file, for samples that perf could not name.
//!
//! Debian's libcrypto keeps only its exported symbols; the assembly (AES-NI, GHASH,
//! ChaCha20, Poly1305, SHA) is unnamed. Its `.eh_frame` still describes every function
//! that has unwind information, which the perlasm generators emit, so the FDEs give the
//! function boundaries the symbol table lacks.

use anyhow::anyhow;
use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol, SymbolKind};
use std::collections::HashMap;
use std::path::Path;

/// One function: `[start, end)` in the file's address space.
#[derive(Clone, Debug)]
pub struct Function {
    pub start: u64,
    pub end: u64,
    /// From the symbol tables; None where only `.eh_frame` knows it.
    pub name: Option<String>,
}

/// An executable or shared object, loaded once.
pub struct Elf {
    bytes: Vec<u8>,
    /// Executable sections: (address, file offset, size).
    code: Vec<(u64, u64, u64)>,
    /// Sorted by start; named symbols win over bare FDEs for the same start.
    functions: Vec<Function>,
    /// Loadable segments: (file offset, file size, address).
    segments: Vec<(u64, u64, u64)>,
    /// x86-64 code, the only kind decode.rs reads.
    x86_64: bool,
}

impl Elf {
    pub fn open(path: &Path) -> anyhow::Result<Elf> {
        let bytes =
            std::fs::read(path).map_err(|e| anyhow!("cannot read {}: {e}", path.display()))?;
        let (code, functions, segments, x86_64) = {
            let file = object::File::parse(&*bytes)
                .map_err(|e| anyhow!("{} is not an ELF file: {e}", path.display()))?;
            let code = file
                .sections()
                .filter(|s| s.kind() == object::SectionKind::Text)
                .filter_map(|s| {
                    let (off, size) = s.file_range()?;
                    Some((s.address(), off, size))
                })
                .collect();
            let segments = file
                .segments()
                .map(|s| {
                    let (off, size) = s.file_range();
                    (off, size, s.address())
                })
                .collect();
            let x86_64 = file.architecture() == object::Architecture::X86_64;
            (code, functions(&file), segments, x86_64)
        };
        Ok(Elf {
            bytes,
            code,
            functions,
            segments,
            x86_64,
        })
    }

    /// The address of a file offset. perf reports user addresses as offsets into the
    /// mapped file; in a shared library those equal addresses for code, but not in a
    /// non-PIE executable (Go's, mapped at 0x400000).
    pub fn address_of_offset(&self, offset: u64) -> u64 {
        self.segments
            .iter()
            .find(|&&(off, size, _)| offset >= off && offset < off + size)
            .map_or(offset, |&(off, _, addr)| offset - off + addr)
    }

    /// The function containing `addr`, by symbol (with its size) or by FDE.
    pub fn function_at(&self, addr: u64) -> Option<&Function> {
        let i = self.functions.partition_point(|f| f.start <= addr);
        // Nested ranges are rare (a symbol inside an FDE): search a few back.
        self.functions[..i]
            .iter()
            .rev()
            .take(4)
            .find(|f| addr < f.end)
    }

    pub fn is_x86_64(&self) -> bool {
        self.x86_64
    }

    /// The code bytes of `[start, end)`, None outside the executable sections.
    pub fn code(&self, start: u64, end: u64) -> Option<&[u8]> {
        let &(addr, off, _) = self
            .code
            .iter()
            .find(|&&(a, _, s)| start >= a && end <= a + s)?;
        let from = (off + start - addr) as usize;
        self.bytes.get(from..from + (end - start) as usize)
    }

    /// Every function (the tests survey a whole library).
    #[cfg(test)]
    pub fn functions(&self) -> &[Function] {
        &self.functions
    }
}

fn functions(file: &object::File) -> Vec<Function> {
    let mut by_start: HashMap<u64, Function> = HashMap::new();
    for (start, end) in fde_ranges(file) {
        by_start.insert(
            start,
            Function {
                start,
                end,
                name: None,
            },
        );
    }
    for sym in file.symbols().chain(file.dynamic_symbols()) {
        if sym.kind() != SymbolKind::Text || sym.size() == 0 {
            continue;
        }
        let Ok(name) = sym.name() else { continue };
        by_start.insert(
            sym.address(),
            Function {
                start: sym.address(),
                end: sym.address() + sym.size(),
                name: Some(name.to_string()),
            },
        );
    }
    let mut v: Vec<Function> = by_start.into_values().collect();
    v.sort_by_key(|f| f.start);
    v
}

/// `[start, end)` of every FDE in `.eh_frame`.
fn fde_ranges(file: &object::File) -> Vec<(u64, u64)> {
    use gimli::UnwindSection;
    let Some(section) = file.section_by_name(".eh_frame") else {
        return Vec::new();
    };
    let Ok(data) = section.data() else {
        return Vec::new();
    };
    let mut bases = gimli::BaseAddresses::default().set_eh_frame(section.address());
    if let Some(text) = file.section_by_name(".text") {
        bases = bases.set_text(text.address());
    }
    let eh = gimli::EhFrame::new(data, gimli::LittleEndian);
    let mut out = Vec::new();
    let mut entries = eh.entries(&bases);
    while let Ok(Some(entry)) = entries.next() {
        if let gimli::CieOrFde::Fde(partial) = entry {
            if let Ok(fde) = partial.parse(|s, b, o| s.cie_from_offset(b, o)) {
                let start = fde.initial_address();
                out.push((start, start + fde.len()));
            }
        }
    }
    out
}
