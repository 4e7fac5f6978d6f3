//! The sandbox as a process: persistence across restarts with a state
//! file, fault injection (deterministic under a seed, changeable at
//! runtime), dropped connections as a client sees them, the request log.

use crate::sandbox_support;

use std::time::Duration;

use evalctl::sandbox::{Fault, Faults, Sandbox};
use sandbox_support::*;
use serde_json::json;

#[tokio::test]
async fn acknowledged_changes_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let section_id;
    let settings;
    {
        let cx = Ctx::with(Sandbox::builder().state_file(&state));
        let r = cx
            .post(
                &format!("{}/trends/sections", production()),
                json!({"name": "Persisted"}),
            )
            .await;
        assert_eq!(r.status, 200);
        section_id = r.body["id"].as_str().unwrap().to_owned();
        let r = cx
            .patch(
                &format!("{}/metric_settings", production()),
                json!({"segment_filters": [{"sample_rate": 0.75}]}),
            )
            .await;
        assert_eq!(r.status, 200);
        settings = r.body;
        let r = cx
            .put(
                "/v2/integrations/mistral",
                json!({"token": "persist-me-not"}),
            )
            .await;
        assert_eq!(r.status, 200);
        cx.sb
            .with_state(|s| s.projects[1].description = Some("changed out of band".into()))
            .unwrap();
        cx.sb.shutdown().unwrap();
    }
    let bytes = state_bytes(&state);
    for secret in ["persist-me-not", "demo-password", "demo-api-key"] {
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "the state file holds {secret}"
        );
    }
    let cx = Ctx::with(Sandbox::builder().state_file(&state));
    let dash = cx.get(&format!("{}/trends", production())).await;
    assert!(
        dash.body["sections"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["id"] == section_id.as_str())
    );
    assert_eq!(
        cx.get(&format!("{}/metric_settings", production()))
            .await
            .body,
        settings
    );
    assert_eq!(cx.get("/v2/integrations/mistral").await.status, 200);
    assert_eq!(
        cx.sb
            .read_state(|s| s.projects[1].description.clone())
            .as_deref(),
        Some("changed out of band")
    );
    // Credentials still work after the restart (sealed fingerprints).
    assert_eq!(cx.get("/v2/current_user").await.status, 200);
    cx.login("demo@example.com", "demo-password").await;
}

#[tokio::test]
async fn bearer_tokens_are_lost_on_restart_with_state() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("s.json");
    let token = {
        let cx = Ctx::with(Sandbox::builder().state_file(&state));
        let t = cx.login("demo@example.com", "demo-password").await;
        cx.sb.shutdown().unwrap();
        t
    };
    let cx = Ctx::with(Sandbox::builder().state_file(&state));
    let r = cx
        .call("GET", "/v2/current_user", &Auth::Bearer(token), None)
        .await;
    assert_eq!(r.status, 401);
}

#[tokio::test]
async fn failed_writes_are_not_persisted() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("s.json");
    let cx = Ctx::with(Sandbox::builder().state_file(&state));
    let before = state_bytes(&state);
    let r = cx
        .patch(
            &format!("{}/metric_settings", production()),
            json!({"segment_filters": [{"sample_rate": 9}]}),
        )
        .await;
    assert_eq!(r.status, 422);
    assert_eq!(state_bytes(&state), before);
}

async fn statuses(cx: &Ctx, n: usize) -> Vec<Option<u16>> {
    let mut out = Vec::new();
    for _ in 0..n {
        let r = cx
            .http
            .get(cx.url("/v2/current_user"))
            .header("Service-AO-API-Key", KEY)
            .send()
            .await;
        out.push(r.ok().map(|r| r.status().as_u16()));
    }
    out
}

#[tokio::test]
async fn faults_are_deterministic_under_a_seed() {
    let faults = Faults {
        fail_rate: 0.3,
        throttle_rate: 0.1,
        retry_after_secs: 2,
        seed: 1234,
        ..Faults::default()
    };
    let a = Ctx::with(Sandbox::builder().faults(faults.clone()));
    let b = Ctx::with(Sandbox::builder().faults(faults.clone()));
    let first = statuses(&a, 40).await;
    let second = statuses(&b, 40).await;
    assert_eq!(first, second);
    assert!(
        first.iter().any(|s| matches!(s, Some(502..=504))),
        "{first:?}"
    );
    assert!(first.contains(&Some(429)), "{first:?}");
    assert!(first.contains(&Some(200)), "{first:?}");
    // The log says which fault each request got, and 429s carry Retry-After.
    let log = a.sb.requests();
    assert_eq!(log.len(), 40);
    for (rec, status) in log.iter().zip(&first) {
        assert_eq!(rec.status, *status);
        match rec.fault {
            Some(Fault::FailBefore(code)) => assert_eq!(Some(code), *status),
            Some(Fault::Throttle) => assert_eq!(*status, Some(429)),
            None => assert_eq!(*status, Some(200)),
            other => panic!("unexpected {other:?}"),
        }
    }
    a.sb.set_faults(Faults {
        throttle_rate: 1.0,
        retry_after_secs: 2,
        ..Faults::default()
    });
    let r = a
        .http
        .get(a.url("/v2/current_user"))
        .header("Service-AO-API-Key", KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["retry-after"], "2");
    // Faults can be cleared at runtime.
    a.sb.set_faults(Faults::none());
    assert_eq!(statuses(&a, 5).await, vec![Some(200); 5]);
}

#[tokio::test]
async fn fail_after_processing_applies_the_change() {
    let cx = Ctx::with(Sandbox::builder().faults(Faults {
        fail_after_rate: 1.0,
        ..Faults::default()
    }));
    let before = cx.sb.read_state(|s| s.dashboards[0].sections.len());
    let r = cx
        .post(
            &format!("{}/trends/sections", production()),
            json!({"name": "ambiguous"}),
        )
        .await;
    assert!(matches!(r.status, 502..=504), "{}", r.status);
    assert_eq!(
        cx.sb.read_state(|s| s.dashboards[0].sections.len()),
        before + 1,
        "the create happened"
    );
    let fail_before = Faults {
        fail_rate: 1.0,
        ..Faults::default()
    };
    cx.sb.set_faults(fail_before);
    let r = cx
        .post(
            &format!("{}/trends/sections", production()),
            json!({"name": "never"}),
        )
        .await;
    assert!(matches!(r.status, 502..=504));
    assert_eq!(
        cx.sb.read_state(|s| s.dashboards[0].sections.len()),
        before + 1,
        "not processed"
    );
}

#[tokio::test]
async fn dropped_connections_are_errors_to_a_client() {
    let cx = Ctx::with(Sandbox::builder().faults(Faults {
        drop_rate: 1.0,
        ..Faults::default()
    }));
    let r = cx
        .http
        .get(cx.url("/v2/current_user"))
        .header("Service-AO-API-Key", KEY)
        .send()
        .await;
    let err = r.expect_err("a dropped connection is an error");
    assert!(!err.is_timeout(), "{err}");
    let log = cx.sb.requests();
    assert_eq!(log[0].fault, Some(Fault::Drop));
    assert_eq!(log[0].status, None);

    // Dropped after processing: the change happened, the client got an error.
    cx.sb.set_faults(Faults {
        drop_after_rate: 1.0,
        ..Faults::default()
    });
    let before = cx.sb.read_state(|s| s.dashboards[0].sections.len());
    let r = cx
        .http
        .post(cx.url(&format!("{}/trends/sections", production())))
        .header("Service-AO-API-Key", KEY)
        .json(&json!({"name": "lost answer"}))
        .send()
        .await;
    assert!(r.is_err());
    assert_eq!(
        cx.sb.read_state(|s| s.dashboards[0].sections.len()),
        before + 1
    );
}

#[tokio::test]
async fn latency_spikes_exceed_client_timeouts() {
    let cx = Ctx::with(Sandbox::builder().faults(Faults {
        spike_rate: 1.0,
        spike: Duration::from_secs(5),
        ..Faults::default()
    }));
    let client = reqwest::Client::builder()
        .timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let r = client
        .get(cx.url("/v2/current_user"))
        .header("Service-AO-API-Key", KEY)
        .send()
        .await;
    assert!(r.unwrap_err().is_timeout());
    // The log records the abandoned request once the server notices.
    cx.sb.set_faults(Faults {
        latency: Duration::from_millis(30),
        ..Faults::default()
    });
    let started = std::time::Instant::now();
    assert_eq!(cx.get("/v2/current_user").await.status, 200);
    assert!(started.elapsed() >= Duration::from_millis(30));
}

#[tokio::test]
async fn the_rate_limit_answers_429_beyond_the_budget() {
    let cx = Ctx::with(Sandbox::builder().faults(Faults {
        rate_limit: Some(1.0),
        ..Faults::default()
    }));
    // A budget of one request per second: twenty quick requests cannot all
    // pass unless they take longer than ten seconds.
    let started = std::time::Instant::now();
    let got = statuses(&cx, 20).await;
    let limited = got.iter().filter(|s| **s == Some(429)).count();
    if started.elapsed() < Duration::from_secs(10) {
        assert!(limited >= 10, "{got:?}");
    }
    assert!(limited >= 1, "{got:?}");
    let log = cx.sb.requests();
    assert!(log.iter().any(|r| r.fault == Some(Fault::RateLimit)));
    cx.sb.clear_log();
    assert!(cx.sb.requests().is_empty());
}

#[tokio::test]
async fn faults_can_target_paths() {
    let cx = Ctx::with(Sandbox::builder().faults(Faults {
        fail_rate: 1.0,
        path_contains: Some("/trends".into()),
        ..Faults::default()
    }));
    assert_eq!(cx.get("/v2/current_user").await.status, 200);
    assert!(matches!(
        cx.get(&format!("{}/trends", production())).await.status,
        502..=504
    ));
}

#[tokio::test]
async fn no_secret_reaches_debug_output_or_the_request_log() {
    let cx = Ctx::new();
    let token = cx.login("demo@example.com", "demo-password").await;
    let r = cx
        .put(
            "/v2/integrations/openai",
            json!({"token": "sk-never-shown"}),
        )
        .await;
    assert_eq!(r.status, 200);
    let debug = format!("{:?} {:?}", cx.sb, cx.sb.requests());
    for secret in ["demo-password", KEY, "sk-never-shown", token.as_str()] {
        assert!(!debug.contains(secret), "{secret} leaked");
    }
}
