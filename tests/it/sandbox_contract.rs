//! Contract tests of the sandbox: requests written by hand from the spec's
//! field tables (raw JSON, not our serializer), responses checked field by
//! field in the raw JSON and validated against the OpenAPI reference.

use crate::sandbox_support;

use sandbox_support::*;
use serde_json::{Value, json};

#[tokio::test]
async fn op1_patch_log_stream_metric_settings_fills_server_defaults() {
    let cx = Ctx::new();
    let staging = format!(
        "/v2/projects/{}/log_streams/{}/metric_settings",
        project("demo-project"),
        log_stream("demo-project", "staging")
    );
    // Never-set segment filters read back as null, scorers as [].
    let before = cx.get(&staging).await;
    assert_eq!(before.status, 200);
    assert_eq!(before.body, json!({"scorers": [], "segment_filters": null}));
    assert_schema("MetricSettingsResponse", &before.body);

    let body = json!({
        "scorers": [
            {
                "id": scorer("context_adherence"),
                "scorer_type": "preset",
                "filters": [{"name": "node_name", "operator": "eq", "value": "llm"}]
            },
            {
                "id": scorer("correctness"),
                "scorer_type": "preset",
                "scorer_version": {"id": version("correctness", 1), "version": 1, "scorer_id": scorer("correctness")},
                "num_judges": 5
            }
        ],
        "segment_filters": [
            {"sample_rate": 0.25, "filter": {"name": "metadata", "operator": "one_of", "key": "env", "value": ["prod", "canary"]}},
            {"sample_rate": 1}
        ]
    });
    let r = cx.patch(&staging, body).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("MetricSettingsResponse", &r.body);
    let s0 = &r.body["scorers"][0];
    assert_eq!(s0["id"], scorer("context_adherence"));
    assert_eq!(s0["scorer_type"], "preset");
    assert_eq!(s0["name"], "context_adherence");
    assert_eq!(s0["output_type"], "boolean");
    assert_eq!(s0["input_type"], "retriever_spans");
    assert_eq!(s0["model_type"], "llm");
    assert_eq!(s0["roll_up_method"], "percentage_true");
    assert_eq!(s0["filters"][0]["name"], "node_name");
    assert_eq!(s0["filters"][0]["case_sensitive"], true);
    assert!(
        s0.get("scorer_version").is_none(),
        "unpinned stays unpinned"
    );
    let s1 = &r.body["scorers"][1];
    assert_eq!(s1["num_judges"], 5);
    assert_eq!(s1["scorer_version"]["id"], version("correctness", 1));
    assert_eq!(s1["scorer_version"]["scorer_id"], scorer("correctness"));
    assert_eq!(s1["scorer_version"]["version"], 1);
    assert!(
        s1["scorer_version"]["model_name"].is_string(),
        "canonical catalog object"
    );
    let f0 = &r.body["segment_filters"][0];
    assert_eq!(f0["sample_rate"], 0.25);
    assert_eq!(f0["llm_scorers"], false);
    assert_eq!(f0["multimodal_scorers"], false);
    assert_eq!(f0["filter"]["key"], "env");
    assert_eq!(f0["filter"]["value"], json!(["prod", "canary"]));
    assert_eq!(r.body["segment_filters"][1]["sample_rate"], 1.0);

    // Only scorers: segment filters are kept.
    let r2 = cx
        .patch(
            &staging,
            json!({"scorers": [{"id": scorer("bleu"), "scorer_type": "preset"}]}),
        )
        .await;
    assert_eq!(r2.status, 200, "{}", r2.body);
    assert_eq!(r2.body["scorers"].as_array().unwrap().len(), 1);
    assert_eq!(r2.body["segment_filters"], r.body["segment_filters"]);
    // Null segment filters also keep them; an empty list replaces them.
    let r3 = cx.patch(&staging, json!({"segment_filters": null})).await;
    assert_eq!(r3.body["segment_filters"], r.body["segment_filters"]);
    let r4 = cx.patch(&staging, json!({"segment_filters": []})).await;
    assert_eq!(r4.body["segment_filters"], json!([]));
    assert_eq!(r4.body["scorers"], r2.body["scorers"]);
    // GET reads back what was stored.
    assert_eq!(cx.get(&staging).await.body, r4.body);
}

#[tokio::test]
async fn op1_unknown_scorer_or_version_is_a_422_at_its_location() {
    let cx = Ctx::new();
    let path = format!("{}/metric_settings", production());
    let r = cx
        .patch(
            &path,
            json!({"scorers": [
                {"id": "6f1c2a4e-8e0b-4c2a-9f5e-1b2c3d4e5f60", "scorer_type": "preset"},
                {"id": scorer("correctness"), "scorer_type": "llm"},
                {"id": scorer("bleu"), "scorer_type": "preset",
                 "scorer_version": {"id": version("rouge", 1), "version": 1, "scorer_id": scorer("bleu")}}
            ]}),
        )
        .await;
    assert_422(&r);
    assert_eq!(
        locs(&r.body),
        vec![
            r#"["body","scorers",0,"id"]"#,
            r#"["body","scorers",1,"scorer_type"]"#,
            r#"["body","scorers",2,"scorer_version","id"]"#,
        ]
    );
    // Nothing was stored.
    let after = cx.get(&path).await;
    assert_eq!(after.body["scorers"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn op5_experiment_patch_accepts_the_spec_sample_without_operator() {
    let cx = Ctx::new();
    let path = format!(
        "/v2/projects/{}/experiments/{}/metric_settings",
        project("demo-project"),
        experiment("demo-project", "baseline-eval")
    );
    // As the spec's sample request: filters with name, value, case_sensitive
    // and no operator; a scorer version nested as in the ScorerConfig table.
    let body = json!({
        "scorers": [{
            "id": scorer("helpfulness-judge"),
            "scorer_type": "llm",
            "filters": [
                {"name": "node_name", "value": "llm", "case_sensitive": true},
                {"name": "node_name", "value": ["chat", "llm"], "case_sensitive": false}
            ],
            "scorer_version": {"id": version("helpfulness-judge", 2), "version": 2, "scorer_id": scorer("helpfulness-judge")}
        }],
        "segment_filters": [{"sample_rate": 0.5, "filter": {"name": "node_name", "value": "llm"}}]
    });
    let r = cx.patch(&path, body).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("MetricSettingsResponse", &r.body);
    let s = &r.body["scorers"][0];
    for field in [
        "scorer_type",
        "output_type",
        "input_type",
        "model_type",
        "roll_up_method",
    ] {
        assert!(s[field].is_string(), "{field} filled: {s}");
    }
    assert_eq!(s["filters"][0]["operator"], "eq");
    assert_eq!(s["filters"][1]["operator"], "one_of");
    assert_eq!(s["filters"][1]["case_sensitive"], false);
    assert_eq!(
        s["scorer_version"]["generated_scorer"]["chain_poll_template"]["metric_few_shot_examples"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(r.body["segment_filters"][0]["filter"]["operator"], "eq");

    // The log stream PATCH requires operator, as the schema says.
    let r = cx
        .patch(
            &format!("{}/metric_settings", production()),
            json!({"segment_filters": [{"sample_rate": 0.5, "filter": {"name": "node_name", "value": "llm"}}]}),
        )
        .await;
    assert_422(&r);
    assert!(
        locs(&r.body).iter().any(|l| l.contains("operator")),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn op2_search_log_streams_shape_and_counts() {
    let cx = Ctx::new();
    let path = format!(
        "/v2/projects/{}/log_streams/search",
        project("demo-project")
    );
    let r = cx
        .post(
            &path,
            json!({"starting_token": 0, "limit": 100, "filters": [{"name": "name", "operator": "eq", "value": "production"}]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("ListLogStreamResponse", &r.body);
    assert_eq!(r.body["starting_token"], 0);
    assert_eq!(r.body["limit"], 100);
    assert_eq!(r.body["paginated"], false);
    assert_eq!(r.body["next_starting_token"], Value::Null);
    let ls = &r.body["log_streams"][0];
    assert_eq!(ls["id"], log_stream("demo-project", "production"));
    assert_eq!(ls["name"], "production");
    assert_eq!(ls["project_id"], project("demo-project"));
    assert_eq!(ls["created_by"], user("demo@example.com"));
    assert_eq!(ls["created_by_user"]["email"], "demo@example.com");
    assert_eq!(ls["created_by_user"]["first_name"], "Demo");
    assert_eq!(ls["has_user_created_sessions"], false);
    assert!(ls.get("num_spans").is_none() && ls.get("num_traces").is_none());

    let r = cx.post(&path, json!({"include_counts": true})).await;
    assert_schema("ListLogStreamResponse", &r.body);
    let all = r.body["log_streams"].as_array().unwrap();
    assert_eq!(all.len(), 2);
    assert!(
        all.iter()
            .all(|l| l["num_spans"].is_i64() && l["num_traces"].is_i64())
    );
    // Default sort: created_at descending (staging was created after production).
    assert_eq!(all[0]["name"], "staging");
}

#[tokio::test]
async fn op9_get_user_and_current_user() {
    let cx = Ctx::new();
    let r = cx
        .get(&format!("/v2/users/{}", user("alice@example.com")))
        .await;
    assert_eq!(r.status, 200);
    assert_schema("GetUserResponse", &r.body);
    assert_eq!(r.body["email"], "alice@example.com");
    assert_eq!(r.body["role"], "user");
    assert_eq!(r.body["organization_name"], "Demo Organization");
    assert_eq!(r.body["projects_count"], 1);
    assert_eq!(r.body["runs_count"], 4);
    let me = cx.get("/v2/current_user").await;
    assert_schema("CurrentUserDB", &me.body);
    assert_eq!(me.body["email"], "demo@example.com");
    assert_eq!(me.body["role"], "admin");
    let missing = cx
        .get("/v2/users/6f1c2a4e-8e0b-4c2a-9f5e-1b2c3d4e5f60")
        .await;
    assert_eq!(missing.status, 404);
    assert_eq!(missing.body, json!({"detail": "User not found"}));
}

#[tokio::test]
async fn login_returns_a_bearer_token_that_authenticates() {
    let cx = Ctx::new();
    for path in ["/login", "/v2/login"] {
        let r = cx
            .raw(
                "POST",
                path,
                &Auth::None,
                Some("application/x-www-form-urlencoded"),
                Some(b"username=demo%40example.com&password=demo-password".to_vec()),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_schema("Token", &r.body);
        assert_eq!(r.body["token_type"], "bearer");
        let token = r.body["access_token"].as_str().unwrap().to_owned();
        let me = cx
            .call("GET", "/v2/current_user", &Auth::Bearer(token), None)
            .await;
        assert_eq!(me.body["email"], "demo@example.com");
    }
    let bad = cx
        .raw(
            "POST",
            "/login",
            &Auth::None,
            Some("application/x-www-form-urlencoded"),
            Some(b"username=demo%40example.com&password=wrong".to_vec()),
        )
        .await;
    assert_eq!(bad.status, 401);
    let missing = cx
        .raw(
            "POST",
            "/login",
            &Auth::None,
            Some("application/x-www-form-urlencoded"),
            Some(b"password=hunter2".to_vec()),
        )
        .await;
    assert_422(&missing);
    assert_eq!(locs(&missing.body), vec![r#"["body","username"]"#]);
    assert!(
        !missing.body.to_string().contains("hunter2"),
        "a 422 never echoes a password"
    );
    let grant = cx
        .raw(
            "POST",
            "/login",
            &Auth::None,
            Some("application/x-www-form-urlencoded"),
            Some(b"grant_type=client_credentials&username=a&password=b".to_vec()),
        )
        .await;
    assert_422(&grant);
}

#[tokio::test]
async fn projects_listing_and_reads() {
    let cx = Ctx::new();
    let r = cx
        .post(
            "/v2/projects/paginated?include_logstreams=true",
            json!({"filters": [{"name": "name", "operator": "eq", "value": "demo-project"}]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema(
        "api__schemas__project_v2__GetProjectsPaginatedResponse",
        &r.body,
    );
    assert_eq!(r.body["total_count"], 1);
    let names: Vec<&str> = r.body["projects"][0]["log_streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["production", "staging"]);
    let all = cx.post("/v2/projects/paginated", json!({})).await;
    assert_eq!(all.body["total_count"], 2);
    assert!(all.body["projects"][0]["log_streams"].is_null());
    let creator = cx
        .post(
            "/v2/projects/paginated",
            json!({"filters": [{"name": "creator", "value": user("alice@example.com")}]}),
        )
        .await;
    assert_eq!(creator.body["projects"][0]["name"], "support-bot");

    let p = cx
        .get(&format!("/v2/projects/{}", project("demo-project")))
        .await;
    assert_eq!(p.status, 200);
    assert_schema("ProjectDB", &p.body);
    assert_eq!(p.body["runs"].as_array().unwrap().len(), 4);

    let ls = cx.get(&production()).await;
    assert_schema("LogStreamResponse", &ls.body);
    let ex = cx
        .get(&format!(
            "/v2/projects/{}/experiments/{}",
            project("demo-project"),
            experiment("demo-project", "candidate-eval")
        ))
        .await;
    assert_schema("ExperimentResponse", &ex.body);
    assert_eq!(ex.body["experiment_group_name"], "nightly");

    // Creating a log stream also creates its default dashboard.
    let created = cx
        .post(
            &format!("/v2/projects/{}/log_streams", project("demo-project")),
            json!({"name": "canary"}),
        )
        .await;
    assert_eq!(created.status, 200, "{}", created.body);
    assert_schema("LogStreamResponse", &created.body);
    let id = created.body["id"].as_str().unwrap();
    let dash = cx
        .get(&format!(
            "/v2/projects/{}/log_streams/{id}/trends",
            project("demo-project")
        ))
        .await;
    assert_eq!(dash.status, 200);
    assert_eq!(dash.body["is_default"], true);
    let dup = cx
        .post(
            &format!("/v2/projects/{}/log_streams", project("demo-project")),
            json!({"name": "canary"}),
        )
        .await;
    assert_eq!(dup.status, 409);
}

#[tokio::test]
async fn reference_listings_of_log_streams_and_providers() {
    let cx = Ctx::new();
    let pid = project("demo-project");
    let r = cx
        .get(&format!(
            "/v2/projects/{pid}/log_streams/paginated?limit=1&include_counts=true"
        ))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("ListLogStreamResponse", &r.body);
    assert_eq!(r.body["paginated"], true);
    assert_eq!(r.body["next_starting_token"], 1);
    assert!(r.body["log_streams"][0]["num_spans"].is_i64());
    let r = cx.get(&format!("/v2/projects/{pid}/log_streams")).await;
    assert_schema_array("LogStreamResponse", &r.body);
    assert_eq!(r.body.as_array().unwrap().len(), 2);
    let r = cx.get("/v2/integrations/available").await;
    assert_schema("AvailableIntegrations", &r.body);
    assert_eq!(r.body["integrations"].as_array().unwrap().len(), 12);
}

#[tokio::test]
async fn unknown_paths_methods_and_objects_use_fastapi_words() {
    let cx = Ctx::new();
    let r = cx.get("/v2/nope").await;
    assert_eq!(r.status, 404);
    assert_eq!(r.body, json!({"detail": "Not Found"}));
    let r = cx
        .call("DELETE", "/v2/current_user", &Auth::demo(), None)
        .await;
    assert_eq!(r.status, 405);
    assert_eq!(r.body, json!({"detail": "Method Not Allowed"}));
    let r = cx
        .get(&format!(
            "/v2/projects/{}/log_streams/6f1c2a4e-8e0b-4c2a-9f5e-1b2c3d4e5f60",
            project("demo-project")
        ))
        .await;
    assert_eq!(r.status, 404);
    assert_eq!(r.body, json!({"detail": "Log stream not found"}));
    let r = cx
        .get("/v2/projects/6f1c2a4e-8e0b-4c2a-9f5e-1b2c3d4e5f60")
        .await;
    assert_eq!(r.body, json!({"detail": "Project not found"}));
}

#[tokio::test]
async fn login_with_an_api_key_returns_a_bearer_token_that_authenticates() {
    let cx = Ctx::new();
    let r = cx
        .call(
            "POST",
            "/v2/login/api_key",
            &Auth::None,
            Some(json!({"api_key": "alice-api-key"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("Token", &r.body);
    assert_eq!(r.body["token_type"], "bearer");
    let token = r.body["access_token"].as_str().unwrap().to_owned();
    assert!(!token.contains("alice-api-key"));
    let me = cx
        .call("GET", "/v2/current_user", &Auth::Bearer(token), None)
        .await;
    assert_eq!(me.body["email"], "alice@example.com");

    let wrong = cx
        .call(
            "POST",
            "/v2/login/api_key",
            &Auth::None,
            Some(json!({"api_key": "guess"})),
        )
        .await;
    assert_eq!(wrong.status, 401);
    let missing = cx
        .call("POST", "/v2/login/api_key", &Auth::None, Some(json!({})))
        .await;
    assert_422(&missing);
    assert_eq!(locs(&missing.body), vec![r#"["body","api_key"]"#]);
    // A 422 never echoes a key, whatever its shape.
    let bad = cx
        .call(
            "POST",
            "/v2/login/api_key",
            &Auth::None,
            Some(json!({"api_key": ["demo-api-key"]})),
        )
        .await;
    assert_422(&bad);
    assert!(
        !bad.body.to_string().contains("demo-api-key"),
        "{}",
        bad.body
    );
}
