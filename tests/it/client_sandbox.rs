//! The typed methods end to end against the in-process sandbox
//! (`evalctl::sandbox`): reads of the default fixture, writes read back,
//! pagination through several pages, the password flow with a re-login after
//! the sandbox forgets its tokens, injected faults (5xx, 429, dropped
//! connections, a create applied then failed), a read-only user's 403, and a
//! 422 rendered field by field.

#![allow(clippy::unwrap_used)] // test helpers: a failing unwrap is a failing test, with its location

use std::time::Duration;

use evalctl::api::{
    FilterValue, IntegrationCreate, ListScorersRequest, MetricSettingsRequest, Operator,
    ProjectCollectionParams, RunSearchRequest, ScorerConfig, ScorerListFilter, ScorerType, Secret,
    SectionCreateRequest, SectionUpdateRequest, SegmentFilter, Visibility,
};
use evalctl::client::{ApiError, Client, ClientConfig, Credentials, Deleted, RetryPolicy};
use evalctl::kinds::templates::{AnnotationConstraints, TemplateCreate, TemplateUpdate};
use evalctl::sandbox::fingerprint::stable_id;
use evalctl::sandbox::fixture::catalog::{scorer_id, version_id};
use evalctl::sandbox::fixture::{DEMO_API_KEY, DEMO_EMAIL, DEMO_PASSWORD, VIEWER_API_KEY};
use evalctl::sandbox::{Faults, Fixture, Sandbox, SandboxHandle};

fn client_for(sb: &SandboxHandle, credentials: Credentials) -> Client {
    let mut config = ClientConfig::new(sb.base_url(), credentials);
    config.retry = RetryPolicy {
        max_attempts: 6,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(200),
        max_elapsed: Duration::from_secs(60),
    };
    Client::new(config).unwrap()
}

fn start() -> SandboxHandle {
    Sandbox::builder().start().unwrap()
}

fn demo_project() -> String {
    stable_id("project:demo-project")
}

fn production() -> String {
    stable_id("log_stream:demo-project:production")
}

fn section(name: &str) -> SectionCreateRequest {
    SectionCreateRequest {
        name: name.into(),
        description: Some("made by the client tests".into()),
        color: Some("#336699".into()),
    }
}

#[tokio::test]
async fn typed_reads_of_the_default_fixture() {
    let sb = start();
    let client = client_for(&sb, Credentials::api_key(DEMO_API_KEY));
    let pid = demo_project();

    let p = client
        .find_project_by_name("demo-project")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(p.id, pid);
    assert_eq!(
        client.find_project_by_name("Demo-Project").await.unwrap(),
        None
    );
    assert!(client.get_project(&pid).await.unwrap().is_some());
    assert!(
        client
            .list_projects(ProjectCollectionParams::default())
            .await
            .unwrap()
            .len()
            >= 2
    );

    let ls = client
        .find_log_stream_by_name(&pid, "production")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ls.id, production());
    assert_eq!(
        client.find_log_stream_by_name(&pid, "nope").await.unwrap(),
        None
    );
    assert_eq!(
        client
            .get_log_stream(&pid, &ls.id)
            .await
            .unwrap()
            .unwrap()
            .name,
        "production"
    );
    let missing = stable_id("nothing");
    assert_eq!(client.get_log_stream(&pid, &missing).await.unwrap(), None);

    let e = client
        .find_experiment_by_name(&pid, "baseline-eval")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        client
            .get_experiment(&pid, &e.id)
            .await
            .unwrap()
            .unwrap()
            .name,
        "baseline-eval"
    );
    let es = client
        .get_experiment_metric_settings(&pid, &e.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(es.scorers.len(), 1);

    let settings = client
        .get_log_stream_metric_settings(&pid, &ls.id)
        .await
        .unwrap()
        .unwrap();
    let names: Vec<_> = settings
        .scorers
        .iter()
        .filter_map(|s| s.name.clone())
        .collect();
    assert!(names.contains(&"correctness".to_owned()), "{names:?}");

    let dashboards = client.list_dashboards(&pid, &ls.id).await.unwrap();
    assert!(dashboards.len() >= 2 && dashboards.iter().any(|d| d.is_default));
    let default = client
        .get_dashboard(&pid, &ls.id, None)
        .await
        .unwrap()
        .unwrap();
    let sections: Vec<_> = default.sections.iter().map(|s| s.name.as_str()).collect();
    assert!(
        sections.contains(&"Quality") && sections.contains(&"Latency"),
        "{sections:?}"
    );

    assert_eq!(
        client.list_annotation_templates(&pid).await.unwrap().len(),
        7
    );
    let feedback = client.list_feedback_templates(&pid).await.unwrap();
    assert_eq!(feedback.len(), 7);
    let one = &client.list_annotation_templates(&pid).await.unwrap()[0];
    assert_eq!(
        client
            .get_annotation_template(&pid, &one.id)
            .await
            .unwrap()
            .unwrap()
            .name,
        one.name
    );

    let me = client.current_user().await.unwrap();
    assert_eq!(me.email, DEMO_EMAIL);
    assert_eq!(
        client.get_user(&me.id).await.unwrap().unwrap().email,
        DEMO_EMAIL
    );
    assert_eq!(client.get_user(&missing).await.unwrap(), None);

    let found = client
        .list_scorers(ListScorersRequest {
            filters: vec![ScorerListFilter::Name {
                operator: Operator::Eq,
                value: FilterValue::One("correctness".into()),
                case_sensitive: None,
            }],
        })
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].id, scorer_id("correctness"));
    assert!(
        !client
            .list_scorer_versions(&found[0].id)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(client.get_scorer(&found[0].id).await.unwrap().is_some());
    let using = client
        .scorer_version_projects(&version_id("context_adherence", 1))
        .await
        .unwrap();
    assert!(using.iter().any(|p| p.id == pid), "{using:?}");
    assert_eq!(client.get_integration("openai").await.unwrap(), None);
    assert_eq!(client.stats().total.failures, 0);
}

#[tokio::test]
async fn typed_writes_read_back() {
    let sb = start();
    let client = client_for(&sb, Credentials::api_key(DEMO_API_KEY));
    let (pid, lid) = (demo_project(), production());

    // Metric settings: replace the scorers, keep nothing else.
    let mut scorer = ScorerConfig::new(scorer_id("completeness"), ScorerType::Preset);
    scorer.cot_enabled = Some(true);
    let request = MetricSettingsRequest {
        scorers: Some(vec![scorer]),
        segment_filters: Some(vec![SegmentFilter {
            filter: None,
            sample_rate: 0.25,
            llm_scorers: None,
            multimodal_scorers: None,
        }]),
    };
    let stored = client
        .update_log_stream_metric_settings(&pid, &lid, &request)
        .await
        .unwrap();
    assert_eq!(stored.scorers.len(), 1);
    assert_eq!(stored.scorers[0].name.as_deref(), Some("completeness"));
    let read = client
        .get_log_stream_metric_settings(&pid, &lid)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read, stored);

    // Sections: create, update, delete, delete again.
    let s = client
        .create_section(&pid, &lid, None, &section("Client"))
        .await
        .unwrap();
    let dash = client
        .get_dashboard(&pid, &lid, None)
        .await
        .unwrap()
        .unwrap();
    assert!(dash.sections.iter().any(|x| x.id == s.id));
    let update = SectionUpdateRequest {
        name: Some("Client 2".into()),
        ..Default::default()
    };
    let updated = client
        .update_section(&pid, &lid, &s.id, None, &update)
        .await
        .unwrap();
    assert_eq!(updated.name, "Client 2");
    assert_eq!(
        client
            .delete_section(&pid, &lid, &s.id, None, true)
            .await
            .unwrap(),
        Deleted::Deleted
    );
    assert_eq!(
        client
            .delete_section(&pid, &lid, &s.id, None, true)
            .await
            .unwrap(),
        Deleted::AlreadyGone
    );

    // Favorite and unfavorite.
    let on_call = client
        .list_dashboards(&pid, &lid)
        .await
        .unwrap()
        .into_iter()
        .find(|d| !d.is_default)
        .unwrap();
    client
        .favorite_dashboard(&pid, &lid, &on_call.id, &Visibility::User)
        .await
        .unwrap();
    client
        .favorite_dashboard(&pid, &lid, &on_call.id, &Visibility::User)
        .await
        .unwrap();
    let after = client.list_dashboards(&pid, &lid).await.unwrap();
    assert!(after.iter().any(|d| d.id == on_call.id && d.is_favorited));
    client
        .unfavorite_dashboard(&pid, &lid, &Visibility::User)
        .await
        .unwrap();
    let after = client.list_dashboards(&pid, &lid).await.unwrap();
    assert!(!after.iter().any(|d| d.id == on_call.id && d.is_favorited));

    // Integration: the token goes in, never comes back.
    let rec = client
        .put_integration(&IntegrationCreate::Openai {
            token: Secret::new("sk-client-test-token"),
            organization_id: Some("org-1".into()),
        })
        .await
        .unwrap();
    assert_eq!(rec.provider.as_str(), "openai");
    let cfg = client.get_integration("openai").await.unwrap().unwrap();
    assert!(!format!("{cfg:?}").contains("sk-client-test-token"));

    // Templates: create, duplicate, update, delete twice.
    let create = TemplateCreate {
        name: "client-test".into(),
        include_explanation: Some(true),
        criteria: Some("Is it right?".into()),
        constraints: AnnotationConstraints::Score { min: 1, max: 5 },
    };
    let t = client
        .create_annotation_template(&pid, &create)
        .await
        .unwrap();
    let dup = client
        .create_annotation_template(&pid, &create)
        .await
        .unwrap_err();
    assert!(matches!(dup, ApiError::Conflict { .. }), "{dup:?}");
    let renamed = client
        .update_annotation_template(
            &pid,
            &t.id,
            &TemplateUpdate {
                name: "client-test-2".into(),
                criteria: Some("Still right?".into()),
            },
        )
        .await
        .unwrap();
    assert_eq!(renamed.name, "client-test-2");
    assert_eq!(
        client
            .delete_annotation_template(&pid, &t.id)
            .await
            .unwrap(),
        Deleted::Deleted
    );
    assert_eq!(
        client
            .delete_annotation_template(&pid, &t.id)
            .await
            .unwrap(),
        Deleted::AlreadyGone
    );

    let created = client.create_log_stream(&pid, "client-made").await.unwrap();
    assert_eq!(
        client
            .find_log_stream_by_name(&pid, "client-made")
            .await
            .unwrap()
            .unwrap()
            .id,
        created.id
    );
}

#[tokio::test]
async fn pagination_walks_three_pages_or_more() {
    let sb = Sandbox::builder()
        .fixture(Fixture::scaled(5, 7, 3))
        .start()
        .unwrap();
    let mut config = ClientConfig::new(sb.base_url(), Credentials::api_key(DEMO_API_KEY));
    config.page_size = 3;
    let client = Client::new(config).unwrap();
    let projects = client
        .list_projects(ProjectCollectionParams::default())
        .await
        .unwrap();
    assert_eq!(projects.len(), 5);
    let pid = &projects[0].id;
    sb.clear_log();
    let streams = client
        .search_log_streams_all(pid, RunSearchRequest::default())
        .await
        .unwrap();
    assert_eq!(streams.len(), 7);
    let mut ids: Vec<_> = streams.iter().map(|s| s.id.clone()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 7, "no duplicates across pages");
    let searches = sb
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/log_streams/search"))
        .count();
    assert_eq!(searches, 3);
    let experiments = client
        .search_experiments_all(pid, RunSearchRequest::default())
        .await
        .unwrap();
    assert_eq!(experiments.len(), 3);
    let all_scorers = client
        .list_scorers(ListScorersRequest::default())
        .await
        .unwrap();
    assert!(all_scorers.len() >= 63, "{}", all_scorers.len());
}

#[tokio::test]
async fn password_flow_uses_basic_and_bearer_and_logs_in_again_after_a_restart() {
    let sb = start();
    let client = client_for(&sb, Credentials::password(DEMO_EMAIL, DEMO_PASSWORD));
    let (pid, lid) = (demo_project(), production());
    let s = client
        .create_section(&pid, &lid, None, &section("Bearer"))
        .await
        .unwrap();
    client
        .get_log_stream_metric_settings(&pid, &lid)
        .await
        .unwrap()
        .unwrap();
    sb.forget_tokens(); // as a restart of the service does
    let s2 = client
        .create_section(&pid, &lid, None, &section("Bearer 2"))
        .await
        .unwrap();
    assert_ne!(s.id, s2.id);
    let stats = client.stats();
    assert_eq!(stats.operations["POST login"].requests, 2);
    assert_eq!(stats.operations["POST create_trends_section"].relogins, 1);
    assert_eq!(stats.total.failures, 0);
    let users: Vec<_> = sb.requests().into_iter().filter_map(|r| r.user).collect();
    assert!(users.iter().all(|u| u == DEMO_EMAIL), "{users:?}");

    let wrong = client_for(&sb, Credentials::password(DEMO_EMAIL, "not-the-password"));
    let err = wrong
        .favorite_dashboard(&pid, &lid, "x", &Visibility::User)
        .await
        .unwrap_err();
    assert!(matches!(err, ApiError::Unauthorized { .. }), "{err:?}");
    let err = wrong.get_user("x").await.unwrap_err();
    assert!(
        matches!(err, ApiError::Unauthorized { .. }),
        "Basic refused: {err:?}"
    );
}

#[tokio::test]
async fn injected_faults_are_retried_and_an_applied_create_is_ambiguous() {
    let sb = start();
    let client = client_for(&sb, Credentials::api_key(DEMO_API_KEY));
    let (pid, lid) = (demo_project(), production());

    // Half the requests fail before processing: reads still succeed.
    sb.set_faults(Faults {
        fail_rate: 0.5,
        seed: 7,
        ..Faults::none()
    });
    for _ in 0..6 {
        client.get_log_stream(&pid, &lid).await.unwrap().unwrap();
    }
    assert!(client.stats().total.retries > 0);

    // Dropped connections: reads are retried.
    sb.set_faults(Faults {
        drop_rate: 0.5,
        seed: 3,
        ..Faults::none()
    });
    for _ in 0..4 {
        client.list_dashboards(&pid, &lid).await.unwrap();
    }

    // 429 with Retry-After, then success.
    sb.set_faults(Faults {
        throttle_rate: 1.0,
        retry_after_secs: 1,
        path_contains: Some("/current_user".into()),
        ..Faults::none()
    });
    let pending = tokio::spawn({
        let client = client.clone();
        async move { client.current_user().await }
    });
    while client.stats().total.rate_limited == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    sb.set_faults(Faults::none());
    pending.await.unwrap().unwrap();

    // A create applied by the service, then answered 502: ambiguous, and a
    // re-read shows it was applied (which is why the client never resends).
    sb.set_faults(Faults {
        fail_after_rate: 1.0,
        path_contains: Some("/trends/sections".into()),
        ..Faults::none()
    });
    let err = client
        .create_section(&pid, &lid, None, &section("Maybe"))
        .await
        .unwrap_err();
    assert!(matches!(err, ApiError::Ambiguous { .. }), "{err:?}");
    sb.set_faults(Faults::none());
    let dash = client
        .get_dashboard(&pid, &lid, None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        dash.sections.iter().filter(|s| s.name == "Maybe").count(),
        1
    );
    let posts = sb
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/trends/sections"))
        .count();
    assert_eq!(posts, 1);
}

#[tokio::test]
async fn a_read_only_user_gets_forbidden_and_a_bad_body_gets_every_field() {
    let sb = start();
    let (pid, lid) = (demo_project(), production());
    let viewer = client_for(&sb, Credentials::api_key(VIEWER_API_KEY));
    assert!(viewer.get_log_stream(&pid, &lid).await.unwrap().is_some());
    let err = viewer
        .create_section(&pid, &lid, None, &section("No"))
        .await
        .unwrap_err();
    assert!(matches!(err, ApiError::Forbidden { .. }), "{err:?}");
    assert!(err.to_string().contains("role lacks permission"), "{err}");

    let client = client_for(&sb, Credentials::api_key(DEMO_API_KEY));
    let request = MetricSettingsRequest {
        scorers: None,
        segment_filters: Some(vec![
            SegmentFilter {
                filter: None,
                sample_rate: 1.5,
                llm_scorers: None,
                multimodal_scorers: None,
            },
            SegmentFilter {
                filter: None,
                sample_rate: -0.5,
                llm_scorers: None,
                multimodal_scorers: None,
            },
        ]),
    };
    let err = client
        .update_log_stream_metric_settings(&pid, &lid, &request)
        .await
        .unwrap_err();
    let ApiError::Validation { fields, .. } = &err else {
        panic!("expected Validation, got {err:?}");
    };
    let locs: Vec<&str> = fields.iter().map(|f| f.loc.as_str()).collect();
    assert_eq!(
        locs,
        [
            "body.segment_filters[0].sample_rate",
            "body.segment_filters[1].sample_rate"
        ]
    );
    assert!(
        err.to_string().contains(
            "body.segment_filters[0].sample_rate: Input should be less than or equal to 1"
        ),
        "{err}"
    );
}
