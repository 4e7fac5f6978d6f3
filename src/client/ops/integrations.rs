//! Model-provider integrations: spec operation 4 (PUT, create or update),
//! the read of an integration's non-secret configuration, and the listing of
//! the caller's integrations.

use super::super::operation::{GET_INTEGRATION, LIST_INTEGRATIONS, PUT_INTEGRATION};
use super::super::transport::Call;
use super::super::{ApiError, Client};
use crate::api::{IntegrationConfig, IntegrationCreate, IntegrationRecord, Secret};

impl Client {
    /// Spec operation 4: PUT `/v2/integrations/{provider}` with the provider's
    /// body (secrets included: the one place they are sent). The body is never
    /// logged, at any level.
    pub async fn put_integration(
        &self,
        body: &IntegrationCreate<Secret>,
    ) -> Result<IntegrationRecord, ApiError> {
        let provider = body.provider();
        self.fetch(Call::new(&PUT_INTEGRATION, &[provider.as_str()]).json(&body.wire_body())?)
            .await
    }

    /// GET `/v2/integrations/{name}` (the provider name): the integration's
    /// non-secret configuration; `None` when the caller has none.
    pub async fn get_integration(&self, name: &str) -> Result<Option<IntegrationConfig>, ApiError> {
        self.fetch_opt(Call::new(&GET_INTEGRATION, &[name])).await
    }

    /// GET `/integrations`: the caller's integrations (`IntegrationDB`), one
    /// record per integration; no read returns a secret.
    pub async fn list_integrations(&self) -> Result<Vec<IntegrationRecord>, ApiError> {
        self.fetch(Call::new(&LIST_INTEGRATIONS, &[])).await
    }
}
