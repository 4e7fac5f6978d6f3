//! Credentials of users (passwords, API keys) as the store holds them:
//! sealed into salted fingerprints, never as plain values.

use serde::{Deserialize, Serialize};

use crate::api::Secret;
use crate::sandbox::fingerprint::{constant_time_eq, fingerprint};

/// A credential of a user (password or API key): a plain value only as read
/// from a hand-written fixture, sealed into a salted fingerprint as soon as
/// the state is loaded. A plain credential refuses to serialize, so no file
/// the sandbox writes can hold one.
#[derive(Clone, PartialEq, Eq)]
pub enum Credential {
    /// As written in a fixture file (`"password": "demo-password"`).
    Plain(Secret),
    /// `{"sha256": "<hex>"}`: the salted fingerprint.
    Sealed(String),
}

impl Credential {
    /// Replaces a plain value by its fingerprint under `salt`.
    pub fn seal(&mut self, salt: &str) {
        if let Credential::Plain(secret) = self {
            *self = Credential::Sealed(fingerprint(salt, secret.expose()));
        }
    }

    /// Whether `presented` is this credential.
    pub fn matches(&self, salt: &str, presented: &str) -> bool {
        match self {
            Credential::Plain(secret) => constant_time_eq(secret.expose(), presented),
            Credential::Sealed(fp) => constant_time_eq(fp, &fingerprint(salt, presented)),
        }
    }

    /// Whether `presented`, whose fingerprint under the state's salt is
    /// `presented_fp`, is this credential: for checking one presented value
    /// against many credentials while hashing it once.
    pub fn matches_fingerprint(&self, presented_fp: &str, presented: &str) -> bool {
        match self {
            Credential::Plain(secret) => constant_time_eq(secret.expose(), presented),
            Credential::Sealed(fp) => constant_time_eq(fp, presented_fp),
        }
    }
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credential::Plain(_) => f.write_str("Credential(plain, redacted)"),
            Credential::Sealed(_) => f.write_str("Credential(sealed)"),
        }
    }
}

impl Serialize for Credential {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Credential::Sealed(fp) => {
                use serde::ser::SerializeMap;
                let mut map = s.serialize_map(Some(1))?;
                map.serialize_entry("sha256", fp)?;
                map.end()
            }
            Credential::Plain(_) => Err(serde::ser::Error::custom(
                "refusing to write an unsealed credential",
            )),
        }
    }
}

impl<'de> Deserialize<'de> for Credential {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Wire {
            Plain(String),
            Sealed { sha256: String },
        }
        Ok(match Wire::deserialize(d)? {
            Wire::Plain(s) => Credential::Plain(Secret::new(s)),
            Wire::Sealed { sha256 } => Credential::Sealed(sha256),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_seal_and_never_serialize_plain() {
        let mut c: Credential = serde_json::from_str("\"hunter2\"").unwrap();
        assert!(serde_json::to_string(&c).is_err());
        assert!(!format!("{c:?}").contains("hunter2"));
        assert!(c.matches("salt", "hunter2"));
        assert!(c.matches_fingerprint("unused", "hunter2"));
        c.seal("salt");
        let json = serde_json::to_string(&c).unwrap();
        assert!(json.starts_with("{\"sha256\":\"") && !json.contains("hunter2"));
        assert!(c.matches("salt", "hunter2"));
        assert!(!c.matches("salt", "hunter3"));
        assert!(c.matches_fingerprint(&fingerprint("salt", "hunter2"), "hunter2"));
        assert!(!c.matches_fingerprint(&fingerprint("salt", "hunter3"), "hunter2"));
        let back: Credential = serde_json::from_str(&json).unwrap();
        assert_eq!(back, c);
    }
}
