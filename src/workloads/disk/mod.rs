//! `cryptobench disk`: dm-crypt over a RAM disk (brd, or a loop device over /dev/shm),
//! per cipher, kernel driver and queue option, with fio: sequential 1 MiB and random
//! 4 KiB reads and writes, each beside the bare RAM disk (the ceiling) and the cipher
//! alone through AF_ALG with the same driver. The run itself is the driver's.

mod args;
mod cleanup;
mod fio;
mod mapping;
mod primitive;
pub mod view;
mod workload;

pub use args::DiskArgs;
use crate::failure::Failure;
use crate::shell::args::CommonArgs;


/// `cryptobench disk`, as the shell runs it.
pub struct Command;

impl crate::shell::measuring::Measuring for Command {
    const NAME: &'static str = "disk";
    const ABOUT: &'static str = "End to end: dm-crypt over a RAM disk per cipher, kernel driver and queue option, with fio, against the bare RAM disk and the cipher alone through AF_ALG";
    const DOCS: &'static str = "See docs/disk.md (and docs/routers.md for --dut) in the sources.";
    type Args = DiskArgs;
    type View = view::DiskView;

    fn common(args: &DiskArgs) -> &CommonArgs {
        &args.common
    }
    fn dut(args: &mut DiskArgs) -> &mut crate::dut::DutArgs {
        &mut args.dut
    }
    fn cleanup_asked(args: &DiskArgs) -> bool {
        args.cleanup
    }
    fn measure(args: DiskArgs) -> Result<crate::driver::Finished, Failure> {
        let out = args.common.output("disk").map_err(Failure::input)?;
        crate::driver::run(&mut workload::Disk::new(args)?, &out)
    }
    fn cleanup() -> Result<Vec<String>, &'static str> {
        if !crate::sys::is_root() {
            return Err(workload::NEED_ROOT);
        }
        Ok(cleanup::run_cleanup())
    }
}

/// What the qemu guest needs shipped to run `disk` (guest/run's GUEST_FILES): the host's
/// fio and every library it links to, as the guest's base leaves fio out (80 MB).
pub fn guest_files() -> Result<Vec<String>, Failure> {
    let fio = workload::program("fio")?;
    let ldd = crate::sys::program::output(std::path::Path::new("ldd"), &[&fio.to_string_lossy()])
        .map_err(|e| {
        Failure::Unavailable(format!(
            "cannot list fio's libraries to ship it into the guest: {e}"
        ))
    })?;
    let mut files = vec![fio.display().to_string()];
    // "libaio.so.1 => /lib/x86_64-linux-gnu/libaio.so.1 (0x...)"
    files.extend(
        ldd.lines()
            .filter_map(|l| l.split("=> ").nth(1)?.split(' ').next())
            .filter(|p| p.starts_with('/'))
            .map(str::to_string),
    );
    Ok(files)
}


