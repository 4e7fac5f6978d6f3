//! The planner of dashboards, down to the widget, given literals (no
//! server): widgets created, updated, moved, renamed, deleted and pruned;
//! dashboard settings; other dashboards created by copying, replaced when
//! their visibility changes, pruned; favorites that cannot be verified; and
//! named custom integrations.

use evalctl::api::WidgetType;
use evalctl::manifest::set::{Located, ManifestSet, Origin};
use evalctl::manifest::types::{IntegrationSpec, ProjectSpec};
use evalctl::plan::address::WidgetAddress;
use evalctl::plan::{
    Action, Address, DashboardRef, NoteKind, Operation, Placement, Plan, PlanOptions, SectionRef,
    Target, WidgetRef, plan,
};
use evalctl::state::State;
use evalctl::state::wire::WireState;
use serde_json::{Value, json};

const PROJECT_ID: &str = "11111111-1111-4111-8111-111111111111";
const LS_ID: &str = "22222222-2222-4222-8222-222222222222";
const DASH_ID: &str = "33333333-3333-4333-8333-333333333333";
const ONCALL_ID: &str = "44444444-4444-4444-8444-444444444444";
const QUALITY_ID: &str = "55555555-5555-4555-8555-555555555555";
const LATENCY_ID: &str = "66666666-6666-4666-8666-666666666666";
const USER_ID: &str = "77777777-7777-4777-8777-777777777777";

fn origin() -> Origin {
    Origin {
        file: "team/project.yaml".into(),
        line: 1,
    }
}

fn desired(trends: Value) -> ManifestSet {
    let spec: ProjectSpec = serde_json::from_value(json!({
        "name": "demo",
        "log_streams": [{"name": "production", "trends": trends}]
    }))
    .expect("a project spec");
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

fn widget(id: &str, name: &str, section: Option<&str>) -> Value {
    json!({"id": id, "name": name, "type": "line_chart", "metric": "latency_ms",
           "aggregation": "P95", "description": format!("{name} over time"),
           "dataset": [{"metrics": ["latency_ms"]}], "section_id": section})
}

/// The default dashboard: a `Quality` section holding `Correctness` and
/// `Adherence`, a `Latency` section holding `p95`, and `Traces` at the top level.
fn default_dashboard() -> Value {
    json!({
        "id": DASH_ID, "name": "Default", "is_default": true, "visibility": "project",
        "is_favorited": true, "log_stream_id": LS_ID, "project_id": PROJECT_ID,
        "created_by": USER_ID,
        "widgets": [widget("w-traces", "Traces", None)],
        "sections": [
            {"id": QUALITY_ID, "name": "Quality", "color": "#1F77B4",
             "widgets": [widget("w-correct", "Correctness", Some(QUALITY_ID)),
                         widget("w-adhere", "Adherence", Some(QUALITY_ID))]},
            {"id": LATENCY_ID, "name": "Latency", "color": "#FF7F0E",
             "widgets": [widget("w-p95", "p95", Some(LATENCY_ID))]}
        ],
        "layout_map": {}, "interval_mins": 60, "relative_time": "last_7_days",
        "group_by": "region", "description": "Production", "start_time": 0, "end_time": 0
    })
}

fn oncall(visibility: &str) -> Value {
    json!({
        "id": ONCALL_ID, "name": "On-call", "is_default": false, "visibility": visibility,
        "is_favorited": false, "log_stream_id": LS_ID, "project_id": PROJECT_ID,
        "created_by": USER_ID,
        "widgets": [widget("w-errors", "Errors", None)], "sections": [],
        "layout_map": {}, "interval_mins": 15, "start_time": 0, "end_time": 0
    })
}

fn live_with(others: Value, custom: Value) -> State {
    serde_json::from_value::<WireState>(json!({
        "projects": {"demo": {
            "id": PROJECT_ID, "name": "demo",
            "log_streams": {"production": {
                "id": LS_ID, "name": "production",
                "dashboard": default_dashboard(),
                "dashboards": others
            }},
            "experiments": {}
        }},
        "custom_integrations": custom
    }))
    .expect("live state")
    .normalize()
}

fn live() -> State {
    live_with(json!([oncall("project")]), json!({}))
}

fn planned(trends: Value, prune: bool) -> Plan {
    let options = PlanOptions {
        prune,
        ..PlanOptions::default()
    };
    plan(&desired(trends), &live(), &options).expect("a plan")
}

/// The declared form of a live widget of [`widget`].
fn declared(name: &str) -> Value {
    json!({"name": name, "type": "line_chart", "metric": "latency_ms", "aggregation": "P95"})
}

fn addresses(plan: &Plan) -> Vec<String> {
    plan.changes
        .to_vec()
        .expect("changes read back")
        .into_iter()
        .map(|c| c.address.to_string())
        .collect()
}

const AT: &str = "project[demo].log_stream[production]";

#[test]
fn declared_widgets_as_live_plan_empty_and_unwritten_fields_are_unmanaged() {
    let plan = planned(
        json!({
            "widgets": [declared("Traces")],
            "sections": [
                {"name": "Quality", "widgets": [declared("Correctness"), declared("Adherence")]},
                {"name": "Latency"}
            ]
        }),
        true,
    );
    assert!(plan.is_empty(), "{:#?}", plan.changes);
    assert!(plan.notes.is_empty(), "{:#?}", plan.notes);
}

#[test]
fn widgets_are_created_updated_and_undeclared_ones_pruned() {
    let trends = json!({"sections": [{"name": "Quality", "widgets": [
        {"name": "Correctness", "type": "bar_chart", "metric": "latency_ms", "aggregation": "P95",
         "description": ""},
        {"name": "Hallucinations", "type": "number", "metric": "hallucination",
         "aggregation": "Average", "dataset": [{"metrics": ["hallucination"]}]}
    ]}]});
    let without = planned(trends.clone(), false);
    assert_eq!(
        addresses(&without),
        [
            format!("{AT}.trends.section[Quality].widget[Correctness]"),
            format!("{AT}.trends.section[Quality].widget[Hallucinations]"),
        ]
    );
    let note = without
        .notes
        .iter()
        .find(|n| matches!(n.address, Some(Address::Widget(WidgetAddress { .. }))))
        .expect("a note about the widget");
    assert_eq!(note.kind, NoteKind::Unmanaged);
    assert!(note.message.contains("widget `Adherence`"), "{note:?}");

    let mut with = planned(trends, true)
        .changes
        .to_vec()
        .expect("changes read back");
    // `Latency` is not declared: pruned with its widget (see the section tests).
    assert_eq!(
        with[0].address.to_string(),
        format!("{AT}.trends.section[Latency]")
    );
    with.remove(0);
    let actions: Vec<Action> = with.iter().map(|c| c.action).collect();
    assert_eq!(actions, [Action::Delete, Action::Update, Action::Create]);
    let Operation::DeleteWidget { widget, .. } = &with[0].operations[0] else {
        panic!("{:?}", with[0])
    };
    assert_eq!(widget, &WidgetRef::Id("w-adhere".into()));
    // The update sends exactly what differs: the type, and null to clear the description.
    let Operation::UpdateWidget {
        widget,
        move_to,
        body,
        ..
    } = &with[1].operations[0]
    else {
        panic!()
    };
    assert_eq!(widget, &WidgetRef::Id("w-correct".into()));
    assert_eq!(move_to, &None);
    assert_eq!(
        serde_json::to_value(body).unwrap(),
        json!({"type": "bar_chart", "description": null})
    );
    let paths: Vec<&str> = with[1].fields.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["description", "type"]);
    let Operation::CreateWidget {
        placement, body, ..
    } = &with[2].operations[0]
    else {
        panic!()
    };
    assert_eq!(
        placement,
        &Placement::Section(SectionRef::Id(QUALITY_ID.into()))
    );
    assert_eq!(body.widget_type, WidgetType::Number);
    assert_eq!(body.section_id, None, "filled from the placement at apply");
}

#[test]
fn a_widget_declared_in_another_managed_section_is_moved_not_recreated() {
    let plan = planned(
        json!({"sections": [
            {"name": "Quality", "widgets": [declared("Correctness")]},
            {"name": "Latency", "widgets": [declared("p95"), declared("Adherence")]}
        ]}),
        true,
    );
    assert_eq!(plan.changes.len(), 1, "{:#?}", plan.changes);
    let change = &plan.changes.to_vec().expect("changes read back")[0];
    assert_eq!(
        change.address.to_string(),
        format!("{AT}.trends.section[Latency].widget[Adherence]")
    );
    assert_eq!(change.action, Action::Update);
    assert_eq!(change.reason, "moved from section `Quality`");
    let Operation::UpdateWidget {
        widget,
        move_to,
        body,
        ..
    } = &change.operations[0]
    else {
        panic!()
    };
    assert_eq!(widget, &WidgetRef::Id("w-adhere".into()));
    assert_eq!(
        move_to,
        &Some(Placement::Section(SectionRef::Id(LATENCY_ID.into())))
    );
    assert_eq!(serde_json::to_value(body).unwrap(), json!({}));
    assert_eq!(change.fields[0].path, "section");
    assert_eq!(change.fields[0].before_value(), Some(json!("Quality")));
    assert_eq!(change.fields[0].after_value(), Some(json!("Latency")));

    // To the top level, and back into a section.
    let plan = planned(
        json!({"widgets": [declared("p95")],
               "sections": [{"name": "Latency", "widgets": [declared("Traces")]}]}),
        false,
    );
    let changes = plan.changes.to_vec().expect("changes read back");
    let moves: Vec<(&str, &Option<Placement>)> = changes
        .iter()
        .map(|c| match &c.operations[0] {
            Operation::UpdateWidget {
                widget: WidgetRef::Id(id),
                move_to,
                ..
            } => (id.as_str(), move_to),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        moves,
        [
            ("w-p95", &Some(Placement::Top)),
            (
                "w-traces",
                &Some(Placement::Section(SectionRef::Id(LATENCY_ID.into())))
            ),
        ]
    );
}

#[test]
fn widgets_of_places_whose_list_is_not_written_are_never_moved() {
    // `Adherence` lives in `Quality`, whose widgets are not managed here.
    let plan = planned(
        json!({"sections": [
            {"name": "Quality"},
            {"name": "Latency", "widgets": [declared("p95"), declared("Adherence")]}
        ]}),
        true,
    );
    assert_eq!(plan.changes.len(), 1);
    assert_eq!(plan.changes.action(0), Action::Create);
}

#[test]
fn a_renamed_widget_is_an_update_that_keeps_it_and_a_section_rename_is_no_move() {
    let mut p95 = declared("Latency p95");
    p95["renamed_from"] = json!(["p95"]);
    let plan = planned(
        json!({"sections": [
            {"name": "Response time", "renamed_from": ["Latency"], "widgets": [p95]}
        ]}),
        false,
    );
    let widget = plan
        .changes
        .to_vec()
        .expect("changes read back")
        .into_iter()
        .find(|c| matches!(c.address, Address::Widget(WidgetAddress { .. })))
        .expect("a widget change");
    assert_eq!(
        widget.address.to_string(),
        format!("{AT}.trends.section[Response time].widget[Latency p95]")
    );
    assert_eq!(widget.reason, "renamed from `p95`");
    let Operation::UpdateWidget {
        widget: WidgetRef::Id(id),
        move_to: None,
        body,
        ..
    } = &widget.operations[0]
    else {
        panic!("{:?}", widget.operations)
    };
    assert_eq!(id, "w-p95");
    assert_eq!(body.name.as_deref(), Some("Latency p95"));
}

#[test]
fn a_widget_of_a_section_this_plan_creates_is_placed_by_the_section_name() {
    let plan = planned(
        json!({"sections": [{"name": "Safety", "widgets": [declared("Toxicity")]}]}),
        false,
    );
    let create = plan
        .changes
        .to_vec()
        .expect("changes read back")
        .into_iter()
        .find(|c| matches!(c.address, Address::Widget(WidgetAddress { .. })))
        .unwrap();
    let Operation::CreateWidget { placement, .. } = &create.operations[0] else {
        panic!()
    };
    assert_eq!(
        placement,
        &Placement::Section(SectionRef::Named {
            named: "Safety".into()
        })
    );
}

#[test]
fn deleting_a_section_that_holds_widgets_warns_about_them() {
    let plan = planned(json!({"sections": [{"name": "Quality"}]}), true);
    let delete = &plan.changes.to_vec().expect("changes read back")[0];
    assert_eq!(delete.action, Action::Delete);
    assert_eq!(
        delete.warnings,
        ["the section holds 1 widget(s), which are deleted with it"]
    );
}

#[test]
fn settings_compare_and_send_only_the_declared_fields() {
    let plan = planned(
        json!({"interval_mins": 60, "relative_time": "last_7_days"}),
        false,
    );
    assert!(plan.is_empty());
    let plan = planned(
        json!({"interval_mins": 15, "relative_time": "last_7_days", "group_by": ""}),
        false,
    );
    assert_eq!(addresses(&plan), [format!("{AT}.trends.settings")]);
    let Operation::UpdateDashboard { body, .. } =
        &plan.changes.to_vec().expect("changes read back")[0].operations[0]
    else {
        panic!()
    };
    assert_eq!(
        serde_json::to_value(body).unwrap(),
        json!({"interval_mins": 15, "group_by": null})
    );
}

#[test]
fn a_favorite_whose_audience_cannot_be_read_back_is_noted() {
    let plan = planned(json!({"favorite": "project"}), false);
    assert!(plan.is_empty());
    let note = &plan.notes[0];
    assert_eq!(note.kind, NoteKind::Unverifiable);
    assert!(note.message.contains("`favorite: project`"), "{note:?}");
    // `none` is read back exactly: a change, no note.
    let plan = planned(json!({"favorite": "none"}), false);
    assert_eq!(plan.changes.len(), 1);
    assert!(plan.notes.is_empty());
}

#[test]
fn a_missing_dashboard_is_a_copy_whose_contents_are_named_until_it_exists() {
    let plan = planned(
        json!({"dashboards": [
            {"name": "On-call"},
            {"name": "Triage", "visibility": "user", "interval_mins": 5,
             "sections": [{"name": "Quality", "widgets": [declared("Correctness")]},
                          {"name": "Errors", "widgets": [declared("5xx")]}]}
        ]}),
        true,
    );
    let at = |rest: &str| format!("{AT}.dashboard[Triage]{rest}");
    assert_eq!(
        addresses(&plan),
        [
            at(""),
            at(".section[Errors]"),
            at(".section[Latency]"),
            at(".section[Errors].widget[5xx]"),
            at(".section[Quality].widget[Adherence]"),
            at(".settings"),
        ]
    );
    let create = &plan.changes.to_vec().expect("changes read back")[0];
    assert_eq!(create.action, Action::Create);
    assert_eq!(
        create.reason,
        "declared, not on the log stream: a copy of `Default`"
    );
    let Operation::DuplicateDashboard { source, body, .. } = &create.operations[0] else {
        panic!()
    };
    assert_eq!(source, &DashboardRef::Id(DASH_ID.into()));
    assert_eq!(body.name, "Triage");
    assert!(create.warnings[0].contains("2 section(s) and 4 widget(s) of `Default`"));
    let named = DashboardRef::Named {
        named: "Triage".into(),
    };
    for change in &plan.changes.to_vec().expect("changes read back")[1..] {
        let dashboard = match &change.operations[0] {
            Operation::CreateSection { dashboard_id, .. }
            | Operation::DeleteSection { dashboard_id, .. }
            | Operation::CreateWidget { dashboard_id, .. }
            | Operation::DeleteWidget { dashboard_id, .. }
            | Operation::UpdateDashboard { dashboard_id, .. } => dashboard_id,
            other => panic!("{other:?}"),
        };
        assert_eq!(dashboard, &named, "{}", change.address);
        assert_eq!(change.live_fingerprint, "absent");
    }
    // The copied parts are named: the copy's ids are not known yet.
    let Operation::DeleteWidget { widget, .. } =
        &plan.changes.to_vec().expect("changes read back")[4].operations[0]
    else {
        panic!()
    };
    assert_eq!(
        widget,
        &WidgetRef::Named {
            named: "Adherence".into(),
            section: Some("Quality".into())
        }
    );
}

#[test]
fn a_visibility_change_replaces_the_dashboard_after_its_contents_change() {
    let plan = planned(
        json!({"dashboards": [{"name": "On-call", "visibility": "user",
                                "widgets": [declared("Errors"), declared("Saturation")]}]}),
        false,
    );
    let replace = plan
        .changes
        .to_vec()
        .expect("changes read back")
        .into_iter()
        .find(|c| c.action == Action::Replace)
        .expect("a replacement");
    assert_eq!(
        replace.address.to_string(),
        format!("{AT}.dashboard[On-call]")
    );
    let kinds: Vec<&str> = replace
        .operations
        .iter()
        .map(|op| match op {
            Operation::DuplicateDashboard { .. } => "duplicate",
            Operation::DeleteDashboard { .. } => "delete",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["duplicate", "delete"]);
    assert!(replace.warnings[0].contains("new id"));
    // Its new widget is made on the dashboard as it is, by id.
    let create = plan
        .changes
        .to_vec()
        .expect("changes read back")
        .into_iter()
        .find(|c| c.action == Action::Create)
        .unwrap();
    let Operation::CreateWidget { dashboard_id, .. } = &create.operations[0] else {
        panic!()
    };
    assert_eq!(dashboard_id, &DashboardRef::Id(ONCALL_ID.into()));
}

#[test]
fn undeclared_dashboards_are_notes_then_deletes_naming_their_creator() {
    let plan = planned(json!({"dashboards": []}), false);
    assert!(plan.is_empty());
    assert_eq!(plan.notes[0].kind, NoteKind::Unmanaged);
    assert_eq!(plan.notes[0].created_by.as_deref(), Some(USER_ID));
    let plan = planned(json!({"dashboards": []}), true);
    let delete = &plan.changes.to_vec().expect("changes read back")[0];
    assert_eq!(delete.action, Action::Delete);
    assert_eq!(delete.created_by.as_deref(), Some(USER_ID));
    assert_eq!(
        delete.warnings,
        [
            "the dashboard holds 0 section(s) and 1 widget(s), which go with it; the whole project sees it"
        ]
    );
}

#[test]
fn targets_reach_one_widget_and_the_grammar_reads_it_back() {
    let trends = json!({"sections": [{"name": "Quality", "widgets": [
        {"name": "Correctness", "type": "number", "metric": "m", "aggregation": "Count"},
        {"name": "Adherence", "type": "number", "metric": "m", "aggregation": "Count"}
    ]}]});
    let address = format!("{AT}.trends.section[Quality].widget[Adherence]");
    let options = PlanOptions {
        targets: vec![Target::parse(&address).unwrap()].into(),
        ..PlanOptions::default()
    };
    let plan = plan(&desired(trends), &live(), &options).unwrap();
    assert_eq!(addresses(&plan), [address]);
}

fn custom(rotate: bool) -> ManifestSet {
    let spec: IntegrationSpec = serde_json::from_value(json!({
        "provider": "custom", "name": "gateway", "endpoint": "https://llm.example.com",
        "authentication_type": "api_key", "api_key_value": "${GATEWAY_KEY}",
        "rotate_secrets": rotate
    }))
    .expect("an integration spec");
    ManifestSet {
        projects: vec![],
        pricing: None,
        integrations: vec![Located {
            origin: origin(),
            spec,
        }],
        ..ManifestSet::default()
    }
}

#[test]
fn named_custom_integrations_are_created_and_otherwise_only_noted() {
    let absent = live_with(json!([]), json!({"gateway": null}));
    let plan = plan(&custom(false), &absent, &PlanOptions::default()).unwrap();
    let create = &plan.changes.to_vec().expect("changes read back")[0];
    assert_eq!(create.address.to_string(), "custom_integration[gateway]");
    assert_eq!(create.action, Action::Create);
    let Operation::PutCustomIntegration { name, body } = &create.operations[0] else {
        panic!()
    };
    assert_eq!(name, "gateway");
    assert!(
        serde_json::to_string(body)
            .unwrap()
            .contains("${GATEWAY_KEY}")
    );
    let note = &plan.notes[0];
    assert_eq!(note.kind, NoteKind::Unverifiable);
    assert!(
        note.message.contains("cannot be seen") && note.message.contains("nor can it be deleted"),
        "{note:?}"
    );

    let present = live_with(
        json!([]),
        json!({"gateway": {"id": "i-1", "name": "gateway"}}),
    );
    let plan = evalctl::plan::plan(&custom(false), &present, &PlanOptions::default()).unwrap();
    assert!(plan.is_empty());
    assert_eq!(plan.notes.len(), 1);
    let plan = evalctl::plan::plan(&custom(true), &present, &PlanOptions::default()).unwrap();
    assert_eq!(plan.changes.action(0), Action::Update);
}
