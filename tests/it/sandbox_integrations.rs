//! Contract tests of model-provider integrations (spec operation 4 and the
//! reference's reads): all twelve providers, read shapes, named custom
//! integrations, the Databricks alias, and the rule that no answer or stored
//! record ever holds a secret; a `--state` file holds none of an integration's
//! values in the clear, is readable by its owner only, and serves the same
//! integration after a restart.

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
    let bodies = provider_bodies();
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

#[tokio::test]
async fn named_custom_integrations_are_records_of_their_own() {
    let cx = Ctx::new();
    let body = |endpoint: &str, key: &str| {
        json!({"endpoint": endpoint, "authentication_type": "api_key", "api_key_header": "X-Key",
               "api_key_value": key, "model_properties": [{"name": "m1", "alias": "Model one"}]})
    };
    let r = cx
        .put(
            "/v2/integrations/custom/eu-gateway",
            body("https://eu.example.com/v1", "s-eu"),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("IntegrationDB", &r.body);
    assert_eq!(r.body["name"], "eu-gateway");
    assert_eq!(r.body["provider"], "custom");
    assert!(!r.body.to_string().contains("s-eu"));
    let eu_id = r.body["id"].clone();
    // Only named ones: the provider's read has nothing to show.
    assert_eq!(cx.get("/v2/integrations/custom").await.status, 404);
    let r = cx
        .put(
            "/v2/integrations/custom/us-gateway",
            body("https://us.example.com/v1", "s-us"),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = cx
        .put(
            "/v2/integrations/custom",
            body("https://default.example.com/v1", "s-default"),
        )
        .await;
    assert_eq!(r.body["name"], "custom");
    // Updating a named one keeps its record.
    let r = cx
        .put(
            "/v2/integrations/custom/eu-gateway",
            body("https://eu2.example.com/v1", "s-eu2"),
        )
        .await;
    assert_eq!(r.body["id"], eu_id);
    let list = cx.get("/integrations").await.body;
    assert_schema_array("IntegrationDB", &list);
    let mut names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["custom", "eu-gateway", "us-gateway"]);
    // The provider's read is the one named after it.
    let read = cx.get("/v2/integrations/custom").await;
    assert_schema("CustomIntegration", &read.body);
    assert_eq!(read.body["base_url"], "https://default.example.com/v1");
    // PUT `/v2/integrations/custom/custom` is that same one.
    let same = cx
        .put(
            "/v2/integrations/custom/custom",
            body("https://default2.example.com/v1", "s-d2"),
        )
        .await;
    assert_eq!(same.body["id"], r_id(&list, "custom"));
    // Named ones cannot be deleted by name: the parameter is a provider.
    let r = cx.delete("/integrations/eu-gateway").await;
    assert_422(&r);
    assert_eq!(locs(&r.body), [r#"["path","name"]"#]);
    assert_eq!(cx.delete("/integrations/custom").await.status, 200);
    let left = cx.get("/integrations").await.body;
    assert_eq!(left.as_array().unwrap().len(), 2, "the named ones stay");
    // The body is the custom provider's, validated as such; nothing stored
    // holds a secret.
    let r = cx
        .put("/v2/integrations/custom/bad", json!({"token": "s-x"}))
        .await;
    assert_422(&r);
    assert_eq!(locs(&r.body), [r#"["body","endpoint"]"#]);
    assert!(!r.body.to_string().contains("s-x"));
    let stored = cx
        .sb
        .read_state(|s| serde_json::to_string(&s.integrations).unwrap());
    assert!(!stored.contains("\"s-"), "{stored}");
    // Other users have their own.
    let theirs = cx
        .call(
            "GET",
            "/integrations",
            &Auth::Key("alice-api-key".into()),
            None,
        )
        .await;
    assert_eq!(theirs.body, json!([]));
}

fn r_id(list: &serde_json::Value, name: &str) -> serde_json::Value {
    list.as_array()
        .expect("a list")
        .iter()
        .find(|i| i["name"] == name)
        .map(|i| i["id"].clone())
        .expect("listed")
}

#[tokio::test]
async fn the_unity_catalog_path_writes_the_databricks_integration() {
    let cx = Ctx::new();
    let r = cx
        .put(
            "/v2/integrations/databricks/unity-catalog/sql",
            json!({"token": "s-dbx", "hostname": "https://dbc-1.cloud.databricks.com", "storage": true,
                   "path": "/sql/1.0/warehouses/a0"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("IntegrationDB", &r.body);
    assert_eq!(r.body["provider"], "databricks");
    let read = cx.get("/v2/integrations/databricks").await;
    assert_schema("DatabricksIntegration", &read.body);
    assert_eq!(read.body["id"], r.body["id"]);
    let again = cx
        .put(
            "/v2/integrations/databricks",
            json!({"token": "s-dbx2", "hostname": "https://dbc-2.cloud.databricks.com"}),
        )
        .await;
    assert_eq!(again.body["id"], r.body["id"], "one integration, two paths");
    let r = cx
        .put("/v2/integrations/databricks/unity-catalog/sql", json!({}))
        .await;
    assert_422(&r);
}

#[tokio::test]
async fn the_state_file_holds_no_integration_value_and_a_restart_serves_it_alike() {
    use crate::fault_support::{SandboxProcess, free_port};

    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("sandbox.json");
    let mut sandbox = SandboxProcess::start(&state, free_port(), &[]);
    let client = reqwest::Client::new();
    let base = sandbox.base_url();
    let body = json!({
        "token": "CANARY-token-1234",
        "endpoint": "https://canary-host-1234.example.com",
        "default_headers": {"Authorization": "Bearer CANARY-bearer-1234", "X-Team": "CANARY-team-1234"},
        "deployments": {"gpt-4o": "CANARY-deployment-1234"},
    });
    let put = client
        .put(format!("{base}/v2/integrations/azure"))
        .header("Service-AO-API-Key", KEY)
        .json(&body)
        .send()
        .await
        .expect("put");
    assert_eq!(put.status(), 200);
    // A fresh client each time: a kept connection to the sandbox before its restart is gone.
    let read = |base: String| {
        let client = reqwest::Client::new();
        async move {
            client
                .get(format!("{base}/v2/integrations/azure"))
                .header("Service-AO-API-Key", KEY)
                .send()
                .await
                .expect("get")
                .json::<serde_json::Value>()
                .await
                .expect("json")
        }
    };
    let before = read(base.clone()).await;
    assert_eq!(
        before["default_headers"]["Authorization"], "Bearer CANARY-bearer-1234",
        "the service returns it: so does the sandbox"
    );
    let text = crate::sandbox_support::state_bytes(&state).to_ascii_lowercase();
    assert!(
        !text.windows(6).any(|w| w == b"canary"),
        "the state file holds the header in the clear"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for file in [state.clone(), dir.path().join("sandbox.json.key")] {
            let mode = std::fs::metadata(&file)
                .expect("exists")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "{}", file.display());
        }
    }
    sandbox.restart();
    let after = read(sandbox.base_url()).await;
    assert_eq!(after, before);
}
