//! Which authentication scheme each request uses, and the cache of the bearer
//! token obtained by the OAuth2 password flow.
//!
//! - An API key goes in the API-key header, on every operation.
//! - A user name and password go as HTTP Basic where the operation accepts it
//!   ([`super::operation::Operation::basic_ok`]); elsewhere (spec operations 3,
//!   6 and 10) the client logs in (`POST {base_url}/login`) and sends the
//!   bearer token, cached for every later request. A deployment may refuse
//!   Basic on more operations than the spec lists: a 401 to a Basic request
//!   sends that request again with the bearer token, and the operation is
//!   remembered ([`BasicRefusals`]) so that it goes with the token for the
//!   rest of the run. A 401 on a request sent with
//!   that token means it expired: the client logs in again, once, and retries
//!   the request once ([`TokenCache::refresh`] makes concurrent refreshes one).
//! - A static access token is sent as a bearer token; it cannot be renewed.

use std::collections::HashSet;
use std::future::Future;
use std::sync::Mutex;

use base64::Engine as _;
use reqwest::header::HeaderValue;

use super::config::{
    ConfigError, Credentials, ENV_ACCESS_TOKEN, ENV_API_KEY, ENV_PASSWORD, ENV_USERNAME,
};
use super::error::ApiError;
use super::operation::Operation;

/// The scheme a request is sent with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// The API-key header.
    ApiKey,
    /// HTTP Basic.
    Basic,
    /// A bearer token from the password flow (renewable).
    LoginBearer,
    /// The static access token (not renewable).
    StaticBearer,
}

/// The scheme for `op` with `credentials`.
pub fn scheme_for(credentials: &Credentials, op: &Operation) -> Scheme {
    match credentials {
        Credentials::ApiKey(_) => Scheme::ApiKey,
        Credentials::AccessToken(_) => Scheme::StaticBearer,
        Credentials::Password { .. } if op.basic_ok => Scheme::Basic,
        Credentials::Password { .. } => Scheme::LoginBearer,
    }
}

/// The operations that refused HTTP Basic in this run (a 401 to a Basic
/// request): they are sent with the login's bearer token from then on.
#[derive(Debug, Default)]
pub(crate) struct BasicRefusals(Mutex<HashSet<&'static str>>);

impl BasicRefusals {
    /// Whether `op` refused Basic before.
    pub(crate) fn refused(&self, op: &Operation) -> bool {
        self.lock().contains(op.name)
    }

    /// Remembers that `op` refused Basic; `true` the first time.
    pub(crate) fn remember(&self, op: &'static Operation) -> bool {
        self.lock().insert(op.name)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<&'static str>> {
        // A set of names stays valid whatever a panicking holder did.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// What a 401 means, per scheme: which variables to check.
pub fn unauthorized_hint(scheme: Scheme, api_key_header: &str) -> String {
    match scheme {
        Scheme::ApiKey => format!(
            "the API key was refused; check {ENV_API_KEY} (sent in header {api_key_header}; \
             use --api-key-header if your deployment expects another)"
        ),
        Scheme::Basic => format!(
            "the user name and password were refused (HTTP Basic); check {ENV_USERNAME} and {ENV_PASSWORD}"
        ),
        Scheme::LoginBearer => format!(
            "a freshly issued login token was refused; check {ENV_USERNAME} / {ENV_PASSWORD} and the user's access"
        ),
        Scheme::StaticBearer => format!(
            "the access token in {ENV_ACCESS_TOKEN} was refused (expired?); get a new one, or set {ENV_API_KEY} instead"
        ),
    }
}

/// The hint of a refused login.
pub fn login_refused_hint() -> String {
    format!("login refused; check {ENV_USERNAME} and {ENV_PASSWORD}")
}

/// The credential header values, built once when the client is built and
/// marked sensitive (never printed by `Debug`).
#[derive(Debug)]
pub(crate) enum CredentialHeader {
    /// The API key, for the API-key header.
    ApiKey(HeaderValue),
    /// `Bearer <access token>`, for `Authorization`.
    Bearer(HeaderValue),
    /// `Basic base64(user:password)`, for `Authorization` where the operation
    /// accepts it; elsewhere the password flow's bearer token is sent.
    Password {
        /// The HTTP Basic value.
        basic: HeaderValue,
    },
}

impl CredentialHeader {
    /// The header values of `credentials`. A value an HTTP header cannot carry
    /// is a configuration error naming the variable, never the value.
    /// Each secret is registered as held ([`crate::scrub::register`]): no output
    /// shows it from now on.
    pub(crate) fn new(credentials: &Credentials) -> Result<Self, ConfigError> {
        let invalid = |variable: &'static str| ConfigError::InvalidCredential { variable };
        Ok(match credentials {
            Credentials::ApiKey(key) => {
                crate::scrub::register(key.expose());
                CredentialHeader::ApiKey(sensitive(key.expose()).ok_or(invalid(ENV_API_KEY))?)
            }
            Credentials::AccessToken(token) => {
                crate::scrub::register(token.expose());
                CredentialHeader::Bearer(
                    bearer_header(token.expose()).ok_or(invalid(ENV_ACCESS_TOKEN))?,
                )
            }
            Credentials::Password { username, password } => {
                let encoded = base64::engine::general_purpose::STANDARD
                    .encode(format!("{username}:{}", password.expose()));
                crate::scrub::register(password.expose());
                crate::scrub::register(&encoded);
                // Base64 is always a valid header value; mapped all the same.
                CredentialHeader::Password {
                    basic: sensitive(&format!("Basic {encoded}")).ok_or(invalid(ENV_PASSWORD))?,
                }
            }
        })
    }
}

/// `value` as a header value marked sensitive; `None` when a header cannot
/// carry it.
fn sensitive(value: &str) -> Option<HeaderValue> {
    let mut v = HeaderValue::from_str(value).ok()?;
    v.set_sensitive(true);
    Some(v)
}

/// `Bearer <token>` as a header value marked sensitive; `None` when a header
/// cannot carry the token.
pub(crate) fn bearer_header(token: &str) -> Option<HeaderValue> {
    sensitive(&format!("Bearer {token}"))
}

/// A bearer token from the password flow, ready to send, with the generation
/// it was issued in.
#[derive(Clone, Debug)]
pub struct CachedToken {
    /// Increases with every login.
    pub generation: u64,
    /// `Bearer <token>`, marked sensitive.
    pub header: HeaderValue,
}

/// The bearer token cache. Logins are single-flight: the lock is held across
/// the login, so concurrent requests wait for one login instead of each
/// logging in.
#[derive(Debug, Default)]
pub struct TokenCache {
    slot: tokio::sync::Mutex<Slot>,
}

#[derive(Debug, Default)]
struct Slot {
    token: Option<CachedToken>,
    /// The generation of the last login attempt: never decreases, even when a
    /// login fails and empties the slot, so a token issued later is always
    /// newer than every token handed out before.
    generation: u64,
}

impl Slot {
    /// Logs in and caches the token, with the next generation.
    async fn login<F, Fut>(&mut self, login: F) -> Result<CachedToken, ApiError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<HeaderValue, ApiError>>,
    {
        self.token = None;
        self.generation += 1;
        let token = CachedToken {
            generation: self.generation,
            header: login().await?,
        };
        self.token = Some(token.clone());
        Ok(token)
    }
}

impl TokenCache {
    /// The cached token, logging in first if there is none.
    pub async fn get_or_login<F, Fut>(&self, login: F) -> Result<CachedToken, ApiError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<HeaderValue, ApiError>>,
    {
        let mut slot = self.slot.lock().await;
        if let Some(t) = slot.token.as_ref() {
            return Ok(t.clone());
        }
        slot.login(login).await
    }

    /// A token newer than `stale` (whose use got a 401): the one another task
    /// already obtained, or a new login. Returns the token and whether this
    /// call logged in.
    pub async fn refresh<F, Fut>(
        &self,
        stale: &CachedToken,
        login: F,
    ) -> Result<(CachedToken, bool), ApiError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<HeaderValue, ApiError>>,
    {
        let mut slot = self.slot.lock().await;
        if let Some(t) = slot
            .token
            .as_ref()
            .filter(|t| t.generation > stale.generation)
        {
            return Ok((t.clone(), false));
        }
        slot.login(login).await.map(|t| (t, true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::operation::{
        CREATE_SECTION, FAVORITE_DASHBOARD, GET_USER, SCORER_VERSION_PROJECTS,
    };
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn password_uses_basic_only_where_accepted() {
        let pw = Credentials::password("u", "p");
        assert_eq!(scheme_for(&pw, &GET_USER), Scheme::Basic);
        for op in [
            &CREATE_SECTION,
            &SCORER_VERSION_PROJECTS,
            &FAVORITE_DASHBOARD,
        ] {
            assert_eq!(scheme_for(&pw, op), Scheme::LoginBearer, "{op}");
        }
        assert_eq!(
            scheme_for(&Credentials::api_key("k"), &CREATE_SECTION),
            Scheme::ApiKey
        );
        assert_eq!(
            scheme_for(&Credentials::access_token("t"), &GET_USER),
            Scheme::StaticBearer
        );
    }

    #[test]
    fn credential_headers_are_built_once_sensitive_and_checked() {
        let CredentialHeader::Password { basic } =
            CredentialHeader::new(&Credentials::password("u", "p")).unwrap()
        else {
            panic!("password credentials");
        };
        assert_eq!(basic, "Basic dTpw");
        assert!(basic.is_sensitive());
        let CredentialHeader::Bearer(bearer) =
            CredentialHeader::new(&Credentials::access_token("tok-9")).unwrap()
        else {
            panic!("access token");
        };
        assert_eq!(bearer, "Bearer tok-9");
        assert!(bearer.is_sensitive() && !format!("{bearer:?}").contains("tok-9"));
        let err = CredentialHeader::new(&Credentials::api_key("sk-1\nx")).unwrap_err();
        assert_eq!(
            err,
            ConfigError::InvalidCredential {
                variable: ENV_API_KEY
            }
        );
        assert!(!format!("{err} {err:?}").contains("sk-1"), "{err}");
    }

    #[tokio::test]
    async fn concurrent_refreshes_log_in_once() {
        let cache = Arc::new(TokenCache::default());
        let logins = Arc::new(AtomicU32::new(0));
        let login = |logins: Arc<AtomicU32>| async move {
            let n = logins.fetch_add(1, Ordering::SeqCst);
            Ok(bearer_header(&format!("t{n}")).unwrap())
        };
        let first = cache.get_or_login(|| login(logins.clone())).await.unwrap();
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let (cache, logins, first) = (cache.clone(), logins.clone(), first.clone());
            tasks.push(tokio::spawn(async move {
                cache.refresh(&first, || login(logins)).await.unwrap().0
            }));
        }
        for t in tasks {
            assert_eq!(t.await.unwrap().header, "Bearer t1");
        }
        assert_eq!(logins.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn generations_keep_increasing_after_a_failed_login() {
        let cache = TokenCache::default();
        let logins = AtomicU32::new(0);
        let login = |ok: bool| {
            let n = logins.fetch_add(1, Ordering::SeqCst);
            async move {
                if ok {
                    Ok(bearer_header(&format!("t{n}")).unwrap())
                } else {
                    Err(ApiError::Unauthorized {
                        operation: &crate::client::operation::LOGIN,
                        hint: login_refused_hint(),
                    })
                }
            }
        };
        let first = cache.get_or_login(|| login(true)).await.unwrap();
        assert_eq!(first.generation, 1);
        assert!(cache.refresh(&first, || login(false)).await.is_err());
        let second = cache.get_or_login(|| login(true)).await.unwrap();
        assert_eq!(
            (second.generation, &second.header),
            (3, &bearer_header("t2").unwrap())
        );
        // A task still holding the first token gets the newer one, no login.
        let (got, logged_in) = cache.refresh(&first, || login(true)).await.unwrap();
        assert!(!logged_in);
        assert_eq!(got.header, "Bearer t2");
        assert_eq!(logins.load(Ordering::SeqCst), 3);
    }
}
