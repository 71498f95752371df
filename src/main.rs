//! The `cryptobench` command: all of it is the library (src/lib.rs). One crate for both
//! would compile it again for each way it is linked (the musl builds link one static and
//! one dynamic binary): a library is compiled once per target and linked twice.

fn main() {
    cryptobench::main()
}
