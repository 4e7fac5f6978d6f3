//! Which authentication scheme each request uses, and the cache of the bearer
//! token obtained by the OAuth2 password flow.
//!
//! - An API key goes in the API-key header, on every operation.
//! - A user name and password go as HTTP Basic where the operation accepts it
//!   ([`super::operation::Operation::basic_ok`]); elsewhere (spec operations 3,
//!   6 and 10) the client logs in (`POST {base_url}/login`) and sends the
//!   bearer token, cached for every later request. A 401 on a request sent with
//!   that token means it expired: the client logs in again, once, and retries
//!   the request once ([`TokenCache::refresh`] makes concurrent refreshes one).
//! - A static access token is sent as a bearer token; it cannot be renewed.

use std::future::Future;
use std::sync::Arc;

use super::config::{Credentials, ENV_ACCESS_TOKEN, ENV_API_KEY, ENV_PASSWORD, ENV_USERNAME};
use super::error::ApiError;
use super::operation::Operation;
use crate::api::Secret;

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

/// A bearer token from the password flow, with the generation it was issued in.
#[derive(Clone, Debug)]
pub struct CachedToken {
    /// Increases with every login.
    pub generation: u64,
    /// The token (secret).
    pub token: Arc<Secret>,
}

/// The bearer token cache. Logins are single-flight: the lock is held across
/// the login, so concurrent requests wait for one login instead of each
/// logging in.
#[derive(Debug, Default)]
pub struct TokenCache {
    slot: tokio::sync::Mutex<Option<CachedToken>>,
}

impl TokenCache {
    /// The cached token, logging in first if there is none.
    pub async fn get_or_login<F, Fut>(&self, login: F) -> Result<CachedToken, ApiError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Secret, ApiError>>,
    {
        let mut slot = self.slot.lock().await;
        if let Some(t) = slot.as_ref() {
            return Ok(t.clone());
        }
        let token = CachedToken {
            generation: 1,
            token: Arc::new(login().await?),
        };
        *slot = Some(token.clone());
        Ok(token)
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
        Fut: Future<Output = Result<Secret, ApiError>>,
    {
        let mut slot = self.slot.lock().await;
        if let Some(t) = slot.as_ref().filter(|t| t.generation > stale.generation) {
            return Ok((t.clone(), false));
        }
        *slot = None;
        let token = CachedToken {
            generation: stale.generation + 1,
            token: Arc::new(login().await?),
        };
        *slot = Some(token.clone());
        Ok((token, true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::operation::{
        CREATE_SECTION, FAVORITE_DASHBOARD, GET_USER, SCORER_VERSION_PROJECTS,
    };
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

    #[tokio::test]
    async fn concurrent_refreshes_log_in_once() {
        let cache = Arc::new(TokenCache::default());
        let logins = Arc::new(AtomicU32::new(0));
        let login = |logins: Arc<AtomicU32>| async move {
            let n = logins.fetch_add(1, Ordering::SeqCst);
            Ok(Secret::new(format!("t{n}")))
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
            assert_eq!(t.await.unwrap().token.expose(), "t1");
        }
        assert_eq!(logins.load(Ordering::SeqCst), 2);
    }
}
