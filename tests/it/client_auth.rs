//! Authentication as the spec's table says: API key header (default name and
//! an override), HTTP Basic where accepted, the OAuth2 password flow for
//! operations 3, 6 and 10, one re-login on a 401 with a login token, and a
//! static access token that cannot be renewed.

use crate::client_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use client_support::{AuthSeen, Reply, Seen, TestServer, section_json, settings_json};
use evalctl::api::{MetricSettingsRequest, SectionCreateRequest, Visibility};
use evalctl::client::{ApiError, Client, Credentials};

fn user_json() -> serde_json::Value {
    serde_json::json!({
        "id": "u1", "email": "demo@example.com", "organization_id": "o",
        "organization_name": "O", "created_at": "2024-01-01T00:00:00Z",
        "updated_at": "2024-01-01T00:00:00Z", "role": "admin"
    })
}

fn listing_json() -> serde_json::Value {
    serde_json::json!({ "projects": [], "total_count": 0, "starting_token": 0, "limit": 100,
                        "paginated": false, "next_starting_token": null })
}

fn section() -> SectionCreateRequest {
    SectionCreateRequest {
        name: "S".into(),
        description: None,
        color: None,
    }
}

/// A server issuing tokens `t1`, `t2`, ... from /login and accepting Basic
/// `demo@example.com:pw`, any bearer `t<n>` with n >= `min_token`, and
/// answering each path with a plausible body.
fn service(min_token: usize, logins: Arc<AtomicUsize>) -> impl Fn(&Seen) -> Reply {
    move |seen| {
        if seen.path == "/login" {
            let n = logins.fetch_add(1, Ordering::SeqCst) + 1;
            return Reply::ok(
                serde_json::json!({ "access_token": format!("t{n}"), "token_type": "bearer" }),
            );
        }
        let ok = match &seen.auth {
            AuthSeen::Basic { user, password } => user == "demo@example.com" && password == "pw",
            AuthSeen::Bearer(t) => t[1..].parse::<usize>().is_ok_and(|n| n >= min_token),
            AuthSeen::ApiKey { value, .. } => value == "key",
            AuthSeen::None => false,
        };
        if !ok {
            return Reply::detail(401, "Not authenticated").header("www-authenticate", "Bearer");
        }
        if seen.path.ends_with("/metric_settings") {
            Reply::ok(settings_json())
        } else if seen.path.ends_with("/trends/sections") {
            Reply::ok(section_json("s1", "S"))
        } else if seen.path.ends_with("/favorite") {
            Reply::status(204)
        } else if seen.path.ends_with("/projects") {
            Reply::ok(listing_json())
        } else {
            Reply::ok(user_json())
        }
    }
}

#[tokio::test]
async fn password_uses_basic_where_accepted_and_bearer_on_ops_3_6_10() {
    let logins = Arc::new(AtomicUsize::new(0));
    let server = TestServer::start(service(1, logins.clone()));
    let client = server.client(Credentials::password("demo@example.com", "pw"));

    client
        .update_log_stream_metric_settings("p", "l", &MetricSettingsRequest::default())
        .await
        .unwrap();
    client
        .create_section("p", "l", None, &section())
        .await
        .unwrap();
    client.scorer_version_projects("v1").await.unwrap();
    client
        .favorite_dashboard("p", "l", "d", &Visibility::User)
        .await
        .unwrap();
    assert!(client.get_user("u1").await.unwrap().is_some());

    let by_path: Vec<(String, AuthSeen)> = server
        .requests()
        .into_iter()
        .map(|s| (s.path, s.auth))
        .collect();
    let basic = AuthSeen::Basic {
        user: "demo@example.com".into(),
        password: "pw".into(),
    };
    let bearer = AuthSeen::Bearer("t1".into());
    assert_eq!(
        by_path,
        vec![
            (
                "/v2/projects/p/log_streams/l/metric_settings".into(),
                basic.clone()
            ),
            ("/login".into(), AuthSeen::None),
            (
                "/v2/projects/p/log_streams/l/trends/sections".into(),
                bearer.clone()
            ),
            ("/v2/scorers/versions/v1/projects".into(), bearer.clone()),
            (
                "/v2/projects/p/log_streams/l/trends/dashboards/d/favorite".into(),
                bearer
            ),
            ("/v2/users/u1".into(), basic),
        ]
    );
    assert_eq!(logins.load(Ordering::SeqCst), 1, "the token is cached");
    let login = &server.requests_to("/login")[0];
    assert_eq!(
        login.content_type.as_deref(),
        Some("application/x-www-form-urlencoded")
    );
    let form = login.text();
    for pair in [
        "username=demo%40example.com",
        "password=pw",
        "grant_type=password",
    ] {
        assert!(form.contains(pair), "{form}");
    }
}

#[tokio::test]
async fn a_401_with_a_login_token_logs_in_again_once_and_retries_once() {
    // Tokens below t2 are "expired": the first request gets a 401.
    let logins = Arc::new(AtomicUsize::new(0));
    let server = TestServer::start(service(2, logins.clone()));
    let client = server.client(Credentials::password("demo@example.com", "pw"));
    let s = client
        .create_section("p", "l", None, &section())
        .await
        .unwrap();
    assert_eq!(s.id, "s1");
    assert_eq!(logins.load(Ordering::SeqCst), 2);
    let auths: Vec<AuthSeen> = server
        .requests_to("/v2/projects/p/log_streams/l/trends/sections")
        .into_iter()
        .map(|s| s.auth)
        .collect();
    assert_eq!(
        auths,
        [AuthSeen::Bearer("t1".into()), AuthSeen::Bearer("t2".into())]
    );
    let stats = client.stats();
    assert_eq!(stats.operations["POST create_trends_section"].relogins, 1);
    assert_eq!(stats.operations["POST login"].requests, 2);
}

#[tokio::test]
async fn a_token_refused_after_re_login_is_unauthorized_not_a_loop() {
    let logins = Arc::new(AtomicUsize::new(0));
    let server = TestServer::start(service(usize::MAX, logins.clone()));
    let client = server.client(Credentials::password("demo@example.com", "pw"));
    let err = client.scorer_version_projects("v").await.unwrap_err();
    assert!(matches!(err, ApiError::Unauthorized { .. }), "{err:?}");
    assert!(err.to_string().contains("EVALCTL_USERNAME"), "{err}");
    assert_eq!(logins.load(Ordering::SeqCst), 2, "one re-login only");
    assert_eq!(
        server.requests_to("/v2/scorers/versions/v/projects").len(),
        2
    );
}

#[tokio::test]
async fn a_refused_login_names_the_variables() {
    let server = TestServer::start(|seen| {
        if seen.path == "/login" {
            Reply::detail(400, "Incorrect username or password")
        } else {
            Reply::status(500)
        }
    });
    let client = server.client(Credentials::password("demo@example.com", "wrong"));
    let err = client
        .favorite_dashboard("p", "l", "d", &Visibility::User)
        .await
        .unwrap_err();
    assert!(matches!(err, ApiError::Unauthorized { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("login") && text.contains("EVALCTL_PASSWORD"),
        "{text}"
    );
    assert_eq!(
        server.requests().len(),
        1,
        "the operation itself is not sent"
    );
}

#[tokio::test]
async fn a_static_access_token_is_sent_as_is_and_never_renewed() {
    let logins = Arc::new(AtomicUsize::new(0));
    let server = TestServer::start(service(5, logins.clone()));
    let ok = server.client(Credentials::access_token("t7"));
    assert!(ok.get_user("u1").await.unwrap().is_some());
    let expired = server.client(Credentials::access_token("t1"));
    let err = expired.get_user("u1").await.unwrap_err();
    assert!(matches!(err, ApiError::Unauthorized { .. }), "{err:?}");
    assert!(err.to_string().contains("EVALCTL_ACCESS_TOKEN"), "{err}");
    assert!(err.to_string().contains("expired"), "{err}");
    assert_eq!(logins.load(Ordering::SeqCst), 0);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn api_key_goes_in_the_default_header_or_the_configured_one() {
    let logins = Arc::new(AtomicUsize::new(0));
    let server = TestServer::start(service(1, logins.clone()));
    let client = server.client(Credentials::api_key("key"));
    client
        .create_section("p", "l", None, &section())
        .await
        .unwrap();
    assert_eq!(
        server.requests()[0].auth,
        AuthSeen::ApiKey {
            header: "service-ao-api-key".into(),
            value: "key".into()
        }
    );
    let wrong = server.client(Credentials::api_key("nope"));
    let err = wrong.get_user("u").await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("EVALCTL_API_KEY") && text.contains("--api-key-header"),
        "{text}"
    );

    let custom = TestServer::start_with_key_header("X-Org-Key", service(1, logins));
    let mut config = custom.config(Credentials::api_key("key"));
    config.api_key_header = "X-Org-Key".into();
    let client = Client::new(config).unwrap();
    assert!(client.get_user("u1").await.unwrap().is_some());
    assert_eq!(
        custom.requests()[0].auth,
        AuthSeen::ApiKey {
            header: "x-org-key".into(),
            value: "key".into()
        }
    );
}

#[tokio::test]
async fn a_403_says_the_role_lacks_permission() {
    let server = TestServer::start(|_| Reply::detail(403, "read_only users cannot write"));
    let client = server.client(Credentials::api_key("key"));
    let err = client
        .update_log_stream_metric_settings("p", "l", &MetricSettingsRequest::default())
        .await
        .unwrap_err();
    assert!(matches!(err, ApiError::Forbidden { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("role lacks permission"), "{text}");
    assert!(text.contains("read_only users cannot write"), "{text}");
    assert_eq!(server.requests().len(), 1, "a 403 is not retried");
}

#[test]
fn plain_http_to_a_remote_host_is_refused() {
    let config =
        evalctl::client::ClientConfig::new("http://api.example.com", Credentials::api_key("key"));
    let err = Client::new(config.clone()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("--allow-insecure-http") && text.contains("api.example.com"),
        "{text}"
    );
    let mut allowed = config;
    allowed.allow_insecure_http = true;
    assert!(Client::new(allowed).is_ok());
}
