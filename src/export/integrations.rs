//! Live integrations to `kind: Integration` documents: the provider, the
//! non-secret fields the service returns (top level and `extra`; the custom
//! provider's `base_url` is the manifest's `endpoint`), and every secret as
//! an environment reference — never a value.
//!
//! Reads never return secrets; should one ever carry a secret field anyway,
//! it is dropped before anything else happens. The references follow the
//! names the manifest loader suggests: `${<PROVIDER>_API_KEY}` for a `token`
//! or `api_key_value`, `${CUSTOM_TOKEN}` for the custom provider's OAuth2
//! `token`, `${<KEY>}` for each key of an AWS `token` mapping, and
//! `${<PROVIDER>_CREDENTIALS}` for Vertex AI's service account credentials.
//!
//! The other values are written as read: an endpoint, a deployment, an
//! organization id, a header such as `X-Team` are configuration the service
//! returns, and the first apply after an export needs only the token
//! variables. A read cannot tell whether a value came from the environment,
//! so a value that may be a credential is written as a reference all the
//! same, `${<PROVIDER>_<PATH>}` (`${AZURE_DEFAULT_HEADERS_AUTHORIZATION}`),
//! and a comment lists the variables to set: every value under a key that
//! names a credential ([`crate::api::secret::is_secret_key`]), and in the
//! free-form maps where credentials travel (`default_headers`,
//! `init_kwargs`) every value under a key that reads like one (holding
//! `key`, `token`, `secret`, `password`, `auth`, `credential`, ...: an
//! `X-Api-Key` header, an `access_key` init kwarg).
//!
//! A field is exported only when planning it against the same read compares
//! equal (a field the service returns in a shape a manifest cannot hold,
//! such as a nested `null`, is left out and named in a comment), so the
//! round trip stays empty.

use serde_json::{Map, Value, json};

use super::write::{Body, Document};
use crate::api::secret::is_secret_key;
use crate::api::{IntegrationConfig, IntegrationCreate, IntegrationProvider, SECRET_FIELDS};
use crate::manifest::interpolate::secret_variable;
use crate::manifest::types::{EnvRef, IntegrationSpec};
use crate::state::integrations::declared_fields;

/// Keys of a read that describe the record, not its configuration.
const RECORD_KEYS: &[&str] = &["id", "name", "provider", "extra"];

/// Why an integration cannot be exported (a warning: the rest is exported).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unexportable {
    /// The provider is one this version does not know.
    #[error(
        "integration `{0}`: this version of evalctl does not know the provider; it was not exported"
    )]
    UnknownProvider(String),
    /// The read lacks a field the provider's body requires.
    #[error(
        "integration `{0}`: the service's read lacks a field its body needs; it was not exported"
    )]
    Incomplete(String),
}

/// The Integration document of one live integration, or why it cannot be
/// exported (an unknown provider, or a read missing a required field).
pub fn integration_document(live: &IntegrationConfig) -> Result<Document, Unexportable> {
    let provider = &live.provider;
    if let IntegrationProvider::Unknown(name) = provider {
        return Err(Unexportable::UnknownProvider(name.clone()));
    }
    let mut fields = Map::new();
    for (key, value) in live
        .fields
        .iter()
        .chain(live.extra.iter().flat_map(|e| e.iter()))
    {
        if RECORD_KEYS.contains(&key.as_str()) || value.is_null() {
            continue;
        }
        let key = match (provider, key.as_str()) {
            (IntegrationProvider::Custom, "base_url") => "endpoint".to_owned(),
            _ => key.clone(),
        };
        fields.entry(key).or_insert_with(|| value.clone());
    }
    strip_secrets(&mut fields);
    let (secrets, mut preamble) = secret_references(provider, &fields);
    let mut config = typed(provider, &fields, &secrets)?;
    // Keep only what compares equal to the read, as `plan` compares it.
    let declared = config.public_fields();
    let returned = declared_fields(live, &declared);
    let differing: Vec<String> = declared
        .iter()
        .filter(|(k, v)| returned.get(*k) != Some(*v))
        .map(|(k, _)| k.clone())
        .collect();
    if !differing.is_empty() {
        for key in &differing {
            fields.remove(key);
        }
        config = typed(provider, &fields, &secrets)?;
        preamble.push(format!(
            "Not exported (the service returns it in a form a manifest cannot hold): {}.",
            differing
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let variables = references_for_credentials(provider, &mut fields);
    if !variables.is_empty() {
        config = typed(provider, &fields, &secrets)?;
        preamble.push(format!(
            "Values that may be credentials are written as references, never as read: set {} (the values are in the service's settings), or write a value that is not secret in its place.",
            variables
                .iter()
                .map(|v| format!("`{v}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok(Document {
        preamble,
        body: Body::Integration(Box::new(IntegrationSpec {
            rotate_secrets: None,
            name: None,
            config,
            env: Default::default(),
        })),
        comments: Default::default(),
    })
}

/// Removes secret fields at any depth.
fn strip_secrets(map: &mut Map<String, Value>) {
    map.retain(|k, _| !SECRET_FIELDS.contains(&k.as_str()));
    for value in map.values_mut() {
        if let Value::Object(inner) = value {
            strip_secrets(inner);
        }
    }
}

/// Parts of a key that make its value a possible credential, beside the
/// keys of [`is_secret_key`] (matched case-insensitively, anywhere in the key).
const CREDENTIAL_PARTS: &[&str] = &[
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "auth",
    "credential",
    "cookie",
    "signature",
    "session",
];

/// Maps whose keys are anyone's (headers, a handler's keyword arguments):
/// under them a key that reads like a credential is taken for one.
const FREE_FORM: &[&str] = &["default_headers", "init_kwargs", "headers"];

/// Whether the value under `key` may be a credential: written as a
/// reference. In a [`FREE_FORM`] map (`free_form`), also a key that reads
/// like a credential; elsewhere keys are the service's own
/// (`authentication_scope`, `oauth2_token_url`, `api_key_header` hold none).
fn may_be_credential(key: &str, free_form: bool) -> bool {
    let lower = key.to_ascii_lowercase();
    is_secret_key(key) || (free_form && CREDENTIAL_PARTS.iter().any(|part| lower.contains(part)))
}

/// Replaces every value under a key that may name a credential
/// ([`may_be_credential`]) with a reference; returns the variables, sorted.
fn references_for_credentials(
    provider: &IntegrationProvider,
    fields: &mut Map<String, Value>,
) -> Vec<String> {
    fn walk(
        provider: &IntegrationProvider,
        value: &mut Value,
        path: &mut Vec<String>,
        credential: bool,
        out: &mut Vec<String>,
    ) {
        match value {
            Value::Object(map) => {
                let free_form = path.last().is_some_and(|k| FREE_FORM.contains(&k.as_str()));
                for (k, v) in map.iter_mut() {
                    path.push(k.clone());
                    let credential = credential || may_be_credential(k, free_form);
                    walk(provider, v, path, credential, out);
                    path.pop();
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter_mut().enumerate() {
                    path.push(i.to_string());
                    walk(provider, v, path, credential, out);
                    path.pop();
                }
            }
            Value::Null => {}
            // A value that reads exactly as a reference (`${TENANT}`) is
            // one to the loader (write.rs leaves it unescaped): a reference.
            scalar
                if credential
                    || scalar
                        .as_str()
                        .is_some_and(|s| EnvRef::try_from(s.to_owned()).is_ok()) =>
            {
                let parts: Vec<&str> = path.iter().map(String::as_str).collect();
                let name = secret_variable(provider.as_str(), &parts);
                *scalar = reference(&name);
                out.push(name);
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (k, v) in fields.iter_mut() {
        let mut path = vec![k.clone()];
        walk(
            provider,
            v,
            &mut path,
            may_be_credential(k, false),
            &mut out,
        );
    }
    out.sort();
    out.dedup();
    out
}

fn reference(name: &str) -> Value {
    Value::String(format!("${{{name}}}"))
}

/// The secret fields to write (as references) and comments about them.
fn secret_references(
    provider: &IntegrationProvider,
    fields: &Map<String, Value>,
) -> (Map<String, Value>, Vec<String>) {
    let variable = |path: &[&str]| reference(&secret_variable(provider.as_str(), path));
    let mut secrets = Map::new();
    let mut notes = Vec::new();
    match provider {
        IntegrationProvider::AwsBedrock | IntegrationProvider::AwsSagemaker => {
            let keys: &[&str] = match fields.get("credential_type").and_then(Value::as_str) {
                Some("assumed_role") => &["aws_role_arn"],
                _ => &["aws_access_key_id", "aws_secret_access_key"],
            };
            let token: Map<String, Value> = keys
                .iter()
                .map(|k| ((*k).to_owned(), variable(&["token", k])))
                .collect();
            secrets.insert("token".into(), Value::Object(token));
            notes.push(
                "The service does not return the keys of `token`: check them against your credentials."
                    .to_owned(),
            );
        }
        IntegrationProvider::Custom => {
            match fields.get("authentication_type").and_then(Value::as_str) {
                Some("api_key") => {
                    secrets.insert("api_key_value".into(), variable(&["api_key_value"]));
                }
                Some("none") => {}
                _ => {
                    secrets.insert("token".into(), variable(&["token"]));
                }
            }
            notes.push(
                "`headers` are secret and never returned: add any as `${CUSTOM_HEADER_<NAME>}`."
                    .to_owned(),
            );
        }
        _ => {
            secrets.insert("token".into(), variable(&["token"]));
        }
    }
    if *provider == IntegrationProvider::VertexAi && fields.get("gcs_config").is_some() {
        secrets.insert(
            "gcs_config.service_account_credentials".into(),
            variable(&["gcs_config", "service_account_credentials"]),
        );
    }
    (secrets, notes)
}

/// The typed body: the fields, the secret references, the provider tag.
/// Fields the provider's body does not have are dropped (serde ignores them).
fn typed(
    provider: &IntegrationProvider,
    fields: &Map<String, Value>,
    secrets: &Map<String, Value>,
) -> Result<IntegrationCreate<EnvRef>, Unexportable> {
    let mut body = Map::new();
    body.insert("provider".into(), json!(provider.as_str()));
    for (k, v) in fields {
        body.insert(k.clone(), v.clone());
    }
    for (k, v) in secrets {
        match k.split_once('.') {
            Some((outer, inner)) => {
                if let Some(Value::Object(map)) = body.get_mut(outer) {
                    map.insert(inner.to_owned(), v.clone());
                }
            }
            None => {
                body.insert(k.clone(), v.clone());
            }
        }
    }
    match serde_json::from_value::<IntegrationCreate<EnvRef>>(Value::Object(body.clone())) {
        Ok(config) => Ok(config),
        Err(_) => typed_field_by_field(provider, fields, secrets, &body),
    }
}

/// When the whole read does not fit the body type, keeps the fields that do,
/// one by one, in key order.
fn typed_field_by_field(
    provider: &IntegrationProvider,
    fields: &Map<String, Value>,
    secrets: &Map<String, Value>,
    full: &Map<String, Value>,
) -> Result<IntegrationCreate<EnvRef>, Unexportable> {
    let mut keys: Vec<&String> = fields.keys().collect();
    keys.sort();
    let base: Map<String, Value> = full
        .iter()
        .filter(|(k, _)| !fields.contains_key(*k) || secrets.contains_key(*k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut kept = base;
    let fits = |m: &Map<String, Value>| {
        serde_json::from_value::<IntegrationCreate<EnvRef>>(Value::Object(m.clone())).ok()
    };
    let mut result = fits(&kept);
    for key in keys {
        let mut tried = kept.clone();
        if let Some(v) = full.get(key) {
            tried.insert(key.clone(), v.clone());
        }
        if let Some(config) = fits(&tried) {
            kept = tried;
            result = Some(config);
        }
    }
    result.ok_or_else(|| Unexportable::Incomplete(provider.as_str().to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(v: Value) -> IntegrationConfig {
        serde_json::from_value(v).unwrap()
    }

    fn fields(doc: &Document) -> Value {
        let Body::Integration(spec) = &doc.body else {
            panic!("an integration")
        };
        serde_json::to_value(spec.as_ref()).unwrap()
    }

    #[test]
    fn openai_gets_its_fields_and_a_token_reference() {
        let doc = integration_document(&read(json!({
            "id": "i1", "name": "openai", "provider": "openai",
            "organization_id": "org-1", "extra": null
        })))
        .unwrap();
        // The organization is configuration the service returns: written
        // as read, so the first apply after an export needs the token alone.
        assert_eq!(
            fields(&doc),
            json!({"provider": "openai", "token": "${OPENAI_API_KEY}", "organization_id": "org-1"})
        );
        assert!(
            doc.preamble.iter().all(|l| !l.contains("ORGANIZATION")),
            "{:?}",
            doc.preamble
        );
    }

    #[test]
    fn a_returned_secret_is_never_written() {
        let doc = integration_document(&read(json!({
            "provider": "anthropic", "token": "sk-leaked", "authentication_type": "api_key",
            "extra": {"headers": {"x": "leaked-too"}, "endpoint": "https://a"}
        })))
        .unwrap();
        let text = fields(&doc).to_string();
        assert!(!text.contains("leaked"), "{text}");
        assert!(text.contains("${ANTHROPIC_API_KEY}"), "{text}");
        assert!(text.contains("\"endpoint\":\"https://a\""), "{text}");
        assert!(
            text.contains("\"authentication_type\":\"api_key\""),
            "{text}"
        );
    }

    #[test]
    fn custom_endpoint_comes_from_base_url_and_nested_nulls_are_left_out() {
        let doc = integration_document(&read(json!({
            "provider": "custom", "base_url": "https://llm.internal", "authentication_type": "api_key",
            "is_legacy_format": false,
            "multi_modal_config": {"max_files": null, "max_file_size_bytes": 5}
        })))
        .unwrap();
        let value = fields(&doc);
        assert_eq!(value["endpoint"], "https://llm.internal");
        assert_eq!(value["api_key_value"], "${CUSTOM_API_KEY}");
        assert!(value.get("is_legacy_format").is_none());
        assert!(value.get("multi_modal_config").is_none(), "{value}");
        assert!(
            doc.preamble
                .iter()
                .any(|l| l.contains("multi_modal_config"))
        );
    }

    #[test]
    fn values_are_written_as_read_and_what_may_be_a_credential_as_a_reference() {
        let doc = integration_document(&read(json!({
            "provider": "azure", "endpoint": "https://team-a.example.com",
            "authentication_type": "client_secret", "proxy": false,
            "authentication_scope": "api://scope", "oauth2_token_url": "https://login.example.com/token",
            "default_headers": {"X-Team": "team-a", "Authorization": "Bearer CANARY-c", "X-Api-Key": "CANARY-f"},
            "extra": {"custom_header_mapping": {"user": "X-User"}}
        })))
        .unwrap();
        let value = fields(&doc);
        assert!(!value.to_string().contains("CANARY"), "{value}");
        assert_eq!(value["endpoint"], "https://team-a.example.com");
        assert_eq!(value["proxy"], false);
        assert_eq!(value["authentication_type"], "client_secret");
        assert_eq!(value["authentication_scope"], "api://scope");
        assert_eq!(value["oauth2_token_url"], "https://login.example.com/token");
        assert_eq!(
            value["default_headers"],
            json!({"X-Team": "team-a", "Authorization": "${AZURE_DEFAULT_HEADERS_AUTHORIZATION}", "X-Api-Key": "${AZURE_DEFAULT_HEADERS_X_API_KEY}"})
        );
        assert_eq!(value["custom_header_mapping"]["user"], "X-User");
        assert!(
            doc.preamble.iter().any(|l| l.contains(
                "set `AZURE_DEFAULT_HEADERS_AUTHORIZATION`, `AZURE_DEFAULT_HEADERS_X_API_KEY`"
            )),
            "{:?}",
            doc.preamble
        );
        let custom = integration_document(&read(json!({
            "provider": "custom", "base_url": "https://x", "authentication_type": "none",
            "api_key_header": "X-Key",
            "custom_llm_config": {"file_name": "h.py", "class_name": "H",
                "init_kwargs": {"api_key": "CANARY-e", "access_key": "CANARY-g", "retries": 3,
                    "region": "eu", "opts": {"secret": 7}}}
        })))
        .unwrap();
        let value = fields(&custom);
        assert!(!value.to_string().contains("CANARY"), "{value}");
        assert_eq!(value["api_key_header"], "X-Key");
        let kwargs = &value["custom_llm_config"]["init_kwargs"];
        assert_eq!(kwargs["api_key"], "${CUSTOM_INIT_KWARGS_API_KEY}");
        assert_eq!(kwargs["access_key"], "${CUSTOM_INIT_KWARGS_ACCESS_KEY}");
        assert_eq!(kwargs["retries"], 3, "numbers are written as read");
        assert_eq!(kwargs["region"], "eu");
        assert_eq!(
            kwargs["opts"]["secret"], "${CUSTOM_INIT_KWARGS_OPTS_SECRET}",
            "but not under a credential key"
        );
    }

    #[test]
    fn aws_and_vertex_secrets_are_references_and_bad_reads_are_reported() {
        let doc = integration_document(&read(json!({
            "provider": "aws_bedrock", "region": "eu-west-1", "credential_type": "key_secret"
        })))
        .unwrap();
        assert_eq!(
            fields(&doc)["token"],
            json!({"aws_access_key_id": "${AWS_ACCESS_KEY_ID}", "aws_secret_access_key": "${AWS_SECRET_ACCESS_KEY}"})
        );
        let doc = integration_document(&read(json!({
            "provider": "vertex_ai",
            "gcs_config": {"bucket_name": "b", "object_path_prefix": "p/"}
        })))
        .unwrap();
        assert_eq!(
            fields(&doc)["gcs_config"]["service_account_credentials"],
            "${VERTEX_AI_CREDENTIALS}"
        );
        let err = integration_document(&read(json!({"provider": "azure"}))).unwrap_err();
        assert_eq!(err, Unexportable::Incomplete("azure".into()));
        let err = integration_document(&read(json!({"provider": "acme"}))).unwrap_err();
        assert_eq!(err, Unexportable::UnknownProvider("acme".into()));
        // A field of the wrong type is dropped, the rest kept.
        let doc = integration_document(&read(json!({
            "provider": "databricks", "hostname": "h", "llm": "not-a-bool", "storage": true
        })))
        .unwrap();
        assert_eq!(
            fields(&doc),
            json!({"provider": "databricks", "token": "${DATABRICKS_API_KEY}", "hostname": "h", "storage": true})
        );
    }
}
