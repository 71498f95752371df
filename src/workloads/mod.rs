//! Subcommands: one file or folder each. The measuring ones are declared and listed at
//! once by `measuring!`: a new workload is its folder, one line there, and its record
//! type's line in record/any.rs.

pub mod compare;
pub mod e2e;
pub mod enc;
pub mod history;
pub mod judge_series;
pub mod paths;
pub mod probe;
pub mod report;
pub mod table;
pub mod verify;

macro_rules! measuring {
    ($($(#[$cfg:meta])* $w:ident,)*) => {
        $($(#[$cfg])* pub mod $w;)*
        /// Every measuring workload, in the order `--help` and a report show them.
        pub static MEASURING: &[&dyn table::Entry] =
            &[$($(#[$cfg])* &table::Listed::<$w::Command>::new(),)*];
        /// Every workload's view, in the same order.
        pub static VIEWS: &[&dyn crate::render::document::WorkloadView] = &[$($(#[$cfg])*
            &crate::render::document::Registered::<
                <$w::Command as crate::shell::measuring::Measuring>::View,
            >::new(),)*];
    };
}

measuring! {
    speed,
    tls,
    vpn,
    #[cfg(feature = "disk")]
    disk,
    ssh,
}
