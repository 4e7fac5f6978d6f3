//! Model-provider integrations of the calling user (spec operation 4 and the
//! reference's reads and delete).
//!
//! PUT creates or updates the caller's integration of a provider, named
//! after the provider; PUT `/v2/integrations/custom/{name}` the caller's
//! custom integration of that name (so `custom` names the one PUT
//! `/v2/integrations/custom` writes). An integration is one record per
//! caller, provider and name. Reads and deletes by provider address the
//! integration named after the provider; the listing shows them all. What is
//! stored is the body's non-secret fields (with the create schema's defaults
//! filled in by the HTTP layer) and a salted fingerprint of its secret fields
//! ([`crate::api::SECRET_FIELDS`] at any depth) with the time they were sent:
//! never a secret value. Reads give the provider's read shape: the fields
//! the read schema lists at top level (the custom provider's `endpoint` as
//! `base_url`), the other non-secret fields in `extra`.

use serde_json::{Map, Value, json};

use crate::api::{IntegrationProvider, IntegrationRecord as IntegrationDb, SECRET_FIELDS};

use super::users::permissions;
use super::{ApiError, IntegrationRecord, State, UserRecord, now, to_json};
use crate::sandbox::fingerprint::{fingerprint, new_id};

/// The actions listed in an integration's `permissions`.
const INTEGRATION_ACTIONS: &[&str] = &["update", "delete", "share"];

/// Splits a create body into its non-secret fields and a canonical JSON
/// text of its secret fields (keys sorted at every depth), which is only
/// ever fingerprinted.
pub fn split_secrets(body: &Map<String, Value>) -> (Map<String, Value>, String) {
    fn walk(
        map: &Map<String, Value>,
        secrets: &mut Vec<(String, Value)>,
        path: &str,
    ) -> Map<String, Value> {
        let mut public = Map::new();
        for (k, v) in map {
            let here = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            if SECRET_FIELDS.contains(&k.as_str()) {
                secrets.push((here, canonical(v)));
            } else if let Value::Object(inner) = v {
                public.insert(k.clone(), Value::Object(walk(inner, secrets, &here)));
            } else {
                public.insert(k.clone(), v.clone());
            }
        }
        public
    }
    let mut secrets = Vec::new();
    let public = walk(body, &mut secrets, "");
    secrets.sort_by(|a, b| a.0.cmp(&b.0));
    let text = Value::Array(secrets.into_iter().map(|(k, v)| json!([k, v])).collect()).to_string();
    (public, text)
}

/// A JSON value with object keys sorted at every depth.
fn canonical(v: &Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), canonical(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

impl State {
    /// The caller's integration of a provider (the one named after it).
    pub fn integration(
        &self,
        provider: &IntegrationProvider,
        caller: &UserRecord,
    ) -> Option<&IntegrationRecord> {
        self.integrations
            .iter()
            .find(|i| is_named(i, provider, provider.as_str(), caller))
    }

    /// The `IntegrationDB` shape of a record (never a secret).
    pub fn integration_db(&self, record: &IntegrationRecord, caller: &UserRecord) -> IntegrationDb {
        IntegrationDb {
            id: record.id.clone(),
            permissions: permissions(caller, INTEGRATION_ACTIONS),
            name: record.name.clone(),
            provider: record.provider.clone(),
            created_at: record.created_at.clone(),
            updated_at: record.updated_at.clone(),
            created_by: record.user_id.clone(),
            is_selected: record.is_selected,
            is_disabled: record.is_disabled,
        }
    }

    /// PUT `/v2/integrations/{provider}` (spec operation 4, `name` being the
    /// provider's) and PUT `/v2/integrations/custom/{name}`: creates or
    /// updates the caller's integration `name` of `provider`; answers
    /// `IntegrationDB`.
    pub fn put_integration(
        &mut self,
        provider: IntegrationProvider,
        name: &str,
        public: Map<String, Value>,
        secret_text: &str,
        caller: &UserRecord,
    ) -> Result<Value, ApiError> {
        let ts = now();
        let fp = fingerprint(&self.salt, secret_text);
        let at = self
            .integrations
            .iter()
            .position(|i| is_named(i, &provider, name, caller));
        let record = match at {
            Some(i) => {
                let r = &mut self.integrations[i];
                r.fields = public;
                r.secret_fingerprint = fp;
                r.secret_updated_at = ts.clone();
                r.updated_at = ts;
                r.clone()
            }
            None => {
                let r = IntegrationRecord {
                    id: new_id(),
                    user_id: caller.id.clone(),
                    name: name.to_owned(),
                    provider,
                    created_at: ts.clone(),
                    updated_at: ts.clone(),
                    fields: public,
                    secret_fingerprint: fp,
                    secret_updated_at: ts,
                    is_selected: true,
                    is_disabled: false,
                };
                self.integrations.push(r.clone());
                r
            }
        };
        to_json(&self.integration_db(&record, caller))
    }

    /// GET `/integrations`: the caller's integrations (`IntegrationDB[]`).
    pub fn list_integrations(&self, caller: &UserRecord) -> Result<Value, ApiError> {
        let list: Vec<IntegrationDb> = self
            .integrations
            .iter()
            .filter(|i| i.user_id == caller.id)
            .map(|i| self.integration_db(i, caller))
            .collect();
        to_json(&list)
    }

    /// DELETE `/integrations/{name}`: the caller's integration named after
    /// the provider; 404 when the caller has none.
    pub fn delete_integration(
        &mut self,
        provider: &IntegrationProvider,
        caller: &UserRecord,
    ) -> Result<(), ApiError> {
        let before = self.integrations.len();
        self.integrations
            .retain(|i| !is_named(i, provider, provider.as_str(), caller));
        if self.integrations.len() == before {
            Err(ApiError::not_found("Integration"))
        } else {
            Ok(())
        }
    }
}

/// Whether `record` is the caller's integration `name` of `provider`.
fn is_named(
    record: &IntegrationRecord,
    provider: &IntegrationProvider,
    name: &str,
    caller: &UserRecord,
) -> bool {
    &record.provider == provider && record.name == name && record.user_id == caller.id
}

/// The keys of the read shape that [`read_shape`] writes itself, never from
/// the stored fields or the schema's defaults.
pub const SHAPE_KEYS: &[&str] = &["id", "name", "provider", "extra"];

/// Fills into `target` the defaults of the schema properties `props`,
/// except secrets, keys `target` already has and the keys in `skip` (as
/// pydantic fills the defaults of fields a body left out).
pub fn fill_defaults(target: &mut Map<String, Value>, props: &Map<String, Value>, skip: &[&str]) {
    for (k, schema) in props {
        if skip.contains(&k.as_str())
            || SECRET_FIELDS.contains(&k.as_str())
            || target.contains_key(k)
        {
            continue;
        }
        if let Some(default) = schema.get("default") {
            target.insert(k.clone(), default.clone());
        }
    }
}

/// The read shape of GET `/v2/integrations/{name}`: `props` are the
/// properties of the provider's read schema (their defaults are used for
/// fields the body did not set).
pub fn read_shape(record: &IntegrationRecord, props: &Map<String, Value>) -> Value {
    let mut top = Map::new();
    let mut extra = Map::new();
    for (k, v) in &record.fields {
        let name = match (&record.provider, k.as_str()) {
            (IntegrationProvider::Custom, "endpoint") => "base_url".to_owned(),
            _ => k.clone(),
        };
        if props.contains_key(&name) && !SHAPE_KEYS.contains(&name.as_str()) {
            top.insert(name, v.clone());
        } else {
            extra.insert(k.clone(), v.clone());
        }
    }
    fill_defaults(&mut top, props, SHAPE_KEYS);
    top.insert("id".into(), json!(record.id));
    top.insert("name".into(), json!(record.name));
    top.insert("provider".into(), json!(record.provider.as_str()));
    top.insert(
        "extra".into(),
        if extra.is_empty() {
            Value::Null
        } else {
            Value::Object(extra)
        },
    );
    Value::Object(top)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_split_out_at_any_depth_and_canonicalized() {
        let body: Map<String, Value> = serde_json::from_value(json!({
            "token": "tok",
            "gcs_config": {"service_account_credentials": "creds", "bucket_name": "b"},
            "headers": {"b": "2", "a": "1"},
            "endpoint": "https://x"
        }))
        .unwrap();
        let (public, text) = split_secrets(&body);
        let public_text = Value::Object(public.clone()).to_string();
        assert!(!public_text.contains("tok") && !public_text.contains("creds"));
        assert_eq!(public["gcs_config"]["bucket_name"], "b");
        assert!(text.contains("tok") && text.contains("\"a\":\"1\",\"b\":\"2\""));
    }
}
