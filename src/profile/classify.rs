//! Every sample into one category a network engineer recognises, by ONE rules table.
//!
//! How the table is read (first match wins within each stage):
//! 1. `Leaf` rules on the leaf frame's name. Debian's libcrypto has no names for its
//!    assembly, so names come from our own reading of the ELF (symbols with sizes, then
//!    `.eh_frame` boundaries), never from perf's nearest-preceding-export guess.
//! 2. `Stitched` names (one function doing two primitives, e.g. AES-GCM) and unnamed
//!    user code are decoded: the nearest marked instruction within `RADIUS`
//!    instructions of the sample decides through the `Near` rules (so a stitched loop
//!    splits into AES and GHASH by where the samples land); without one, the function's
//!    instruction mix decides through the `Shape` rules.
//! 3. `Under` rules on the whole stack (the kernel call a sample is part of), then
//!    `Stack` rules on every frame, leaf first: the nearest matching caller decides
//!    (a spin lock under tcp_sendmsg is network stack, under schedule it is scheduler).
//! 4. Kernel leaves left over are "kernel-other", named user leaves "other-user";
//!    unnamed code with no telling instructions, or no leaf at all, stays "unknown".

use super::decode::{self, Decoded, Mark};
use super::elf::Elf;
use super::perf::{Frame, Sample};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    Aes,
    Ghash,
    Chacha20,
    Poly1305,
    Sha1,
    Sha2,
    Hmac,
    Protocol,
    Memcpy,
    KernelNet,
    Syscall,
    CryptoApi,
    KernelTls,
    SchedIdle,
    KernelOther,
    OtherUser,
    Unknown,
}

impl Category {
    /// Every category, for the flame graphs' palette.
    #[cfg(feature = "flame")]
    pub const ALL: [Category; 17] = [
        Category::Aes,
        Category::Ghash,
        Category::Chacha20,
        Category::Poly1305,
        Category::Sha1,
        Category::Sha2,
        Category::Hmac,
        Category::Protocol,
        Category::Memcpy,
        Category::KernelNet,
        Category::Syscall,
        Category::CryptoApi,
        Category::KernelTls,
        Category::SchedIdle,
        Category::KernelOther,
        Category::OtherUser,
        Category::Unknown,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Category::Aes => "aes",
            Category::Ghash => "ghash",
            Category::Chacha20 => "chacha20",
            Category::Poly1305 => "poly1305",
            Category::Sha1 => "sha1",
            Category::Sha2 => "sha2",
            Category::Hmac => "hmac",
            Category::Protocol => "protocol",
            Category::Memcpy => "memcpy",
            Category::KernelNet => "kernel-net",
            Category::Syscall => "syscall",
            Category::CryptoApi => "crypto-api",
            Category::KernelTls => "kernel-tls",
            Category::SchedIdle => "sched-idle",
            Category::KernelOther => "kernel-other",
            Category::OtherUser => "other-user",
            Category::Unknown => "unknown",
        }
    }

    /// Bulk cryptography: ciphers, MACs and hashes (what offload could take away).
    pub fn is_crypto(self) -> bool {
        matches!(
            self,
            Category::Aes
                | Category::Ghash
                | Category::Chacha20
                | Category::Poly1305
                | Category::Sha1
                | Category::Sha2
                | Category::Hmac
        )
    }
}

/// The function's instruction mix, for samples with no marked instruction nearby.
#[derive(Clone, Copy, Debug)]
pub enum Shape {
    /// Any of this mark at all.
    Has(Mark),
    /// ChaCha20 without AVX-512 rotates: byte shuffles (the 16/8-bit rotates) and 32-bit
    /// adds, with no AES, carry-less or 64-bit multiplies (which would be GCM or Poly1305).
    ChachaMix,
    /// The same allowing 64-bit multiplies: ChaCha20 stitched with Poly1305 in one
    /// function (Go's chacha20Poly1305Seal/Open), where shuffles and adds near the sample
    /// are the ChaCha half.
    ChachaStitched,
    /// Poly1305: 64-bit multiplies and the times-5 fold (shift by 2 / AND -4), no AES
    /// or carry-less multiply. Bignum code (RSA, ECDHE) multiplies but does not fold.
    PolyMix,
    /// SHA-2 without the extensions: rorx rounds, no vector 32-bit rotates or multiplies.
    Sha2Mix,
}

#[derive(Clone, Copy, Debug)]
pub enum When {
    /// The leaf's name matches a pattern (`^x`: starts with x; otherwise contains).
    Leaf(&'static [&'static str]),
    /// The leaf's name says two primitives in one function: decode it to split them;
    /// where it cannot be read (the kernel), the rule's category stands.
    Stitched(&'static [&'static str]),
    /// A marked instruction is the nearest one to the sample, and the function's shape
    /// (if given) allows it.
    Near(Mark, Option<Shape>),
    /// The leaf function's instruction mix.
    Shape(Shape),
    /// Any frame's name matches (nearest the leaf wins); kernel frames only if `kernel`.
    Stack {
        kernel: bool,
        names: &'static [&'static str],
    },
    /// Any frame's object path contains one of these.
    Object(&'static [&'static str]),
    /// Any kernel frame's name matches, however far from the leaf: the call this sample
    /// is part of decides over what its inner frames look like (AF_ALG's sock_kmalloc
    /// is the crypto interface's cost, not the network stack's).
    Under(&'static [&'static str]),
}

pub struct Rule {
    pub when: When,
    pub then: Category,
}

use Category as C;
use When::*;

/// Instructions either side of the sample searched by the `Near` rules.
pub const RADIUS: usize = 6;

/// THE rules table.
pub const RULES: &[Rule] = &[
    // 1. Names of the leaf.
    Rule {
        when: Stitched(&[
            "aesni_gcm",
            "aes_gcm_enc",
            "aes_gcm_dec",
            "gcm_enc_update",
            "gcm_dec_update",
            "aesni_cbc_sha",
            "aes128gcm",
            "aes256gcm",
        ]),
        then: C::Aes,
    },
    Rule {
        when: Stitched(&["chacha20poly1305", "chacha20_poly1305", "chacha20Poly1305"]),
        then: C::Chacha20,
    },
    Rule {
        when: Leaf(&[
            "ghash",
            "gcm_gmult",
            "gcm_init_",
            "clmul",
            "polyval",
            "gcmAes",
        ]),
        then: C::Ghash,
    },
    Rule {
        when: Leaf(&["hmac", "HMAC"]),
        then: C::Hmac,
    },
    // Go hashes map keys with AES instructions: not encryption.
    Rule {
        when: Leaf(&["runtime.aeshash", "runtime.memhash", "runtime.strhash"]),
        then: C::OtherUser,
    },
    // libtomcrypt (Dropbear's crypto) names AES by its original name.
    Rule {
        when: Leaf(&["aes", "AES", "Aes", "rijndael"]),
        then: C::Aes,
    },
    Rule {
        when: Leaf(&["chacha", "ChaCha", "Chacha", "hchacha"]),
        then: C::Chacha20,
    },
    Rule {
        when: Leaf(&["poly1305", "Poly1305"]),
        then: C::Poly1305,
    },
    Rule {
        when: Leaf(&["sha1", "SHA1", "sha1_"]),
        then: C::Sha1,
    },
    Rule {
        when: Leaf(&[
            "sha256", "sha512", "SHA256", "SHA512", "sha224", "sha384", "sha2",
        ]),
        then: C::Sha2,
    },
    Rule {
        when: Leaf(&[
            "memcpy",
            "memmove",
            "^copy_user",
            "^copy_page",
            "rep_movs",
            "^_copy_to_",
            "^_copy_from_",
            "^copyin",
            "^copyout",
            "^__copy_",
            "runtime.memmove",
            "^copy_mc",
        ]),
        then: C::Memcpy,
    },
    Rule {
        when: Leaf(&[
            "^entry_SYSCALL",
            "^syscall_return",
            "^syscall_exit",
            "^exit_to_user_mode",
            "^syscall_enter",
            "^__x64_sys_",
            "^do_syscall_64",
            "^entry_SYSRET",
            "^__entry_text",
            "^error_entry",
            "^restore_regs_and_return",
        ]),
        then: C::Syscall,
    },
    Rule {
        when: Leaf(&[
            "^default_idle",
            "^cpuidle",
            "^do_idle",
            "safe_halt",
            "^poll_idle",
            "^acpi_idle",
            "^intel_idle",
            "^__schedule",
            "^schedule",
            "^finish_task_switch",
            "^pick_next_task",
            "runtime.futex",
            "runtime.usleep",
            "runtime.findRunnable",
            "runtime.findrunnable",
            "runtime.schedule",
            "runtime.osyield",
            "runtime.nanotime",
            "runtime.stealWork",
        ]),
        then: C::SchedIdle,
    },
    // 2. Instructions: the nearest marked one decides...
    Rule {
        when: Near(Mark::Aes, None),
        then: C::Aes,
    },
    Rule {
        when: Near(Mark::Clmul, None),
        then: C::Ghash,
    },
    Rule {
        when: Near(Mark::Sha256Ni, None),
        then: C::Sha2,
    },
    Rule {
        when: Near(Mark::Sha1Ni, None),
        then: C::Sha1,
    },
    Rule {
        when: Near(Mark::Rotate32, None),
        then: C::Chacha20,
    },
    Rule {
        when: Near(Mark::Mul64, Some(Shape::PolyMix)),
        then: C::Poly1305,
    },
    Rule {
        when: Near(Mark::Fold5, Some(Shape::PolyMix)),
        then: C::Poly1305,
    },
    Rule {
        when: Near(Mark::Shuffle, Some(Shape::ChachaStitched)),
        then: C::Chacha20,
    },
    Rule {
        when: Near(Mark::Add32, Some(Shape::ChachaStitched)),
        then: C::Chacha20,
    },
    Rule {
        when: Near(Mark::Rorx, Some(Shape::Sha2Mix)),
        then: C::Sha2,
    },
    // ...else the function's mix (stitched code: the more frequent primitive first).
    Rule {
        when: Shape(Shape::Has(Mark::Aes)),
        then: C::Aes,
    },
    Rule {
        when: Shape(Shape::Has(Mark::Clmul)),
        then: C::Ghash,
    },
    Rule {
        when: Shape(Shape::Has(Mark::Sha256Ni)),
        then: C::Sha2,
    },
    Rule {
        when: Shape(Shape::Has(Mark::Sha1Ni)),
        then: C::Sha1,
    },
    Rule {
        when: Shape(Shape::Has(Mark::Rotate32)),
        then: C::Chacha20,
    },
    Rule {
        when: Shape(Shape::PolyMix),
        then: C::Poly1305,
    },
    Rule {
        when: Shape(Shape::ChachaMix),
        then: C::Chacha20,
    },
    Rule {
        when: Shape(Shape::Sha2Mix),
        then: C::Sha2,
    },
    // 3. Callers. The kernel crypto interface's per-call work (AF_ALG socket buffers,
    // scatterlists, pages, request setup) wherever it sits under an AF_ALG call.
    Rule {
        when: Under(&[
            "^af_alg_",
            "^alg_sendmsg",
            "^alg_recvmsg",
            "^alg_accept",
            "^skcipher_recvmsg",
            "^_skcipher_recvmsg",
            "^aead_recvmsg",
            "^_aead_recvmsg",
            "^hash_sendmsg",
            "^hash_recvmsg",
            "^hash_sendpage",
            "^skcipher_sendmsg",
            "^aead_sendmsg",
        ]),
        then: C::CryptoApi,
    },
    // Kernel TLS's own work (records, scatterlists, the AEAD request, the copy of the
    // payload into the record) under the socket's sendmsg/sendfile; its cipher's leaves
    // are AES/GHASH/ChaCha20 above, whoever called them.
    Rule {
        when: Under(&[
            "^tls_sw_",
            "^tls_push_",
            "^tls_tx_records",
            "^tls_do_encryption",
            "^tls_encrypt",
            "^tls_decrypt",
            "^tls_rx_",
            "^tls_setsockopt",
            "^tls_sk_proto",
            "^tls_sendpage",
            "^bpf_exec_tx_verdict",
            "^decrypt_skb",
        ]),
        then: C::KernelTls,
    },
    Rule {
        when: Stack {
            kernel: true,
            names: &[
                "^tcp_",
                "^__tcp_",
                "^udp_",
                "^__udp_",
                "^udpv6_",
                "^ip_",
                "^__ip_",
                "^ip6_",
                "^ipv6_",
                "^inet_",
                "^inet6_",
                "^veth_",
                "^tun_",
                "^netif_",
                "^__netif_",
                "^napi_",
                "^__napi_",
                "^net_rx",
                "^net_tx",
                "^process_backlog",
                "^__dev_queue",
                "^dev_hard_start",
                "^loopback_xmit",
                "^skb_",
                "^__skb_",
                "^sock_",
                "^__sock_",
                "^sk_",
                "^__sys_sendto",
                "^__sys_recvfrom",
                "^__sys_sendmsg",
                "^__sys_recvmsg",
                "^nf_",
                "^ipt_",
                "^wg_",
                "^__kfree_skb",
                "^kfree_skb",
                "^consume_skb",
                "^alloc_skb",
                "^__alloc_skb",
                "^tcp",
                "^do_softirq",
                "^__do_softirq",
                "^net_",
            ],
        },
        then: C::KernelNet,
    },
    Rule {
        when: Stack {
            kernel: true,
            names: &[
                "^schedule",
                "^__schedule",
                "^do_idle",
                "^cpu_startup_entry",
                "^futex_wait",
                "^do_nanosleep",
                "^ep_poll",
                "^do_epoll_wait",
            ],
        },
        then: C::SchedIdle,
    },
    Rule {
        when: Object(&["libssl.so", "/openvpn", "wireguard-go", "libboringssl"]),
        then: C::Protocol,
    },
    Rule {
        when: Stack {
            kernel: false,
            names: &[
                "golang.zx2c4.com/wireguard/",
                "^ssl3_",
                "^tls1_",
                "^tls_",
                "^SSL_",
            ],
        },
        then: C::Protocol,
    },
    Rule {
        when: Stack {
            kernel: true,
            names: &["^entry_SYSCALL", "^do_syscall_64", "^__x64_sys_"],
        },
        then: C::Syscall,
    },
];

/// A sample's category and the names of its frames (root first) for flame graphs.
pub struct Classified {
    pub category: Category,
    pub stack: Vec<String>,
}

/// Classifies samples, reading each object file and decoding each function once.
#[derive(Default)]
pub struct Classifier {
    elves: HashMap<String, Option<Elf>>,
    decoded: HashMap<(String, u64), Decoded>,
}

/// One frame with the name we trust and where its code lives.
struct Resolved<'a> {
    name: Option<String>,
    kernel: bool,
    /// (object path, function start, function end) for decodable user code.
    code: Option<(&'a str, u64, u64)>,
    /// The address in the object file (perf's ip is an offset into the mapped file).
    ip: u64,
    frame: &'a Frame,
}

fn matches(name: &str, patterns: &[&str]) -> bool {
    patterns.iter().any(|p| match p.strip_prefix('^') {
        Some(prefix) => name.starts_with(prefix),
        None => name.contains(p),
    })
}

fn shape_holds(s: Shape, d: &Decoded) -> bool {
    let has = |m| d.count(m) > 0;
    let none_of = |ms: &[Mark]| ms.iter().all(|&m| !has(m));
    match s {
        Shape::Has(m) => has(m),
        Shape::ChachaMix => {
            d.count(Mark::Shuffle) >= 4
                && d.count(Mark::Add32) >= 8
                && none_of(&[
                    Mark::Aes,
                    Mark::Clmul,
                    Mark::Mul64,
                    Mark::Sha256Ni,
                    Mark::Sha1Ni,
                    Mark::Rorx,
                ])
        }
        Shape::ChachaStitched => {
            d.count(Mark::Shuffle) >= 4
                && d.count(Mark::Add32) >= 8
                && none_of(&[
                    Mark::Aes,
                    Mark::Clmul,
                    Mark::Sha256Ni,
                    Mark::Sha1Ni,
                    Mark::Rorx,
                ])
        }
        Shape::PolyMix => {
            d.count(Mark::Mul64) >= 2 && has(Mark::Fold5) && none_of(&[Mark::Aes, Mark::Clmul])
        }
        Shape::Sha2Mix => {
            d.count(Mark::Rorx) >= 8
                && none_of(&[Mark::Aes, Mark::Clmul, Mark::Rotate32, Mark::Mul64])
        }
    }
}

/// The category the instructions around `ip` give, by the `Near` then `Shape` rules.
pub fn by_instructions(d: &Decoded, ip: u64) -> Option<Category> {
    for m in d.near(ip, RADIUS) {
        let hit = RULES.iter().find(|r| match r.when {
            Near(mark, gate) => mark == m && gate.is_none_or(|g| shape_holds(g, d)),
            _ => false,
        });
        if let Some(r) = hit {
            return Some(r.then);
        }
    }
    RULES.iter().find_map(|r| match r.when {
        Shape(s) if shape_holds(s, d) => Some(r.then),
        _ => None,
    })
}

impl Classifier {
    fn elf(&mut self, path: &str) -> Option<&Elf> {
        self.elves
            .entry(path.to_string())
            .or_insert_with(|| {
                if path.starts_with('[') {
                    None
                } else {
                    Elf::open(Path::new(path)).ok()
                }
            })
            .as_ref()
    }

    fn resolve<'a>(&mut self, f: &'a Frame) -> Resolved<'a> {
        let kernel = f.dso.as_deref().is_some_and(|d| d.starts_with("[kernel"))
            || f.ip >= 0xffff_8000_0000_0000;
        let Some(dso) = f.dso.as_deref().filter(|_| !kernel) else {
            return Resolved {
                name: f.symbol.clone(),
                kernel,
                code: None,
                ip: f.ip,
                frame: f,
            };
        };
        let Some(elf) = self.elf(dso) else {
            return Resolved {
                name: f.symbol.clone(),
                kernel,
                code: None,
                ip: f.ip,
                frame: f,
            };
        };
        let ip = elf.address_of_offset(f.ip);
        match elf.function_at(ip) {
            Some(func) => Resolved {
                name: func.name.clone(),
                kernel,
                code: Some((dso, func.start, func.end)),
                ip,
                frame: f,
            },
            // No boundary known: decode forward from the sample itself.
            None => Resolved {
                name: None,
                kernel,
                code: Some((dso, ip, ip + 64)),
                ip,
                frame: f,
            },
        }
    }

    fn decoded(&mut self, dso: &str, start: u64, end: u64) -> Option<&Decoded> {
        let key = (dso.to_string(), start);
        if !self.decoded.contains_key(&key) {
            let elf = self.elf(dso)?;
            // The marks are x86-64 instructions: other machines' code (an ARM DUT's) is
            // told by its names alone, never by its bytes read as x86-64.
            let decoded = decode::decode(elf.code(start, end)?, elf.is_x86_64(), start)?;
            self.decoded.insert(key.clone(), decoded);
        }
        self.decoded.get(&key)
    }

    pub fn classify(&mut self, s: &Sample) -> Classified {
        let frames: Vec<Resolved> = s.frames.iter().map(|f| self.resolve(f)).collect();
        let category = self.category(&frames);
        let mut stack: Vec<String> = frames.iter().rev().map(frame_name).collect();
        if stack.is_empty() {
            stack.push(format!("{} [unknown]", s.comm));
        } else {
            stack.insert(0, s.comm.clone());
        }
        if category.is_crypto() {
            if let Some(leaf) = stack.last_mut() {
                *leaf = format!("{leaf} [{}]", category.name());
            }
        }
        Classified { category, stack }
    }

    fn category(&mut self, frames: &[Resolved]) -> Category {
        let Some(leaf) = frames.first() else {
            return C::Unknown;
        };
        let leaf_name = leaf.name.as_deref().unwrap_or("");
        let mut decode_fallback = None;
        for r in RULES {
            match r.when {
                Stitched(p) if matches(leaf_name, p) => {
                    decode_fallback = Some(r.then);
                    break;
                }
                Leaf(p) if matches(leaf_name, p) => return r.then,
                _ => {}
            }
        }
        if leaf.name.is_none() || decode_fallback.is_some() {
            if let Some((dso, start, end)) = leaf.code {
                let ip = leaf.ip;
                if let Some(c) = self
                    .decoded(dso, start, end)
                    .and_then(|d| by_instructions(d, ip))
                {
                    return c;
                }
            }
            if let Some(c) = decode_fallback {
                return c;
            }
        }
        let under = RULES.iter().find(|r| match r.when {
            Under(names) => frames
                .iter()
                .any(|f| f.kernel && f.name.as_deref().is_some_and(|n| matches(n, names))),
            _ => false,
        });
        if let Some(r) = under {
            return r.then;
        }
        for f in frames {
            let name = f.name.as_deref().unwrap_or("");
            let dso = f.frame.dso.as_deref().unwrap_or("");
            let hit = RULES.iter().find(|r| match r.when {
                Stack { kernel, names } => kernel == f.kernel && matches(name, names),
                Object(paths) => !f.kernel && matches(dso, paths),
                _ => false,
            });
            if let Some(r) = hit {
                return r.then;
            }
        }
        if leaf.kernel {
            C::KernelOther
        } else if leaf.name.is_some() {
            C::OtherUser
        } else {
            C::Unknown
        }
    }
}

fn frame_name(f: &Resolved) -> String {
    match (&f.name, f.frame.dso.as_deref()) {
        (Some(n), _) => n.replace(';', ":"),
        (None, Some(d)) => {
            let base = d.rsplit('/').next().unwrap_or(d);
            match f.code {
                Some((_, start, _)) => format!("{base}+{start:#x}"),
                None => format!("{base}+{:#x}", f.ip),
            }
        }
        (None, None) => "[unknown]".into(),
    }
}

#[cfg(test)]
mod tests;
