use super::*;

#[test]
fn auth_follows_the_cipher() {
    let s = |c: &str| Spec::OpenVpn {
        cipher: c.into(),
        dco: false,
    };
    assert_eq!(s("AES-128-GCM").auth(), None);
    assert_eq!(s("CHACHA20-POLY1305").auth(), None);
    assert_eq!(s("AES-256-CBC").auth().as_deref(), Some("HMAC-SHA1"));
    assert_eq!(s("none").auth().as_deref(), Some("none"));
    assert_eq!(s("AES-256-CBC").label(), "openvpn AES-256-CBC+HMAC-SHA1");
}

#[test]
fn negotiated_cipher_from_the_log() {
    let log = "x\n2026-11-22 12:27:32 Data Channel: cipher 'AES-128-GCM', peer-id: 0\n";
    let l = data_channel(log).unwrap();
    assert!(negotiated_matches(&l, "AES-128-GCM"));
    assert!(!negotiated_matches(&l, "AES-256-GCM"));
    let l = data_channel("Data Channel: cipher '[null-cipher]', auth '[null-digest]'").unwrap();
    assert!(negotiated_matches(&l, "none"));
}

/// DCO asked for but not in use is refused with the reason: OpenVPN 2.6 falls back to tun
/// by itself when the kernel lacks ovpn-dco (its log line and the kernel's reason said),
/// and a DCO device opened on a link of another kind is named with its kind.
#[test]
fn dco_not_in_use_is_refused_with_the_reason() {
    let dir = std::env::temp_dir().join(format!("cbench-dco-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = Place {
        end: SERVER,
        ns: None,
        dir: dir.clone(),
        pid: std::process::id(),
        addr: String::new(),
        peer: String::new(),
        outer_if: String::new(),
    };
    let log = dir.join("openvpn-server.log");
    let fallback = "2026-11-28 13:02:11 Note: Kernel support for ovpn-dco missing, disabling data channel offload.";
    std::fs::write(
        &log,
        format!("{fallback}\nInitialization Sequence Completed\n"),
    )
    .unwrap();
    let e = check_dco(&p, &log, "lo").unwrap_err().to_string();
    let said = format!("OpenVPN DCO requested but not used on the server end: OpenVPN said \"{fallback}\" (ovpn-dco: ");
    assert!(e.starts_with(&said), "{e}");
    std::fs::write(&log, "DCO device tun0 opened\n").unwrap();
    let e = check_dco(&p, &log, "lo").unwrap_err().to_string();
    assert_eq!(
        e,
        "OpenVPN DCO requested, but lo is of no kind (or missing), not ovpn-dco"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
