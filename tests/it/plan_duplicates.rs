//! Two live objects of one declared name are drift (issue 10 §1): the plan
//! keeps one by the rule every process applies (the first section in the
//! dashboard's order; the first-created template, then the lowest id) and
//! deletes the others, with or without `--prune`. Pure: literals in, plan out.

use evalctl::kinds::KindOp;
use evalctl::kinds::templates::TemplateOp;
use evalctl::manifest::set::{Located, ManifestSet, Origin};
use evalctl::manifest::types::ProjectSpec;
use evalctl::plan::{Action, Operation, PlanOptions, SectionRef, plan};
use evalctl::state::State;
use evalctl::state::wire::WireState;
use serde_json::json;

const PROJECT_ID: &str = "11111111-1111-4111-8111-111111111111";
const LS_ID: &str = "22222222-2222-4222-8222-222222222222";
const DASH_ID: &str = "33333333-3333-4333-8333-333333333333";
const FIRST: &str = "88888888-8888-4888-8888-888888888881";
const SECOND: &str = "88888888-8888-4888-8888-888888888882";

fn desired(project: serde_json::Value) -> ManifestSet {
    let spec: ProjectSpec = serde_json::from_value(project).expect("a project spec");
    ManifestSet {
        projects: vec![Located {
            origin: Origin {
                file: "team/project.yaml".into(),
                line: 1,
            },
            spec,
        }],
        pricing: None,
        integrations: vec![],
        ..ManifestSet::default()
    }
}

fn live(sections: serde_json::Value, templates: serde_json::Value) -> State {
    serde_json::from_value::<WireState>(json!({
        "projects": {"demo": {
            "id": PROJECT_ID, "name": "demo",
            "log_streams": {"production": {
                "id": LS_ID, "name": "production",
                "metric_settings": null,
                "dashboard": {
                    "id": DASH_ID, "name": "Default", "is_default": true, "visibility": "project",
                    "is_favorited": false, "log_stream_id": LS_ID, "project_id": PROJECT_ID,
                    "sections": sections, "widgets": [], "layout_map": {}, "interval_mins": 60,
                    "start_time": 0, "end_time": 0
                }
            }},
            "experiments": {},
            "annotation_templates": templates,
            "feedback_templates": null
        }},
        "integrations": {},
        "catalog": {"scorers": [], "versions": {}}
    }))
    .expect("live state")
    .normalize()
}

fn template(id: &str, created_at: &str, criteria: &str) -> serde_json::Value {
    json!({"id": id, "name": "helpful", "criteria": criteria, "include_explanation": false,
           "constraints": {"annotation_type": "like_dislike"}, "created_at": created_at})
}

#[test]
fn a_second_section_of_a_declared_name_is_deleted_without_prune() {
    let sections = json!([
        {"id": FIRST, "name": "Quality", "color": "#000000", "widgets": []},
        {"id": SECOND, "name": "Quality", "color": "#ffffff", "widgets": [
            {"id": "w", "name": "w", "type": "bar_chart", "metric": "m", "aggregation": "Count"}]}
    ]);
    let desired = desired(json!({"name": "demo", "log_streams": [
        {"name": "production", "trends": {"sections": [{"name": "Quality", "color": "#000000"}]}}
    ]}));
    let plan = plan(
        &desired,
        &live(sections, json!([])),
        &PlanOptions::default(),
    )
    .expect("a plan");
    // The first in the dashboard's order is the declared one, and already as
    // wanted; the second is deleted, with a warning about its widget.
    assert_eq!(plan.changes.len(), 1, "{:#?}", plan.changes);
    let change = &plan.changes.to_vec().expect("changes read back")[0];
    assert_eq!(change.action, Action::Delete);
    assert!(
        change.reason.contains("second section"),
        "{}",
        change.reason
    );
    assert!(matches!(
        &change.operations[..],
        [Operation::DeleteSection { section_id: SectionRef::Id(id), .. }] if id == SECOND
    ));
    assert_eq!(change.warnings.len(), 1, "{:?}", change.warnings);
    assert!(plan.notes.is_empty(), "{:?}", plan.notes);
}

#[test]
fn the_first_created_template_of_a_name_is_kept_whatever_the_listing_order() {
    // Listed newest first; the older one is kept, and it is the one compared.
    let templates = json!([
        template(FIRST, "2026-01-01T10:00:02.000000Z", "Was it helpful?"),
        template(SECOND, "2026-01-01T10:00:01.000000Z", "Old wording"),
    ]);
    let desired = desired(json!({"name": "demo", "annotation_templates": [
        {"name": "helpful", "criteria": "Was it helpful?", "constraints": {"annotation_type": "like_dislike"}}
    ]}));
    let planned = plan(
        &desired,
        &live(json!([]), templates),
        &PlanOptions::default(),
    )
    .expect("a plan");
    let mut ops: Vec<(Action, String)> = planned
        .changes
        .to_vec()
        .expect("changes read back")
        .into_iter()
        .map(|c| {
            let id = match &c.operations[..] {
                [
                    Operation::Kind(KindOp::Template(TemplateOp::DeleteTemplate {
                        template_id,
                        ..
                    })),
                ]
                | [
                    Operation::Kind(KindOp::Template(TemplateOp::PatchTemplate {
                        template_id,
                        ..
                    })),
                ] => template_id.clone(),
                other => panic!("unexpected operations {other:?}"),
            };
            (c.action, id)
        })
        .collect();
    ops.sort();
    assert_eq!(
        ops,
        [
            (Action::Update, SECOND.to_owned()),
            (Action::Delete, FIRST.to_owned())
        ]
    );

    // Created at the same instant: the lowest id is kept.
    let tie = json!([
        template(SECOND, "2026-01-01T10:00:01.000000Z", "Was it helpful?"),
        template(FIRST, "2026-01-01T11:00:01.000000+01:00", "Was it helpful?"),
    ]);
    let tied = plan(&desired, &live(json!([]), tie), &PlanOptions::default()).expect("a plan");
    assert_eq!(tied.changes.len(), 1, "{:#?}", tied.changes);
    assert!(matches!(
        &tied.changes.to_vec().expect("changes read back")[0].operations[..],
        [Operation::Kind(KindOp::Template(TemplateOp::DeleteTemplate { template_id, .. }))] if template_id == SECOND
    ));
}
