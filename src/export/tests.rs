//! Export as a whole, from a literal snapshot: the files load back into the
//! same specs, and planning them against the same live state is empty.

use std::collections::BTreeMap;

use serde_json::json;

use super::write::Body;
use super::*;
use crate::api::{IntegrationConfig, TrendsDashboard};
use crate::kinds::templates::Template;
use crate::kinds::templates::TemplateState;
use crate::manifest::types::ProjectSpec;
use crate::plan::{PlanOptions, plan};
use crate::state::metric_settings::metric_settings_from_wire;
use crate::state::snapshot::ProjectRef;
use crate::state::wire::WireCatalog;
use crate::state::{
    Catalog, CatalogScorer, DashboardState, ObjectKey, ProjectState, RunState, State,
};

fn from<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).unwrap()
}

/// A catalog with a preset, two scorers of one name, and a code scorer.
pub(crate) fn catalog() -> Catalog {
    let scorer = |id: &str, name: &str, kind: &str, extra: serde_json::Value| {
        let mut v = json!({"id": id, "name": name, "scorer_type": kind});
        if let (Some(obj), Some(more)) = (v.as_object_mut(), extra.as_object()) {
            obj.extend(more.clone());
        }
        from::<crate::api::Scorer>(v)
    };
    WireCatalog {
        scorers: vec![
            scorer(
                "s-correct",
                "correctness",
                "preset",
                json!({"output_type": "boolean", "input_type": "llm_spans", "model_type": "llm",
                    "roll_up_method": "percentage_true",
                    "latest_version": {"id": "v-c2", "version": 2, "scorer_id": "s-correct"}}),
            ),
            scorer("s-dup1", "dup", "llm", json!({})),
            scorer("dddd0002-0000-4000-8000-000000000000", "dup", "llm", json!({})),
            scorer("s-code", "code-check", "code", json!({})),
        ],
        versions: BTreeMap::from([(
            "s-correct".to_owned(),
            vec![from(
                json!({"id": "v-c1", "version": 1, "scorer_id": "s-correct", "created_at": "t", "updated_at": "t"}),
            )],
        )]),
    }
    .normalize()
}

fn run(
    id: &str,
    name: &str,
    settings: serde_json::Value,
    dashboard: Option<serde_json::Value>,
) -> RunState {
    RunState {
        id: id.into(),
        name: name.into(),
        metric_settings: Some(Box::new(metric_settings_from_wire(
            &catalog(),
            &from(settings),
        ))),
        dashboard: dashboard.map(|d| Box::new(DashboardState::from(&from::<TrendsDashboard>(d)))),
        dashboards: None,
        traffic: Default::default(),
    }
}

fn template<C: serde::de::DeserializeOwned>(v: serde_json::Value) -> TemplateState<C> {
    TemplateState::from(from::<Template<C>>(v))
}

fn dashboard(sections: serde_json::Value, favorited: bool) -> serde_json::Value {
    json!({"id": "d1", "name": "Default", "is_default": true, "visibility": "project",
        "is_favorited": favorited, "log_stream_id": "ls", "project_id": "p1",
        "interval_mins": 60, "start_time": 0, "end_time": 0, "sections": sections})
}

/// `base` with the fields of `extra` set.
fn with(mut base: serde_json::Value, extra: serde_json::Value) -> serde_json::Value {
    if let (Some(obj), Some(more)) = (base.as_object_mut(), extra.as_object()) {
        obj.extend(more.clone());
    }
    base
}

/// A project with every kind of content, and twin log stream names.
pub(crate) fn project() -> ProjectState {
    let mut production = run(
        "ls1",
        "production",
        json!({
            "scorers": [
                {"id": "eeee0000-0000-4000-8000-000000000000", "scorer_type": "llm", "name": "gone"},
                {"id": "s-correct", "scorer_type": "preset", "name": "correctness",
                 "output_type": "boolean", "model_type": "slm", "num_judges": 3, "cot_enabled": false,
                 "scoreable_node_types": ["llm", "chat", "llm"],
                 "scorer_version": {"id": "v-c1", "version": 1, "scorer_id": "s-correct"},
                 "filters": [{"name": "node_name", "operator": "one_of", "value": ["llm", "chat"], "case_sensitive": true},
                             {"name": "node_name", "operator": "eq", "value": "Yes", "case_sensitive": false}]},
                {"id": "dddd0002-0000-4000-8000-000000000000", "scorer_type": "llm", "name": "dup", "model_name": "gpt-4.1-mini"}
            ],
            "segment_filters": [
                {"filter": {"name": "metadata", "key": "env", "operator": "not_in", "value": ["test", "dev"]},
                 "sample_rate": 0.5, "llm_scorers": true, "multimodal_scorers": false},
                {"sample_rate": 1.0, "llm_scorers": false, "multimodal_scorers": false}
            ]
        }),
        Some(with(
            dashboard(
                json!([
                    {"id": "q1", "name": "Quality", "description": "Quality: charts #1", "color": "#1F77B4",
                     "widgets": [
                        {"id": "w3", "name": "Correctness", "type": "line_chart", "metric": "correctness",
                         "aggregation": "Average", "description": "", "dataset": []},
                        {"id": "w2", "name": "Correctness", "type": "bar_chart", "metric": "correctness",
                         "aggregation": "Count"},
                        {"id": "w4", "name": "Adherence", "type": "number", "metric": "context_adherence",
                         "aggregation": "PercentageTrue", "description": "Share of ${adherent} traces",
                         "dataset": [{"metrics": ["context_adherence"], "groups": ["b", "a"]}]}
                     ]},
                    {"id": "q2", "name": "Quality", "description": "again", "color": "#000000"},
                    {"id": "o1", "name": "Odd", "description": "", "color": "red"}
                ]),
                true,
            ),
            json!({"relative_time": "last_7_days", "group_by": "model",
                "widgets": [{"id": "w1", "name": "Traces", "type": "number", "metric": "num_traces",
                    "aggregation": "Count"}]}),
        )),
    );
    // The other dashboards, in the service's order: two of one name.
    let other = |id: &str, name: &str, visibility: &str, extra: serde_json::Value| {
        let mut d = with(dashboard(json!([]), false), extra);
        d["id"] = json!(id);
        d["name"] = json!(name);
        d["is_default"] = json!(false);
        d["visibility"] = json!(visibility);
        DashboardState::from(&from::<TrendsDashboard>(d))
    };
    production.dashboards = Some(vec![
        other(
            "d2",
            "On-call",
            "user",
            json!({"description": "Pager", "interval_mins": 5, "group_by": "",
                "widgets": [{"id": "w9", "name": "Errors", "type": "table", "metric": "error_count",
                    "aggregation": "Sum"}],
                "sections": [{"id": "s9", "name": "Latency", "widgets": [
                    {"id": "w8", "name": "p99", "type": "line_chart", "metric": "latency_ms", "aggregation": "P99"}]}]}),
        ),
        other("d3", "On-call", "project", json!({})),
        other(
            "d4",
            "Alpha",
            "project",
            json!({"relative_time": "last_24_hours"}),
        ),
    ]);
    let twin_a = run(
        "bbbb0002-0000-4000-8000-000000000000",
        "twin",
        json!({"scorers": []}),
        Some(dashboard(json!([]), false)),
    );
    let twin_b = run(
        "bbbb0003-0000-4000-8000-000000000000",
        "twin",
        json!({"scorers": [], "segment_filters": []}),
        None,
    );
    let experiment = run(
        "e1",
        "exp: nightly",
        json!({"scorers": [{"id": "s-code", "scorer_type": "code", "score_type": "bool",
            "filters": [{"name": "modality", "operator": "one_of", "value": ["image", "audio"]}]}]}),
        None,
    );
    let tree =
        json!([{"label": "A", "id": "a", "children": [{"label": "B", "id": "b", "children": []}]}]);
    ProjectState {
        id: "p1".into(),
        name: "demo".into(),
        log_streams: [production, twin_a, twin_b]
            .into_iter()
            .map(|r| (ObjectKey::Id(r.id.clone()), r))
            .collect(),
        experiments: BTreeMap::from([(ObjectKey::Id("e1".into()), experiment)]),
        parts: crate::kinds::ProjectParts {
            annotation_templates: Some(vec![
                template(
                    json!({"id": "t2", "name": "tree", "position": 1, "created_at": "t",
                "criteria": "Pick ${one}\nthen explain.\n",
                "constraints": {"annotation_type": "tree_choice", "choices_tree": tree,
                    "choices_tree_yaml": "- label: A\n"}}),
                ),
                template(
                    json!({"id": "t1", "name": "stars", "position": 0, "created_at": "t",
                "include_explanation": true, "constraints": {"annotation_type": "star"}}),
                ),
            ]),
            feedback_templates: Some(vec![template(
                json!({"id": "f1", "name": "resolved", "position": 0,
            "created_at": "t",
            "constraints": {"feedback_type": "choice", "choices": ["yes", "no"], "allow_other": false}}),
            )]),
            ..crate::kinds::ProjectParts::default()
        },
    }
}

/// Reads as the service gives them: openai; azure with its defaults (and its
/// own `api_version`); custom with `base_url`, a read-only field and an
/// `extra` field.
fn integrations() -> Vec<IntegrationConfig> {
    vec![
        from(json!({"id": "i1", "name": "openai", "provider": "openai",
            "organization_id": "org-1", "extra": null})),
        from(json!({"id": "i2", "name": "azure", "provider": "azure",
            "endpoint": "https://azure.example.com/${tenant}", "proxy": false,
            "api_version": "2025-03-01-preview", "authentication_type": "api_key",
            "deployments": {"gpt-4o": "prod-4o"}, "extra": null})),
        from(json!({"id": "i3", "name": "custom", "provider": "custom",
            "base_url": "https://llm.internal", "authentication_type": "oauth2",
            "is_legacy_format": false, "model_properties": [{"name": "m", "alias": "M"}],
            "extra": {"oauth2_token_url": "https://auth.internal/token"}})),
    ]
}

pub(super) fn snapshot() -> Snapshot {
    Snapshot {
        visible: vec![
            ProjectRef {
                name: "demo".into(),
                id: "p1".into(),
            },
            ProjectRef {
                name: "other".into(),
                id: "p2".into(),
            },
        ],
        projects: vec![project()],
        catalog: catalog(),
        integrations: Some(integrations()),
        global: crate::kinds::GlobalParts::default(),
        warnings: Vec::new(),
    }
}

fn provenance() -> Provenance {
    Provenance {
        schema: SchemaLocation::Unknown,
        service: "https://api.example.com".into(),
    }
}

/// The live state `plan` would load for the exported documents (runs keyed
/// as the documents refer to them).
fn live_for(spec: &ProjectSpec) -> State {
    let mut project = project();
    let rekey = |runs: &BTreeMap<ObjectKey, RunState>, keys: Vec<ObjectKey>| {
        keys.into_iter()
            .filter_map(|key| {
                let found = runs.values().find(|r| match &key {
                    ObjectKey::Name(n) => &r.name == n,
                    ObjectKey::Id(i) => &r.id == i,
                })?;
                Some((key, found.clone()))
            })
            .collect()
    };
    let keys = |parts: Vec<(Option<String>, Option<String>)>| {
        parts
            .into_iter()
            .filter_map(|(n, i)| ObjectKey::from_parts(n.as_deref(), i.as_deref()))
            .collect::<Vec<_>>()
    };
    project.log_streams = rekey(
        &project.log_streams,
        keys(
            spec.log_streams
                .iter()
                .map(|l| (l.name.clone(), l.id.clone()))
                .collect(),
        ),
    );
    project.experiments = rekey(
        &project.experiments,
        keys(
            spec.experiments
                .iter()
                .map(|e| (e.name.clone(), e.id.clone()))
                .collect(),
        ),
    );
    // The scorer the credentials cannot see is in the catalog `plan` reads
    // here, so the round trip can be planned at all.
    let mut catalog = catalog();
    catalog
        .scorers
        .push(CatalogScorer::from(from::<crate::api::Scorer>(
            json!({"id": "eeee0000-0000-4000-8000-000000000000", "name": "gone", "scorer_type": "llm"}),
        )));
    State {
        projects: BTreeMap::from([(ObjectKey::Name("demo".into()), project)]),
        integrations: integrations()
            .into_iter()
            .map(|i| (i.provider.to_string(), Some(i)))
            .collect(),
        custom_integrations: BTreeMap::new(),
        catalog,
        missing: Vec::new(),
        global: crate::kinds::GlobalParts::default(),
    }
}

#[test]
fn exported_files_load_back_into_the_same_specs_and_plan_empty() {
    let export = render(&snapshot(), &provenance());
    let names: Vec<&str> = export.files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["demo.yaml", "integrations.yaml"]);
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for file in &export.files {
        let path = dir.path().join(&file.name);
        std::fs::write(&path, &file.text).unwrap();
        paths.push(path);
    }
    let outcome = crate::manifest::load(&paths, &|_| None);
    assert!(
        !outcome.has_errors(),
        "{}\n{}",
        outcome.render_diagnostics(false),
        export.files[0].text
    );
    let mut warnings = Vec::new();
    let expected = to_spec::project_document(&project(), &catalog(), true, &mut warnings);
    let Body::Project(expected) = expected.body else {
        panic!("a project")
    };
    assert_eq!(outcome.set.projects.len(), 1);
    assert_eq!(&outcome.set.projects[0].spec, expected.as_ref());
    assert_eq!(outcome.set.integrations.len(), 3);

    let live = live_for(&outcome.set.projects[0].spec);
    let planned = plan(&outcome.set, &live, &PlanOptions::default())
        .unwrap_or_else(|e| panic!("{e}\n{}", export.files[0].text));
    // Only the second `Quality` section, the second `Correctness` widget of
    // the first and the second `On-call` dashboard, which export left out,
    // are drift.
    let deletes: Vec<String> = planned
        .changes
        .to_vec()
        .expect("changes read back")
        .into_iter()
        .map(|c| format!("{:?} {}", c.action, c.address))
        .collect();
    assert_eq!(
        deletes,
        [
            "Delete project[demo].log_stream[production].dashboard[On-call]",
            "Delete project[demo].log_stream[production].trends.section[Quality]",
            "Delete project[demo].log_stream[production].trends.section[Quality].widget[Correctness]"
        ],
        "{:#?}\n{}",
        planned.changes,
        export.files[0].text
    );
    let operations: Vec<String> = planned
        .changes
        .to_vec()
        .expect("changes read back")
        .into_iter()
        .map(|c| format!("{:?}", c.operations))
        .collect();
    for (operations, second) in operations.iter().zip(["\"d3\"", "\"q2\"", "\"w2\""]) {
        assert!(operations.contains(second), "{second}: {operations}");
    }
}

#[test]
fn the_project_file_reads_like_a_hand_written_one() {
    let export = render(&snapshot(), &provenance());
    let text = &export.files[0].text;
    for line in [
        "# Exported by evalctl",
        "from https://api.example.com",
        "kind: Project\napi_version: evalctl/v1\nname: demo\n",
        "        - name: correctness\n          scorer_version: 1\n",
        "          model_type: slm\n",
        "          scoreable_node_types: [chat, llm]\n",
        "        - id: dddd0002-0000-4000-8000-000000000000  # `dup` (the catalog has several scorers of this name)\n",
        "        - id: eeee0000-0000-4000-8000-000000000000  # `gone` (not in the catalog)\n",
        "              value: \"Yes\"\n              case_sensitive: false\n",
        "        - sample_rate: 0.5\n",
        "          llm_scorers: true\n        - sample_rate: 1.0\n",
        "          color: \"#1F77B4\"\n",
        "      favorite: user  # the service reads back only that it is favorited for you, not whether for the whole project: `project` if so (export does not guess)\n",
        "          widgets:\n            - name: Adherence\n              type: number\n",
        "              description: Share of $${adherent} traces\n              dataset:\n                - groups: [b, a]\n",
        "            - name: Correctness\n              type: line_chart\n              metric: correctness\n              aggregation: Average\n      widgets:\n        - name: Traces\n",
        "      interval_mins: 60\n      relative_time: last_7_days\n      group_by: model\n      dashboards:\n        - name: Alpha\n          visibility: project\n          sections: []\n          widgets: []\n",
        "        - name: On-call\n          visibility: user\n          description: Pager\n",
        "          interval_mins: 5\n\n",
        "    trends:\n      sections: []\n      widgets: []\n      interval_mins: 60\n\n",
        "  - id: bbbb0002-0000-4000-8000-000000000000  # log stream `twin` (its name is not unique)\n",
        "  - name: \"exp: nightly\"\n",
        "    criteria: |\n      Pick $${one}\n      then explain.\n",
        "      choices: [\"yes\", \"no\"]\n",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
    for absent in [
        "output_type",
        "choices_tree_yaml",
        "allow_other",
        "children: []",
        "multimodal_scorers",
        "case_sensitive: true",
        "Odd\n          description",
        "red",
        "description: \"\"",
        "dataset: []",
        "bar_chart",
        "group_by: \"\"",
        "copy_from",
        "relative_time: null",
    ] {
        assert!(!text.contains(absent), "unexpected {absent:?} in\n{text}");
    }
    assert!(
        export
            .warnings
            .iter()
            .any(|w| w.contains("section `Quality` of the default dashboard of log stream `production` of project `demo` is the second of that name")),
        "{:?}",
        export.warnings
    );
    assert!(
        export.warnings.iter().any(|w| w.contains(
            "widget `Correctness` of section `Quality` of the default dashboard of log stream `production` of project `demo` is the second of that name"
        )),
        "{:?}",
        export.warnings
    );
    assert!(
        export.warnings.iter().any(|w| w.contains(
            "dashboard `On-call` of log stream `production` of project `demo` is the second of that name"
        )),
        "{:?}",
        export.warnings
    );
    assert!(export.warnings.iter().any(|w| w.contains("`gone`")));
    assert_eq!(render(&snapshot(), &provenance()), export, "deterministic");
    let integrations = &export.files[1].text;
    for text in [
        "kind: Integration\nprovider: azure\ntoken: ${AZURE_API_KEY}\nendpoint: https://azure.example.com/$${tenant}\n",
        "api_version: \"2025-03-01-preview\"\n",
        "provider: custom\nendpoint: https://llm.internal\ntoken: ${CUSTOM_TOKEN}\n",
        "oauth2_token_url: https://auth.internal/token\n",
        "kind: Integration\napi_version: evalctl/v1\nprovider: openai\ntoken: ${OPENAI_API_KEY}\norganization_id: org-1\n",
    ] {
        assert!(
            integrations.contains(text),
            "missing {text:?} in\n{integrations}"
        );
    }
    assert!(!integrations.contains("is_legacy_format"), "{integrations}");
}
