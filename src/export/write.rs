//! Exported files as text: the header comments, and each document in exactly
//! the format users write (`kind`, `api_version`, then the spec's fields in
//! the order the manifest types declare them), through [`super::emit`].
//!
//! Deterministic: no timestamps, no map iteration order from hashing; the
//! same documents always give the same bytes.
//!
//! Two adjustments make the text read back into the same specs:
//! - in every string that the loader interpolates (all but secret fields of
//!   Integration documents), a literal `${` is written `$${`;
//! - constraint fields that only repeat a default (`allow_other: false`, a
//!   tree node's `children: []`) are left out, as users write them.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::emit::emit_document;
use crate::api::IntegrationProvider;
use crate::manifest::interpolate::is_secret_key;
use crate::manifest::types::{API_VERSION, IntegrationSpec, ProjectSpec};

/// One document of an exported file.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// Comment lines written before the document (without `# `).
    pub preamble: Vec<String>,
    /// The spec.
    pub body: Body,
    /// Comments after scalar entries, by the entry's JSON pointer in the spec.
    pub comments: BTreeMap<String, String>,
}

/// The spec of a document.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// `kind: Project`.
    Project(Box<ProjectSpec>),
    /// `kind: Integration`.
    Integration(Box<IntegrationSpec>),
    /// A document of a kind of the registry (`kind: Scorer`, `kind:
    /// PromptTemplate`).
    Global(crate::kinds::Document),
}

/// Where editors find the manifest schema, for the `yaml-language-server` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaLocation {
    /// A URL, or a path relative to the file.
    At(String),
    /// Not known: the line is left out and a comment says how to add it.
    Unknown,
}

/// What the header of every exported file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The schema line.
    pub schema: SchemaLocation,
    /// The service exported from (a URL without credentials, or `sandbox`).
    pub service: String,
    /// Lines about this file's content (without `# `).
    pub about: Vec<String>,
}

/// The text of one file: the header, then the documents separated by `---`.
#[must_use]
pub fn render_file(header: &Header, documents: &[Document]) -> String {
    let mut out = String::new();
    if let SchemaLocation::At(location) = &header.schema {
        out.push_str(&format!(
            "# yaml-language-server: $schema={}\n#\n",
            comment_text(location)
        ));
    }
    out.push_str(&format!(
        "# Exported by evalctl {} from {} (`evalctl export`).\n",
        env!("CARGO_PKG_VERSION"),
        comment_text(&header.service)
    ));
    for line in &header.about {
        out.push_str(&comment(line));
    }
    if header.schema == SchemaLocation::Unknown {
        out.push_str("#\n");
        out.push_str(&comment(
            "For completion and checks in editors, make this the first line, with the path of",
        ));
        out.push_str(&comment(
            "the schema `evalctl schema` writes (schemas/evalctl-manifest.schema.json):",
        ));
        out.push_str(&comment(
            "  # yaml-language-server: $schema=<path>/evalctl-manifest.schema.json",
        ));
    }
    for (index, document) in documents.iter().enumerate() {
        if index > 0 {
            out.push_str("---\n");
        }
        out.push('\n');
        for line in &document.preamble {
            out.push_str(&comment(line));
        }
        out.push_str(&emit_document(
            &document_value(document),
            &document.comments,
        ));
    }
    out
}

fn comment_text(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

fn comment(line: &str) -> String {
    let line = comment_text(line);
    if line.is_empty() {
        "#\n".to_owned()
    } else {
        format!("# {line}\n")
    }
}

/// The document as an ordered JSON mapping, ready to emit: `kind`,
/// `api_version`, the spec's fields, interpolation escaped, defaults of
/// constraints left out.
#[must_use]
pub fn document_value(document: &Document) -> Map<String, Value> {
    let mut out = Map::new();
    let (kind, spec, secret_fields, api_version) = match &document.body {
        Body::Project(spec) => ("Project", serde_json::to_value(spec), false, true),
        Body::Global(document) => (document.kind(), document.to_value(), false, true),
        Body::Integration(spec) => (
            "Integration",
            serde_json::to_value(spec),
            true,
            // An Azure integration's `api_version` is Azure's own field.
            spec.config.provider() != IntegrationProvider::Azure,
        ),
    };
    out.insert("kind".into(), json!(kind));
    if api_version {
        out.insert("api_version".into(), json!(API_VERSION));
    }
    if let Ok(Value::Object(fields)) = spec {
        for (k, v) in fields {
            out.insert(k, v);
        }
    }
    for key in ["annotation_templates", "feedback_templates"] {
        if let Some(Value::Array(templates)) = out.get_mut(key) {
            for template in templates {
                if let Some(constraints) = template.get_mut("constraints") {
                    drop_constraint_defaults(constraints);
                }
            }
        }
    }
    let mut value = Value::Object(out);
    escape_interpolation(&mut value, secret_fields, false);
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Leaves out `allow_other: false` and, at any depth of a tree, `children: []`.
fn drop_constraint_defaults(constraints: &mut Value) {
    if let Some(map) = constraints.as_object_mut()
        && map.get("allow_other") == Some(&Value::Bool(false))
    {
        map.remove("allow_other");
    }
    fn prune_children(v: &mut Value) {
        match v {
            Value::Array(items) => items.iter_mut().for_each(prune_children),
            Value::Object(map) => {
                if map
                    .get("children")
                    .is_some_and(|c| c.as_array().is_some_and(Vec::is_empty))
                {
                    map.remove("children");
                }
                map.values_mut().for_each(prune_children);
            }
            _ => {}
        }
    }
    if let Some(tree) = constraints.get_mut("choices_tree") {
        prune_children(tree);
    }
}

/// Writes every literal `${` as `$${` in the strings the loader interpolates:
/// all of them, except under a secret key of an Integration document (the
/// same rule as [`crate::manifest::interpolate`]), the references export
/// writes there for values that may come from the environment, and the
/// strings the loader keeps as written elsewhere
/// ([`crate::manifest::interpolate::kept_as_written`]: a Protect stage's
/// webhook URL, which export has from evalctl's record as the manifest wrote
/// it). Keys are never interpolated.
fn escape_interpolation(value: &mut Value, secret_fields: bool, secret: bool) {
    escape_at(value, &mut String::new(), secret_fields, secret);
}

fn escape_at(value: &mut Value, path: &mut String, secret_fields: bool, secret: bool) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                let len = path.len();
                path.push('/');
                path.push_str(key);
                let secret = secret || (secret_fields && is_secret_key(key));
                escape_at(child, path, secret_fields, secret);
                path.truncate(len);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter_mut().enumerate() {
                let len = path.len();
                path.push('/');
                path.push_str(&index.to_string());
                escape_at(child, path, secret_fields, secret);
                path.truncate(len);
            }
        }
        Value::String(s) if !secret && s.contains("${") => {
            // In an Integration document, a string that is exactly one reference
            // was written as one by export (a value that may come from the
            // environment).
            let reference =
                secret_fields && crate::manifest::types::EnvRef::try_from(s.clone()).is_ok();
            if !reference && !crate::manifest::interpolate::kept_as_written(path, s) {
                *s = s.replace("${", "$${");
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::types::EnvRef;

    fn project() -> ProjectSpec {
        ProjectSpec {
            name: Some("p".into()),
            id: None,
            log_streams: Vec::new(),
            experiments: Vec::new(),
            prompt_templates: None,
            protect_stages: None,
            prune_log_streams: false,
            renamed_from: Vec::new(),
            description: None,
            labels: None,
            annotation_templates: None,
            feedback_templates: None,
        }
    }

    #[test]
    fn documents_start_with_kind_and_leave_defaults_out() {
        let doc = Document {
            preamble: vec!["About this.".into()],
            body: Body::Project(Box::new(project())),
            comments: BTreeMap::new(),
        };
        let value = Value::Object(document_value(&doc));
        assert_eq!(
            value,
            json!({"kind": "Project", "api_version": "evalctl/v1", "name": "p"})
        );
        let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
        assert_eq!(keys[..3], ["kind", "api_version", "name"]);
    }

    #[test]
    fn integration_secrets_are_not_escaped_and_azure_keeps_its_api_version() {
        let spec: IntegrationSpec = serde_json::from_value(json!({
            "provider": "azure", "token": "${AZURE_API_KEY}", "endpoint": "https://x/${y}",
            "api_version": "2025-03-01-preview"
        }))
        .unwrap();
        let doc = Document {
            preamble: Vec::new(),
            body: Body::Integration(Box::new(spec)),
            comments: BTreeMap::new(),
        };
        let value = document_value(&doc);
        assert_eq!(value["token"], "${AZURE_API_KEY}");
        assert_eq!(value["endpoint"], "https://x/$${y}");
        assert_eq!(value["api_version"], "2025-03-01-preview");
        let _: EnvRef = serde_json::from_value(value["token"].clone()).unwrap();
    }

    #[test]
    fn files_have_a_header_and_separated_documents() {
        let header = Header {
            schema: SchemaLocation::At("../schemas/evalctl-manifest.schema.json".into()),
            service: "sandbox".into(),
            about: vec!["Two documents.".into()],
        };
        let doc = Document {
            preamble: vec!["First.".into()],
            body: Body::Project(Box::new(ProjectSpec {
                prompt_templates: None,
                protect_stages: None,
                ..project()
            })),
            comments: BTreeMap::new(),
        };
        let text = render_file(&header, &[doc.clone(), doc]);
        let expected = format!(
            "# yaml-language-server: $schema=../schemas/evalctl-manifest.schema.json\n#\n\
             # Exported by evalctl {} from sandbox (`evalctl export`).\n# Two documents.\n\n\
             # First.\nkind: Project\napi_version: evalctl/v1\nname: p\n---\n\n\
             # First.\nkind: Project\napi_version: evalctl/v1\nname: p\n",
            env!("CARGO_PKG_VERSION")
        );
        assert_eq!(text, expected);
        let unknown = render_file(
            &Header {
                schema: SchemaLocation::Unknown,
                ..header
            },
            &[],
        );
        assert!(!unknown.starts_with("# yaml-language-server"), "{unknown}");
        assert!(unknown.contains("$schema=<path>"), "{unknown}");
    }
}
