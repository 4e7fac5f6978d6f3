//! Logging in with an API key (POST `/v2/login/api_key`): the key is
//! exchanged for a bearer token ([`super::Token`]). The password flow's form
//! is built by the client itself.

use serde::{Deserialize, Serialize};

use super::secret::Secret;

/// Body of POST `/v2/login/api_key` (`ApiKeyLoginRequest`). `Debug` never
/// shows the key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiKeyLoginRequest {
    /// The API key. Secret: never logged.
    pub api_key: Secret,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_sent_but_never_printed() {
        let r = ApiKeyLoginRequest {
            api_key: Secret::new("k-123"),
        };
        assert!(!format!("{r:?}").contains("k-123"));
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::json!({"api_key": "k-123"})
        );
    }
}
