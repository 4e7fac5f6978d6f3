//! Contract tests of model-provider integrations (spec operation 4 and the
//! reference's reads): all twelve providers, read shapes, and the rule that
//! no answer or stored record ever holds a secret.

use crate::sandbox_support;

use sandbox_support::*;
use serde_json::json;

#[tokio::test]
async fn op4_integration_put_never_returns_a_secret() {
    let cx = Ctx::new();
    let r = cx
        .put(
            "/v2/integrations/openai",
            json!({"organization_id": "org-123", "token": "sk-live-SECRET"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("IntegrationDB", &r.body);
    assert_eq!(r.body["provider"], "openai");
    assert_eq!(r.body["name"], "openai");
    assert_eq!(r.body["created_by"], user("demo@example.com"));
    assert!(!r.body.to_string().contains("sk-live-SECRET"));
    let created_at = r.body["created_at"].clone();

    let read = cx.get("/v2/integrations/openai").await;
    assert_eq!(read.status, 200);
    assert_schema("OpenAIIntegration", &read.body);
    assert_eq!(read.body["organization_id"], "org-123");
    assert_eq!(read.body["provider"], "openai");
    assert!(!read.body.to_string().contains("SECRET"));

    // Update: same record, new time; the list has it once.
    let r2 = cx
        .put(
            "/v2/integrations/openai",
            json!({"organization_id": "org-456", "token": "sk-live-OTHER"}),
        )
        .await;
    assert_eq!(r2.body["id"], r.body["id"]);
    assert_eq!(r2.body["created_at"], created_at);
    let list = cx.get("/integrations").await;
    assert_schema_array("IntegrationDB", &list.body);
    assert_eq!(list.body.as_array().unwrap().len(), 1);
    // Another user does not see it.
    let other = cx
        .call(
            "GET",
            "/v2/integrations/openai",
            &Auth::Key("alice-api-key".into()),
            None,
        )
        .await;
    assert_eq!(other.status, 404);
    assert_eq!(other.body, json!({"detail": "Integration not found"}));
    // The sandbox keeps a fingerprint, not the token.
    let stored = cx
        .sb
        .read_state(|s| serde_json::to_string(&s.integrations).unwrap());
    assert!(!stored.contains("sk-live"));
    assert_eq!(cx.delete("/integrations/openai").await.status, 200);
    assert_eq!(cx.delete("/integrations/openai").await.status, 404);
}

#[tokio::test]
async fn every_provider_can_be_put_and_read_back_without_secrets() {
    let cx = Ctx::new();
    let bodies = [
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
    ];
    for (provider, read_schema, body) in bodies {
        let r = cx.put(&format!("/v2/integrations/{provider}"), body).await;
        assert_eq!(r.status, 200, "{provider}: {}", r.body);
        assert_schema("IntegrationDB", &r.body);
        let read = cx.get(&format!("/v2/integrations/{provider}")).await;
        assert_eq!(read.status, 200, "{provider}");
        assert_schema(read_schema, &read.body);
        let text = read.body.to_string();
        assert!(!text.contains("\"s-"), "{provider} leaks a secret: {text}");
        for secret_field in [
            "token",
            "api_key_value",
            "headers",
            "service_account_credentials",
        ] {
            assert!(
                !text.contains(&format!("\"{secret_field}\"")),
                "{provider}: {text}"
            );
        }
    }
    let custom = cx.get("/v2/integrations/custom").await.body;
    assert_eq!(custom["base_url"], "https://llm.example.com/v1");
    assert_eq!(custom["api_key_header"], "X-Key");
    let databricks = cx.get("/v2/integrations/databricks").await.body;
    assert_eq!(
        databricks["extra"]["hostname"],
        "https://dbc-1.cloud.databricks.com"
    );
    let vertex = cx.get("/v2/integrations/vertex_ai").await.body;
    assert_eq!(
        vertex["gcs_config"],
        json!({"bucket_name": "b", "object_path_prefix": "p/"})
    );
    let azure = cx.get("/v2/integrations/azure").await.body;
    assert_eq!(
        azure["authentication_type"], "api_key",
        "create default filled"
    );
    // An unknown provider is an unknown path for PUT, a 422 for GET.
    assert_eq!(
        cx.put("/v2/integrations/acme", json!({"token": "x"}))
            .await
            .status,
        404
    );
    let r = cx.get("/v2/integrations/acme").await;
    assert_422(&r);
    assert_eq!(locs(&r.body), vec![r#"["path","name"]"#]);
}

#[tokio::test]
async fn integration_token_fingerprint_changes_when_resent() {
    let cx = Ctx::new();
    let fp = |cx: &Ctx| {
        cx.sb.read_state(|s| {
            let i = &s.integrations[0];
            (i.secret_fingerprint.clone(), i.secret_updated_at.clone())
        })
    };
    cx.put("/v2/integrations/mistral", json!({"token": "one"}))
        .await;
    let a = fp(&cx);
    cx.put("/v2/integrations/mistral", json!({"token": "one"}))
        .await;
    let b = fp(&cx);
    cx.put("/v2/integrations/mistral", json!({"token": "two"}))
        .await;
    let c = fp(&cx);
    assert_eq!(a.0, b.0, "same token, same fingerprint");
    assert!(b.1 >= a.1, "re-sent: newer timestamp");
    assert_ne!(b.0, c.0, "new token, new fingerprint");
}
