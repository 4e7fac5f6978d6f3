//! Schema violations ([`crate::schemacheck::Violation`]) as diagnostics about a document.
//!
//! Each violation points where a reader looks: an unknown field at its key (with "did you
//! mean"), a missing field at the mapping that lacks it, a bad tag at the tag, anything
//! else at the value. A union whose every branch fails at the same place (a value that
//! may be a string or a list, an enumeration written as one constant per variant) is
//! reported once, listing what each branch would have accepted.

use serde_json::Value;

use super::check::Input;
use super::diagnostic::Diagnostic;
use super::semantic::Anchor;
use super::types::{API_VERSION, COLOR_PATTERN, EnvRef};
use crate::schemacheck::{PathSeg, Violation, ViolationKind, describe, suggest};

/// The diagnostics of `violations` of the (interpolated) document `value`.
pub fn diagnostics(input: &Input<'_>, value: &Value, violations: &[&Violation]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    // Union branches failing at one place, by pointer, in order.
    let mut unions: Vec<(String, Vec<&Violation>)> = Vec::new();
    // `(mapping, field)` of each missing required field that an unknown field
    // of the same mapping is a misspelling of: said once, at the misspelling.
    let misspelt: Vec<(String, String)> = violations
        .iter()
        .filter_map(|v| match &v.kind {
            ViolationKind::UnknownField { field, allowed } => {
                let meant = suggest(field, allowed)?;
                let missing = violations.iter().any(|m| {
                    matches!(&m.kind, ViolationKind::Missing { field } if *field == meant)
                        && parent(&m.pointer()) == parent(&v.pointer())
                });
                missing.then(|| (parent(&v.pointer()).to_owned(), meant))
            }
            _ => None,
        })
        .collect();
    for v in violations {
        let pointer = v.pointer();
        if let ViolationKind::Missing { field } = &v.kind
            && misspelt
                .iter()
                .any(|(at, meant)| at == parent(&pointer) && meant == field)
        {
            continue;
        }
        if let ViolationKind::NotConst { expected } = &v.kind
            && pointer == "/api_version"
            && expected.as_str() == Some(API_VERSION)
        {
            out.push(unsupported_api_version(input, &v.input));
            continue;
        }
        let tagged = v.path.iter().any(|s| matches!(s, PathSeg::Tag(_)));
        let mergeable = matches!(
            v.kind,
            ViolationKind::WrongType { .. }
                | ViolationKind::NotConst { .. }
                | ViolationKind::NotInEnum { .. }
        );
        if tagged && mergeable {
            match unions.iter_mut().find(|(p, _)| *p == pointer) {
                Some((_, group)) => group.push(v),
                None => unions.push((pointer, vec![v])),
            }
        } else {
            out.push(one(input, v, &misspelt));
        }
    }
    for (pointer, group) in unions {
        match group.as_slice() {
            [only] => out.push(one(input, only, &misspelt)),
            _ => out.push(merged(input, value, &pointer, &group)),
        }
    }
    out
}

/// The error for a manifest format version (`api_version`, outside Azure integrations)
/// other than [`API_VERSION`]: `found`.
pub fn unsupported_api_version(input: &Input<'_>, found: &Value) -> Diagnostic {
    let shown = match found {
        Value::String(s) => format!("`{s}`"),
        other => describe(other).to_owned(),
    };
    input
        .error(
            input.at("/api_version", Anchor::Value),
            format!("unsupported api_version {shown}"),
        )
        .with_help(format!(
            "this evalctl reads `api_version: {API_VERSION}` (or leave it out)"
        ))
}

/// The pointer of the mapping that holds the value at `pointer`.
fn parent(pointer: &str) -> &str {
    pointer.rfind('/').map_or("", |i| &pointer[..i])
}

/// `place: message`, or the message alone at the document's root.
fn placed(place: &str, message: &str) -> String {
    if place == "(root)" {
        message.to_owned()
    } else {
        format!("{place}: {message}")
    }
}

/// One diagnostic for the failing branches of a union at `pointer`.
fn merged(input: &Input<'_>, value: &Value, pointer: &str, group: &[&Violation]) -> Diagnostic {
    let mut shapes: Vec<String> = Vec::new();
    let mut constants: Vec<String> = Vec::new();
    for v in group {
        match &v.kind {
            ViolationKind::WrongType { expected } => shapes.push(expected.to_string()),
            ViolationKind::NotConst { expected } => {
                constants.extend(expected.as_str().map(str::to_owned))
            }
            ViolationKind::NotInEnum { allowed, .. } => {
                constants.extend(allowed.iter().filter_map(|a| a.as_str().map(str::to_owned)));
            }
            _ => {}
        }
    }
    shapes.dedup();
    constants.dedup();
    let found = value.pointer(pointer);
    let mut parts: Vec<String> = constants.iter().map(|c| format!("\"{c}\"")).collect();
    parts.extend(shapes);
    let expected = match parts.as_slice() {
        [] => "something else".to_owned(),
        [one] => one.clone(),
        [init @ .., last] if constants.len() == parts.len() => {
            format!("one of {}, {last}", init.join(", "))
        }
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    };
    let found_text = match found {
        Some(Value::String(s)) if !constants.is_empty() => Value::String(s.clone()).to_string(),
        Some(other) => describe(other).to_owned(),
        None => "nothing".to_owned(),
    };
    let place = group.first().map(|v| v.location()).unwrap_or_default();
    let diagnostic = input.error(
        input.at(pointer, Anchor::Value),
        placed(&place, &format!("expected {expected}, found {found_text}")),
    );
    match found
        .and_then(Value::as_str)
        .and_then(|f| suggest(f, &constants))
    {
        Some(s) => diagnostic.with_help(format!("did you mean `{s}`?")),
        None => diagnostic,
    }
}

/// The diagnostic of one violation; `misspelt` lists the `(mapping, field)`
/// of required fields that an unknown field misspells (their own
/// "missing" is left out, and said here).
fn one(input: &Input<'_>, v: &Violation, misspelt: &[(String, String)]) -> Diagnostic {
    let pointer = v.pointer();
    let place = v.location();
    let at_value = || input.at(&pointer, Anchor::Value);
    let plain = || input.error(at_value(), placed(&place, &v.message()));
    match &v.kind {
        ViolationKind::UnknownField { field, allowed } => {
            let required = |s: &str| {
                misspelt
                    .iter()
                    .any(|(at, meant)| at == parent(&pointer) && meant == s)
            };
            let help = match suggest(field, allowed) {
                Some(s) if required(&s) => {
                    format!("did you mean `{s}`? It is required, and missing here")
                }
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
            let parent = parent(&pointer);
            let what = if parent.is_empty() {
                "the document".to_owned()
            } else {
                let parent_path = v.path.split_last().map_or(&[][..], |(_, init)| init);
                format!("`{}`", Violation::location_of(parent_path))
            };
            input.error(
                input.at(parent, Anchor::Key),
                format!("{what} is missing the required field `{field}`"),
            )
        }
        ViolationKind::NotInEnum { allowed, .. } => {
            let names: Vec<String> = allowed
                .iter()
                .filter_map(|a| a.as_str().map(str::to_owned))
                .collect();
            match v.input.as_str().and_then(|f| suggest(f, &names)) {
                Some(s) => plain().with_help(format!("did you mean `{s}`?")),
                None => plain(),
            }
        }
        ViolationKind::UnionTagInvalid { discriminator, .. }
        | ViolationKind::UnionTagMissing { discriminator, .. } => {
            let span = match input.document.span(&format!("{pointer}/{discriminator}")) {
                Some(node) => node.value,
                None => input.at(&pointer, Anchor::Key),
            };
            input.error(span, placed(&place, &v.message()))
        }
        ViolationKind::PatternMismatch { pattern } if pattern == EnvRef::PATTERN => input
            .error(
                at_value(),
                placed(&place, "a secret must be an environment reference"),
            )
            .with_help(
                "write a reference such as `${OPENAI_API_KEY}` and set the variable in the environment",
            ),
        ViolationKind::PatternMismatch { pattern } if pattern == COLOR_PATTERN => {
            plain().with_help("write a colour as `#RRGGBB`, e.g. `#1F77B4`")
        }
        ViolationKind::InvalidFormat { format, .. } if format == "uri" => {
            plain().with_help("write an absolute URL, e.g. `https://integrate.api.example.com/v1`")
        }
        ViolationKind::InvalidFormat { format, .. } if format.starts_with("uuid") => plain()
            .with_help(
                "an id is a UUID, e.g. `0f8fad5b-d9cb-469f-a165-70867728950e`; to name the object instead, write `name`",
            ),
        ViolationKind::WrongType { .. } if v.input.is_null() => plain().with_help(
            "give a value, or remove the key to leave the field unmanaged (write `[]` for an empty list)",
        ),
        ViolationKind::WrongType { expected }
            if v.input.is_string()
                && matches!(
                    expected,
                    crate::schemacheck::Expected::Number
                        | crate::schemacheck::Expected::Integer
                        | crate::schemacheck::Expected::Boolean
                ) =>
        {
            plain().with_help("write the value without quotes")
        }
        _ => plain(),
    }
}
