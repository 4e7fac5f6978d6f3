//! Contract tests of the sandbox: requests written by hand from the spec's
//! field tables (raw JSON, not our serializer), responses checked field by
//! field in the raw JSON and validated against the OpenAPI reference.

mod sandbox_support;

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
async fn op3_create_section_and_op10_favorite() {
    let cx = Ctx::new();
    let prod = production();
    let r = cx
        .post(
            &format!("{prod}/trends/sections"),
            json!({"name": "Costs", "description": "Spend per day", "color": "#00AA55"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("SectionResponse", &r.body);
    assert_eq!(r.body["name"], "Costs");
    assert_eq!(r.body["description"], "Spend per day");
    assert_eq!(r.body["color"], "#00AA55");
    assert_eq!(r.body["widgets"], json!([]));
    let section_id = r.body["id"].as_str().unwrap().to_owned();

    // It is the last section of the default dashboard.
    let dash = cx.get(&format!("{prod}/trends")).await;
    assert_eq!(dash.status, 200);
    assert_schema("TrendsDashboardResponse", &dash.body);
    assert_eq!(dash.body["is_default"], true);
    let sections = dash.body["sections"].as_array().unwrap();
    assert_eq!(sections.last().unwrap()["id"], section_id.as_str());
    assert_eq!(sections[0]["name"], "Quality");
    assert_eq!(sections[0]["widgets"][0]["type"], "bar_chart");
    assert_eq!(sections[0]["widgets"][0]["aggregation"], "Count");

    let dashboard = default_dashboard(&log_stream("demo-project", "production"));
    let fav = cx
        .call(
            "POST",
            &format!("{prod}/trends/dashboards/{dashboard}/favorite?visibility=project"),
            &Auth::demo(),
            None,
        )
        .await;
    assert_eq!(fav.status, 204);
    let list = cx.get(&format!("{prod}/trends/dashboards")).await;
    assert_schema_array("TrendsDashboardSummary", &list.body);
    let favorited: Vec<&Value> = list
        .body
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["is_favorited"] == true)
        .collect();
    assert_eq!(favorited.len(), 1);
    assert_eq!(favorited[0]["id"], dashboard.as_str());
    // A project favorite shows for other users too.
    let alice = cx
        .call(
            "GET",
            &format!("{prod}/trends"),
            &Auth::Key("alice-api-key".into()),
            None,
        )
        .await;
    assert_eq!(alice.body["is_favorited"], true);
    // Unfavoriting the user's favorite leaves the project's.
    let un = cx
        .call(
            "DELETE",
            &format!("{prod}/trends/dashboards/favorite?visibility=user"),
            &Auth::demo(),
            None,
        )
        .await;
    assert_eq!(un.status, 204);
    assert_eq!(
        cx.get(&format!("{prod}/trends")).await.body["is_favorited"],
        true
    );
    let un = cx
        .call(
            "DELETE",
            &format!("{prod}/trends/dashboards/favorite?visibility=project"),
            &Auth::demo(),
            None,
        )
        .await;
    assert_eq!(un.status, 204);
    assert_eq!(
        cx.get(&format!("{prod}/trends")).await.body["is_favorited"],
        false
    );
}

#[tokio::test]
async fn sections_update_and_delete_with_and_without_ungroup() {
    let cx = Ctx::new();
    let prod = production();
    let dash = cx.get(&format!("{prod}/trends")).await.body;
    let quality = dash["sections"][0]["id"].as_str().unwrap().to_owned();
    let latency = dash["sections"][1]["id"].as_str().unwrap().to_owned();
    let top_before = dash["widgets"].as_array().unwrap().len();

    let r = cx
        .put(
            &format!("{prod}/trends/sections/{quality}"),
            json!({"name": "Answer quality", "color": null}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("SectionResponse", &r.body);
    assert_eq!(r.body["name"], "Answer quality");
    assert_eq!(r.body["color"], "#1F77B4", "null keeps the colour");

    let r = cx
        .delete(&format!("{prod}/trends/sections/{quality}?ungroup=true"))
        .await;
    assert_eq!(r.status, 204);
    let r = cx
        .delete(&format!("{prod}/trends/sections/{latency}"))
        .await;
    assert_eq!(r.status, 204);
    let dash = cx.get(&format!("{prod}/trends")).await.body;
    assert_eq!(dash["sections"], json!([]));
    let top = dash["widgets"].as_array().unwrap();
    assert_eq!(
        top.len(),
        top_before + 2,
        "the ungrouped section's two widgets moved up"
    );
    assert!(top.iter().all(|w| w["section_id"].is_null()));
    let again = cx
        .delete(&format!("{prod}/trends/sections/{latency}"))
        .await;
    assert_eq!(again.status, 404);
    assert_eq!(again.body, json!({"detail": "Section not found"}));
}

#[tokio::test]
async fn op4_integration_put_never_returns_a_secret() {
    let cx = Ctx::new();
    let r = cx
        .put(
            "/v2/integrations/openai",
            json!({"organization_id": "org-123", "token": "sk-live-SECRET"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("IntegrationDB", &r.body);
    assert_eq!(r.body["provider"], "openai");
    assert_eq!(r.body["name"], "openai");
    assert_eq!(r.body["created_by"], user("demo@example.com"));
    assert!(!r.body.to_string().contains("sk-live-SECRET"));
    let created_at = r.body["created_at"].clone();

    let read = cx.get("/v2/integrations/openai").await;
    assert_eq!(read.status, 200);
    assert_schema("OpenAIIntegration", &read.body);
    assert_eq!(read.body["organization_id"], "org-123");
    assert_eq!(read.body["provider"], "openai");
    assert!(!read.body.to_string().contains("SECRET"));

    // Update: same record, new time; the list has it once.
    let r2 = cx
        .put(
            "/v2/integrations/openai",
            json!({"organization_id": "org-456", "token": "sk-live-OTHER"}),
        )
        .await;
    assert_eq!(r2.body["id"], r.body["id"]);
    assert_eq!(r2.body["created_at"], created_at);
    let list = cx.get("/integrations").await;
    assert_schema_array("IntegrationDB", &list.body);
    assert_eq!(list.body.as_array().unwrap().len(), 1);
    // Another user does not see it.
    let other = cx
        .call(
            "GET",
            "/v2/integrations/openai",
            &Auth::Key("alice-api-key".into()),
            None,
        )
        .await;
    assert_eq!(other.status, 404);
    assert_eq!(other.body, json!({"detail": "Integration not found"}));
    // The sandbox keeps a fingerprint, not the token.
    let stored = cx
        .sb
        .read_state(|s| serde_json::to_string(&s.integrations).unwrap());
    assert!(!stored.contains("sk-live"));
    assert_eq!(cx.delete("/integrations/openai").await.status, 200);
    assert_eq!(cx.delete("/integrations/openai").await.status, 404);
}

#[tokio::test]
async fn every_provider_can_be_put_and_read_back_without_secrets() {
    let cx = Ctx::new();
    let bodies = [
        ("anthropic", "AnthropicIntegration", json!({"token": "s-1"})),
        (
            "aws_bedrock",
            "AwsBedrockIntegration",
            json!({"token": {"aws_access_key_id": "AK", "aws_secret_access_key": "s-2"}, "region": "eu-west-1"}),
        ),
        (
            "aws_sagemaker",
            "AwsSageMakerIntegration",
            json!({"token": {"aws_secret_access_key": "s-3"}, "models": []}),
        ),
        (
            "azure",
            "AzureIntegration",
            json!({"token": "s-4", "endpoint": "https://example.openai.azure.com", "proxy": true}),
        ),
        (
            "custom",
            "CustomIntegration",
            json!({"endpoint": "https://llm.example.com/v1", "authentication_type": "api_key", "api_key_header": "X-Key", "api_key_value": "s-5", "headers": {"X-Extra": "s-6"}, "models": ["m1"]}),
        ),
        (
            "databricks",
            "DatabricksIntegration",
            json!({"token": "s-7", "hostname": "https://dbc-1.cloud.databricks.com"}),
        ),
        ("mistral", "MistralIntegration", json!({"token": "s-8"})),
        (
            "nvidia",
            "NvidiaIntegration",
            json!({"token": "s-9", "hostname": "https://integrate.api.nvidia.com/v1"}),
        ),
        ("openai", "OpenAIIntegration", json!({"token": "s-10"})),
        (
            "vegas_gateway",
            "VegasGatewayIntegration",
            json!({"token": "s-11", "endpoint": "https://vegas.example.com/relay", "use_case": "EVAL"}),
        ),
        (
            "vertex_ai",
            "VertexAIIntegration",
            json!({"token": "s-12", "gcs_config": {"service_account_credentials": "s-13", "bucket_name": "b", "object_path_prefix": "p/"}}),
        ),
        (
            "writer",
            "WriterIntegration",
            json!({"token": "s-14", "organization_id": "w-org"}),
        ),
    ];
    for (provider, read_schema, body) in bodies {
        let r = cx.put(&format!("/v2/integrations/{provider}"), body).await;
        assert_eq!(r.status, 200, "{provider}: {}", r.body);
        assert_schema("IntegrationDB", &r.body);
        let read = cx.get(&format!("/v2/integrations/{provider}")).await;
        assert_eq!(read.status, 200, "{provider}");
        assert_schema(read_schema, &read.body);
        let text = read.body.to_string();
        assert!(!text.contains("\"s-"), "{provider} leaks a secret: {text}");
        for secret_field in [
            "token",
            "api_key_value",
            "headers",
            "service_account_credentials",
        ] {
            assert!(
                !text.contains(&format!("\"{secret_field}\"")),
                "{provider}: {text}"
            );
        }
    }
    let custom = cx.get("/v2/integrations/custom").await.body;
    assert_eq!(custom["base_url"], "https://llm.example.com/v1");
    assert_eq!(custom["api_key_header"], "X-Key");
    let databricks = cx.get("/v2/integrations/databricks").await.body;
    assert_eq!(
        databricks["extra"]["hostname"],
        "https://dbc-1.cloud.databricks.com"
    );
    let vertex = cx.get("/v2/integrations/vertex_ai").await.body;
    assert_eq!(
        vertex["gcs_config"],
        json!({"bucket_name": "b", "object_path_prefix": "p/"})
    );
    let azure = cx.get("/v2/integrations/azure").await.body;
    assert_eq!(
        azure["authentication_type"], "api_key",
        "create default filled"
    );
    // An unknown provider is an unknown path for PUT, a 422 for GET.
    assert_eq!(
        cx.put("/v2/integrations/acme", json!({"token": "x"}))
            .await
            .status,
        404
    );
    let r = cx.get("/v2/integrations/acme").await;
    assert_422(&r);
    assert_eq!(locs(&r.body), vec![r#"["path","name"]"#]);
}

#[tokio::test]
async fn integration_token_fingerprint_changes_when_resent() {
    let cx = Ctx::new();
    let fp = |cx: &Ctx| {
        cx.sb.read_state(|s| {
            let i = &s.integrations[0];
            (i.secret_fingerprint.clone(), i.secret_updated_at.clone())
        })
    };
    cx.put("/v2/integrations/mistral", json!({"token": "one"}))
        .await;
    let a = fp(&cx);
    cx.put("/v2/integrations/mistral", json!({"token": "one"}))
        .await;
    let b = fp(&cx);
    cx.put("/v2/integrations/mistral", json!({"token": "two"}))
        .await;
    let c = fp(&cx);
    assert_eq!(a.0, b.0, "same token, same fingerprint");
    assert!(b.1 >= a.1, "re-sent: newer timestamp");
    assert_ne!(b.0, c.0, "new token, new fingerprint");
}

#[tokio::test]
async fn op6_scorer_version_projects() {
    let cx = Ctx::new();
    // correctness is used unpinned by production: its latest version counts.
    let latest = cx
        .get(&format!("/v2/scorers/{}", scorer("correctness")))
        .await;
    assert_schema("ScorerResponse", &latest.body);
    let latest_id = latest.body["latest_version"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = cx
        .get(&format!("/v2/scorers/versions/{latest_id}/projects"))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema(
        "api__schemas__project_v2__GetProjectsPaginatedResponse",
        &r.body,
    );
    assert_eq!(r.body["total_count"], 1);
    let p = &r.body["projects"][0];
    assert_eq!(p["id"], project("demo-project"));
    assert_eq!(p["name"], "demo-project");
    assert_eq!(p["num_logstreams"], 2);
    assert_eq!(p["num_experiments"], 2);
    assert_eq!(p["created_by_user"]["email"], "demo@example.com");
    assert!(p["permissions"].is_array());
    // context_adherence is pinned to version 1 by production.
    let pinned = cx
        .get(&format!(
            "/v2/scorers/versions/{}/projects",
            version("context_adherence", 1)
        ))
        .await;
    assert_eq!(pinned.body["total_count"], 1);
    // A version nobody uses.
    let unused = cx
        .get(&format!(
            "/v2/scorers/versions/{}/projects",
            version("bleu", 1)
        ))
        .await;
    assert_eq!(unused.body["total_count"], 0);
    assert_eq!(unused.body["projects"], json!([]));
    let missing = cx
        .get("/v2/scorers/versions/6f1c2a4e-8e0b-4c2a-9f5e-1b2c3d4e5f60/projects")
        .await;
    assert_eq!(missing.status, 404);
    assert_eq!(missing.body, json!({"detail": "Scorer version not found"}));
}

#[tokio::test]
async fn op7_feedback_templates_and_op8_annotation_template() {
    let cx = Ctx::new();
    let pid = project("demo-project");
    let r = cx
        .get(&format!("/v2/projects/{pid}/feedback/templates"))
        .await;
    assert_eq!(r.status, 200);
    assert_schema_array("FeedbackTemplateDB", &r.body);
    let list = r.body.as_array().unwrap();
    assert_eq!(list.len(), 7);
    let kinds: Vec<&str> = list
        .iter()
        .map(|t| t["constraints"]["feedback_type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "like_dislike",
            "star",
            "score",
            "tags",
            "text",
            "choice",
            "tree_choice"
        ]
    );
    assert!(list.iter().any(|t| t["usage_count"].as_i64() > Some(0)));

    let tid = template("demo-project", "tree_choice-annotation");
    let r = cx
        .get(&format!("/v2/projects/{pid}/annotation/templates/{tid}"))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("AnnotationTemplateDB", &r.body);
    assert_eq!(r.body["id"], tid.as_str());
    assert_eq!(r.body["name"], "tree_choice-annotation");
    assert_eq!(r.body["constraints"]["annotation_type"], "tree_choice");
    assert!(r.body["constraints"]["choices_tree"].is_array());
    assert!(
        r.body["constraints"]["choices_tree_yaml"]
            .as_str()
            .unwrap()
            .contains("correct")
    );
    assert!(r.body["position"].is_i64() && r.body["usage_count"].is_i64());
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
async fn scorer_catalog_reads() {
    let cx = Ctx::new();
    let r = cx
        .post(
            "/v2/scorers/list",
            json!({"filters": [{"name": "name", "operator": "eq", "value": "CORRECTNESS"}]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("ListScorersResponse", &r.body);
    assert_eq!(
        r.body["scorers"].as_array().unwrap().len(),
        1,
        "case-insensitive by default"
    );
    let sensitive = cx
        .post("/v2/scorers/list", json!({"filters": [{"name": "name", "operator": "eq", "value": "CORRECTNESS", "case_sensitive": true}]}))
        .await;
    assert_eq!(sensitive.body["scorers"], json!([]));
    let presets = cx
        .post(
            "/v2/scorers/list",
            json!({"filters": [{"name": "scorer_type", "operator": "eq", "value": "preset"}]}),
        )
        .await;
    assert_eq!(presets.body["scorers"].as_array().unwrap().len(), 63);
    for s in presets.body["scorers"].as_array().unwrap() {
        assert_eq!(s["is_global"], true);
    }
    let by_id = cx
        .post("/v2/scorers/list", json!({"filters": [{"name": "id", "operator": "one_of", "value": [scorer("bleu"), scorer("rouge")]}]}))
        .await;
    assert_eq!(by_id.body["scorers"].as_array().unwrap().len(), 2);

    for name in [
        "helpfulness-judge",
        "response-length-check",
        "brand-safety-luna",
        "context_adherence",
    ] {
        let v = cx
            .get(&format!("/v2/scorers/{}/versions", scorer(name)))
            .await;
        assert_eq!(v.status, 200);
        assert_schema("ListScorerVersionsResponse", &v.body);
        let one = cx
            .get(&format!("/v2/scorers/{}/version?version=1", scorer(name)))
            .await;
        assert_eq!(one.status, 200, "{name}: {}", one.body);
        assert_schema("BaseScorerVersionResponse", &one.body);
        assert_eq!(one.body["version"], 1);
    }
    let latest = cx
        .get(&format!(
            "/v2/scorers/{}/version",
            scorer("helpfulness-judge")
        ))
        .await;
    assert_eq!(latest.body["version"], 2);
    let none = cx
        .get(&format!("/v2/scorers/{}/version?version=9", scorer("bleu")))
        .await;
    assert_eq!(none.status, 404);
}

#[tokio::test]
async fn templates_lifecycle() {
    let cx = Ctx::new();
    let pid = project("support-bot");
    let base = format!("/v2/projects/{pid}/annotation/templates");
    let r = cx
        .post(
            &base,
            json!({"name": "tone", "criteria": "Is the tone right?", "constraints": {"annotation_type": "tree_choice", "choices_tree_yaml": "- label: Good\n  id: good\n- label: Bad\n  id: bad\n  children:\n    - label: Rude\n      id: rude\n"}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("AnnotationTemplateDB", &r.body);
    assert_eq!(r.body["position"], 0);
    assert_eq!(r.body["usage_count"], 0);
    assert_eq!(r.body["include_explanation"], false);
    assert_eq!(r.body["created_by"], user("demo@example.com"));
    assert_eq!(
        r.body["constraints"]["choices_tree"][1]["children"][0]["id"],
        "rude"
    );
    let id = r.body["id"].as_str().unwrap().to_owned();

    let second = cx
        .post(
            &base,
            json!({"name": "stars", "constraints": {"annotation_type": "star"}}),
        )
        .await;
    assert_eq!(second.body["position"], 1);
    let dup = cx
        .post(
            &base,
            json!({"name": "stars", "constraints": {"annotation_type": "text"}}),
        )
        .await;
    assert_eq!(dup.status, 409);
    assert!(dup.body["detail"].is_string());

    let patched = cx
        .patch(
            &format!("{base}/{id}"),
            json!({"name": "tone-v2", "criteria": null}),
        )
        .await;
    assert_eq!(patched.status, 200, "{}", patched.body);
    assert_schema("AnnotationTemplateDB", &patched.body);
    assert_eq!(patched.body["name"], "tone-v2");
    assert_eq!(patched.body["criteria"], Value::Null);
    assert_eq!(patched.body["constraints"], r.body["constraints"]);
    let rename_clash = cx
        .patch(
            &format!("{base}/{id}"),
            json!({"name": "stars", "criteria": null}),
        )
        .await;
    assert_eq!(rename_clash.status, 409);

    let list = cx.get(&base).await;
    assert_schema_array("AnnotationTemplateDB", &list.body);
    assert_eq!(list.body.as_array().unwrap().len(), 2);
    assert_eq!(cx.delete(&format!("{base}/{id}")).await.status, 200);
    let gone = cx.get(&format!("{base}/{id}")).await;
    assert_eq!(gone.status, 404);
    assert_eq!(
        gone.body,
        json!({"detail": "Annotation template not found"})
    );

    let fb = format!("/v2/projects/{pid}/feedback/templates");
    let f = cx
        .post(&fb, json!({"name": "thumbs", "include_explanation": true, "constraints": {"feedback_type": "like_dislike"}}))
        .await;
    assert_eq!(f.status, 200, "{}", f.body);
    assert_schema("FeedbackTemplateDB", &f.body);
    let fid = f.body["id"].as_str().unwrap();
    assert_schema(
        "FeedbackTemplateDB",
        &cx.get(&format!("{fb}/{fid}")).await.body,
    );
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
