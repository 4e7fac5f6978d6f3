//! Retries, the shared throttle and the create rules, against a purpose-built
//! server on 127.0.0.1:0. Assertions are on counts and ordering; the only time
//! checks are lower bounds that follow from sleeps (they cannot flake).

use crate::client_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use client_support::{
    Reply, TestServer, closing_server, fast, refused_url, section_json, settings_json,
};
use evalctl::api::{MetricSettingsRequest, SectionCreateRequest, Visibility};
use evalctl::client::{ApiError, Client, ClientConfig, Credentials};

const SETTINGS: &str = "/v2/projects/p/log_streams/l/metric_settings";
const SECTIONS: &str = "/v2/projects/p/log_streams/l/trends/sections";

fn key() -> Credentials {
    Credentials::api_key("k")
}

fn section() -> SectionCreateRequest {
    SectionCreateRequest {
        name: "Latency".into(),
        description: None,
        color: Some("#00ff00".into()),
    }
}

#[tokio::test]
async fn a_429_is_retried_after_its_retry_after() {
    let server = TestServer::start(|seen| match seen.nth {
        0 => Reply::detail(429, "slow down").header("retry-after", "1"),
        _ => Reply::ok(settings_json()),
    });
    let client = server.client(key());
    let start = Instant::now();
    let settings = client
        .update_log_stream_metric_settings("p", "l", &MetricSettingsRequest::default())
        .await
        .unwrap();
    assert!(settings.scorers.is_empty());
    let seen = server.requests_to(SETTINGS);
    assert_eq!(seen.len(), 2);
    assert!(
        seen[1].at - seen[0].at >= Duration::from_secs(1),
        "Retry-After honoured"
    );
    assert!(start.elapsed() >= Duration::from_secs(1));
    let stats = client.stats();
    let c = stats.operations["PATCH update_log_stream_metric_settings"];
    assert_eq!(
        (c.requests, c.retries, c.rate_limited, c.failures),
        (2, 1, 1, 0)
    );
}

#[tokio::test]
async fn a_503_storm_on_a_read_is_retried_until_the_budget_is_spent() {
    let server = TestServer::start(|seen| match (seen.path.as_str(), seen.nth) {
        // The service answered once: from now on reads retry on time alone.
        ("/v2/users/first", _) => Reply::status(404),
        _ => Reply::detail(503, "overloaded"),
    });
    let mut config = server.config(key());
    config.retry.max_elapsed = Duration::from_millis(1500);
    let client = Client::new(config).unwrap();
    assert_eq!(client.get_user("first").await.unwrap(), None);
    let started = Instant::now();
    let err = client.get_user("u1").await.unwrap_err();
    let attempts = match &err {
        ApiError::Server {
            status, attempts, ..
        } => {
            assert_eq!(*status, 503);
            *attempts
        }
        other => panic!("expected Server, got {other:?}"),
    };
    // Waits of at most 100 ms in a 1.5 s budget: many more attempts than
    // the 4 a write gets.
    assert!(attempts > 4, "{attempts} attempts");
    assert!(started.elapsed() >= Duration::from_millis(500));
    let text = err.to_string();
    assert!(
        text.contains(&format!("after {attempts} attempt(s) over")),
        "{text}"
    );
    assert!(
        text.contains("get_user (GET /v2/users/{user_id})"),
        "{text}"
    );
    assert!(text.contains("overloaded"), "{text}");
    assert_eq!(server.requests_to("/v2/users/u1").len() as u32, attempts);
    let c = client.stats().operations["GET get_user"];
    assert_eq!(c.failures, 1);
}

#[tokio::test]
async fn a_503_storm_on_a_write_gives_up_after_max_retries() {
    let server = TestServer::start(|_| Reply::detail(503, "overloaded"));
    let client = server.client(key());
    let err = client
        .update_log_stream_metric_settings("p", "l", &MetricSettingsRequest::default())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ApiError::Server {
                status: 503,
                attempts: 4,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(server.requests_to(SETTINGS).len(), 4);
}

/// Issue 22 item 9: a 500 leaves a write as unclear as a 502, 503 or 504 does, so an
/// idempotent write is sent again on it within `--max-retries` too (it was final, and
/// a PATCH the service had not applied got fewer sends than under a 502).
#[tokio::test]
async fn a_500_is_retried_for_a_read_and_for_an_idempotent_write() {
    let server = TestServer::start(|seen| match (seen.method.as_str(), seen.nth) {
        ("GET", 0) => Reply::detail(500, "boom"),
        ("GET", _) => Reply::ok(settings_json()),
        ("PATCH", 0 | 1) => Reply::detail(500, "boom"),
        _ => Reply::ok(settings_json()),
    });
    let client = server.client(key());
    client
        .get_log_stream_metric_settings("p", "l")
        .await
        .unwrap();
    client
        .update_log_stream_metric_settings("p", "l", &MetricSettingsRequest::default())
        .await
        .expect("the third PATCH is answered 200");
    let methods: Vec<String> = server
        .requests_to(SETTINGS)
        .iter()
        .map(|s| s.method.clone())
        .collect();
    assert_eq!(methods, ["GET", "GET", "PATCH", "PATCH", "PATCH"]);

    // Always 500: as many attempts as a 502 gets, then the server error.
    let server = TestServer::start(|seen| match seen.method.as_str() {
        "GET" => Reply::ok(settings_json()),
        _ => Reply::detail(500, "boom"),
    });
    let err = server
        .client(key())
        .update_log_stream_metric_settings("p", "l", &MetricSettingsRequest::default())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ApiError::Server {
                status: 500,
                attempts: 4,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(server.requests_to(SETTINGS).len(), 4);
}

#[tokio::test]
async fn a_429_storm_is_waited_out_even_by_a_write() {
    // Six 429s in a row: more than the 4 attempts a write gets for other
    // failures, yet the write goes through.
    let server = TestServer::start(|seen| {
        if seen.nth < 6 {
            Reply::status(429).header("retry-after", "0")
        } else {
            Reply::ok(settings_json())
        }
    });
    let client = server.client(key());
    client
        .update_log_stream_metric_settings("p", "l", &MetricSettingsRequest::default())
        .await
        .unwrap();
    assert_eq!(server.requests_to(SETTINGS).len(), 7);
    let c = client.stats().operations["PATCH update_log_stream_metric_settings"];
    assert_eq!((c.rate_limited, c.failures), (6, 0));
}

#[tokio::test]
async fn once_the_service_answered_reads_retry_timeouts_within_the_budget() {
    let server = TestServer::start(|seen| {
        if seen.path == "/v2/users/first" {
            Reply::status(404)
        } else {
            Reply::ok(settings_json()).after(Duration::from_secs(3))
        }
    });
    let mut config = server.config(key());
    config.request_timeout = Duration::from_millis(200);
    config.retry.max_attempts = 2;
    config.retry.max_elapsed = Duration::from_millis(1500);
    let client = Client::new(config).unwrap();
    assert_eq!(client.get_user("first").await.unwrap(), None);
    let err = client
        .get_log_stream_metric_settings("p", "l")
        .await
        .unwrap_err();
    match err {
        ApiError::Timeout { attempts, .. } => assert!(attempts > 2, "{attempts}"),
        other => panic!("expected Timeout, got {other:?}"),
    }
}

#[tokio::test]
async fn the_total_time_budget_bounds_retries() {
    let server = TestServer::start(|_| Reply::status(503).header("retry-after", "5"));
    let mut config = server.config(key());
    config.retry.max_attempts = 10;
    config.retry.max_elapsed = Duration::from_secs(2);
    let client = Client::new(config).unwrap();
    let err = client.get_user("u").await.unwrap_err();
    // A 5 s wait does not fit in a 2 s budget: one attempt, then the error.
    assert!(
        matches!(err, ApiError::Server { attempts: 1, .. }),
        "{err:?}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_create_that_gets_a_502_is_not_retried_and_is_ambiguous() {
    let server = TestServer::start(|_| Reply::status(502));
    let client = server.client(key());
    let err = client
        .create_section("p", "l", None, &section())
        .await
        .unwrap_err();
    assert!(matches!(err, ApiError::Ambiguous { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("create_trends_section"), "{text}");
    assert!(text.contains("Re-read"), "{text}");
    assert_eq!(server.requests_to(SECTIONS).len(), 1, "never resent");
    assert_eq!(
        client.stats().operations["POST create_trends_section"].failures,
        1
    );
}

#[tokio::test]
async fn a_create_that_gets_a_500_is_ambiguous_too() {
    let server = TestServer::start(|_| Reply::status(500));
    let client = server.client(key());
    let err = client
        .create_section("p", "l", None, &section())
        .await
        .unwrap_err();
    assert!(matches!(err, ApiError::Ambiguous { .. }), "{err:?}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_create_that_gets_a_429_is_retried() {
    let server = TestServer::start(|seen| match seen.nth {
        0 => Reply::status(429).header("retry-after", "0"),
        _ => Reply::ok(section_json("s1", "Latency")),
    });
    let client = server.client(key());
    let s = client
        .create_section("p", "l", Some("d1"), &section())
        .await
        .unwrap();
    assert_eq!(s.id, "s1");
    let seen = server.requests_to(SECTIONS);
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].query.as_deref(), Some("trends_dashboard_id=d1"));
}

#[tokio::test]
async fn a_dropped_connection_makes_a_create_ambiguous_and_a_read_retry() {
    let (base, connections) = closing_server();
    let client = Client::new(fast(ClientConfig::new(&base, key()))).unwrap();
    let err = client
        .create_section("p", "l", None, &section())
        .await
        .unwrap_err();
    assert!(matches!(err, ApiError::Ambiguous { .. }), "{err:?}");
    assert_eq!(connections.load(Ordering::SeqCst), 1);

    let err = client.get_user("u").await.unwrap_err();
    assert!(
        matches!(err, ApiError::Transport { attempts: 4, .. }),
        "{err:?}"
    );
    assert_eq!(connections.load(Ordering::SeqCst), 5);
}

#[tokio::test]
async fn a_refused_connection_is_retried_even_for_a_create() {
    let client = Client::new(fast(ClientConfig::new(refused_url(), key()))).unwrap();
    let err = client
        .create_section("p", "l", None, &section())
        .await
        .unwrap_err();
    match &err {
        ApiError::Transport { attempts, .. } => assert_eq!(*attempts, 4),
        other => panic!("expected Transport, got {other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.contains("the connection to the service failed after 4 attempt(s)"),
        "{text}"
    );
    assert!(text.contains("EVALCTL_BASE_URL"), "{text}");
    assert!(
        text.to_lowercase().contains("refused"),
        "the OS cause is shown: {text}"
    );
    assert!(std::error::Error::source(&err).is_some(), "cause kept");
    let c = client.stats().operations["POST create_trends_section"];
    assert_eq!((c.requests, c.retries, c.failures), (4, 3, 1));
}

#[tokio::test]
async fn timeouts_are_retried_for_reads_and_ambiguous_for_creates() {
    let server = TestServer::start(|_| Reply::ok(settings_json()).after(Duration::from_secs(3)));
    let mut config = server.config(key());
    config.request_timeout = Duration::from_millis(200);
    config.retry.max_attempts = 2;
    let client = Client::new(config).unwrap();
    let err = client
        .get_log_stream_metric_settings("p", "l")
        .await
        .unwrap_err();
    assert!(
        matches!(err, ApiError::Timeout { attempts: 2, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("--timeout"), "{err}");
    let err = client
        .create_section("p", "l", None, &section())
        .await
        .unwrap_err();
    match err {
        ApiError::Ambiguous { cause, .. } => assert!(cause.contains("timed out"), "{cause}"),
        other => panic!("expected Ambiguous, got {other:?}"),
    }
    assert_eq!(server.requests_to(SECTIONS).len(), 1);
}

#[tokio::test]
async fn favorite_is_idempotent_and_retried() {
    let server = TestServer::start(|seen| match seen.nth {
        0 => Reply::status(503),
        _ => Reply::status(204),
    });
    let client = server.client(key());
    client
        .favorite_dashboard("p", "l", "d", &Visibility::Project)
        .await
        .unwrap();
    let seen = server.requests();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].query.as_deref(), Some("visibility=project"));
}

#[tokio::test]
async fn a_request_waiting_out_a_429_keeps_its_slot() {
    // With one slot, the request to /v2/users/a gets a 429 asking for 1 s;
    // a request to another path, started after that answer, must wait for
    // `a` to finish: 429s cannot cycle through the queue.
    let server = TestServer::start(|seen| {
        if seen.path == "/v2/users/a" && seen.nth == 0 {
            Reply::status(429).header("retry-after", "1")
        } else {
            Reply::ok(serde_json::json!({
                "id": "x", "email": "x@example.com", "organization_id": "o",
                "organization_name": "O", "created_at": "2024-01-01T00:00:00Z",
                "updated_at": "2024-01-01T00:00:00Z"
            }))
        }
    });
    let mut config = server.config(key());
    config.concurrency = 1;
    let client = Client::new(config).unwrap();
    let a = tokio::spawn({
        let client = client.clone();
        async move { client.get_user("a").await }
    });
    // On this single-threaded runtime, the 429 is counted and the wait
    // begun in the same poll of task `a`.
    while client.stats().total.rate_limited == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let b = client.get_user("b").await.unwrap();
    assert!(b.is_some());
    assert!(a.await.unwrap().unwrap().is_some());
    let seen = server.requests();
    let first_429 = seen.iter().find(|s| s.path == "/v2/users/a").unwrap().at;
    let b_at = seen.iter().find(|s| s.path == "/v2/users/b").unwrap().at;
    assert!(
        b_at - first_429 >= Duration::from_secs(1),
        "b waited for a's slot"
    );
    let order: Vec<&str> = seen.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(order, ["/v2/users/a", "/v2/users/a", "/v2/users/b"]);
}

#[tokio::test]
async fn in_flight_requests_are_capped() {
    let server = TestServer::start(|_| Reply::status(404).after(Duration::from_millis(30)));
    let mut config = server.config(key());
    config.concurrency = 3;
    let client = Client::new(config).unwrap();
    let mut tasks = Vec::new();
    for i in 0..12 {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            client.get_user(&format!("u{i}")).await
        }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap().unwrap(), None);
    }
    assert!(
        server.peak_in_flight() <= 3,
        "peak {}",
        server.peak_in_flight()
    );
    assert_eq!(server.requests().len(), 12);
}

/// Sends `n` reads at once through `client` (which caps them).
async fn burst(client: &Client, n: usize) {
    let mut tasks = Vec::new();
    for i in 0..n {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            client.get_user(&format!("u{i}")).await
        }));
    }
    for t in tasks {
        let read = t.await.expect("the task ran");
        assert_eq!(read.expect("the read succeeded"), None);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adaptive_concurrency_starts_low_halves_on_429_and_recovers() {
    // The exact arithmetic is unit-tested (client::throttle); here, the
    // client's real requests drive it. Answers take 100 ms, so that a busy
    // machine's scheduling delays do not look like a slower service.
    let throttle_next = Arc::new(AtomicUsize::new(0));
    let flag = throttle_next.clone();
    let server = TestServer::start(move |_| {
        if flag.swap(0, Ordering::SeqCst) == 1 {
            Reply::status(429).header("retry-after", "0")
        } else {
            Reply::status(404).after(Duration::from_millis(100))
        }
    });
    let mut config = server.config(key());
    config.concurrency = 32;
    let client = Client::new(config).unwrap();
    assert_eq!(client.in_flight_limit(), 8, "starts at 8");
    burst(&client, 200).await;
    let grown = client.in_flight_limit();
    assert!(grown > 16, "slow start: {grown}");
    assert!(server.peak_in_flight() <= 32, "{}", server.peak_in_flight());
    throttle_next.store(1, Ordering::SeqCst);
    assert_eq!(client.get_user("u").await.unwrap(), None, "retried");
    let halved = client.in_flight_limit();
    assert_eq!(halved, (grown / 2).max(8), "halved by the 429");
    assert_eq!(client.limit_decreases().0, 1);
    burst(&client, 200).await;
    assert!(
        client.in_flight_limit() > halved,
        "grows back: {halved} -> {}",
        client.in_flight_limit()
    );
    assert!(server.peak_in_flight() <= 32, "{}", server.peak_in_flight());
}
