//! 422s as the service (FastAPI + pydantic) gives them: exact `loc`s and
//! error types for malformed path ids, bodies, fields, enumerations,
//! limits and query values; every fault of a request reported at once;
//! never a 500.

use crate::sandbox_support;

use sandbox_support::*;
use serde_json::{Value, json};

fn settings_path() -> String {
    format!("{}/metric_settings", production())
}

fn detail_at<'a>(body: &'a Value, loc: &str) -> &'a Value {
    body["detail"]
        .as_array()
        .and_then(|d| {
            let want: Value = serde_json::from_str(loc).expect("a JSON loc");
            d.iter().find(|e| e["loc"] == want)
        })
        .unwrap_or_else(|| panic!("no detail at {loc}: {body}"))
}

#[tokio::test]
async fn malformed_path_uuid() {
    let cx = Ctx::new();
    let r = cx
        .patch(
            &format!(
                "/v2/projects/not-a-uuid/log_streams/{}/metric_settings",
                log_stream("demo-project", "production")
            ),
            json!({}),
        )
        .await;
    assert_422(&r);
    let d = detail_at(&r.body, r#"["path","project_id"]"#);
    assert_eq!(d["type"], "uuid_parsing");
    assert_eq!(d["input"], "not-a-uuid");
    assert!(
        d["msg"]
            .as_str()
            .unwrap()
            .starts_with("Input should be a valid UUID")
    );
    assert_eq!(locs(&r.body).len(), 1);
    // Two bad ids: both reported, in the operation's parameter order.
    let r = cx.get("/v2/projects/x/log_streams/y").await;
    assert_422(&r);
    assert_eq!(
        locs(&r.body),
        vec![r#"["path","log_stream_id"]"#, r#"["path","project_id"]"#]
    );
}

#[tokio::test]
async fn missing_and_malformed_bodies() {
    let cx = Ctx::new();
    let r = cx
        .call("PATCH", &settings_path(), &Auth::demo(), None)
        .await;
    assert_422(&r);
    assert_eq!(r.body["detail"][0]["type"], "missing");
    assert_eq!(r.body["detail"][0]["loc"], json!(["body"]));

    let r = cx
        .raw(
            "PATCH",
            &settings_path(),
            &Auth::demo(),
            Some("application/json"),
            Some(b"{\"scorers\": [".to_vec()),
        )
        .await;
    assert_422(&r);
    let d = &r.body["detail"][0];
    assert_eq!(d["type"], "json_invalid");
    assert_eq!(d["loc"][0], "body");
    assert!(d["loc"][1].is_u64(), "character offset: {d}");
    assert_eq!(d["msg"], "JSON decode error");

    let r = cx
        .raw(
            "PATCH",
            &settings_path(),
            &Auth::demo(),
            Some("application/json"),
            Some(b"[1, 2]".to_vec()),
        )
        .await;
    assert_422(&r);
}

#[tokio::test]
async fn field_faults_each_at_its_location() {
    let cx = Ctx::new();
    // Missing required field.
    let r = cx
        .patch(
            &settings_path(),
            json!({"scorers": [{"id": scorer("bleu")}]}),
        )
        .await;
    assert_422(&r);
    assert_eq!(
        detail_at(&r.body, r#"["body","scorers",0,"scorer_type"]"#)["type"],
        "missing"
    );
    // Value outside an enumeration.
    let r = cx
        .patch(
            &settings_path(),
            json!({"scorers": [{"id": scorer("bleu"), "scorer_type": "magic"}]}),
        )
        .await;
    assert_422(&r);
    let d = detail_at(&r.body, r#"["body","scorers",0,"scorer_type"]"#);
    assert_eq!(d["type"], "enum");
    assert_eq!(d["input"], "magic");
    // Wrong type.
    let r = cx
        .patch(
            &settings_path(),
            json!({"segment_filters": [{"sample_rate": [0.5]}]}),
        )
        .await;
    assert_422(&r);
    assert!(
        locs(&r.body)
            .iter()
            .all(|l| l.starts_with(r#"["body","segment_filters",0,"sample_rate""#)),
        "{}",
        r.body
    );
    // sample_rate outside [0, 1].
    let r = cx
        .patch(
            &settings_path(),
            json!({"segment_filters": [{"sample_rate": 1.5}, {"sample_rate": -0.1}]}),
        )
        .await;
    assert_422(&r);
    let d = detail_at(&r.body, r#"["body","segment_filters",0,"sample_rate"]"#);
    assert_eq!(d["type"], "less_than_equal");
    assert_eq!(d["msg"], "Input should be less than or equal to 1");
    assert_eq!(d["input"], 1.5);
    let d = detail_at(&r.body, r#"["body","segment_filters",1,"sample_rate"]"#);
    assert_eq!(d["type"], "greater_than_equal");
    // Boundaries are inclusive.
    let ok = cx
        .patch(
            &settings_path(),
            json!({"segment_filters": [{"sample_rate": 0}, {"sample_rate": 1}]}),
        )
        .await;
    assert_eq!(ok.status, 200, "{}", ok.body);
}

#[tokio::test]
async fn all_faults_of_one_request_are_reported_together() {
    let cx = Ctx::new();
    let r = cx
        .patch(
            &format!("/v2/projects/bad/log_streams/{}/metric_settings", log_stream("demo-project", "production")),
            json!({
                "scorers": [{"id": scorer("bleu"), "scorer_type": "nope"}, {"scorer_type": "preset"}],
                "segment_filters": [{"sample_rate": 2}, {"filter": {"name": "modality", "operator": "gt", "value": "image"}}]
            }),
        )
        .await;
    assert_422(&r);
    let l = locs(&r.body);
    for expected in [
        r#"["path","project_id"]"#,
        r#"["body","scorers",0,"scorer_type"]"#,
        r#"["body","scorers",1,"id"]"#,
        r#"["body","segment_filters",0,"sample_rate"]"#,
        r#"["body","segment_filters",1,"sample_rate"]"#,
    ] {
        assert!(
            l.contains(&expected.to_owned()),
            "{expected} missing from {l:?}"
        );
    }
    assert!(l.iter().any(|x| x.contains("operator")), "{l:?}");
    assert_eq!(l[0], r#"["path","project_id"]"#, "path faults first");
}

#[tokio::test]
async fn template_limits() {
    let cx = Ctx::new();
    let path = format!(
        "/v2/projects/{}/annotation/templates",
        project("demo-project")
    );
    let r = cx
        .post(
            &path,
            json!({"name": "", "criteria": "", "constraints": {"annotation_type": "star"}}),
        )
        .await;
    assert_422(&r);
    assert_eq!(
        detail_at(&r.body, r#"["body","name"]"#)["type"],
        "string_too_short"
    );
    assert_eq!(
        detail_at(&r.body, r#"["body","criteria"]"#)["type"],
        "string_too_short"
    );
    let r = cx
        .post(
            &path,
            json!({"name": "x".repeat(256), "constraints": {"annotation_type": "star"}}),
        )
        .await;
    assert_422(&r);
    assert_eq!(
        detail_at(&r.body, r#"["body","name"]"#)["type"],
        "string_too_long"
    );
    let ok = cx
        .post(
            &path,
            json!({"name": "x".repeat(255), "constraints": {"annotation_type": "star"}}),
        )
        .await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    let r = cx
        .post(
            &path,
            json!({"name": "n", "constraints": {"annotation_type": "rainbow"}}),
        )
        .await;
    assert_422(&r);
    let r = cx
        .post(
            &path,
            json!({"name": "n", "constraints": {"annotation_type": "score", "min": -1, "max": 5}}),
        )
        .await;
    assert_422(&r);
    assert!(locs(&r.body)[0].contains("min"), "{}", r.body);
    let r = cx
        .post(
            &path,
            json!({"name": "n", "constraints": {"annotation_type": "tree_choice"}}),
        )
        .await;
    assert_422(&r);
    let tid = template("demo-project", "star-annotation");
    let r = cx
        .patch(&format!("{path}/{tid}"), json!({"name": "only-name"}))
        .await;
    assert_422(&r);
    assert_eq!(
        detail_at(&r.body, r#"["body","criteria"]"#)["type"],
        "missing"
    );
    // Feedback choices need 2 to 50.
    let fb = format!(
        "/v2/projects/{}/feedback/templates",
        project("demo-project")
    );
    let r = cx
        .post(
            &fb,
            json!({"name": "c", "constraints": {"feedback_type": "choice", "choices": ["one"]}}),
        )
        .await;
    assert_422(&r);
}

#[tokio::test]
async fn section_limits() {
    let cx = Ctx::new();
    let path = format!("{}/trends/sections", production());
    let r = cx
        .post(
            &path,
            json!({"name": "", "description": "d".repeat(501), "color": "red"}),
        )
        .await;
    assert_422(&r);
    assert_eq!(
        detail_at(&r.body, r#"["body","name"]"#)["type"],
        "string_too_short"
    );
    assert_eq!(
        detail_at(&r.body, r#"["body","description"]"#)["type"],
        "string_too_long"
    );
    let color = detail_at(&r.body, r#"["body","color"]"#);
    assert!(
        color["type"] == "string_pattern_mismatch" || color["type"] == "string_too_long",
        "{color}"
    );
    let r = cx.post(&path, json!({"name": "n".repeat(101)})).await;
    assert_422(&r);
    assert_eq!(
        detail_at(&r.body, r#"["body","name"]"#)["type"],
        "string_too_long"
    );
    let r = cx.post(&path, json!({"description": "no name"})).await;
    assert_422(&r);
    assert_eq!(detail_at(&r.body, r#"["body","name"]"#)["type"], "missing");
    // At most 50 sections per dashboard (production's default has 2).
    for i in 0..48 {
        let ok = cx.post(&path, json!({"name": format!("s{i}")})).await;
        assert_eq!(ok.status, 200, "{i}: {}", ok.body);
    }
    let r = cx.post(&path, json!({"name": "one too many"})).await;
    assert_422(&r);
}

#[tokio::test]
async fn bad_query_values() {
    let cx = Ctx::new();
    let dashboard = default_dashboard(&log_stream("demo-project", "production"));
    let r = cx
        .call(
            "POST",
            &format!(
                "{}/trends/dashboards/{dashboard}/favorite?visibility=foo",
                production()
            ),
            &Auth::demo(),
            None,
        )
        .await;
    assert_422(&r);
    let d = detail_at(&r.body, r#"["query","visibility"]"#);
    assert_eq!(d["type"], "enum");
    assert_eq!(d["input"], "foo");
    let r = cx
        .call(
            "GET",
            &format!(
                "/v2/scorers/versions/{}/projects?starting_token=abc&limit=x",
                version("bleu", 1)
            ),
            &Auth::demo(),
            None,
        )
        .await;
    assert_422(&r);
    assert_eq!(
        detail_at(&r.body, r#"["query","starting_token"]"#)["type"],
        "int_parsing"
    );
    assert_eq!(
        detail_at(&r.body, r#"["query","limit"]"#)["type"],
        "int_parsing"
    );
    let r = cx
        .get(&format!("{}/trends?trends_dashboard_id=nope", production()))
        .await;
    assert_422(&r);
    assert_eq!(locs(&r.body), vec![r#"["query","trends_dashboard_id"]"#]);
    let r = cx
        .delete(&format!(
            "{}/trends/sections/{}?ungroup=maybe",
            production(),
            dashboard
        ))
        .await;
    assert_422(&r);
    assert_eq!(
        detail_at(&r.body, r#"["query","ungroup"]"#)["type"],
        "bool_parsing"
    );
}

#[tokio::test]
async fn search_body_faults() {
    let cx = Ctx::new();
    let path = format!(
        "/v2/projects/{}/log_streams/search",
        project("demo-project")
    );
    let r = cx
        .post(
            &path,
            json!({"filters": [
                {"name": "created_at", "operator": "contains", "value": "2025-01-01T00:00:00Z"},
                {"name": "color", "operator": "eq", "value": "x"},
                {"name": "experiment_group_id", "value": "6f1c2a4e-8e0b-4c2a-9f5e-1b2c3d4e5f60"}
            ], "sort": {"name": "size"}}),
        )
        .await;
    assert_422(&r);
    let l = locs(&r.body);
    assert!(
        l.iter().any(|x| x.starts_with(r#"["body","filters",0"#)),
        "{l:?}"
    );
    assert!(
        l.iter().any(|x| x.starts_with(r#"["body","filters",1"#)),
        "{l:?}"
    );
    assert!(
        l.iter().any(|x| x.starts_with(r#"["body","filters",2"#)),
        "log streams have no group filter: {l:?}"
    );
    assert!(
        l.iter().any(|x| x.starts_with(r#"["body","sort""#)),
        "{l:?}"
    );
}

#[tokio::test]
async fn integration_422s_never_echo_a_secret() {
    let cx = Ctx::new();
    let r = cx
        .put(
            "/v2/integrations/azure",
            json!({"token": "sk-SECRET-VALUE", "proxy": "maybe"}),
        )
        .await;
    assert_422(&r);
    assert_eq!(
        detail_at(&r.body, r#"["body","endpoint"]"#)["type"],
        "missing"
    );
    assert!(
        !r.body.to_string().contains("sk-SECRET-VALUE"),
        "{}",
        r.body
    );
    let r = cx
        .put("/v2/integrations/openai", json!({"token": 42}))
        .await;
    assert_422(&r);
    assert!(!r.body.to_string().contains("42"), "{}", r.body);
}

#[tokio::test]
async fn bodies_are_capped() {
    let cx = Ctx::new();
    let big = vec![b' '; 1024 * 1024 + 1];
    let r = cx
        .raw(
            "PATCH",
            &settings_path(),
            &Auth::demo(),
            Some("application/json"),
            Some(big),
        )
        .await;
    assert_eq!(r.status, 413);
    assert!(r.body["detail"].is_string());
}

#[tokio::test]
async fn hostile_bodies_never_cause_a_500() {
    let cx = Ctx::new();
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let cases: Vec<Vec<u8>> = vec![
        deep.into_bytes(),
        b"\xff\xfe".to_vec(),
        b"{\"scorers\": [{\"id\": 1e999, \"scorer_type\": \"preset\"}]}".to_vec(),
        b"{\"scorers\": null, \"segment_filters\": [{\"sample_rate\": NaN}]}".to_vec(),
        b"null".to_vec(),
        b"\"string\"".to_vec(),
        br#"{"scorers": [{"id": "6f1c2a4e-8e0b-4c2a-9f5e-1b2c3d4e5f60", "scorer_type": "preset", "filters": [{"name": "nope"}]}]}"#.to_vec(),
    ];
    for body in cases {
        let r = cx
            .raw(
                "PATCH",
                &settings_path(),
                &Auth::demo(),
                Some("application/json"),
                Some(body.clone()),
            )
            .await;
        assert!(
            r.status == 422 || r.status == 400,
            "{} for {:?}: {}",
            r.status,
            String::from_utf8_lossy(&body[..body.len().min(40)]),
            r.body
        );
    }
}
