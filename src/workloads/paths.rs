//! The implementations a command works on, shared by `speed` and `verify`: the registry
//! with `--libcrypto` builds and `--variant` instances, the test-only corrupt wrapper,
//! and one display label per path.

use crate::algorithms::Algorithm;
use crate::failure::Failure;
use crate::impls::{self, Implementation, Unavailable};
use crate::workloads::speed::plan;
use std::path::PathBuf;

/// Which paths a command works on.
#[derive(clap::Args, Clone)]
pub struct PathArgs {
    /// Implementations, comma-separated, globs allowed (openssl, aws-lc, ring, rustcrypto, libsodium, boringssl, af_alg, cryptodev).
    #[arg(long = "impl", value_name = "LIST")]
    pub impls: Option<String>,
    /// Algorithms, comma-separated, globs allowed (e.g. aes-*-gcm,sha256). speed's default
    /// is the symmetric set deployed today (no public-key, AES-192 or legacy); '*' is all.
    #[arg(long = "alg", value_name = "LIST")]
    pub algs: Option<String>,
    /// Also use this libcrypto build (OpenSSL 1.1 or 3.x); repeatable.
    #[arg(long, value_name = "PATH")]
    pub libcrypto: Vec<PathBuf>,
    /// Also use the OpenSSL build installed in DIR (its lib*/libcrypto.so.N, as with
    /// --libcrypto; e.g. what scripts/build-openssl prints); repeatable.
    #[arg(long, value_name = "DIR")]
    pub openssl: Vec<PathBuf>,
    /// A switch on an implementation, used beside the base one (e.g. isa=no-avx512); repeatable.
    #[arg(long = "variant", value_name = "SPEC")]
    pub variants: Vec<String>,
    /// Test only: wrap IMPL (a name, or a label such as "openssl 3.5.5") so that it flips a bit of every output. Only in builds with
    /// the `test-corrupt` feature, which the test suite turns on.
    #[cfg(feature = "test-corrupt")]
    #[arg(long, hide = true, value_name = "IMPL")]
    pub test_corrupt: Option<String>,
}

impl PathArgs {
    /// The paths given here that a DUT opens (`--dut`): each must exist there.
    pub fn on_dut(&self) -> Vec<(&'static str, PathBuf)> {
        let libcrypto = self.libcrypto.iter().map(|p| ("--libcrypto", p.clone()));
        libcrypto
            .chain(self.openssl.iter().map(|p| ("--openssl", p.clone())))
            .collect()
    }
}

/// What `--impl` and `--alg` chose among the loaded paths.
pub struct Selection {
    /// Indexes into `Paths::found`.
    pub impls: Vec<usize>,
    /// Selected implementations that are not available here, with the reason.
    pub absent: Vec<Unavailable>,
    pub algs: Vec<Algorithm>,
}

pub struct Paths {
    pub found: Vec<Box<dyn Implementation>>,
    pub missing: Vec<Unavailable>,
    /// Display label of each entry of `found`, by the same rule as records' labels.
    pub labels: Vec<String>,
}

/// Loads every implementation; `--test-corrupt` wraps the named one so that it flips a bit
/// of every output (tests only).
pub fn load(args: &PathArgs) -> Result<Paths, Failure> {
    let mut libcrypto = args.libcrypto.clone();
    for dir in &args.openssl {
        let build = impls::openssl::build::Build::open(dir, false).map_err(Failure::input)?;
        libcrypto.push(build.libcrypto);
    }
    #[allow(unused_mut)] // only the test-corrupt feature changes the list
    let impls::Registry { mut found, missing } =
        impls::registry(&libcrypto, &args.variants).map_err(Failure::input)?;
    #[cfg(feature = "test-corrupt")]
    if let Some(name) = &args.test_corrupt {
        // A label names one build among several ("openssl 3.5.5"); a bare name the first.
        let shown = labels(&found);
        let by_label = shown.iter().position(|l| l == name);
        let i = by_label
            .or_else(|| found.iter().position(|x| x.name() == name))
            .ok_or_else(|| {
                Failure::Input(format!(
                    "--test-corrupt {name}: no such implementation here"
                ))
            })?;
        let inner = found.remove(i);
        found.insert(i, Box::new(impls::corrupt::Corrupt(inner)));
    }
    let labels = labels(&found);
    Ok(Paths {
        found,
        missing,
        labels,
    })
}

/// The paths and algorithms `--impl` and `--alg` select. None of the selected
/// implementations available here is an input error naming why (`verb`: "measure").
pub fn select(
    args: &PathArgs,
    found: &[Box<dyn Implementation>],
    missing: &[Unavailable],
    verb: &str,
) -> Result<Selection, Failure> {
    let (impls, absent) =
        plan::select_impls(args.impls.as_deref(), found, missing).map_err(Failure::input)?;
    let algs = plan::select_algs(args.algs.as_deref()).map_err(Failure::input)?;
    // A variant none of the selected implementations takes would be silently ignored.
    for spec in &args.variants {
        let owners = impls::variant_owners(spec);
        let chosen = |o: &&str| {
            impls.iter().any(|&i| found[i].name() == *o)
                || absent.iter().any(|u| u.name.split(" [").next() == Some(*o))
        };
        if !owners.iter().any(chosen) {
            return Err(Failure::Input(format!(
                "--variant {}: taken only by {}, which --impl does not select: add it to --impl",
                crate::units::shown(spec),
                owners.join(" and ")
            )));
        }
    }
    if impls.is_empty() {
        let why: Vec<String> = absent
            .iter()
            .map(|u| format!("{}: {}", u.name, u.reason))
            .collect();
        return Err(Failure::Input(format!(
            "nothing to {verb} here: {}",
            why.join("; ")
        )));
    }
    Ok(Selection {
        impls,
        absent,
        algs,
    })
}

/// Display labels of the implementations, by the same rule as records' labels, made
/// unique: two paths that would share a label (two builds of one version) get the file
/// they came from.
fn labels(found: &[Box<dyn Implementation>]) -> Vec<String> {
    let mut labels = base_labels(found);
    for i in 0..labels.len() {
        let same: Vec<usize> = (0..labels.len())
            .filter(|&j| labels[j] == labels[i])
            .collect();
        if same.len() > 1 {
            for j in same {
                if let Some(p) = found[j].details().path {
                    labels[j] = format!("{}@{p}", labels[j]);
                }
            }
        }
    }
    labels
}

fn base_labels(found: &[Box<dyn Implementation>]) -> Vec<String> {
    found
        .iter()
        .map(|imp| {
            let versions = found
                .iter()
                .filter(|o| o.name() == imp.name())
                .map(|o| o.version())
                .collect::<std::collections::BTreeSet<_>>()
                .len();
            crate::analyse::paths::label(
                imp.name(),
                &imp.version(),
                versions,
                imp.variant().as_deref(),
            )
        })
        .collect()
}
