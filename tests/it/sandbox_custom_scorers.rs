//! Custom scorers of the sandbox over HTTP (raw JSON and multipart bodies,
//! checked against the reference): version numbering, pins and restores,
//! scope and tags, the refusal to delete a scorer in use, the code
//! validation (pass and fail) and code versions, faults on the new routes.

use crate::sandbox_support;

use evalctl::sandbox::fixture::catalog;
use sandbox_support::*;
use serde_json::{Value, json};

const BOUNDARY: &str = "kinds-boundary";

fn multipart(fields: &[(&str, &str)]) -> Vec<u8> {
    let mut out = String::new();
    for (name, value) in fields {
        let filename = if *name == "file" {
            "; filename=\"scorer.py\""
        } else {
            ""
        };
        out.push_str(&format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"{filename}\r\n\r\n{value}\r\n"
        ));
    }
    out.push_str(&format!("--{BOUNDARY}--\r\n"));
    out.into_bytes()
}

async fn post_form(cx: &Ctx, path: &str, fields: &[(&str, &str)]) -> Reply {
    cx.raw(
        "POST",
        path,
        &Auth::demo(),
        Some(&format!("multipart/form-data; boundary={BOUNDARY}")),
        Some(multipart(fields)),
    )
    .await
}

fn judge_template(word: &str) -> Value {
    json!({"template": format!("Is the answer {word}? {{{{ output }}}}"), "metric_system_prompt": "Judge."})
}

pub async fn new_llm_scorer(cx: &Ctx, name: &str) -> String {
    let r = cx
        .post(
            "/v2/scorers",
            json!({"name": name, "scorer_type": "llm", "description": "d", "tags": ["team-a"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("ScorerResponse", &r.body);
    assert!(r.body["latest_version"].is_null());
    r.body["id"].as_str().expect("id").to_owned()
}

#[tokio::test]
async fn scorer_versions_are_numbered_append_only_and_pins_hold() {
    let cx = Ctx::new();
    let id = new_llm_scorer(&cx, "judge").await;
    // The first version needs a prompt.
    let r = cx
        .post(&format!("/v2/scorers/{id}/version/llm"), json!({}))
        .await;
    assert_422(&r);
    assert_eq!(locs(&r.body), vec![r#"["body","chain_poll_template"]"#]);
    let mut version_ids = Vec::new();
    for (n, word) in [(1, "helpful"), (2, "useful"), (3, "kind")] {
        let r = cx
            .post(
                &format!("/v2/scorers/{id}/version/llm"),
                json!({"chain_poll_template": judge_template(word), "num_judges": n + 1}),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_schema("BaseScorerVersionResponse", &r.body);
        assert_eq!(r.body["version"], n);
        assert_eq!(r.body["num_judges"], n + 1);
        assert_eq!(
            r.body["model_name"], "gpt-4.1-mini",
            "the service's default"
        );
        version_ids.push(r.body["id"].as_str().unwrap().to_owned());
    }
    // Pin version 2; a new version keeps the pin and becomes the latest.
    let r = cx
        .patch(
            &format!("/v2/scorers/{id}"),
            json!({"default_version_id": version_ids[1]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["default_version"]["version"], 2);
    let r = cx
        .post(
            &format!("/v2/scorers/{id}/version/llm"),
            json!({"num_judges": 1}),
        )
        .await;
    assert_eq!(r.body["version"], 4);
    assert_eq!(
        r.body["chain_poll_template"]["template"], "Is the answer kind? {{ output }}",
        "an omitted prompt is the latest's"
    );
    let s = cx.get(&format!("/v2/scorers/{id}")).await;
    assert_eq!(s.body["latest_version"]["version"], 4);
    assert_eq!(s.body["default_version_id"], version_ids[1].as_str());
    // Older versions are unchanged.
    let v1 = cx.get(&format!("/v2/scorers/{id}/version?version=1")).await;
    assert_eq!(v1.body["num_judges"], 2);
    assert_eq!(
        v1.body["chain_poll_template"]["template"],
        "Is the answer helpful? {{ output }}"
    );
    // Restore copies version 1 as version 5.
    let r = cx
        .post(&format!("/v2/scorers/{id}/versions/1/restore"), json!(null))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("BaseScorerVersionResponse", &r.body);
    assert_eq!(r.body["version"], 5);
    assert_eq!(r.body["num_judges"], 2);
    assert_ne!(r.body["id"], version_ids[0].as_str());
    let r = cx
        .post(&format!("/v2/scorers/{id}/versions/9/restore"), json!(null))
        .await;
    assert_eq!(r.status, 404);
    // A pin must name a version of this scorer; unpinning is a null.
    let r = cx
        .patch(
            &format!("/v2/scorers/{id}"),
            json!({"default_version_id": version("correctness", 1)}),
        )
        .await;
    assert_422(&r);
    let r = cx
        .patch(
            &format!("/v2/scorers/{id}"),
            json!({"default_version_id": null}),
        )
        .await;
    assert!(r.body["default_version_id"].is_null());
    let versions = cx.get(&format!("/v2/scorers/{id}/versions")).await;
    let numbers: Vec<i64> = versions.body["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_i64().unwrap())
        .collect();
    assert_eq!(numbers, vec![5, 4, 3, 2, 1]);
    // Judges are 1 to 10.
    let r = cx
        .post(
            &format!("/v2/scorers/{id}/version/llm"),
            json!({"num_judges": 11}),
        )
        .await;
    assert_422(&r);
    assert_eq!(r.body["detail"][0]["type"], "less_than_equal");
}

#[tokio::test]
async fn scorer_metadata_scope_tags_and_names() {
    let cx = Ctx::new();
    let id = new_llm_scorer(&cx, "judge").await;
    // A second create of the name is refused, case-sensitively.
    let r = cx
        .post(
            "/v2/scorers",
            json!({"name": "judge", "scorer_type": "code"}),
        )
        .await;
    assert_eq!(r.status, 409, "{}", r.body);
    let r = cx
        .patch(
            &format!("/v2/scorers/{id}"),
            json!({"name": catalog::LLM_SCORER}),
        )
        .await;
    assert_eq!(r.status, 409);
    let r = cx
        .patch(
            &format!("/v2/scorers/{id}"),
            json!({"description": "Judges answers.", "tags": ["team-b", "prod"]}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["description"], "Judges answers.");
    assert_eq!(r.body["name"], "judge", "absent fields are kept");
    let tags = cx.get("/v2/scorers/tags").await;
    let tags: Vec<&str> = tags
        .body
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        tags.contains(&"team-b") && tags.contains(&"preset"),
        "{tags:?}"
    );
    let mut sorted = tags.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(tags, sorted);
    // Scope: exactly the projects named, listed by name.
    let demo = project("demo-project");
    let r = cx
        .put(
            &format!("/v2/scorers/{id}/scope"),
            json!({"is_global": false, "project_ids": [demo]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["is_global"], false);
    let p = cx.get(&format!("/v2/scorers/{id}/projects")).await;
    assert_schema(
        "api__schemas__project_v2__GetProjectsPaginatedResponse",
        &p.body,
    );
    assert_eq!(p.body["projects"][0]["name"], "demo-project");
    assert_eq!(p.body["total_count"], 1);
    let r = cx
        .put(
            &format!("/v2/scorers/{id}/scope"),
            json!({"is_global": true, "project_ids": [demo]}),
        )
        .await;
    assert_422(&r);
    let r = cx
        .put(
            &format!("/v2/scorers/{id}/scope"),
            json!({"is_global": true}),
        )
        .await;
    assert_eq!(r.body["is_global"], true);
    let p = cx.get(&format!("/v2/scorers/{id}/projects")).await;
    assert_eq!(p.body["total_count"], 0);
    // Presets are read-only; a read-only user changes nothing.
    let r = cx
        .patch(
            &format!("/v2/scorers/{}", scorer("correctness")),
            json!({"tags": []}),
        )
        .await;
    assert_eq!(r.status, 403);
    let viewer = Auth::Key(VIEWER_KEY.into());
    let r = cx
        .call(
            "PATCH",
            &format!("/v2/scorers/{id}"),
            &viewer,
            Some(json!({"tags": []})),
        )
        .await;
    assert_eq!(r.status, 403);
    // Bad bodies: every fault in one 422.
    let r = cx
        .post("/v2/scorers", json!({"scorer_type": "judge", "tags": "x"}))
        .await;
    assert_422(&r);
    let l = locs(&r.body);
    assert!(l.contains(&r#"["body","name"]"#.to_owned()), "{l:?}");
    assert!(l.contains(&r#"["body","scorer_type"]"#.to_owned()), "{l:?}");
    assert!(l.contains(&r#"["body","tags"]"#.to_owned()), "{l:?}");
}

#[tokio::test]
async fn a_scorer_in_use_is_not_deleted_and_the_refusal_names_its_users() {
    let cx = Ctx::new();
    let llm = scorer(catalog::LLM_SCORER);
    let r = cx.delete(&format!("/v2/scorers/{llm}")).await;
    assert_422(&r);
    let d = &r.body["detail"][0];
    assert_eq!(d["loc"], json!(["path", "scorer_id"]));
    let msg = d["msg"].as_str().unwrap();
    assert!(
        msg.contains("experiment \"baseline-eval\" of project \"demo-project\""),
        "{msg}"
    );
    assert!(
        d["ctx"]["used_by"]
            .as_array()
            .unwrap()
            .contains(&json!({"project": "demo-project", "experiment": "baseline-eval"})),
        "{d}"
    );
    assert_eq!(cx.get(&format!("/v2/scorers/{llm}")).await.status, 200);
    // Unused once the settings no longer name it: deleted.
    let baseline = format!(
        "/v2/projects/{}/experiments/{}/metric_settings",
        project("demo-project"),
        experiment("demo-project", "baseline-eval")
    );
    let r = cx.patch(&baseline, json!({"scorers": []})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = cx.delete(&format!("/v2/scorers/{llm}")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("DeleteScorerResponse", &r.body);
    assert_eq!(cx.get(&format!("/v2/scorers/{llm}")).await.status, 404);
}

/// Validates `file`, polls until the task completes; returns the polls'
/// statuses and the final result.
async fn validate(cx: &Ctx, file: &str) -> (Vec<String>, Value) {
    let r = post_form(cx, "/v2/scorers/code/validate", &[("file", file)]).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("ValidateCodeScorerResponse", &r.body);
    let task = r.body["task_id"].as_str().expect("task id").to_owned();
    let mut statuses = Vec::new();
    for _ in 0..5 {
        let p = cx.get(&format!("/v2/scorers/code/validate/{task}")).await;
        assert_eq!(p.status, 200, "{}", p.body);
        assert_schema("RegisteredScorerTaskResultResponse", &p.body);
        let status = p.body["status"].as_str().expect("status").to_owned();
        statuses.push(status.clone());
        if status == "completed" {
            return (statuses, p.body["result"].clone());
        }
    }
    panic!("the task never completed: {statuses:?}");
}

#[tokio::test]
async fn code_versions_need_a_passing_validation_of_the_same_file() {
    let cx = Ctx::new();
    let code = scorer(catalog::CODE_SCORER);
    let good =
        "import re\n\ndef scorer_fn(*, node_output: str, **kwargs) -> float:\n    return 1.0\n";
    let (statuses, result) = validate(&cx, good).await;
    assert_eq!(statuses, vec!["pending", "completed"]);
    assert_eq!(result["result"]["result_type"], "valid");
    assert_eq!(result["result"]["score_type"], "float");
    let result_text = result.to_string();
    let path = format!("/v2/scorers/{code}/version/code");
    // Another file with this result: refused.
    let other = "def scorer_fn(**kw) -> float:\n    return 0.0\n";
    let r = post_form(
        &cx,
        &path,
        &[("file", other), ("validation_result", &result_text)],
    )
    .await;
    assert_422(&r);
    assert_eq!(locs(&r.body), vec![r#"["body","validation_result"]"#]);
    let r = post_form(
        &cx,
        &path,
        &[("file", good), ("validation_result", &result_text)],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("BaseScorerVersionResponse", &r.body);
    assert_eq!(r.body["version"], 3, "after the fixture's two");
    assert_eq!(r.body["registered_scorer"]["score_type"], "float");
    let back = cx.get(&format!("{path}?version=3")).await;
    assert_eq!(back.body, json!(good));
    let latest = cx.get(&path).await;
    assert_eq!(latest.body, json!(good));

    // A file without the entry point fails, with the service's message; no
    // version comes of it.
    let bad = "def score(output):\n    return True\n";
    let (_, failed) = validate(&cx, bad).await;
    assert_eq!(failed["result"]["result_type"], "invalid");
    let message = failed["result"]["error_message"].as_str().unwrap();
    assert!(message.contains("scorer_fn"), "{message}");
    let r = post_form(
        &cx,
        &path,
        &[("file", bad), ("validation_result", &failed.to_string())],
    )
    .await;
    assert_422(&r);
    assert!(
        r.body["detail"][0]["msg"]
            .as_str()
            .unwrap()
            .contains("scorer_fn")
    );
    let versions = cx.get(&format!("/v2/scorers/{code}/versions")).await;
    assert_eq!(versions.body["versions"].as_array().unwrap().len(), 3);

    // A pending task's result cannot be used yet; a missing file is a 422.
    let r = post_form(&cx, "/v2/scorers/code/validate", &[("file", good)]).await;
    let task = r.body["task_id"].as_str().unwrap();
    assert_eq!(
        cx.get(&format!("/v2/scorers/code/validate/{task}"))
            .await
            .body["result"],
        Value::Null
    );
    let r = post_form(&cx, &path, &[("validation_result", "{}")]).await;
    assert_422(&r);
    assert_eq!(locs(&r.body), vec![r#"["body","file"]"#]);
    let r = cx
        .call(
            "POST",
            "/v2/scorers/code/validate",
            &Auth::demo(),
            Some(json!({"file": "x"})),
        )
        .await;
    assert_422(&r);
    // An LLM scorer takes no code version.
    let r = post_form(
        &cx,
        &format!("/v2/scorers/{}/version/code", scorer(catalog::LLM_SCORER)),
        &[("file", good), ("validation_result", &result_text)],
    )
    .await;
    assert_422(&r);
}

#[tokio::test]
async fn faults_apply_to_the_new_routes_and_an_ambiguous_create_landed() {
    let cx = Ctx::new();
    cx.sb.set_faults(evalctl::sandbox::Faults {
        fail_after_rate: 1.0,
        fail_statuses: vec![502],
        path_contains: Some("/v2/scorers".into()),
        method: Some("POST".into()),
        ..evalctl::sandbox::Faults::default()
    });
    let r = cx
        .post(
            "/v2/scorers",
            json!({"name": "ambiguous", "scorer_type": "llm"}),
        )
        .await;
    assert_eq!(r.status, 502);
    cx.sb.set_faults(evalctl::sandbox::Faults::default());
    // Processed before the 502: reading back finds it, sending again is a 409.
    let list = cx
        .post(
            "/v2/scorers/list",
            json!({"filters": [{"name": "name", "operator": "eq", "value": "ambiguous"}]}),
        )
        .await;
    assert_eq!(list.body["scorers"].as_array().unwrap().len(), 1);
    let again = cx
        .post(
            "/v2/scorers",
            json!({"name": "ambiguous", "scorer_type": "llm"}),
        )
        .await;
    assert_eq!(again.status, 409);
}
