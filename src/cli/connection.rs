//! The connection flags every command flattens (`--base-url`, `--timeout`,
//! `--max-retries`, ...) and how they, with the credentials from the
//! environment, become the client's [`ClientConfig`].
//!
//! Credentials come from the environment only, never from flags (flags leak
//! into shell history and process lists). [`ConnectionArgs::to_config_with`]
//! reads them through an injectable lookup so tests never mutate the process
//! environment.

use std::time::Duration;

use crate::client::config::{
    ClientConfig, ConfigError, DEFAULT_API_KEY_HEADER, ENV_BASE_URL, credentials_from,
    parse_duration,
};

/// Where credentials come from, as a literal for `concat!` into `--help`.
macro_rules! credentials_help {
    () => {
        "Credentials are read from the environment only (never from flags). When several are \
         set, the first of these wins: EVALCTL_ACCESS_TOKEN (a bearer token, used as is), then \
         EVALCTL_API_KEY (sent in the API-key header), then EVALCTL_USERNAME + EVALCTL_PASSWORD \
         (HTTP Basic where the operation accepts it, else a bearer token from POST \
         {base_url}/login)."
    };
}

/// The long help of `--base-url`: the URL, then where credentials come from.
const BASE_URL_LONG_HELP: &str = concat!(
    "Base URL of the service, e.g. https://api.example.com.\n\n",
    credentials_help!()
);

/// Connection flags every command flattens.
#[derive(Clone, Debug, clap::Args)]
#[command(next_help_heading = "Connection")]
pub struct ConnectionArgs {
    /// Base URL of the service (the help text says where credentials come from).
    #[arg(
        long,
        env = ENV_BASE_URL,
        value_name = "URL",
        help = "Base URL of the service, e.g. https://api.example.com",
        long_help = BASE_URL_LONG_HELP
    )]
    pub base_url: Option<String>,

    /// Name of the header carrying the API key (for deployments that use another).
    #[arg(long, value_name = "NAME", default_value = DEFAULT_API_KEY_HEADER)]
    pub api_key_header: String,

    /// Allow plain http:// to a host that is not loopback (credentials travel unencrypted).
    #[arg(long)]
    pub allow_insecure_http: bool,

    /// Timeout of one request attempt, e.g. 30s, 500ms, 2m.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub timeout: Duration,

    /// Timeout of establishing a connection.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub connect_timeout: Duration,

    /// Retries of a failed idempotent write (500, 502, 503, 504, timeouts, connection errors).
    /// Reads and 429s retry until --retry-budget is spent.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub max_retries: u32,

    /// Time budget of one request, retries and waits included: reads are retried on connection
    /// errors, timeouts, 429 and 5xx until it is spent, and every request waits out a 429.
    #[arg(long, value_name = "DURATION", default_value = "120s", value_parser = parse_duration)]
    pub retry_budget: Duration,

    /// Removed: `--concurrency` is the one cap on requests in flight. Kept
    /// hidden so that a script still passing it gets an error naming the
    /// knob that exists, not clap's "did you mean --max-retries".
    #[arg(long, value_name = "N", hide = true, value_parser = removed_max_in_flight)]
    pub max_in_flight: Option<usize>,

    /// Page size of paginated reads.
    #[arg(long, value_name = "N", default_value_t = crate::api::DEFAULT_PAGE_LIMIT)]
    pub page_size: i64,
}

impl ConnectionArgs {
    /// The configuration, with credentials from the process environment.
    pub fn to_config(&self) -> Result<ClientConfig, ConfigError> {
        self.to_config_with(|name| std::env::var(name).ok())
    }

    /// The configuration, with credentials (and the base URL, when no flag
    /// gave it) read through `env`. Empty values count as unset.
    pub fn to_config_with(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<ClientConfig, ConfigError> {
        let get = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let base_url = self
            .base_url
            .clone()
            .filter(|v| !v.trim().is_empty())
            .or_else(|| get(ENV_BASE_URL))
            .ok_or(ConfigError::MissingBaseUrl)?;
        let credentials = credentials_from(&get)?;
        if self.page_size < 1 {
            return Err(ConfigError::OutOfRange {
                setting: "--page-size",
            });
        }
        let mut config = ClientConfig::new(base_url, credentials);
        config.api_key_header = self.api_key_header.clone();
        config.allow_insecure_http = self.allow_insecure_http;
        config.request_timeout = self.timeout;
        config.connect_timeout = self.connect_timeout;
        config.retry.max_attempts = self.max_retries.saturating_add(1);
        config.retry.max_elapsed = self.retry_budget;
        config.page_size = self.page_size;
        config.checked_base_url()?;
        Ok(config)
    }
}

/// `--max-in-flight`, which was removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "--max-in-flight was removed: --concurrency is the one cap on requests in flight \
     (the client adapts below it; default 64)"
)]
pub struct RemovedMaxInFlight;

/// The value parser of the removed `--max-in-flight`: always an error that
/// names `--concurrency`.
fn removed_max_in_flight(_: &str) -> Result<usize, RemovedMaxInFlight> {
    Err(RemovedMaxInFlight)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::config::{
        Credentials, DEFAULT_CONCURRENCY, ENV_ACCESS_TOKEN, ENV_API_KEY, ENV_PASSWORD, ENV_USERNAME,
    };
    use clap::Parser;

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        conn: ConnectionArgs,
    }

    fn args(extra: &[&str]) -> ConnectionArgs {
        let mut argv = vec!["evalctl"];
        argv.extend_from_slice(extra);
        Cli::try_parse_from(argv).unwrap().conn
    }

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn credentials_precedence_token_then_key_then_password() {
        let all = [
            (ENV_BASE_URL, "https://api.example.com"),
            (ENV_ACCESS_TOKEN, "tok"),
            (ENV_API_KEY, "key"),
            (ENV_USERNAME, "u"),
            (ENV_PASSWORD, "p"),
        ];
        let a = args(&[]);
        let c = a.to_config_with(env(&all)).unwrap();
        assert_eq!(c.credentials, Credentials::access_token("tok"));
        let c = a.to_config_with(env(&all[2..])).unwrap_err();
        assert_eq!(c, ConfigError::MissingBaseUrl);
        let a = args(&["--base-url", "https://x"]);
        assert_eq!(
            a.to_config_with(env(&all[2..])).unwrap().credentials,
            Credentials::api_key("key")
        );
        assert_eq!(
            a.to_config_with(env(&all[3..])).unwrap().credentials,
            Credentials::password("u", "p")
        );
        assert_eq!(
            a.to_config_with(env(&all[3..4])).unwrap_err(),
            ConfigError::IncompletePassword {
                missing: ENV_PASSWORD
            }
        );
        let err = a.to_config_with(env(&[])).unwrap_err();
        assert_eq!(err, ConfigError::MissingCredentials);
        for var in [ENV_API_KEY, ENV_USERNAME, ENV_PASSWORD, ENV_ACCESS_TOKEN] {
            assert!(err.to_string().contains(var), "{err}");
        }
        // Empty values are unset.
        let c = a
            .to_config_with(env(&[(ENV_ACCESS_TOKEN, ""), (ENV_API_KEY, "key")]))
            .unwrap();
        assert_eq!(c.credentials, Credentials::api_key("key"));
    }

    #[test]
    fn flags_reach_the_config() {
        let a = args(&[
            "--base-url",
            "http://api.internal",
            "--allow-insecure-http",
            "--api-key-header",
            "X-Key",
            "--timeout",
            "1500ms",
            "--connect-timeout",
            "2",
            "--max-retries",
            "0",
            "--page-size",
            "7",
        ]);
        let c = a.to_config_with(env(&[(ENV_API_KEY, "k")])).unwrap();
        assert_eq!(c.api_key_header, "X-Key");
        assert_eq!(c.request_timeout, Duration::from_millis(1500));
        assert_eq!(c.connect_timeout, Duration::from_secs(2));
        assert_eq!(c.retry.max_attempts, 1);
        assert_eq!(c.concurrency, usize::from(DEFAULT_CONCURRENCY));
        assert_eq!(c.page_size, 7);
        let insecure = args(&["--base-url", "http://api.internal"]);
        assert!(matches!(
            insecure.to_config_with(env(&[(ENV_API_KEY, "k")])),
            Err(ConfigError::InsecureUrl { .. })
        ));
    }

    #[test]
    fn the_removed_max_in_flight_names_concurrency() {
        let err = Cli::try_parse_from(["evalctl", "--max-in-flight", "4"]).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("--concurrency is the one cap"), "{text}");
        use clap::CommandFactory;
        let help = Cli::command().render_long_help().to_string();
        assert!(!help.contains("max-in-flight"), "{help}");
    }

    #[test]
    fn help_documents_precedence() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
        let help = Cli::command().render_long_help().to_string();
        let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(help.contains("EVALCTL_ACCESS_TOKEN"), "{help}");
        assert!(help.contains("then EVALCTL_API_KEY"), "{help}");
    }
}
