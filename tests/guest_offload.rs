//! Crypto in the kernel, end to end, under a real kernel: guest/run boots the Debian
//! cloud kernel (TCG) with nginx, wrk, OpenVPN, iperf3, wg, wireguard-go and iproute2
//! packed in, and runs this build's `tls --ktls`, `vpn` and `probe` there.
//!
//! One boot runs every command (the tls module hidden first, then put back); the outputs
//! come back separated by marker lines. Numbers under TCG are shapes only: nothing here
//! asserts a speed. Set CRYPTOBENCH_SKIP_GUEST=1 to skip.

mod common;

use serde_json::Value;

const TLS_SUITES: &str =
    "tls12-aes128gcm,aes128gcm,tls12-chacha,chacha,tls12-aes256gcm,tls12-aes128cbc+ktls";

fn commands() -> Vec<String> {
    let tls_ko = "/lib/modules/$(uname -r)/kernel/net/tls/tls.ko";
    let q = "--time 1 --format json";
    vec![
        // 1. Kernel TLS asked for, the tls module absent: refused with the reason.
        format!(
            "mv {tls_ko} /tmp/tls.ko && cryptobench tls --suites tls12-aes128gcm+ktls --files 4k --concurrency 1 {q}"
        ),
        // 2. Put back: probe lists the three paths as usable.
        format!("mv /tmp/tls.ko {tls_ko} && cryptobench probe --format json"),
        // 3. User space against kTLS, TLS 1.2 and 1.3, AES-GCM and ChaCha20-Poly1305, at
        // 256 KiB; AES-CBC with +ktls, which the kernel cannot take.
        format!("cryptobench tls --ktls --suites {TLS_SUITES} --files 256k --concurrency 1 --time 2 --format json"),
        // 4. Tunnels: OpenVPN in user space and with DCO, kernel WireGuard and wireguard-go.
        "cryptobench vpn --tunnels openvpn,openvpn-dco,wireguard-kernel,wireguard-go --ciphers AES-128-GCM --streams 1 --direction up --time 2 --format json".into(),
        // 5. Nothing left: namespaces and links (iproute2's ip, not busybox's applet).
        "/usr/sbin/ip netns list; /usr/sbin/ip -o link show".into(),
    ]
}

fn json(out: &str, what: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("{what}: no JSON ({e}):\n{out}"))
}

/// The reason of a run's one exclusion.
fn only_exclusion(v: &Value) -> &str {
    let ex = v["exclusions"].as_array().unwrap();
    assert_eq!(ex.len(), 1, "{ex:?}");
    ex[0]["reason"].as_str().unwrap()
}

fn records(v: &Value) -> Vec<&Value> {
    v["records"].as_array().unwrap().iter().collect()
}

#[test]
fn ktls_wireguard_and_openvpn_run_in_the_guest_and_prove_the_kernel_did_the_work() {
    if !common::guest_enabled() {
        return;
    }
    let (out, err) = common::guest_commands(
        &commands(),
        &[("GUEST_MEM", "1536"), ("GUEST_TIMEOUT", "1500")],
    );
    eprintln!("{err}");

    // 1: no tls module: the point is refused, with the reason, and nothing recorded.
    let v = json(&out[0].0, "tls without the module");
    assert!(records(&v).is_empty(), "{}", out[0].0);
    assert_eq!(out[0].1, 1, "nothing measured is exit status 1");
    let why = only_exclusion(&v);
    assert!(
        why.starts_with("kTLS requested but not used: ") && why.contains("no tls module"),
        "{why}"
    );
    assert!(
        v["environment"]["emulated"] == true,
        "a TCG guest is emulated"
    );

    // 2: probe in the guest: the three kernel paths are usable.
    let probe = json(&out[1].0, "probe");
    let off = &probe["kernel"]["offload"];
    for k in ["ktls", "wireguard", "ovpn_dco"] {
        assert_eq!(off[k]["usable"], true, "{k}: {off}");
    }
    assert!(probe["cpu"]["emulated_by"]
        .as_str()
        .unwrap()
        .contains("TCG"));

    // 3: every +ktls twin of an AEAD suite moved the counters for every connection,
    // and its checked body matched the file; the user-space suites did not use kTLS.
    let v = json(&out[2].0, "tls --ktls");
    assert_eq!(out[2].1, 0, "{}", out[2].0);
    let recs = records(&v);
    let ktls: Vec<&&Value> = recs.iter().filter(|r| !r["ktls"].is_null()).collect();
    let user: Vec<&&Value> = recs.iter().filter(|r| r["ktls"].is_null()).collect();
    assert_eq!(ktls.len(), 5, "{}", v["exclusions"]);
    assert_eq!(user.len(), 5);
    for r in &ktls {
        let k = &r["ktls"];
        let suite = r["suite"].as_str().unwrap();
        assert!(suite.ends_with("+ktls"), "{suite}");
        assert!(
            k["tx_sockets"].as_u64().unwrap() >= r["server_connections"].as_u64().unwrap(),
            "{suite}: every connection sent through the kernel: {k}"
        );
        let moved = k["tls_stat_after"]["TlsTxSw"].as_u64().unwrap()
            > k["tls_stat_before"]["TlsTxSw"].as_u64().unwrap();
        assert!(moved, "{suite}: {k}");
        assert_eq!(k["body_identical"], true, "{suite}");
        assert_eq!(k["body_bytes"], 256 << 10, "{suite}");
        assert_eq!(k["decrypt_errors"], 0, "{suite}");
        let aead = if suite.contains("CHACHA") {
            "rfc7539(chacha20,poly1305)"
        } else {
            "gcm(aes)"
        };
        assert_eq!(k["kernel_aead"], aead, "{suite}");
        // The twin negotiated the same suite as its user-space original.
        let base = suite.trim_end_matches("+ktls");
        assert!(user.iter().any(|u| u["suite"] == base), "{base}");
        assert_eq!(
            r["negotiated"],
            user.iter().find(|u| u["suite"] == base).unwrap()["negotiated"]
        );
    }
    for p in ["TLSv1.2", "TLSv1.3"] {
        assert!(ktls.iter().any(|r| r["protocol"] == p), "{p} covered");
    }
    let why = only_exclusion(&v);
    assert!(
        why.starts_with("kTLS requested but not used: the kernel's TLS takes AES-GCM"),
        "{why}"
    );

    // 4: every tunnel carried iperf3 traffic; kernel WireGuard is the kernel's, DCO
    // passed its check (else the point would have failed), and both kernel tunnels'
    // busiest thread is one of their crypto kworkers.
    let v = json(&out[3].0, "vpn");
    assert_eq!(out[3].1, 0, "{}", out[3].0);
    assert!(
        v["exclusions"].as_array().unwrap().is_empty(),
        "{}",
        v["exclusions"]
    );
    let recs = records(&v);
    for t in ["openvpn", "openvpn-dco", "wireguard"] {
        assert!(recs.iter().any(|r| r["tunnel"] == t), "{t}: {recs:?}");
    }
    let impls: Vec<&str> = recs
        .iter()
        .filter(|r| r["tunnel"] == "wireguard")
        .map(|r| r["impl_version"].as_str().unwrap_or(""))
        .collect();
    assert!(impls.contains(&"kernel"), "{impls:?}");
    assert!(
        impls.iter().any(|i| i.starts_with("wireguard-go")),
        "{impls:?}"
    );
    for r in &recs {
        assert!(r["throughput_bps"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["bytes"].as_u64().unwrap() > 0, "{r}");
        let kernel = r["tunnel"] == "openvpn-dco" || r["impl_version"] == "kernel";
        if kernel {
            let names: Vec<&str> = r["thread_cpu"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap())
                .collect();
            let queue = if r["tunnel"] == "openvpn-dco" {
                "ovpn-crypto-wq-"
            } else {
                "wg-crypt-"
            };
            assert!(
                !names.is_empty() && names.iter().all(|n| n.contains(queue)),
                "{}: {names:?}",
                r["label"]
            );
            assert!(r["busiest_thread_cpu_pct"].as_f64().unwrap() > 0.0, "{r}");
        }
    }
    let dco = recs.iter().find(|r| r["tunnel"] == "openvpn-dco").unwrap();
    assert!(dco["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("ovpn-dco")));

    // 5: no namespace, and no link but lo, is left.
    let left = &out[4].0;
    assert!(!left.contains("cbench"), "left behind:\n{left}");
}

/// On the machine running the tests (no guest): probe names each kernel data path as
/// usable or not, with a reason; kernel TLS is usable exactly when its counters exist
/// (asking for it loads the module where the kernel can).
#[test]
fn probe_says_why_each_kernel_data_path_is_usable_or_not_here() {
    let o = common::run(&["probe", "--format", "json"]);
    assert!(o.status.success());
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let off = &v["kernel"]["offload"];
    for k in ["ktls", "wireguard", "ovpn_dco"] {
        assert!(off[k]["usable"].is_boolean(), "{k}: {off}");
        assert!(!off[k]["reason"].as_str().unwrap().is_empty(), "{k}: {off}");
    }
    let counters = std::path::Path::new("/proc/net/tls_stat").exists();
    assert_eq!(off["ktls"]["usable"], counters, "{off}");
    let table = common::text(&common::run(&["probe"])).0;
    for label in ["kernel TLS", "WireGuard", "OpenVPN DCO"] {
        assert!(table.contains(label), "{table}");
    }
}
