//! The string `format`s worth checking: UUIDs, date-times, dates and URLs.
//! Each check returns `None` for a valid string, else the reason in the words
//! pydantic uses (the `ctx.error` of its `uuid_parsing`,
//! `datetime_from_date_parsing` and `url_parsing` errors).

/// A `format` value this module checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    /// `uuid`, `uuid1` ... `uuid8`: any RFC 4122 UUID (hyphenated, simple,
    /// braced or URN), whatever its version.
    Uuid,
    /// `date-time`: RFC 3339.
    DateTime,
    /// `date`: `YYYY-MM-DD`.
    Date,
    /// `uri`: an absolute URL.
    Uri,
}

impl Format {
    /// The check for a `format` value, if it is one this module knows.
    pub(super) fn parse(name: &str) -> Option<Self> {
        match name {
            "date-time" => Some(Self::DateTime),
            "date" => Some(Self::Date),
            "uri" => Some(Self::Uri),
            n if n.strip_prefix("uuid").is_some_and(|v| v.len() <= 1) => Some(Self::Uuid),
            _ => None,
        }
    }

    /// Why `s` is not in this format, or `None`. `lax` accepts what pydantic
    /// accepts for date-times beyond RFC 3339: a bare date, no seconds, no
    /// offset, `_` as separator.
    pub(super) fn check(self, s: &str, lax: bool) -> Option<String> {
        match self {
            Self::Uuid => uuid_error(s),
            Self::DateTime => datetime_error(s.as_bytes(), lax).map(str::to_owned),
            Self::Date => date_error(s.as_bytes()).map(str::to_owned),
            Self::Uri => uri_error(s).map(str::to_owned),
        }
    }
}

/// Why `s` is not a UUID, worded like pydantic's `uuid_parsing` context
/// (which comes from the uuid crate version pydantic-core pins; the wording
/// is reproduced here so it does not drift with this crate's uuid version).
pub(super) fn uuid_error(s: &str) -> Option<String> {
    if uuid::Uuid::try_parse(s).is_ok() {
        return None;
    }
    let (body, offset, simple) =
        if let Some(inner) = s.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
            (inner, 1, false)
        } else if let Some(inner) = s.strip_prefix("urn:uuid:") {
            (inner, "urn:uuid:".len(), false)
        } else {
            (s, 0, true)
        };
    let mut hyphens = 0usize;
    let mut bounds = [0usize; 4];
    for (index, c) in body.char_indices() {
        if c == '-' {
            if let Some(b) = bounds.get_mut(hyphens) {
                *b = index;
            }
            hyphens += 1;
        } else if !c.is_ascii_hexdigit() {
            return Some(format!(
                "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `{c}` at {}",
                index + offset + 1
            ));
        }
    }
    if hyphens == 0 && simple {
        return Some(format!(
            "invalid length: expected length 32 for simple format, found {}",
            s.len()
        ));
    }
    if hyphens != 4 {
        return Some(format!(
            "invalid group count: expected 5, found {}",
            hyphens + 1
        ));
    }
    const STARTS: [usize; 5] = [0, 9, 14, 19, 24];
    const LENGTHS: [usize; 5] = [8, 4, 4, 4, 12];
    for group in 0..4 {
        if bounds[group] + 1 != STARTS[group + 1] {
            return Some(format!(
                "invalid group length in group {group}: expected {}, found {}",
                LENGTHS[group],
                bounds[group].saturating_sub(STARTS[group])
            ));
        }
    }
    Some(format!(
        "invalid group length in group 4: expected 12, found {}",
        s.len().saturating_sub(STARTS[4])
    ))
}

/// Reads `n` ASCII digits at `at` as a number.
fn digits(b: &[u8], at: usize, n: usize) -> Option<u32> {
    let part = b.get(at..at + n)?;
    part.iter().try_fold(0u32, |acc, d| {
        d.is_ascii_digit().then(|| acc * 10 + u32::from(d - b'0'))
    })
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `YYYY-MM-DD` at the start of `b`; speedate's messages.
fn check_date_part(b: &[u8]) -> Result<(), &'static str> {
    if b.len() < 10 {
        return Err("input is too short");
    }
    let year = digits(b, 0, 4).ok_or("invalid character in year")?;
    if b[4] != b'-' {
        return Err("invalid date separator, expected `-`");
    }
    let month = digits(b, 5, 2).ok_or("invalid character in month")?;
    if b[7] != b'-' {
        return Err("invalid date separator, expected `-`");
    }
    let day = digits(b, 8, 2).ok_or("invalid character in day")?;
    if !(1..=12).contains(&month) {
        return Err("month value is outside expected range of 1-12");
    }
    if day == 0 || day > days_in_month(year, month) {
        return Err("day value is outside expected range");
    }
    Ok(())
}

fn date_error(b: &[u8]) -> Option<&'static str> {
    if let Err(e) = check_date_part(b) {
        return Some(e);
    }
    (b.len() > 10).then_some("unexpected extra characters at the end of the input")
}

fn datetime_error(b: &[u8], lax: bool) -> Option<&'static str> {
    if let Err(e) = check_date_part(b) {
        return Some(e);
    }
    if b.len() == 10 {
        return (!lax).then_some("input is too short");
    }
    match b[10] {
        b'T' | b't' | b' ' => {}
        b'_' if lax => {}
        _ => return Some("invalid datetime separator, expected `T`, `t`, `_` or space"),
    }
    time_error(b, 11, lax).err()
}

/// `HH:MM[:SS[.fff]]` and the offset, from `at` to the end.
fn time_error(b: &[u8], at: usize, lax: bool) -> Result<(), &'static str> {
    if b.len() < at + 5 {
        return Err("input is too short");
    }
    let hour = digits(b, at, 2).ok_or("invalid character in hour")?;
    if b[at + 2] != b':' {
        return Err("invalid time separator, expected `:`");
    }
    let minute = digits(b, at + 3, 2).ok_or("invalid character in minute")?;
    if hour > 23 {
        return Err("hour value is outside expected range of 0-23");
    }
    if minute > 59 {
        return Err("minute value is outside expected range of 0-59");
    }
    let mut i = at + 5;
    match b.get(i) {
        Some(b':') => {
            let second = digits(b, i + 1, 2).ok_or("invalid character in second")?;
            if second > 59 {
                return Err("second value is outside expected range of 0-59");
            }
            i += 3;
            if matches!(b.get(i), Some(b'.' | b',')) {
                i += 1;
                let start = i;
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
                if i == start {
                    return Err("invalid character in second fraction");
                }
            }
        }
        _ if lax => {}
        None => return Err("input is too short"),
        Some(_) => return Err("invalid time separator, expected `:`"),
    }
    match b.get(i) {
        None if lax => Ok(()),
        None => Err("missing timezone offset, expected `Z` or `+HH:MM`"),
        Some(b'Z' | b'z') => extra(b, i + 1),
        Some(b'+' | b'-') => {
            let tz_hour = digits(b, i + 1, 2).ok_or("invalid timezone hour")?;
            i += 3;
            if b.get(i) == Some(&b':') {
                i += 1;
            } else if !lax {
                return Err("invalid timezone minute");
            }
            let tz_minute = digits(b, i, 2).ok_or("invalid timezone minute")?;
            if tz_hour > 23 || tz_minute > 59 {
                return Err("timezone offset must be less than 24 hours");
            }
            extra(b, i + 2)
        }
        Some(_) => Err("invalid timezone sign"),
    }
}

fn extra(b: &[u8], end: usize) -> Result<(), &'static str> {
    if b.len() > end {
        Err("unexpected extra characters at the end of the input")
    } else {
        Ok(())
    }
}

/// Schemes whose URLs must have a host (the WHATWG "special" schemes).
const SPECIAL: [&str; 5] = ["http", "https", "ws", "wss", "ftp"];

/// Why `s` is not an absolute URL, in the url crate's words (which pydantic
/// passes through).
fn uri_error(s: &str) -> Option<&'static str> {
    let s = s.trim_matches(|c: char| c <= ' ');
    let Some((scheme, rest)) = s.split_once(':') else {
        return Some("relative URL without a base");
    };
    let mut chars = scheme.chars();
    let valid_scheme = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !valid_scheme {
        return Some("relative URL without a base");
    }
    if !SPECIAL.contains(&scheme.to_ascii_lowercase().as_str()) {
        return None;
    }
    let after = rest.trim_start_matches(['/', '\\']);
    let authority = after.split(['/', '\\', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or("");
    let (host, port) = if let Some(v6) = host_port.strip_prefix('[') {
        let Some((addr, tail)) = v6.split_once(']') else {
            return Some("invalid IPv6 address");
        };
        if addr.parse::<std::net::Ipv6Addr>().is_err() {
            return Some("invalid IPv6 address");
        }
        ("v6", tail.strip_prefix(':'))
    } else {
        match host_port.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (host_port, None),
        }
    };
    if host.is_empty() {
        return Some("empty host");
    }
    const FORBIDDEN: &str = " \t\n\r#%/:<>?@[\\]^|";
    if host
        .chars()
        .any(|c| FORBIDDEN.contains(c) || c.is_control())
    {
        return Some("invalid domain character");
    }
    if let Some(port) = port
        && !port.is_empty()
        && port.parse::<u16>().is_err()
    {
        return Some("invalid port number");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_of_every_spelling_pass() {
        for ok in [
            "6f1c2a4e-8e0b-4c2a-9f5e-1b2c3d4e5f60",
            "6F1C2A4E8E0B4C2A9F5E1B2C3D4E5F60",
            "{6f1c2a4e-8e0b-4c2a-9f5e-1b2c3d4e5f60}",
            "urn:uuid:6f1c2a4e-8e0b-4c2a-9f5e-1b2c3d4e5f60",
            "00000000-0000-1000-8000-000000000000",
        ] {
            assert_eq!(uuid_error(ok), None, "{ok}");
        }
    }

    #[test]
    fn uuid_errors_read_like_pydantic() {
        let char_msg = "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found";
        assert_eq!(
            uuid_error("abc"),
            Some("invalid length: expected length 32 for simple format, found 3".into())
        );
        assert_eq!(
            uuid_error(""),
            Some("invalid length: expected length 32 for simple format, found 0".into())
        );
        assert_eq!(
            uuid_error("not-a-uuid"),
            Some(format!("{char_msg} `n` at 1"))
        );
        assert_eq!(
            uuid_error("course_id"),
            Some(format!("{char_msg} `o` at 2"))
        );
        assert_eq!(
            uuid_error("10c25fc2-835b-4ef3-bb3d-bf44fe496e"),
            Some("invalid group length in group 4: expected 12, found 10".into())
        );
        assert_eq!(
            uuid_error("1-2-3"),
            Some("invalid group count: expected 5, found 3".into())
        );
        assert_eq!(
            uuid_error("6f1c2a4e8-e0b-4c2a-9f5e-1b2c3d4e5f60"),
            Some("invalid group length in group 0: expected 8, found 9".into())
        );
    }

    #[test]
    fn date_times_strict_and_lax() {
        let strict = |s: &str| Format::DateTime.check(s, false);
        let lax = |s: &str| Format::DateTime.check(s, true);
        assert_eq!(strict("2024-02-29T12:30:00Z"), None);
        assert_eq!(strict("2024-02-29t12:30:00.123456+05:30"), None);
        assert_eq!(strict("2024-02-29 12:30:00-00:00"), None);
        assert_eq!(strict("abc").as_deref(), Some("input is too short"));
        assert_eq!(
            strict("2023-02-29T00:00:00Z").as_deref(),
            Some("day value is outside expected range")
        );
        assert_eq!(
            strict("2023-13-01T00:00:00Z").as_deref(),
            Some("month value is outside expected range of 1-12")
        );
        assert_eq!(
            strict("2023-01-01T24:00:00Z").as_deref(),
            Some("hour value is outside expected range of 0-23")
        );
        assert_eq!(
            strict("2023-01-01X00:00:00Z").as_deref(),
            Some("invalid datetime separator, expected `T`, `t`, `_` or space")
        );
        assert!(strict("2023-01-01T00:00:00").is_some());
        assert!(strict("2023-01-01").is_some());
        assert_eq!(lax("2023-01-01"), None);
        assert_eq!(lax("2023-01-01T10:20"), None);
        assert_eq!(lax("2023-01-01_10:20:30.5"), None);
        assert_eq!(
            lax("2023-01-01T10:20:30Zx").as_deref(),
            Some("unexpected extra characters at the end of the input")
        );
        assert_eq!(Format::Date.check("2023-01-01", false), None);
        assert!(Format::Date.check("2023-1-01", false).is_some());
    }

    #[test]
    fn urls_need_a_scheme_and_special_ones_a_host() {
        assert_eq!(uri_error("https://example.com:8443/a?b#c"), None);
        assert_eq!(uri_error("mailto:someone@example.com"), None);
        assert_eq!(uri_error("http://[::1]:80/"), None);
        assert_eq!(
            uri_error("example.com"),
            Some("relative URL without a base")
        );
        assert_eq!(
            uri_error("/relative/path"),
            Some("relative URL without a base")
        );
        assert_eq!(uri_error("https://"), Some("empty host"));
        assert_eq!(uri_error("https://host:99999"), Some("invalid port number"));
        assert_eq!(uri_error("https://ho st"), Some("invalid domain character"));
        assert_eq!(uri_error("http://[::zz]/"), Some("invalid IPv6 address"));
    }
}
