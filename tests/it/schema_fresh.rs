//! The generated JSON Schema of the manifest format: the checked-in copy is fresh, it is
//! a valid draft 2020-12 schema that an independent validator (the `jsonschema` crate)
//! agrees with, and `evalctl schema [--check]` writes and checks it.

use std::path::Path;
use std::process::Command;

use evalctl::manifest::schema::{SCHEMA_FILE, render};
use evalctl::manifest::yaml::{Limits, parse};
use serde_json::{Value, json};

const CHECKED_IN: &str = "schemas/evalctl-manifest.schema.json";

fn checked_in() -> Value {
    let text = std::fs::read_to_string(CHECKED_IN).expect("the schema is checked in");
    serde_json::from_str(&text).expect("the checked-in schema is JSON")
}

#[test]
fn the_checked_in_schema_is_fresh() {
    let found = std::fs::read_to_string(CHECKED_IN).unwrap_or_default();
    assert!(
        found == render(),
        "{CHECKED_IN} is stale: run `cargo run -- schema` and commit the result"
    );
}

#[test]
fn it_is_a_valid_2020_12_schema_with_an_id() {
    let schema = checked_in();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert!(schema["$id"].is_string());
    if let Err(e) = jsonschema::meta::validate(&schema) {
        panic!("not a valid JSON Schema: {e}");
    }
}

fn validator() -> jsonschema::Validator {
    jsonschema::validator_for(&checked_in()).expect("the schema compiles")
}

fn errors(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|e| e.to_string())
        .collect()
}

#[test]
fn every_example_document_conforms_to_it() {
    let validator = validator();
    let mut documents = 0;
    for file in [
        "examples/quickstart/demo-project.yaml",
        "examples/full/demo-project.yaml",
        "examples/full/integrations.yaml",
        "examples/full/policies.yaml",
        "examples/full/scorers.yaml",
    ] {
        let text = std::fs::read_to_string(file).expect("read example");
        for document in parse(&text, &Limits::default()).expect("the example parses") {
            let found = errors(&validator, &document.value);
            assert!(found.is_empty(), "{file}: {found:#?}");
            documents += 1;
        }
    }
    assert_eq!(documents, 7);
}

#[test]
fn it_refuses_what_the_loader_refuses() {
    let validator = validator();
    let refused = [
        json!({"kind": "Project", "name": "p", "nmae": "typo"}),
        json!({"kind": "Projcet", "name": "p"}),
        json!({"name": "p"}),
        json!({"kind": "Project", "api_version": "evalctl/v2", "name": "p"}),
        json!({"kind": "Project", "name": "p", "log_streams": [{"name": "l",
            "metric_settings": {"segment_filters": [{"sample_rate": 1.5}]}}]}),
        json!({"kind": "Project", "name": "p", "log_streams": [{"name": "l",
            "trends": {"sections": [{"name": "s", "color": "red"}]}}]}),
        json!({"kind": "Project", "name": "p", "log_streams": null}),
        json!({"kind": "Project", "name": "p", "annotation_templates": [{"name": "t",
            "constraints": {"annotation_type": "star", "extra": 1}}]}),
        json!({"kind": "Integration", "provider": "openai", "token": "sk-literal"}),
        json!({"kind": "Integration", "provider": "openai", "token": "${K}", "tokne": "x"}),
        json!({"kind": "Integration", "provider": "nope", "token": "${K}"}),
        json!({"kind": "Integration", "provider": "custom", "endpoint": "https://x",
            "headers": {"X-Key": "literal"}}),
    ];
    for instance in refused {
        assert!(!validator.is_valid(&instance), "accepted {instance}");
    }
    let accepted = [
        json!({"kind": "Project", "name": "p"}),
        json!({"kind": "Project", "api_version": "evalctl/v1", "id": "x", "log_streams": []}),
        json!({"kind": "Integration", "provider": "azure", "token": "${K}",
            "endpoint": "https://x", "api_version": "2025-03-01-preview"}),
        json!({"kind": "Integration", "provider": "aws_bedrock",
            "token": {"aws_access_key_id": "${A}", "aws_secret_access_key": "${B}"},
            "rotate_secrets": true}),
    ];
    for instance in accepted {
        let found = errors(&validator, &instance);
        assert!(found.is_empty(), "{instance}: {found:#?}");
    }
}

fn evalctl(args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_evalctl"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("evalctl runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn the_schema_command_writes_and_checks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("nested/schemas");
    let out_str = out.to_str().expect("utf-8 path");

    let (status, _, stderr) = evalctl(&["schema", "--out", out_str, "--check"]);
    assert_eq!(status, 1);
    assert!(
        stderr.contains(&format!("evalctl schema --out {out_str}")),
        "{stderr}"
    );

    let (status, stdout, stderr) = evalctl(&["schema", "--out", out_str]);
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(stdout, "");
    let path = out.join(SCHEMA_FILE);
    assert_eq!(std::fs::read_to_string(&path).expect("written"), render());
    assert_eq!(evalctl(&["schema", "--out", out_str, "--check"]).0, 0);

    std::fs::write(&path, "{}\n").expect("overwrite");
    let (status, _, stderr) = evalctl(&["schema", "--out", out_str, "--check"]);
    assert_eq!(status, 1);
    assert!(stderr.contains("is stale; regenerate it with"), "{stderr}");
    assert!(Path::new(CHECKED_IN).exists());
}
