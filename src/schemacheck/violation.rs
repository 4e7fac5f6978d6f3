//! What a failed check reports: the [`Violation`] (where, what, which input),
//! its [`ViolationKind`], the [`PathSeg`]s of its location, and the
//! [`SchemaError`]s that mean the schema itself is broken.
//!
//! Violations carry data, not prose. Two renderers turn them into text:
//! [`super::human`] ([`Violation::message`], `Display`) for manifest
//! diagnostics, and [`super::pydantic`] for the service's 422 bodies.

use std::fmt;

use serde::Serialize;
use serde_json::{Number, Value};

/// One step of the path from the validated root value to a fault.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PathSeg {
    /// A property of an object.
    Key(String),
    /// An element of an array.
    Index(usize),
    /// The union member the fault was found in: the tag of a discriminated
    /// union, or the label of a plain union's branch (`str`, `list[str]`,
    /// a model name). It names no location in the instance; pydantic puts it
    /// in `loc`, the manifest renderer skips it.
    Tag(String),
}

impl PathSeg {
    /// A [`PathSeg::Key`] from anything string-like, e.g. `PathSeg::key("body")`.
    pub fn key(key: impl Into<String>) -> Self {
        Self::Key(key.into())
    }
}

/// The JSON shape a value should have had.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Expected {
    /// `null`.
    Null,
    /// `true` or `false`.
    Boolean,
    /// A number without a fractional part.
    Integer,
    /// Any number.
    Number,
    /// A string.
    String,
    /// A string holding a UUID (`format: uuid`, `uuid4`, ...).
    Uuid,
    /// A string holding an RFC 3339 date-time (`format: date-time`).
    DateTime,
    /// A string holding a full date (`format: date`).
    Date,
    /// A string holding an absolute URL (`format: uri`).
    Url,
    /// An array.
    Array,
    /// A free-form object: a map whose keys are not declared.
    Object,
    /// An object with declared fields (a model, a struct).
    Model,
    /// Any of several shapes (`type: [..]`), in schema order.
    Either(Vec<Expected>),
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Null => f.write_str("null"),
            Self::Boolean => f.write_str("a boolean"),
            Self::Integer => f.write_str("an integer"),
            Self::Number => f.write_str("a number"),
            Self::String => f.write_str("a string"),
            Self::Uuid => f.write_str("a UUID string"),
            Self::DateTime => f.write_str("an RFC 3339 date-time string"),
            Self::Date => f.write_str("a date string (YYYY-MM-DD)"),
            Self::Url => f.write_str("a URL string"),
            Self::Array => f.write_str("an array"),
            Self::Object => f.write_str("a map"),
            Self::Model => f.write_str("an object"),
            Self::Either(all) => {
                for (i, e) in all.iter().enumerate() {
                    match i {
                        0 => {}
                        i if i + 1 == all.len() => f.write_str(" or ")?,
                        _ => f.write_str(", ")?,
                    }
                    write!(f, "{e}")?;
                }
                Ok(())
            }
        }
    }
}

/// The schema itself is broken or uses something this interpreter does not
/// support. Reported as [`ViolationKind::Schema`] during validation (so a
/// broken schema never silently accepts), and listed up front by
/// [`super::Schemas::problems`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(rename_all = "snake_case")]
pub enum SchemaError {
    /// A `$ref` (or the pointer given to `validate`) names no schema.
    #[error("no schema at `{reference}`")]
    UnresolvedRef {
        /// The reference as written.
        reference: String,
    },
    /// A `$ref` that is not a local `#...` JSON pointer (remote documents,
    /// `$id`/`$anchor` lookups).
    #[error("unsupported reference `{reference}`: only local `#/...` pointers are supported")]
    UnsupportedRef {
        /// The reference as written.
        reference: String,
    },
    /// A `pattern` (or `patternProperties` key) the regex crate cannot compile.
    #[error("invalid pattern `{pattern}`: {reason}")]
    InvalidPattern {
        /// The pattern as written.
        pattern: String,
        /// The compiler's complaint.
        reason: String,
    },
    /// `$ref`s or applicators that loop without descending into the value.
    #[error(
        "schema recursion without progress (more than {limit} nested references or applicators at one location)"
    )]
    RefCycle {
        /// The hop limit that was exceeded.
        limit: usize,
    },
    /// A position that must hold a schema holds something else.
    #[error("not a schema: expected an object or a boolean, found {found}")]
    NotASchema {
        /// What was found, e.g. `a string`.
        found: String,
    },
}

/// What is wrong at a [`Violation`]'s path.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ViolationKind {
    /// A required property is absent. The violation's path ends with the
    /// missing key (pydantic's convention) and its input is the enclosing object.
    Missing {
        /// The missing property.
        field: String,
    },
    /// The value has the wrong JSON type.
    WrongType {
        /// What the schema wanted.
        expected: Expected,
    },
    /// A string request parameter could not be read as the wanted type
    /// (only from [`super::Schemas::check_param`]).
    Unparsable {
        /// What the parameter should have held.
        expected: Expected,
    },
    /// The value is not one of the schema's `enum` values.
    NotInEnum {
        /// The allowed values, in schema order.
        allowed: Vec<Value>,
        /// The name of the schema the enum came from when it was reached
        /// through a `$ref` (a named enumeration type rather than an inline
        /// literal; pydantic reports the two differently).
        enum_name: Option<String>,
    },
    /// The value differs from the schema's `const`.
    NotConst {
        /// The only allowed value.
        expected: Value,
    },
    /// The string has fewer Unicode scalar values than `minLength`.
    StringTooShort {
        /// The minimum length.
        min: u64,
    },
    /// The string has more Unicode scalar values than `maxLength`.
    StringTooLong {
        /// The maximum length.
        max: u64,
    },
    /// The string does not match `pattern` (searched, not anchored, as JSON
    /// Schema specifies).
    PatternMismatch {
        /// The pattern as written in the schema.
        pattern: String,
    },
    /// The string is not in the declared `format` (`uuid`, `uuid4`,
    /// `date-time`, `date`, `uri`; other formats are not checked).
    InvalidFormat {
        /// The format as written in the schema.
        format: String,
        /// Why the string does not parse.
        reason: String,
    },
    /// The number is below `minimum` (or not above `exclusiveMinimum`).
    LessThanMin {
        /// The bound, as written in the schema (integer or float).
        min: Number,
        /// Whether the bound itself is excluded.
        exclusive: bool,
    },
    /// The number is above `maximum` (or not below `exclusiveMaximum`).
    GreaterThanMax {
        /// The bound, as written in the schema (integer or float).
        max: Number,
        /// Whether the bound itself is excluded.
        exclusive: bool,
    },
    /// The number is not a multiple of `multipleOf`.
    NotMultipleOf {
        /// The divisor.
        multiple_of: Number,
    },
    /// The array has fewer than `minItems` elements.
    TooFewItems {
        /// The minimum.
        min: u64,
        /// The array's length.
        actual: usize,
    },
    /// The array has more than `maxItems` elements (or more than its
    /// `prefixItems` when no further items are allowed).
    TooManyItems {
        /// The maximum.
        max: u64,
        /// The array's length.
        actual: usize,
    },
    /// `uniqueItems` is set and this element repeats an earlier one.
    DuplicateItem {
        /// The index of the earlier, equal element.
        first: usize,
    },
    /// The object has fewer than `minProperties` properties.
    TooFewProperties {
        /// The minimum.
        min: u64,
        /// The object's size.
        actual: usize,
    },
    /// The object has more than `maxProperties` properties.
    TooManyProperties {
        /// The maximum.
        max: u64,
        /// The object's size.
        actual: usize,
    },
    /// A property the schema does not declare, where the schema closes the
    /// object (`additionalProperties: false` or `unevaluatedProperties: false`).
    /// The path ends with the unknown key; the input is its value.
    UnknownField {
        /// The unknown property.
        field: String,
        /// The declared properties, in schema order (for "did you mean",
        /// see [`super::suggest`]).
        allowed: Vec<String>,
    },
    /// A discriminated union's tag property is absent (or the value is not an
    /// object that could hold it).
    UnionTagMissing {
        /// The tag property.
        discriminator: String,
        /// The known tags, in union order.
        expected: Vec<String>,
    },
    /// A discriminated union's tag names no member.
    UnionTagInvalid {
        /// The tag property.
        discriminator: String,
        /// The tag found.
        tag: Value,
        /// The known tags, in union order.
        expected: Vec<String>,
    },
    /// The value matches more than one branch of a `oneOf` (JSON Schema
    /// dialect only; pydantic treats `oneOf` like `anyOf`).
    AmbiguousOneOf {
        /// Labels of the matching branches.
        matched: Vec<String>,
    },
    /// The schema allows nothing here (a `false` schema), or the value
    /// matches a `not` schema.
    NotAllowed,
    /// The value nests deeper than the validator follows; validation stopped
    /// here. The input is `null` (the subtree is not copied).
    TooDeep {
        /// The nesting limit.
        limit: usize,
    },
    /// The schema is broken at this point; see [`SchemaError`].
    Schema(SchemaError),
}

/// One fault: where it is, what it is, and the offending input.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    /// From the validated root to the fault (pydantic's `loc` without the
    /// request-part prefix such as `body`).
    pub path: Vec<PathSeg>,
    /// What is wrong.
    pub kind: ViolationKind,
    /// The offending value (for [`ViolationKind::Missing`], the enclosing
    /// object). Values nested deeper than [`super::MAX_DEPTH`] are cut off
    /// and replaced by `null`.
    pub input: Value,
}

impl Violation {
    /// Whether this reports a broken schema rather than bad input (a server
    /// bug: answer 500, not 422).
    pub fn is_schema_error(&self) -> bool {
        matches!(self.kind, ViolationKind::Schema(_))
    }

    /// The path without [`PathSeg::Tag`]s: the location in the instance.
    pub fn instance_path(&self) -> impl Iterator<Item = &PathSeg> {
        self.path.iter().filter(|s| !matches!(s, PathSeg::Tag(_)))
    }

    /// The location as an RFC 6901 JSON pointer (`/segment_filters/0/sample_rate`;
    /// `""` for the root), tags skipped. For [`ViolationKind::Missing`] it
    /// points at the absent key; its parent is the object lacking it.
    pub fn pointer(&self) -> String {
        let mut out = String::new();
        for seg in self.instance_path() {
            out.push('/');
            match seg {
                PathSeg::Key(k) => out.push_str(&k.replace('~', "~0").replace('/', "~1")),
                PathSeg::Index(i) => out.push_str(&i.to_string()),
                PathSeg::Tag(_) => {}
            }
        }
        out
    }

    /// The location for people: `segment_filters[0].filter.operator`, tags
    /// skipped, keys that are not identifiers quoted (`headers["X-Key"]`);
    /// `(root)` for the root.
    pub fn location(&self) -> String {
        Self::location_of(&self.path)
    }

    /// [`Violation::location`] of any `path`, e.g. a violation's parent's.
    pub fn location_of(path: &[PathSeg]) -> String {
        let mut out = String::new();
        for seg in path {
            match seg {
                PathSeg::Key(k) if is_identifier(k) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                PathSeg::Key(k) => {
                    out.push('[');
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push(']');
                }
                PathSeg::Index(i) => {
                    out.push('[');
                    out.push_str(&i.to_string());
                    out.push(']');
                }
                PathSeg::Tag(_) => {}
            }
        }
        if out.is_empty() {
            out.push_str("(root)");
        }
        out
    }
}

fn is_identifier(k: &str) -> bool {
    let mut chars = k.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(path: Vec<PathSeg>, kind: ViolationKind, input: Value) -> Violation {
        Violation { path, kind, input }
    }

    #[test]
    fn pointer_and_location_skip_tags_and_escape() {
        let viol = v(
            vec![
                PathSeg::key("segment_filters"),
                PathSeg::Index(0),
                PathSeg::key("filter"),
                PathSeg::Tag("node_name".into()),
                PathSeg::key("a/b~c"),
            ],
            ViolationKind::NotAllowed,
            Value::Null,
        );
        assert_eq!(viol.pointer(), "/segment_filters/0/filter/a~1b~0c");
        assert_eq!(viol.location(), "segment_filters[0].filter[\"a/b~c\"]");
        let root = v(vec![], ViolationKind::NotAllowed, Value::Null);
        assert_eq!(root.pointer(), "");
        assert_eq!(root.location(), "(root)");
    }
}
