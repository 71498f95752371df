//! `--since`: the time a history or trend starts from, as typed.

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm), and back.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468
}

/// `--since`: YYYY-MM-DD, 7d, 12h, or Unix seconds.
pub fn since_unix(s: &str) -> anyhow::Result<i64> {
    let t = s.trim();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let bad = || {
        format!(
            "invalid --since '{}': give YYYY-MM-DD, a number of days or hours ago (7d, 12h), or Unix seconds",
            crate::units::shown(s)
        )
    };
    if let Some(n) = t.strip_suffix('d').and_then(|n| n.parse::<i64>().ok()) {
        return Ok(now - n * 86400);
    }
    if let Some(n) = t.strip_suffix('h').and_then(|n| n.parse::<i64>().ok()) {
        return Ok(now - n * 3600);
    }
    if let Ok(n) = t.parse::<i64>() {
        return Ok(n);
    }
    let parts: Vec<i64> = t
        .split('-')
        .map(|p| p.parse().map_err(|_| bad()))
        .collect::<Result<_, _>>()
        .map_err(anyhow::Error::msg)?;
    match parts[..] {
        // A day the calendar has: 2026-02-30 is a typo, not March 2nd.
        [y, m, d] if (1..=12).contains(&m) && (1..=days_in_month(y, m)).contains(&d) => {
            Ok(days_from_civil(y, m, d) * 86400)
        }
        _ => Err(anyhow::Error::msg(bad())),
    }
}

fn days_in_month(y: i64, m: i64) -> i64 {
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn days_the_calendar_lacks_are_refused() {
        assert!(super::since_unix("2026-02-30").is_err());
        assert!(super::since_unix("2026-02-29").is_err());
        assert!(super::since_unix("2028-02-29").is_ok());
        assert!(super::since_unix("2026-04-31").is_err());
        assert!(super::since_unix("2026-12-31").is_ok());
    }

    #[test]
    fn dates_round_trip() {
        assert_eq!(crate::render::trend::utc(0), "1970-01-01 00:00");
        let t = super::since_unix("2026-11-23").unwrap();
        assert_eq!(crate::render::trend::utc(t), "2026-11-23 00:00");
        assert_eq!(crate::render::trend::utc(t + 3661), "2026-11-23 01:01");
        assert!(super::since_unix("yesterday").is_err());
        assert!(super::since_unix("2026-13-01").is_err());
    }
}
