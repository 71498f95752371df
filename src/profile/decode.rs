//! x86-64 instructions that betray a primitive, decoded with iced-x86 from a function's
//! real bytes. Which mark means which category is decided in classify.rs's table. Builds
//! for other machines leave the decoder out: they profile their own code, not x86-64.

#[cfg(target_arch = "x86_64")]
use iced_x86::{Decoder, DecoderOptions, Instruction, Mnemonic, OpKind};
use std::collections::HashMap;

/// An instruction feature the rules look for.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Mark {
    /// aesenc/aesdec and their VEX/EVEX (VAES) forms: AES rounds.
    Aes,
    /// pclmulqdq/vpclmulqdq: carry-less multiply, GHASH's core.
    Clmul,
    /// sha1rnds4/sha1nexte/sha1msg*: SHA-1 extensions.
    Sha1Ni,
    /// sha256rnds2/sha256msg*: SHA-256 extensions.
    Sha256Ni,
    /// vprold/vprord: 32-bit lane rotates (ChaCha's quarter round on AVX-512).
    Rotate32,
    /// Byte shuffles (pshufb/vpshufb): ChaCha's 16- and 8-bit rotates, but also byte swaps.
    Shuffle,
    /// 32-bit lane adds (paddd/vpaddd): ChaCha's quarter round, SHA message schedules.
    Add32,
    /// 64-bit multiplies (mul/mulx/vpmuludq/vpmadd52*), and adcx/adox carry chains.
    Mul64,
    /// A shift by 2 or an AND with -4: Poly1305 folds the top limb back times 5 (x*4 + x).
    Fold5,
    /// rorx: scalar SHA-2 rounds (Σ functions) without the SHA extensions.
    Rorx,
}

#[cfg(target_arch = "x86_64")]
fn mark(i: &Instruction) -> Option<Mark> {
    use Mnemonic::*;
    Some(match i.mnemonic() {
        Aesenc | Aesenclast | Aesdec | Aesdeclast | Vaesenc | Vaesenclast | Vaesdec
        | Vaesdeclast | Aesimc | Vaesimc | Aeskeygenassist | Vaeskeygenassist => Mark::Aes,
        Pclmulqdq | Vpclmulqdq => Mark::Clmul,
        Sha1rnds4 | Sha1nexte | Sha1msg1 | Sha1msg2 => Mark::Sha1Ni,
        Sha256rnds2 | Sha256msg1 | Sha256msg2 => Mark::Sha256Ni,
        Vprold | Vprord => Mark::Rotate32,
        Pshufb | Vpshufb => Mark::Shuffle,
        Paddd | Vpaddd => Mark::Add32,
        Mul | Mulx | Adcx | Adox | Vpmuludq | Pmuludq | Vpmadd52luq | Vpmadd52huq => Mark::Mul64,
        Shr | Shl | Vpsllq | Vpsrlq | Psllq | Psrlq if immediate(i) == Some(2) => Mark::Fold5,
        And if immediate(i) == Some(-4) => Mark::Fold5,
        Rorx => Mark::Rorx,
        _ => return None,
    })
}

#[cfg(target_arch = "x86_64")]
fn immediate(i: &Instruction) -> Option<i64> {
    (0..i.op_count()).find_map(|n| match i.op_kind(n) {
        OpKind::Immediate8 | OpKind::Immediate8to64 | OpKind::Immediate8to32 => {
            Some(i.immediate(n) as i64)
        }
        OpKind::Immediate32to64 => Some(i.immediate32to64()),
        _ => None,
    })
}

/// A function's instructions with their marks, and the count of each mark.
#[derive(Debug, Default)]
pub struct Decoded {
    /// (address, mark) in address order.
    pub instrs: Vec<(u64, Option<Mark>)>,
    pub counts: HashMap<Mark, usize>,
}

impl Decoded {
    pub fn count(&self, m: Mark) -> usize {
        self.counts.get(&m).copied().unwrap_or(0)
    }

    /// The marks of the instructions within `radius` instructions of `addr` (the one at
    /// or just before it), nearest first.
    pub fn near(&self, addr: u64, radius: usize) -> Vec<Mark> {
        let at = self
            .instrs
            .partition_point(|&(a, _)| a <= addr)
            .saturating_sub(1);
        let mut out = Vec::new();
        for d in 0..=radius {
            for i in [at.checked_sub(d), at.checked_add(d).filter(|_| d > 0)]
                .into_iter()
                .flatten()
            {
                if let Some(&(_, Some(m))) = self.instrs.get(i) {
                    out.push(m);
                }
            }
        }
        out
    }
}

/// Decodes `bytes` as x86-64 code starting at `address`; None for another machine's code
/// (`x86_64` false), and in a build for another machine.
#[cfg(target_arch = "x86_64")]
pub fn decode(bytes: &[u8], x86_64: bool, address: u64) -> Option<Decoded> {
    if !x86_64 {
        return None;
    }
    let mut d = Decoder::with_ip(64, bytes, address, DecoderOptions::NONE);
    let mut out = Decoded::default();
    let mut i = Instruction::default();
    while d.can_decode() {
        d.decode_out(&mut i);
        let m = if i.is_invalid() { None } else { mark(&i) };
        if let Some(m) = m {
            *out.counts.entry(m).or_default() += 1;
        }
        out.instrs.push((i.ip(), m));
    }
    Some(out)
}

#[cfg(not(target_arch = "x86_64"))]
pub fn decode(_bytes: &[u8], _x86_64: bool, _address: u64) -> Option<Decoded> {
    None
}
