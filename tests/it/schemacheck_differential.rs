//! Differential test of `schemacheck` against the `jsonschema` crate: where
//! the two mean the same thing (no formats, no OpenAPI discriminators, the
//! JSON Schema dialect), `Schemas::validate` must accept exactly the values
//! `jsonschema` accepts. Values are random, drawn from a vocabulary that
//! makes both valid and invalid ones likely.

use crate::property_support;

use std::sync::OnceLock;

use evalctl::schemacheck::Schemas;
use proptest::prelude::*;
use schemars::JsonSchema;
use serde_json::{Map, Value, json};

const OPENAPI: &str = evalctl::api::reference::SERVICE_REFERENCE;

/// Components of the service's document without formats or discriminators.
const COMPONENTS: [&str; 6] = [
    "SectionCreateRequest",
    "NodeNameFilter",
    "api__schemas__annotation__TreeChoiceNode-Input",
    "api__schemas__annotation__ChoiceConstraints",
    "api__schemas__annotation__ScoreConstraints",
    "OpenAIIntegrationCreate",
];

/// A valid value of each of [`COMPONENTS`], to mutate.
fn seed(which: usize) -> Value {
    match which {
        0 => json!({"name": "Latency", "description": "d", "color": "#a0B1c2"}),
        1 => json!({"name": "node_name", "operator": "eq", "value": ["a"], "case_sensitive": true}),
        2 => {
            json!({"label": "l", "id": "i", "children": [{"label": "c", "id": "c2", "children": []}]})
        }
        3 => json!({"annotation_type": "choice", "choices": ["a", "b"], "allow_other": false}),
        4 => json!({"annotation_type": "score", "min": 0, "max": 5}),
        _ => json!({"token": "t", "organization_id": null}),
    }
}

/// One edit of a value: at the container picked by `at` (modulo their
/// number), remove a member, replace one, or add one.
#[derive(Debug, Clone)]
enum Edit {
    Remove(usize, usize),
    Replace(usize, usize, Value),
    Add(usize, String, Value),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), any::<usize>()).prop_map(|(at, i)| Edit::Remove(at, i)),
        (any::<usize>(), any::<usize>(), value()).prop_map(|(at, i, v)| Edit::Replace(at, i, v)),
        (any::<usize>(), key(), value()).prop_map(|(at, k, v)| Edit::Add(at, k, v)),
    ]
}

/// Pointers to every container in a value, root first.
fn containers(v: &Value, here: String, out: &mut Vec<String>) {
    let children: Vec<(String, &Value)> = match v {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, c)| (i.to_string(), c))
            .collect(),
        Value::Object(map) => map
            .iter()
            .map(|(k, c)| (k.replace('~', "~0").replace('/', "~1"), c))
            .collect(),
        _ => return,
    };
    out.push(here.clone());
    for (seg, child) in children {
        containers(child, format!("{here}/{seg}"), out);
    }
}

fn apply(mut v: Value, edits: Vec<Edit>) -> Value {
    for e in edits {
        let mut all = Vec::new();
        containers(&v, String::new(), &mut all);
        let pick = |at: usize| all.get(at % all.len().max(1)).cloned().unwrap_or_default();
        match e {
            Edit::Remove(at, i) => match v.pointer_mut(&pick(at)) {
                Some(Value::Array(items)) if !items.is_empty() => {
                    let n = items.len();
                    items.remove(i % n);
                }
                Some(Value::Object(map)) if !map.is_empty() => {
                    let key = map.keys().nth(i % map.len()).cloned().unwrap_or_default();
                    map.shift_remove(&key);
                }
                _ => {}
            },
            Edit::Replace(at, i, new) => match v.pointer_mut(&pick(at)) {
                Some(Value::Array(items)) if !items.is_empty() => {
                    let n = items.len();
                    items[i % n] = new;
                }
                Some(Value::Object(map)) if !map.is_empty() => {
                    let n = map.len();
                    if let Some(slot) = map.values_mut().nth(i % n) {
                        *slot = new;
                    }
                }
                _ => {}
            },
            Edit::Add(at, k, new) => match v.pointer_mut(&pick(at)) {
                Some(Value::Array(items)) => items.push(new),
                Some(Value::Object(map)) => {
                    map.insert(k, new);
                }
                _ => {}
            },
        }
    }
    v
}

/// A seed with up to three edits: valid about half the time.
fn near(seed: Value) -> impl Strategy<Value = Value> {
    prop::collection::vec(edit(), 0..3).prop_map(move |edits| apply(seed.clone(), edits))
}

#[allow(dead_code, reason = "the types exist only for their derived schema")]
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
struct Manifest {
    name: String,
    #[schemars(range(min = 0, max = 50))]
    limit: Option<u8>,
    filter: Filter,
    #[serde(default)]
    labels: std::collections::BTreeSet<String>,
}

#[allow(dead_code, reason = "the types exist only for their derived schema")]
#[derive(JsonSchema)]
#[serde(tag = "operator", rename_all = "snake_case", deny_unknown_fields)]
enum Filter {
    Eq { value: String },
    OneOf { value: Vec<String> },
    Any,
}

/// Per component: its pointer, our schemas, and `jsonschema`'s validator
/// for the document with a root `$ref` to it.
fn components() -> &'static [(String, Schemas, jsonschema::Validator)] {
    static ALL: OnceLock<Vec<(String, Schemas, jsonschema::Validator)>> = OnceLock::new();
    ALL.get_or_init(|| {
        let doc: Value = serde_json::from_str(OPENAPI).unwrap_or(Value::Null);
        COMPONENTS
            .iter()
            .filter_map(|name| {
                let pointer = format!("#/components/schemas/{name}");
                let mut wrapper = doc.clone();
                wrapper["$ref"] = json!(pointer);
                wrapper["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
                let theirs = jsonschema::validator_for(&wrapper).ok()?;
                Some((pointer, Schemas::new(doc.clone()), theirs))
            })
            .collect()
    })
}

fn manifest() -> &'static (Schemas, jsonschema::Validator) {
    static BOTH: OnceLock<(Schemas, jsonschema::Validator)> = OnceLock::new();
    BOTH.get_or_init(|| {
        let schema = serde_json::to_value(schemars::schema_for!(Manifest)).unwrap_or(Value::Null);
        let theirs = jsonschema::validator_for(&schema)
            .unwrap_or_else(|e| panic!("jsonschema rejects the derived schema: {e}"));
        (Schemas::new(schema), theirs)
    })
}

fn manifest_seed() -> Value {
    json!({"name": "a", "limit": 5, "filter": {"operator": "one_of", "value": ["x"]}, "labels": ["a", "b"]})
}

fn key() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "name",
        "id",
        "label",
        "children",
        "color",
        "description",
        "operator",
        "value",
        "case_sensitive",
        "annotation_type",
        "choices",
        "min",
        "max",
        "token",
        "limit",
        "filter",
        "labels",
        "x",
    ])
    .prop_map(String::from)
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "",
            "eq",
            "ne",
            "one_of",
            "any",
            "contains",
            "node_name",
            "choice",
            "score",
            "#a0B1c2",
            "red",
            "id-1",
        ])
        .prop_map(String::from),
        Just("n".repeat(101)),
        Just("é".repeat(256)),
        "[a-z]{1,4}",
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop::sample::select(vec![0i64, 1, -1, 2, 50, 51, 255, 256]).prop_map(Value::from),
        prop::sample::select(vec![0.5f64, 1.0, 1.5, -0.5]).prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..5)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<String, Value>>())),
        ]
    })
}

fn agree(
    ours: &Schemas,
    pointer: &str,
    theirs: &jsonschema::Validator,
    v: &Value,
) -> Result<(), TestCaseError> {
    let violations = ours.validate(pointer, v);
    prop_assert_eq!(
        violations.is_empty(),
        theirs.is_valid(v),
        "value {} gave {:?}",
        v,
        violations
    );
    Ok(())
}

proptest! {
    #![proptest_config(property_support::config(1000))]

    #[test]
    fn service_components_agree_with_jsonschema(
        (which, v) in (0..COMPONENTS.len()).prop_flat_map(|w| (Just(w), prop_oneof![near(seed(w)), value()]))
    ) {
        let all = components();
        prop_assert_eq!(all.len(), COMPONENTS.len());
        let (pointer, ours, theirs) = &all[which];
        agree(ours, pointer, theirs, &v)?;
    }

    #[test]
    fn schemars_schemas_agree_with_jsonschema(v in prop_oneof![near(manifest_seed()), value()]) {
        let (ours, theirs) = manifest();
        agree(ours, "#", theirs, &v)?;
    }
}

#[test]
fn schemars_samples_agree_with_jsonschema() {
    let (ours, theirs) = manifest();
    let samples = [
        json!({"name": "a", "filter": {"operator": "any"}}),
        json!({"name": "a", "limit": 50, "filter": {"operator": "eq", "value": "x"}, "labels": ["a", "b"]}),
        json!({"name": "a", "filter": {"operator": "one_of", "value": ["x"]}}),
        json!({"name": "a", "filter": {"operator": "eq"}}),
        json!({"name": "a", "filter": {"operator": "like", "value": "x"}}),
        json!({"name": "a", "filter": {"value": "x"}}),
        json!({"name": "a", "limit": 51, "filter": {"operator": "any"}}),
        json!({"name": "a", "limit": 1.0, "filter": {"operator": "any"}}),
        json!({"name": "a", "filter": {"operator": "any"}, "labels": ["a", "a"]}),
        json!({"name": "a", "filter": {"operator": "any"}, "extra": true}),
    ];
    let mut valid = 0;
    for v in samples {
        let ok = ours.validate("#", &v).is_empty();
        assert_eq!(ok, theirs.is_valid(&v), "{v}");
        valid += usize::from(ok);
    }
    assert_eq!(valid, 4);
}

#[test]
fn generated_values_are_often_valid_and_often_not() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    for (which, (pointer, ours, _)) in components().iter().enumerate() {
        let strategy = near(seed(which));
        let mut valid = 0;
        for _ in 0..1000 {
            let Ok(tree) = strategy.new_tree(&mut runner) else {
                continue;
            };
            valid += usize::from(ours.validate(pointer, &tree.current()).is_empty());
        }
        assert!(
            (200..900).contains(&valid),
            "{pointer}: {valid} of 1000 valid"
        );
    }
}
