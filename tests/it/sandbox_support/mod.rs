//! The end-to-end harness of the sandbox tests: an in-process sandbox, a
//! raw HTTP client (reqwest, JSON in and out, so tests read like the spec's
//! examples, not like our serializer), the default fixture's ids, and
//! response validation against the OpenAPI reference with `jsonschema`
//! (draft 2020-12).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use base64::Engine;
use evalctl::sandbox::fixture::ids::{scorer_id, version_id};
use evalctl::sandbox::{Fixture, Sandbox, SandboxBuilder, SandboxHandle};
use reqwest::Method;
use serde_json::{Value, json};

/// The demo admin's API key.
pub const KEY: &str = "demo-api-key";
/// The read-only user's API key.
pub const VIEWER_KEY: &str = "viewer-api-key";

/// How a request authenticates.
#[derive(Debug, Clone)]
pub enum Auth {
    /// `Service-AO-API-Key: <key>`.
    Key(String),
    /// `Authorization: Bearer <token>`.
    Bearer(String),
    /// `Authorization: Basic base64(user:password)`.
    Basic(String, String),
    /// No credentials.
    None,
}

impl Auth {
    /// The demo admin's API key.
    pub fn demo() -> Self {
        Auth::Key(KEY.into())
    }
}

/// A running sandbox and a client for it.
pub struct Ctx {
    /// The sandbox.
    pub sb: SandboxHandle,
    /// The client.
    pub http: reqwest::Client,
}

/// A response: status, headers, JSON body (`Null` when empty or not JSON).
#[derive(Debug)]
pub struct Reply {
    /// Status code.
    pub status: u16,
    /// Headers.
    pub headers: reqwest::header::HeaderMap,
    /// Body as JSON.
    pub body: Value,
}

impl Ctx {
    /// A sandbox with the default fixture.
    pub fn new() -> Self {
        Self::with(Sandbox::builder())
    }

    /// A sandbox from a builder.
    pub fn with(builder: SandboxBuilder) -> Self {
        Ctx {
            sb: builder.start().expect("sandbox starts"),
            http: reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(20))
                .build()
                .expect("client"),
        }
    }

    /// A sandbox with a given fixture.
    pub fn fixture(fixture: Fixture) -> Self {
        Self::with(Sandbox::builder().fixture(fixture))
    }

    /// Full URL of a path.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.sb.base_url())
    }

    /// Sends a request with a raw body.
    pub async fn raw(
        &self,
        method: &str,
        path: &str,
        auth: &Auth,
        content_type: Option<&str>,
        body: Option<Vec<u8>>,
    ) -> Reply {
        let method = Method::from_bytes(method.as_bytes()).expect("method");
        let mut req = self.http.request(method, self.url(path));
        req = match auth {
            Auth::Key(k) => req.header("Service-AO-API-Key", k),
            Auth::Bearer(t) => req.header("Authorization", format!("Bearer {t}")),
            Auth::Basic(u, p) => req.header(
                "Authorization",
                format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"))
                ),
            ),
            Auth::None => req,
        };
        if let Some(ct) = content_type {
            req = req.header("Content-Type", ct);
        }
        if let Some(b) = body {
            req = req.body(b);
        }
        let resp = req.send().await.expect("request sent");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let bytes = resp.bytes().await.expect("body read");
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        Reply {
            status,
            headers,
            body,
        }
    }

    /// Sends a request with an optional JSON body.
    pub async fn call(&self, method: &str, path: &str, auth: &Auth, body: Option<Value>) -> Reply {
        let bytes = body.map(|b| serde_json::to_vec(&b).expect("json"));
        let ct = bytes.as_ref().map(|_| "application/json");
        self.raw(method, path, auth, ct, bytes).await
    }

    /// GET as the demo admin.
    pub async fn get(&self, path: &str) -> Reply {
        self.call("GET", path, &Auth::demo(), None).await
    }

    /// POST JSON as the demo admin.
    pub async fn post(&self, path: &str, body: Value) -> Reply {
        self.call("POST", path, &Auth::demo(), Some(body)).await
    }

    /// PATCH JSON as the demo admin.
    pub async fn patch(&self, path: &str, body: Value) -> Reply {
        self.call("PATCH", path, &Auth::demo(), Some(body)).await
    }

    /// PUT JSON as the demo admin.
    pub async fn put(&self, path: &str, body: Value) -> Reply {
        self.call("PUT", path, &Auth::demo(), Some(body)).await
    }

    /// DELETE as the demo admin.
    pub async fn delete(&self, path: &str) -> Reply {
        self.call("DELETE", path, &Auth::demo(), None).await
    }

    /// Logs in with the password flow and returns the bearer token.
    pub async fn login(&self, user: &str, password: &str) -> String {
        let form = format!("grant_type=password&username={user}&password={password}");
        let r = self
            .raw(
                "POST",
                "/login",
                &Auth::None,
                Some("application/x-www-form-urlencoded"),
                Some(form.into_bytes()),
            )
            .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
        r.body["access_token"].as_str().expect("token").to_owned()
    }
}

pub use evalctl::sandbox::fixture::ids::{
    default_dashboard, experiment, log_stream, project, template, user,
};

/// Id of a catalog scorer.
pub fn scorer(name: &str) -> String {
    scorer_id(name)
}

/// Id of a catalog scorer's version.
pub fn version(name: &str, n: i64) -> String {
    version_id(name, n)
}

/// `/v2/projects/{demo-project}/log_streams/{production}`.
pub fn production() -> String {
    format!(
        "/v2/projects/{}/log_streams/{}",
        project("demo-project"),
        log_stream("demo-project", "production")
    )
}

fn reference() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| {
        let text = evalctl::api::reference::SERVICE_REFERENCE;
        serde_json::from_str(text).expect("reference parses")
    })
}

/// The violations of `schema` (a JSON Schema fragment, typically
/// `{"$ref": "#/components/schemas/X"}` or an array of such, inside the
/// reference document) by `value`; empty when it validates.
pub fn schema_errors(schema: Value, value: &Value) -> Vec<String> {
    static CACHE: OnceLock<Mutex<HashMap<String, jsonschema::Validator>>> = OnceLock::new();
    let key = schema.to_string();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut cache = cache.lock().expect("cache");
    let validator = cache.entry(key).or_insert_with(|| {
        let mut root = serde_json::json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "components": reference()["components"].clone(),
        });
        if let (Some(root), Some(schema)) = (root.as_object_mut(), schema.as_object()) {
            for (k, v) in schema {
                root.insert(k.clone(), v.clone());
            }
        }
        jsonschema::draft202012::new(&root).expect("schema compiles")
    });
    validator
        .iter_errors(value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// Asserts that `value` validates against `schema` (see [`schema_errors`]).
pub fn assert_schema_value(schema: Value, value: &Value) {
    let errors = schema_errors(schema.clone(), value);
    assert!(
        errors.is_empty(),
        "response does not match {schema}:\n{}\n{}",
        errors.join("\n"),
        serde_json::to_string_pretty(value).unwrap_or_default()
    );
}

/// Asserts that `value` validates against component schema `name`.
pub fn assert_schema(name: &str, value: &Value) {
    assert_schema_value(
        serde_json::json!({ "$ref": format!("#/components/schemas/{name}") }),
        value,
    );
}

/// Asserts that `value` is an array of component schema `name`.
pub fn assert_schema_array(name: &str, value: &Value) {
    assert_schema_value(
        serde_json::json!({
            "type": "array",
            "items": { "$ref": format!("#/components/schemas/{name}") }
        }),
        value,
    );
}

/// The `loc`s of a 422 body, as compact JSON strings.
pub fn locs(body: &Value) -> Vec<String> {
    body["detail"]
        .as_array()
        .map(|d| d.iter().map(|e| e["loc"].to_string()).collect())
        .unwrap_or_default()
}

/// Asserts a 422 whose detail validates against `HTTPValidationError`.
pub fn assert_422(r: &Reply) {
    assert_eq!(r.status, 422, "{}", r.body);
    assert_schema("HTTPValidationError", &r.body);
}

/// A valid create/update body of every provider, with the name of its read
/// schema: `(provider, read schema, body)`. Secret values start with `s-`.
pub fn provider_bodies() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        ("anthropic", "AnthropicIntegration", json!({"token": "s-1"})),
        (
            "aws_bedrock",
            "AwsBedrockIntegration",
            json!({"token": {"aws_access_key_id": "AK", "aws_secret_access_key": "s-2"}, "region": "eu-west-1"}),
        ),
        (
            "aws_sagemaker",
            "AwsSageMakerIntegration",
            json!({"token": {"aws_secret_access_key": "s-3"}, "models": []}),
        ),
        (
            "azure",
            "AzureIntegration",
            json!({"token": "s-4", "endpoint": "https://example.openai.azure.com", "proxy": true}),
        ),
        (
            "custom",
            "CustomIntegration",
            json!({"endpoint": "https://llm.example.com/v1", "authentication_type": "api_key", "api_key_header": "X-Key", "api_key_value": "s-5", "headers": {"X-Extra": "s-6"}, "models": ["m1"]}),
        ),
        (
            "databricks",
            "DatabricksIntegration",
            json!({"token": "s-7", "hostname": "https://dbc-1.cloud.databricks.com"}),
        ),
        ("mistral", "MistralIntegration", json!({"token": "s-8"})),
        (
            "nvidia",
            "NvidiaIntegration",
            json!({"token": "s-9", "hostname": "https://integrate.api.nvidia.com/v1"}),
        ),
        ("openai", "OpenAIIntegration", json!({"token": "s-10"})),
        (
            "vegas_gateway",
            "VegasGatewayIntegration",
            json!({"token": "s-11", "endpoint": "https://vegas.example.com/relay", "use_case": "EVAL"}),
        ),
        (
            "vertex_ai",
            "VertexAIIntegration",
            json!({"token": "s-12", "gcs_config": {"service_account_credentials": "s-13", "bucket_name": "b", "object_path_prefix": "p/"}}),
        ),
        (
            "writer",
            "WriterIntegration",
            json!({"token": "s-14", "organization_id": "w-org"}),
        ),
    ]
}

/// Every byte a state database holds: its file and its write-ahead log
/// (`FILE-wal`, where committed writes stay until a checkpoint).
pub fn state_bytes(state: &std::path::Path) -> Vec<u8> {
    let mut bytes = std::fs::read(state).unwrap_or_default();
    let mut wal = state.as_os_str().to_os_string();
    wal.push("-wal");
    bytes.extend(std::fs::read(wal).unwrap_or_default());
    bytes
}
