//! The human-readable reference of the manifest format (`schemas/REFERENCE.md`),
//! generated from the JSON Schema of [`super::schema`].
//!
//! One section per document kind (and per provider of an Integration), then one per
//! named type the documents use, in the order a reader meets them (breadth first from
//! the documents). Every field gets its type, whether it is required, its allowed
//! values, limits and default, and its description (the doc comment of the manifest
//! type it comes from). Enumerations are inlined as allowed values where they are used.
//! The output is a pure function of the schema, so it is deterministic; a test keeps the
//! checked-in file equal to [`render`], and `evalctl schema` writes both files.

use std::collections::{BTreeSet, VecDeque};
use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::schema::{SCHEMA_FILE, document_schema};

mod words;

use words::{
    cell_escape, code, compact, heading, limits, lower_first, one_line, paragraph, plain, slug,
};

/// The file name `evalctl schema` writes the reference to, next to [`SCHEMA_FILE`].
pub const REFERENCE_FILE: &str = "REFERENCE.md";

/// The text of `schemas/REFERENCE.md`, generated from the manifest schema.
#[must_use]
pub fn render() -> String {
    render_schema(document_schema())
}

/// The reference of `schema` (a manifest schema shaped like [`document_schema`]: a
/// `oneOf` of document definitions under `$defs`), as markdown. Never panics: what the
/// schema does not say is left out.
#[must_use]
pub fn render_schema(schema: &Value) -> String {
    let empty = Map::new();
    let defs = schema
        .get("$defs")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let reference = Reference { defs };
    let documents: Vec<(&str, &Value)> = schema
        .get("oneOf")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(|branch| ref_name(branch))
        .filter_map(|name| defs.get(name).map(|def| (name, def)))
        .collect();
    let types = reference.named_types(documents.iter().map(|(_, def)| *def));

    let mut out = String::new();
    reference.preamble(&mut out, &documents, &types);
    heading(&mut out, 2, "Documents");
    for (_, def) in &documents {
        reference.document(&mut out, def);
    }
    heading(&mut out, 2, "Types");
    for name in &types {
        if let Some(def) = defs.get(*name) {
            reference.named_type(&mut out, name, def);
        }
    }
    // One trailing newline, whatever the last section ended with.
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    out.push('\n');
    out
}

/// The general rules no schema keyword carries, written once at the top.
const HOW_TO_READ: &str = "\
A config repo is a directory of YAML files (`*.yaml`, `*.yml`, searched recursively). \
A file holds one or more documents separated by `---`; each document has a `kind`. \
Documents are strict: an unknown field is an error (with a suggestion when it looks like a typo), \
and `null` is not a value (leave an optional field out instead).

- A field you leave out is not managed: evalctl never touches it.
- A list you write (even `[]`) is authoritative: live state is made to match it exactly.
- Within a managed scope (trends sections, a project's templates), live objects the manifests \
do not declare are deleted only with `--prune`.
- String fields may use environment variables, `${NAME}` (`$${` is a literal `${`); \
secret fields must be such a reference (see [EnvRef](#envref)): a literal secret is refused.

Editors that speak the YAML language server validate and complete manifests with the schema: \
start a file with `# yaml-language-server: $schema=<path to>/evalctl-manifest.schema.json`.";

struct Reference<'a> {
    defs: &'a Map<String, Value>,
}

impl<'a> Reference<'a> {
    fn preamble(&self, out: &mut String, documents: &[(&str, &Value)], types: &[&str]) {
        out.push_str("# evalctl manifest reference\n\n");
        let _ = writeln!(
            out,
            "<!-- Generated from the manifest schema by `evalctl schema` (`cargo run -- schema`); \
             do not edit: edit the doc comments of src/manifest/types.rs and regenerate. -->\n"
        );
        let _ = writeln!(
            out,
            "The fields of evalctl's manifests, generated from the JSON Schema \
             [`{SCHEMA_FILE}`]({SCHEMA_FILE}), which evalctl itself validates against.\n"
        );
        out.push_str(HOW_TO_READ);
        heading(out, 2, "Contents");
        for (_, def) in documents {
            let title = document_title(def);
            let _ = writeln!(out, "- [{title}](#{})", slug(&title));
            for branch in integration_branches(def) {
                let title = str_of(branch, "title").unwrap_or("?");
                let _ = writeln!(out, "  - [{title}](#{})", slug(title));
            }
        }
        let links: Vec<String> = types
            .iter()
            .map(|name| format!("[{name}](#{})", slug(name)))
            .collect();
        let _ = writeln!(out, "- Types: {}\n", links.join(", "));
    }

    fn document(&self, out: &mut String, def: &Value) {
        heading(out, 3, &document_title(def));
        paragraph(out, def);
        let branches = integration_branches(def);
        if branches.is_empty() {
            self.fields(out, def);
            return;
        }
        out.push_str("One document per provider, chosen by `provider`:\n\n");
        for branch in &branches {
            let title = str_of(branch, "title").unwrap_or("?");
            let provider = provider_of(branch).unwrap_or("?");
            let summary = one_line(str_of(branch, "description").unwrap_or_default());
            let _ = writeln!(out, "- [`{provider}`](#{}): {summary}", slug(title));
        }
        for branch in branches {
            heading(out, 4, str_of(branch, "title").unwrap_or("Integration"));
            paragraph(out, branch);
            self.fields(out, branch);
        }
    }

    fn named_type(&self, out: &mut String, name: &str, def: &Value) {
        heading(out, 3, name);
        paragraph(out, def);
        if def.get("properties").is_some() {
            self.fields(out, def);
            return;
        }
        let Some(branches) = union_branches(def) else {
            // A named scalar, such as a secret reference.
            let _ = writeln!(out, "Type: {}.", self.type_text(def));
            for fact in self.facts(def) {
                let stop = if fact.ends_with('.') { "" } else { "." };
                let _ = writeln!(out, "{fact}{stop}");
            }
            return;
        };
        let objects = branches.iter().any(|b| b.get("properties").is_some());
        if !objects {
            out.push_str("One of:\n\n");
            for branch in branches {
                let mut line = format!("- {}", self.type_text(branch));
                if let Some(description) = str_of(branch, "description") {
                    let _ = write!(line, ": {}", one_line(description));
                }
                for fact in self.facts(branch) {
                    let _ = write!(line, " {fact}.");
                }
                let _ = writeln!(out, "{line}");
            }
            return;
        }
        let discriminator = discriminator(branches);
        for branch in branches {
            let tag = discriminator.as_deref().and_then(|key| {
                let value = branch.get("properties")?.get(key)?.get("const")?;
                Some(format!("`{key}: {}`", plain(value)))
            });
            let title = tag.unwrap_or_else(|| str_of(branch, "title").unwrap_or(name).to_owned());
            heading(out, 4, &format!("{name}: {title}"));
            paragraph(out, branch);
            self.fields(out, branch);
        }
    }

    /// The table of an object schema's fields.
    fn fields(&self, out: &mut String, schema: &Value) {
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
            return;
        };
        let required: BTreeSet<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        out.push_str("| Field | Type | Required | Description |\n|:--|:--|:--|:--|\n");
        for (field, property) in properties {
            let mut cell = one_line(str_of(property, "description").unwrap_or_default());
            if cell.is_empty()
                && let Some(target) = self.target(property)
            {
                cell = one_line(str_of(target, "description").unwrap_or_default());
            }
            for fact in self.facts(property) {
                if !cell.is_empty() {
                    cell.push_str("<br>");
                }
                cell.push_str(&fact);
                if !fact.ends_with('.') {
                    cell.push('.');
                }
            }
            let _ = writeln!(
                out,
                "| `{field}` | {} | {} | {} |",
                cell_escape(&self.type_text(property)),
                if required.contains(field.as_str()) {
                    "yes"
                } else {
                    "no"
                },
                cell_escape(&cell),
            );
        }
    }

    /// The definition a `$ref` points at.
    fn target(&self, schema: &Value) -> Option<&'a Value> {
        ref_name(schema).and_then(|name| self.defs.get(name))
    }

    /// Whether a definition is inlined as its allowed values rather than given a section.
    fn is_enumeration(def: &Value) -> bool {
        def.get("properties").is_none()
            && (def.get("enum").is_some()
                || union_branches(def)
                    .is_some_and(|branches| branches.iter().all(|b| b.get("const").is_some())))
    }

    /// The type of a schema, in words, with links to named types.
    fn type_text(&self, schema: &Value) -> String {
        if let Some(name) = ref_name(schema) {
            return match self.defs.get(name) {
                Some(def) if Self::is_enumeration(def) => enumeration_type(def).to_owned(),
                _ => format!("[{name}](#{})", slug(name)),
            };
        }
        if let Some(branches) = union_branches(schema) {
            if branches.iter().all(|b| b.get("const").is_some()) {
                return enumeration_type(schema).to_owned();
            }
            let texts: Vec<String> = branches.iter().map(|b| self.type_text(b)).collect();
            return texts.join(" or ");
        }
        match str_of(schema, "type") {
            Some("array") => match schema.get("items") {
                Some(items) => format!("list of {}", self.type_text(items)),
                None => "list".to_owned(),
            },
            Some("object") => match schema.get("additionalProperties") {
                Some(Value::Object(_)) if schema.get("properties").is_none() => format!(
                    "map of string to {}",
                    schema
                        .get("additionalProperties")
                        .map(|v| self.type_text(v))
                        .unwrap_or_default()
                ),
                Some(Value::Bool(true)) => "object (any keys)".to_owned(),
                _ => "object".to_owned(),
            },
            Some(other) => other.to_owned(),
            None if schema.get("const").is_some() => "string".to_owned(),
            None => "any".to_owned(),
        }
    }

    /// Allowed values, limits and default of a schema, as sentences without the final
    /// period.
    fn facts(&self, schema: &Value) -> Vec<String> {
        let mut facts = Vec::new();
        if let Some(allowed) = self.allowed(schema) {
            facts.push(allowed);
        }
        if let Some(limits) = limits(schema) {
            facts.push(format!("Limits: {limits}"));
        }
        match str_of(schema, "type") {
            Some("array") => {
                if let Some(items) = schema.get("items") {
                    self.nested_facts(&mut facts, "Each item", items);
                }
            }
            Some("object") if schema.get("properties").is_none() => {
                if let Some(values @ Value::Object(_)) = schema.get("additionalProperties") {
                    self.nested_facts(&mut facts, "Each value", values);
                }
            }
            _ => {}
        }
        if let Some(default) = schema.get("default") {
            facts.push(format!("Default: {}", code(&compact(default))));
        }
        facts
    }

    fn nested_facts(&self, facts: &mut Vec<String>, what: &str, schema: &Value) {
        if ref_name(schema).is_some() && !self.target(schema).is_some_and(Self::is_enumeration) {
            return; // the named type's section says it
        }
        for fact in self.facts(schema) {
            let fact = if let Some(rest) = fact.strip_prefix("Limits: ") {
                rest.to_owned()
            } else if let Some(rest) = fact.strip_prefix("Allowed: ") {
                format!("one of {rest}")
            } else {
                lower_first(&fact)
            };
            facts.push(format!("{what}: {fact}"));
        }
    }

    /// `Allowed: …` of a schema restricted to listed values.
    fn allowed(&self, schema: &Value) -> Option<String> {
        match self.target(schema) {
            Some(def) if Self::is_enumeration(def) => Self::listed(def),
            _ => Self::listed(schema),
        }
    }

    /// `Allowed: …` of the values a schema lists itself (references not followed).
    fn listed(schema: &Value) -> Option<String> {
        if let Some(value) = schema.get("const") {
            return Some(format!("Must be {}", code(&plain(value))));
        }
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            let values: Vec<String> = values.iter().map(|v| code(&plain(v))).collect();
            return Some(format!("Allowed: {}", values.join(", ")));
        }
        let branches = union_branches(schema)?;
        if !branches.iter().all(|b| b.get("const").is_some()) {
            return None;
        }
        let lines: Vec<String> = branches
            .iter()
            .map(|b| {
                let value = code(&b.get("const").map(plain).unwrap_or_default());
                match str_of(b, "description") {
                    Some(d) => format!("{value}: {}", one_line(d)),
                    None => value,
                }
            })
            .collect();
        Some(format!("Allowed:<br>{}", lines.join("<br>")))
    }

    /// The named types the documents use, enumerations left out (they are inlined): those
    /// of the first document breadth first, then those the next adds, and so on.
    fn named_types(&self, documents: impl Iterator<Item = &'a Value>) -> Vec<&'a str> {
        let mut seen = BTreeSet::new();
        let mut order = Vec::new();
        for document in documents {
            self.reachable(document, &mut seen, &mut order);
        }
        order
    }

    /// Appends the named types reachable from `root` and not `seen` yet to `order`,
    /// breadth first.
    fn reachable(&self, root: &'a Value, seen: &mut BTreeSet<&'a str>, order: &mut Vec<&'a str>) {
        let mut queue = VecDeque::from([root]);
        while let Some(schema) = queue.pop_front() {
            let mut found = Vec::new();
            collect_refs(schema, &mut found);
            for name in found {
                let Some((key, def)) = self.defs.get_key_value(name) else {
                    continue;
                };
                if seen.insert(key.as_str()) {
                    if !Self::is_enumeration(def) {
                        order.push(key.as_str());
                    }
                    queue.push_back(def);
                }
            }
        }
    }
}

/// Every `$ref` target name in `schema`, in document order.
fn collect_refs<'v>(schema: &'v Value, found: &mut Vec<&'v str>) {
    match schema {
        Value::Object(map) => {
            for (key, child) in map {
                if key == "$ref" {
                    if let Some(name) = ref_name(schema) {
                        found.push(name);
                    }
                } else if !matches!(key.as_str(), "const" | "enum" | "default" | "examples") {
                    collect_refs(child, found);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| collect_refs(item, found)),
        _ => {}
    }
}

/// The definition name of a local `$ref` (`#/$defs/Name` → `Name`).
fn ref_name(schema: &Value) -> Option<&str> {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
}

fn str_of<'v>(schema: &'v Value, key: &str) -> Option<&'v str> {
    schema.get(key).and_then(Value::as_str)
}

fn union_branches(schema: &Value) -> Option<&Vec<Value>> {
    schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)
}

/// The type of an enumeration's values (`string` unless it says otherwise).
fn enumeration_type(def: &Value) -> &str {
    str_of(def, "type")
        .or_else(|| {
            union_branches(def)
                .and_then(|branches| branches.first())
                .and_then(|branch| str_of(branch, "type"))
        })
        .unwrap_or("string")
}

/// The provider variants of the Integration document (empty for other documents).
fn integration_branches(def: &Value) -> Vec<&Value> {
    union_branches(def)
        .map(|branches| {
            branches
                .iter()
                .filter(|b| provider_of(b).is_some())
                .collect()
        })
        .unwrap_or_default()
}

fn provider_of(branch: &Value) -> Option<&str> {
    branch
        .get("properties")?
        .get("provider")?
        .get("const")?
        .as_str()
}

/// `Project document (kind: Project)`.
fn document_title(def: &Value) -> String {
    let title = str_of(def, "title").unwrap_or("Document");
    match def
        .get("properties")
        .and_then(|p| p.get("kind"))
        .and_then(|k| k.get("const"))
        .and_then(Value::as_str)
    {
        Some(kind) => format!("{title} (kind: {kind})"),
        None => title.to_owned(),
    }
}

/// The property every object branch of a union requires with a `const`: its tag.
fn discriminator(branches: &[Value]) -> Option<String> {
    let first = branches.first()?.get("properties")?.as_object()?;
    first
        .iter()
        .filter(|(_, p)| p.get("const").is_some())
        .map(|(key, _)| key)
        .find(|key| {
            branches.iter().all(|b| {
                b.get("properties")
                    .and_then(|p| p.get(key.as_str()))
                    .and_then(|p| p.get("const"))
                    .is_some()
            })
        })
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_broken_schema_renders_without_panicking() {
        for schema in [
            json!(null),
            json!({}),
            json!({"oneOf": [{"$ref": "#/$defs/Missing"}]}),
            json!({"oneOf": "x", "$defs": {"A": 1}}),
            json!({"oneOf": [{"$ref": "#/$defs/A"}], "$defs": {"A": {"oneOf": [{}], "properties": 3}}}),
            // References in circles, through enumerations and objects.
            json!({"oneOf": [{"$ref": "#/$defs/A"}], "$defs": {
                "A": {"properties": {"e": {"$ref": "#/$defs/E"}, "a": {"$ref": "#/$defs/A"}}},
                "E": {"enum": ["x"], "$ref": "#/$defs/E"},
            }}),
        ] {
            let text = render_schema(&schema);
            assert!(text.starts_with("# evalctl manifest reference"), "{text}");
        }
    }

    #[test]
    fn every_field_of_the_manifest_schema_is_documented() {
        let text = render();
        assert_eq!(render(), text, "deterministic");
        for field in [
            "`sample_rate`",
            "`renamed_from`",
            "`scorer_version`",
            "`annotation_type`",
            "`feedback_type`",
            "`rotate_secrets`",
            "`available_deployments`",
        ] {
            assert!(text.contains(&format!("| {field} |")), "{field}");
        }
        assert!(text.contains("### Project document (kind: Project)"));
        assert!(text.contains("#### Integration: openai"));
        assert!(text.contains("Limits: 0 to 1"), "sample_rate's range");
        assert!(text.contains("Allowed: `eq`, `ne`, `contains`, `one_of`, `not_in`"));
        assert!(text.contains("`user`: Favorited for the calling user."));
        assert!(text.contains("Default: `false`"));
        assert!(text.contains("matches `^#[0-9A-Fa-f]{6}$`"));
        assert!(!text.contains("](#)"), "no empty link");
    }

    #[test]
    fn every_link_has_a_heading() {
        let text = render();
        let headings: BTreeSet<String> = text
            .lines()
            .filter_map(|l| l.strip_prefix('#'))
            .map(|l| slug(l.trim_start_matches('#').trim()))
            .collect();
        let mut rest = text.as_str();
        let mut links = 0;
        while let Some(start) = rest.find("](#") {
            let after = &rest[start + 3..];
            let end = after.find(')').unwrap_or(after.len());
            let anchor = &after[..end];
            assert!(headings.contains(anchor), "no heading for #{anchor}");
            links += 1;
            rest = &after[end..];
        }
        assert!(links > 20, "{links}");
    }
}
