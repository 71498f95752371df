use super::*;

/// A real inferno flame graph, as --profile-dir writes them.
fn inferno_svg() -> String {
    let lines = [
        "nginx;SSL_write;libcrypto.so.3+0x1f0 [aes] 30",
        "nginx;SSL_write;libcrypto.so.3+0x2a0 [ghash] 10",
        "nginx;write;entry_SYSCALL_64;tcp_sendmsg 60",
    ];
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = "TLS <aes> & co: 100 cpu-clock samples".into();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut opts, lines.iter().copied(), &mut svg).unwrap();
    String::from_utf8(svg).unwrap()
}

/// Parses as XML to the end (the fragment is well-formed).
fn well_formed(s: &str) {
    let mut r = quick_xml::Reader::from_str(s);
    r.config_mut().check_end_names = true;
    loop {
        match r.read_event() {
            Ok(Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!("not well-formed: {e}"),
        }
    }
}

#[test]
fn inferno_graphs_lose_their_script_and_keep_their_frames() {
    let raw = inferno_svg();
    // What is being removed is really there.
    assert!(raw.contains("<script") && raw.contains("onload="));
    let s = sanitise(&raw, "fg3-").unwrap();
    well_formed(&s.svg);
    for banned in [
        "<script", "onload", "onclick", "onmouse", "<style", "CDATA", "<!", "xlink", "href",
    ] {
        assert!(!s.svg.contains(banned), "{banned} left in");
    }
    // The only URL left is the SVG namespace, which nothing fetches.
    assert_eq!(s.svg.matches("http").count(), 1);
    assert!(s.svg.contains("xmlns=\"http://www.w3.org/2000/svg\""));
    // Every frame survives with its hover title, and the [aes] label.
    assert_eq!(
        raw.matches("<rect").count(),
        s.svg.matches("<rect").count() + 1
    );
    assert_eq!(
        raw.matches("<title>").count(),
        s.svg.matches("<title>").count()
    );
    assert!(s.svg.contains("[aes]") && s.svg.contains("tcp_sendmsg"));
    // The controls that need the script are gone; ids are this graph's own.
    assert!(!s.svg.contains("Reset Zoom") && !s.svg.contains(">Search<"));
    assert!(s.svg.contains("id=\"fg3-frames\"") && !s.svg.contains("id=\"frames\""));
    // The background gradient (a url() paint) goes with its rectangle; frames stay.
    assert!(raw.contains("url(#background)") && !s.svg.contains("url("));
    // The title comes back unescaped, and stays escaped in the markup.
    assert_eq!(
        s.title.as_deref(),
        Some("TLS <aes> & co: 100 cpu-clock samples")
    );
    assert!(s.svg.contains("TLS &lt;aes&gt; &amp; co"));
}

#[test]
fn hostile_markup_is_dropped_not_passed_through() {
    let evil = r#"<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]>
<svg onload="alert(1)" width="10" style="background:url(http://evil/a)">
<a href="http://evil/"><text>link</text></a>
<image href="http://evil/x.png"/>
<rect width="5" style="fill:url(http://evil/b)"/><rect fill="url(#a)" width="7"/>
<rect fill="javascript:alert(1)" width="6"/>
<foreignObject><iframe src="http://evil/"/></foreignObject>
<text x="1">&lt;script&gt;alert(2)&lt;/script&gt; &x; &#65;</text>
<script>alert(3)</script><g><script><![CDATA[alert(4)]]></script></g>
</svg>"#;
    let s = sanitise(evil, "fg1-").unwrap();
    well_formed(&s.svg);
    assert!(!s.svg.contains("evil"), "{}", s.svg);
    assert!(
        !s.svg.contains("passwd") && !s.svg.contains("alert(1)"),
        "{}",
        s.svg
    );
    assert!(!s.svg.contains("alert(3)") && !s.svg.contains("alert(4)"));
    assert!(!s.svg.contains("<script") && !s.svg.contains("link"));
    // Text is text: escaped, the character reference resolved, the external entity not.
    assert!(
        s.svg.contains("&lt;script&gt;alert(2)&lt;/script&gt;  A"),
        "{}",
        s.svg
    );
    // Only numbers, lengths and colours stay in attributes.
    assert!(s.svg.contains("<rect width=\"5\"/>"), "{}", s.svg);
    assert!(s.svg.contains("<rect width=\"6\"/>"), "{}", s.svg);
    assert!(
        !s.svg.contains("url(") && !s.svg.contains("\"7\""),
        "{}",
        s.svg
    );
}

#[test]
fn what_is_not_an_svg_is_an_error() {
    assert!(sanitise("just text", "fg1-").is_err());
    assert!(sanitise("<svg><g></svg>", "fg1-").is_err());
}
