//! `--dut ssh://[user@]host[:port]`: the one form a device under test is named in.

use anyhow::anyhow;
use std::fmt;

/// Characters OpenSSH refuses in a host name (and, but for `$` and `,`, in a user name):
/// a shell would read them.
const SHELL_CHARS: &str = "'`\"$\\;&<>|(){},";
/// A DNS name's longest form.
const MAX_HOST: usize = 253;

/// A DUT as the user named it. Only what OpenSSH needs: user, host and port; everything
/// else (keys, proxies, aliases) comes from the user's ssh_config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DutUrl {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
}

impl DutUrl {
    pub fn parse(text: &str) -> anyhow::Result<DutUrl> {
        let fix = "give ssh://[user@]host[:port], e.g. --dut ssh://root@192.168.1.1";
        // Said back without control characters (an ESC would reach the terminal).
        let said = crate::units::shown(text);
        let rest = text
            .strip_prefix("ssh://")
            .ok_or_else(|| anyhow!("--dut {said}: not an ssh:// URL: {fix}"))?;
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains('/') || rest.contains('?') || rest.contains('#') {
            return Err(anyhow!(
                "--dut {said}: a path or query has no meaning here: {fix}"
            ));
        }
        // Nothing ssh could read as an option, and nothing that moves a terminal's cursor.
        let (user, hostport) = match rest.rsplit_once('@') {
            Some((u, h))
                if !u.is_empty()
                    && !u.starts_with('-')
                    && !u.contains(['@', ':'])
                    && !u.contains(|c: char| SHELL_CHARS.contains(c) && c != '$' && c != ',')
                    && !u.contains(|c: char| c.is_control() || c.is_whitespace()) =>
            {
                (Some(u.to_string()), h)
            }
            Some(_) => return Err(anyhow!("--dut {said}: bad user name: {fix}")),
            None => (None, rest),
        };
        // [v6::addr]:port, host:port or host.
        let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
            let (h, after) = v6
                .split_once(']')
                .ok_or_else(|| anyhow!("--dut {said}: unclosed [ in the host: {fix}"))?;
            match after {
                "" => (h, None),
                p => (
                    h,
                    Some(
                        p.strip_prefix(':')
                            .ok_or_else(|| {
                                format!("--dut {said}: text after the ] of the host: {fix}")
                            })
                            .map_err(anyhow::Error::msg)?,
                    ),
                ),
            }
        } else {
            match hostport.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (hostport, None),
            }
        };
        if host.is_empty()
            || host.starts_with('-')
            || host.contains(|c: char| c.is_control() || c.is_whitespace())
        {
            return Err(anyhow!("--dut {said}: no usable host name: {fix}"));
        }
        // What ssh itself refuses in a host name (its valid_hostname), and what no DNS name
        // holds: refused here in one line, not by ssh after the run has started.
        if let Some(c) = host
            .chars()
            .find(|c| SHELL_CHARS.contains(*c) || !c.is_ascii())
        {
            return Err(anyhow!(
                "--dut {said}: the host name holds '{}', which ssh refuses in a host name: give its address or ASCII name (punycode for an international one)",
                crate::units::shown(&c.to_string())
            ));
        }
        if host.len() > MAX_HOST {
            return Err(anyhow!(
                "--dut {said}: the host name is {} bytes; a host name is at most {MAX_HOST}",
                host.len()
            ));
        }
        let port = match port {
            None => None,
            Some(p) => match p.parse::<u32>() {
                Ok(n) if (1..=65535).contains(&n) => Some(n as u16),
                _ => {
                    return Err(anyhow!(
                        "--dut {said}: port {p} is out of range: give a port from 1 to 65535"
                    ))
                }
            },
        };
        Ok(DutUrl {
            user,
            host: host.to_string(),
            port,
        })
    }

    /// `[user@]host`, as ssh takes it (the port goes in `-p`).
    pub fn destination(&self) -> String {
        match &self.user {
            Some(u) => format!("{u}@{}", self.host),
            None => self.host.clone(),
        }
    }
}

impl fmt::Display for DutUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        write!(f, "ssh://")?;
        if let Some(u) = &self.user {
            write!(f, "{u}@")?;
        }
        write!(f, "{host}")?;
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::DutUrl;

    #[test]
    fn parses_user_host_and_port() {
        let u = DutUrl::parse("ssh://root@10.0.0.1:2222").unwrap();
        assert_eq!(u.user.as_deref(), Some("root"));
        assert_eq!(u.host, "10.0.0.1");
        assert_eq!(u.port, Some(2222));
        assert_eq!(u.destination(), "root@10.0.0.1");
        assert_eq!(u.to_string(), "ssh://root@10.0.0.1:2222");
        let v6 = DutUrl::parse("ssh://[fe80::1]:22").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("fe80::1", Some(22)));
        assert_eq!(v6.to_string(), "ssh://[fe80::1]:22");
        assert_eq!(DutUrl::parse("ssh://board/").unwrap().port, None);
    }

    #[test]
    fn refuses_what_is_not_an_ssh_host() {
        for bad in [
            "http://host",
            "host",
            "ssh://",
            "ssh://h:0",
            "ssh://h:65536",
            "ssh://h:x",
            "ssh://-oProxyCommand=x",
            "ssh://h/path",
            "ssh://@h",
            "ssh://-oProxyCommand=x@h",
            "ssh://-l@h",
            "ssh://ro\u{1b}[31mot@h",
            "ssh://ro ot@h",
            "ssh://root@h\u{7}",
            "ssh://h;reboot",
            "ssh://$(reboot)",
            "ssh://`reboot`",
            "ssh://r;id@h",
            "ssh://hôte",
        ] {
            assert!(DutUrl::parse(bad).is_err(), "{bad}");
        }
        let long = format!("ssh://{}", "a".repeat(5000));
        let e = DutUrl::parse(&long).unwrap_err().to_string();
        assert!(e.len() < 300 && e.ends_with("at most 253"), "{e}");
        let e = DutUrl::parse("ssh://h;reboot").unwrap_err().to_string();
        assert!(e.contains("holds ';'"), "{e}");
        assert!(DutUrl::parse(&format!("ssh://{}", "a".repeat(253))).is_ok());
        assert!(DutUrl::parse("ssh://h:70000")
            .unwrap_err()
            .to_string()
            .contains("out of range"));
    }
}
