//! The JSON Schema of one manifest document, generated from the manifest types.
//!
//! schemars derives the schemas of [`ProjectSpec`] and [`IntegrationSpec`]; this module
//! turns them into the schema of one YAML document of either kind: a `oneOf` of
//! `ProjectDocument` and `IntegrationDocument`, told apart by `kind`, each carrying the
//! `kind` and optional `api_version` keys. The derived schemas are post-processed so
//! they say what the loader accepts, no more:
//! - every object with declared properties is closed (`additionalProperties: false`),
//!   including the API types that do not deny unknown fields themselves, and each
//!   provider variant of an Integration (which `#[serde(flatten)]` leaves open) becomes
//!   one closed object holding the document keys, `rotate_secrets` and its own fields;
//! - `null` is not a value: an optional field is written or left out (`Option<T>` is
//!   derived as "T or null"; the `null` alternative is removed);
//! - a `$ref` to an enumeration next to a narrower inline `enum` keeps only the `enum`;
//! - Rust-only number formats (`int64`, `uint32`, ...) are dropped;
//! - the service's limits (lengths, patterns, ranges, item counts, formats) are written
//!   into the fields the service receives them as ([`limits`]: derived from the service's
//!   reference, not listed by hand).
//!
//! The same generated schema serves editors (`evalctl schema` writes it to
//! `schemas/evalctl-manifest.schema.json`) and the loader ([`validator`]), so the rules
//! live in one place. It is generated at run time, once per process, rather than read
//! from the checked-in file: the binary can never validate with a stale copy, and a test
//! keeps the checked-in file equal to [`render`].

use std::sync::OnceLock;

use serde_json::{Map, Value, json};

use super::limits;
use super::pricing::PricingSpec;
use super::types::{API_VERSION, IntegrationSpec, ProjectSpec};
use crate::policy::{PolicySpec, SettingsSpec};
use crate::schemacheck::Schemas;

/// The file name `evalctl schema` writes, in its output directory.
pub const SCHEMA_FILE: &str = "evalctl-manifest.schema.json";

/// The schema's `$id`. A URN: the schema is identified, not fetched from anywhere.
pub const SCHEMA_ID: &str = "urn:evalctl:manifest:v1";

/// Pointer of the schema of a `kind: Project` document.
pub const PROJECT_DOCUMENT: &str = "#/$defs/ProjectDocument";

/// Pointer of the schema of a `kind: Integration` document.
pub const INTEGRATION_DOCUMENT: &str = "#/$defs/IntegrationDocument";

/// Pointer of the schema of a `kind: Policy` document.
pub const POLICY_DOCUMENT: &str = "#/$defs/PolicyDocument";

/// Pointer of the schema of a `kind: Settings` document.
pub const SETTINGS_DOCUMENT: &str = "#/$defs/SettingsDocument";

/// Pointer of the schema of a `kind: Pricing` document.
pub const PRICING_DOCUMENT: &str = "#/$defs/PricingDocument";

/// Pointer of the schema of a `kind: PromptTemplate` document.
pub const PROMPT_TEMPLATE_DOCUMENT: &str = "#/$defs/PromptTemplateDocument";

/// The document kinds, as written in `kind`.
pub const KINDS: [&str; 7] = [
    "Project",
    "Integration",
    "Scorer",
    "Policy",
    "Settings",
    "Pricing",
    "PromptTemplate",
];

/// Pointer of the schema of a `kind: Scorer` document.
pub const SCORER_DOCUMENT: &str = "#/$defs/ScorerDocument";

/// The schema of one manifest document (either kind), as JSON.
#[must_use]
pub fn document_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| generate_with(&limits::service_reference()))
}

/// The schema, indexed for validation by the loader.
#[must_use]
pub fn validator() -> &'static Schemas {
    static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
    SCHEMAS.get_or_init(|| Schemas::new(document_schema().clone()))
}

/// The text of `schemas/evalctl-manifest.schema.json`: the schema pretty-printed, with a
/// final newline. Deterministic.
#[must_use]
pub fn render() -> String {
    let mut text = serde_json::to_string_pretty(document_schema()).unwrap_or_default();
    text.push('\n');
    text
}

/// The manifest schema with the limits of `reference` (an OpenAPI document shaped like the
/// service's; [`document_schema`] uses the embedded one) written into it by
/// [`limits::apply`]. Deterministic.
#[must_use]
pub fn generate_with(reference: &Value) -> Value {
    let mut schema = generate_types();
    limits::apply(&mut schema, reference);
    schema
}

/// The schema of the manifest types alone, before the service's limits.
pub(crate) fn generate_types() -> Value {
    let mut generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let project = generator.subschema_for::<ProjectSpec>();
    let integration = generator.subschema_for::<IntegrationSpec>();
    let policy = generator.subschema_for::<PolicySpec>();
    let settings = generator.subschema_for::<SettingsSpec>();
    let pricing = generator.subschema_for::<PricingSpec>();
    let documents = crate::kinds::document_schemas(&mut generator);
    let mut defs = generator.take_definitions(true);
    let project = take_def(&mut defs, &project.to_value());
    let integration = take_def(&mut defs, &integration.to_value());
    let mut policy = take_def(&mut defs, &policy.to_value());
    let mut settings = take_def(&mut defs, &settings.to_value());
    let mut pricing = take_def(&mut defs, &pricing.to_value());
    // A document kind's spec that is its own definition becomes the
    // document; a shared one stays (below).
    let own: Vec<(&str, Value)> = documents
        .iter()
        .filter(|d| !d.shared)
        .map(|d| {
            let mut spec = take_def(&mut defs, d.spec.as_value());
            tidy(&mut spec);
            (d.kind, spec)
        })
        .collect();
    tidy(&mut pricing);

    for def in defs.values_mut() {
        tidy(def);
    }
    let mut project = project;
    tidy(&mut project);
    let mut integration = integration;
    tidy(&mut integration);

    tidy(&mut policy);
    tidy(&mut settings);
    defs.insert(
        "ProjectDocument".to_owned(),
        kind_document("Project", project),
    );
    defs.insert("PolicyDocument".to_owned(), kind_document("Policy", policy));
    for (kind, spec) in own {
        defs.insert(format!("{kind}Document"), kind_document(kind, spec));
    }
    defs.insert(
        "SettingsDocument".to_owned(),
        kind_document("Settings", settings),
    );
    defs.insert(
        "IntegrationDocument".to_owned(),
        integration_document(integration),
    );
    defs.insert(
        "PricingDocument".to_owned(),
        kind_document("Pricing", pricing),
    );
    // A shared spec stays a definition of its own (a Project's
    // `prompt_templates` refer to it); the document is a copy with the
    // document keys.
    for d in documents.iter().filter(|d| d.shared) {
        let name = d
            .spec
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.rsplit('/').next());
        if let Some(spec) = name.and_then(|n| defs.get(n)).cloned() {
            defs.insert(format!("{}Document", d.kind), kind_document(d.kind, spec));
        }
    }
    let mut sorted: Vec<(String, Value)> = defs.into_iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));

    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "evalctl manifest",
        "description": "One document of an evalctl config repo: `kind: Project` (the configuration of one project), `kind: Integration` (the calling user's integration with one model provider), `kind: Scorer` (a custom LLM or code scorer, with its versions), `kind: Policy` (rules in CEL the manifests must follow), `kind: Settings` (the repo's settings, at most one), `kind: Pricing` (what an LLM-judge call costs, for the plan's forecast; at most one) or `kind: PromptTemplate` (a global prompt template, one per document). Generated by `evalctl schema`; do not edit.",
        "type": "object",
        "oneOf": [
            {"$ref": PROJECT_DOCUMENT},
            {"$ref": INTEGRATION_DOCUMENT},
            {"$ref": SCORER_DOCUMENT},
            {"$ref": POLICY_DOCUMENT},
            {"$ref": SETTINGS_DOCUMENT},
            {"$ref": PRICING_DOCUMENT},
            {"$ref": PROMPT_TEMPLATE_DOCUMENT},
        ],
        "$defs": Map::from_iter(sorted),
    })
}

/// The definition a `$ref` schema points at, removed from `defs` (the document schemas
/// replace it); the schema itself when it is not a reference.
fn take_def(defs: &mut Map<String, Value>, schema: &Value) -> Value {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.rsplit('/').next())
        .and_then(|name| defs.remove(name))
        .unwrap_or_else(|| schema.clone())
}

fn kind_property(kind: &str) -> Value {
    json!({
        "description": format!("The document's kind: `{kind}`."),
        "type": "string",
        "const": kind,
    })
}

fn api_version_property() -> Value {
    json!({
        "description": format!("The manifest format version (optional): `{API_VERSION}`."),
        "type": "string",
        "const": API_VERSION,
    })
}

/// A document's spec (ProjectSpec, PolicySpec, SettingsSpec) with the document keys in
/// front.
fn kind_document(kind: &str, spec: Value) -> Value {
    let Value::Object(mut spec) = spec else {
        return spec;
    };
    let mut properties = Map::new();
    properties.insert("kind".to_owned(), kind_property(kind));
    properties.insert("api_version".to_owned(), api_version_property());
    if let Some(Value::Object(own)) = spec.remove("properties") {
        properties.extend(own);
    }
    let mut required = vec![Value::from("kind")];
    if let Some(Value::Array(own)) = spec.remove("required") {
        required.extend(own);
    }
    closed_object(
        &format!("{kind} document"),
        spec.remove("description"),
        properties,
        required,
    )
}

/// IntegrationSpec's provider variants, each one closed object with the document keys,
/// the provider tag, the variant's fields and IntegrationSpec's own fields.
fn integration_document(spec: Value) -> Value {
    let shared = spec
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let variants = spec
        .get("oneOf")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let branches: Vec<Value> = variants
        .into_iter()
        .map(|variant| integration_branch(variant, &shared))
        .collect();
    let mut out = Map::new();
    out.insert("title".to_owned(), Value::from("Integration document"));
    if let Some(description) = spec.get("description") {
        out.insert("description".to_owned(), description.clone());
    }
    out.insert("type".to_owned(), Value::from("object"));
    // Lets editors (and the top-level `oneOf`) tell the kinds apart before looking
    // at the provider; the branches close the object.
    out.insert(
        "properties".to_owned(),
        json!({ "kind": kind_property("Integration") }),
    );
    out.insert("required".to_owned(), json!(["kind"]));
    out.insert("oneOf".to_owned(), Value::Array(branches));
    Value::Object(out)
}

fn integration_branch(variant: Value, shared: &Map<String, Value>) -> Value {
    let Value::Object(mut variant) = variant else {
        return variant;
    };
    let own = match variant.remove("properties") {
        Some(Value::Object(own)) => own,
        _ => Map::new(),
    };
    let provider = own
        .get("provider")
        .and_then(|p| p.get("const"))
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_owned();
    let mut properties = Map::new();
    properties.insert("kind".to_owned(), kind_property("Integration"));
    properties.insert("api_version".to_owned(), api_version_property());
    for (key, mut schema) in own {
        if key == "provider" {
            schema = json!({
                "description": "The model provider.",
                "type": "string",
                "const": provider,
            });
        } else if key == "api_version" {
            // Azure's own `api_version` takes the key: in that document it is not the
            // manifest format version.
            if let Some(Value::String(description)) = schema.get_mut("description") {
                description.push_str(
                    " In this document `api_version` is Azure's API version, not the manifest format version.",
                );
            }
        }
        properties.insert(key, schema);
    }
    for (key, schema) in shared {
        // Only a custom integration has a name (a named custom integration).
        if key == "name" && provider != "custom" {
            continue;
        }
        properties
            .entry(key.clone())
            .or_insert_with(|| schema.clone());
    }
    let mut required = vec![Value::from("kind")];
    if let Some(Value::Array(own)) = variant.remove("required") {
        required.extend(own);
    }
    closed_object(
        &format!("Integration: {provider}"),
        variant.remove("description"),
        properties,
        required,
    )
}

/// An object schema with `title`, `description` (when there is one), `properties` and
/// `required`, that admits no other property.
fn closed_object(
    title: &str,
    description: Option<Value>,
    properties: Map<String, Value>,
    required: Vec<Value>,
) -> Value {
    let mut out = Map::new();
    out.insert("title".to_owned(), Value::from(title));
    if let Some(description) = description {
        out.insert("description".to_owned(), description);
    }
    out.insert("type".to_owned(), Value::from("object"));
    out.insert("properties".to_owned(), Value::Object(properties));
    out.insert("required".to_owned(), Value::Array(required));
    out.insert("additionalProperties".to_owned(), Value::Bool(false));
    Value::Object(out)
}

/// Keywords whose values are data, not schemas.
const DATA_KEYWORDS: [&str; 5] = ["const", "enum", "default", "examples", "required"];

/// The post-processing described in the module docs, applied to a schema and all its
/// subschemas.
fn tidy(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    for (key, child) in map.iter_mut() {
        if DATA_KEYWORDS.contains(&key.as_str()) {
            continue;
        }
        match key.as_str() {
            "properties" | "$defs" | "patternProperties" => {
                if let Value::Object(members) = child {
                    members.values_mut().for_each(tidy);
                }
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(items) = child {
                    items.iter_mut().for_each(tidy);
                }
            }
            _ => tidy(child),
        }
    }
    drop_null_type(map);
    unwrap_nullable_union(map);
    if map.contains_key("enum") && map.remove("$ref").is_some() {
        map.entry("type").or_insert_with(|| Value::from("string"));
    }
    if let Some(enum_values) = map.get_mut("enum").and_then(Value::as_array_mut) {
        enum_values.retain(|v| !v.is_null());
    }
    if map.get("format").and_then(Value::as_str).is_some_and(|f| {
        ["int", "uint", "float", "double"]
            .iter()
            .any(|p| f.starts_with(p))
    }) {
        map.remove("format");
    }
    let closable = map.contains_key("properties")
        && !map.contains_key("additionalProperties")
        && !map.contains_key("unevaluatedProperties")
        && !["oneOf", "anyOf", "allOf"]
            .iter()
            .any(|k| map.contains_key(*k));
    if closable {
        map.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
}

/// `type: ["string", "null"]` → `type: "string"`.
fn drop_null_type(map: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = map.get_mut("type") {
        if types.len() > 1 {
            types.retain(|t| t != "null");
        }
        if types.len() == 1 {
            let only = types.remove(0);
            map.insert("type".to_owned(), only);
        }
    }
}

/// `anyOf: [X, {type: null}]` → X's keywords merged into the parent (whose own
/// annotations, such as `description`, win).
fn unwrap_nullable_union(map: &mut Map<String, Value>) {
    for keyword in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = map.get(keyword) else {
            continue;
        };
        let is_null = |b: &Value| b.get("type").and_then(Value::as_str) == Some("null");
        if branches.len() != 2 || !branches.iter().any(is_null) {
            continue;
        }
        let Some(Value::Object(kept)) = branches.iter().find(|b| !is_null(b)).cloned() else {
            continue;
        };
        map.remove(keyword);
        for (key, value) in kept {
            map.entry(key).or_insert(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def<'a>(name: &str) -> &'a Value {
        &document_schema()["$defs"][name]
    }

    #[test]
    fn the_schema_is_sound() {
        assert_eq!(validator().problems(), &[]);
        let text = render();
        assert!(!text.contains("\"null\""), "no null types remain");
        assert!(!text.contains("int64"));
        assert_eq!(render(), text, "deterministic");
    }

    #[test]
    fn every_object_with_properties_is_closed() {
        fn walk(v: &Value, path: &str, open: &mut Vec<String>) {
            match v {
                Value::Object(map) => {
                    if map.contains_key("properties")
                        && map.get("additionalProperties") != Some(&Value::Bool(false))
                        && !map.contains_key("oneOf")
                    {
                        open.push(path.to_owned());
                    }
                    for (k, child) in map {
                        walk(child, &format!("{path}/{k}"), open);
                    }
                }
                Value::Array(items) => {
                    for (i, child) in items.iter().enumerate() {
                        walk(child, &format!("{path}/{i}"), open);
                    }
                }
                _ => {}
            }
        }
        let mut open = Vec::new();
        walk(document_schema(), "", &mut open);
        assert_eq!(open, Vec::<String>::new());
    }

    #[test]
    fn documents_carry_kind_and_api_version() {
        let project = def("ProjectDocument");
        assert_eq!(project["properties"]["kind"]["const"], "Project");
        assert_eq!(project["required"][0], "kind");
        let branches = def("IntegrationDocument")["oneOf"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(branches.len(), 12);
        for branch in branches {
            let props = &branch["properties"];
            assert_eq!(props["kind"]["const"], "Integration");
            if props["provider"]["const"] == "azure" {
                assert_eq!(props["api_version"]["type"], "string", "Azure's own field");
            } else {
                assert_eq!(props["api_version"]["const"], API_VERSION);
            }
            assert!(props["rotate_secrets"].is_object(), "{branch}");
            assert!(props["provider"]["const"].is_string());
            assert_eq!(branch["additionalProperties"], false);
        }
    }

    #[test]
    fn operators_keep_the_narrow_enum() {
        let node_name = &def("FilterSpec")["oneOf"][0]["properties"]["operator"];
        assert!(node_name.get("$ref").is_none());
        assert_eq!(
            node_name["enum"],
            json!(["eq", "ne", "contains", "one_of", "not_in"])
        );
    }
}
