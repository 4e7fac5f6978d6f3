//! The manifest reference, `schemas/REFERENCE.md`: the checked-in copy is what
//! `evalctl schema` generates from the schema today, it documents every field of every
//! document kind, `evalctl schema` writes it and `--check` catches a stale one, and the
//! README links to it.

use std::collections::BTreeSet;
use std::process::Command;

use evalctl::manifest::reference::{REFERENCE_FILE, render};
use evalctl::manifest::schema::{SCHEMA_FILE, document_schema};
use serde_json::Value;

const CHECKED_IN: &str = "schemas/REFERENCE.md";

#[test]
fn the_checked_in_reference_is_fresh() {
    let found = std::fs::read_to_string(CHECKED_IN).unwrap_or_default();
    if found != render() {
        let line = found
            .lines()
            .zip(render().lines())
            .position(|(a, b)| a != b)
            .map_or_else(
                || "the lengths differ".to_owned(),
                |i| format!("first difference at line {}", i + 1),
            );
        panic!(
            "{CHECKED_IN} is stale ({line}): regenerate it with `cargo run -- schema` \
             (writes schemas/{SCHEMA_FILE} and schemas/{REFERENCE_FILE}) and commit the result"
        );
    }
}

/// Every property name of every object schema, under `$defs` and in the branches of
/// unions, with the definition it belongs to.
fn property_names(schema: &Value, owner: &str, out: &mut BTreeSet<(String, String)>) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Object(properties)) = map.get("properties") {
                for key in properties.keys() {
                    out.insert((owner.to_owned(), key.clone()));
                }
            }
            for (key, child) in map {
                match key.as_str() {
                    "$defs" => {
                        if let Value::Object(defs) = child {
                            for (name, def) in defs {
                                property_names(def, name, out);
                            }
                        }
                    }
                    "const" | "enum" | "default" | "required" | "examples" => {}
                    _ => property_names(child, owner, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| property_names(i, owner, out)),
        _ => {}
    }
}

#[test]
fn every_field_of_every_kind_is_documented() {
    let text = render();
    let mut fields = BTreeSet::new();
    property_names(document_schema(), "", &mut fields);
    assert!(fields.len() > 100, "{}", fields.len());
    for (owner, field) in &fields {
        assert!(
            text.contains(&format!("| `{field}` |")),
            "{owner}.{field} is not in the reference"
        );
    }
    for kind in ["Project", "Integration"] {
        assert!(text.contains(&format!("(kind: {kind})")), "{kind}");
    }
    let providers = document_schema()["$defs"]["IntegrationDocument"]["oneOf"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(providers.len(), 12);
    for branch in providers {
        let provider = branch["properties"]["provider"]["const"]
            .as_str()
            .unwrap_or("?")
            .to_owned();
        assert!(
            text.contains(&format!("#### Integration: {provider}\n")),
            "{provider}"
        );
    }
    // Every enumeration value the schema allows is listed somewhere.
    for value in [
        "trace_io_only",
        "percentage_false",
        "like_dislike",
        "not_in",
        "video",
    ] {
        assert!(text.contains(&format!("`{value}`")), "{value}");
    }
}

#[test]
fn the_reference_is_deterministic_and_well_formed() {
    let text = render();
    assert_eq!(text, render());
    assert!(text.ends_with('\n') && !text.ends_with("\n\n"));
    assert!(!text.contains("\n\n\n"), "no double blank lines");
    for line in text.lines().filter(|l| l.starts_with("| `")) {
        // A field row has exactly four cells: escaped pipes do not split them.
        let cells = line.replace("\\|", "").matches('|').count();
        assert_eq!(cells, 5, "{line}");
    }
}

fn evalctl(args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_evalctl"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("evalctl runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn the_schema_command_writes_and_checks_the_reference() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().to_str().expect("utf-8 path");
    let (status, stderr) = evalctl(&["schema", "--out", out]);
    assert_eq!(status, 0, "{stderr}");
    let path = dir.path().join(REFERENCE_FILE);
    assert_eq!(std::fs::read_to_string(&path).expect("written"), render());
    assert_eq!(evalctl(&["schema", "--out", out, "--check"]).0, 0);

    std::fs::write(&path, "# old\n").expect("overwrite");
    let (status, stderr) = evalctl(&["schema", "--out", out, "--check"]);
    assert_eq!(status, 1);
    assert!(
        stderr.contains(REFERENCE_FILE) && stderr.contains("is stale; regenerate it with"),
        "{stderr}"
    );
    assert!(
        !stderr.contains(&format!("{SCHEMA_FILE} is stale")),
        "only the stale file is named: {stderr}"
    );
}

#[test]
fn the_readme_links_to_the_reference() {
    let readme = std::fs::read_to_string("README.md").expect("README.md");
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Manifest reference"))
        .expect("README.md has a `## Manifest reference` section");
    assert!(section.contains("(schemas/REFERENCE.md)"), "{section}");
}

#[test]
fn the_reference_shows_no_rust_generic_names() {
    let reference = std::fs::read_to_string("schemas/REFERENCE.md").expect("REFERENCE.md");
    let mangled: Vec<&str> = reference
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| {
            // `TemplateSpec_AnnotationConstraints`, not `OPENAI_API_KEY`.
            let camel = |s: &str| {
                s.starts_with(|c: char| c.is_ascii_uppercase())
                    && s.chars().any(|c| c.is_ascii_lowercase())
            };
            word.split_once('_')
                .is_some_and(|(a, b)| camel(a) && camel(b))
        })
        .collect();
    assert!(mangled.is_empty(), "{mangled:?}");
}
