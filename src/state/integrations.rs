//! The calling user's integration with one provider, as the service returns
//! it (its non-secret configuration: no read returns a secret), and how a
//! declared field is found in it; and its named custom integrations, of
//! which the service returns only the listing's record (no read returns
//! their configuration).

use std::collections::BTreeMap;

use crate::api::{IntegrationConfig, IntegrationProvider};

/// An integration as read: the wire record itself, which holds only
/// non-secret configuration and is small (one per provider).
pub type IntegrationState = IntegrationConfig;

/// A named custom integration as the listing shows it: that it exists.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CustomIntegrationState {
    /// Id.
    pub id: String,
    /// Name (the slug of PUT `/v2/integrations/custom/{name}`).
    pub name: String,
}

/// The comparable, non-secret fields of a live integration, restricted to the
/// keys the manifest declares. Fields the service returns under another name
/// (`base_url` for the custom provider's `endpoint`) or inside `extra` are
/// found there. Keys the service does not return are absent.
pub fn declared_fields(
    live: &IntegrationState,
    declared: &serde_json::Map<String, serde_json::Value>,
) -> BTreeMap<String, serde_json::Value> {
    let mut out = BTreeMap::new();
    for key in declared.keys() {
        let found = live
            .fields
            .get(key)
            .or_else(|| live.extra.as_ref().and_then(|e| e.get(key)))
            .or_else(|| {
                (key == "endpoint" && live.provider == IntegrationProvider::Custom)
                    .then(|| live.fields.get("base_url"))
                    .flatten()
            });
        if let Some(v) = found.filter(|v| !v.is_null()) {
            out.insert(key.clone(), v.clone());
        }
    }
    out
}
