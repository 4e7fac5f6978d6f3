//! Logging in with an API key: POST `/v2/login/api_key` exchanges a key for a
//! bearer token (the reference's alternative to the password flow, which the
//! client performs itself when it needs a token).

use super::super::operation::LOGIN_API_KEY;
use super::super::transport::Call;
use super::super::{ApiError, Client};
use crate::api::{ApiKeyLoginRequest, Secret, Token};

impl Client {
    /// Exchanges `api_key` for a bearer token. Neither the body nor the
    /// answer is ever logged. A refused key is [`ApiError::Unauthorized`].
    pub async fn login_with_api_key(&self, api_key: &Secret) -> Result<Token, ApiError> {
        let body = ApiKeyLoginRequest {
            api_key: api_key.clone(),
        };
        let token: Token = self
            .fetch(Call::new(&LOGIN_API_KEY, &[]).json(&body)?)
            .await?;
        // A token evalctl holds: no output shows it.
        crate::scrub::register(token.access_token.expose());
        Ok(token)
    }
}
