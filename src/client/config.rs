//! How to reach the service: base URL, credentials, API-key header name,
//! timeouts, retry policy and concurrency, as one [`ClientConfig`]; and the
//! rules checked before any request is sent (plain `http://` only to loopback
//! unless allowed). The flags that fill it are the command line's
//! (`crate::cli::connection`).
//!
//! Credentials come from the environment only, never from flags (flags leak
//! into shell history and process lists). `crate::cli::ConnectionArgs::to_config_with`
//! reads them through an injectable lookup so tests never mutate the process
//! environment.

use std::net::IpAddr;
use std::time::Duration;

use reqwest::Url;

use crate::api::Secret;

/// The API-key header the spec names.
pub const DEFAULT_API_KEY_HEADER: &str = "Service-AO-API-Key";
/// Environment variable holding the base URL.
pub const ENV_BASE_URL: &str = "EVALCTL_BASE_URL";
/// Environment variable holding an API key.
pub const ENV_API_KEY: &str = "EVALCTL_API_KEY";
/// Environment variable holding a user name (with [`ENV_PASSWORD`]).
pub const ENV_USERNAME: &str = "EVALCTL_USERNAME";
/// Environment variable holding a password (with [`ENV_USERNAME`]).
pub const ENV_PASSWORD: &str = "EVALCTL_PASSWORD";
/// Environment variable holding a bearer access token.
pub const ENV_ACCESS_TOKEN: &str = "EVALCTL_ACCESS_TOKEN";
/// The default of `--concurrency`: the most requests in flight at once. The
/// client starts at 8 and goes higher only while the service keeps up (see
/// docs/connecting.md, "Concurrency").
pub const DEFAULT_CONCURRENCY: u16 = 64;

/// The credentials the client authenticates with. `Debug` never shows a secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Credentials {
    /// An API key, sent in the API-key header.
    ApiKey(Secret),
    /// A user name and password: HTTP Basic where the operation accepts it,
    /// else the OAuth2 password flow (`POST {base_url}/login`) for a bearer token.
    Password {
        /// The user name (an email).
        username: String,
        /// The password.
        password: Secret,
    },
    /// A bearer access token, used as is (it cannot be renewed).
    AccessToken(Secret),
}

impl Credentials {
    /// An API key.
    pub fn api_key(key: impl Into<String>) -> Self {
        Credentials::ApiKey(Secret::new(key))
    }

    /// A user name and password.
    pub fn password(username: impl Into<String>, password: impl Into<String>) -> Self {
        Credentials::Password {
            username: username.into(),
            password: Secret::new(password),
        }
    }

    /// A bearer access token.
    pub fn access_token(token: impl Into<String>) -> Self {
        Credentials::AccessToken(Secret::new(token))
    }

    /// A short name of the scheme, for messages: `api key`, `password`, `access token`.
    pub fn scheme(&self) -> &'static str {
        match self {
            Credentials::ApiKey(_) => "api key",
            Credentials::Password { .. } => "username/password",
            Credentials::AccessToken(_) => "access token",
        }
    }
}

/// Retry policy: capped exponential backoff with full jitter (or the
/// service's `Retry-After`), bounded in total time; writes are also bounded
/// in attempts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Failures other than 429 that end an idempotent write, the first
    /// attempt included (at least 1). Reads and 429s are bounded by
    /// [`RetryPolicy::max_elapsed`] only, except before the service has
    /// answered once (a wrong URL fails fast).
    pub max_attempts: u32,
    /// Backoff ceiling of the first retry; doubles with each retry.
    pub base_delay: Duration,
    /// Cap of the backoff ceiling.
    pub max_delay: Duration,
    /// Total time budget of one operation, all attempts and waits included:
    /// no wait before a retry is begun that would end past it (an attempt
    /// already started runs to its request timeout).
    pub max_elapsed: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_millis(250),
            max_delay: Duration::from_secs(10),
            max_elapsed: Duration::from_secs(120),
        }
    }
}

/// Everything the client needs to talk to the service. `Debug` never shows a
/// secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientConfig {
    /// Base URL, e.g. `https://api.example.com` (paths `/v2/...` and `/login`
    /// are appended to it).
    pub base_url: String,
    /// Credentials.
    pub credentials: Credentials,
    /// Name of the API-key header (default [`DEFAULT_API_KEY_HEADER`]).
    pub api_key_header: String,
    /// Allow plain `http://` to a host that is not loopback.
    pub allow_insecure_http: bool,
    /// Timeout of establishing a connection.
    pub connect_timeout: Duration,
    /// Timeout of one attempt (connect, send, wait, read the whole body).
    pub request_timeout: Duration,
    /// Retries of idempotent requests.
    pub retry: RetryPolicy,
    /// The most requests in flight at once, for the whole client (at least
    /// 1): `--concurrency`.
    pub concurrency: usize,
    /// Adapt the in-flight limit below [`ClientConfig::concurrency`]: start
    /// low and grow while answers stay fast, halve on 429, shrink when
    /// latency rises (see the throttle's docs). Off: always `concurrency`.
    pub adaptive_concurrency: bool,
    /// Page size of paginated reads (default 100).
    pub page_size: i64,
}

impl ClientConfig {
    /// A configuration with the defaults: API-key header `Service-AO-API-Key`,
    /// connect timeout 10 s, request timeout 30 s, the default retry policy,
    /// at most [`DEFAULT_CONCURRENCY`] requests in flight, adaptive
    /// concurrency, pages of 100.
    pub fn new(base_url: impl Into<String>, credentials: Credentials) -> Self {
        ClientConfig {
            base_url: base_url.into(),
            credentials,
            api_key_header: DEFAULT_API_KEY_HEADER.to_owned(),
            allow_insecure_http: false,
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            retry: RetryPolicy::default(),
            concurrency: usize::from(DEFAULT_CONCURRENCY),
            adaptive_concurrency: true,
            page_size: crate::api::DEFAULT_PAGE_LIMIT,
        }
    }

    /// Parses and checks the base URL: `http` or `https`, a host, no query or
    /// fragment, and plain `http` only to a loopback host unless
    /// [`ClientConfig::allow_insecure_http`].
    pub fn checked_base_url(&self) -> Result<Url, ConfigError> {
        check_base_url(&self.base_url, self.allow_insecure_http)
    }
}

/// Why a text is not a URL (the `url` crate's `ParseError`, through
/// reqwest's re-exported `Url`).
pub type UrlParseError = <Url as std::str::FromStr>::Err;

/// Why a configuration cannot be used. Messages name what to set or change.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    /// No base URL was given.
    #[error("no base URL: set EVALCTL_BASE_URL or pass --base-url (e.g. https://api.example.com)")]
    MissingBaseUrl,
    /// The base URL does not parse or is not usable.
    #[error("invalid base URL {url:?}: {reason}")]
    InvalidBaseUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The base URL does not parse.
    #[error("invalid base URL {url:?}: {source}")]
    UnparsableBaseUrl {
        /// The URL as given (`[a URL with user info]` when it may hold a
        /// password).
        url: String,
        /// The parser's complaint.
        #[source]
        source: UrlParseError,
    },
    /// Plain HTTP to a host that is not loopback, without `--allow-insecure-http`.
    #[error(
        "refusing plain http:// to {host}, which is not a loopback address: credentials would travel \
         unencrypted. Use https://, or pass --allow-insecure-http if you really mean it"
    )]
    InsecureUrl {
        /// The host of the URL.
        host: String,
    },
    /// No credentials in the environment.
    #[error(
        "no credentials: set EVALCTL_API_KEY, or EVALCTL_USERNAME and EVALCTL_PASSWORD, \
         or EVALCTL_ACCESS_TOKEN"
    )]
    MissingCredentials,
    /// Only one of user name and password is set.
    #[error("{missing} is not set: EVALCTL_USERNAME and EVALCTL_PASSWORD go together")]
    IncompletePassword {
        /// The variable that is missing.
        missing: &'static str,
    },
    /// The API-key header name is not a valid HTTP header name.
    #[error("invalid API-key header name {0:?} (--api-key-header)")]
    InvalidHeaderName(String),
    /// A credential holds characters an HTTP header cannot carry (the value
    /// is never shown).
    #[error("{variable} holds characters an HTTP header cannot carry (a line break?)")]
    InvalidCredential {
        /// The environment variable holding the credential.
        variable: &'static str,
    },
    /// A numeric setting is out of range.
    #[error("{setting} must be at least 1")]
    OutOfRange {
        /// The flag or field.
        setting: &'static str,
    },
    /// The HTTP client could not be built (TLS backend initialisation).
    #[error("could not initialise the HTTP client: {0}")]
    HttpClient(String),
}

/// Whether a host, as a URL spells it (`localhost`, `127.0.0.1`, `[::1]`), is
/// a loopback host: `localhost`, 127.0.0.0/8 or ::1.
pub fn is_loopback_host(host: &str) -> bool {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    match bare.parse::<IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => bare.eq_ignore_ascii_case("localhost"),
    }
}

/// Parses and checks a base URL (see [`ClientConfig::checked_base_url`]).
pub fn check_base_url(raw: &str, allow_insecure_http: bool) -> Result<Url, ConfigError> {
    let invalid = |reason: &str| ConfigError::InvalidBaseUrl {
        url: raw.to_owned(),
        reason: reason.to_owned(),
    };
    if !raw.contains("://") {
        return Err(no_scheme(raw.trim()));
    }
    let url = Url::parse(raw.trim()).map_err(|source| ConfigError::UnparsableBaseUrl {
        // Never echo what may be a password before an `@`.
        url: if raw.contains('@') {
            "[a URL with user info]".to_owned()
        } else {
            raw.to_owned()
        },
        source,
    })?;
    if !url.username().is_empty() || url.password().is_some() {
        // Never echo it: the URL may carry a password.
        return Err(ConfigError::InvalidBaseUrl {
            url: "[a URL with user info]".to_owned(),
            reason: "credentials in the URL are not accepted; use the EVALCTL_* variables".into(),
        });
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid("a base URL has no query or fragment"));
    }
    let host = url.host_str().ok_or_else(|| invalid("no host"))?.to_owned();
    match url.scheme() {
        "https" => {}
        "http" => {
            if !allow_insecure_http && !is_loopback_host(&host) {
                return Err(ConfigError::InsecureUrl { host });
            }
        }
        other => return Err(invalid(&format!("scheme {other:?} is not http or https"))),
    }
    Ok(url)
}

/// The error for a base URL written without `scheme://` (`api.example.com`,
/// `localhost:8080`, which a URL parser reads as a scheme or a relative
/// URL): the URL with `https://` in front (`http://` for a loopback host,
/// such as the sandbox's), never echoing user info.
fn no_scheme(raw: &str) -> ConfigError {
    if raw.contains('@') {
        return ConfigError::InvalidBaseUrl {
            url: "[a URL with user info]".to_owned(),
            reason: "no scheme: write https:// in front of the host".to_owned(),
        };
    }
    let loopback = Url::parse(&format!("http://{raw}"))
        .ok()
        .and_then(|url| url.host_str().map(is_loopback_host))
        .unwrap_or(false);
    let scheme = if loopback { "http" } else { "https" };
    ConfigError::InvalidBaseUrl {
        url: raw.to_owned(),
        reason: format!("no scheme: did you mean `{scheme}://{raw}`?"),
    }
}

/// A duration flag that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// Not a number followed by a unit.
    #[error("{0:?} is not a duration (e.g. 30s, 500ms, 2m)")]
    NotADuration(String),
    /// A unit other than ms, s and m.
    #[error("unknown unit in {0:?} (use ms, s or m)")]
    UnknownUnit(String),
    /// Negative, or too large.
    #[error("{0:?} is out of range")]
    OutOfRange(String),
}

/// Parses a duration: `30` (seconds), `30s`, `500ms`, `2m`.
pub fn parse_duration(s: &str) -> Result<Duration, DurationError> {
    let s = s.trim();
    let (number, unit) = match s.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| DurationError::NotADuration(s.to_owned()))?;
    let secs = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        _ => return Err(DurationError::UnknownUnit(s.to_owned())),
    };
    Duration::try_from_secs_f64(secs).map_err(|_| DurationError::OutOfRange(s.to_owned()))
}

/// Picks the credentials by precedence: access token, API key, user name and password.
pub fn credentials_from(get: &impl Fn(&str) -> Option<String>) -> Result<Credentials, ConfigError> {
    if let Some(token) = get(ENV_ACCESS_TOKEN) {
        return Ok(Credentials::AccessToken(Secret::new(token)));
    }
    if let Some(key) = get(ENV_API_KEY) {
        return Ok(Credentials::ApiKey(Secret::new(key)));
    }
    match (get(ENV_USERNAME), get(ENV_PASSWORD)) {
        (Some(username), Some(password)) => Ok(Credentials::Password {
            username,
            password: Secret::new(password),
        }),
        (Some(_), None) => Err(ConfigError::IncompletePassword {
            missing: ENV_PASSWORD,
        }),
        (None, Some(_)) => Err(ConfigError::IncompletePassword {
            missing: ENV_USERNAME,
        }),
        (None, None) => Err(ConfigError::MissingCredentials),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insecure_rule_allows_only_loopback() {
        for ok in [
            "http://127.0.0.1:8080",
            "http://127.1.2.3",
            "http://localhost:1",
            "http://LOCALHOST",
            "http://[::1]:9000",
            "https://api.example.com",
            "https://10.0.0.1",
        ] {
            assert!(check_base_url(ok, false).is_ok(), "{ok}");
        }
        for bad in [
            "http://api.example.com",
            "http://10.0.0.1",
            "http://[::2]",
            "http://localhost.example.com",
            "http://128.0.0.1",
        ] {
            let err = check_base_url(bad, false).unwrap_err();
            assert!(matches!(err, ConfigError::InsecureUrl { .. }), "{bad}");
            assert!(err.to_string().contains("--allow-insecure-http"), "{err}");
            assert!(check_base_url(bad, true).is_ok(), "{bad}");
        }
        assert!(matches!(
            check_base_url("ftp://x", true),
            Err(ConfigError::InvalidBaseUrl { .. })
        ));
        assert!(check_base_url("https://x/?a=b", false).is_err());
    }

    #[test]
    fn a_url_without_a_scheme_suggests_one() {
        for (raw, suggested) in [
            ("api.example.com", "https://api.example.com"),
            ("api.example.com:8443/v1", "https://api.example.com:8443/v1"),
            ("localhost:8080", "http://localhost:8080"),
            ("127.0.0.1:8080", "http://127.0.0.1:8080"),
        ] {
            let err = check_base_url(raw, false).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("invalid base URL {raw:?}: no scheme: did you mean `{suggested}`?")
            );
        }
        let err = check_base_url("me:hunter2@api.example.com", false).unwrap_err();
        assert!(!err.to_string().contains("hunter2"), "{err}");
    }

    #[test]
    fn user_info_in_url_is_refused_without_echo() {
        let err = check_base_url("https://me:hunter2@api.example.com", false).unwrap_err();
        assert!(!err.to_string().contains("hunter2"), "{err}");
        // Also when the URL does not parse.
        let err = check_base_url("https://me:hunter2@[api.example.com", false).unwrap_err();
        assert!(
            matches!(err, ConfigError::UnparsableBaseUrl { .. }),
            "{err:?}"
        );
        assert!(!err.to_string().contains("hunter2"), "{err}");
        let err = check_base_url("https://[api.example.com", false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid base URL \"https://[api.example.com\": invalid IPv6 address"
        );
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("30").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("0.5s").unwrap(), Duration::from_millis(500));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("3h").is_err());
        assert!(parse_duration("-1").is_err());
    }

    #[test]
    fn debug_redacts_secrets() {
        let c = ClientConfig::new("https://x", Credentials::password("me@x", "hunter2"));
        let d = format!("{c:?}");
        assert!(!d.contains("hunter2") && d.contains("me@x"), "{d}");
        let d = format!("{:?}", Credentials::api_key("sk-123"));
        assert!(!d.contains("sk-123"), "{d}");
    }
}
