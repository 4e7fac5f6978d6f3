//! Robustness: hostile nesting, recursive and broken schemas, and the
//! corners where the two dialects part (`oneOf` exclusivity).

use serde_json::{Value, json};

use super::tests::{component, doc};
use super::*;

/// A chain of tree-choice nodes `depth` deep, built without recursion
/// (`json!` would copy the child through serialization, recursively).
pub(super) fn tree(depth: usize, leaf_label: &str) -> Value {
    let node = |label: String, id: String| {
        let mut map = serde_json::Map::new();
        map.insert("label".into(), Value::String(label));
        map.insert("id".into(), Value::String(id));
        map
    };
    let mut current = Value::Object(node(leaf_label.to_owned(), "leaf".to_owned()));
    for level in 0..depth {
        let mut parent = node(format!("l{level}"), format!("n{level}"));
        parent.insert("children".into(), Value::Array(vec![current]));
        current = Value::Object(parent);
    }
    current
}

/// Builds `[[[...]]]` nested `depth` deep without recursion.
fn nested_arrays(depth: usize) -> Value {
    let mut v = Value::Array(Vec::new());
    for _ in 0..depth {
        v = Value::Array(vec![v]);
    }
    v
}

/// Takes a deep value apart without recursion (the derived drop recurses).
fn dismantle(mut v: Value) {
    let mut stack = Vec::new();
    loop {
        match &mut v {
            Value::Array(items) => stack.append(items),
            Value::Object(map) => stack.extend(std::mem::take(map).into_iter().map(|(_, i)| i)),
            _ => {}
        }
        match stack.pop() {
            Some(next) => v = next,
            None => return,
        }
    }
}

#[test]
fn depth_bomb_is_an_error_not_a_stack_overflow() {
    let schema = json!({
        "$defs": {"N": {"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/N"}}, {"type": "string"}]}},
        "$ref": "#/$defs/N",
    });
    // A 512 KiB stack proves the bounds leave a wide margin even in debug builds.
    let handle = std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(move || {
            let bomb = nested_arrays(10_000);
            let mut results = Vec::new();
            for dialect in [Dialect::JsonSchema, Dialect::Pydantic] {
                let s = Schemas::with_dialect(schema.clone(), dialect);
                let v = s.validate("#", &bomb);
                results.push((
                    v.iter()
                        .filter(|v| matches!(v.kind, ViolationKind::TooDeep { limit: MAX_DEPTH }))
                        .count(),
                    v.len(),
                    v.iter().map(|v| v.path.len()).max(),
                ));
                let tree_schemas = Schemas::with_dialect(doc().clone(), dialect);
                let deep_tree = tree(5_000, "x");
                let deep = tree_schemas.validate(
                    &component("api__schemas__annotation__TreeChoiceNode-Input"),
                    &deep_tree,
                );
                dismantle(deep_tree);
                results.push((
                    deep.iter()
                        .filter(|v| matches!(v.kind, ViolationKind::TooDeep { .. }))
                        .count(),
                    deep.len(),
                    None,
                ));
                let _ = serde_json::to_string(&pydantic::http_validation_error(
                    &v,
                    &[PathSeg::key("body")],
                ));
            }
            dismantle(bomb);
            results
        });
    let results = handle.ok().and_then(|h| h.join().ok()).unwrap_or_default();
    assert_eq!(results.len(), 4);
    // JSON Schema dialect: only the array branch applies at each level.
    assert_eq!(results[0], (1, 1, Some(MAX_DEPTH)));
    assert_eq!(results[1].0, 1);
    // pydantic dialect: the `str` branch fails at every level too.
    assert_eq!(results[2].0, 1);
    assert_eq!(results[2].1, MAX_DEPTH + 2);
    assert_eq!(results[3].0, 1);
}

#[test]
fn deepest_parsable_document_is_not_too_deep() {
    let mut text = String::new();
    let mut depth = 0;
    while serde_json::from_str::<Value>(&format!("{text}[]{}", "]".repeat(depth))).is_ok() {
        text.push('[');
        depth += 1;
    }
    let deepest = format!("{}[]{}", &text[1..], "]".repeat(depth - 1));
    let value: Value = serde_json::from_str(&deepest).unwrap_or(Value::Null);
    let schema = json!({"$defs": {"N": {"type": "array", "items": {"$ref": "#/$defs/N"}}}, "$ref": "#/$defs/N"});
    assert_eq!(Schemas::new(schema).validate("#", &value), vec![]);
}

#[test]
fn references_escape_and_fail_loudly() {
    let s = Schemas::new(json!({
        "$defs": {
            "a/b": {"type": "string"},
            "c~d": {"type": "integer"},
            "e f": {"type": "boolean"},
            "loop": {"$ref": "#/$defs/loop"},
            "broken": {"$ref": "#/$defs/nowhere"},
            "badpattern": {"type": "string", "pattern": "(unclosed"},
        },
        "properties": {
            "x": {"$ref": "#/$defs/a~1b"},
            "y": {"$ref": "#/$defs/c~0d"},
            "z": {"$ref": "#/$defs/e%20f"},
        },
    }));
    assert_eq!(s.problems().len(), 2, "{:?}", s.problems());
    assert_eq!(
        s.validate("#", &json!({"x": "s", "y": 1, "z": true})),
        vec![]
    );
    let v = s.validate("#", &json!({"x": 1, "y": "s", "z": 0}));
    assert_eq!(v.len(), 3);
    let loops = s.validate("#/$defs/loop", &json!(1));
    assert_eq!(
        loops[0].kind,
        ViolationKind::Schema(SchemaError::RefCycle { limit: MAX_HOPS })
    );
    assert!(loops[0].is_schema_error());
    assert!(s.validate("#/$defs/broken", &json!(1))[0].is_schema_error());
    assert!(s.validate("#/$defs/badpattern", &json!("x"))[0].is_schema_error());
    assert!(s.validate("#/$defs/absent", &json!(1))[0].is_schema_error());
    assert!(s.get("#/$defs/a~1b").is_some());
}

#[test]
fn one_of_is_exclusive_in_json_schema_only() {
    let schema = json!({"oneOf": [{"type": "number"}, {"type": "integer"}]});
    let v = Schemas::new(schema.clone()).validate("#", &json!(5));
    assert_eq!(
        v[0].kind,
        ViolationKind::AmbiguousOneOf {
            matched: vec!["float".into(), "int".into()]
        }
    );
    assert_eq!(
        Schemas::with_dialect(schema, Dialect::Pydantic).validate("#", &json!(5)),
        vec![]
    );
}

#[test]
fn openapi_three_oh_nullable_and_boolean_schemas() {
    let s = Schemas::new(json!({
        "properties": {"a": {"type": "string", "nullable": true}, "b": false, "c": true},
    }));
    assert_eq!(s.validate("#", &json!({"a": null, "c": [1]})), vec![]);
    let v = s.validate("#", &json!({"b": 1}));
    assert_eq!(v[0].kind, ViolationKind::NotAllowed);
    assert_eq!(v[0].path, vec![PathSeg::key("b")]);
}
