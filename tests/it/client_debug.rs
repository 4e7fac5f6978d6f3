//! Debuggable (issue 11, item 9): at INFO (`-v`) one line per request with
//! method, path as sent (the base URL's prefix included), status and time;
//! retries only from DEBUG (`-vv`); and a 404 from a listing that exists on
//! every deployment blames the base URL and shows the full URL, prefix
//! included, instead of the manifests.

#![allow(clippy::unwrap_used)] // test helpers: a failing unwrap is a failing test, with its location

use crate::{client_support, log_support};

use client_support::{Reply, TestServer};
use evalctl::client::{ApiError, Client, ClientConfig, Credentials};
use evalctl::sandbox::Sandbox;
use evalctl::sandbox::fixture::DEMO_API_KEY;

/// Runs two reads (the first answered 503 once) against a server under a
/// base URL with a path prefix, logging at `level`; returns the log.
async fn logged(level: tracing::Level) -> String {
    let logs = log_support::capture(level);
    let server = TestServer::start(|seen| match seen.nth {
        0 if seen.path.ends_with("/users/a") => Reply::status(503),
        _ => Reply::status(404),
    });
    let config = client_support::fast(ClientConfig::new(
        format!("{}/prefix", server.base_url),
        Credentials::api_key("k"),
    ));
    let client = Client::new(config).unwrap();
    assert_eq!(client.get_user("a").await.unwrap(), None);
    assert_eq!(client.get_user("b").await.unwrap(), None);
    logs.text()
}

#[tokio::test]
async fn info_logs_each_request_and_debug_adds_the_retries() {
    let info = logged(tracing::Level::INFO).await;
    let lines: Vec<&str> = info.lines().filter(|l| l.contains("request")).collect();
    assert_eq!(lines.len(), 3, "{info}");
    assert!(
        lines[0].contains("method=GET")
            && lines[0].contains("path=/prefix/v2/users/a")
            && lines[0].contains("status=503")
            && lines[0].contains("attempt=1")
            && lines[0].contains("ms="),
        "{info}"
    );
    assert!(
        lines[1].contains("path=/prefix/v2/users/a") && lines[1].contains("status=404"),
        "{info}"
    );
    assert!(lines[2].contains("path=/prefix/v2/users/b"), "{info}");
    assert!(!info.contains("retrying"), "retries are for -vv: {info}");
    let debug = logged(tracing::Level::DEBUG).await;
    assert!(
        debug.contains("retrying") && debug.contains("503 Service Unavailable"),
        "{debug}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_404_from_the_project_listing_blames_the_base_url_and_shows_it_whole() {
    let sb = Sandbox::builder().start().unwrap();
    let base = format!("{}/wrong/prefix", sb.base_url());
    let client = Client::new(ClientConfig::new(
        base.clone(),
        Credentials::api_key(DEMO_API_KEY),
    ))
    .unwrap();
    let err = client.list_projects(Default::default()).await.unwrap_err();
    assert!(matches!(err, ApiError::WrongBaseUrl { .. }), "{err:?}");
    assert_eq!(err.status(), Some(404));
    let text = err.to_string();
    assert!(
        text.contains(&format!("{base}/v2/projects/paginated")),
        "the full URL, prefix included: {text}"
    );
    assert!(text.contains("base URL is the suspect"), "{text}");
    assert!(text.contains("EVALCTL_BASE_URL"), "{text}");
    assert!(!text.contains("manifests"), "{text}");
    assert!(!text.contains("starting_token"), "no query: {text}");
    let err = client.current_user().await.unwrap_err();
    assert!(matches!(err, ApiError::WrongBaseUrl { .. }), "{err:?}");
    // At the right base URL, a 404 of an object's parent still points at
    // the manifests' ids and names.
    let right = Client::new(ClientConfig::new(
        sb.base_url(),
        Credentials::api_key(DEMO_API_KEY),
    ))
    .unwrap();
    let err = right
        .search_log_streams_all("00000000-0000-4000-8000-000000000000", Default::default())
        .await
        .unwrap_err();
    assert!(matches!(err, ApiError::NotFound { .. }), "{err:?}");
}
