//! Tests with schemas that schemars 1.x derives from manifest-like Rust
//! types: what the manifest loader will feed the interpreter, and the data
//! its diagnostics need (unknown fields with their allowed names, tags,
//! pointers into the YAML).

#![allow(dead_code, reason = "the types exist only for their derived schemas")]

use schemars::JsonSchema;
use serde_json::{Value, json};

use super::*;

#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
struct Manifest {
    scorers: Vec<Scorer>,
    segment_filters: Option<Vec<Filter>>,
    #[schemars(range(min = 0.0, max = 1.0))]
    sample_rate: f64,
    mode: Mode,
    source: Source,
    #[serde(default)]
    tags: std::collections::BTreeSet<String>,
    limit: Option<u32>,
}

#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
struct Scorer {
    #[schemars(length(min = 1, max = 10), regex(pattern = r"^[a-z_]+$"))]
    name: String,
    #[schemars(url)]
    endpoint: Option<String>,
}

/// Internally tagged: schemars emits `oneOf` with a `const` `kind`.
#[derive(JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum Filter {
    NodeName { operator: Mode, value: OneOrMany },
    Metadata { key: String, value: OneOrMany },
    Everything,
}

#[derive(JsonSchema)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Mode {
    Eq,
    Ne,
}

/// Externally tagged: a string for the unit variant, single-key objects
/// for the others.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum Source {
    Local,
    Http { url: String },
    Git(String),
}

fn schemas() -> Schemas {
    let schema = serde_json::to_value(schemars::schema_for!(Manifest)).unwrap_or(Value::Null);
    Schemas::new(schema)
}

fn valid() -> Value {
    json!({
        "scorers": [{"name": "toxicity", "endpoint": "https://scorer.example/v1"}],
        "segment_filters": [
            {"kind": "node_name", "operator": "eq", "value": "llm"},
            {"kind": "metadata", "key": "env", "value": ["prod", "staging"]},
            {"kind": "everything"},
        ],
        "sample_rate": 0.25,
        "mode": "ne",
        "source": {"http": {"url": "https://example.com"}},
        "tags": ["a", "b"],
        "limit": 10,
    })
}

fn with(mut base: Value, key: &str, v: Value) -> Value {
    base[key] = v;
    base
}

fn messages(violations: &[Violation]) -> Vec<String> {
    violations.iter().map(ToString::to_string).collect()
}

#[test]
fn derived_schema_is_sound_and_accepts_valid_manifests() {
    let s = schemas();
    assert_eq!(s.problems(), &[] as &[SchemaError]);
    assert_eq!(s.validate("#", &valid()), vec![]);
    let minimal = json!({"scorers": [], "sample_rate": 1, "mode": "eq", "source": "local", "segment_filters": null});
    assert_eq!(s.validate("#", &minimal), vec![]);
    let git = with(minimal, "source", json!({"git": "https://g.example/r.git"}));
    assert_eq!(s.validate("#", &git), vec![]);
}

#[test]
fn unknown_fields_carry_allowed_names_for_did_you_mean() {
    let mut m = valid();
    let scorers = m["scorers"].take();
    m.as_object_mut().map(|o| o.remove("scorers"));
    m["scorrers"] = scorers;
    let v = schemas().validate("#", &m);
    assert_eq!(v.len(), 2, "{v:?}");
    let allowed: Vec<String> = [
        "scorers",
        "segment_filters",
        "sample_rate",
        "mode",
        "source",
        "tags",
        "limit",
    ]
    .map(String::from)
    .to_vec();
    assert_eq!(
        v[0].kind,
        ViolationKind::UnknownField {
            field: "scorrers".into(),
            allowed: allowed.clone(),
        }
    );
    assert_eq!(v[0].pointer(), "/scorrers");
    assert_eq!(suggest("scorrers", &allowed), Some("scorers".into()));
    assert_eq!(suggest("SCORERS", &allowed), Some("scorers".into()));
    assert_eq!(suggest("zzz", &allowed), None);
    // The unknown field comes in the document's order, the missing one after.
    assert_eq!(
        v[1].kind,
        ViolationKind::Missing {
            field: "scorers".into()
        }
    );
    assert_eq!(
        messages(&v),
        vec![
            "scorrers: unknown field `scorrers`, did you mean `scorers`?",
            "scorers: missing required field `scorers`",
        ]
    );
}

#[test]
fn internally_tagged_enums_are_discriminated_by_their_const_tag() {
    let s = schemas();
    let filters = |f: Value| with(valid(), "segment_filters", json!([f]));
    let v = s.validate("#", &filters(json!({"kind": "node_name", "value": "x"})));
    assert_eq!(
        v[0].path,
        vec![
            PathSeg::key("segment_filters"),
            PathSeg::Index(0),
            PathSeg::Tag("node_name".into()),
            PathSeg::key("operator"),
        ]
    );
    assert_eq!(v[0].pointer(), "/segment_filters/0/operator");
    let v = s.validate(
        "#",
        &filters(json!({"kind": "node_nam", "operator": "eq", "value": "x"})),
    );
    assert_eq!(
        v[0].kind,
        ViolationKind::UnionTagInvalid {
            discriminator: "kind".into(),
            tag: json!("node_nam"),
            expected: vec!["node_name".into(), "metadata".into(), "everything".into()],
        }
    );
    assert_eq!(
        v[0].to_string(),
        "segment_filters[0]: unknown kind \"node_nam\", expected one of \"node_name\", \"metadata\", \"everything\" (did you mean \"node_name\"?)"
    );
    let v = s.validate("#", &filters(json!({"operator": "eq"})));
    assert!(matches!(v[0].kind, ViolationKind::UnionTagMissing { .. }));
    let v = s.validate("#", &filters(json!({"kind": "everything", "extra": 1})));
    assert_eq!(
        messages(&v),
        vec!["segment_filters[0].extra: unknown field `extra`, expected one of `kind`"]
    );
    let v = s.validate(
        "#",
        &filters(json!({"kind": "metadata", "key": "k", "value": 3})),
    );
    assert_eq!(
        messages(&v),
        vec![
            "segment_filters[0].value: expected a string, found an integer",
            "segment_filters[0].value: expected an array, found an integer",
        ]
    );
    assert_eq!(v[0].path.last(), Some(&PathSeg::Tag("str".into())));
}

#[test]
fn externally_tagged_enums_report_the_variant_meant() {
    let s = schemas();
    let v = s.validate("#", &with(valid(), "source", json!({"http": {"uri": "x"}})));
    assert_eq!(
        messages(&v),
        vec![
            "source.http.uri: unknown field `uri`, did you mean `url`?",
            "source.http.url: missing required field `url`",
        ]
    );
    assert!(
        v.iter()
            .all(|v| !v.path.iter().any(|s| matches!(s, PathSeg::Tag(_))))
    );
    let v = s.validate("#", &with(valid(), "source", json!("remote")));
    assert_eq!(
        messages(&v),
        vec!["source: expected one of \"local\", found \"remote\""]
    );
    // No variant fits: every one reports, each under its name.
    let v = s.validate("#", &with(valid(), "source", json!({"gti": "x"})));
    let tags: Vec<&PathSeg> = v.iter().filter_map(|v| v.path.get(1)).collect();
    assert_eq!(
        tags,
        vec![
            &PathSeg::Tag("literal['local']".into()),
            &PathSeg::Tag("http".into()),
            &PathSeg::Tag("http".into()),
            &PathSeg::Tag("git".into()),
            &PathSeg::Tag("git".into()),
        ]
    );
}

#[test]
fn scalars_options_and_sets() {
    let s = schemas();
    let bad = json!({
        "scorers": [{"name": ""}, {"name": "Bad-Name"}, {"name": "ok", "endpoint": "scorer.example"}],
        "segment_filters": "all",
        "sample_rate": 1.5,
        "mode": "like",
        "source": "local",
        "tags": ["a", "b", "a"],
        "limit": -1,
    });
    let v = s.validate("#", &bad);
    assert_eq!(
        messages(&v),
        vec![
            "scorers[0].name: must have at least 1 character",
            "scorers[1].name: must match the pattern `^[a-z_]+$`",
            "scorers[2].endpoint: is not a valid uri: relative URL without a base",
            "segment_filters: expected an array or null, found a string",
            "sample_rate: must be less than or equal to 1, found 1.5",
            "mode: expected one of \"eq\", \"ne\", found \"like\"",
            "tags[2]: repeats item 0 (items must be unique)",
            "limit: must be greater than or equal to 0, found -1",
        ]
    );
    assert!(matches!(
        &v[5].kind,
        ViolationKind::NotInEnum { enum_name: Some(name), .. } if name == "Mode"
    ));
    let v = s.validate("#", &with(valid(), "limit", json!(1.5)));
    assert_eq!(
        messages(&v),
        vec!["limit: expected an integer or null, found a number"]
    );
    assert_eq!(
        s.validate("#", &with(valid(), "limit", json!(null))),
        vec![]
    );
}

#[test]
fn unevaluated_properties_count_names_declared_through_all_of() {
    let s = Schemas::new(json!({
        "$defs": {"Base": {"type": "object", "properties": {"name": {"type": "string"}}}},
        "type": "object",
        "allOf": [{"$ref": "#/$defs/Base"}],
        "properties": {"extra": {"type": "integer"}},
        "unevaluatedProperties": false,
    }));
    assert_eq!(s.validate("#", &json!({"name": "a", "extra": 1})), vec![]);
    let v = s.validate("#", &json!({"name": "a", "nmae": 1}));
    assert_eq!(
        v[0].kind,
        ViolationKind::UnknownField {
            field: "nmae".into(),
            allowed: vec!["extra".into(), "name".into()],
        }
    );
}
