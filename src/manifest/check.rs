//! Checking one parsed document: its `kind` and `api_version`, environment interpolation,
//! the JSON Schema, the semantic rules, and finally the typed spec.
//!
//! Every problem becomes a [`Diagnostic`] at its place in the file: an unknown field at
//! its key, a wrong value at the value, a missing field at the mapping that lacks it, an
//! undefined variable at the `${NAME}` itself when the source spells it out.

use std::collections::HashSet;

use serde_json::Value;

use super::diagnostic::{Diagnostic, LineIndex, Span};
use super::interpolate::tokens::Tokens;
use super::interpolate::{self, Level, Reference};
use super::pricing::PricingSpec;
use super::schema::{
    self, INTEGRATION_DOCUMENT, KINDS, POLICY_DOCUMENT, PRICING_DOCUMENT, PROJECT_DOCUMENT,
    PROMPT_TEMPLATE_DOCUMENT, SCORER_DOCUMENT, SETTINGS_DOCUMENT,
};
use super::semantic::{self, Anchor};
use super::types::{API_VERSION, EnvField, EnvFields, IntegrationSpec, ProjectSpec};
use super::violations;
use super::yaml::{Document, NodeSpan};
use crate::schemacheck::{ViolationKind, describe, suggest};

/// A document's typed spec.
#[derive(Debug, Clone, PartialEq)]
pub enum Spec {
    /// `kind: Project`.
    Project(ProjectSpec),
    /// `kind: Integration`.
    Integration(Box<IntegrationSpec>),
    /// A document of a kind of the registry (`kind: Scorer`, `kind:
    /// PromptTemplate`).
    Global(crate::kinds::Document),
    /// `kind: Policy`.
    Policy(crate::policy::PolicySpec),
    /// `kind: Settings`.
    Settings(crate::policy::SettingsSpec),
    /// `kind: Pricing`.
    Pricing(PricingSpec),
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
    /// What the document declares that no other document may declare again (for the
    /// checks across documents); empty when its kind is unknown.
    pub claims: Vec<Claim>,
    /// The variables its strings refer to (for the checks across documents: a Project
    /// must not show what an Integration keeps secret).
    pub variables: Vec<UsedVariable>,
    /// The document has no `kind` (or is not a mapping): other YAML than a
    /// manifest, or a manifest that forgot its kind.
    pub kindless: bool,
}

/// A variable a document refers to, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsedVariable {
    /// Its name.
    pub name: String,
    /// Whether the document never shows its value (see [`interpolate::Variable::hidden`]).
    pub hidden: bool,
    /// The reference (or the whole string, when the reference is not spelt out there).
    pub at: Span,
}

/// Something a document declares that must be unique across the documents loaded
/// together, with where it is written. Read after interpolation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// A `kind: Project` document's `name` or `id`.
    Project {
        /// `"name"` or `"id"`.
        field: &'static str,
        /// The name or id.
        identity: String,
        /// The value's place.
        at: Span,
    },
    /// A `kind: Settings` document: there is one per repo.
    Settings {
        /// Where the document starts.
        at: Span,
    },
    /// A `kind: Pricing` document (a repo has one).
    Pricing {
        /// The document's `kind` value.
        at: Span,
    },
    /// A `kind: Integration` document's `provider`.
    Provider {
        /// The provider.
        provider: String,
        /// The value's place.
        at: Span,
    },
}

/// One document of one file, and the text its spans index into.
pub struct Input<'a> {
    /// The file as diagnostics name it.
    pub file: &'a str,
    /// The file's text, indexed by line.
    pub lines: &'a LineIndex<'a>,
    /// The document, for its spans: [`check`] takes its value apart (it changes it).
    pub document: &'a Document,
}

impl Input<'_> {
    /// Where the value at `pointer` is (or its nearest existing ancestor).
    pub fn node(&self, pointer: &str) -> NodeSpan {
        self.document.locate(pointer)
    }

    /// The line of the value at `pointer`.
    pub fn line_of(&self, pointer: &str) -> u32 {
        self.node(pointer).value.line
    }

    /// Where to point for the value at `pointer`: its key or the value itself.
    pub fn at(&self, pointer: &str, anchor: Anchor) -> Span {
        let node = self.node(pointer);
        match anchor {
            Anchor::Key => node.key_or_value(),
            Anchor::Value => node.value,
        }
    }

    /// An error at `span` of this file.
    pub fn error(&self, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::error(self.file, Some(span), message)
    }
}

/// Checks one document, whose value is `value` (taken from `input.document`, or a copy of
/// it: it is interpolated in place, and becomes the spec).
pub fn check(
    input: &Input<'_>,
    value: Value,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
) -> Checked {
    let mut out = Checked {
        kindless: value.get("kind").is_none(),
        ..Checked::default()
    };
    let Some(map) = value.as_object() else {
        out.diagnostics.push(
            input
                .error(
                    input.document.root().value,
                    format!(
                        "a manifest document is a mapping with a `kind`, found {}",
                        describe(&value)
                    ),
                )
                .with_help("start the document with its kind, e.g. `kind: Project`"),
        );
        return out;
    };

    let kind = check_kind(input, map.get("kind"), &mut out.diagnostics);
    // Pointers of values never to quote.
    let mut hidden: Vec<String> = Vec::new();
    let Some(kind) = kind else {
        // Not interpolated or validated: no provider, so `api_version` is the format
        // version; literals under secret keys are still hidden.
        if let Some(version) = map.get("api_version")
            && version.as_str() != Some(API_VERSION)
        {
            out.diagnostics
                .push(violations::unsupported_api_version(input, version));
        }
        for site in interpolate::secret_sites(&value) {
            if !site.is_reference {
                hidden.push(site.pointer);
            }
        }
        out.hidden = hidden_spans(input, &value, &hidden);
        return out;
    };
    // Owned: `value` is taken apart below.
    let kind = kind.to_owned();
    let kind = kind.as_str();
    let integration = kind == "Integration";

    let mut working = value;
    if !integration {
        // No secret fields here, but a key that names one (`token:`, a misplaced
        // `api_key:`) is masked all the same, as it is written.
        hidden.extend(
            interpolate::secret_sites(&working)
                .into_iter()
                .filter(|site| !site.is_reference)
                .map(|site| site.pointer),
        );
    }
    let interpolated = interpolate::interpolate(&mut working, integration, env);
    for site in &interpolated.secrets {
        if !site.is_reference {
            hidden.push(site.pointer.clone());
        }
    }
    let mut spans = ReferenceSpans::new(input);
    out.variables = interpolated
        .variables
        .iter()
        .map(|v| UsedVariable {
            name: v.name.clone(),
            hidden: v.hidden,
            at: spans.span(&v.pointer, v.reference.as_ref()),
        })
        .collect();
    for issue in interpolated.issues {
        let span = spans.span(&issue.pointer, issue.reference.as_ref());
        let diagnostic = match issue.level {
            Level::Error => Diagnostic::error(input.file, Some(span), issue.message),
            Level::Warning => Diagnostic::warning(input.file, Some(span), issue.message),
        };
        let diagnostic = diagnostic.with_help_opt(issue.help);
        out.diagnostics.push(match issue.unset_secret {
            Some(name) => diagnostic.with_unset_secret(name),
            None => diagnostic,
        });
    }

    let pointer = match kind {
        "Integration" => INTEGRATION_DOCUMENT,
        "Scorer" => SCORER_DOCUMENT,
        "Policy" => POLICY_DOCUMENT,
        "Settings" => SETTINGS_DOCUMENT,
        "Pricing" => PRICING_DOCUMENT,
        "PromptTemplate" => PROMPT_TEMPLATE_DOCUMENT,
        _ => PROJECT_DOCUMENT,
    };
    // In an Azure integration, `api_version` is Azure's own field (the schema checks it,
    // as it checks the format version everywhere else). The provider may be a variable.
    let azure = integration && working.get("provider").and_then(Value::as_str) == Some("azure");
    let violations = schema::validator().validate(pointer, &working);
    // A value taken from the environment in an Integration document is a secret: a
    // violation inside it is reported without the value. `Some(known)`: the value at
    // `pointer` comes from the environment, and whether its variables are all set.
    let from_env = |pointer: &str| {
        interpolated.kept.iter().find_map(|k| match &k.field {
            EnvField::FromEnv { fingerprint }
                if pointer == k.pointer || pointer.starts_with(&format!("{}/", k.pointer)) =>
            {
                Some(fingerprint.is_some())
            }
            _ => None,
        })
    };
    let (secret, shown): (Vec<_>, Vec<_>) = violations
        .iter()
        .partition(|v| from_env(&v.pointer()).is_some());
    out.diagnostics
        .extend(violations::diagnostics(input, &working, &shown));
    // A value whose variable is not set is not known until `apply` (a warning says so):
    // what the schema says of its reference text is not said of it.
    for v in secret
        .iter()
        .filter(|v| from_env(&v.pointer()) == Some(true))
    {
        out.diagnostics.push(
            input
                .error(
                    input.at(&v.pointer(), Anchor::Value),
                    format!(
                        "{}: the value taken from the environment is not valid here (not shown: it is a secret)",
                        v.location()
                    ),
                )
                .with_help("check the variable's value against the field's documentation"),
        );
    }
    if integration {
        // A misspelt secret field is still a secret: do not quote its value.
        for v in &violations {
            if matches!(v.kind, ViolationKind::UnknownField { .. }) {
                hidden.push(v.pointer());
            }
        }
    } else if kind == "Policy" {
        out.diagnostics
            .extend(crate::policy::check_document(input, &working));
    } else if kind == "Project" {
        for finding in semantic::check_project(&working) {
            let mut message = finding.message;
            if let Some(first) = &finding.first {
                message = format!("{message} (first at line {})", input.line_of(first));
            }
            let diagnostic = input.error(input.at(&finding.pointer, finding.anchor), message);
            out.diagnostics.push(diagnostic.with_help_opt(finding.help));
        }
    }
    // The files the document names (its prompt templates', a custom scorer's).
    let manifest = std::path::Path::new(input.file);
    for (pointer, message) in crate::kinds::resolve_files(kind, manifest, &mut working) {
        out.diagnostics
            .push(input.error(input.at(&pointer, Anchor::Value), message));
    }

    out.claims = claims(input, &working);
    out.hidden = hidden_spans(input, &working, &hidden);
    if !out.diagnostics.iter().any(Diagnostic::is_error) {
        // An Integration's strings that refer to the environment (and a Project's
        // webhook URLs that do) go into the spec as written: only `apply` expands
        // them (its secret resolution).
        let mut env = EnvFields::default();
        for kept in interpolated.kept {
            if let Some(slot) = working.pointer_mut(&kept.pointer) {
                *slot = Value::String(kept.raw);
                env.insert(kept.pointer, kept.field);
            }
        }
        out.spec = typed(input, working, kind, azure, &mut out.diagnostics);
        match &mut out.spec {
            Some(Spec::Integration(spec)) => spec.env = env,
            Some(Spec::Project(spec)) => spec.attach_env(&env),
            _ => {}
        }
        if let Some(Spec::Settings(spec)) = &out.spec {
            let loosened =
                crate::policy::settings::loosened(crate::policy::settings::limits_of(spec));
            if !loosened.is_empty() {
                out.diagnostics.push(
                    Diagnostic::warning(
                        input.file,
                        Some(input.at("/guard", Anchor::Key)),
                        format!(
                            "the mass-change guard is loosened: {}",
                            loosened.join(", ")
                        ),
                    )
                    .with_help(
                        "plans say so every time; apply refuses more than the defaults only without these settings",
                    ),
                );
            }
        }
    }
    out
}

/// The claims of a document whose value after interpolation is `value`.
fn claims(input: &Input<'_>, value: &Value) -> Vec<Claim> {
    let get = |key: &str| value.get(key).and_then(Value::as_str);
    match get("kind") {
        Some("Project") => ["name", "id"]
            .into_iter()
            .filter_map(|field| {
                Some(Claim::Project {
                    field,
                    identity: get(field)?.to_owned(),
                    at: input.node(&format!("/{field}")).value,
                })
            })
            .collect(),
        Some("Settings") => vec![Claim::Settings {
            at: input.document.root().value,
        }],
        Some("Integration") => get("provider")
            .map(|provider| Claim::Provider {
                // A named custom integration is its own (`custom/<name>`, its path).
                provider: match get("name") {
                    Some(name) if provider == "custom" => format!("custom/{name}"),
                    _ => provider.to_owned(),
                },
                at: input.node("/provider").value,
            })
            .into_iter()
            .collect(),
        Some("Pricing") => vec![Claim::Pricing {
            at: input.node("/kind").value,
        }],
        _ => Vec::new(),
    }
}

/// The spans of the values at `pointers` and of everything inside them, where they are
/// written and, for aliases, where they are defined. One pass over the document's spans
/// at most, so a document with many hidden values costs no more than a large one. `value`
/// is the document's value (interpolated or not: a container stays one).
fn hidden_spans(input: &Input<'_>, value: &Value, pointers: &[String]) -> Vec<Span> {
    let mut out = Vec::new();
    let mut containers: HashSet<&str> = HashSet::new();
    for pointer in pointers {
        if let Some(node) = input.document.span(pointer) {
            out.push(node.value);
            out.extend(node.defined);
        }
        if value
            .pointer(pointer)
            .is_some_and(|v| v.is_object() || v.is_array())
        {
            containers.insert(pointer);
        }
    }
    if !containers.is_empty() {
        for (path, node) in input.document.spans() {
            let inside = path
                .match_indices('/')
                .any(|(i, _)| i > 0 && containers.contains(&path[..i]));
            if inside {
                out.push(node.value);
                out.extend(node.key);
                out.extend(node.defined);
            }
        }
    }
    out
}

fn check_kind<'v>(
    input: &Input<'_>,
    kind: Option<&'v Value>,
    out: &mut Vec<Diagnostic>,
) -> Option<&'v str> {
    let expected = "`kind: Project`, `kind: Integration`, `kind: Scorer`, `kind: Policy`, `kind: Settings`, `kind: Pricing` or `kind: PromptTemplate`";
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

/// The spans of references in the source: for each, the span of the reference in the
/// string at its pointer when the source spells the string out as it reads; else the whole
/// value. The source of the last string asked about is indexed once ([`Tokens`]), so the
/// references of one string, which come together, are found in one pass over its source
/// (searching it again for each was quadratic in the references; measured:
/// docs/performance.md, Memory and time from 2,000 to 20,000 log streams).
struct ReferenceSpans<'i, 'a> {
    input: &'i Input<'a>,
    /// The last string's pointer, value span, source text and the tokens of that text.
    last: Option<(String, Span, &'a str, Tokens<'a>)>,
}

impl<'i, 'a> ReferenceSpans<'i, 'a> {
    fn new(input: &'i Input<'a>) -> Self {
        ReferenceSpans { input, last: None }
    }

    fn span(&mut self, pointer: &str, reference: Option<&Reference>) -> Span {
        let Some(reference) = reference else {
            return self.input.node(pointer).value;
        };
        if self.last.as_ref().is_none_or(|(p, ..)| p != pointer) {
            self.last = None;
            let value = self.input.node(pointer).value;
            let source: &'a str = self.input.lines.source();
            let raw_end = value.offset.saturating_add(value.len).min(source.len());
            let Some(raw) = source.get(value.offset..raw_end) else {
                return value;
            };
            self.last = Some((pointer.to_owned(), value, raw, Tokens::new(raw)));
        }
        let Some((_, value, raw, tokens)) = &self.last else {
            return self.input.node(pointer).value;
        };
        let value = *value;
        let found = match tokens.find(&reference.text, reference.nth) {
            Ok(found) => found,
            // Not a `${...}` token (an unterminated `${`, at most one a string): searched.
            Err(()) => raw
                .match_indices(reference.text.as_str())
                .nth(reference.nth)
                .map(|(at, _)| at),
        };
        match found {
            Some(at) => self
                .input
                .lines
                .span(value.offset + at, reference.text.len()),
            None => value,
        }
    }
}

/// The typed spec of a document that passed every check (its value after interpolation).
fn typed(
    input: &Input<'_>,
    mut value: Value,
    kind: &str,
    azure: bool,
    out: &mut Vec<Diagnostic>,
) -> Option<Spec> {
    if let Some(map) = value.as_object_mut() {
        map.remove("kind");
        if !azure {
            map.remove("api_version");
        }
    }
    let result = match kind {
        "Integration" => {
            serde_json::from_value::<IntegrationSpec>(value).map(|s| Spec::Integration(Box::new(s)))
        }
        "Policy" => serde_json::from_value(value).map(Spec::Policy),
        "Settings" => serde_json::from_value(value).map(Spec::Settings),
        "Pricing" => serde_json::from_value::<PricingSpec>(value).map(Spec::Pricing),
        kind if crate::kinds::Document::KINDS.contains(&kind) => {
            crate::kinds::Document::parse(kind, value).map(Spec::Global)
        }
        _ => serde_json::from_value::<ProjectSpec>(value).map(Spec::Project),
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
