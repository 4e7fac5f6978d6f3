//! Tests against the service's real OpenAPI document (the repository's copy,
//! `reference/service-openapi.json`): the 422 bodies the sandbox will
//! send, checked field by field against pydantic's wording.

use std::sync::OnceLock;

use serde_json::{Value, json};

use super::tests_limits::tree;
use super::*;

use crate::api::reference::SERVICE_REFERENCE as OPENAPI;

pub(super) fn doc() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| serde_json::from_str(OPENAPI).unwrap_or(Value::Null))
}

/// The document in the default (JSON Schema) dialect.
fn service() -> &'static Schemas {
    static S: OnceLock<Schemas> = OnceLock::new();
    S.get_or_init(|| Schemas::new(doc().clone()))
}

/// The document in the pydantic dialect.
fn pydantic_service() -> &'static Schemas {
    static S: OnceLock<Schemas> = OnceLock::new();
    S.get_or_init(|| Schemas::with_dialect(doc().clone(), Dialect::Pydantic))
}

pub(super) fn component(name: &str) -> String {
    format!("#/components/schemas/{name}")
}

/// The 422 body for `value` posted as `schema`, in the default dialect.
fn body_422(schema: &str, value: Value) -> Value {
    let violations = service().validate(&component(schema), &value);
    pydantic::http_validation_error(&violations, &[PathSeg::key("body")])
}

fn locs(body: &Value) -> Vec<Value> {
    body["detail"]
        .as_array()
        .map(|d| d.iter().map(|i| i["loc"].clone()).collect())
        .unwrap_or_default()
}

const UUID: &str = "6f1c2a4e-8e0b-4c2a-9f5e-1b2c3d4e5f60";

#[test]
fn reference_document_is_sound_and_its_examples_validate() {
    assert!(doc().is_object(), "the reference document parses");
    assert_eq!(service().problems(), &[] as &[SchemaError]);
    let mut checked = 0;
    for (path, ops) in doc()["paths"].as_object().into_iter().flatten() {
        for (method, op) in ops.as_object().into_iter().flatten() {
            let Some(content) = op.pointer("/requestBody/content/application~1json") else {
                continue;
            };
            for example in content["schema"]["examples"]
                .as_array()
                .into_iter()
                .flatten()
            {
                for s in [service(), pydantic_service()] {
                    let v = s.validate_schema(&content["schema"], example);
                    assert!(v.is_empty(), "{method} {path}: {v:?}");
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 12, "only {checked} examples");
}

#[test]
fn sample_rate_above_one_is_less_than_equal() {
    let body = body_422(
        "MetricSettingsRequest",
        json!({"segment_filters": [{"sample_rate": 1.5}]}),
    );
    assert_eq!(
        body,
        json!({"detail": [{
            "type": "less_than_equal",
            "loc": ["body", "segment_filters", 0, "sample_rate"],
            "msg": "Input should be less than or equal to 1",
            "input": 1.5,
            "ctx": {"le": 1.0},
        }]})
    );
}

/// One body with a fault of every common kind; all are reported, in the
/// order of the body (JSON Schema dialect).
fn faulty_metric_settings() -> Value {
    json!({
        "scorers": [{
            "id": "not-a-uuid",
            "scorer_type": "llmx",
            "num_judges": "3",
            "filters": [{"name": "node_name", "value": 5}],
        }],
        "segment_filters": [{
            "sample_rate": -0.5,
            "llm_scorers": "yes",
            "filter": {"name": "metadata", "operator": "eq", "value": "x"},
        }],
    })
}

#[test]
fn every_fault_of_a_body_is_reported() {
    let body = body_422("MetricSettingsRequest", faulty_metric_settings());
    let uuid_error = "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1";
    let filter = json!({"name": "node_name", "value": 5});
    assert_eq!(
        body,
        json!({"detail": [
            {"type": "uuid_parsing", "loc": ["body", "scorers", 0, "id"],
             "msg": format!("Input should be a valid UUID, {uuid_error}"),
             "input": "not-a-uuid", "ctx": {"error": uuid_error}},
            {"type": "enum", "loc": ["body", "scorers", 0, "scorer_type"],
             "msg": "Input should be 'llm', 'code', 'luna' or 'preset'",
             "input": "llmx", "ctx": {"expected": "'llm', 'code', 'luna' or 'preset'"}},
            {"type": "int_type", "loc": ["body", "scorers", 0, "num_judges"],
             "msg": "Input should be a valid integer", "input": "3"},
            {"type": "string_type", "loc": ["body", "scorers", 0, "filters", 0, "node_name", "value", "str"],
             "msg": "Input should be a valid string", "input": 5},
            {"type": "list_type", "loc": ["body", "scorers", 0, "filters", 0, "node_name", "value", "list[str]"],
             "msg": "Input should be a valid list", "input": 5},
            {"type": "missing", "loc": ["body", "scorers", 0, "filters", 0, "node_name", "operator"],
             "msg": "Field required", "input": filter},
            {"type": "greater_than_equal", "loc": ["body", "segment_filters", 0, "sample_rate"],
             "msg": "Input should be greater than or equal to 0", "input": -0.5, "ctx": {"ge": 0.0}},
            {"type": "bool_type", "loc": ["body", "segment_filters", 0, "llm_scorers"],
             "msg": "Input should be a valid boolean", "input": "yes"},
            {"type": "missing", "loc": ["body", "segment_filters", 0, "filter", "metadata", "key"],
             "msg": "Field required", "input": {"name": "metadata", "operator": "eq", "value": "x"}},
        ]})
    );
}

#[test]
fn pydantic_dialect_orders_by_model_fields() {
    let violations = pydantic_service().validate(
        &component("MetricSettingsRequest"),
        &faulty_metric_settings(),
    );
    let body = pydantic::http_validation_error(&violations, &[PathSeg::key("body")]);
    // ScorerConfig declares model_name, num_judges, filters, ..., id, name, scorer_type;
    // NodeNameFilter declares name, operator, value; SegmentFilter filter, sample_rate, llm_scorers.
    assert_eq!(
        locs(&body),
        vec![
            json!(["body", "scorers", 0, "num_judges"]),
            json!(["body", "scorers", 0, "filters", 0, "node_name", "operator"]),
            json!([
                "body",
                "scorers",
                0,
                "filters",
                0,
                "node_name",
                "value",
                "str"
            ]),
            json!([
                "body",
                "scorers",
                0,
                "filters",
                0,
                "node_name",
                "value",
                "list[str]"
            ]),
            json!(["body", "scorers", 0, "id"]),
            json!(["body", "scorers", 0, "scorer_type"]),
            json!(["body", "segment_filters", 0, "filter", "metadata", "key"]),
            json!(["body", "segment_filters", 0, "sample_rate"]),
            json!(["body", "segment_filters", 0, "llm_scorers"]),
        ]
    );
}

#[test]
fn missing_operator_inside_a_node_name_filter() {
    let filter = json!({"name": "node_name", "value": ["a", "b"], "case_sensitive": false});
    let body = body_422(
        "MetricSettingsRequest",
        json!({"segment_filters": [{"sample_rate": 0.5, "filter": filter}]}),
    );
    assert_eq!(
        body,
        json!({"detail": [{
            "type": "missing",
            "loc": ["body", "segment_filters", 0, "filter", "node_name", "operator"],
            "msg": "Field required",
            "input": filter,
        }]})
    );
}

#[test]
fn unknown_missing_and_misshapen_union_tags() {
    let post = |filter: Value| {
        body_422(
            "MetricSettingsRequest",
            json!({"segment_filters": [{"sample_rate": 0.5, "filter": filter}]}),
        )
    };
    let expected_tags = "'node_name', 'metadata', 'modality'";
    assert_eq!(
        post(json!({"name": "nodename", "operator": "eq", "value": "x"})),
        json!({"detail": [{
            "type": "union_tag_invalid",
            "loc": ["body", "segment_filters", 0, "filter"],
            "msg": format!("Input tag 'nodename' found using 'name' does not match any of the expected tags: {expected_tags}"),
            "input": {"name": "nodename", "operator": "eq", "value": "x"},
            "ctx": {"discriminator": "'name'", "tag": "nodename", "expected_tags": expected_tags},
        }]})
    );
    // The tag has a default in the schema, but a discriminated union still needs it.
    assert_eq!(
        post(json!({"operator": "eq", "value": "x"})),
        json!({"detail": [{
            "type": "union_tag_not_found",
            "loc": ["body", "segment_filters", 0, "filter"],
            "msg": "Unable to extract tag using discriminator 'name'",
            "input": {"operator": "eq", "value": "x"},
            "ctx": {"discriminator": "'name'"},
        }]})
    );
    let body = post(json!("node_name"));
    assert_eq!(body["detail"][0]["type"], "model_attributes_type");
    assert_eq!(
        body["detail"][0]["loc"],
        json!(["body", "segment_filters", 0, "filter"])
    );
    // `null` is allowed: the filter is optional.
    assert_eq!(post(Value::Null), json!({"detail": []}));

    let violations = service().validate(
        &component("MetricSettingsRequest"),
        &json!({"scorers": [{"id": UUID, "scorer_type": "llm", "filters": [{"name": 7}]}]}),
    );
    assert_eq!(
        violations[0].kind,
        ViolationKind::UnionTagInvalid {
            discriminator: "name".into(),
            tag: json!(7),
            expected: vec!["node_name".into(), "metadata".into(), "modality".into()],
        }
    );
}

#[test]
fn wrong_types_use_pydantic_type_names() {
    let first = |schema: &str, v: Value| {
        let body = body_422(schema, v);
        (
            body["detail"][0]["type"].clone(),
            body["detail"][0]["loc"].clone(),
        )
    };
    assert_eq!(
        first("MetricSettingsRequest", json!([])),
        (json!("model_attributes_type"), json!(["body"]))
    );
    assert_eq!(
        first("MetricSettingsRequest", json!({"scorers": {}})),
        (json!("list_type"), json!(["body", "scorers"]))
    );
    assert_eq!(
        first("LogStreamSearchRequest", json!({"include_counts": "x"})),
        (json!("bool_type"), json!(["body", "include_counts"]))
    );
    assert_eq!(
        first("LogStreamSearchRequest", json!({"limit": 1.5})),
        (json!("int_from_float"), json!(["body", "limit"]))
    );
    assert_eq!(
        first("LogStreamSearchRequest", json!({"limit": "10"})),
        (json!("int_type"), json!(["body", "limit"]))
    );
    assert_eq!(
        service().validate(
            &component("LogStreamSearchRequest"),
            &json!({"limit": 10.0})
        ),
        vec![]
    );
    assert_eq!(
        first("SegmentFilter", json!({"sample_rate": "0.5"})),
        (json!("float_type"), json!(["body", "sample_rate"]))
    );
    assert_eq!(
        first(
            "MetricSettingsRequest",
            json!({"scorers": [{"id": 5, "scorer_type": "llm"}]})
        ),
        (json!("uuid_type"), json!(["body", "scorers", 0, "id"]))
    );
    assert_eq!(
        first("OpenAIIntegrationCreate", json!({"token": ["t"]})),
        (json!("string_type"), json!(["body", "token"]))
    );
    assert_eq!(
        first("BaseAwsIntegrationCreate", json!({"token": "t"})),
        (json!("dict_type"), json!(["body", "token"]))
    );
}

#[test]
fn enum_miss_on_scorer_type() {
    let body = body_422(
        "MetricSettingsRequest",
        json!({"scorers": [{"id": UUID, "scorer_type": 3}]}),
    );
    assert_eq!(
        body,
        json!({"detail": [{
            "type": "enum",
            "loc": ["body", "scorers", 0, "scorer_type"],
            "msg": "Input should be 'llm', 'code', 'luna' or 'preset'",
            "input": 3,
            "ctx": {"expected": "'llm', 'code', 'luna' or 'preset'"},
        }]})
    );
    // An inline enum is a Literal in pydantic.
    let body = body_422(
        "NodeNameFilter",
        json!({"name": "node_name", "operator": "like", "value": "x"}),
    );
    assert_eq!(body["detail"][0]["type"], "literal_error");
    assert_eq!(
        body["detail"][0]["msg"],
        "Input should be 'eq', 'ne', 'contains', 'one_of' or 'not_in'"
    );
}

#[test]
fn template_names_and_criteria_have_lengths() {
    for (schema, tag_field) in [
        ("AnnotationTemplateCreate", "annotation_type"),
        ("FeedbackTemplateCreate", "feedback_type"),
    ] {
        let constraints = json!({tag_field: "like_dislike"});
        let body = body_422(schema, json!({"name": "", "constraints": constraints}));
        assert_eq!(
            body,
            json!({"detail": [{
                "type": "string_too_short", "loc": ["body", "name"],
                "msg": "String should have at least 1 character", "input": "", "ctx": {"min_length": 1},
            }]}),
            "{schema}"
        );
        let long = "é".repeat(256);
        let body = body_422(
            schema,
            json!({"name": long, "constraints": constraints, "criteria": ""}),
        );
        assert_eq!(
            body,
            json!({"detail": [
                {"type": "string_too_long", "loc": ["body", "name"],
                 "msg": "String should have at most 255 characters", "input": long, "ctx": {"max_length": 255}},
                {"type": "string_too_short", "loc": ["body", "criteria"],
                 "msg": "String should have at least 1 character", "input": "", "ctx": {"min_length": 1}},
            ]}),
            "{schema}"
        );
        // 255 characters (510 bytes) is fine: lengths count characters.
        assert_eq!(
            service().validate(
                &component(schema),
                &json!({"name": "é".repeat(255), "constraints": constraints})
            ),
            vec![]
        );
        let body = body_422(
            schema,
            json!({"name": "x", "constraints": {tag_field: "score", "min": -1}}),
        );
        assert_eq!(
            locs(&body),
            vec![
                json!(["body", "constraints", "score", "min"]),
                json!(["body", "constraints", "score", "max"])
            ]
        );
        assert_eq!(
            body["detail"][0]["msg"],
            "Input should be greater than or equal to 0"
        );
        let body = body_422(schema, json!({"name": "x"}));
        assert_eq!(body["detail"][0]["loc"], json!(["body", "constraints"]));
        assert_eq!(body["detail"][0]["input"], json!({"name": "x"}));
    }
}

#[test]
fn section_color_pattern_and_name_length() {
    let name = "n".repeat(101);
    let body = body_422(
        "SectionCreateRequest",
        json!({"name": name, "color": "red"}),
    );
    assert_eq!(
        body,
        json!({"detail": [
            {"type": "string_too_long", "loc": ["body", "name"],
             "msg": "String should have at most 100 characters", "input": name, "ctx": {"max_length": 100}},
            {"type": "string_pattern_mismatch", "loc": ["body", "color"],
             "msg": "String should match pattern '^#[0-9A-Fa-f]{6}$'", "input": "red",
             "ctx": {"pattern": "^#[0-9A-Fa-f]{6}$"}},
        ]})
    );
    // Only the first failing string constraint is reported, as in pydantic.
    let body = body_422(
        "SectionCreateRequest",
        json!({"name": "a", "color": "#zzzzzzzz"}),
    );
    assert_eq!(body["detail"].as_array().map(Vec::len), Some(1));
    assert_eq!(body["detail"][0]["type"], "string_too_long");
    let ok = json!({"name": "Latency", "description": null, "color": "#A0b1C2"});
    assert_eq!(
        service().validate(&component("SectionCreateRequest"), &ok),
        vec![]
    );
    assert_eq!(
        locs(&body_422("SectionCreateRequest", json!({}))),
        vec![json!(["body", "name"])]
    );
}

#[test]
fn string_or_list_of_strings() {
    let filter = |value: Value| json!({"name": "node_name", "operator": "eq", "value": value});
    let body = body_422("NodeNameFilter", filter(json!(5)));
    assert_eq!(
        body,
        json!({"detail": [
            {"type": "string_type", "loc": ["body", "value", "str"], "msg": "Input should be a valid string", "input": 5},
            {"type": "list_type", "loc": ["body", "value", "list[str]"], "msg": "Input should be a valid list", "input": 5},
        ]})
    );
    // An array can only have meant the list branch: reported without a tag.
    let body = body_422("NodeNameFilter", filter(json!(["a", 5])));
    assert_eq!(locs(&body), vec![json!(["body", "value", 1])]);
    // pydantic reports every branch.
    let v = pydantic_service().validate(&component("NodeNameFilter"), &filter(json!(["a", 5])));
    let body = pydantic::http_validation_error(&v, &[PathSeg::key("body")]);
    assert_eq!(
        locs(&body),
        vec![
            json!(["body", "value", "str"]),
            json!(["body", "value", "list[str]", 1])
        ]
    );
    assert_eq!(
        service().validate(&component("NodeNameFilter"), &filter(json!(["a"]))),
        vec![]
    );
    assert_eq!(
        service().validate(&component("NodeNameFilter"), &filter(json!("a"))),
        vec![]
    );
}

#[test]
fn uuid_formats() {
    let scorer = |id: &str| json!({"scorers": [{"id": id, "scorer_type": "llm"}]});
    for ok in [UUID, &UUID.to_uppercase(), &UUID.replace('-', "")] {
        assert_eq!(
            service().validate(&component("MetricSettingsRequest"), &scorer(ok)),
            vec![],
            "{ok}"
        );
    }
    let v = service().validate(&component("MetricSettingsRequest"), &scorer("1234"));
    assert_eq!(
        v[0].kind,
        ViolationKind::InvalidFormat {
            format: "uuid4".into(),
            reason: "invalid length: expected length 32 for simple format, found 4".into(),
        }
    );
    let v = service().validate(&component("MetricSettingsRequest"), &scorer(&UUID[..35]));
    assert_eq!(
        pydantic::to_error_detail(&v[0], &[PathSeg::key("body")])["msg"],
        "Input should be a valid UUID, invalid group length in group 4: expected 12, found 11"
    );
}

#[test]
fn other_formats_and_dictionaries() {
    let body = body_422(
        "DatabricksIntegrationCreate",
        json!({"token": "t", "hostname": "dbc.example.com"}),
    );
    assert_eq!(body["detail"][0]["type"], "url_parsing");
    assert_eq!(
        body["detail"][0]["msg"],
        "Input should be a valid URL, relative URL without a base"
    );
    let filter = json!({"name": "created_at", "operator": "gt", "value": "yesterday"});
    let body = body_422("LogStreamSearchRequest", json!({"filters": [filter]}));
    assert_eq!(body["detail"][0]["type"], "datetime_from_date_parsing");
    assert_eq!(
        body["detail"][0]["loc"],
        json!(["body", "filters", 0, "created_at", "value"])
    );
    let filter = json!({"name": "created_at", "operator": "gt", "value": "2024-05-01T10:00:00Z"});
    assert_eq!(
        service().validate(
            &component("LogStreamSearchRequest"),
            &json!({"filters": [filter]})
        ),
        vec![]
    );

    let headers: serde_json::Map<String, Value> =
        (0..51).map(|i| (format!("X-{i}"), json!("v"))).collect();
    let base = json!({"endpoint": "https://e.example", "token": "t"});
    let mut too_many = base.clone();
    too_many["headers"] = Value::Object(headers);
    let body = body_422("CustomIntegrationCreate", too_many);
    assert_eq!(body["detail"][0]["type"], "too_long");
    assert_eq!(
        body["detail"][0]["msg"],
        "Dictionary should have at most 50 items after validation, not 51"
    );
    let mut bad_value = base;
    bad_value["headers"] = json!({"X-Key": 5});
    assert_eq!(
        locs(&body_422("CustomIntegrationCreate", bad_value)),
        vec![json!(["body", "headers", "X-Key"])]
    );
}

#[test]
fn integration_bodies_of_all_twelve_providers() {
    let mut names: Vec<&String> = doc()["components"]["schemas"]
        .as_object()
        .into_iter()
        .flat_map(|m| m.keys())
        .filter(|k| k.ends_with("IntegrationCreate"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 12);
    for name in names {
        let v = service().validate(&component(name), &json!({}));
        assert!(
            v.iter()
                .all(|v| matches!(v.kind, ViolationKind::Missing { .. })),
            "{name}: {v:?}"
        );
        let v = service().validate(&component(name), &json!({"token": 5}));
        assert!(
            v.iter().any(|v| v.path == vec![PathSeg::key("token")]),
            "{name}: {v:?}"
        );
    }
}

#[test]
fn recursive_tree_choice_nodes() {
    let constraints = |tree: Value| json!({"name": "t", "constraints": {"annotation_type": "tree_choice", "choices_tree": [tree]}});
    assert_eq!(
        service().validate(
            &component("AnnotationTemplateCreate"),
            &constraints(tree(5, "ok"))
        ),
        vec![]
    );
    let body = body_422("AnnotationTemplateCreate", constraints(tree(3, "")));
    assert_eq!(
        locs(&body),
        vec![json!([
            "body",
            "constraints",
            "tree_choice",
            "choices_tree",
            0,
            "children",
            0,
            "children",
            0,
            "children",
            0,
            "label"
        ])]
    );
    let wide =
        json!({"label": "root", "id": "r", "children": vec![json!({"label": "c", "id": "c"}); 51]});
    let body = body_422("AnnotationTemplateCreate", constraints(wide));
    assert_eq!(body["detail"][0]["type"], "too_long");
    assert_eq!(
        body["detail"][0]["msg"],
        "List should have at most 50 items after validation, not 51"
    );
}
