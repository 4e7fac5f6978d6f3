//! The JSON Schemas of `-o json` output (`schemas/evalctl-plan.schema.json`,
//! `schemas/evalctl-apply-report.schema.json`): the checked-in copies are
//! fresh and valid draft 2020-12 schemas, and what the commands print conforms
//! to them: plan and drift documents, and the one document `apply -o json`
//! prints whatever happened (changes, no changes, an in-process sandbox).

use crate::e2e_support;
use crate::render_support;

use e2e_support::{TestContext, repo_root};
use evalctl::plan::ApplyReport;
use evalctl::render::schema::{APPLY_SCHEMA_FILE, PLAN_SCHEMA_FILE, apply_schema, plan_schema};
use evalctl::render::{APPLY_FORMAT_VERSION, Format, Mode};
use render_support::*;
use serde_json::{Value, json};

fn checked_in(file: &str) -> String {
    std::fs::read_to_string(repo_root().join("schemas").join(file)).unwrap_or_default()
}

fn validator(text: &str) -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(text).expect("the schema is JSON");
    if let Err(e) = jsonschema::meta::validate(&schema) {
        panic!("not a valid JSON Schema: {e}");
    }
    jsonschema::validator_for(&schema).expect("the schema compiles")
}

#[track_caller]
fn conforms(validator: &jsonschema::Validator, document: &str) -> Value {
    let value: Value = serde_json::from_str(document)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}):\n{document}"));
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}\n{document}");
    value
}

#[test]
fn the_checked_in_schemas_are_fresh() {
    for (file, wanted) in [
        (PLAN_SCHEMA_FILE, plan_schema()),
        (APPLY_SCHEMA_FILE, apply_schema()),
    ] {
        assert!(
            checked_in(file) == wanted,
            "schemas/{file} is stale: run `cargo run -- schema` and commit the result"
        );
        let schema: Value = serde_json::from_str(&wanted).expect("JSON");
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert!(
            schema["$id"]
                .as_str()
                .is_some_and(|id| id.starts_with("urn:evalctl:"))
        );
    }
}

#[test]
fn rendered_plans_and_reports_conform() {
    let plans = validator(&plan_schema());
    for plan in [
        full_plan(),
        long_text_plan(),
        many_changes(50),
        three_way_plan(),
    ] {
        for mode in [Mode::Plan, Mode::Drift] {
            conforms(&plans, &render(&plan, Format::Json, &opts(mode)));
        }
    }
    let reports = validator(&apply_schema());
    for report in [apply_report(), ApplyReport::default()] {
        let doc = conforms(
            &reports,
            &render_report(&report, Format::Json, &opts(Mode::Plan)),
        );
        assert_eq!(doc["format_version"], APPLY_FORMAT_VERSION);
    }
}

#[test]
fn the_schemas_refuse_what_evalctl_never_prints() {
    let plans = validator(&plan_schema());
    let reports = validator(&apply_schema());
    let plan =
        serde_json::from_str::<Value>(&render(&full_plan(), Format::Json, &opts(Mode::Plan)))
            .expect("JSON");
    assert!(plans.is_valid(&plan));
    let broken = |edit: &dyn Fn(&mut Value)| {
        let mut doc = plan.clone();
        edit(&mut doc);
        doc
    };
    for doc in [
        broken(&|d| d["mode"] = json!("apply")),
        broken(&|d| d["changes"][0]["action"] = json!("upsert")),
        broken(&|d| d["changes"][0]["address"] = json!({"type": "project"})),
        broken(&|d| d["summary"]["create"] = json!(-1)),
        broken(&|d| {
            if let Some(m) = d.as_object_mut() {
                m.remove("changes");
            }
        }),
    ] {
        assert!(!plans.is_valid(&doc), "accepted {doc}");
    }
    let report = serde_json::from_str::<Value>(&render_report(
        &apply_report(),
        Format::Json,
        &opts(Mode::Plan),
    ))
    .expect("JSON");
    assert!(reports.is_valid(&report));
    let mut without_plan = report.clone();
    if let Some(m) = without_plan.as_object_mut() {
        m.remove("plan");
    }
    assert!(!reports.is_valid(&without_plan));
    let mut bad_status = report;
    bad_status["outcomes"][0]["status"] = json!("maybe");
    assert!(!reports.is_valid(&bad_status));
}

/// `apply -o json` prints one document: with changes against an in-process
/// sandbox (the plan after apply inside it, nothing else on stdout), and with
/// nothing to apply.
#[test]
fn apply_prints_one_document_whatever_happens() {
    let ctx = TestContext::new();
    ctx.copy_dir("examples/quickstart", "config");
    let reports = validator(&apply_schema());
    let plans = validator(&plan_schema());

    let run = ctx.evalctl(&[
        "apply",
        "config",
        "--sandbox",
        "--auto-approve",
        "-o",
        "json",
    ]);
    run.expect(0);
    let doc = conforms(&reports, &run.stdout);
    let changed = doc["plan"]["changes"].as_array().map_or(0, Vec::len);
    assert!(changed > 0, "{}", run.stdout);
    assert_eq!(doc["counts"]["succeeded"], changed);
    assert_eq!(doc["complete"], true);
    assert_eq!(doc["plan_after_apply"]["changes"], json!([]), "converged");
    assert_eq!(doc["plan_after_apply"]["mode"], "plan");

    // Against the test's sandbox: apply, then apply again (nothing to do).
    let first = ctx.evalctl(&["apply", "config", "--auto-approve", "-o", "json"]);
    first.expect(0);
    let doc = conforms(&reports, &first.stdout);
    assert!(doc.get("plan_after_apply").is_none(), "{}", first.stdout);
    let again = ctx.evalctl(&["apply", "config", "--auto-approve", "-o", "json"]);
    again.expect(0);
    let doc = conforms(&reports, &again.stdout);
    assert_eq!(doc["plan"]["changes"], json!([]));
    assert_eq!(
        doc["counts"],
        json!({"succeeded": 0, "failed": 0, "skipped": 0})
    );
    assert_eq!(doc["complete"], true);

    // Plan and drift print documents of the plan schema.
    let plan = ctx.evalctl(&["plan", "config", "-o", "json"]);
    plan.expect(0);
    assert_eq!(conforms(&plans, &plan.stdout)["mode"], "plan");
    let drift = ctx.evalctl(&["drift", "config", "-o", "json"]);
    drift.expect(0);
    assert_eq!(conforms(&plans, &drift.stdout)["mode"], "drift");
}
