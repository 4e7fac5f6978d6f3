//! Reads under the sandbox's injected faults (issue 10, item 2): at 30% of
//! 5xx, of dropped connections, of 429s with `Retry-After`, and all three at
//! once, every read of a population succeeds and returns what it returns
//! without faults; the faults hit, and reads were retried more often than
//! `--max-retries` allows a write. A write keeps its rules: a 5xx after an
//! applied create is ambiguous, never resent.

#![allow(clippy::unwrap_used)] // test helpers: a failing unwrap is a failing test, with its location

use std::collections::BTreeMap;
use std::time::Duration;

use evalctl::api::{MetricSettingsResponse, RunSearchRequest, SectionCreateRequest};
use evalctl::client::{ApiError, Client, ClientConfig, Credentials, RetryPolicy};
use evalctl::sandbox::fixture::{DEMO_API_KEY, Scale};
use evalctl::sandbox::{Fault, Faults, Fixture, Sandbox, SandboxHandle};
use futures::future::try_join_all;

fn sandbox() -> SandboxHandle {
    Sandbox::builder()
        .fixture(Fixture::scaled_with(Scale {
            projects: 2,
            log_streams_per_project: 12,
            experiments_per_project: 0,
            ..Scale::default()
        }))
        .start()
        .unwrap()
}

/// A client with fast backoff; writes get 2 attempts, reads the budget.
fn client(sb: &SandboxHandle) -> Client {
    let mut config = ClientConfig::new(sb.base_url(), Credentials::api_key(DEMO_API_KEY));
    config.retry = RetryPolicy {
        max_attempts: 2,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(50),
        max_elapsed: Duration::from_secs(60),
    };
    config.request_timeout = Duration::from_secs(10);
    Client::new(config).unwrap()
}

type Population = BTreeMap<(String, String), MetricSettingsResponse>;

/// Every log stream's metric settings, found through the project listing
/// and the log stream searches.
async fn read_all(client: &Client) -> Result<Population, ApiError> {
    let projects = client.list_projects(Default::default()).await?;
    let streams = try_join_all(projects.iter().map(|p| async move {
        let found = client
            .search_log_streams_all(&p.id, RunSearchRequest::default())
            .await?;
        Ok::<_, ApiError>(found.into_iter().map(|l| (p.id.clone(), l.id)))
    }))
    .await?;
    let keys: Vec<(String, String)> = streams.into_iter().flatten().collect();
    let settings = try_join_all(
        keys.iter()
            .map(|(p, l)| async move { client.get_log_stream_metric_settings(p, l).await }),
    )
    .await?;
    Ok(keys
        .into_iter()
        .zip(settings.into_iter().map(|s| s.unwrap()))
        .collect())
}

/// Reads everything under `faults` and checks it against the fault-free
/// reading; returns how many requests the faults hit.
async fn reads_survive(faults: Faults, hit: impl Fn(&Fault) -> bool) -> usize {
    let sb = sandbox();
    let reference = read_all(&client(&sb)).await.unwrap();
    assert_eq!(reference.len(), 24);
    sb.clear_log();
    sb.set_faults(faults);
    let client = client(&sb);
    let read = read_all(&client).await.unwrap();
    assert_eq!(read, reference, "a read under faults differs");
    let log = sb.requests();
    let hits = log
        .iter()
        .filter(|r| r.fault.as_ref().is_some_and(&hit))
        .count();
    assert!(hits > 0, "the faults never hit: the test proves nothing");
    assert_eq!(client.stats().total.failures, 0);
    hits
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_survive_thirty_percent_of_5xx() {
    reads_survive(
        Faults {
            fail_rate: 0.3,
            seed: 1001,
            ..Faults::none()
        },
        |f| matches!(f, Fault::FailBefore(_)),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_survive_thirty_percent_of_dropped_connections() {
    reads_survive(
        Faults {
            drop_rate: 0.15,
            drop_after_rate: 0.15,
            seed: 1002,
            ..Faults::none()
        },
        |f| matches!(f, Fault::Drop | Fault::DropAfter),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_survive_thirty_percent_of_429s() {
    reads_survive(
        Faults {
            throttle_rate: 0.3,
            retry_after_secs: 1,
            seed: 1003,
            ..Faults::none()
        },
        |f| matches!(f, Fault::Throttle),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_survive_every_fault_at_once_beyond_a_writes_attempts() {
    let sb = sandbox();
    let reference = read_all(&client(&sb)).await.unwrap();
    sb.set_faults(Faults {
        fail_rate: 0.2,
        drop_rate: 0.2,
        throttle_rate: 0.2,
        retry_after_secs: 1,
        seed: 1004,
        ..Faults::none()
    });
    let client = client(&sb);
    assert_eq!(read_all(&client).await.unwrap(), reference);
    // 60% of the requests fail: of the 24 settings reads, some took more
    // than the 2 attempts a write gets (the chance that none did is 2e-5).
    let mut sent: BTreeMap<String, usize> = BTreeMap::new();
    for r in sb.requests() {
        if r.path.ends_with("/metric_settings") {
            *sent.entry(r.path).or_default() += 1;
        }
    }
    assert_eq!(sent.len(), 24);
    let most = sent.values().max().copied().unwrap_or(0);
    assert!(most > 2, "at most {most} attempts for one read");
    assert_eq!(client.stats().total.failures, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_applied_then_failed_is_still_ambiguous() {
    let sb = sandbox();
    let client = client(&sb);
    let (pid, lid) = sb.read_state(|s| {
        let ls = &s.log_streams[0];
        (ls.project_id.clone(), ls.id.clone())
    });
    sb.set_faults(Faults {
        fail_after_rate: 1.0,
        path_contains: Some("/trends/sections".into()),
        ..Faults::none()
    });
    let err = client
        .create_section(
            &pid,
            &lid,
            None,
            &SectionCreateRequest {
                name: "Once".into(),
                description: None,
                color: None,
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ApiError::Ambiguous { .. }), "{err:?}");
    let sent = sb
        .requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/trends/sections"))
        .count();
    assert_eq!(sent, 1, "never resent");
}
