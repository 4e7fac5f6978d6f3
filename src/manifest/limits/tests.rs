//! The limits derived from the reference, and a limit added to a copy of the reference
//! enforced on manifests.

use serde_json::{Value, json};

use super::*;
use crate::manifest::schema::{PROJECT_DOCUMENT, document_schema, generate_types, generate_with};
use crate::manifest::types::COLOR_PATTERN;
use crate::schemacheck::{Schemas, ViolationKind};

#[test]
fn every_limit_of_the_reference_on_a_manifest_field() {
    // The core's bindings; a kind that keeps its own
    // (`crate::kinds::LIMIT_BINDINGS`) tests them in its folder.
    let mut schema = generate_types();
    let applied = apply_with(&mut schema, &service_reference(), BINDINGS, true);
    insta::assert_snapshot!(applied.listing(), @r#"
    /$defs/ProjectDocument/properties/id format="uuid" <- #/paths/~1v2~1projects~1{project_id}/get/parameters/0/schema
    /$defs/LogStreamSpec/properties/id format="uuid" <- #/paths/~1v2~1projects~1{project_id}~1log_streams~1{log_stream_id}/get/parameters/0/schema
    /$defs/ExperimentSpec/properties/id format="uuid" <- #/paths/~1v2~1projects~1{project_id}~1experiments~1{experiment_id}/get/parameters/0/schema
    /$defs/ScorerSpec/properties/id format="uuid" <- #/components/schemas/ScorerConfig/properties/id
    /$defs/SegmentFilterSpec/properties/sample_rate minimum=0 <- #/components/schemas/SegmentFilter/properties/sample_rate
    /$defs/SegmentFilterSpec/properties/sample_rate maximum=1 <- #/components/schemas/SegmentFilter/properties/sample_rate
    /$defs/TrendsSpec/properties/relative_time maxLength=64 <- #/components/schemas/TrendsDashboardUpdateRequest/properties/relative_time/anyOf/0
    /$defs/TrendsSpec/properties/relative_time pattern="^last_\\d+_(seconds?|minutes?|hours?|days?|weeks?|months?)$" <- #/components/schemas/TrendsDashboardUpdateRequest/properties/relative_time/anyOf/0
    /$defs/TrendsSpec/properties/sections maxItems=50 <- #/components/schemas/TrendsDashboardResponse/properties/sections
    /$defs/SectionSpec/properties/widgets maxItems=50 <- #/components/schemas/SectionResponse/properties/widgets
    /$defs/WidgetSpec/properties/dataset maxItems=50 <- #/components/schemas/WidgetResponse/properties/dataset/anyOf/0
    /$defs/TrendsSpec/properties/widgets maxItems=50 <- #/components/schemas/TrendsDashboardResponse/properties/widgets
    /$defs/SectionSpec/properties/name minLength=1 <- #/components/schemas/SectionCreateRequest/properties/name
    /$defs/SectionSpec/properties/name maxLength=100 <- #/components/schemas/SectionCreateRequest/properties/name
    /$defs/SectionSpec/properties/description maxLength=500 <- #/components/schemas/SectionCreateRequest/properties/description/anyOf/0
    /$defs/SectionSpec/properties/color maxLength=7 <- #/components/schemas/SectionCreateRequest/properties/color/anyOf/0
    /$defs/SectionSpec/properties/color pattern="^#[0-9A-Fa-f]{6}$" <- #/components/schemas/SectionCreateRequest/properties/color/anyOf/0
    /$defs/SectionSpec/properties/name minLength=1 (had it) <- #/components/schemas/SectionUpdateRequest/properties/name/anyOf/0
    /$defs/SectionSpec/properties/name maxLength=100 (had it) <- #/components/schemas/SectionUpdateRequest/properties/name/anyOf/0
    /$defs/SectionSpec/properties/description maxLength=500 (had it) <- #/components/schemas/SectionUpdateRequest/properties/description/anyOf/0
    /$defs/SectionSpec/properties/color maxLength=7 (had it) <- #/components/schemas/SectionUpdateRequest/properties/color/anyOf/0
    /$defs/SectionSpec/properties/color pattern="^#[0-9A-Fa-f]{6}$" (had it) <- #/components/schemas/SectionUpdateRequest/properties/color/anyOf/0
    /$defs/WidgetSpec/properties/name minLength=1 <- #/components/schemas/WidgetCreateRequest/properties/name
    /$defs/WidgetSpec/properties/name maxLength=100 <- #/components/schemas/WidgetCreateRequest/properties/name
    /$defs/WidgetSpec/properties/metric minLength=1 <- #/components/schemas/WidgetCreateRequest/properties/metric
    /$defs/WidgetSpec/properties/description maxLength=500 <- #/components/schemas/WidgetCreateRequest/properties/description/anyOf/0
    /$defs/WidgetSpec/properties/dataset maxItems=50 (had it) <- #/components/schemas/WidgetCreateRequest/properties/dataset/anyOf/0
    /$defs/WidgetSpec/properties/name minLength=1 (had it) <- #/components/schemas/WidgetUpdateRequest/properties/name/anyOf/0
    /$defs/WidgetSpec/properties/name maxLength=100 (had it) <- #/components/schemas/WidgetUpdateRequest/properties/name/anyOf/0
    /$defs/WidgetSpec/properties/description maxLength=500 (had it) <- #/components/schemas/WidgetUpdateRequest/properties/description/anyOf/0
    /$defs/WidgetSpec/properties/dataset maxItems=50 (had it) <- #/components/schemas/WidgetUpdateRequest/properties/dataset/anyOf/0
    /$defs/DashboardSpec/properties/name minLength=1 <- #/components/schemas/TrendsDashboardDuplicateRequest/properties/name
    /$defs/DashboardSpec/properties/name maxLength=255 <- #/components/schemas/TrendsDashboardDuplicateRequest/properties/name
    /$defs/DashboardSpec/properties/description maxLength=1000 <- #/components/schemas/TrendsDashboardDuplicateRequest/properties/description/anyOf/0
    /$defs/DashboardSpec/properties/name minLength=1 (had it) <- #/components/schemas/TrendsDashboardUpdateRequest/properties/name/anyOf/0
    /$defs/DashboardSpec/properties/name maxLength=255 (had it) <- #/components/schemas/TrendsDashboardUpdateRequest/properties/name/anyOf/0
    /$defs/DashboardSpec/properties/description maxLength=1000 (had it) <- #/components/schemas/TrendsDashboardUpdateRequest/properties/description/anyOf/0
    /$defs/DashboardSpec/properties/relative_time maxLength=64 <- #/components/schemas/TrendsDashboardUpdateRequest/properties/relative_time/anyOf/0
    /$defs/DashboardSpec/properties/relative_time pattern="^last_\\d+_(seconds?|minutes?|hours?|days?|weeks?|months?)$" <- #/components/schemas/TrendsDashboardUpdateRequest/properties/relative_time/anyOf/0
    /$defs/DashboardSpec/properties/sections maxItems=50 <- #/components/schemas/TrendsDashboardResponse/properties/sections
    /$defs/DashboardSpec/properties/widgets maxItems=50 <- #/components/schemas/TrendsDashboardResponse/properties/widgets
    /$defs/MultiModalConfig/properties/max_files minimum=1 (had it) <- #/components/schemas/MultiModalModelIntegrationConfig/properties/max_files/anyOf/0
    /$defs/MultiModalConfig/properties/max_file_size_bytes minimum=1 (had it) <- #/components/schemas/MultiModalModelIntegrationConfig/properties/max_file_size_bytes/anyOf/0
    /$defs/IntegrationDocument/oneOf/4/properties/headers maxProperties=50 <- #/components/schemas/CustomIntegrationCreate/properties/headers/anyOf/0
    /$defs/IntegrationDocument/oneOf/5/properties/hostname minLength=1 (had it) <- #/components/schemas/DatabricksIntegrationCreate/properties/hostname
    /$defs/IntegrationDocument/oneOf/5/properties/hostname maxLength=2083 (had it) <- #/components/schemas/DatabricksIntegrationCreate/properties/hostname
    /$defs/IntegrationDocument/oneOf/5/properties/hostname format="uri" <- #/components/schemas/DatabricksIntegrationCreate/properties/hostname
    /$defs/IntegrationDocument/oneOf/7/properties/hostname minLength=1 (had it) <- #/components/schemas/NvidiaIntegrationCreate/properties/hostname
    /$defs/IntegrationDocument/oneOf/7/properties/hostname maxLength=2083 (had it) <- #/components/schemas/NvidiaIntegrationCreate/properties/hostname
    /$defs/IntegrationDocument/oneOf/7/properties/hostname format="uri" <- #/components/schemas/NvidiaIntegrationCreate/properties/hostname
    /$defs/IntegrationDocument/oneOf/9/properties/endpoint minLength=1 (had it) <- #/components/schemas/VegasGatewayIntegrationCreate/properties/endpoint
    /$defs/IntegrationDocument/oneOf/9/properties/endpoint maxLength=2083 (had it) <- #/components/schemas/VegasGatewayIntegrationCreate/properties/endpoint
    /$defs/IntegrationDocument/oneOf/9/properties/endpoint format="uri" <- #/components/schemas/VegasGatewayIntegrationCreate/properties/endpoint
    "#);
    // With the kinds' own bindings too, the schema is the loader's.
    let kinds = bindings().skip(BINDINGS.len());
    apply_with(&mut schema, &service_reference(), kinds, false);
    assert_eq!(&schema, document_schema(), "the loader's schema has them");
}

/// A manifest type added without saying where it goes at the service would take none of
/// the service's limits: every definition with fields or variants is reached from a
/// binding, or says it is not sent.
#[test]
fn every_manifest_type_is_bound_to_the_service() {
    let mut schema = generate_types();
    let applied = apply(&mut schema, &service_reference());
    let defs = schema["$defs"].as_object().cloned().unwrap_or_default();
    let unbound: Vec<&String> = defs
        .iter()
        .filter(|(_, def)| has_fields(def))
        .map(|(name, _)| name)
        .filter(|name| !applied.reached.contains(*name) && !UNSENT.contains(&name.as_str()))
        .collect();
    assert!(
        unbound.is_empty(),
        "bind these in limits::BINDINGS or a kind's (or list them in UNSENT): {unbound:?}"
    );
    let reference = service_reference();
    for binding in bindings() {
        assert!(
            schema.pointer(binding.manifest).is_some(),
            "{} is not in the manifest schema",
            binding.manifest
        );
        for service in binding.service {
            assert!(
                service_schema(&reference, *service).is_some(),
                "{service:?} is not in the reference"
            );
        }
    }
}

/// Whether a definition has fields, or variants that are not bare constants (an
/// enumeration has nothing to limit).
fn has_fields(def: &Value) -> bool {
    def.get("properties").is_some()
        || ["oneOf", "anyOf"].iter().any(|k| {
            def.get(*k)
                .and_then(Value::as_array)
                .is_some_and(|branches| branches.iter().any(|b| b.get("const").is_none()))
        })
}

#[test]
fn the_colour_pattern_is_the_services() {
    let color = &document_schema()["$defs"]["SectionSpec"]["properties"]["color"];
    assert_eq!(color["pattern"], COLOR_PATTERN);
    assert!(color.get("allOf").is_none(), "{color}");
}

/// A Project document with a field of each kind a test below limits.
fn project() -> Value {
    json!({
        "kind": "Project",
        "name": "demo",
        "log_streams": [{
            "name": "production",
            "metric_settings": {
                "scorers": [{
                    "name": "correctness",
                    "model_name": "gpt-4o-mini",
                    "scoreable_node_types": ["llm", "chat", "tool"],
                }],
            },
            "trends": {"sections": [{"name": "Quality metrics"}]},
        }],
    })
}

/// The violations of `value` against the manifest schema with the limits of `reference`.
fn violations(reference: &Value, value: &Value) -> Vec<(String, ViolationKind)> {
    let schemas = Schemas::new(generate_with(reference));
    assert_eq!(schemas.problems(), &[]);
    schemas
        .validate(PROJECT_DOCUMENT, value)
        .into_iter()
        .map(|v| (v.pointer(), v.kind))
        .collect()
}

#[test]
fn a_limit_added_to_the_reference_is_enforced() {
    let original = &service_reference();
    assert_eq!(violations(original, &project()), []);

    let mut changed = original.clone();
    let schemas = changed["components"]["schemas"]
        .as_object_mut()
        .expect("components");
    // A tighter limit where the service had one, and limits where it had none.
    schemas["SectionCreateRequest"]["properties"]["name"]["maxLength"] = json!(8);
    schemas["ScorerConfig"]["properties"]["model_name"]["anyOf"][0]["maxLength"] = json!(5);
    schemas["ScorerConfig"]["properties"]["scoreable_node_types"]["anyOf"][0]["maxItems"] =
        json!(2);
    schemas["ScorerConfig"]["properties"]["name"]["anyOf"][0]["pattern"] = json!("^custom-");

    let found = violations(&changed, &project());
    let scorer = "/log_streams/0/metric_settings/scorers/0";
    assert_eq!(
        found,
        [
            (
                format!("{scorer}/name"),
                ViolationKind::PatternMismatch {
                    pattern: "^custom-".to_owned()
                }
            ),
            (
                format!("{scorer}/model_name"),
                ViolationKind::StringTooLong { max: 5 }
            ),
            (
                format!("{scorer}/scoreable_node_types"),
                ViolationKind::TooManyItems { max: 2, actual: 3 }
            ),
            (
                "/log_streams/0/trends/sections/0/name".to_owned(),
                ViolationKind::StringTooLong { max: 8 }
            ),
        ]
    );
}

#[test]
fn a_limit_on_a_field_the_manifest_does_not_have_changes_nothing() {
    let mut changed = service_reference();
    changed["components"]["schemas"]["TrendsDashboardResponse"]["properties"]["start_time"]["maximum"] =
        json!(1);
    assert_eq!(generate_with(&changed), *document_schema());
}

#[test]
fn stricter_limits_win_and_a_second_pattern_is_added() {
    let mut target = json!({"type": "string", "maxLength": 10, "minLength": 2, "pattern": "^a"});
    let patch = |keyword: &str, value: Value| Derived {
        manifest: String::new(),
        keyword: keyword.to_owned(),
        value,
        service: String::new(),
        written: false,
    };
    assert!(!write(&mut target, &patch("maxLength", json!(20))));
    assert!(write(&mut target, &patch("maxLength", json!(5))));
    assert!(!write(&mut target, &patch("minLength", json!(1))));
    assert!(write(&mut target, &patch("pattern", json!("b$"))));
    assert!(!write(&mut target, &patch("pattern", json!("b$"))));
    assert!(write(&mut target, &patch("format", json!("uri"))));
    assert!(!write(&mut target, &patch("format", json!("uuid"))));
    assert_eq!(
        target,
        json!({"type": "string", "maxLength": 5, "minLength": 2, "pattern": "^a",
               "allOf": [{"pattern": "b$"}], "format": "uri"})
    );
}

#[test]
fn service_keywords_become_manifest_limits() {
    assert_eq!(limit("maxItems", &json!(50.0)), Some(json!(50)));
    assert_eq!(limit("maximum", &json!(0.5)), Some(json!(0.5)));
    assert_eq!(limit("format", &json!("uuid4")), Some(json!("uuid")));
    assert_eq!(limit("format", &json!("uri")), Some(json!("uri")));
    assert_eq!(limit("format", &json!("password")), None);
    assert_eq!(limit("uniqueItems", &json!(false)), None);
}
