//! Reading the caller's integrations: one provider's (a GET that holds no
//! secret), or every provider the caller has one with.

use std::collections::BTreeSet;

use futures::future::try_join_all;

use super::error::{ReadError, ctx};
use crate::client::Client;
use crate::state::IntegrationState;

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
