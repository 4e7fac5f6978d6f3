//! Bodies the service does not read as JSON, and 422s that must not carry
//! secrets back.
//!
//! FastAPI decodes a body as JSON only when its `Content-Type` is JSON
//! (`application/json`, `application/*+json`) or absent; otherwise the
//! model is validated against the raw text, a 422 `model_attributes_type`
//! at `["body"]` whose `input` is the text. And no 422 of the sandbox echoes
//! a secret field's value, whatever shape it was sent in.

use crate::sandbox_support::*;

use serde_json::{Value, json};

/// `(method, path, a valid JSON body)` of operations that take JSON.
fn json_operations() -> Vec<(&'static str, String, Value)> {
    let prod = production();
    let demo = project("demo-project");
    vec![
        (
            "POST",
            format!("{prod}/trends/sections"),
            json!({"name": "Typed"}),
        ),
        (
            "PATCH",
            format!("{prod}/metric_settings"),
            json!({"segment_filters": [{"sample_rate": 0.5}]}),
        ),
        (
            "POST",
            format!("/v2/projects/{demo}/log_streams"),
            json!({"name": "typed-stream"}),
        ),
        (
            "PUT",
            "/v2/integrations/mistral".to_owned(),
            json!({"token": "typed-token"}),
        ),
        ("POST", "/v2/scorers/list".to_owned(), json!({})),
        ("POST", "/v2/projects/paginated".to_owned(), json!({})),
    ]
}

#[tokio::test]
async fn a_json_body_with_another_content_type_is_refused_as_the_service_does() {
    let cx = Ctx::new();
    for (method, path, body) in json_operations() {
        let text = body.to_string();
        for content_type in [
            "text/plain",
            "application/x-www-form-urlencoded",
            "text/json",
        ] {
            let before = cx
                .sb
                .read_state(|s| serde_json::to_value(s).expect("state"));
            let r = cx
                .raw(
                    method,
                    &path,
                    &Auth::demo(),
                    Some(content_type),
                    Some(text.clone().into_bytes()),
                )
                .await;
            assert_eq!(
                r.status, 422,
                "{method} {path} as {content_type}: {}",
                r.body
            );
            let expected_input = if path.contains("integrations") {
                json!("[redacted]")
            } else {
                json!(text)
            };
            assert_eq!(
                r.body,
                json!({"detail": [{
                    "type": "model_attributes_type",
                    "loc": ["body"],
                    "msg": "Input should be a valid dictionary or object to extract fields from",
                    "input": expected_input,
                }]}),
                "{method} {path} as {content_type}"
            );
            assert_schema("HTTPValidationError", &r.body);
            let after = cx
                .sb
                .read_state(|s| serde_json::to_value(s).expect("state"));
            assert!(
                before == after,
                "{method} {path}: a refused write changed the state"
            );
        }
    }
    // JSON by any of its names, or by default, is read.
    let (method, path, body) = json_operations().remove(0);
    for (n, content_type) in [
        Some("application/json"),
        Some("application/json; charset=utf-8"),
        Some("Application/Vnd.Example+JSON"),
        None,
    ]
    .into_iter()
    .enumerate()
    {
        let mut body = body.clone();
        body["name"] = json!(format!("typed-{n}"));
        let r = cx
            .raw(
                method,
                &path,
                &Auth::demo(),
                content_type,
                Some(body.to_string().into_bytes()),
            )
            .await;
        assert_eq!(r.status, 200, "{content_type:?}: {}", r.body);
    }
}

#[tokio::test]
async fn the_raw_body_fault_comes_with_the_others_path_first() {
    let cx = Ctx::new();
    let r = cx
        .raw(
            "PATCH",
            "/v2/projects/not-a-uuid/log_streams/also-not/metric_settings",
            &Auth::demo(),
            Some("text/plain"),
            Some(br#"{"segment_filters": []}"#.to_vec()),
        )
        .await;
    assert_eq!(r.status, 422);
    assert_eq!(
        locs(&r.body),
        vec![
            r#"["path","project_id"]"#,
            r#"["path","log_stream_id"]"#,
            r#"["body"]"#
        ]
    );
    assert_eq!(r.body["detail"][2]["type"], "model_attributes_type");
}

/// Canaries sent in secret fields, in every shape a 422 could echo.
fn secret_bodies() -> Vec<(&'static str, Value)> {
    vec![
        ("openai", json!({"token": {"nested": "sk-canary-object"}})),
        ("openai", json!({"token": ["sk-canary-list"]})),
        ("openai", json!({"token": 4_242_424_242_u64})),
        (
            "openai",
            json!({"token": "sk-canary-beside", "organization_id": {"bad": true}}),
        ),
        ("writer", json!({"token": "sk-canary-missing-org"})),
        (
            "azure",
            json!({"token": {"key": "sk-canary-azure"}, "endpoint": 7}),
        ),
        (
            "custom",
            json!({"endpoint": "https://llm.example.com", "headers": "sk-canary-headers"}),
        ),
        (
            "custom",
            json!({"endpoint": "https://llm.example.com", "api_key_value": {"v": "sk-canary-akv"}}),
        ),
        (
            "custom",
            json!({"endpoint": 1, "headers": {"X-Key": "sk-canary-header-value"}}),
        ),
    ]
}

#[tokio::test]
async fn no_422_echoes_a_secret_field() {
    let cx = Ctx::new();
    for (provider, body) in secret_bodies() {
        let canary = body.to_string();
        let canary = canary
            .split('"')
            .find(|s| s.starts_with("sk-canary"))
            .unwrap_or("4242424242")
            .to_owned();
        let path = format!("/v2/integrations/{provider}");
        let r = cx.put(&path, body.clone()).await;
        assert_eq!(r.status, 422, "{provider} {body}: {}", r.body);
        let text = r.body.to_string();
        assert!(
            !text.contains(&canary),
            "{provider}: {canary} echoed in {text}"
        );
        // Sent as text, the whole body is echoed raw: redacted too.
        let r = cx
            .raw(
                "PUT",
                &path,
                &Auth::demo(),
                Some("text/plain"),
                Some(body.to_string().into_bytes()),
            )
            .await;
        assert_eq!(r.status, 422);
        assert_eq!(r.body["detail"][0]["input"], "[redacted]");
        assert!(!r.body.to_string().contains(&canary));
    }
    // A form-shaped text body naming a secret is redacted as well; one that
    // names none is echoed as the service does.
    let r = cx
        .raw(
            "PUT",
            "/v2/integrations/openai",
            &Auth::demo(),
            Some("text/plain"),
            Some(b"organization_id=o&token=sk-canary-form".to_vec()),
        )
        .await;
    assert_eq!(r.body["detail"][0]["input"], "[redacted]");
    let r = cx
        .raw(
            "POST",
            &format!("{}/trends/sections", production()),
            &Auth::demo(),
            Some("text/plain"),
            Some(b"name=plain".to_vec()),
        )
        .await;
    assert_eq!(r.body["detail"][0]["input"], "name=plain");
}
