//! Checking one parsed document: its `kind` and `api_version`, environment interpolation,
//! the JSON Schema, the semantic rules, and finally the typed spec.
//!
//! Every problem becomes a [`Diagnostic`] at its place in the file: an unknown field at
//! its key, a wrong value at the value, a missing field at the mapping that lacks it, an
//! undefined variable at the `${NAME}` itself when the source spells it out.

use serde_json::Value;

use super::diagnostic::{Diagnostic, Span};
use super::interpolate::{self, Level};
use super::schema::{self, INTEGRATION_DOCUMENT, KINDS, PROJECT_DOCUMENT};
use super::semantic::{self, Anchor};
use super::types::{API_VERSION, IntegrationSpec, ProjectSpec};
use super::yaml::{Document, NodeSpan};
use crate::schemacheck::{Expected, Violation, ViolationKind, suggest};

/// A document's typed spec.
#[derive(Debug, Clone, PartialEq)]
pub enum Spec {
    /// `kind: Project`.
    Project(ProjectSpec),
    /// `kind: Integration`.
    Integration(Box<IntegrationSpec>),
}

/// What checking one document found.
#[derive(Debug, Default)]
pub struct Checked {
    /// Errors and warnings.
    pub diagnostics: Vec<Diagnostic>,
    /// Spans of literal values that must not be shown (refused secrets, unknown fields of
    /// an Integration document).
    pub hidden: Vec<Span>,
    /// The spec, when the document has no errors.
    pub spec: Option<Spec>,
    /// The document's value after interpolation (for the checks across documents).
    pub value: Value,
}

/// One document of one file, and the text its spans index into.
pub struct Input<'a> {
    /// The file as diagnostics name it.
    pub file: &'a str,
    /// The file's text.
    pub source: &'a str,
    /// The document.
    pub document: &'a Document,
}

impl Input<'_> {
    /// Where the value at `pointer` is (or its nearest existing ancestor).
    pub fn node(&self, pointer: &str) -> &NodeSpan {
        self.document.locate(pointer)
    }

    /// The line of the value at `pointer`.
    pub fn line_of(&self, pointer: &str) -> u32 {
        self.node(pointer).value.line
    }

    fn at(&self, pointer: &str, anchor: Anchor) -> Span {
        let node = self.node(pointer);
        match anchor {
            Anchor::Key => node.key_or_value(),
            Anchor::Value => node.value,
        }
    }

    fn error(&self, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::error(self.file, Some(span), message)
    }
}

/// Checks one document.
pub fn check(input: &Input<'_>, env: &dyn Fn(&str) -> Option<String>) -> Checked {
    let mut out = Checked::default();
    let value = &input.document.value;
    let Some(map) = value.as_object() else {
        out.diagnostics.push(
            input
                .error(
                    input.document.root().value,
                    format!(
                        "a manifest document is a mapping with a `kind`, found {}",
                        describe(value)
                    ),
                )
                .with_help("start the document with `kind: Project` or `kind: Integration`"),
        );
        return out;
    };

    let kind = check_kind(input, map.get("kind"), &mut out.diagnostics);
    // In an Azure integration, `api_version` is Azure's own field (the schema checks it).
    let azure =
        kind == Some("Integration") && map.get("provider").and_then(Value::as_str) == Some("azure");
    if !azure {
        check_api_version(input, map.get("api_version"), &mut out.diagnostics);
    }
    let Some(kind) = kind else {
        // Not interpolated or validated; literals under secret keys are still hidden.
        for site in interpolate::secret_sites(value) {
            if !site.is_reference {
                hide(input, &site.pointer, &mut out.hidden);
            }
        }
        return out;
    };
    let integration = kind == "Integration";

    let mut working = value.clone();
    let interpolated = interpolate::interpolate(&mut working, integration, env);
    for site in &interpolated.secrets {
        if !site.is_reference {
            hide(input, &site.pointer, &mut out.hidden);
        }
    }
    for issue in interpolated.issues {
        let span = reference_span(input, &issue.pointer, issue.reference);
        let diagnostic = match issue.level {
            Level::Error => Diagnostic::error(input.file, Some(span), issue.message),
            Level::Warning => Diagnostic::warning(input.file, Some(span), issue.message),
        };
        out.diagnostics.push(match issue.help {
            Some(help) => diagnostic.with_help(help),
            None => diagnostic,
        });
    }

    let pointer = if integration {
        INTEGRATION_DOCUMENT
    } else {
        PROJECT_DOCUMENT
    };
    let violations = schema::validator().validate(pointer, &working);
    for diagnostic in violation_diagnostics(input, &violations, azure) {
        out.diagnostics.push(diagnostic);
    }
    if integration {
        // A misspelt secret field is still a secret: do not quote its value.
        for v in &violations {
            if matches!(v.kind, ViolationKind::UnknownField { .. }) {
                hide(input, &v.pointer(), &mut out.hidden);
            }
        }
    } else {
        for finding in semantic::check_project(&working) {
            let mut message = finding.message;
            if let Some(first) = &finding.first {
                message = format!("{message} (first at line {})", input.line_of(first));
            }
            let diagnostic = input.error(input.at(&finding.pointer, finding.anchor), message);
            out.diagnostics.push(match finding.help {
                Some(help) => diagnostic.with_help(help),
                None => diagnostic,
            });
        }
    }

    if !out.diagnostics.iter().any(Diagnostic::is_error) {
        out.spec = typed(input, &working, integration, azure, &mut out.diagnostics);
    }
    out.value = working;
    out
}

/// The scalars under `pointer` (the value itself, or every scalar inside it), where they
/// are written and, for aliases, where they are defined.
fn hide(input: &Input<'_>, pointer: &str, hidden: &mut Vec<Span>) {
    if let Some(node) = input.document.span(pointer) {
        hidden.push(node.value);
        hidden.extend(node.defined);
    }
    // Containers: their scalars too (a misspelt `headers` mapping).
    let prefix = format!("{pointer}/");
    for (path, node) in input.document.spans() {
        if path.starts_with(&prefix) {
            hidden.push(node.value);
            hidden.extend(node.defined);
        }
    }
}

fn check_kind<'v>(
    input: &Input<'_>,
    kind: Option<&'v Value>,
    out: &mut Vec<Diagnostic>,
) -> Option<&'v str> {
    let expected = "`kind: Project` or `kind: Integration`";
    match kind {
        None => {
            out.push(
                input
                    .error(input.document.root().value, "missing `kind`")
                    .with_help(format!("say what the document is: {expected}")),
            );
            None
        }
        Some(Value::String(kind)) if KINDS.contains(&kind.as_str()) => Some(kind),
        Some(other) => {
            let span = input.at("/kind", Anchor::Value);
            let candidates: Vec<String> = KINDS.iter().map(|k| (*k).to_owned()).collect();
            let help = match other.as_str().and_then(|k| suggest(k, &candidates)) {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("write {expected}"),
            };
            let shown = match other {
                Value::String(s) => format!("`{s}`"),
                other => describe(other).to_owned(),
            };
            out.push(
                input
                    .error(span, format!("unknown kind {shown}"))
                    .with_help(help),
            );
            None
        }
    }
}

fn check_api_version(input: &Input<'_>, version: Option<&Value>, out: &mut Vec<Diagnostic>) {
    match version {
        None => {}
        Some(Value::String(v)) if v == API_VERSION => {}
        Some(other) => {
            let shown = match other {
                Value::String(s) => format!("`{s}`"),
                other => describe(other).to_owned(),
            };
            out.push(
                input
                    .error(
                        input.at("/api_version", Anchor::Value),
                        format!("unsupported api_version {shown}"),
                    )
                    .with_help(format!(
                        "this evalctl reads `api_version: {API_VERSION}` (or leave it out)"
                    )),
            );
        }
    }
}

/// The span of the reference at `range` (bytes of the decoded string) when the source
/// spells the string out as it reads; else the whole value.
fn reference_span(input: &Input<'_>, pointer: &str, range: Option<(usize, usize)>) -> Span {
    let node = input.node(pointer);
    let value = node.value;
    let Some((start, end)) = range else {
        return value;
    };
    let Some(Value::String(decoded)) = input.document.value.pointer(pointer) else {
        return value;
    };
    let Some(reference) = decoded.get(start..end) else {
        return value;
    };
    let nth = decoded[..start].matches(reference).count();
    let raw_end = value
        .offset
        .saturating_add(value.len)
        .min(input.source.len());
    let Some(raw) = input.source.get(value.offset..raw_end) else {
        return value;
    };
    match raw.match_indices(reference).nth(nth) {
        Some((at, _)) => Span::from_offset(input.source, value.offset + at, reference.len()),
        None => value,
    }
}

/// Schema violations as diagnostics. The document keys are checked before (with better
/// words); wrong types reported by each branch of a union at one place are merged.
fn violation_diagnostics(
    input: &Input<'_>,
    violations: &[Violation],
    azure: bool,
) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    let mut merged: Vec<(String, Vec<Expected>)> = Vec::new();
    for v in violations {
        let pointer = v.pointer();
        if pointer == "/kind" || (pointer == "/api_version" && !azure) {
            continue;
        }
        if let ViolationKind::WrongType { expected } = &v.kind
            && v.path
                .iter()
                .any(|s| matches!(s, crate::schemacheck::PathSeg::Tag(_)))
        {
            match merged.iter_mut().find(|(p, _)| *p == pointer) {
                Some((_, all)) => all.push(expected.clone()),
                None => merged.push((pointer, vec![expected.clone()])),
            }
            continue;
        }
        out.push(violation_diagnostic(input, v));
    }
    for (pointer, expected) in merged {
        let found = input
            .document
            .value
            .pointer(&pointer)
            .map_or("nothing", describe);
        let v = Violation {
            path: Vec::new(),
            kind: ViolationKind::WrongType {
                expected: if expected.len() == 1 {
                    expected.into_iter().next().unwrap_or(Expected::Null)
                } else {
                    Expected::Either(expected)
                },
            },
            input: Value::Null,
        };
        let message = match &v.kind {
            ViolationKind::WrongType { expected } => format!("expected {expected}, found {found}"),
            _ => v.message(),
        };
        out.push(input.error(
            input.at(&pointer, Anchor::Value),
            format!("{}: {message}", location(&pointer)),
        ));
    }
    out
}

fn violation_diagnostic(input: &Input<'_>, v: &Violation) -> Diagnostic {
    let pointer = v.pointer();
    let place = v.location();
    match &v.kind {
        ViolationKind::UnknownField { field, allowed } => {
            let help = match suggest(field, allowed) {
                Some(s) => format!("did you mean `{s}`?"),
                None => {
                    let list: Vec<String> = allowed.iter().map(|a| format!("`{a}`")).collect();
                    format!("expected one of {}", list.join(", "))
                }
            };
            input
                .error(input.at(&pointer, Anchor::Key), format!("unknown field `{field}`"))
                .with_help(help)
        }
        ViolationKind::Missing { field } => {
            let parent = parent_pointer(&pointer);
            let span = input.at(parent, Anchor::Key);
            let what = if parent.is_empty() {
                "the document".to_owned()
            } else {
                format!("`{}`", location(parent))
            };
            input.error(span, format!("{what} is missing the required field `{field}`"))
        }
        ViolationKind::NotInEnum { allowed, .. } => {
            let names: Vec<String> = allowed
                .iter()
                .filter_map(|a| a.as_str().map(str::to_owned))
                .collect();
            let found = input.document.value.pointer(&pointer).and_then(Value::as_str);
            let diagnostic = input.error(input.at(&pointer, Anchor::Value), format!("{place}: {}", v.message()));
            match found.and_then(|f| suggest(f, &names)) {
                Some(s) => diagnostic.with_help(format!("did you mean `{s}`?")),
                None => diagnostic,
            }
        }
        ViolationKind::UnionTagInvalid { discriminator, .. }
        | ViolationKind::UnionTagMissing { discriminator, .. } => {
            let tag = format!("{pointer}/{discriminator}");
            let span = match input.document.span(&tag) {
                Some(node) => node.value,
                None => input.at(&pointer, Anchor::Key),
            };
            input.error(span, format!("{place}: {}", v.message()))
        }
        ViolationKind::PatternMismatch { pattern } if pattern == super::types::EnvRef::PATTERN => input
            .error(input.at(&pointer, Anchor::Value), format!("{place}: a secret must be an environment reference"))
            .with_help("write a reference such as `${OPENAI_API_KEY}` and set the variable in the environment"),
        ViolationKind::PatternMismatch { pattern } if pattern.starts_with("^#") => input
            .error(input.at(&pointer, Anchor::Value), format!("{place}: {}", v.message()))
            .with_help("write a colour as `#RRGGBB`, e.g. `#1F77B4`"),
        ViolationKind::WrongType { .. } if v.input.is_null() => input
            .error(input.at(&pointer, Anchor::Value), format!("{place}: {}", v.message()))
            .with_help("give a value, or remove the key to leave the field unmanaged (write `[]` for an empty list)"),
        _ => input.error(input.at(&pointer, Anchor::Value), format!("{place}: {}", v.message())),
    }
}

fn parent_pointer(pointer: &str) -> &str {
    pointer.rfind('/').map_or("", |i| &pointer[..i])
}

/// A pointer for people: `log_streams[0].trends`.
fn location(pointer: &str) -> String {
    let v = Violation {
        path: pointer
            .split('/')
            .skip(1)
            .map(|token| {
                let token = token.replace("~1", "/").replace("~0", "~");
                match token.parse::<usize>() {
                    Ok(index) => crate::schemacheck::PathSeg::Index(index),
                    Err(_) => crate::schemacheck::PathSeg::Key(token),
                }
            })
            .collect(),
        kind: ViolationKind::NotAllowed,
        input: Value::Null,
    };
    v.location()
}

fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// The typed spec of a document that passed every check.
fn typed(
    input: &Input<'_>,
    value: &Value,
    integration: bool,
    azure: bool,
    out: &mut Vec<Diagnostic>,
) -> Option<Spec> {
    let mut value = value.clone();
    if let Some(map) = value.as_object_mut() {
        map.remove("kind");
        if !azure {
            map.remove("api_version");
        }
    }
    let result = if integration {
        serde_json::from_value::<IntegrationSpec>(value).map(|s| Spec::Integration(Box::new(s)))
    } else {
        serde_json::from_value::<ProjectSpec>(value).map(Spec::Project)
    };
    match result {
        Ok(spec) => Some(spec),
        Err(e) => {
            // The schema accepted what serde refuses: a bug in the schema. Secrets are
            // references by now, so the message cannot hold one.
            out.push(
                input
                    .error(
                        input.document.root().value,
                        format!("the document passed validation but cannot be read: {e}"),
                    )
                    .with_help("this is a bug in evalctl; please report it"),
            );
            None
        }
    }
}
