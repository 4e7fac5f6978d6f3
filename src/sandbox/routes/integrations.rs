//! Model-provider integrations: PUT `/v2/integrations/{provider}` for all
//! twelve providers (spec operation 4; an unknown provider is an unknown
//! path, 404, as in the service where each provider is its own path) and
//! its alias PUT `/v2/integrations/databricks/unity-catalog/sql`, PUT
//! `/v2/integrations/custom/{name}` (a named custom integration), GET
//! `/v2/integrations/{name}`, GET `/integrations`, DELETE
//! `/integrations/{name}`.
//!
//! The `name` of GET `/v2/integrations/{name}` and DELETE
//! `/integrations/{name}` is a provider (422 otherwise), as in the
//! reference: they address the caller's integration of that provider, never
//! a named custom one, which only the listing shows.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use serde_json::{Map, Value, json};

use super::{Ids, ok, read_body};
use crate::api::IntegrationProvider;
use crate::sandbox::app::App;
use crate::sandbox::auth::Caller;
use crate::sandbox::reply::{ApiError, ApiResult};
use crate::sandbox::store::integrations::{fill_defaults, read_shape, split_secrets};
use crate::sandbox::validation::{Checker, component};

/// The reference's create (PUT body) and read schema of each provider.
pub fn schemas(provider: &IntegrationProvider) -> Option<(&'static str, &'static str)> {
    Some(match provider {
        IntegrationProvider::Anthropic => ("AnthropicIntegrationCreate", "AnthropicIntegration"),
        IntegrationProvider::AwsBedrock => ("BaseAwsIntegrationCreate", "AwsBedrockIntegration"),
        IntegrationProvider::AwsSagemaker => {
            ("AwsSageMakerIntegrationCreate", "AwsSageMakerIntegration")
        }
        IntegrationProvider::Azure => ("AzureIntegrationCreate", "AzureIntegration"),
        IntegrationProvider::Custom => ("CustomIntegrationCreate", "CustomIntegration"),
        IntegrationProvider::Databricks => ("DatabricksIntegrationCreate", "DatabricksIntegration"),
        IntegrationProvider::Mistral => ("MistralIntegrationCreate", "MistralIntegration"),
        IntegrationProvider::Nvidia => ("NvidiaIntegrationCreate", "NvidiaIntegration"),
        IntegrationProvider::Openai => ("OpenAIIntegrationCreate", "OpenAIIntegration"),
        IntegrationProvider::VegasGateway => {
            ("VegasGatewayIntegrationCreate", "VegasGatewayIntegration")
        }
        IntegrationProvider::VertexAi => ("VertexAIIntegrationCreate", "VertexAIIntegration"),
        IntegrationProvider::Writer => ("WriterIntegrationCreate", "WriterIntegration"),
        IntegrationProvider::Unknown(_) => return None,
    })
}

fn provider_param(c: &mut Checker, raw: &str) -> IntegrationProvider {
    let schema = json!({"$ref": "#/components/schemas/IntegrationProvider"});
    match c.path_param("name", raw, &schema) {
        Some(Value::String(s)) => IntegrationProvider::from(s.as_str()),
        _ => IntegrationProvider::Unknown(raw.to_owned()),
    }
}

/// The properties of a component schema of the reference.
fn properties(schema_name: &str) -> Option<&'static Map<String, Value>> {
    component(schema_name)
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
}

/// Fills the create schema's top-level defaults the body left out (as
/// pydantic does when it parses the body).
fn with_defaults(mut public: Map<String, Value>, create_schema: &str) -> Map<String, Value> {
    if let Some(props) = properties(create_schema) {
        fill_defaults(&mut public, props, &[]);
    }
    public
}

/// PUT `/v2/integrations/{provider}` (spec operation 4).
pub async fn put_integration(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    let provider = IntegrationProvider::from(ids.get("name"));
    let name = provider.as_str().to_owned();
    put(caller, app, provider, name, body).await
}

/// PUT `/v2/integrations/databricks/unity-catalog/sql`: the same as PUT
/// `/v2/integrations/databricks`.
pub async fn put_unity_catalog(
    caller: Caller,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    let provider = IntegrationProvider::Databricks;
    let name = provider.as_str().to_owned();
    put(caller, app, provider, name, body).await
}

/// PUT `/v2/integrations/custom/{name}`: the caller's custom integration
/// named `name` (any slug: the reference declares the parameter a plain
/// string; `custom` is the one PUT `/v2/integrations/custom` writes).
pub async fn put_named_custom(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
    body: Body,
) -> ApiResult<Response> {
    let name = ids.get("name").to_owned();
    put(caller, app, IntegrationProvider::Custom, name, body).await
}

/// Validates and stores a create/update body of `provider` as the caller's
/// integration `name`.
async fn put(
    caller: Caller,
    app: Arc<App>,
    provider: IntegrationProvider,
    name: String,
    body: Body,
) -> ApiResult<Response> {
    let (create, _) = schemas(&provider).ok_or(ApiError::NoRoute)?;
    let bytes = read_body(body).await?;
    let mut c = Checker::new();
    let body = c.body(&bytes, create);
    c.finish()?;
    caller.require_write()?;
    let body = match body {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let (public, secret_text) = split_secrets(&body);
    let public = with_defaults(public, create);
    let user = caller.user;
    Ok(ok(app
        .write(move |s| s.put_integration(provider, &name, public, &secret_text, &user))
        .await?))
}

/// GET `/v2/integrations/{name}`: the provider's read shape, never a secret.
pub async fn get_integration(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    let mut c = Checker::new();
    let provider = provider_param(&mut c, ids.get("name"));
    c.finish()?;
    let (_, read) = schemas(&provider).ok_or_else(|| ApiError::not_found("Integration"))?;
    let no_properties = Map::new();
    let props = properties(read).unwrap_or(&no_properties);
    let shape = app.read(|s| {
        s.integration(&provider, &caller.user)
            .map(|r| read_shape(r, props))
            .ok_or_else(|| ApiError::not_found("Integration"))
    })?;
    Ok(ok(shape))
}

/// GET `/v2/integrations/available`: every provider (`AvailableIntegrations`).
pub async fn available_integrations(_caller: Caller) -> ApiResult<Response> {
    let all: Vec<&str> = IntegrationProvider::ALL
        .iter()
        .map(IntegrationProvider::as_str)
        .collect();
    Ok(ok(json!({ "integrations": all })))
}

/// GET `/integrations`: the caller's integrations.
pub async fn list_integrations(caller: Caller, State(app): State<Arc<App>>) -> ApiResult<Response> {
    Ok(ok(app.read(|s| s.list_integrations(&caller.user))?))
}

/// DELETE `/integrations/{name}`.
pub async fn delete_integration(
    caller: Caller,
    ids: Ids,
    State(app): State<Arc<App>>,
) -> ApiResult<Response> {
    let mut c = Checker::new();
    let provider = provider_param(&mut c, ids.get("name"));
    c.finish()?;
    caller.require_write()?;
    let user = caller.user;
    app.write(move |s| s.delete_integration(&provider, &user))
        .await?;
    Ok(ok(json!({})))
}
