//! The typed methods against a purpose-built server: what each sends (method,
//! path, query, body) and how answers map: 404 of a GET is `None`, 404 of a
//! DELETE is "already gone", 404 of a write is an error, 422 is shown field by
//! field, pagination walks every page and stops on a cursor that does not
//! advance.

use crate::client_support;

use client_support::{Reply, TestServer, section_json, settings_json};
use evalctl::api::{
    IntegrationCreate, ListScorersRequest, MetricSettingsRequest, ProjectCollectionParams,
    RunSearchRequest, ScorerConfig, ScorerType, Secret, SectionUpdateRequest, SegmentFilter,
    Visibility,
};
use evalctl::client::{ApiError, Credentials, Deleted};
use evalctl::kinds::templates::{AnnotationConstraints, TemplateCreate, TemplateUpdate};
use futures::TryStreamExt;

fn key() -> Credentials {
    Credentials::api_key("k")
}

fn log_stream(i: usize, name: &str) -> serde_json::Value {
    serde_json::json!({
        "id": format!("ls{i}"), "name": name, "project_id": "p",
        "created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z"
    })
}

fn project(i: usize, name: &str) -> serde_json::Value {
    serde_json::json!({
        "id": format!("p{i}"), "name": name, "created_at": "2024-01-01T00:00:00Z",
        "updated_at": "2024-01-01T00:00:00Z"
    })
}

fn query_param(query: Option<&str>, key: &str) -> Option<i64> {
    query?
        .split('&')
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .and_then(|v| v.parse().ok())
}

/// Pages of `page` items out of `total`, cursor from the body (`in_body`) or the query.
fn page_of(
    total: usize,
    limit: usize,
    start: usize,
) -> (std::ops::Range<usize>, serde_json::Value) {
    let end = (start + limit).min(total);
    let next = (end < total).then_some(end);
    (
        start..end,
        serde_json::json!({
            "starting_token": start, "limit": limit, "paginated": next.is_some(),
            "next_starting_token": next
        }),
    )
}

#[tokio::test]
async fn log_stream_search_walks_every_page_with_the_cursor_in_the_body() {
    let server = TestServer::start(|seen| {
        let body = seen.json();
        let start = body["starting_token"].as_u64().unwrap() as usize;
        let limit = body["limit"].as_u64().unwrap() as usize;
        let (range, mut page) = page_of(7, limit, start);
        page["log_streams"] = range.map(|i| log_stream(i, &format!("ls-{i}"))).collect();
        Reply::ok(page)
    });
    let mut config = server.config(key());
    config.page_size = 3;
    let client = evalctl::client::Client::new(config).unwrap();
    let all = client
        .search_log_streams_all("p", RunSearchRequest::default())
        .await
        .unwrap();
    assert_eq!(all.len(), 7);
    assert_eq!(all[6].name, "ls-6");
    let starts: Vec<i64> = server
        .requests()
        .iter()
        .map(|s| s.json()["starting_token"].as_i64().unwrap())
        .collect();
    assert_eq!(starts, [0, 3, 6], "three pages");
    let pages: Vec<_> = client
        .log_stream_pages("p", RunSearchRequest::default())
        .try_collect()
        .await
        .unwrap();
    assert_eq!(pages.len(), 3);
}

#[tokio::test]
async fn a_cursor_that_does_not_advance_is_an_error() {
    let server = TestServer::start(|_| {
        Reply::ok(serde_json::json!({
            "experiments": [], "starting_token": 0, "limit": 100,
            "paginated": true, "next_starting_token": 0
        }))
    });
    let client = server.client(key());
    let err = client
        .search_experiments_all("p", RunSearchRequest::default())
        .await
        .unwrap_err();
    assert!(
        matches!(err, ApiError::Pagination { token: 0, .. }),
        "{err:?}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn find_by_name_sends_a_case_sensitive_eq_filter_and_checks_the_name() {
    let server = TestServer::start(|seen| match seen.path.as_str() {
        "/v2/projects/paginated" => {
            let (_, mut page) = page_of(2, 100, 0);
            // A service that ignores case would also return "Demo-Project".
            page["projects"] =
                serde_json::json!([project(1, "Demo-Project"), project(2, "demo-project")]);
            page["total_count"] = 2.into();
            Reply::ok(page)
        }
        "/v2/projects/p/log_streams/search" => {
            let (_, mut page) = page_of(0, 100, 0);
            page["log_streams"] = serde_json::json!([]);
            Reply::ok(page)
        }
        _ => {
            let (_, mut page) = page_of(1, 100, 0);
            page["experiments"] = serde_json::json!([{
                "id": "e1", "name": "baseline-eval", "project_id": "p", "task_type": 16
            }]);
            Reply::ok(page)
        }
    });
    let client = server.client(key());
    let p = client
        .find_project_by_name("demo-project")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(p.id, "p2");
    assert_eq!(
        client
            .find_log_stream_by_name("p", "production")
            .await
            .unwrap(),
        None
    );
    let e = client
        .find_experiment_by_name("p", "baseline-eval")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(e.id, "e1");

    let seen = server.requests();
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].query.as_deref(), Some("starting_token=0&limit=100"));
    assert_eq!(
        seen[0].json(),
        serde_json::json!({"filters":[{"name":"name","operator":"eq","value":"demo-project","case_sensitive":true}]})
    );
    assert_eq!(
        seen[1].json(),
        serde_json::json!({"starting_token":0,"limit":100,"filters":[{"name":"name","operator":"eq","value":"production","case_sensitive":true}]})
    );
    assert_eq!(seen[2].path, "/v2/projects/p/experiments/search");
}

#[tokio::test]
async fn query_paginated_listings_walk_every_page() {
    let server = TestServer::start(|seen| {
        let start = query_param(seen.query.as_deref(), "starting_token").unwrap() as usize;
        let limit = query_param(seen.query.as_deref(), "limit").unwrap() as usize;
        let (range, mut page) = page_of(5, limit, start);
        match seen.path.as_str() {
            "/v2/scorers/versions/v1/projects" => {
                page["projects"] = range.map(|i| project(i, &format!("proj-{i}"))).collect();
                page["total_count"] = 5.into();
            }
            "/v2/scorers/list" => {
                page["scorers"] = range
                    .map(|i| serde_json::json!({"id": format!("s{i}"), "name": format!("n{i}"), "scorer_type": "preset"}))
                    .collect();
            }
            _ => {
                page["versions"] = range
                    .map(|i| serde_json::json!({"id": format!("v{i}"), "version": i + 1, "scorer_id": "s1",
                        "created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z"}))
                    .collect();
            }
        }
        Reply::ok(page)
    });
    let mut config = server.config(key());
    config.page_size = 2;
    let client = evalctl::client::Client::new(config).unwrap();
    assert_eq!(client.scorer_version_projects("v1").await.unwrap().len(), 5);
    assert_eq!(
        client
            .list_scorers(ListScorersRequest::default())
            .await
            .unwrap()
            .len(),
        5
    );
    assert_eq!(client.list_scorer_versions("s1").await.unwrap().len(), 5);
    let op6: Vec<Option<String>> = server
        .requests_to("/v2/scorers/versions/v1/projects")
        .into_iter()
        .map(|s| s.query)
        .collect();
    assert_eq!(
        op6,
        [
            Some("starting_token=0&limit=2".to_owned()),
            Some("starting_token=2&limit=2".to_owned()),
            Some("starting_token=4&limit=2".to_owned())
        ]
    );
    assert_eq!(server.requests().len(), 9);
}

#[tokio::test]
async fn not_found_is_none_for_reads_already_gone_for_deletes_and_an_error_for_writes() {
    let server = TestServer::start(|_| Reply::detail(404, "Log stream not found"));
    let client = server.client(key());
    assert_eq!(client.get_log_stream("p", "l").await.unwrap(), None);
    assert_eq!(client.get_experiment("p", "e").await.unwrap(), None);
    assert_eq!(client.get_project("p").await.unwrap(), None);
    assert_eq!(client.get_user("u").await.unwrap(), None);
    assert_eq!(
        client.get_annotation_template("p", "t").await.unwrap(),
        None
    );
    assert_eq!(client.get_feedback_template("p", "t").await.unwrap(), None);
    assert_eq!(client.get_integration("openai").await.unwrap(), None);
    assert_eq!(client.get_scorer("s").await.unwrap(), None);
    assert_eq!(client.get_dashboard("p", "l", None).await.unwrap(), None);
    assert_eq!(
        client
            .get_log_stream_metric_settings("p", "l")
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        client
            .delete_section("p", "l", "s", None, true)
            .await
            .unwrap(),
        Deleted::AlreadyGone
    );
    assert_eq!(
        client.delete_annotation_template("p", "t").await.unwrap(),
        Deleted::AlreadyGone
    );
    assert_eq!(
        client
            .unfavorite_dashboard("p", "l", &Visibility::User)
            .await
            .unwrap(),
        Deleted::AlreadyGone
    );
    let err = client
        .update_log_stream_metric_settings("p", "l", &MetricSettingsRequest::default())
        .await
        .unwrap_err();
    assert!(matches!(err, ApiError::NotFound { .. }), "{err:?}");
    assert!(err.to_string().contains("Log stream not found"), "{err}");
    let err = client.list_feedback_templates("p").await.unwrap_err();
    assert!(matches!(err, ApiError::NotFound { .. }), "{err:?}");
    let stats = client.stats();
    assert_eq!(
        stats.total.failures, 2,
        "only the two errors count as failures"
    );
    assert_eq!(stats.total.retries, 0);
}

#[tokio::test]
async fn a_422_is_shown_field_by_field() {
    let server = TestServer::start(|_| {
        Reply::json(
            422,
            serde_json::json!({"detail": [
                {"loc": ["body", "segment_filters", 0, "sample_rate"], "msg": "Input should be less than or equal to 1",
                 "type": "less_than_equal", "input": 1.5, "ctx": {"le": 1}},
                {"loc": ["body", "scorers", 0, "id"], "msg": "Input should be a valid UUID",
                 "type": "uuid_parsing", "input": "nope"}
            ]}),
        )
    });
    let client = server.client(key());
    let request = MetricSettingsRequest {
        scorers: Some(vec![ScorerConfig::new("nope", ScorerType::Preset)]),
        segment_filters: Some(vec![SegmentFilter {
            filter: None,
            sample_rate: 1.5,
            llm_scorers: None,
            multimodal_scorers: None,
        }]),
    };
    let err = client
        .update_experiment_metric_settings("p", "e", &request)
        .await
        .unwrap_err();
    let ApiError::Validation { fields, .. } = &err else {
        panic!("expected Validation, got {err:?}");
    };
    assert_eq!(fields.len(), 2);
    let text = err.to_string();
    assert!(text.contains("update_experiment_metric_settings (PATCH /v2/projects/{project_id}/experiments/{experiment_id}/metric_settings)"), "{text}");
    assert!(
        text.contains(
            "\n  body.segment_filters[0].sample_rate: Input should be less than or equal to 1"
        ),
        "{text}"
    );
    assert!(
        text.contains("\n  body.scorers[0].id: Input should be a valid UUID"),
        "{text}"
    );
    assert!(!text.contains("1.5"), "input is not shown: {text}");
    assert_eq!(server.requests().len(), 1, "a 422 is not retried");
    let sent = server.requests()[0].json();
    assert_eq!(sent["segment_filters"][0]["sample_rate"], 1.5);
    assert!(
        sent["segment_filters"][0].get("llm_scorers").is_none(),
        "unset fields are not sent"
    );
}

#[tokio::test]
async fn writes_send_the_spec_shapes() {
    let server = TestServer::start(|seen| match (seen.method.as_str(), seen.path.as_str()) {
        ("PUT", "/v2/integrations/openai") => Reply::ok(serde_json::json!({
            "id": "i1", "name": "openai", "provider": "openai", "created_at": "2024-01-01T00:00:00Z",
            "updated_at": "2024-01-01T00:00:00Z", "created_by": "u1"
        })),
        ("PUT", _) => Reply::ok(section_json("s1", "New")),
        ("POST", "/v2/projects/p/log_streams") => Reply::ok(log_stream(9, "bench")),
        ("POST", _) | ("PATCH", _) if seen.path.contains("/annotation/templates") => {
            Reply::ok(serde_json::json!({
                "id": "t1", "name": "quality", "criteria": "c", "constraints": {"annotation_type": "star"},
                "created_at": "2024-01-01T00:00:00Z", "position": 0, "usage_count": 0
            }))
        }
        ("DELETE", _) => Reply::status(204),
        _ => Reply::ok(settings_json()),
    });
    let client = server.client(key());
    let rec = client
        .put_integration(&IntegrationCreate::Openai {
            token: Secret::new("sk-1"),
            organization_id: Some("org".into()),
        })
        .await
        .unwrap();
    assert_eq!(rec.id, "i1");
    client
        .update_section(
            "p",
            "l",
            "s1",
            Some("d1"),
            &SectionUpdateRequest {
                name: Some("New".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        client
            .delete_section("p", "l", "s1", None, false)
            .await
            .unwrap(),
        Deleted::Deleted
    );
    assert_eq!(
        client.create_log_stream("p", "bench").await.unwrap().name,
        "bench"
    );
    let created = client
        .create_annotation_template(
            "p",
            &TemplateCreate {
                name: "quality".into(),
                include_explanation: None,
                criteria: Some("c".into()),
                constraints: AnnotationConstraints::Star,
            },
        )
        .await
        .unwrap();
    assert_eq!(created.position, 0);
    client
        .update_annotation_template(
            "p",
            "t1",
            &TemplateUpdate {
                name: "quality".into(),
                criteria: None,
            },
        )
        .await
        .unwrap();
    let _ = client
        .list_projects(ProjectCollectionParams::default())
        .await;

    let seen = server.requests();
    assert_eq!(
        seen[0].json(),
        serde_json::json!({"token": "sk-1", "organization_id": "org"})
    );
    assert_eq!(
        (seen[1].method.as_str(), seen[1].query.as_deref()),
        ("PUT", Some("trends_dashboard_id=d1"))
    );
    assert_eq!(seen[1].json(), serde_json::json!({"name": "New"}));
    assert_eq!(seen[2].query.as_deref(), Some("ungroup=false"));
    assert_eq!(seen[3].json(), serde_json::json!({"name": "bench"}));
    assert_eq!(
        seen[4].json(),
        serde_json::json!({"name": "quality", "criteria": "c", "constraints": {"annotation_type": "star"}})
    );
    assert_eq!(
        seen[5].json(),
        serde_json::json!({"name": "quality", "criteria": null})
    );
    assert_eq!(seen[6].json(), serde_json::json!({}));
    for s in seen.iter().filter(|s| !s.body.is_empty()) {
        assert_eq!(
            s.content_type.as_deref(),
            Some("application/json"),
            "{} {}",
            s.method,
            s.path
        );
    }
}

#[tokio::test]
async fn an_unexpected_body_is_a_decode_error_naming_the_operation() {
    let server =
        TestServer::start(|_| Reply::ok(serde_json::json!({"unexpected": "sk-should-not-echo"})));
    let client = server.client(key());
    let err = client.current_user().await.unwrap_err();
    assert!(
        matches!(err, ApiError::Decode { status: 200, .. }),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(text.contains("get_current_user"), "{text}");
    assert!(!text.contains("sk-should-not-echo"), "{text}");
}
