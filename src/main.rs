//! cryptobench: how fast symmetric crypto really is on this machine, and through which path.

mod algorithms;
mod analyse;
mod environment;
mod impls;
mod kat;
mod kernel;
mod measure;
mod plan;
mod record;
mod render;
mod workloads;

use clap::{Parser, Subcommand};
use render::Format;
use std::path::PathBuf;
use workloads::speed::{self, SpeedArgs};

#[derive(Parser)]
#[command(
    name = "cryptobench",
    version,
    about = "Honest symmetric-crypto measurements across libraries and paths"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Measure primitives (AEAD, ciphers, hashes, HMAC) across implementations and sizes.
    Speed {
        /// Implementations, comma-separated, globs allowed (openssl, aws-lc, ring, rustcrypto, libsodium, boringssl).
        #[arg(long = "impl", value_name = "LIST")]
        implementation: Option<String>,
        /// Algorithms, comma-separated, globs allowed (e.g. aes-*-gcm,sha256).
        #[arg(long, value_name = "LIST")]
        alg: Option<String>,
        /// Directions: enc, dec or enc,dec (hashes have only enc).
        #[arg(long, value_name = "LIST")]
        direction: Option<String>,
        /// Bytes per call, comma-separated, binary units (16,1k,1350,64k,1m; up to 64m).
        #[arg(long, value_name = "LIST")]
        sizes: Option<String>,
        /// Thread counts, comma-separated (e.g. 1,2,4).
        #[arg(long, value_name = "LIST")]
        threads: Option<String>,
        /// Seconds of trials per point (warm-up adds about 10%).
        #[arg(long, value_name = "SECONDS", default_value_t = 0.15)]
        time: f64,
        /// Output format on stdout.
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// Append JSON Lines (environment, then one record per point, flushed) to FILE.
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Also measure this libcrypto build (OpenSSL 1.1 or 3.x); repeatable.
        #[arg(long, value_name = "PATH")]
        libcrypto: Vec<PathBuf>,
        /// A switch on an implementation, measured beside the base one (e.g. isa=no-avx512); repeatable.
        #[arg(long, value_name = "SPEC")]
        variant: Vec<String>,
        /// List implementations and algorithms available here, and why any is missing.
        #[arg(long)]
        list: bool,
        /// Test only: wrap IMPL so that it flips a bit of every output.
        #[arg(long, hide = true, value_name = "IMPL")]
        test_corrupt: Option<String>,
    },
    /// Render records saved with `speed --output` (JSON Lines) without re-running anything.
    Report {
        /// The JSON Lines file.
        file: PathBuf,
        /// Output format on stdout.
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
    },
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
                || e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            {
                let _ = e.print();
                std::process::exit(
                    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                        2
                    } else {
                        0
                    },
                );
            }
            // One line: clap's first line, plus where to look.
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            eprintln!(
                "cryptobench: {} (see cryptobench --help)",
                first.trim_start_matches("error: ")
            );
            std::process::exit(2);
        }
    };
    let result = match cli.command {
        Command::Speed {
            implementation,
            alg,
            direction,
            sizes,
            threads,
            time,
            format,
            output,
            libcrypto,
            variant,
            list,
            test_corrupt,
        } => speed::run(SpeedArgs {
            impls: implementation,
            algs: alg,
            directions: direction,
            sizes,
            threads,
            time,
            format,
            output,
            libcrypto,
            variants: variant,
            list,
            test_corrupt,
        }),
        Command::Report { file, format } => workloads::report::run(&file, format),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(f) => {
            eprintln!("cryptobench: {}", f.message());
            std::process::exit(f.exit_code());
        }
    }
}
