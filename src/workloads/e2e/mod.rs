//! The end-to-end harness under the workloads that run real programs (`tls`, `vpn`,
//! `disk`): the test bed of two network namespaces (`lab`), the CPU window of a point
//! (each process and thread, the kernel workers, each CPU's softirq, the machine) and the
//! CPU clock over it. What a point's window means (disturbed, its limit) is
//! `record::window` and `analyse::limit`; the OS pieces below it are `crate::sys`.

pub mod clock;
pub mod cpu;
pub mod ends;
pub mod lab;
pub mod window;
