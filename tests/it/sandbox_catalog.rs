//! Contract tests of the scorer catalog (spec operation 6 and the
//! reference's reads) and of templates (spec operations 7 and 8, and the
//! reference's create/patch/delete).

use crate::sandbox_support;

use sandbox_support::*;
use serde_json::{Value, json};

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
