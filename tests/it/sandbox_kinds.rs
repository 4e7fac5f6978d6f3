//! The sandbox's kinds of issue 20 over HTTP (raw JSON, checked against the
//! reference): custom scorers and their append-only versions, pins,
//! restores, scope, the refusal to delete a scorer in use, the code
//! validation (pass and fail) and code versions; prompt templates and
//! their versions; project and log stream writes with the project delete
//! cascade; Protect stages and their version; 422s on bad bodies; races of
//! creates with one name.

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

async fn new_llm_scorer(cx: &Ctx, name: &str) -> String {
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
async fn concurrent_creates_of_one_name_leave_one() {
    let cx = Ctx::new();
    let demo = project("demo-project");
    let scorers = futures::future::join_all((0..8).map(|_| {
        cx.post(
            "/v2/scorers",
            json!({"name": "raced", "scorer_type": "llm"}),
        )
    }))
    .await;
    let path = format!("/v2/projects/{demo}/templates");
    let templates = futures::future::join_all(
        (0..8).map(|_| cx.post(&path, json!({"name": "raced", "template": "t"}))),
    )
    .await;
    for replies in [scorers, templates] {
        let mut statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
        statuses.sort_unstable();
        assert_eq!(statuses, vec![200, 409, 409, 409, 409, 409, 409, 409]);
    }
    let list = cx
        .post(
            "/v2/scorers/list",
            json!({"filters": [{"name": "name", "operator": "eq", "value": "raced"}]}),
        )
        .await;
    assert_eq!(list.body["scorers"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn prompt_templates_version_select_and_delete() {
    let cx = Ctx::new();
    let demo = project("demo-project");
    let base = format!("/v2/projects/{demo}/templates");
    let r = cx
        .post(
            &base,
            json!({"name": "support-answer", "template": "Answer {question}", "settings": {"temperature": 0.3}}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("BasePromptTemplateResponse", &r.body);
    assert_eq!(r.body["max_version"], 1);
    assert_eq!(r.body["selected_version"]["version"], 1);
    let settings = &r.body["selected_version"]["settings"];
    assert_eq!(settings["temperature"], 0.3);
    assert_eq!(
        settings["model_alias"], "gpt-5.1",
        "the reference's default"
    );
    assert_eq!(settings["max_tokens"], 4096);
    let id = r.body["id"].as_str().unwrap().to_owned();
    let r = cx
        .post(&base, json!({"name": "support-answer", "template": "x"}))
        .await;
    assert_eq!(r.status, 409);
    let r = cx
        .post(
            &base,
            json!({"name": {"value": "support-answer", "append_suffix_if_duplicate": true}, "template": "x"}),
        )
        .await;
    assert_eq!(r.body["name"], "support-answer (1)");
    // A new version is max + 1 and selected.
    let r = cx
        .post(
            &format!("{base}/{id}/versions"),
            json!({"template": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "{question}"}], "version": 7}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("BasePromptTemplateVersionResponse", &r.body);
    assert_eq!(r.body["version"], 2);
    assert_eq!(r.body["content_changed"], true);
    assert_eq!(r.body["settings_changed"], true);
    let t = cx.get(&format!("{base}/{id}")).await;
    assert_eq!(t.body["selected_version"]["version"], 2);
    assert_eq!(t.body["all_available_versions"], json!([1, 2]));
    assert!(t.body["template"].as_str().unwrap().contains("Be brief."));
    // Select version 1; read by name.
    let r = cx
        .put(&format!("{base}/{id}/versions/1"), json!(null))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["selected_version"]["version"], 1);
    assert_eq!(r.body["template"], "Answer {question}");
    let by_name = cx
        .get(&format!("{base}/versions?template_name=support-answer"))
        .await;
    assert_eq!(by_name.body["version"], 1);
    let v2 = cx
        .get(&format!(
            "{base}/versions?template_name=support-answer&version=2"
        ))
        .await;
    assert_eq!(v2.body["version"], 2);
    let r = cx.get(&format!("{base}/versions")).await;
    assert_422(&r);
    assert_eq!(locs(&r.body), vec![r#"["query","template_name"]"#]);
    assert_eq!(
        cx.put(&format!("{base}/{id}/versions/9"), json!(null))
            .await
            .status,
        404
    );
    let list = cx.get(&base).await;
    assert_schema_array("BasePromptTemplateResponse", &list.body);
    assert_eq!(list.body.as_array().unwrap().len(), 2);
    // Bad bodies.
    let r = cx.post(&base, json!({"template": ""})).await;
    assert_422(&r);
    // As pydantic reports a union: one fault per member, then the name.
    assert_eq!(
        locs(&r.body),
        vec![
            r#"["body","template","constrained-str"]"#,
            r#"["body","template","list[MessagesListItem]"]"#,
            r#"["body","name"]"#,
        ]
    );
    let r = cx.delete(&format!("{base}/{id}")).await;
    assert_eq!(r.status, 200);
    assert_schema("DeletePromptResponse", &r.body);
    assert_eq!(cx.get(&format!("{base}/{id}")).await.status, 404);
}

#[tokio::test]
async fn global_prompt_templates_query_rename_and_versions() {
    let cx = Ctx::new();
    let demo = project("demo-project");
    let r = cx
        .post(
            &format!("/v2/templates?project_id={demo}"),
            json!({"name": "greeter", "template": "Hello {name}"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let id = r.body["id"].as_str().unwrap().to_owned();
    cx.post(
        "/v2/templates",
        json!({"name": "farewell", "template": "Bye"}),
    )
    .await;
    for n in 2..=3 {
        let r = cx
            .post(
                &format!("/v2/templates/{id}/versions"),
                json!({"template": format!("Hello {{name}} v{n}")}),
            )
            .await;
        assert_eq!(r.body["version"], n);
    }
    let q = cx
        .post(
            "/v2/templates/query?limit=1",
            json!({"filters": [{"name": "used_in_project", "value": demo}], "sort": {"name": "name"}}),
        )
        .await;
    assert_schema("ListPromptTemplateResponse", &q.body);
    assert_eq!(q.body["templates"].as_array().unwrap().len(), 1);
    assert_eq!(q.body["templates"][0]["name"], "greeter");
    assert_eq!(q.body["paginated"], false);
    let all = cx.post("/v2/templates/query?limit=1", json!({})).await;
    assert_eq!(all.body["paginated"], true);
    assert_eq!(all.body["next_starting_token"], 1);
    let v = cx
        .post(
            &format!("/v2/templates/{id}/versions/query"),
            json!({"sort": {"name": "version", "ascending": false}}),
        )
        .await;
    assert_schema("ListPromptTemplateVersionResponse", &v.body);
    let numbers: Vec<i64> = v.body["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_i64().unwrap())
        .collect();
    assert_eq!(numbers, vec![3, 2, 1]);
    let r = cx
        .patch(&format!("/v2/templates/{id}"), json!({"name": "farewell"}))
        .await;
    assert_eq!(r.status, 409);
    let r = cx
        .patch(&format!("/v2/templates/{id}"), json!({"name": "welcomer"}))
        .await;
    assert_eq!(r.body["name"], "welcomer");
    assert_eq!(r.body["max_version"], 3);
    // A global template is not a project's, and the reverse.
    let project_path = format!("/v2/projects/{demo}/templates/{id}");
    assert_eq!(cx.get(&project_path).await.status, 404);
    assert_eq!(
        cx.get(&format!("/v2/templates/{id}/versions/2")).await.body["version"],
        2
    );
    assert_eq!(cx.delete(&format!("/v2/templates/{id}")).await.status, 200);
}

#[tokio::test]
async fn projects_and_log_streams_are_written_and_a_project_delete_cascades() {
    let cx = Ctx::new();
    let r = cx.post("/v2/projects", json!({"name": "new-team"})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("ProjectCreateResponse", &r.body);
    assert_eq!(r.body["type"], "gen_ai");
    let pid = r.body["id"].as_str().unwrap().to_owned();
    assert_eq!(
        cx.post("/v2/projects", json!({"name": "new-team"}))
            .await
            .status,
        409
    );
    let r = cx
        .put(
            &format!("/v2/projects/{pid}"),
            json!({"description": "The new team.", "labels": ["sample"]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("ProjectUpdateResponse", &r.body);
    assert_eq!(r.body["name"], "new-team");
    assert_eq!(r.body["description"], "The new team.");
    let r = cx
        .put(&format!("/v2/projects/{pid}"), json!({"labels": ["vip"]}))
        .await;
    assert_422(&r);
    let r = cx
        .put(&format!("/v2/projects/{pid}"), json!({"owner": "x"}))
        .await;
    assert_422(&r);
    assert_eq!(r.body["detail"][0]["type"], "extra_forbidden");
    // Things under it.
    let ls = cx
        .post(
            &format!("/v2/projects/{pid}/log_streams"),
            json!({"name": "production"}),
        )
        .await;
    let lid = ls.body["id"].as_str().unwrap().to_owned();
    let other = cx
        .post(
            &format!("/v2/projects/{pid}/log_streams"),
            json!({"name": "staging"}),
        )
        .await;
    let r = cx
        .put(
            &format!("/v2/projects/{pid}/log_streams/{lid}"),
            json!({"name": "staging"}),
        )
        .await;
    assert_eq!(r.status, 409);
    let r = cx
        .put(
            &format!("/v2/projects/{pid}/log_streams/{lid}"),
            json!({"name": "prod"}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_schema("LogStreamResponse", &r.body);
    assert_eq!(r.body["name"], "prod");
    let r = cx
        .put(
            &format!("/v2/projects/{pid}/log_streams/{lid}"),
            json!({"name": ""}),
        )
        .await;
    assert_422(&r);
    cx.post(
        &format!("/v2/projects/{pid}/templates"),
        json!({"name": "t", "template": "x"}),
    )
    .await;
    cx.post(
        &format!("/v2/projects/{pid}/stages"),
        json!({"name": "guard", "project_id": pid}),
    )
    .await;
    let scoped = new_llm_scorer(&cx, "team-judge").await;
    cx.put(
        &format!("/v2/scorers/{scoped}/scope"),
        json!({"is_global": false, "project_ids": [pid, project("demo-project")]}),
    )
    .await;
    let osid = other.body["id"].as_str().unwrap();
    let r = cx
        .delete(&format!("/v2/projects/{pid}/log_streams/{osid}"))
        .await;
    assert_eq!(r.status, 204);
    assert_eq!(
        cx.get(&format!("/v2/projects/{pid}/log_streams/{osid}"))
            .await
            .status,
        404
    );
    let before = cx.sb.read_state(|s| s.dashboards.len());
    let r = cx.delete(&format!("/v2/projects/{pid}")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("ProjectDeleteResponse", &r.body);
    assert_eq!(cx.get(&format!("/v2/projects/{pid}")).await.status, 404);
    cx.sb.read_state(|s| {
        assert!(s.log_streams.iter().all(|l| l.project_id != pid));
        assert!(s.dashboards.iter().all(|d| d.project_id != pid));
        assert_eq!(
            s.dashboards.len(),
            before - 1,
            "the remaining log stream's dashboard"
        );
        assert!(
            s.prompt_templates
                .iter()
                .all(|t| t.project_id.as_deref() != Some(pid.as_str()))
        );
        assert!(s.stages.iter().all(|t| t.project_id != pid));
        let scorer = s.scorer(&scoped).unwrap();
        assert_eq!(scorer.project_ids, vec![project("demo-project")]);
    });
    // The demo project with its runs, templates and dashboards.
    let demo = project("demo-project");
    assert_eq!(cx.delete(&format!("/v2/projects/{demo}")).await.status, 200);
    cx.sb.read_state(|s| {
        assert!(s.experiments.iter().all(|e| e.project_id != demo));
        assert!(s.annotation_templates.iter().all(|t| t.project_id != demo));
        assert!(
            s.favorites
                .iter()
                .all(|f| s.log_streams.iter().any(|l| l.id == f.log_stream_id))
        );
    });
}

#[tokio::test]
async fn protect_stages_bump_their_version_and_pause() {
    let cx = Ctx::new();
    let demo = project("demo-project");
    let base = format!("/v2/projects/{demo}/stages");
    let rulesets = json!([{
        "rules": [{"metric": "prompt_injection", "operator": "gt", "target_value": 0.8}],
        "action": {"type": "OVERRIDE", "choices": ["I cannot help with that."],
                   "subscriptions": [{"url": "https://hooks.example.com/protect"}]}
    }]);
    let r = cx
        .post(
            &base,
            json!({"name": "input-guard", "project_id": demo, "prioritized_rulesets": rulesets}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_schema("StageDB", &r.body);
    assert_eq!(r.body["version"], 1);
    assert_eq!(r.body["type"], "local");
    assert_eq!(r.body["paused"], false);
    let sid = r.body["id"].as_str().unwrap().to_owned();
    let r = cx
        .post(&base, json!({"name": "input-guard", "project_id": demo}))
        .await;
    assert_eq!(r.status, 409);
    let r = cx
        .post(
            &base,
            json!({"name": "other", "project_id": project("support-bot")}),
        )
        .await;
    assert_422(&r);
    // Replace the rulesets: the version goes up each time.
    for v in 2..=3 {
        let r = cx
            .post(&format!("{base}/{sid}"), json!({"prioritized_rulesets": [{"rules": [{"metric": "toxicity", "operator": "gte", "target_value": v}], "action": {"type": "PASSTHROUGH"}}]}))
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.body["version"], v);
    }
    let r = cx
        .post(
            &format!("{base}/{sid}"),
            json!({"prioritized_rulesets": [{"rules": []}]}),
        )
        .await;
    assert_422(&r);
    let r = cx
        .call(
            "PUT",
            &format!("{base}/{sid}?pause=true"),
            &Auth::demo(),
            None,
        )
        .await;
    assert_eq!(r.body["paused"], true);
    assert_eq!(r.body["version"], 3, "pausing is not a new version");
    let by_name = cx.get(&format!("{base}?stage_name=input-guard")).await;
    assert_eq!(by_name.body["id"], sid.as_str());
    assert_eq!(by_name.body["paused"], true);
    let r = cx
        .call("PUT", &format!("{base}/{sid}"), &Auth::demo(), None)
        .await;
    assert_eq!(r.body["paused"], false, "pause defaults to false");
    assert_eq!(
        cx.get(&format!("{base}?stage_id={sid}")).await.body["name"],
        "input-guard"
    );
    assert_eq!(cx.get(&format!("{base}?stage_name=nope")).await.status, 404);
    assert_422(&cx.get(&base).await);
    assert_eq!(
        cx.delete(&format!("{base}/{sid}")).await.status,
        405,
        "no delete"
    );
}

#[tokio::test]
async fn the_new_kinds_survive_a_restart_with_a_state_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.json");
    let demo = project("demo-project");
    let (sid, tid) = {
        let cx = Ctx::with(evalctl::sandbox::Sandbox::builder().state_file(&path));
        let s = cx
            .post(
                &format!("/v2/projects/{demo}/stages"),
                json!({"name": "g", "project_id": demo}),
            )
            .await;
        let t = cx
            .post(
                &format!("/v2/projects/{demo}/templates"),
                json!({"name": "t", "template": "x"}),
            )
            .await;
        let sid = s.body["id"].as_str().unwrap().to_owned();
        cx.post(
            &format!("/v2/projects/{demo}/stages/{sid}"),
            json!({"prioritized_rulesets": []}),
        )
        .await;
        (sid, t.body["id"].as_str().unwrap().to_owned())
    };
    let cx = Ctx::with(evalctl::sandbox::Sandbox::builder().state_file(&path));
    let s = cx
        .get(&format!("/v2/projects/{demo}/stages?stage_id={sid}"))
        .await;
    assert_eq!(s.body["version"], 2);
    let t = cx
        .get(&format!("/v2/projects/{demo}/templates/{tid}"))
        .await;
    assert_eq!(t.status, 200);
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
