//! `cryptobench advise`: the answer for this box in one command. Like `study`, it owns no
//! measuring code: it composes probe, speed, vpn and tls as the study runner's steps (their
//! records go to --output and the store like any run), then `analyse::advise` turns the
//! runs into verdicts, and `share` into a row others can compare.

mod share;
mod view;

use crate::analyse::advise::{
    advise, ssh_path, tls_path, vpn_path, Advice, Input, Unavailable, STACKS_PATH,
};
use crate::failure::Failure;
use crate::render::Format;
use crate::study::{argv, runner, Action, Observed, Step};
use crate::workloads::tls::tls_lib::LibName;
use serde_json::Value;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct AdviseArgs {
    /// A reduced matrix in under 3 minutes on a 2-core machine (the full one: under 15).
    #[arg(long)]
    pub quick: bool,
    /// Also measure the kernel paths (kernel WireGuard, OpenVPN DCO, IPsec, kTLS) in the
    /// qemu guest (guest/run); their verdicts are the guest's, never compared with ours.
    #[arg(long)]
    pub guest: bool,
    /// Only the stack question (also part of the full advise, not of --quick): HAProxy and
    /// nginx, one thread each, on the system's OpenSSL and on every library built where
    /// they run (`tls --list`: OpenSSL builds, AWS-LC; with --dut, the DUT's), full
    /// handshakes and keep-alive, in rounds: which server and library make the most
    /// handshakes per core, and what the best other library buys each server. Not with
    /// --quick or --guest.
    #[arg(long, conflicts_with_all = ["quick", "guest"])]
    pub stacks: bool,
    /// Write this box's canonical row (device, CPU, OS, kernel, headline figures with
    /// their intervals and limits; no host name, address, user or key) to FILE as JSON,
    /// with its Markdown table row.
    #[arg(long, value_name = "FILE")]
    pub share: Option<PathBuf>,
    /// Put these shared rows (files written by --share) beside this box's.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub compare: Vec<PathBuf>,
    #[command(flatten)]
    pub steps: runner::StepsOutput,
    #[arg(long, default_value = "table", value_parser = Format::parser(view::FORMATS, &[]))]
    pub format: Format,
    /// With --dut: each step (probe, speed, vpn, tls) runs on the DUT as that command's
    /// --dut does (a router's lean build suffices); the verdicts and the row are the DUT's.
    #[command(flatten)]
    pub dut: crate::dut::DutArgs,
}

/// The ciphers the tunnels are compared with: an AES-GCM and ChaCha20-Poly1305.
const CIPHERS: &str = "AES-256-GCM,CHACHA20-POLY1305";

/// One kernel path as probe sees it: usable, or why not.
struct Kernel {
    wireguard: Result<(), String>,
    dco: Result<(), String>,
    ipsec: Result<(), String>,
    ktls: Result<(), String>,
    af_alg: Result<(), String>,
}

fn usable(v: &Value) -> Result<(), String> {
    if v["usable"].as_bool() == Some(true) {
        Ok(())
    } else {
        Err(v["reason"]
            .as_str()
            .unwrap_or("probe gave no reason")
            .to_string())
    }
}

fn kernel(facts: &Value) -> Kernel {
    let k = &facts["kernel"];
    Kernel {
        wireguard: usable(&k["offload"]["wireguard"]),
        dco: usable(&k["offload"]["ovpn_dco"]),
        ipsec: usable(&k["offload"]["ipsec"]),
        ktls: usable(&k["offload"]["ktls"]),
        af_alg: usable(&k["af_alg"]["aead"]),
    }
}

/// The steps, the paths they measure (by step tag), and the paths probe says cannot run.
struct Plan {
    steps: Vec<Step>,
    expected: Vec<(String, Vec<String>)>,
    missing: Vec<Unavailable>,
}

/// Where the steps run: here, or on a DUT (each step's own --dut).
#[derive(Clone, Copy, PartialEq)]
enum Place {
    Here,
    Dut,
}

/// The libraries of `wanted` (comma-separated) that probe found: a DUT's build may lack some.
fn found_libs(wanted: &str, facts: &Value) -> String {
    let found: Vec<&str> = facts["libraries"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| l["impl"].as_str())
        .collect();
    let libs: Vec<&str> = wanted.split(',').filter(|l| found.contains(l)).collect();
    if libs.is_empty() {
        wanted.to_string()
    } else {
        libs.join(",")
    }
}

fn plan(quick: bool, guest: bool, k: &Kernel, facts: &Value, place: Place) -> Plan {
    let mut missing = Vec::new();
    let mut lack = |path: &str, r: &Result<(), String>| {
        if let Err(why) = r {
            missing.push(Unavailable {
                path: path.into(),
                reason: why.clone(),
            });
        }
    };
    // IPsec needs ESP at both ends: with --dut, the DUT's (its probe) and this controller's.
    let ipsec = match place {
        Place::Dut => {
            let here = crate::kernel::offload_paths(&crate::kernel::KernelConfig::read()).ipsec;
            match (&k.ipsec, here.usable) {
                (Err(why), _) => Err(format!("IPsec with --dut: the DUT: {why}")),
                (Ok(()), false) => {
                    Err(format!("IPsec with --dut: the controller: {}", here.reason))
                }
                (Ok(()), true) => Ok(()),
            }
        }
        Place::Here => k.ipsec.clone(),
    };
    lack("wireguard-kernel", &k.wireguard);
    lack("openvpn-dco", &k.dco);
    lack("ipsec", &ipsec);
    lack("ktls", &k.ktls);
    lack("af_alg", &k.af_alg);
    let (time, rounds, speed_time, libs) = if quick {
        ("2", "3", "0.1", "openssl,ring,aws-lc")
    } else {
        ("5", "5", "0.3", "openssl,ring,aws-lc,rustcrypto,libsodium")
    };
    let mut impls = found_libs(libs, facts);
    if k.af_alg.is_ok() {
        impls.push_str(",af_alg");
    }
    let mut tunnels = vec!["wireguard-go", "openvpn"];
    for (t, ok) in [
        ("wireguard-kernel", &k.wireguard),
        ("openvpn-dco", &k.dco),
        ("ipsec", &ipsec),
    ] {
        if ok.is_ok() {
            tunnels.push(t);
        }
    }
    let points = (tunnels.len() * 2 * 2) as f64 * rounds.parse::<f64>().unwrap_or(3.0);
    let mut steps = vec![
        Step {
            tag: "speed".into(),
            seconds: 12.0 * 4.0 * speed_time.parse::<f64>().unwrap_or(0.1) + 2.0,
            action: Action::Workload(speed(&impls, speed_time, place)),
        },
        Step {
            tag: "vpn".into(),
            seconds: points * (time.parse::<f64>().unwrap_or(2.0) + 2.0),
            action: Action::Workload(vpn(&tunnels.join(","), time, rounds)),
        },
    ];
    // Both SSH servers, every default cipher each offers, uploads: what a copy to the box
    // costs (with --dut, the DUT's servers, the client here). A server the box lacks
    // fails the step, and both are listed as not available with its reason.
    let ssh_paths = ["ssh openssh".to_string(), "ssh dropbear".to_string()];
    steps.push(Step {
        tag: "ssh".into(),
        seconds: 2.0 * 5.0 * rounds.parse::<f64>().unwrap_or(3.0),
        action: Action::Workload(ssh(if quick { "64m" } else { "256m" }, rounds)),
    });
    let mut tls_paths = vec!["tls".to_string()];
    if k.ktls.is_ok() {
        tls_paths.push("ktls".into());
    }
    // Three runs of the TLS points: one gives no interval.
    for _ in 0..3 {
        steps.push(Step {
            tag: "tls".into(),
            seconds: 6.0,
            action: Action::Workload(tls(time, k.ktls.is_ok())),
        });
    }
    let mut expected = vec![
        ("speed".to_string(), vec!["speed".to_string()]),
        (
            "vpn".to_string(),
            tunnels.iter().map(|t| t.to_string()).collect(),
        ),
        ("tls".to_string(), tls_paths),
    ];
    expected.push(("ssh".to_string(), ssh_paths.to_vec()));
    if guest {
        // The kernel paths where the guest kernel has them; its probe says which (a
        // tunnel it lacks fails its step, and is listed with the reason).
        let g_tunnels = "wireguard-kernel,wireguard-go,openvpn,openvpn-dco,ipsec";
        steps.push(Step {
            tag: "guest".into(),
            seconds: 90.0 + 5.0 * 2.0 * 3.0 * 10.0 + 3.0 * 20.0,
            action: Action::Guest(
                g_tunnels
                    .split(',')
                    .map(|t| vpn(t, time, rounds))
                    // Three TLS runs, as here: one gives kTLS no interval.
                    .chain((0..3).map(|_| tls(time, true)))
                    .collect(),
            ),
        });
        expected.push((
            "guest".to_string(),
            g_tunnels
                .split(',')
                .map(String::from)
                .chain(["tls".into(), "ktls".into()])
                .collect(),
        ));
    }
    // The stack comparison, on the libraries built where the servers run.
    if !quick {
        match stack_libs(facts, place) {
            Ok(libs) => {
                steps.extend(stack_steps("3", "3", &libs));
                expected.push((STACKS_PATH.to_string(), vec![STACKS_PATH.to_string()]));
            }
            Err(why) => lack(STACKS_PATH, &Err(why)),
        }
    }
    Plan {
        steps,
        expected,
        missing,
    }
}

/// The TLS libraries built where the servers run: here, or those the DUT's probe lists
/// (found in the DUT's own cache, as `tls --dut --tls-lib` finds them there).
fn stack_libs(facts: &Value, place: Place) -> Result<Vec<LibName>, String> {
    use clap::ValueEnum;
    match place {
        Place::Here => Ok(crate::workloads::tls::tls_lib::found()),
        Place::Dut => {
            let listed = facts["tls_libraries"].as_array().ok_or_else(|| {
                "the DUT's cryptobench does not list its TLS libraries (an older build): run this build there (--dut-binary)".to_string()
            })?;
            // A name this build does not know (a newer DUT's) is left out, not guessed at.
            Ok(listed
                .iter()
                .filter_map(|n| LibName::from_str(n.as_str()?, false).ok())
                .collect())
        }
    }
}

/// `advise --stacks`: the stack comparison alone.
fn stacks_plan(facts: &Value, place: Place) -> Result<Plan, Failure> {
    let libs = stack_libs(facts, place).map_err(Failure::Unavailable)?;
    Ok(Plan {
        steps: stack_steps("3", "3", &libs),
        expected: vec![(STACKS_PATH.to_string(), vec![STACKS_PATH.to_string()])],
        missing: Vec::new(),
    })
}

/// The stack comparison: HAProxy and nginx on every library of `libs` each can load, one
/// thread, 3 rounds (study tls-stacks' steps).
fn stack_steps(time: &str, rounds: &str, libs: &[LibName]) -> Vec<Step> {
    let tag = |_: &str| STACKS_PATH.to_string();
    crate::study::tls_stacks::stack_steps(&tag, "1", rounds, time, &[], libs)
}

/// The in-process libraries; here, the OpenSSL builds in the cache beside them (their
/// paths are this machine's, so not on a DUT).
fn speed(impls: &str, time: &str, place: Place) -> Vec<String> {
    let builds = match place {
        Place::Here => crate::workloads::tls::tls_lib::cached_openssl_builds(),
        Place::Dut => Vec::new(),
    };
    let mut a = argv(&[
        "speed",
        "--impl",
        impls,
        "--alg",
        "aes-128-gcm,chacha20-poly1305",
        "--sizes",
        "64,1400,16k",
        "--direction",
        "enc",
        "--time",
        time,
    ]);
    for b in builds {
        a.extend(["--openssl".to_string(), b.display().to_string()]);
    }
    a
}

fn vpn(tunnels: &str, time: &str, rounds: &str) -> Vec<String> {
    argv(&[
        "vpn",
        "--tunnels",
        tunnels,
        "--ciphers",
        CIPHERS,
        "--streams",
        "1",
        "--direction",
        "up",
        "--time",
        time,
        "--rounds",
        rounds,
        "--packet-sizes",
        "64",
    ])
}

fn ssh(bytes: &str, rounds: &str) -> Vec<String> {
    argv(&[
        "ssh",
        "--bytes",
        bytes,
        "--rounds",
        rounds,
        "--direction",
        "up",
    ])
}

fn tls(time: &str, ktls: bool) -> Vec<String> {
    let mut a = argv(&[
        "tls",
        "--suites",
        "aes128gcm,chacha",
        "--files",
        "100k",
        "--concurrency",
        "4",
        "--time",
        time,
    ]);
    if ktls {
        a.push("--ktls".into());
    }
    a
}

/// The verdicts of one place's runs: its tags' runs, the paths expected of them, and
/// what is missing (probe's reasons, and the steps that failed or could not run).
fn advice_of(o: &Observed, plan: &Plan, tags: &[&str], mut missing: Vec<Unavailable>) -> Advice {
    let measured = measured(o, tags);
    for (tag, paths) in plan
        .expected
        .iter()
        .filter(|(t, _)| tags.contains(&t.as_str()))
    {
        if let Some(why) = o.failure(tag) {
            // The guest's commands run one after the other: a failed one leaves the
            // others' points, and only the paths without any are its.
            let whole = tag != "guest";
            for p in paths {
                if (whole || !measured.contains(p)) && !missing.iter().any(|m| &m.path == p) {
                    missing.push(Unavailable {
                        path: p.clone(),
                        reason: why.clone(),
                    });
                }
            }
        }
    }
    let of = |stacks: bool| {
        o.runs
            .iter()
            .filter(|t| tags.contains(&t.tag.as_str()) && (t.tag == STACKS_PATH) == stacks)
            .map(|t| &t.run)
            .collect()
    };
    let input = Input {
        runs: of(false),
        stacks: of(true),
        expected: plan
            .expected
            .iter()
            .filter(|(t, _)| tags.contains(&t.as_str()))
            .flat_map(|(_, p)| p.clone())
            .collect(),
        missing,
    };
    advise(&input)
}

/// The paths with at least one point under these tags.
fn measured(o: &Observed, tags: &[&str]) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for tag in tags {
        out.extend(o.vpn(tag).into_iter().map(vpn_path));
        out.extend(o.tls(tag).into_iter().map(|r| tls_path(r).to_string()));
        out.extend(o.ssh(tag).into_iter().map(ssh_path));
    }
    out
}

pub fn run(args: AdviseArgs) -> Result<i32, Failure> {
    let place = if args.dut.named() {
        Place::Dut
    } else {
        Place::Here
    };
    if place == Place::Dut && args.guest {
        return Err(Failure::Input(
            "advise --dut with --guest: the guest is this machine's; drop --guest, or run advise --guest without --dut".into(),
        ));
    }
    // Every file and DUT is checked before anything runs.
    let others = share::read_rows(&args.compare)?;
    if let Some(p) = &args.share {
        share::check_writable(p)?;
    }
    args.steps.check()?;
    // What never goes into a shared row: the DUT's user and host as the URL names them.
    let mut secrets: Vec<String> = Vec::new();
    let facts = match place {
        Place::Here => crate::workloads::probe::facts(),
        Place::Dut => {
            for url in args.dut.targets()? {
                secrets.extend(url.user.clone());
                secrets.push(url.host.clone());
            }
            let out = crate::dut::output_of(&args.dut, &["probe", "--format", "json"])?;
            serde_json::from_slice(&out).map_err(|e| {
                Failure::Runtime(format!(
                    "the DUT's probe gave no JSON ({e}): run the same cryptobench build there (--dut-binary)"
                ))
            })?
        }
    };
    let k = kernel(&facts);
    let mut plan = if args.stacks {
        stacks_plan(&facts, place)?
    } else {
        plan(args.quick, args.guest, &k, &facts, place)
    };
    let mut extra = args.steps.store_flags();
    extra.extend(args.dut.flags());
    for s in &mut plan.steps {
        s.action.add_args(&extra);
    }
    let (observed, code) = runner::run("advise", &plan.steps, args.steps.output.as_deref())?;
    // The DUT's host name, as its runs recorded it.
    secrets.extend(
        observed
            .runs
            .iter()
            .filter_map(|t| t.run.environment.as_ref())
            .map(|e| e.hostname.clone()),
    );
    let mut advice = advice_of(
        &observed,
        &plan,
        &["speed", "vpn", "ssh", "tls", STACKS_PATH],
        plan.missing.clone(),
    );
    if args.guest {
        let g = advice_of(&observed, &plan, &["guest"], Vec::new());
        advice.verdicts.extend(g.verdicts.into_iter().map(|mut v| {
            v.question = format!("In the qemu guest: {}", v.question);
            v
        }));
        advice
            .unavailable
            .extend(g.unavailable.into_iter().map(|mut u| {
                u.path = format!("guest {}", u.path);
                u
            }));
    }
    let row = share::row(&facts, &advice.headline, &secrets);
    let mut report = view::Report {
        quick: args.quick,
        observed: &observed,
        advice: &advice,
        row: &row,
        others: &others,
    };
    // An interrupted run's row would lack figures, and nothing in it would say so.
    let interrupted = crate::measure::stopped();
    if let Some(p) = args.share.as_deref().filter(|_| interrupted) {
        eprintln!(
            "advise: interrupted: --share {} not written; run advise again for the row",
            crate::units::shown_path(p)
        );
    }
    let share = args.share.as_deref().filter(|_| !interrupted);
    finish(
        &mut report,
        args.format,
        share,
        &mut std::io::stdout().lock(),
    )?;
    Ok(match code {
        0 if interrupted => crate::failure::EXIT_INTERRUPTED,
        c => c,
    })
}

/// Prints the report, then writes the row: a row that cannot be written costs nothing
/// of the report, and one that can is written even if stdout fails.
fn finish(
    report: &mut view::Report,
    format: Format,
    share: Option<&std::path::Path>,
    out: &mut dyn std::io::Write,
) -> Result<(), Failure> {
    let printed = crate::shell::show::print_to(report, format, out);
    let written = share.map_or(Ok(()), |p| share::write(p, report.row));
    written.and(printed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With --dut the stack steps name the DUT's libraries, whatever this machine built;
    /// a DUT build that lists none is said to be older, not planned from ours.
    #[test]
    fn stacks_on_a_dut_plan_from_its_libraries() {
        let facts = serde_json::json!({"tls_libraries": ["system", "aws-lc", "boringssl-9"]});
        let plan = stacks_plan(&facts, Place::Dut).unwrap();
        let argv: Vec<Vec<String>> = plan
            .steps
            .iter()
            .map(|s| match &s.action {
                Action::Workload(a) => a.clone(),
                _ => panic!("a stack step is a workload"),
            })
            .collect();
        let lib_of = |a: &[String]| a[a.iter().position(|x| x == "--tls-lib").unwrap() + 1].clone();
        assert_eq!(argv.len(), 2, "{argv:?}");
        assert_eq!(lib_of(&argv[0]), "system,aws-lc", "haproxy: {argv:?}");
        assert_eq!(
            lib_of(&argv[1]),
            "system",
            "nginx cannot load AWS-LC: {argv:?}"
        );
        let older = stacks_plan(&serde_json::json!({}), Place::Dut)
            .err()
            .unwrap();
        assert!(older.to_string().contains("older build"), "{older}");
    }

    /// The row's write fails at the end (its directory went during the run): the whole
    /// report was printed first, and the failure is one line naming --share.
    #[test]
    fn a_row_that_cannot_be_written_is_after_the_whole_report() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("row.json");
        share::check_writable(&p).unwrap();
        std::fs::remove_dir(dir.path()).unwrap();
        let (observed, advice, row) = (
            Observed::default(),
            Advice::default(),
            share::Row::default(),
        );
        let mut report = view::Report {
            quick: true,
            observed: &observed,
            advice: &advice,
            row: &row,
            others: &[],
        };
        let mut out = Vec::new();
        let e = finish(&mut report, Format::Json, Some(&p), &mut out).unwrap_err();
        assert!(
            matches!(&e, Failure::Runtime(m) if m.starts_with("--share ") && m.contains("cannot write")),
            "{e:?}"
        );
        let v: Value = serde_json::from_slice(&out).expect("the whole report, one JSON document");
        assert_eq!(v["share"]["kind"], "", "{v}");
        assert!(v["verdicts"].is_array() && v["runs"].is_array(), "{v}");
    }
}
