//! Model-provider integrations: spec operation 4 (PUT, create or update),
//! named custom integrations (PUT `/v2/integrations/custom/{name}`), the read
//! of an integration's non-secret configuration, and the listing of the
//! caller's integrations.
//!
//! A named custom integration is read only through the listing (its record,
//! never its configuration: the reference's GET `/v2/integrations/{name}`
//! takes a provider), and the reference has no operation that deletes one
//! (DELETE `/integrations/{name}` also takes a provider).

use super::super::operation::{
    GET_INTEGRATION, LIST_INTEGRATIONS, PUT_INTEGRATION, PUT_NAMED_CUSTOM_INTEGRATION,
};
use super::super::transport::Call;
use super::super::{ApiError, Client};
use crate::api::{
    IntegrationConfig, IntegrationCreate, IntegrationProvider, IntegrationRecord, Secret,
};

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

    /// PUT `/v2/integrations/custom/{name}`: creates or updates the caller's
    /// custom integration named `name` (a slug), with the custom provider's
    /// body (secrets included; never logged). Another provider's body is an
    /// [`ApiError::InvalidArgument`], sent nowhere.
    pub async fn put_named_custom_integration(
        &self,
        name: &str,
        body: &IntegrationCreate<Secret>,
    ) -> Result<IntegrationRecord, ApiError> {
        let provider = body.provider();
        if provider != IntegrationProvider::Custom {
            return Err(ApiError::InvalidArgument {
                operation: &PUT_NAMED_CUSTOM_INTEGRATION,
                message: format!(
                    "a named custom integration takes the custom provider's body, not {provider}'s"
                ),
            });
        }
        self.fetch(Call::new(&PUT_NAMED_CUSTOM_INTEGRATION, &[name]).json(&body.wire_body())?)
            .await
    }

    /// The caller's custom integration named `name` (from the listing: its
    /// record, never its configuration); `None` when there is none.
    pub async fn find_named_custom_integration(
        &self,
        name: &str,
    ) -> Result<Option<IntegrationRecord>, ApiError> {
        let all = self.list_integrations().await?;
        Ok(all
            .into_iter()
            .find(|r| r.provider == IntegrationProvider::Custom && r.name == name))
    }
}
