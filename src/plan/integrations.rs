//! Planning the calling user's integrations, one per provider, and its named
//! custom integrations, one per name.
//!
//! Only the fields a manifest declares are compared, and only those the
//! service returns. Secrets are write-only: they are never compared (so an
//! integration never shows a perpetual diff) and are re-sent on create, on
//! any other change, or when rotation is asked for (`rotate_secrets: true`
//! or `--rotate-secrets`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::address::Address;
use super::types::{Action, NoteKind, Operation};
use super::{Draft, Planner, fingerprint};
use crate::manifest::set::Origin;
use crate::manifest::types::IntegrationSpec;
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
    let address = Address::Integration {
        provider: provider.clone(),
    };
    let declared = spec.config.public_fields();
    let after = NormIntegration {
        provider: provider.clone(),
        fields: declared
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
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
        fields: returned,
    };
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
    let address = Address::CustomIntegration {
        name: name.to_owned(),
    };
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
            .chain(spec.config.public_fields())
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
