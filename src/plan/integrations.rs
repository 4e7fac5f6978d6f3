//! Planning the calling user's integrations, one per provider, and its named
//! custom integrations, one per name.
//!
//! Only the fields a manifest declares are compared, and only those the
//! service returns. Secrets are write-only: they are never compared (so an
//! integration never shows a perpetual diff) and are re-sent on create, on
//! any other change, or when rotation is asked for (`rotate_secrets: true`
//! or `--rotate-secrets`).
//!
//! Values an Integration document takes from the environment are secrets
//! too, but the service returns them: they are compared by fingerprint (the
//! loader kept only the fingerprint of the expanded value) and shown as the
//! `${NAME}` text the manifest writes, the live side as `[redacted]` when it
//! differs. Live values are shown only where the manifest writes a literal:
//! a value under a credential key, or one the manifest does not declare (a
//! header since removed, say, which may have come from the environment
//! before), is `[redacted]`.

use crate::plan::address::{CustomIntegrationAddress, IntegrationAddress};
use std::collections::BTreeMap;

use serde::Serialize;

use super::address::Address;
use super::types::{Action, NoteKind, Operation};
use super::{Draft, Planner, fingerprint};
use crate::manifest::set::Origin;
use crate::manifest::types::{EnvField, IntegrationSpec};
use crate::state::integrations::declared_fields;

/// The comparable state of an integration: its provider and the declared,
/// non-secret fields.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NormIntegration {
    /// Provider.
    pub provider: String,
    /// Declared non-secret fields.
    #[serde(flatten)]
    pub fields: BTreeMap<String, serde_json::Value>,
}

/// Plans one integration.
pub(crate) fn plan_integration(planner: &mut Planner<'_>, origin: &Origin, spec: &IntegrationSpec) {
    let provider = spec.config.provider().to_string();
    let address = Address::Integration(IntegrationAddress {
        provider: provider.clone(),
    });
    let declared = spec.config.public_fields();
    let after = NormIntegration {
        provider: provider.clone(),
        fields: shown::declared(&declared, &spec.env),
    };
    let Some(live) = planner.live.integrations.get(&provider) else {
        planner.problem(origin, format!("integration `{provider}` was not loaded"));
        return;
    };
    let operation = Operation::PutIntegration {
        body: Box::new(spec.config.clone()),
    };
    let Some(live) = live else {
        let draft = Draft {
            address,
            action: Action::Create,
            reason: "no integration for this provider".to_owned(),
            live_fingerprint: fingerprint::integration(None),
            operations: vec![operation],
        };
        planner
            .changes
            .push(draft.change::<NormIntegration, _>(None, Some(&after)));
        return;
    };
    let returned = declared_fields(live, &declared);
    let unreturned: Vec<&str> = declared
        .keys()
        .filter(|k| !returned.contains_key(*k))
        .map(String::as_str)
        .collect();
    if !unreturned.is_empty() {
        planner.note(
            Some(address.clone()),
            NoteKind::Unverifiable,
            format!(
                "the service does not return {}; a change to {} is sent only with other changes or --rotate-secrets",
                unreturned.join(", "),
                if unreturned.len() == 1 { "it" } else { "them" }
            ),
        );
    }
    // Compare only what the service returns: what it does not return cannot drift visibly.
    let comparable = NormIntegration {
        provider: provider.clone(),
        fields: after
            .fields
            .iter()
            .filter(|(k, _)| returned.contains_key(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    };
    let before = NormIntegration {
        provider,
        fields: shown::live(&returned, &declared, &spec.env),
    };
    env_notes(planner, &address, spec, &before, &comparable);
    let rotate = planner.options.rotate_secrets || spec.rotate_secrets == Some(true);
    if before == comparable && !rotate {
        return;
    }
    let reason = if before != comparable {
        "fields differ"
    } else {
        "rotate secrets"
    };
    let draft = Draft {
        address,
        action: Action::Update,
        reason: reason.to_owned(),
        live_fingerprint: fingerprint::integration(Some(live)),
        operations: vec![operation],
    };
    planner
        .changes
        .push(draft.change(Some(&before), Some(&comparable)));
}

/// Notes about the values `spec` takes from the environment: which differ
/// from live (by fingerprint, so neither value is shown), and which cannot be
/// compared because their variable is not set.
fn env_notes(
    planner: &mut Planner<'_>,
    address: &Address,
    spec: &IntegrationSpec,
    before: &NormIntegration,
    after: &NormIntegration,
) {
    let before = serde_json::to_value(&before.fields).unwrap_or_default();
    let after = serde_json::to_value(&after.fields).unwrap_or_default();
    let mut differ = Vec::new();
    let mut unknown = Vec::new();
    for (pointer, field) in spec.env.iter() {
        let EnvField::FromEnv { fingerprint } = field else {
            continue;
        };
        let shown = before.pointer(pointer);
        if shown.is_none() || after.pointer(pointer).is_none() {
            continue;
        }
        let label = path_label_of(pointer);
        match fingerprint {
            None => unknown.push(label),
            Some(_) if shown != after.pointer(pointer) => differ.push(label),
            Some(_) => {}
        }
    }
    if !differ.is_empty() {
        planner.note(
            Some(address.clone()),
            NoteKind::Info,
            format!(
                "{} {} from the environment and differ{} from live (compared by fingerprint; values are secrets, not shown)",
                differ.join(", "),
                if differ.len() == 1 { "takes its value" } else { "take their values" },
                if differ.len() == 1 { "s" } else { "" },
            ),
        );
    }
    if !unknown.is_empty() {
        planner.note(
            Some(address.clone()),
            NoteKind::Unverifiable,
            format!(
                "{}: a variable is not set, so the value cannot be compared (apply needs it)",
                unknown.join(", ")
            ),
        );
    }
}

/// A JSON pointer of a field as a path a plan shows: `default_headers.X-Team`.
fn path_label_of(pointer: &str) -> String {
    pointer
        .split('/')
        .skip(1)
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect::<Vec<_>>()
        .join(".")
}

/// Plans one named custom integration. The service shows only that it
/// exists (in the integration listing): it is created when it does not,
/// sent again only to rotate its secrets, and never deleted (the service
/// has no operation for that). The plan says so in a note.
pub(crate) fn plan_custom_integration(
    planner: &mut Planner<'_>,
    origin: &Origin,
    name: &str,
    spec: &IntegrationSpec,
) {
    let address = Address::CustomIntegration(CustomIntegrationAddress {
        name: name.to_owned(),
    });
    let Some(live) = planner.live.custom_integrations.get(name) else {
        planner.problem(
            origin,
            format!("named custom integration `{name}` was not loaded"),
        );
        return;
    };
    planner.note(
        Some(address.clone()),
        NoteKind::Unverifiable,
        "the service returns neither the settings nor the secrets of a named custom integration, so a change to them made elsewhere cannot be seen (they are sent only when it is created, or with rotate_secrets / --rotate-secrets); nor can it be deleted: removing its document leaves it in place",
    );
    let after = NormIntegration {
        provider: spec.config.provider().to_string(),
        fields: std::iter::once(("name".to_owned(), serde_json::Value::from(name)))
            .chain(shown::declared(&spec.config.public_fields(), &spec.env))
            .collect(),
    };
    let operation = Operation::PutCustomIntegration {
        name: name.to_owned(),
        body: Box::new(spec.config.clone()),
    };
    let rotate = planner.options.rotate_secrets || spec.rotate_secrets == Some(true);
    let (action, reason, before) = match live {
        None => (
            Action::Create,
            "not in the integration listing".to_owned(),
            None,
        ),
        Some(_) if rotate => (
            Action::Update,
            "rotate secrets (its settings are sent again too)".to_owned(),
            Some(after.clone()),
        ),
        Some(_) => return,
    };
    let draft = Draft {
        address,
        action,
        reason,
        live_fingerprint: fingerprint::custom_integration(live.as_ref()),
        operations: vec![operation],
    };
    planner
        .changes
        .push(draft.change(before.as_ref(), Some(&after)));
}

/// The fields of an integration as a plan compares and shows them: secrets
/// as their `${NAME}` text or `[redacted]`, never a value.
pub(crate) mod shown {
    use std::collections::BTreeMap;

    use serde_json::{Map, Value};

    use crate::api::secret::is_secret_key;
    use crate::manifest::interpolate::expand;
    use crate::manifest::types::{EnvField, EnvFields};
    use crate::manifest::yaml::escape_token;
    use crate::plan::fingerprint::fingerprint;

    /// What a plan shows for a secret value it does not show.
    pub const REDACTED: &str = "[redacted]";
    /// What it shows for a live secret that differs from a declared one
    /// that is not taken from the environment (a number under a credential key).
    pub const REDACTED_DIFFERS: &str = "[redacted: differs]";

    fn child(pointer: &str, key: &str) -> String {
        format!("{pointer}/{}", escape_token(key))
    }

    /// The declared fields: a string taken from the environment as written
    /// (`${NAME}`), a string escaping `${` as its text, anything else under a
    /// credential key `[redacted]`, the rest as declared.
    pub fn declared(declared: &Map<String, Value>, env: &EnvFields) -> BTreeMap<String, Value> {
        declared
            .iter()
            .map(|(k, v)| {
                let shown = desired(v, &child("", k), env, is_secret_key(k));
                (k.clone(), shown)
            })
            .collect()
    }

    fn desired(value: &Value, pointer: &str, env: &EnvFields, credential: bool) -> Value {
        match value {
            Value::String(_) if matches!(env.get(pointer), Some(EnvField::FromEnv { .. })) => {
                value.clone()
            }
            Value::String(_) if !credential => match env.get(pointer) {
                Some(EnvField::Escaped { text }) => Value::String(text.clone()),
                _ => value.clone(),
            },
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        let shown =
                            desired(v, &child(pointer, k), env, credential || is_secret_key(k));
                        (k.clone(), shown)
                    })
                    .collect(),
            ),
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| desired(v, &child(pointer, &i.to_string()), env, credential))
                    .collect(),
            ),
            Value::Null => Value::Null,
            _ if credential => Value::String(REDACTED.to_owned()),
            other => other.clone(),
        }
    }

    /// The strings of `declared` (an operation's body, as a saved plan holds
    /// it) that refer to the environment, their values unknown, and those that
    /// escape `${`.
    pub fn unknown_env(declared: &Map<String, Value>) -> EnvFields {
        fn walk(value: &Value, pointer: &str, out: &mut EnvFields) {
            match value {
                Value::String(s) if s.contains('$') => {
                    let expansion = expand(s, &|_| None);
                    if !expansion.references.is_empty() {
                        out.insert(pointer.to_owned(), EnvField::FromEnv { fingerprint: None });
                    } else if expansion.text != *s {
                        out.insert(
                            pointer.to_owned(),
                            EnvField::Escaped {
                                text: expansion.text,
                            },
                        );
                    }
                }
                Value::Object(map) => {
                    for (k, v) in map {
                        walk(v, &child(pointer, k), out);
                    }
                }
                Value::Array(items) => {
                    for (i, v) in items.iter().enumerate() {
                        walk(v, &child(pointer, &i.to_string()), out);
                    }
                }
                _ => {}
            }
        }
        let mut out = EnvFields::default();
        for (k, v) in declared {
            walk(v, &child("", k), &mut out);
        }
        out
    }

    /// The live fields (`returned`, restricted to the declared keys), shown
    /// against the `declared` ones.
    pub fn live(
        returned: &BTreeMap<String, Value>,
        declared: &Map<String, Value>,
        env: &EnvFields,
    ) -> BTreeMap<String, Value> {
        returned
            .iter()
            .map(|(k, v)| {
                let shown = live_value(v, declared.get(k), &child("", k), env, is_secret_key(k));
                (k.clone(), shown)
            })
            .collect()
    }

    fn live_value(
        live: &Value,
        wanted: Option<&Value>,
        pointer: &str,
        env: &EnvFields,
        credential: bool,
    ) -> Value {
        let Some(wanted) = wanted else {
            return masked(live, credential);
        };
        if let (Value::String(_), Some(EnvField::FromEnv { fingerprint: fp })) =
            (wanted, env.get(pointer))
        {
            // Unknown (the variable is not set): not compared, shown as wanted.
            return match fp {
                Some(fp) if *fp != fingerprint(Some(live)) => Value::String(REDACTED.to_owned()),
                _ => wanted.clone(),
            };
        }
        match (wanted, live) {
            (Value::Object(w), Value::Object(l)) => Value::Object(
                l.iter()
                    .map(|(k, v)| {
                        let shown = live_value(
                            v,
                            w.get(k),
                            &child(pointer, k),
                            env,
                            credential || is_secret_key(k),
                        );
                        (k.clone(), shown)
                    })
                    .collect(),
            ),
            (Value::Array(w), Value::Array(l)) => Value::Array(
                l.iter()
                    .enumerate()
                    .map(|(i, v)| {
                        live_value(
                            v,
                            w.get(i),
                            &child(pointer, &i.to_string()),
                            env,
                            credential,
                        )
                    })
                    .collect(),
            ),
            (_, Value::Null) => Value::Null,
            (_, Value::Object(_) | Value::Array(_)) => masked(live, credential),
            (_, _) if credential => {
                let shown = desired(wanted, pointer, env, credential);
                if live == wanted {
                    shown
                } else {
                    Value::String(REDACTED_DIFFERS.to_owned())
                }
            }
            (_, _) => live.clone(),
        }
    }

    /// A live value the manifest does not write as a literal: every string
    /// `[redacted]` (and, under a credential key, every scalar).
    fn masked(live: &Value, credential: bool) -> Value {
        match live {
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), masked(v, credential || is_secret_key(k))))
                    .collect(),
            ),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| masked(v, credential)).collect())
            }
            Value::Null => Value::Null,
            Value::String(_) => Value::String(REDACTED.to_owned()),
            _ if credential => Value::String(REDACTED.to_owned()),
            other => other.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    use super::shown::{self, REDACTED};
    use crate::manifest::types::{EnvField, EnvFields};
    use crate::plan::fingerprint::fingerprint;

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn values_from_the_environment_compare_by_fingerprint_and_never_show() {
        let declared = map(json!({
            "default_headers": {"X-Key": "${HDR}", "X-Plain": "p", "X-Unset": "${UNSET}"},
            "endpoint": "https://a",
        }));
        let mut env = EnvFields::default();
        let fp = |v: &str| Some(fingerprint(Some(&Value::String(v.to_owned()))));
        env.insert(
            "/default_headers/X-Key".into(),
            EnvField::FromEnv {
                fingerprint: fp("CANARY-now"),
            },
        );
        env.insert(
            "/default_headers/X-Unset".into(),
            EnvField::FromEnv { fingerprint: None },
        );
        let after = shown::declared(&declared, &env);
        assert_eq!(after["default_headers"]["X-Key"], "${HDR}");

        // Equal by fingerprint: shown alike, so no change.
        let live = map(json!({
            "default_headers": {"X-Key": "CANARY-now", "X-Plain": "p", "X-Unset": "CANARY-u"},
            "endpoint": "https://a",
        }));
        let before = shown::live(&live.clone().into_iter().collect(), &declared, &env);
        assert_eq!(before, after);

        // A different value, a header not declared: `[redacted]`; a literal: shown.
        let live = map(json!({
            "default_headers": {"X-Key": "CANARY-old", "X-Plain": "q", "X-Gone": "CANARY-gone"},
            "endpoint": "https://b",
        }));
        let before = shown::live(&live.into_iter().collect(), &declared, &env);
        let text = serde_json::to_string(&before).unwrap();
        assert!(!text.contains("CANARY"), "{text}");
        assert_eq!(before["default_headers"]["X-Key"], REDACTED);
        assert_eq!(before["default_headers"]["X-Gone"], REDACTED);
        assert_eq!(before["default_headers"]["X-Plain"], "q");
        assert_eq!(before["endpoint"], "https://b");
    }

    #[test]
    fn a_saved_plan_knows_which_strings_are_references_but_not_their_values() {
        let declared = map(json!({"h": {"a": "Bearer ${T}", "b": "$${x}", "c": "cost $5"}}));
        let env = shown::unknown_env(&declared);
        assert_eq!(
            env.get("/h/a"),
            Some(&EnvField::FromEnv { fingerprint: None })
        );
        assert_eq!(
            env.get("/h/b"),
            Some(&EnvField::Escaped {
                text: "${x}".into()
            })
        );
        assert_eq!(env.get("/h/c"), None);
        let live = map(json!({"h": {"a": "Bearer CANARY", "b": "${x}", "c": "cost $5"}}));
        let before = shown::live(&live.into_iter().collect(), &declared, &env);
        assert_eq!(before, shown::declared(&declared, &env));
    }
}
