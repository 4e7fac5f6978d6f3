//! Turning an integration body with `${ENV}` references into the body sent
//! to the service, at the last moment: the secret values live only in this
//! process's memory, inside [`Secret`]s, for the duration of one request.

use serde_json::Value;

use crate::api::{IntegrationCreate, SECRET_FIELDS, Secret};
use crate::manifest::types::EnvRef;

/// A secret reference whose variable is not set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "environment variable `{name}` is not set (the integration's secrets are read from it at apply time)"
)]
pub struct MissingSecret {
    /// The variable.
    pub name: String,
}

/// Replaces every `${NAME}` reference in the secret fields of `body` with the
/// value of the environment variable, through `env`.
pub fn resolve_secrets(
    body: &IntegrationCreate<EnvRef>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<IntegrationCreate<Secret>, MissingSecret> {
    let mut json = serde_json::to_value(body).unwrap_or(Value::Null);
    resolve_in(&mut json, false, env)?;
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
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                let secret = in_secret || SECRET_FIELDS.contains(&key.as_str());
                resolve_in(child, secret, env)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Every environment variable the secret fields of `body` refer to.
pub fn referenced_variables(body: &IntegrationCreate<EnvRef>) -> Vec<String> {
    let mut names = Vec::new();
    let json = serde_json::to_value(body).unwrap_or(Value::Null);
    collect(&json, false, &mut names);
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
        Value::Object(map) => {
            for (key, child) in map {
                collect(
                    child,
                    in_secret || SECRET_FIELDS.contains(&key.as_str()),
                    out,
                );
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
}
