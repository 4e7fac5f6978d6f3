//! Violations in words for people: [`Violation::message`] and `Display`
//! (`location: message`), as the manifest loader shows them. The service's
//! wording is [`super::pydantic`]'s business.

use std::fmt;

use serde_json::{Number, Value};

use super::violation::{Violation, ViolationKind};

impl Violation {
    /// What is wrong, in a sentence for people (no location).
    pub fn message(&self) -> String {
        use ViolationKind as K;
        match &self.kind {
            K::Missing { field } => format!("missing required field `{field}`"),
            K::WrongType { expected } => {
                format!("expected {expected}, found {}", describe(&self.input))
            }
            K::Unparsable { expected } => {
                format!("expected {expected}, found {}", short(&self.input))
            }
            K::NotInEnum { allowed, .. } => format!(
                "expected one of {}, found {}",
                join_values(allowed),
                short(&self.input)
            ),
            K::NotConst { expected } => {
                format!("expected {}, found {}", short(expected), short(&self.input))
            }
            K::StringTooShort { min } => {
                format!("must have at least {min} character{}", plural(*min))
            }
            K::StringTooLong { max } => {
                format!("must have at most {max} character{}", plural(*max))
            }
            K::PatternMismatch { pattern } => format!("must match the pattern `{pattern}`"),
            K::InvalidFormat { format, reason } => {
                format!("is not a valid {format}: {reason}")
            }
            K::LessThanMin { min, exclusive } => format!(
                "must be greater than {}{}, found {}",
                if *exclusive { "" } else { "or equal to " },
                fmt_number(min),
                short(&self.input)
            ),
            K::GreaterThanMax { max, exclusive } => format!(
                "must be less than {}{}, found {}",
                if *exclusive { "" } else { "or equal to " },
                fmt_number(max),
                short(&self.input)
            ),
            K::NotMultipleOf { multiple_of } => {
                format!("must be a multiple of {}", fmt_number(multiple_of))
            }
            K::TooFewItems { min, actual } => {
                format!(
                    "must have at least {min} item{}, found {actual}",
                    plural(*min)
                )
            }
            K::TooManyItems { max, actual } => {
                format!(
                    "must have at most {max} item{}, found {actual}",
                    plural(*max)
                )
            }
            K::DuplicateItem { first } => format!("repeats item {first} (items must be unique)"),
            K::TooFewProperties { min, actual } => {
                format!(
                    "must have at least {min} entr{}, found {actual}",
                    plural_y(*min)
                )
            }
            K::TooManyProperties { max, actual } => {
                format!(
                    "must have at most {max} entr{}, found {actual}",
                    plural_y(*max)
                )
            }
            K::UnknownField { field, allowed } => {
                let mut m = format!("unknown field `{field}`");
                if let Some(s) = super::suggest(field, allowed) {
                    m.push_str(&format!(", did you mean `{s}`?"));
                } else if !allowed.is_empty() {
                    let list: Vec<String> = allowed.iter().map(|a| format!("`{a}`")).collect();
                    m.push_str(&format!(", expected one of {}", list.join(", ")));
                }
                m
            }
            K::UnionTagMissing {
                discriminator,
                expected,
            } => format!(
                "missing `{discriminator}`, expected one of {}",
                join_strs(expected)
            ),
            K::UnionTagInvalid {
                discriminator,
                tag,
                expected,
            } => {
                let mut m = format!(
                    "unknown {discriminator} {}, expected one of {}",
                    short(tag),
                    join_strs(expected)
                );
                if let Some(s) = tag.as_str().and_then(|t| super::suggest(t, expected)) {
                    m.push_str(&format!(" (did you mean \"{s}\"?)"));
                }
                m
            }
            K::AmbiguousOneOf { matched } => {
                format!("matches more than one alternative: {}", matched.join(", "))
            }
            K::NotAllowed => "is not allowed here".to_owned(),
            K::TooDeep { limit } => format!("nests deeper than {limit} levels"),
            K::Schema(e) => format!("schema error: {e}"),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location(), self.message())
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn plural_y(n: u64) -> &'static str {
    if n == 1 { "y" } else { "ies" }
}

/// A number as pydantic prints bounds: integral floats without `.0`.
pub(crate) fn fmt_number(n: &Number) -> String {
    match n.as_f64() {
        Some(f) if n.is_f64() => format!("{f}"),
        _ => n.to_string(),
    }
}

/// The JSON type of a value, with an article, for "found ..." phrases: the one
/// vocabulary of manifest diagnostics, as [`super::Expected`] words what was expected.
pub(crate) fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A scalar as JSON, a container by its type: keeps messages one line long.
fn short(v: &Value) -> String {
    match v {
        Value::Array(_) | Value::Object(_) => describe(v).to_owned(),
        Value::String(s) if s.chars().count() > 60 => {
            let cut: String = s.chars().take(57).collect();
            format!("\"{cut}...\"")
        }
        other => other.to_string(),
    }
}

fn join_values(vs: &[Value]) -> String {
    let all: Vec<String> = vs.iter().map(short).collect();
    all.join(", ")
}

fn join_strs(vs: &[String]) -> String {
    let all: Vec<String> = vs.iter().map(|s| format!("\"{s}\"")).collect();
    all.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schemacheck::{Expected, PathSeg};
    use serde_json::json;

    fn v(path: Vec<PathSeg>, kind: ViolationKind, input: Value) -> Violation {
        Violation { path, kind, input }
    }

    #[test]
    fn human_messages() {
        let unknown = v(
            vec![PathSeg::key("scorrers")],
            ViolationKind::UnknownField {
                field: "scorrers".into(),
                allowed: vec!["scorers".into(), "segment_filters".into()],
            },
            json!([]),
        );
        assert_eq!(
            unknown.to_string(),
            "scorrers: unknown field `scorrers`, did you mean `scorers`?"
        );
        let wrong = v(
            vec![PathSeg::key("n")],
            ViolationKind::WrongType {
                expected: Expected::Either(vec![Expected::String, Expected::Null]),
            },
            json!(5),
        );
        assert_eq!(
            wrong.message(),
            "expected a string or null, found an integer"
        );
        let max = v(
            vec![],
            ViolationKind::GreaterThanMax {
                max: Number::from_f64(1.0).unwrap_or_else(|| Number::from(1)),
                exclusive: false,
            },
            json!(1.5),
        );
        assert_eq!(max.message(), "must be less than or equal to 1, found 1.5");
        let tag = v(
            vec![],
            ViolationKind::UnionTagInvalid {
                discriminator: "kind".into(),
                tag: json!("node_nam"),
                expected: vec!["node_name".into(), "metadata".into()],
            },
            json!({}),
        );
        assert_eq!(
            tag.message(),
            "unknown kind \"node_nam\", expected one of \"node_name\", \"metadata\" (did you mean \"node_name\"?)"
        );
    }
}
