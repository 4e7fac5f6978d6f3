//! Policies in the repo: `kind: Policy` documents hold rules written in CEL (the
//! expression language of Kubernetes' ValidatingAdmissionPolicy), each evaluated on every
//! object of its target (projects, log streams, experiments, scorers, integrations,
//! templates, or the plan's judge-call forecast); a rule whose expression is not `true`
//! for an object is a violation, reported at the object's `file:line:column` as an error
//! (exit 65, like any manifest error) or a warning. `kind: Settings` (one per repo) sets
//! the mass-change guard's thresholds ([`settings`]).
//!
//! The parts, in the order a command meets them:
//! - [`spec`]: the document types (the manifest schema is derived from them);
//! - [`check_document`]: one Policy document, at load time, while its spans are at hand:
//!   every rule's expression compiles and refers only to its target's variables, rule
//!   names are unique; each problem at its own line and column;
//! - [`evaluate`]: every rule but the forecast's, over a loaded [`ManifestSet`], offline
//!   (`manifest::load` calls it, so `validate`, `plan`, `apply` and `drift` all report
//!   violations the same way); [`evaluate_forecast`]: the forecast's rules, over figures
//!   a plan computed;
//! - [`objects`]: what each target's variables hold (documented in docs/policies.md);
//! - [`diagnostics`]: violations as diagnostics at their objects, the files read again
//!   on this path only (a loaded set keeps no spans), literal secrets masked as loading
//!   masks them.
//!
//! The CEL crate is `cel` (cel-rust): parser and interpreter; nothing here interprets.

pub mod objects;
pub mod settings;
pub mod spec;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::manifest::check::Input;
use crate::manifest::diagnostic::{Diagnostic, Severity, Span};
use crate::manifest::files::ManifestFile;
use crate::manifest::locate::FieldPath;
use crate::manifest::mask::{self, Masked};
use crate::manifest::set::{Located, ManifestSet, Origin};
use crate::manifest::yaml::Limits;

pub use objects::ForecastFigures;
pub use spec::{PolicySpec, RuleSeverity, RuleSpec, SettingsSpec, Target};

/// The deepest nesting of brackets an expression may have: the parser recurses on each,
/// and a hostile expression must not exhaust the stack.
pub const MAX_NESTING: usize = 64;

/// The longest expression, in characters (as the schema counts them).
pub const MAX_EXPRESSION: usize = 4096;

/// One object that breaks one rule (or a rule that could not be evaluated on it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The rule's severity.
    pub severity: RuleSeverity,
    /// The document holding the object (for a forecast rule: the Policy document).
    pub origin: Origin,
    /// The object within that document (for a forecast rule: the rule).
    pub field: FieldPath,
    /// What is wrong: the object, the rule's message.
    pub message: String,
    /// The rule broken.
    pub rule: RuleAt,
    /// After the rule's place in the help line: its expression, or what to do.
    pub detail: String,
}

/// A rule, by name and place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleAt {
    /// The rule's name.
    pub name: String,
    /// Its policy's name.
    pub policy: String,
    /// The Policy document.
    pub origin: Origin,
    /// The rule's index in `rules`.
    pub index: usize,
}

/// Why an expression does not compile, and where in it (1-based line and column of the
/// expression's text, when the parser says).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileError {
    /// The parser's message.
    pub message: String,
    /// Line and column within the expression.
    pub position: Option<(usize, usize)>,
}

/// Compiles `expression` for `target`: it must parse, stay within [`MAX_EXPRESSION`] and
/// [`MAX_NESTING`], and refer to no variable its target does not have (comprehension
/// variables aside).
pub fn compile(expression: &str, target: Target) -> Result<cel::Program, CompileError> {
    let length = expression.chars().count();
    if length > MAX_EXPRESSION {
        return Err(CompileError {
            message: format!(
                "the expression is {length} characters long; at most {MAX_EXPRESSION} are allowed"
            ),
            position: None,
        });
    }
    let mut depth = 0usize;
    for c in expression.chars() {
        match c {
            '(' | '[' | '{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(CompileError {
                        message: format!(
                            "the expression nests brackets deeper than {MAX_NESTING} levels"
                        ),
                        position: None,
                    });
                }
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let program = std::panic::catch_unwind(|| cel::Program::compile(expression))
        .map_err(|_| CompileError {
            message: "the CEL parser failed on this expression".to_owned(),
            position: None,
        })?
        .map_err(|errors| {
            let first = errors.errors.first();
            CompileError {
                message: first.map_or_else(|| errors.to_string(), |e| e.msg.clone()),
                position: first.and_then(|e| {
                    let line = usize::try_from(e.pos.0).ok()?;
                    let column = usize::try_from(e.pos.1).ok()?;
                    // Both 1-based.
                    Some((line.max(1), column.max(1)))
                }),
            }
        })?;
    let references = program.references();
    let mut unknown: Vec<&str> = references
        .variables()
        .into_iter()
        .filter(|v| !target.variables().contains(v) && !bound_in(expression, v))
        .collect();
    unknown.sort_unstable();
    if let Some(first) = unknown.first() {
        return Err(CompileError {
            message: format!(
                "undeclared reference to `{first}`: a rule of target `{}` sees {}",
                target.as_str(),
                objects::listed(target.variables())
            ),
            position: expression.find(first).map(|at| position_of(expression, at)),
        });
    }
    Ok(program)
}

/// Whether `name` is the variable of a comprehension macro (`list.all(name, ...)`).
fn bound_in(expression: &str, name: &str) -> bool {
    let pattern = format!(
        r"\.\s*(all|exists|exists_one|map|filter)\s*\(\s*(\w+\s*,\s*)?{}\s*,",
        regex::escape(name)
    );
    regex::Regex::new(&pattern).is_ok_and(|re| re.is_match(expression))
}

/// 1-based line and column (in characters) of byte `at` of `text`.
fn position_of(text: &str, at: usize) -> (usize, usize) {
    let before = text.get(..at).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// The problems of one `kind: Policy` document, whose value (after interpolation) is
/// `value`: rule names declared twice, expressions that do not compile or name
/// variables their target does not have. Each at its place; a compile error at the
/// expression's own line and column when the expression is written on one line.
pub fn check_document(input: &Input<'_>, value: &Value) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let Some(rules) = value.get("rules").and_then(Value::as_array) else {
        return out;
    };
    let mut names: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, rule) in rules.iter().enumerate() {
        if let Some(name) = rule.get("name").and_then(Value::as_str) {
            if let Some(first) = names.get(name) {
                let first_line = input.line_of(&format!("/rules/{first}/name"));
                out.push(
                    input
                        .error(
                            input.node(&format!("/rules/{i}/name")).value,
                            format!(
                                "rule `{name}` is declared twice in this policy (first at line {first_line})"
                            ),
                        )
                        .with_help("give each rule of a policy its own name"),
                );
            } else {
                names.insert(name, i);
            }
        }
        let target = rule
            .get("target")
            .cloned()
            .and_then(|t| serde_json::from_value::<Target>(t).ok());
        let (Some(expression), Some(target)) =
            (rule.get("expression").and_then(Value::as_str), target)
        else {
            // The schema reports a missing or mistyped field.
            continue;
        };
        if let Err(error) = compile(expression, target) {
            let pointer = format!("/rules/{i}/expression");
            let span = expression_span(input, &pointer, expression, error.position);
            out.push(
                input
                    .error(
                        span,
                        format!(
                            "the expression of rule `{}` does not compile: {}",
                            rule.get("name").and_then(Value::as_str).unwrap_or("?"),
                            error.message
                        ),
                    )
                    .with_help(
                        "write a CEL expression that is true for an object following the rule; docs/policies.md lists what each target sees",
                    ),
            );
        }
    }
    out
}

/// Where in the file the position `at` (line, column within `expression`) is: exact when
/// the expression is written as a one-line scalar, plain or quoted; else the value.
fn expression_span(
    input: &Input<'_>,
    pointer: &str,
    expression: &str,
    at: Option<(usize, usize)>,
) -> Span {
    let value = input.node(pointer).value;
    let Some((line, column)) = at else {
        return value;
    };
    let source = input.lines.source();
    let Some(raw) = source.get(value.offset..value.offset.saturating_add(value.len)) else {
        return value;
    };
    let inner = if raw == expression {
        0
    } else if raw.len() >= 2
        && (raw.starts_with('"') || raw.starts_with('\''))
        && raw.get(1..raw.len() - 1) == Some(expression)
    {
        1
    } else {
        return value;
    };
    if line != 1 || expression.contains('\n') {
        return value;
    }
    // Past the last character (an expression that ends too soon): its end.
    let Some((byte, ch)) = expression
        .char_indices()
        .map(|(b, c)| (b, c.len_utf8()))
        .chain(std::iter::once((expression.len(), 0)))
        .nth(column.saturating_sub(1))
    else {
        return value;
    };
    input.lines.span(value.offset + inner + byte, ch)
}

/// A rule with its policy and where it is, compiled.
struct Compiled<'s> {
    policy: &'s str,
    rule: &'s RuleSpec,
    origin: &'s Origin,
    index: usize,
    program: Option<cel::Program>,
}

fn compiled(policies: &[Located<PolicySpec>], forecast: bool) -> Vec<Compiled<'_>> {
    let mut out = Vec::new();
    for policy in policies {
        for (index, rule) in policy.spec.rules.iter().enumerate() {
            if (rule.target == Target::Forecast) != forecast {
                continue;
            }
            out.push(Compiled {
                policy: &policy.spec.name,
                rule,
                origin: &policy.origin,
                index,
                // Compiled when the document was loaded (`check_document`): an error
                // there kept the document out of the set.
                program: compile(&rule.expression, rule.target).ok(),
            });
        }
    }
    out
}

/// The violations of every rule of `set`'s policies except the forecast's, by target,
/// then in policy order, then object order. Pure: reads no file.
#[must_use]
pub fn evaluate(set: &ManifestSet) -> Vec<Violation> {
    if set.policies.is_empty() {
        return Vec::new();
    }
    let rules = compiled(&set.policies, false);
    let env = Arc::new(cel::Env::stdlib());
    // Each target's objects built once for all its rules, and dropped before the
    // next target's are built.
    let mut targets: Vec<Target> = rules.iter().map(|r| r.rule.target).collect();
    targets.sort_unstable();
    targets.dedup();
    let mut out = Vec::new();
    for target in targets {
        let objects = objects::of(set, target);
        for rule in rules.iter().filter(|r| r.rule.target == target) {
            for object in &objects {
                check_object(&env, rule, object, &mut out);
            }
        }
    }
    out
}

/// The violations of the forecast rules of `policies` on a plan's forecast `figures`:
/// the seam the judge-call forecast calls once it has its figures (a plan without a
/// forecast evaluates no forecast rule). Each violation is placed at its rule.
#[must_use]
pub fn evaluate_forecast(
    policies: &[Located<PolicySpec>],
    figures: &ForecastFigures,
) -> Vec<Violation> {
    let rules = compiled(policies, true);
    if rules.is_empty() {
        return Vec::new();
    }
    let env = Arc::new(cel::Env::stdlib());
    let mut out = Vec::new();
    for rule in &rules {
        let object = objects::forecast(rule.origin, rule.index, figures);
        check_object(&env, rule, &object, &mut out);
    }
    out
}

/// Evaluates `rule` on `object`, adding a violation when it is not `true`.
fn check_object(
    env: &Arc<cel::Env>,
    rule: &Compiled<'_>,
    object: &objects::Object,
    out: &mut Vec<Violation>,
) {
    let Some(program) = &rule.program else {
        return;
    };
    let mut context = cel::Context::with_env(Arc::clone(env));
    for (name, value) in &object.variables {
        context.add_variable_from_value(*name, value.clone());
    }
    let result = program.execute(&context);
    let (message, detail) = match result {
        Ok(cel::Value::Bool(true)) => return,
        Ok(cel::Value::Bool(false)) => (format!("{}: {}", object.described, rule.rule.message), {
            let expression = one_line(&rule.rule.expression);
            if expression.chars().count() <= 80 {
                format!(": `{expression}`")
            } else {
                String::new()
            }
        }),
        Ok(other) => (
            format!(
                "{}: rule `{}` gives {}, not true or false",
                object.described,
                rule.rule.name,
                objects::type_name(&other)
            ),
            ": an expression gives a bool".to_owned(),
        ),
        Err(error) => (
            format!(
                "{}: rule `{}` cannot be evaluated: {}",
                object.described,
                rule.rule.name,
                objects::error_text(&error)
            ),
            match error {
                cel::ExecutionError::NoSuchKey(_) => {
                    ": test optional fields with `has(...)` before reading them".to_owned()
                }
                _ => ": docs/policies.md says what each field holds".to_owned(),
            },
        ),
    };
    out.push(Violation {
        severity: rule.rule.severity(),
        origin: object.origin.clone(),
        field: object.field.clone(),
        message,
        rule: RuleAt {
            name: rule.rule.name.clone(),
            policy: rule.policy.to_owned(),
            origin: rule.origin.clone(),
            index: rule.index,
        },
        detail,
    });
}

/// `text` on one line, shortened.
fn one_line(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > 120 {
        let cut: String = flat.chars().take(117).collect();
        format!("{cut}...")
    } else {
        flat
    }
}

/// Diagnostics for `violations`, each at its object (`file:line:column`), with the text
/// of each file they quote (literal secrets masked), by the name diagnostics use. The
/// files are read again, each once; a file that changed so the document is gone gives a
/// diagnostic at the document's origin without a column.
#[must_use]
pub fn diagnostics(violations: &[Violation]) -> (Vec<Diagnostic>, BTreeMap<String, Masked>) {
    let mut files: BTreeMap<&std::path::Path, Option<ManifestFile>> = BTreeMap::new();
    let mut masked: BTreeMap<String, Masked> = BTreeMap::new();
    let mut out = Vec::with_capacity(violations.len());
    for violation in violations {
        let severity = match violation.severity {
            RuleSeverity::Error => Severity::Error,
            RuleSeverity::Warning => Severity::Warning,
        };
        let rule = &violation.rule;
        let rule_field = FieldPath::root().key("rules").index(rule.index);
        let rule_place = match place(&mut files, &rule.origin, &rule_field) {
            Some((name, span)) => format!("{name}:{}:{}", span.line, span.column),
            None => format!("{}, {rule_field}", rule.origin),
        };
        let help = format!(
            "rule `{}` of policy `{}` at {rule_place}{}",
            rule.name, rule.policy, violation.detail
        );
        let diagnostic = match place(&mut files, &violation.origin, &violation.field) {
            Some((name, span)) => {
                if !masked.contains_key(&name)
                    && let Some(Some(file)) = files.get(violation.origin.file.as_path())
                {
                    masked.insert(name.clone(), masked_text(file));
                }
                Diagnostic::new(severity, name, Some(span), &violation.message)
            }
            None => Diagnostic::new(
                severity,
                violation.origin.to_string(),
                None,
                &violation.message,
            ),
        };
        out.push(diagnostic.with_help(help));
    }
    (out, masked)
}

/// The file name and span of `field` of the document at `origin`, its file read once
/// into `files`; `None` when the file or the document is gone.
fn place<'p>(
    files: &mut BTreeMap<&'p std::path::Path, Option<ManifestFile>>,
    origin: &'p Origin,
    field: &FieldPath,
) -> Option<(String, Span)> {
    let file = files
        .entry(origin.file.as_path())
        .or_insert_with(|| ManifestFile::read(&origin.file, &Limits::default()).ok())
        .as_ref()?;
    let document = file
        .documents()
        .iter()
        .find(|d| d.root().value.line as usize == origin.line)?;
    let node = document.locate(&field.to_pointer());
    Some((file.name.clone(), node.key_or_value()))
}

/// What a plan of `set` notes for reviewers (its pull-request comment shows the notes):
/// each policy warning, at its `file:line:column`, and a guard loosened by the repo's
/// Settings. Errors are not here: they stop the command before it plans.
#[must_use]
pub fn plan_notes(set: &ManifestSet) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(warning) = set.settings.as_ref().and_then(settings::loosening_warning) {
        out.push(warning);
    }
    let warnings: Vec<Violation> = evaluate(set)
        .into_iter()
        .filter(|v| v.severity == RuleSeverity::Warning)
        .collect();
    let (diagnostics, _) = diagnostics(&warnings);
    out.extend(diagnostics.iter().map(note_text));
    out
}

/// A policy diagnostic as one line of a plan's notes.
#[must_use]
pub fn note_text(diagnostic: &Diagnostic) -> String {
    let place = match diagnostic.span {
        Some(span) => format!("{}:{}:{}", diagnostic.file, span.line, span.column),
        None => diagnostic.file.clone(),
    };
    let help = diagnostic
        .help
        .as_ref()
        .map(|h| format!(" ({h})"))
        .unwrap_or_default();
    format!(
        "policy {} at {place}: {}{help}",
        diagnostic.severity.label(),
        diagnostic.message
    )
}

/// The text of `file` with its literal secrets masked, as loading masks them.
pub(crate) fn masked_text(file: &ManifestFile) -> Masked {
    let index = crate::manifest::diagnostic::LineIndex::new(&file.text);
    let mut hidden = Vec::new();
    for document in file.documents() {
        let input = Input {
            file: &file.name,
            lines: &index,
            document,
        };
        hidden.extend(
            crate::manifest::check::check(&input, document.value.clone(), &|_| None).hidden,
        );
    }
    mask::mask_spans(&file.text, &hidden)
}

#[cfg(test)]
mod tests;
