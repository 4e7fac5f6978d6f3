//! Secrets never leave through `Debug`, error messages or log lines at TRACE:
//! API keys, passwords, bearer tokens and integration tokens, including a 422
//! whose `input` echoes the integration body.

#![allow(clippy::unwrap_used)] // test helpers: a failing unwrap is a failing test, with its location

use crate::{client_support, log_support};

use client_support::{Reply, TestServer};
use evalctl::api::{IntegrationCreate, Secret, VertexGcsConfig};
use evalctl::client::{ApiError, Client, ClientConfig, Credentials};

const SECRETS: &[&str] = &[
    "KEY-s3cr3t-apikey",
    "PW-s3cr3t-password",
    "TOK-s3cr3t-login-token",
    "INT-s3cr3t-integration-token",
    "GCS-s3cr3t-credentials",
    "AT-s3cr3t-access-token",
];

fn assert_clean(what: &str, text: &str) {
    for s in SECRETS {
        assert!(!text.contains(s), "{what} leaks {s}:\n{text}");
    }
}

fn vertex() -> IntegrationCreate<Secret> {
    IntegrationCreate::VertexAi {
        token: Secret::new("INT-s3cr3t-integration-token"),
        gcs_config: Some(VertexGcsConfig {
            service_account_credentials: Secret::new("GCS-s3cr3t-credentials"),
            bucket_name: "bucket".into(),
            object_path_prefix: "p/".into(),
        }),
        multi_modal_config: None,
    }
}

#[tokio::test]
async fn no_secret_in_debug_errors_or_trace_logs() {
    let capture = log_support::capture(tracing::Level::TRACE);

    let server = TestServer::start(|seen| {
        if seen.path == "/login" {
            return Reply::ok(serde_json::json!({
                "access_token": "TOK-s3cr3t-login-token", "token_type": "bearer"
            }));
        }
        if seen.path.starts_with("/v2/integrations/") {
            // A 422 echoing the whole body as `input`, as pydantic does.
            let body: serde_json::Value = seen.json();
            return Reply::json(
                422,
                serde_json::json!({ "detail": [
                    { "loc": ["body", "gcs_config", "bucket_name"], "msg": "String should match pattern",
                      "type": "string_pattern_mismatch", "input": body, "ctx": { "pattern": "^[a-z]+$" } }
                ]}),
            );
        }
        if seen.nth == 0 {
            return Reply::status(503);
        }
        Reply::detail(401, "Not authenticated")
    });

    let mut errors = Vec::new();
    let mut debugs = Vec::new();

    // Password flow (bearer for op 10, Basic elsewhere), with a retry on the way.
    let pw = server.client(Credentials::password(
        "demo@example.com",
        "PW-s3cr3t-password",
    ));
    debugs.push(format!("{pw:?}"));
    debugs.push(format!("{:?}", pw.config()));
    errors.push(
        pw.favorite_dashboard("p", "l", "d", &evalctl::api::Visibility::User)
            .await
            .unwrap_err(),
    );
    errors.push(pw.put_integration(&vertex()).await.unwrap_err());
    errors.push(pw.get_user("u").await.unwrap_err());

    let key = server.client(Credentials::api_key("KEY-s3cr3t-apikey"));
    debugs.push(format!("{key:?}"));
    errors.push(key.put_integration(&vertex()).await.unwrap_err());
    errors.push(key.current_user().await.unwrap_err());

    let token = server.client(Credentials::access_token("AT-s3cr3t-access-token"));
    debugs.push(format!("{token:?}"));
    errors.push(token.current_user().await.unwrap_err());

    // The 422 still says what is wrong, field by field.
    assert!(
        matches!(errors[1], ApiError::Validation { .. }),
        "{:?}",
        errors[1]
    );
    assert!(
        errors[1]
            .to_string()
            .contains("body.gcs_config.bucket_name: String should match pattern"),
        "{}",
        errors[1]
    );

    for e in &errors {
        assert_clean("error Display", &e.to_string());
        assert_clean("error Debug", &format!("{e:?}"));
    }
    for d in &debugs {
        assert_clean("Debug", d);
    }
    let config = ClientConfig::new(
        "https://x",
        Credentials::password("u", "PW-s3cr3t-password"),
    );
    assert_clean("config Debug", &format!("{config:?}"));
    let client = Client::new(config).unwrap();
    assert_clean("client Debug", &format!("{client:?}"));

    let logs = capture.text();
    drop(capture);
    assert!(logs.contains("TRACE"), "trace output was captured:\n{logs}");
    assert!(
        logs.contains("status=503") && logs.contains("attempt=2"),
        "{logs}"
    );
    assert_clean("TRACE logs", &logs);

    // And the secrets did reach the server, where they belong.
    let sent = server.requests();
    let put = sent
        .iter()
        .find(|s| s.path == "/v2/integrations/vertex_ai")
        .unwrap();
    assert_eq!(put.json()["token"], "INT-s3cr3t-integration-token");
    assert!(put.json().get("provider").is_none());
}
