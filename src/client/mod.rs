//! The HTTP client of the service: typed, safe to retry, honest in its errors.
//!
//! [`Client`] is built from a [`ClientConfig`] (which the command line's
//! `crate::cli::ConnectionArgs` fills) and offers one typed method per operation (see the
//! `ops` modules: metric settings, runs, projects, trends, integrations,
//! scorers, templates, users). Every method goes through the same pipeline
//! (`transport`): authentication per the spec's table (`auth`), one
//! throttle shared by the whole client (`throttle`), retries with backoff
//! and `Retry-After` (`retry`: reads within a time budget, writes as their
//! kind allows), never a blind retry of a create, pagination with a loop guard (`paginate`),
//! a bound on the bytes of response bodies held at once (`budget`), counters
//! (`stats`), and one error type ([`ApiError`]).
//!
//! Conventions: a GET of one object answering 404 is `Ok(None)`; a DELETE
//! answering 404 is [`Deleted::AlreadyGone`]; a 404 of a write or of a listing
//! is [`ApiError::NotFound`] (its parent is missing).

mod auth;
mod budget;
pub mod config;
mod error;
pub mod operation;
mod ops;
pub(crate) mod paginate;
mod redact;
mod retry;
mod stats;
mod throttle;
pub(crate) mod transport;

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use reqwest::Url;
use reqwest::header::HeaderName;

pub use config::{ClientConfig, ConfigError, Credentials, RetryPolicy};
pub use error::{ApiError, FieldError};
pub use operation::Operation;
pub use retry::with_attempts;
pub use stats::{Counters, StatsSnapshot};

/// What a DELETE found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deleted {
    /// The object existed and was deleted.
    Deleted,
    /// The object was already gone (404): the wanted state holds.
    AlreadyGone,
}

impl Deleted {
    /// What an apply says of it: "already deleted" when it was gone, else
    /// nothing worth saying.
    pub fn note(self) -> Option<String> {
        (self == Deleted::AlreadyGone).then(|| "already deleted".to_owned())
    }
}

/// The client. Cheap to clone: clones share the connection pool, the token
/// cache, the throttle and the counters.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    config: ClientConfig,
    base_url: Url,
    api_key_header: HeaderName,
    /// The credential header values, built once.
    credential: auth::CredentialHeader,
    http: reqwest::Client,
    tokens: auth::TokenCache,
    /// Operations that refused HTTP Basic in this run.
    basic_refusals: auth::BasicRefusals,
    throttle: throttle::Throttle,
    stats: stats::Stats,
    rng: Mutex<fastrand::Rng>,
    /// The bytes of response bodies held at once (see `budget`).
    budget: budget::Budget,
    /// The service answered (any status) at least once.
    answered: AtomicBool,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `ClientConfig`'s Debug redacts every secret.
        f.debug_struct("Client")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client for `config`. Checks the base URL (plain `http://` only to
    /// loopback unless allowed), the API-key header name and the limits.
    pub fn new(config: ClientConfig) -> Result<Client, ConfigError> {
        let base_url = config.checked_base_url()?;
        let api_key_header = HeaderName::from_bytes(config.api_key_header.as_bytes())
            .map_err(|_| ConfigError::InvalidHeaderName(config.api_key_header.clone()))?;
        let credential = auth::CredentialHeader::new(&config.credentials)?;
        if config.concurrency == 0 {
            return Err(ConfigError::OutOfRange {
                setting: "--concurrency",
            });
        }
        if config.page_size < 1 {
            return Err(ConfigError::OutOfRange {
                setting: "page_size",
            });
        }
        let mut http = reqwest::Client::builder();
        if config::is_loopback_host(base_url.host_str().unwrap_or_default()) {
            // HTTP_PROXY / ALL_PROXY would carry the credentials, in clear
            // over plain http://, to a proxy: loopback is never proxied.
            http = http.no_proxy();
        }
        let http = http
            .connect_timeout(config.connect_timeout)
            .timeout(config.request_timeout)
            // A redirect could carry the API-key header to another host.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("evalctl/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ConfigError::HttpClient(e.to_string()))?;
        Ok(Client {
            inner: Arc::new(Inner {
                throttle: throttle::Throttle::new(config.concurrency, config.adaptive_concurrency),
                base_url,
                api_key_header,
                credential,
                http,
                tokens: auth::TokenCache::default(),
                basic_refusals: auth::BasicRefusals::default(),
                stats: stats::Stats::default(),
                rng: Mutex::new(fastrand::Rng::new()),
                budget: budget::Budget::default(),
                answered: AtomicBool::new(false),
                config,
            }),
        })
    }

    /// The configuration the client was built with.
    pub fn config(&self) -> &ClientConfig {
        &self.inner.config
    }

    /// A snapshot of the counters (requests, retries, 429s, failures,
    /// re-logins per operation), deterministic in order.
    pub fn stats(&self) -> StatsSnapshot {
        self.inner.stats.snapshot()
    }

    /// The current in-flight limit: with adaptive concurrency, where it has
    /// adapted to below `--concurrency`.
    pub fn in_flight_limit(&self) -> usize {
        self.inner.throttle.limit()
    }

    /// How often the adaptive limit was lowered: on 429s, on rising latency.
    pub fn limit_decreases(&self) -> (u64, u64) {
        self.inner.throttle.decreases()
    }

    /// The most bytes of response bodies this client held at once so far
    /// (at most 96 MiB, whatever the service sends: see `budget`).
    pub fn response_bytes_peak(&self) -> usize {
        self.inner.budget.peak()
    }

    /// The page size of paginated reads.
    pub(crate) fn page_size(&self) -> i64 {
        self.inner.config.page_size
    }
}
