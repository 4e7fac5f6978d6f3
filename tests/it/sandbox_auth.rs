//! The spec's authentication table, operation by operation: the ten
//! operations × {API key, bearer token, HTTP Basic, nothing}; roles; the
//! configurable key header; bearer tokens lost on restart.

use crate::sandbox_support;

use evalctl::sandbox::Sandbox;
use sandbox_support::*;
use serde_json::{Value, json};

struct Op {
    number: u8,
    method: &'static str,
    path: String,
    body: Option<Value>,
    basic: bool,
    success: u16,
    write: bool,
}

fn operations() -> Vec<Op> {
    let pid = project("demo-project");
    let prod = production();
    let dashboard = default_dashboard(&log_stream("demo-project", "production"));
    let op = |number, method, path: String, body, basic, success, write| Op {
        number,
        method,
        path,
        body,
        basic,
        success,
        write,
    };
    vec![
        op(
            1,
            "PATCH",
            format!("{prod}/metric_settings"),
            Some(json!({"segment_filters": [{"sample_rate": 0.1}]})),
            true,
            200,
            true,
        ),
        op(
            2,
            "POST",
            format!("/v2/projects/{pid}/log_streams/search"),
            Some(json!({"limit": 1})),
            true,
            200,
            false,
        ),
        op(
            3,
            "POST",
            format!("{prod}/trends/sections"),
            Some(json!({"name": "auth"})),
            false,
            200,
            true,
        ),
        op(
            4,
            "PUT",
            "/v2/integrations/openai".into(),
            Some(json!({"organization_id": "o", "token": "t"})),
            true,
            200,
            true,
        ),
        op(
            5,
            "PATCH",
            format!(
                "/v2/projects/{pid}/experiments/{}/metric_settings",
                experiment("demo-project", "baseline-eval")
            ),
            Some(json!({"segment_filters": []})),
            true,
            200,
            true,
        ),
        op(
            6,
            "GET",
            format!(
                "/v2/scorers/versions/{}/projects",
                version("context_adherence", 1)
            ),
            None,
            false,
            200,
            false,
        ),
        op(
            7,
            "GET",
            format!("/v2/projects/{pid}/feedback/templates"),
            None,
            true,
            200,
            false,
        ),
        op(
            8,
            "GET",
            format!(
                "/v2/projects/{pid}/annotation/templates/{}",
                template("demo-project", "star-annotation")
            ),
            None,
            true,
            200,
            false,
        ),
        op(
            9,
            "GET",
            format!("/v2/users/{}", user("alice@example.com")),
            None,
            true,
            200,
            false,
        ),
        op(
            10,
            "POST",
            format!("{prod}/trends/dashboards/{dashboard}/favorite?visibility=user"),
            None,
            false,
            204,
            true,
        ),
    ]
}

#[tokio::test]
async fn the_spec_auth_table_operation_by_operation() {
    let cx = Ctx::new();
    let token = cx.login("demo@example.com", "demo-password").await;
    let schemes = [
        ("api key", Auth::demo()),
        ("bearer", Auth::Bearer(token)),
        (
            "basic",
            Auth::Basic("demo@example.com".into(), "demo-password".into()),
        ),
        ("none", Auth::None),
    ];
    let mut table = Vec::new();
    for op in operations() {
        for (scheme, auth) in &schemes {
            let r = cx.call(op.method, &op.path, auth, op.body.clone()).await;
            let expected = match *scheme {
                "none" => 401,
                "basic" if !op.basic => 401,
                _ => op.success,
            };
            table.push(format!("op {:>2} {:<8} -> {}", op.number, scheme, r.status));
            assert_eq!(
                r.status, expected,
                "operation {} with {scheme}: {}",
                op.number, r.body
            );
            if expected == 401 {
                assert_eq!(r.body, json!({"detail": "Not authenticated"}));
                assert!(
                    r.headers.contains_key("www-authenticate"),
                    "op {} {scheme}",
                    op.number
                );
            }
        }
    }
    assert_eq!(table.len(), 40);
}

#[tokio::test]
async fn wrong_credentials_are_401_and_any_valid_one_authenticates() {
    let cx = Ctx::new();
    let me = "/v2/current_user";
    for auth in [
        Auth::Key("not-a-key".into()),
        Auth::Bearer("not-a-token".into()),
        Auth::Basic("demo@example.com".into(), "wrong".into()),
        Auth::Basic("nobody@example.com".into(), "demo-password".into()),
    ] {
        let r = cx.call("GET", me, &auth, None).await;
        assert_eq!(r.status, 401, "{auth:?}");
        assert_eq!(r.body, json!({"detail": "Not authenticated"}));
    }
    // The API key of another user authenticates as that user.
    let r = cx
        .call("GET", me, &Auth::Key("alice-api-key".into()), None)
        .await;
    assert_eq!(r.body["email"], "alice@example.com");
    // Basic with a wrong password but a valid key header: the key wins.
    let wrong_basic = reqwest::Client::new()
        .get(cx.url(me))
        .header("Service-AO-API-Key", KEY)
        .basic_auth("demo@example.com", Some("wrong"))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong_basic.status(), 200);
}

#[tokio::test]
async fn read_only_users_get_403_on_writes_and_read_everything() {
    let cx = Ctx::new();
    let viewer = Auth::Key(VIEWER_KEY.into());
    for op in operations() {
        let r = cx.call(op.method, &op.path, &viewer, op.body.clone()).await;
        if op.write {
            assert_eq!(r.status, 403, "op {}: {}", op.number, r.body);
            assert!(r.body["detail"].as_str().unwrap().contains("read_only"));
        } else {
            assert_eq!(r.status, op.success, "op {}: {}", op.number, r.body);
        }
    }
    // Nothing was written.
    let settings = cx.get(&format!("{}/metric_settings", production())).await;
    assert_eq!(settings.body["segment_filters"][0]["sample_rate"], 0.5);
}

#[tokio::test]
async fn bearer_tokens_do_not_survive_a_restart() {
    let cx = Ctx::new();
    let token = cx.login("alice@example.com", "alice-password").await;
    let auth = Auth::Bearer(token.clone());
    assert_eq!(
        cx.call("GET", "/v2/current_user", &auth, None).await.status,
        200
    );
    cx.sb.forget_tokens();
    let r = cx.call("GET", "/v2/current_user", &auth, None).await;
    assert_eq!(r.status, 401);
    // The client's re-login gets a new one.
    let again = cx.login("alice@example.com", "alice-password").await;
    assert_ne!(again, token);
    assert_eq!(
        cx.call("GET", "/v2/current_user", &Auth::Bearer(again), None)
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn the_key_header_name_is_configurable() {
    let cx = Ctx::with(Sandbox::builder().api_key_header("X-Custom-Key"));
    let default_header = cx.get("/v2/current_user").await;
    assert_eq!(default_header.status, 401);
    let r = reqwest::Client::new()
        .get(cx.url("/v2/current_user"))
        .header("X-Custom-Key", KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn the_request_log_names_the_authenticated_user() {
    let cx = Ctx::new();
    cx.get("/v2/current_user").await;
    cx.call("GET", "/v2/current_user", &Auth::None, None).await;
    let log = cx.sb.requests();
    assert_eq!(log.len(), 2);
    assert_eq!(log[0].user.as_deref(), Some("demo@example.com"));
    assert_eq!(log[0].status, Some(200));
    assert_eq!(log[1].user, None);
    assert_eq!(log[1].status, Some(401));
    assert!(log[0].seq < log[1].seq);
}
