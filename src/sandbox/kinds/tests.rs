//! The kinds' collections, held in `KindRecords`, are written and read as
//! top-level fields of the state, where they were before the registry.

use serde_json::Value;

use crate::sandbox::fixture::Fixture;

/// The top-level keys of the demo fixture's JSON, in order.
fn keys(json: &str) -> Vec<String> {
    let value: Value = serde_json::from_str(json).expect("json");
    value
        .as_object()
        .expect("an object")
        .keys()
        .cloned()
        .collect()
}

#[test]
fn the_kinds_collections_are_top_level_fields_of_the_state_file_as_before() {
    let json = Fixture::demo().to_json_pretty().expect("written");
    // serde_json's map keeps the order only with `preserve_order`; without
    // it the keys are sorted, so compare as sets and check the text's order.
    let mut found = keys(&json);
    found.sort();
    let mut expected: Vec<String> = [
        "salt",
        "organization",
        "users",
        "projects",
        "log_streams",
        "experiments",
        "scorers",
        "dashboards",
        "annotation_templates",
        "feedback_templates",
        "integrations",
        "favorites",
        "code_validations",
        "prompt_templates",
        "stages",
    ]
    .iter()
    .map(|k| (*k).to_owned())
    .collect();
    let in_order: Vec<usize> = expected
        .iter()
        .map(|k| json.find(&format!("\n  \"{k}\":")).expect(k))
        .collect();
    assert!(
        in_order.windows(2).all(|w| w[0] < w[1]),
        "fields out of order"
    );
    expected.sort();
    assert_eq!(found, expected);

    let back = Fixture::from_json(&json).expect("read back");
    assert_eq!(back.state().kinds.prompt_templates.len(), 1);
    assert_eq!(
        back.to_json_pretty().expect("written again"),
        json,
        "a round trip changes nothing"
    );
}

#[test]
fn an_older_state_without_the_kinds_collections_reads_them_empty() {
    let json = Fixture::demo().to_json_pretty().expect("written");
    let mut value: Value = serde_json::from_str(&json).expect("json");
    let map = value.as_object_mut().expect("an object");
    for key in ["code_validations", "prompt_templates", "stages"] {
        assert!(map.remove(key).is_some(), "{key} written");
    }
    let back = Fixture::from_json(&value.to_string()).expect("read");
    assert!(back.state().kinds.prompt_templates.is_empty());
    assert!(back.state().kinds.stages.is_empty());
    assert!(back.state().kinds.code_validations.is_empty());
}
