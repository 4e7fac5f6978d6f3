//! A deployment that refuses HTTP Basic on more operations than the spec
//! lists (issue 10, item 7): with a user name and password, a 401 to a Basic
//! request is retried with the bearer token from `/login`, and the operation
//! goes with the token for the rest of the run, while the others keep Basic.
//! Against a purpose-built server (which headers went where) and against the
//! sandbox started with `--refuse-basic-on-trends`.

use crate::{client_support, log_support};

use std::time::Duration;

use client_support::{AuthSeen, Reply, TestServer};
use evalctl::client::{ApiError, Client, ClientConfig, Credentials, RetryPolicy};
use evalctl::sandbox::Sandbox;
use evalctl::sandbox::fingerprint::stable_id;
use evalctl::sandbox::fixture::{DEMO_EMAIL, DEMO_PASSWORD};

fn user_json() -> serde_json::Value {
    serde_json::json!({
        "id": "u1", "email": "demo@example.com", "organization_id": "o",
        "organization_name": "O", "created_at": "2024-01-01T00:00:00Z",
        "updated_at": "2024-01-01T00:00:00Z", "role": "admin"
    })
}

fn basic() -> AuthSeen {
    AuthSeen::Basic {
        user: "demo@example.com".into(),
        password: "pw".into(),
    }
}

#[tokio::test]
async fn a_basic_refusal_falls_back_to_the_login_token_and_is_remembered() {
    // GET /v2/users/{id} refuses Basic here (the spec says it accepts it);
    // the caller's own record accepts it.
    let server = TestServer::start(|seen| match (seen.path.as_str(), &seen.auth) {
        ("/login", _) => Reply::ok(serde_json::json!({
            "access_token": "t1", "token_type": "bearer"
        })),
        (_, AuthSeen::Bearer(t)) if t == "t1" => Reply::ok(user_json()),
        ("/v2/current_user", AuthSeen::Basic { .. }) => Reply::ok(user_json()),
        _ => Reply::detail(401, "Not authenticated"),
    });
    let client = server.client(Credentials::password("demo@example.com", "pw"));
    for _ in 0..3 {
        assert!(client.get_user("u1").await.unwrap().is_some());
        client.current_user().await.unwrap();
    }
    let seen: Vec<(String, AuthSeen)> = server
        .requests()
        .into_iter()
        .map(|s| (s.path, s.auth))
        .collect();
    let bearer = AuthSeen::Bearer("t1".into());
    let user = "/v2/users/u1".to_owned();
    let me = "/v2/current_user".to_owned();
    assert_eq!(
        seen,
        [
            (user.clone(), basic()),
            ("/login".to_owned(), AuthSeen::None),
            (user.clone(), bearer.clone()),
            (me.clone(), basic()),
            (user.clone(), bearer.clone()),
            (me.clone(), basic()),
            (user, bearer),
            (me, basic()),
        ]
    );
}

#[tokio::test]
async fn wrong_credentials_still_say_which_variables_to_check() {
    let server = TestServer::start(|seen| match seen.path.as_str() {
        "/login" => Reply::detail(400, "Incorrect username or password"),
        _ => Reply::detail(401, "Not authenticated"),
    });
    let client = server.client(Credentials::password("demo@example.com", "wrong"));
    let err = client.get_user("u1").await.unwrap_err();
    assert!(matches!(err, ApiError::Unauthorized { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("EVALCTL_USERNAME") && text.contains("EVALCTL_PASSWORD"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn against_a_sandbox_refusing_basic_on_every_trends_operation() {
    let sb = Sandbox::builder()
        .refuse_basic_on_trends(true)
        .start()
        .unwrap();
    let mut config = ClientConfig::new(
        sb.base_url(),
        Credentials::password(DEMO_EMAIL, DEMO_PASSWORD),
    );
    config.retry = RetryPolicy {
        base_delay: Duration::from_millis(5),
        ..RetryPolicy::default()
    };
    let client = Client::new(config).unwrap();
    let pid = stable_id("project:demo-project");
    let lid = stable_id("log_stream:demo-project:production");
    for _ in 0..2 {
        assert!(
            !client
                .list_projects(Default::default())
                .await
                .unwrap()
                .is_empty()
        );
        let dashboard = client.get_dashboard(&pid, &lid, None).await.unwrap();
        assert!(dashboard.is_some());
        assert!(!client.list_dashboards(&pid, &lid).await.unwrap().is_empty());
        client
            .get_log_stream_metric_settings(&pid, &lid)
            .await
            .unwrap();
    }
    let log = sb.requests();
    let refused: Vec<&str> = log
        .iter()
        .filter(|r| r.status == Some(401))
        .map(|r| r.path.as_str())
        .collect();
    // One refusal per trends operation, each remembered; one login.
    assert_eq!(refused.len(), 2, "{refused:?}");
    assert!(refused.iter().all(|p| p.contains("/trends")), "{refused:?}");
    assert_eq!(log.iter().filter(|r| r.path == "/login").count(), 1);
    // The same deployment without the flag accepts Basic on trends reads.
    let plain = Sandbox::builder().start().unwrap();
    let mut config = ClientConfig::new(
        plain.base_url(),
        Credentials::password(DEMO_EMAIL, DEMO_PASSWORD),
    );
    config.concurrency = 1;
    let client = Client::new(config).unwrap();
    client.get_dashboard(&pid, &lid, None).await.unwrap();
    assert!(plain.requests().iter().all(|r| r.status == Some(200)));
}

#[test]
fn the_sandbox_command_has_the_flag() {
    use clap::Parser;
    let cli = evalctl::cli::Cli::try_parse_from(["evalctl", "sandbox", "--refuse-basic-on-trends"])
        .unwrap();
    match cli.command {
        evalctl::cli::Command::Sandbox(args) => assert!(args.refuse_basic_on_trends),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_fallback_logs_no_secret_at_trace() {
    let logs = log_support::capture(tracing::Level::TRACE);
    let server = TestServer::start(|seen| match (seen.path.as_str(), &seen.auth) {
        ("/login", _) => Reply::ok(serde_json::json!({
            "access_token": "TOK-canary-login-token", "token_type": "bearer"
        })),
        (_, AuthSeen::Bearer(_)) => Reply::ok(user_json()),
        _ => Reply::detail(401, "Not authenticated"),
    });
    let client = server.client(Credentials::password(
        "demo@example.com",
        "PW-canary-password",
    ));
    client.get_user("u1").await.unwrap();
    let logs = logs.text();
    assert!(logs.contains("HTTP Basic refused"), "{logs}");
    for canary in ["TOK-canary-login-token", "PW-canary-password"] {
        assert!(!logs.contains(canary), "{canary} in:\n{logs}");
    }
}
