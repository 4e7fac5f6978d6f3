//! Model-provider integrations (spec operation 4 and the reference's reads).
//!
//! The create/update body differs per provider; it is one enum with a variant
//! per provider, generic over the type of its secret fields: [`Secret`] on the
//! wire, an environment reference in manifests. Secret fields (tokens, the
//! custom provider's `api_key_value` and `headers`, Vertex AI's service account
//! credentials) are write-only: no read returns them.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::common::Permission;
use super::enums::IntegrationProvider;
use super::secret::Secret;

/// The integration record returned by PUT (`IntegrationDB`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntegrationRecord {
    /// Id (uuid4).
    pub id: String,
    /// Permissions of the caller.
    #[serde(default)]
    pub permissions: Vec<Permission>,
    /// Name.
    pub name: String,
    /// Provider.
    pub provider: IntegrationProvider,
    /// Creation time.
    pub created_at: String,
    /// Update time.
    pub updated_at: String,
    /// Creator.
    pub created_by: String,
    /// Whether selected.
    #[serde(default)]
    pub is_selected: bool,
    /// Whether disabled.
    #[serde(default)]
    pub is_disabled: bool,
}

/// An integration as GET `/v2/integrations/{name}` returns it: the provider's
/// non-secret configuration. Provider-specific fields are kept as JSON so that
/// every provider, and fields added later, read without loss.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntegrationConfig {
    /// Id, when the integration exists.
    #[serde(default)]
    pub id: Option<String>,
    /// Name.
    #[serde(default)]
    pub name: Option<String>,
    /// Provider.
    pub provider: IntegrationProvider,
    /// Further stored configuration.
    #[serde(default)]
    pub extra: Option<serde_json::Map<String, serde_json::Value>>,
    /// The provider-specific fields.
    #[serde(flatten)]
    pub fields: serde_json::Map<String, serde_json::Value>,
}

/// Size limits of multimodal inputs (`MultiModalModelIntegrationConfig`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MultiModalConfig {
    /// Maximum number of files (at least 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_files: Option<i64>,
    /// Maximum file size in bytes (at least 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub max_file_size_bytes: Option<i64>,
}

/// An Azure deployment (`AzureModelDeployment`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AzureModelDeployment {
    /// Model.
    pub model: String,
    /// Deployment id.
    pub id: String,
}

/// A custom LiteLLM handler (`CustomLLMConfig`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CustomLlmConfig {
    /// Python file holding the class.
    pub file_name: String,
    /// Class name.
    pub class_name: String,
    /// Constructor arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_kwargs: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Properties of a model of a custom integration (`ModelProperties`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ModelProperties {
    /// Model name used when calling the API.
    pub name: String,
    /// Display alias (defaults to the name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// Built-in model whose parameter map to use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub based_on: Option<String>,
    /// Supported parameter names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supported_parameters: Option<Vec<String>>,
}

/// Google Cloud Storage settings of a Vertex AI integration (`VertexAIGCSConfig`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VertexGcsConfig<S> {
    /// Service account credentials (secret).
    pub service_account_credentials: S,
    /// Bucket.
    pub bucket_name: String,
    /// Object path prefix.
    pub object_path_prefix: String,
}

/// The body of PUT `/v2/integrations/{provider}`, one variant per provider.
///
/// Serialized with a `provider` tag; [`IntegrationCreate::wire_body`] drops the
/// tag, since the provider is the path segment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "provider",
    rename_all = "snake_case",
    bound(serialize = "S: Serialize", deserialize = "S: Deserialize<'de>")
)]
pub enum IntegrationCreate<S = Secret> {
    /// Anthropic.
    Anthropic {
        /// API token (secret).
        token: S,
        /// Authentication type: `api_key` (default) or `custom_oauth2`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(extend("enum" = ["api_key", "custom_oauth2"]))]
        authentication_type: Option<String>,
        /// Custom base URL.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        endpoint: Option<String>,
        /// OAuth2 scope.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        authentication_scope: Option<String>,
        /// OAuth2 token URL.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        oauth2_token_url: Option<String>,
        /// Internal fields to custom header names.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        custom_header_mapping: Option<BTreeMap<String, String>>,
        /// Multimodal limits.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        multi_modal_config: Option<MultiModalConfig>,
    },
    /// AWS Bedrock.
    AwsBedrock {
        /// Credentials, e.g. `aws_access_key_id` / `aws_secret_access_key` (secret).
        token: BTreeMap<String, S>,
        /// `key_secret` (default) or `assumed_role`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(extend("enum" = ["assumed_role", "key_secret"]))]
        credential_type: Option<String>,
        /// Region (default `us-west-2`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        region: Option<String>,
        /// Model id to inference profile ARN or id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        inference_profiles: Option<BTreeMap<String, String>>,
        /// Multimodal limits.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        multi_modal_config: Option<MultiModalConfig>,
    },
    /// AWS SageMaker.
    AwsSagemaker {
        /// Credentials (secret).
        token: BTreeMap<String, S>,
        /// `key_secret` (default) or `assumed_role`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(extend("enum" = ["assumed_role", "key_secret"]))]
        credential_type: Option<String>,
        /// Region (default `us-west-2`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        region: Option<String>,
        /// Model id to inference profile.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        inference_profiles: Option<BTreeMap<String, String>>,
        /// Models served (shape `Model` of the reference).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        models: Option<Vec<serde_json::Map<String, serde_json::Value>>>,
        /// Multimodal limits.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        multi_modal_config: Option<MultiModalConfig>,
    },
    /// Azure OpenAI.
    Azure {
        /// API token (secret).
        token: S,
        /// Endpoint (required).
        endpoint: String,
        /// Route through the proxy (default false).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        proxy: Option<bool>,
        /// API version (default `2025-03-01-preview`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        api_version: Option<String>,
        /// Deployment.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        azure_deployment: Option<String>,
        /// `api_key` (default), `client_secret`, `username_password`, `custom_oauth2`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(extend("enum" = ["api_key", "client_secret", "username_password", "custom_oauth2"]))]
        authentication_type: Option<String>,
        /// OAuth2 scope.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        authentication_scope: Option<String>,
        /// Default headers.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default_headers: Option<BTreeMap<String, String>>,
        /// Model to deployment.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        deployments: Option<BTreeMap<String, String>>,
        /// OAuth2 token URL.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        oauth2_token_url: Option<String>,
        /// Internal fields to custom header names.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        custom_header_mapping: Option<BTreeMap<String, String>>,
        /// Available deployments.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        available_deployments: Option<Vec<AzureModelDeployment>>,
        /// Multimodal limits.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        multi_modal_config: Option<MultiModalConfig>,
    },
    /// A custom endpoint.
    Custom {
        /// Endpoint URL (required).
        endpoint: String,
        /// OAuth2 client credentials (secret; for `oauth2` authentication).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<S>,
        /// `oauth2` (default), `api_key` or `none`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(extend("enum" = ["api_key", "none", "oauth2"]))]
        authentication_type: Option<String>,
        /// Model names (deprecated: use `model_properties`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        models: Option<Vec<String>>,
        /// Models with aliases.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model_properties: Option<Vec<ModelProperties>>,
        /// Default model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default_model: Option<String>,
        /// OAuth2 scope.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        authentication_scope: Option<String>,
        /// OAuth2 token URL.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        oauth2_token_url: Option<String>,
        /// Header carrying the API key.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        api_key_header: Option<String>,
        /// The API key (secret).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        api_key_value: Option<S>,
        /// A custom LiteLLM handler.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        custom_llm_config: Option<CustomLlmConfig>,
        /// Internal fields to custom header names.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        custom_header_mapping: Option<BTreeMap<String, String>>,
        /// Extra request headers (secret: stored encrypted, never returned).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        headers: Option<BTreeMap<String, S>>,
        /// Multimodal limits.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        multi_modal_config: Option<MultiModalConfig>,
    },
    /// Databricks.
    Databricks {
        /// Access token (secret).
        token: S,
        /// Workspace host name (URI, 1 to 2083 characters).
        #[schemars(length(min = 1, max = 2083))]
        hostname: String,
        /// Default catalog.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        default_catalog_name: Option<String>,
        /// Path.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
        /// Use for LLM calls (default false).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        llm: Option<bool>,
        /// Use for storage (default false).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        storage: Option<bool>,
    },
    /// Mistral.
    Mistral {
        /// API token (secret).
        token: S,
    },
    /// NVIDIA.
    Nvidia {
        /// API token (secret).
        token: S,
        /// Host name (URI, 1 to 2083 characters).
        #[schemars(length(min = 1, max = 2083))]
        hostname: String,
    },
    /// OpenAI (the provider the spec shows).
    Openai {
        /// API token (secret).
        token: S,
        /// OpenAI organization id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        organization_id: Option<String>,
    },
    /// Vegas gateway.
    VegasGateway {
        /// API token (secret).
        token: S,
        /// Endpoint (URI, 1 to 2083 characters).
        #[schemars(length(min = 1, max = 2083))]
        endpoint: String,
        /// Use case.
        use_case: String,
        /// Multimodal limits.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        multi_modal_config: Option<MultiModalConfig>,
    },
    /// Google Vertex AI.
    VertexAi {
        /// Credentials (secret).
        token: S,
        /// Cloud Storage settings.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gcs_config: Option<VertexGcsConfig<S>>,
        /// Multimodal limits.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        multi_modal_config: Option<MultiModalConfig>,
    },
    /// Writer.
    Writer {
        /// API token (secret).
        token: S,
        /// Writer organization id (required).
        organization_id: String,
    },
}

/// Names of the fields of each provider's body that hold secrets.
pub const SECRET_FIELDS: &[&str] = &[
    "token",
    "api_key_value",
    "headers",
    "service_account_credentials",
];

impl<S> IntegrationCreate<S> {
    /// The provider this body is for.
    pub fn provider(&self) -> IntegrationProvider {
        match self {
            IntegrationCreate::Anthropic { .. } => IntegrationProvider::Anthropic,
            IntegrationCreate::AwsBedrock { .. } => IntegrationProvider::AwsBedrock,
            IntegrationCreate::AwsSagemaker { .. } => IntegrationProvider::AwsSagemaker,
            IntegrationCreate::Azure { .. } => IntegrationProvider::Azure,
            IntegrationCreate::Custom { .. } => IntegrationProvider::Custom,
            IntegrationCreate::Databricks { .. } => IntegrationProvider::Databricks,
            IntegrationCreate::Mistral { .. } => IntegrationProvider::Mistral,
            IntegrationCreate::Nvidia { .. } => IntegrationProvider::Nvidia,
            IntegrationCreate::Openai { .. } => IntegrationProvider::Openai,
            IntegrationCreate::VegasGateway { .. } => IntegrationProvider::VegasGateway,
            IntegrationCreate::VertexAi { .. } => IntegrationProvider::VertexAi,
            IntegrationCreate::Writer { .. } => IntegrationProvider::Writer,
        }
    }
}

impl<S: Serialize> IntegrationCreate<S> {
    /// The non-secret fields, as JSON: what a plan may show and what a read can
    /// be compared with. Secret fields are removed, at any depth.
    pub fn public_fields(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut map = self.tagged_json();
        map.remove("provider");
        strip_secret_fields(&mut map);
        map
    }

    fn tagged_json(&self) -> serde_json::Map<String, serde_json::Value> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(map)) => map,
            // A derived Serialize of a struct-variant enum always yields an object.
            _ => serde_json::Map::new(),
        }
    }
}

impl IntegrationCreate<Secret> {
    /// The JSON body of the PUT: every field, secrets included, without the
    /// `provider` tag (the provider is the path segment).
    pub fn wire_body(&self) -> serde_json::Value {
        let mut map = self.tagged_json();
        map.remove("provider");
        serde_json::Value::Object(map)
    }
}

fn strip_secret_fields(map: &mut serde_json::Map<String, serde_json::Value>) {
    for field in SECRET_FIELDS {
        map.remove(*field);
    }
    for value in map.values_mut() {
        if let serde_json::Value::Object(inner) = value {
            strip_secret_fields(inner);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_body_has_no_provider_tag_and_public_fields_no_secrets() {
        let body: IntegrationCreate = IntegrationCreate::VertexAi {
            token: Secret::new("tok"),
            gcs_config: Some(VertexGcsConfig {
                service_account_credentials: Secret::new("creds"),
                bucket_name: "b".into(),
                object_path_prefix: "p/".into(),
            }),
            multi_modal_config: None,
        };
        let wire = body.wire_body();
        assert_eq!(wire["token"], "tok");
        assert!(wire.get("provider").is_none());
        let public = serde_json::Value::Object(body.public_fields()).to_string();
        assert!(
            !public.contains("tok\"") && !public.contains("creds"),
            "{public}"
        );
        assert!(public.contains("\"bucket_name\":\"b\""));
        assert_eq!(body.provider(), IntegrationProvider::VertexAi);
    }
}
