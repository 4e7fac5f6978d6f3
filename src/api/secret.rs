//! A secret string (API key, password, bearer token, integration token), and
//! the one rule of which JSON keys hold secrets ([`is_secret_key`],
//! [`redact_value`]), shared by the client's logs and the sandbox's 422s.
//!
//! `Debug` and `Display` print `[redacted]`, so a secret cannot leak through a
//! log line, an error message or a panic. `Serialize` writes the real value:
//! it exists only for request bodies sent to the service, and no output,
//! plan file or log of evalctl serializes a type holding a [`Secret`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::SECRET_FIELDS;

/// A secret value that never prints itself.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The secret value, for the one place that must send it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the secret is the empty string.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

impl schemars::JsonSchema for Secret {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Secret".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "string", "writeOnly": true })
    }
}

/// Keys holding secrets besides the integration fields of [`SECRET_FIELDS`]:
/// the login form's password, tokens, keys, credentials.
const MORE_SECRET_KEYS: &[&str] = &[
    "password",
    "access_token",
    "refresh_token",
    "api_key",
    "client_secret",
    "authorization",
    "secret",
    "credentials",
];

/// Whether a JSON key names a secret (case-insensitive): the one rule, used
/// by the client's logs, the sandbox's 422s, and the manifest loader and the
/// planner for the values of Integration documents (under such a key a value
/// must come from the environment, and is never shown).
pub fn is_secret_key(key: &str) -> bool {
    SECRET_FIELDS
        .iter()
        .chain(MORE_SECRET_KEYS)
        .any(|k| k.eq_ignore_ascii_case(key))
}

/// Replaces, in place, the value of every secret key at any depth with
/// `"[redacted]"`.
pub fn redact_value(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                if is_secret_key(k) {
                    *v = Value::String("[redacted]".to_owned());
                } else {
                    redact_value(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact_value),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_prints_itself() {
        let s = Secret::new("sk-live-123");
        assert_eq!(format!("{s:?} {s}"), "[redacted] [redacted]");
        assert_eq!(s.expose(), "sk-live-123");
    }

    #[test]
    fn secret_keys_are_matched_case_insensitively_at_any_depth() {
        assert!(is_secret_key("token") && is_secret_key("Password"));
        assert!(is_secret_key("CLIENT_SECRET") && !is_secret_key("bucket_name"));
        assert!(is_secret_key("Authorization") && is_secret_key("credentials"));
        assert!(!is_secret_key("api_key_header") && !is_secret_key("authentication_type"));
        let mut v = serde_json::json!({"a": [{"Token": "t1", "name": "n"}], "password": "p1"});
        redact_value(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"a": [{"Token": "[redacted]", "name": "n"}], "password": "[redacted]"})
        );
    }
}
