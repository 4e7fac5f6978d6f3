//! Prompt templates, project and log stream writes (with the project
//! delete cascade) and Protect stages of the sandbox over HTTP (raw JSON,
//! checked against the reference); races of creates with one name; the new
//! collections across a restart with a state file.

use crate::sandbox_custom_scorers::new_llm_scorer;
use crate::sandbox_support;

use sandbox_support::*;
use serde_json::json;

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
            json!({"name": "faq-answer", "template": "Answer {question}", "settings": {"temperature": 0.3}}),
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
        .post(&base, json!({"name": "faq-answer", "template": "x"}))
        .await;
    assert_eq!(r.status, 409);
    let r = cx
        .post(
            &base,
            json!({"name": {"value": "faq-answer", "append_suffix_if_duplicate": true}, "template": "x"}),
        )
        .await;
    assert_eq!(r.body["name"], "faq-answer (1)");
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
        .get(&format!("{base}/versions?template_name=faq-answer"))
        .await;
    assert_eq!(by_name.body["version"], 1);
    let v2 = cx
        .get(&format!(
            "{base}/versions?template_name=faq-answer&version=2"
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
    let names: Vec<&str> = list
        .body
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(
        names,
        vec!["support-answer", "faq-answer", "faq-answer (1)"],
        "the fixture's, then this test's"
    );
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
            s.kinds
                .prompt_templates
                .iter()
                .all(|t| t.project_id.as_deref() != Some(pid.as_str()))
        );
        assert!(s.kinds.stages.iter().all(|t| t.project_id != pid));
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
