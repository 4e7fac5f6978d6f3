//! The plan is a pure function of (desired, live): these tests give it
//! literals and check the plan, with no server involved.

use evalctl::kinds::KindOp;
use evalctl::kinds::templates::TemplateOp;
use evalctl::plan::address::{IntegrationAddress, SectionAddress};
use std::collections::BTreeMap;

use evalctl::manifest::set::{Located, ManifestSet, Origin};
use evalctl::manifest::types::{IntegrationSpec, ProjectSpec};
use evalctl::plan::{
    Action, Address, NoteKind, Operation, Plan, PlanError, PlanOptions, Planning, plan,
};
use evalctl::state::wire::WireState;
use evalctl::state::{ObjectKey, ProjectState, State};
use serde_json::json;

const PROJECT_ID: &str = "11111111-1111-4111-8111-111111111111";
const LS_ID: &str = "22222222-2222-4222-8222-222222222222";
const DASH_ID: &str = "33333333-3333-4333-8333-333333333333";
const CORRECTNESS: &str = "44444444-4444-4444-8444-444444444444";
const BLEU: &str = "55555555-5555-4555-8555-555555555555";

fn origin() -> Origin {
    Origin {
        file: "team/project.yaml".into(),
        line: 1,
    }
}

fn desired(project: serde_json::Value) -> ManifestSet {
    let spec: ProjectSpec = serde_json::from_value(project).expect("a project spec");
    ManifestSet {
        projects: vec![Located {
            origin: origin(),
            spec,
        }],
        pricing: None,
        integrations: vec![],
        ..ManifestSet::default()
    }
}

fn catalog() -> serde_json::Value {
    json!({
        "scorers": [
            {"id": CORRECTNESS, "name": "correctness", "scorer_type": "preset", "tags": [],
             "output_type": "boolean", "input_type": "basic", "model_type": "llm", "roll_up_method": "average",
             "latest_version": {"id": "66666666-6666-4666-8666-666666666666", "version": 3, "scorer_id": CORRECTNESS}},
            {"id": BLEU, "name": "bleu", "scorer_type": "preset", "tags": []}
        ],
        "versions": {
            CORRECTNESS: [
                {"id": "77777777-7777-4777-8777-777777777777", "version": 2, "scorer_id": CORRECTNESS,
                 "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}
            ]
        }
    })
}

/// Live state with one project, one log stream holding `settings`, and a
/// default dashboard holding `sections`.
fn live(settings: serde_json::Value, sections: serde_json::Value, favorited: bool) -> State {
    wire(json!({
        "projects": {"demo": {
            "id": PROJECT_ID, "name": "demo",
            "log_streams": {"production": {
                "id": LS_ID, "name": "production",
                "metric_settings": settings,
                "dashboard": {
                    "id": DASH_ID, "name": "Default", "is_default": true, "visibility": "project",
                    "is_favorited": favorited, "log_stream_id": LS_ID, "project_id": PROJECT_ID,
                    "sections": sections, "widgets": [], "layout_map": {}, "interval_mins": 60,
                    "start_time": 0, "end_time": 0
                }
            }},
            "experiments": {},
            "annotation_templates": [],
            "feedback_templates": null
        }},
        "integrations": {},
        "catalog": catalog()
    }))
}

/// Live state written as the service returns it, reduced as the readers reduce it.
fn wire(value: serde_json::Value) -> State {
    serde_json::from_value::<WireState>(value)
        .expect("live state")
        .normalize()
}

fn project(log_stream: serde_json::Value) -> serde_json::Value {
    json!({"name": "demo", "log_streams": [log_stream]})
}

#[test]
fn a_converged_system_plans_empty_despite_server_defaults() {
    // Live holds what the service fills: defaults spelled out, filter values reordered.
    let settings = json!({
        "scorers": [{"id": CORRECTNESS, "scorer_type": "preset", "name": "correctness",
                     "output_type": "boolean", "input_type": "basic", "model_type": "llm",
                     "roll_up_method": "average", "num_judges": 3,
                     "filters": [{"name": "node_name", "operator": "one_of", "value": ["llm", "chat"], "case_sensitive": true}]}],
        "segment_filters": [{"sample_rate": 0.5, "llm_scorers": false, "multimodal_scorers": false,
                             "filter": {"name": "metadata", "operator": "eq", "key": "env", "value": "prod"}}]
    });
    let sections = json!([{"id": "88888888-8888-4888-8888-888888888888", "name": "Quality",
                           "description": "", "color": "#1F77B4", "widgets": [{"id": "w", "name": "w", "type": "bar_chart", "metric": "m", "aggregation": "Count"}]}]);
    let live = live(settings, sections, true);
    let desired = desired(project(json!({
        "name": "production",
        "metric_settings": {
            "scorers": [{"name": "correctness", "num_judges": 3,
                         "filters": [{"name": "node_name", "operator": "one_of", "value": ["chat", "llm"]}]}],
            "segment_filters": [{"sample_rate": 0.5, "filter": {"name": "metadata", "operator": "eq", "key": "env", "value": "prod"}}]
        },
        "trends": {"sections": [{"name": "Quality", "color": "#1f77b4"}], "favorite": "user"}
    })));
    let plan = plan(&desired, &live, &PlanOptions::default()).unwrap();
    assert!(plan.is_empty(), "{:#?}", plan.changes);
}

#[test]
fn a_declared_scorer_list_is_authoritative() {
    let settings = json!({"scorers": [{"id": BLEU, "scorer_type": "preset", "name": "bleu"}], "segment_filters": null});
    let live = live(settings, json!([]), false);
    let desired = desired(project(json!({
        "name": "production",
        "metric_settings": {"scorers": [{"name": "correctness", "scorer_version": 2}]}
    })));
    let plan = plan(&desired, &live, &PlanOptions::default()).unwrap();
    assert_eq!(plan.changes.len(), 1);
    let change = &plan.changes.to_vec().expect("changes read back")[0];
    assert_eq!(change.action, Action::Update);
    assert_eq!(change.reason, "enable correctness; disable bleu");
    let paths: Vec<&str> = change.fields.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["scorers[bleu]", "scorers[correctness]"]);
    let Operation::PatchMetricSettings { body, .. } = &change.operations[0] else {
        panic!()
    };
    let body = body.get();
    let scorers = body.scorers.as_ref().unwrap();
    assert_eq!(scorers.len(), 1);
    assert_eq!(scorers[0].scorer_version.as_ref().unwrap().version, 2);
    assert!(
        body.segment_filters.is_none(),
        "segment filters are not managed here"
    );
}

/// Plans `desired` against `live` project by project, releasing each as
/// `reconcile::read_and_plan` does: the plan, and the projects as left.
fn plan_releasing(
    desired: &ManifestSet,
    live: &State,
) -> (evalctl::plan::Plan, BTreeMap<ObjectKey, ProjectState>) {
    let globals = State {
        projects: BTreeMap::new(),
        ..live.clone()
    };
    let options = PlanOptions::default();
    let mut planning = Planning::new(desired, &globals, &options);
    let mut projects = live.projects.clone();
    for (key, project) in projects.iter_mut() {
        planning.project(key, project);
        project.release_compared();
    }
    let plan = planning.finish(&projects).expect("a plan");
    (plan, projects)
}

#[test]
fn planning_project_by_project_gives_the_same_plan_and_keeps_only_ids_and_names() {
    let desired = desired(project(json!({
        "name": "production",
        "metric_settings": {"scorers": [{"name": "correctness", "scorer_version": 2}]},
        "trends": {"sections": [{"name": "Quality"}]}
    })));
    let settings = json!({"scorers": [{"id": BLEU, "scorer_type": "preset", "name": "bleu"}]});
    let live = live(settings, json!([]), false);
    let expected = plan(&desired, &live, &PlanOptions::default()).unwrap();
    assert_eq!(expected.changes.len(), 2, "{:#?}", expected.changes);

    let (planned, projects) = plan_releasing(&desired, &live);
    assert_eq!(planned, expected, "the same plan");
    let demo = ObjectKey::Name("demo".into());
    let production = ObjectKey::Name("production".into());
    let (project, run) = (&projects[&demo], &projects[&demo].log_streams[&production]);
    assert_eq!((project.id.as_str(), run.id.as_str()), (PROJECT_ID, LS_ID));
    assert!(
        run.dashboard.is_none()
            && run.metric_settings.is_none()
            && project.parts.annotation_templates.is_none(),
        "what planning compares is released: {project:#?}"
    );

    // Planning does not depend on the order projects come in.
    let unchanged = desired_with_scorers(json!([{"name": "bleu"}]));
    let (planned, _) = plan_releasing(&unchanged, &live);
    assert!(planned.is_empty(), "{:#?}", planned.changes);
}

/// Plans `desired` project by project, handing the manifests over as `plan`
/// and `drift` do (`Planning::releasing`).
fn plan_handing_over(desired: ManifestSet, live: &State) -> Result<Plan, PlanError> {
    let globals = State {
        projects: BTreeMap::new(),
        ..live.clone()
    };
    let options = PlanOptions::default();
    let mut planning = Planning::releasing(desired, &globals, &options);
    for (key, project) in &live.projects {
        planning.project(key, project);
    }
    planning.finish(&live.projects)
}

#[test]
fn planning_that_releases_the_manifests_gives_the_same_plan_and_problems() {
    let settings = json!({"scorers": [{"id": BLEU, "scorer_type": "preset", "name": "bleu"}]});
    let live = live(settings, json!([]), false);
    let changing = desired(project(json!({
        "name": "production",
        "metric_settings": {"scorers": [{"name": "correctness", "scorer_version": 2}]},
        "trends": {"sections": [{"name": "Quality"}]}
    })));
    let expected = plan(&changing, &live, &PlanOptions::default());
    assert_eq!(expected.as_ref().map(|p| p.changes.len()), Ok(2));
    assert_eq!(plan_handing_over(changing, &live), expected);

    // A reference that does not exist is found before the project is
    // released, and still says where it is declared.
    let unknown = desired_with_scorers(json!([{"name": "no-such-scorer"}]));
    let expected = plan(&unknown, &live, &PlanOptions::default());
    let problems = &expected.as_ref().expect_err("an unknown scorer").problems;
    assert!(
        problems[0].origin.is_some() && problems[0].field.is_some(),
        "{problems:#?}"
    );
    assert_eq!(plan_handing_over(unknown, &live), expected);
}

fn desired_with_scorers(scorers: serde_json::Value) -> ManifestSet {
    desired(project(json!({
        "name": "production",
        "metric_settings": {"scorers": scorers}
    })))
}

#[test]
fn unknown_scorers_and_versions_name_the_nearest() {
    let live = live(json!({"scorers": []}), json!([]), false);
    let desired = desired(project(json!({
        "name": "production",
        "metric_settings": {"scorers": [{"name": "corectness"}, {"name": "correctness", "scorer_version": 9}]}
    })));
    let err = plan(&desired, &live, &PlanOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no scorer named `corectness` in the catalog; did you mean `correctness`?"),
        "{err}"
    );
    assert!(
        err.contains("scorer `correctness` has no version 9 (it has 2)"),
        "{err}"
    );
    assert!(err.contains("team/project.yaml:1"), "{err}");
}

#[test]
fn undeclared_sections_are_notes_without_prune_and_deletes_with_it() {
    let sections =
        json!([{"id": "88888888-8888-4888-8888-888888888888", "name": "Old", "widgets": []}]);
    let live = live(json!({"scorers": []}), sections, false);
    let desired = desired(project(
        json!({"name": "production", "trends": {"sections": [{"name": "New"}]}}),
    ));
    let kept = plan(&desired, &live, &PlanOptions::default()).unwrap();
    assert_eq!(kept.changes.len(), 1);
    assert_eq!(kept.changes.action(0), Action::Create);
    assert_eq!(kept.notes.len(), 1);
    assert_eq!(kept.notes[0].kind, NoteKind::Unmanaged);
    let pruned = plan(
        &desired,
        &live,
        &PlanOptions {
            prune: true,
            ..PlanOptions::default()
        },
    )
    .unwrap();
    let actions: Vec<Action> = pruned.changes.actions().collect();
    assert_eq!(actions, [Action::Create, Action::Delete]);
    assert!(pruned.notes.is_empty());
}

#[test]
fn a_renamed_section_is_an_update_that_keeps_it() {
    let sections = json!([{"id": "88888888-8888-4888-8888-888888888888", "name": "Old", "color": "#000000", "widgets": []}]);
    let live = live(json!({"scorers": []}), sections, false);
    let desired = desired(project(json!({"name": "production",
        "trends": {"sections": [{"name": "New", "renamed_from": ["Old"]}]}})));
    let plan = plan(
        &desired,
        &live,
        &PlanOptions {
            prune: true,
            ..PlanOptions::default()
        },
    )
    .unwrap();
    assert_eq!(plan.changes.len(), 1);
    assert_eq!(plan.changes.action(0), Action::Update);
    let Operation::UpdateSection { body, .. } =
        &plan.changes.to_vec().expect("changes read back")[0].operations[0]
    else {
        panic!()
    };
    assert_eq!(body.name.as_deref(), Some("New"));
    assert_eq!(body.color, None, "an undeclared colour is left alone");
}

/// Live state with no scorers and these annotation templates in the project.
fn live_with_annotation_templates(templates: serde_json::Value) -> State {
    let mut live = live(json!({"scorers": []}), json!([]), false);
    let project = live.projects.values_mut().next().expect("one project");
    let templates: Vec<evalctl::kinds::templates::AnnotationTemplate> =
        serde_json::from_value(templates).expect("templates");
    project.parts.annotation_templates = Some(templates.into_iter().map(Into::into).collect());
    live
}

#[test]
fn template_constraint_changes_are_replacements_with_a_usage_warning() {
    let live = live_with_annotation_templates(json!([
        {"id": "t1", "name": "Quality", "include_explanation": false, "criteria": "Good?",
         "constraints": {"annotation_type": "score", "min": 0, "max": 5},
         "created_at": "2026-01-01T00:00:00Z", "position": 0, "usage_count": 12},
        {"id": "t2", "name": "Tone", "include_explanation": false, "criteria": "Polite?",
         "constraints": {"annotation_type": "like_dislike"},
         "created_at": "2026-01-01T00:00:00Z", "position": 1, "usage_count": 0}
    ]));
    let desired = desired(json!({"name": "demo", "annotation_templates": [
        {"name": "Quality", "criteria": "Good?", "constraints": {"annotation_type": "score", "min": 1, "max": 10}},
        {"name": "Tone", "criteria": "Polite and kind?", "constraints": {"annotation_type": "like_dislike"}}
    ]}));
    let plan = plan(&desired, &live, &PlanOptions::default()).unwrap();
    let summary: Vec<(String, Action)> = plan
        .changes
        .to_vec()
        .expect("changes read back")
        .into_iter()
        .map(|c| (c.address.to_string(), c.action))
        .collect();
    assert_eq!(
        summary,
        [
            (
                "project[demo].annotation_template[Quality]".to_owned(),
                Action::Replace
            ),
            (
                "project[demo].annotation_template[Tone]".to_owned(),
                Action::Update
            ),
        ]
    );
    assert_eq!(
        plan.changes.to_vec().expect("changes read back")[0]
            .warnings
            .len(),
        1,
        "12 ratings use it"
    );
    assert_eq!(
        plan.changes.to_vec().expect("changes read back")[0]
            .operations
            .len(),
        2,
        "delete, then create"
    );
}

#[test]
fn template_fields_left_out_keep_their_live_values() {
    let live = live_with_annotation_templates(json!([
        {"id": "t1", "name": "Quality", "include_explanation": true, "criteria": "Good?",
         "constraints": {"annotation_type": "score", "min": 0, "max": 5},
         "created_at": "2026-01-01T00:00:00Z", "position": 0, "usage_count": 0},
        {"id": "t2", "name": "Tone", "include_explanation": true, "criteria": "Polite?",
         "constraints": {"annotation_type": "like_dislike"},
         "created_at": "2026-01-01T00:00:00Z", "position": 1, "usage_count": 0},
        {"id": "t3", "name": "Old", "include_explanation": false, "criteria": "Kept?",
         "constraints": {"annotation_type": "star"},
         "created_at": "2026-01-01T00:00:00Z", "position": 2, "usage_count": 0}
    ]));
    // Neither criteria nor include_explanation is declared: Quality is
    // unchanged, Tone's new constraints replace it with its live criteria and
    // explanation setting, and Old's rename keeps its criteria.
    let desired = desired(json!({"name": "demo", "annotation_templates": [
        {"name": "Quality", "constraints": {"annotation_type": "score", "min": 0, "max": 5}},
        {"name": "Tone", "constraints": {"annotation_type": "star"}},
        {"name": "New", "renamed_from": ["Old"], "constraints": {"annotation_type": "star"}}
    ]}));
    let plan = plan(&desired, &live, &PlanOptions::default()).unwrap();
    let summary: Vec<(String, Action)> = plan
        .changes
        .to_vec()
        .expect("changes read back")
        .into_iter()
        .map(|c| (c.address.to_string(), c.action))
        .collect();
    assert_eq!(
        summary,
        [
            (
                "project[demo].annotation_template[New]".to_owned(),
                Action::Update
            ),
            (
                "project[demo].annotation_template[Tone]".to_owned(),
                Action::Replace
            ),
        ]
    );
    let Operation::Kind(KindOp::Template(TemplateOp::PatchTemplate { body, .. })) =
        &plan.changes.to_vec().expect("changes read back")[0].operations[0]
    else {
        panic!(
            "{:?}",
            plan.changes.to_vec().expect("changes read back")[0].operations
        )
    };
    assert_eq!(body.name, "New");
    assert_eq!(body.criteria.as_deref(), Some("Kept?"));
    let Operation::Kind(KindOp::Template(TemplateOp::CreateTemplate { body, .. })) =
        &plan.changes.to_vec().expect("changes read back")[1].operations[1]
    else {
        panic!(
            "{:?}",
            plan.changes.to_vec().expect("changes read back")[1].operations
        )
    };
    let body = serde_json::to_value(body).unwrap();
    assert_eq!(body["criteria"], "Polite?", "{body}");
    assert_eq!(body["include_explanation"], true, "{body}");
}

#[test]
fn integrations_compare_declared_public_fields_and_never_the_token() {
    let mut live = live(json!({"scorers": []}), json!([]), false);
    live.integrations.insert(
        "openai".to_owned(),
        Some(serde_json::from_value(json!({"id": "i", "name": "openai", "provider": "openai", "organization_id": "org-1"})).unwrap()),
    );
    let spec: IntegrationSpec = serde_json::from_value(json!({
        "provider": "openai", "organization_id": "org-1", "token": "${OPENAI_API_KEY}"
    }))
    .unwrap();
    let desired = ManifestSet {
        projects: vec![],
        pricing: None,
        integrations: vec![Located {
            origin: origin(),
            spec,
        }],
        ..ManifestSet::default()
    };
    let unchanged = plan(&desired, &live, &PlanOptions::default()).unwrap();
    assert!(
        unchanged.is_empty(),
        "a write-only token is no perpetual diff"
    );
    let rotated = plan(
        &desired,
        &live,
        &PlanOptions {
            rotate_secrets: true,
            ..PlanOptions::default()
        },
    )
    .unwrap();
    assert_eq!(rotated.changes.len(), 1);
    assert_eq!(
        rotated.changes.to_vec().expect("changes read back")[0].reason,
        "rotate secrets"
    );
    let json = serde_json::to_string(&rotated).unwrap();
    assert!(json.contains("${OPENAI_API_KEY}"));
    assert_eq!(
        rotated.changes.to_vec().expect("changes read back")[0].address,
        Address::Integration(IntegrationAddress {
            provider: "openai".into()
        })
    );
}

#[test]
fn favorites_compare_as_favorited_or_not() {
    let live_unfav = live(json!({"scorers": []}), json!([]), false);
    let desired_user = desired(project(
        json!({"name": "production", "trends": {"favorite": "project"}}),
    ));
    let p = plan(&desired_user, &live_unfav, &PlanOptions::default()).unwrap();
    let Operation::Favorite { visibility, .. } =
        &p.changes.to_vec().expect("changes read back")[0].operations[0]
    else {
        panic!()
    };
    assert_eq!(visibility.as_str(), "project");
    let live_fav = live(json!({"scorers": []}), json!([]), true);
    assert!(
        plan(&desired_user, &live_fav, &PlanOptions::default())
            .unwrap()
            .is_empty()
    );
    let desired_none = desired(project(
        json!({"name": "production", "trends": {"favorite": "none"}}),
    ));
    let p = plan(&desired_none, &live_fav, &PlanOptions::default()).unwrap();
    assert_eq!(
        p.changes.to_vec().expect("changes read back")[0]
            .operations
            .len(),
        2,
        "clears both the user's and the project's favorite"
    );
}

#[test]
fn targets_narrow_the_plan() {
    let live = live(json!({"scorers": []}), json!([]), false);
    let desired = desired(project(json!({"name": "production",
        "metric_settings": {"scorers": [{"name": "bleu"}]},
        "trends": {"sections": [{"name": "A"}]}})));
    let p = plan(&desired, &live, &PlanOptions::default()).unwrap();
    assert_eq!(p.changes.len(), 2);
    let options = PlanOptions {
        targets: ["project[demo].log_stream[production].trends"
            .parse()
            .unwrap()]
        .into_iter()
        .collect(),
        ..PlanOptions::default()
    };
    let p = plan(&desired, &live, &options).unwrap();
    assert_eq!(p.changes.len(), 1);
    assert!(matches!(
        p.changes.to_vec().expect("changes read back")[0].address,
        Address::Section(SectionAddress { .. })
    ));
}

#[test]
fn a_log_stream_without_a_default_dashboard_is_a_problem_of_its_manifest() {
    let mut live = live(
        json!({"scorers": [], "segment_filters": null}),
        json!([]),
        false,
    );
    for project in live.projects.values_mut() {
        for run in project.log_streams.values_mut() {
            run.dashboard = None;
        }
    }
    let desired = desired(project(
        json!({"name": "production", "trends": {"favorite": "user"}}),
    ));
    let error = plan(&desired, &live, &PlanOptions::default()).unwrap_err();
    assert_eq!(error.problems.len(), 1, "{error}");
    assert_eq!(error.problems[0].origin, Some(origin()));
    assert_eq!(
        error.problems[0].message,
        "log stream `production` of project `demo` has no default trends dashboard"
    );
}

#[test]
fn a_run_reported_missing_excuses_only_that_kind_of_run() {
    let mut live = live(
        json!({"scorers": [], "segment_filters": null}),
        json!([]),
        false,
    );
    live.missing = serde_json::from_value(json!([
        {"kind": "log stream", "key": "staging", "project": "demo", "suggestions": []}
    ]))
    .unwrap();
    let desired = desired(json!({
        "name": "demo",
        "log_streams": [{"name": "staging", "trends": {"favorite": "user"}}],
        "experiments": [{"name": "staging", "metric_settings": {"scorers": []}}]
    }));
    let error = plan(&desired, &live, &PlanOptions::default()).unwrap_err();
    let messages: Vec<&str> = error.problems.iter().map(|p| p.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "log stream `staging` not found in project `demo`",
            "experiment `staging` was not loaded"
        ]
    );
}
