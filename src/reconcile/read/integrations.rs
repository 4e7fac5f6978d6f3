//! Reading the caller's integrations: one provider's (a GET that holds no
//! secret), or every provider the caller has one with; and which of the
//! named custom integrations the manifests declare exist (the listing is all
//! the service shows of them).

use std::collections::{BTreeMap, BTreeSet};

use futures::future::try_join_all;

use super::error::{ReadError, ctx};
use crate::api::IntegrationProvider;
use crate::client::{ApiError, Client};
use crate::state::{CustomIntegrationState, IntegrationState};

/// Reads the integration of each provider, concurrently: `None` for one the
/// caller does not have.
pub async fn read_integrations(
    client: &Client,
    providers: BTreeSet<String>,
) -> Result<Vec<(String, Option<IntegrationState>)>, ReadError> {
    let reads = providers.into_iter().map(|provider| async move {
        let found = client
            .get_integration(&provider)
            .await
            .map_err(ctx(|| format!("integration `{provider}`")))?;
        Ok::<_, ReadError>((provider, found))
    });
    try_join_all(reads).await
}

/// The providers the caller has an integration with (one listing).
pub async fn list_providers(client: &Client) -> Result<BTreeSet<String>, ReadError> {
    let records = client
        .list_integrations()
        .await
        .map_err(ctx(|| "the integrations".to_owned()))?;
    Ok(records
        .iter()
        .map(|r| r.provider.as_str().to_owned())
        .collect())
}

/// The named custom integrations of `names`, from one listing (none when no
/// name is asked for): `None` for a name the caller has none of.
pub async fn read_custom_integrations(
    client: &Client,
    names: &BTreeSet<String>,
) -> Result<BTreeMap<String, Option<CustomIntegrationState>>, ReadError> {
    if names.is_empty() {
        return Ok(BTreeMap::new());
    }
    let listed = list_custom_integrations(client)
        .await
        .map_err(ctx(|| "the integrations".to_owned()))?;
    let mut out: BTreeMap<String, Option<CustomIntegrationState>> =
        names.iter().map(|n| (n.clone(), None)).collect();
    for c in listed {
        if let Some(slot @ None) = out.get_mut(&c.name) {
            *slot = Some(c);
        }
    }
    Ok(out)
}

/// Every custom integration of the caller, as the listing shows it.
pub async fn list_custom_integrations(
    client: &Client,
) -> Result<Vec<CustomIntegrationState>, ApiError> {
    Ok(client
        .list_integrations()
        .await?
        .into_iter()
        .filter(|r| r.provider == IntegrationProvider::Custom)
        .map(|r| CustomIntegrationState {
            id: r.id,
            name: r.name,
        })
        .collect())
}
