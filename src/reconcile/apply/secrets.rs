//! Turning an integration body with `${ENV}` references into the body sent
//! to the service, at the last moment: the secret values live only in this
//! process's memory, inside [`Secret`]s, for the duration of one request.
//!
//! The body's other strings are as the manifest writes them: a value taken
//! from the environment (`X-Key: ${HEADER}`, `Bearer ${TOKEN}`) is a secret
//! as well, so the loader keeps its text and it is expanded here, with the
//! loader's own reading of `${NAME}` and `$${` ([`expand`]).

use serde_json::Value;

use crate::api::{IntegrationCreate, SECRET_FIELDS, Secret};
use crate::manifest::interpolate::{Problem, expand};
use crate::manifest::types::EnvRef;

/// A secret reference whose variable is not set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "environment variable `{name}` is not set (a secret read from it at apply time: an integration's, or a webhook URL's)"
)]
pub struct MissingSecret {
    /// The variable.
    pub name: String,
}

/// Replaces every `${NAME}` reference of `body` with the value of the
/// environment variable, through `env`: the secret fields, which are exactly
/// one reference, and the references within the other strings.
///
/// Every value read is registered as held ([`crate::scrub::register`]): no output
/// shows it, whatever text carries it back (a server echoing the request).
pub fn resolve_secrets(
    body: &IntegrationCreate<EnvRef>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<IntegrationCreate<Secret>, MissingSecret> {
    let held = |name: &str| {
        let value = env(name);
        if let Some(value) = &value {
            crate::scrub::register(value);
        }
        value
    };
    let env: &dyn Fn(&str) -> Option<String> = &held;
    let mut json = serde_json::to_value(body).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut json {
        for (key, child) in map.iter_mut() {
            // The tag is the provider, never a template.
            if key != "provider" {
                resolve_in(child, SECRET_FIELDS.contains(&key.as_str()), env)?;
            }
        }
    }
    // The shape is unchanged (strings replaced by strings), so this cannot fail
    // unless the types disagree with themselves; report it as a missing secret
    // rather than panic.
    serde_json::from_value(json).map_err(|_| MissingSecret {
        name: "<unreadable body>".to_owned(),
    })
}

fn resolve_in(
    value: &mut Value,
    in_secret: bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), MissingSecret> {
    match value {
        Value::String(s) if in_secret => {
            let reference = EnvRef::try_from(s.clone()).map_err(|_| MissingSecret {
                name: "<not a reference>".to_owned(),
            })?;
            let secret = env(reference.name()).ok_or_else(|| MissingSecret {
                name: reference.name().to_owned(),
            })?;
            *s = secret;
        }
        Value::String(s) if s.contains('$') => {
            let expansion = expand(s, env);
            if let Some(problem) = expansion.problems.first() {
                return Err(MissingSecret {
                    name: match problem {
                        Problem::Unset { name, .. } => name.clone(),
                        Problem::Unterminated { .. } | Problem::InvalidName { .. } => {
                            "<not a reference>".to_owned()
                        }
                    },
                });
            }
            *s = expansion.text;
        }
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                let secret = in_secret || SECRET_FIELDS.contains(&key.as_str());
                resolve_in(child, secret, env)?;
            }
        }
        Value::Array(items) => {
            for child in items {
                resolve_in(child, in_secret, env)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Every environment variable `body` refers to: its secret fields, and the
/// references within its other strings.
pub fn referenced_variables(body: &IntegrationCreate<EnvRef>) -> Vec<String> {
    let mut names = Vec::new();
    let json = serde_json::to_value(body).unwrap_or(Value::Null);
    if let Value::Object(map) = &json {
        for (key, child) in map {
            if key != "provider" {
                collect(child, SECRET_FIELDS.contains(&key.as_str()), &mut names);
            }
        }
    }
    names.sort();
    names.dedup();
    names
}

fn collect(value: &Value, in_secret: bool, out: &mut Vec<String>) {
    match value {
        Value::String(s) if in_secret => {
            if let Ok(r) = EnvRef::try_from(s.clone()) {
                out.push(r.name().to_owned());
            }
        }
        Value::String(s) if !in_secret && s.contains('$') => {
            out.extend(
                expand(s, &|_| None)
                    .references
                    .into_iter()
                    .map(|(name, _)| name),
            );
        }
        Value::Object(map) => {
            for (key, child) in map {
                collect(
                    child,
                    in_secret || SECRET_FIELDS.contains(&key.as_str()),
                    out,
                );
            }
        }
        Value::Array(items) => {
            for child in items {
                collect(child, in_secret, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_resolved_only_in_secret_fields() {
        let body: IntegrationCreate<EnvRef> = serde_json::from_value(serde_json::json!({
            "provider": "aws_bedrock",
            "token": {"aws_access_key_id": "${AWS_ID}", "aws_secret_access_key": "${AWS_SECRET}"},
            "region": "eu-west-1"
        }))
        .unwrap();
        assert_eq!(referenced_variables(&body), ["AWS_ID", "AWS_SECRET"]);
        let env = |name: &str| Some(format!("value-of-{name}"));
        let resolved = resolve_secrets(&body, &env).unwrap();
        let wire = resolved.wire_body();
        assert_eq!(
            wire["token"]["aws_secret_access_key"],
            "value-of-AWS_SECRET"
        );
        assert_eq!(wire["region"], "eu-west-1");
        let missing = resolve_secrets(&body, &|_| None).unwrap_err();
        assert_eq!(missing.name, "AWS_ID");
    }

    #[test]
    fn strings_taken_from_the_environment_are_expanded_at_the_last_moment() {
        let body: IntegrationCreate<EnvRef> = serde_json::from_value(serde_json::json!({
            "provider": "custom",
            "endpoint": "https://${HOST}/v1",
            "api_key_value": "${KEY}",
            "default_model": "cost $5, $${LITERAL}",
            "custom_llm_config": {"file_name": "h.py", "class_name": "H",
                "init_kwargs": {"api_key": "Bearer ${KW}", "nested": {"deep": ["${DEEP}"]}}},
            "custom_header_mapping": {"user": "${MAP}"}
        }))
        .unwrap();
        assert_eq!(
            referenced_variables(&body),
            ["DEEP", "HOST", "KEY", "KW", "MAP"]
        );
        let env = |name: &str| Some(format!("v-{name}"));
        let wire = resolve_secrets(&body, &env).unwrap().wire_body();
        assert_eq!(wire["endpoint"], "https://v-HOST/v1");
        assert_eq!(wire["api_key_value"], "v-KEY");
        assert_eq!(wire["default_model"], "cost $5, ${LITERAL}");
        let kwargs = &wire["custom_llm_config"]["init_kwargs"];
        assert_eq!(kwargs["api_key"], "Bearer v-KW");
        assert_eq!(kwargs["nested"]["deep"][0], "v-DEEP");
        assert_eq!(wire["custom_header_mapping"]["user"], "v-MAP");
        let missing = resolve_secrets(&body, &|n| (n != "MAP").then(|| "x".to_owned()));
        assert_eq!(missing.unwrap_err().name, "MAP");
    }
}
