//! Renders [`Violation`]s as the service (FastAPI + pydantic v2) renders
//! validation failures: `{"detail": [{"type", "loc", "msg", "input", "ctx"}]}`
//! with pydantic's error types and messages, plus the few details FastAPI
//! writes itself (undecodable JSON, missing body).
//!
//! ```
//! use evalctl::schemacheck::{PathSeg, Schemas, pydantic};
//! use serde_json::json;
//!
//! let schemas = Schemas::new(json!({
//!     "type": "object",
//!     "properties": {"sample_rate": {"type": "number", "maximum": 1.0}},
//! }));
//! let violations = schemas.validate("#", &json!({"sample_rate": 1.5}));
//! let body = pydantic::http_validation_error(&violations, &[PathSeg::key("body")]);
//! assert_eq!(body["detail"][0]["type"], "less_than_equal");
//! assert_eq!(body["detail"][0]["msg"], "Input should be less than or equal to 1");
//! assert_eq!(body["detail"][0]["loc"], json!(["body", "sample_rate"]));
//! ```

use serde_json::{Map, Number, Value, json};

use super::human::fmt_number;
use super::pyjson::BodyError;
use super::violation::{Expected, PathSeg, Violation, ViolationKind};

/// pydantic's `loc`: the prefix (e.g. `body`, `path`, `query`), then the
/// violation's path; keys and tags as strings, indices as integers.
pub fn loc(violation: &Violation, loc_prefix: &[PathSeg]) -> Vec<Value> {
    loc_prefix
        .iter()
        .chain(&violation.path)
        .map(|seg| match seg {
            PathSeg::Key(k) | PathSeg::Tag(k) => Value::String(k.clone()),
            PathSeg::Index(i) => Value::from(*i),
        })
        .collect()
}

/// One item of `detail`: `{"type", "loc", "msg", "input"}` and `ctx` when
/// the error type has context.
pub fn to_error_detail(violation: &Violation, loc_prefix: &[PathSeg]) -> Value {
    let (ty, msg, ctx) = describe(violation);
    let mut item = Map::new();
    item.insert("type".into(), Value::from(ty));
    item.insert("loc".into(), Value::Array(loc(violation, loc_prefix)));
    item.insert("msg".into(), Value::String(msg));
    item.insert("input".into(), violation.input.clone());
    if let Some(ctx) = ctx {
        item.insert("ctx".into(), Value::Object(ctx));
    }
    Value::Object(item)
}

/// The whole 422 body, `{"detail": [...]}`, every violation in order.
pub fn http_validation_error(violations: &[Violation], loc_prefix: &[PathSeg]) -> Value {
    let detail = violations
        .iter()
        .map(|v| to_error_detail(v, loc_prefix))
        .collect();
    detail_body(detail)
}

/// `{"detail": items}`, for combining details of several request parts
/// (path, query and body violations in one response, as FastAPI does).
pub fn detail_body(items: Vec<Value>) -> Value {
    json!({ "detail": items })
}

/// FastAPI's detail for a required body that was not sent.
pub fn missing_body() -> Value {
    json!({"type": "missing", "loc": ["body"], "msg": "Field required", "input": null})
}

/// FastAPI's detail for a body that is not valid JSON: `loc` is
/// `["body", <character offset>]`, `ctx.error` Python's message.
pub fn json_invalid(position: usize, error: &str) -> Value {
    json!({
        "type": "json_invalid",
        "loc": ["body", position],
        "msg": "JSON decode error",
        "input": {},
        "ctx": {"error": error},
    })
}

/// The status and body FastAPI answers for a body that does not decode:
/// 422 with [`json_invalid`] for JSON syntax errors; 400 with
/// `{"detail": "There was an error parsing the body"}` for bytes that are not
/// UTF-8. Values Python reads but JSON cannot hold here (`NaN`, `1e999`,
/// lone surrogates, nesting past serde_json's limit) get a 422
/// `json_invalid` as well, which is where this sandbox departs from the
/// service (it would pass them on to validation).
pub fn body_error_response(error: &BodyError) -> (u16, Value) {
    match error {
        BodyError::Syntax { msg, pos, .. } => (422, detail_body(vec![json_invalid(*pos, msg)])),
        BodyError::NotUtf8 { .. } => (
            400,
            json!({"detail": "There was an error parsing the body"}),
        ),
        BodyError::Unrepresentable { pos, reason } => {
            (422, detail_body(vec![json_invalid(*pos, reason)]))
        }
    }
}

type Ctx = Option<Map<String, Value>>;

fn ctx<const N: usize>(pairs: [(&str, Value); N]) -> Ctx {
    Some(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// The error type, message and context pydantic v2 reports for a violation.
fn describe(v: &Violation) -> (&'static str, String, Ctx) {
    use ViolationKind as K;
    let plain = |ty: &'static str, msg: &str| (ty, msg.to_owned(), None);
    match &v.kind {
        K::Missing { .. } => plain("missing", "Field required"),
        K::WrongType { expected } => wrong_type(expected, &v.input),
        K::Unparsable { expected } => match expected {
            Expected::Integer => plain(
                "int_parsing",
                "Input should be a valid integer, unable to parse string as an integer",
            ),
            Expected::Number => plain(
                "float_parsing",
                "Input should be a valid number, unable to parse string as a number",
            ),
            Expected::Boolean => plain(
                "bool_parsing",
                "Input should be a valid boolean, unable to interpret input",
            ),
            other => wrong_type(other, &v.input),
        },
        K::NotInEnum { allowed, enum_name } => {
            let expected = expected_repr(allowed);
            let ty = if enum_name.is_some() {
                "enum"
            } else {
                "literal_error"
            };
            (
                ty,
                format!("Input should be {expected}"),
                ctx([("expected", Value::String(expected))]),
            )
        }
        K::NotConst { expected } => {
            let expected = py_repr(expected);
            (
                "literal_error",
                format!("Input should be {expected}"),
                ctx([("expected", Value::String(expected))]),
            )
        }
        K::StringTooShort { min } => (
            "string_too_short",
            format!(
                "String should have at least {min} character{}",
                plural(*min)
            ),
            ctx([("min_length", Value::from(*min))]),
        ),
        K::StringTooLong { max } => (
            "string_too_long",
            format!("String should have at most {max} character{}", plural(*max)),
            ctx([("max_length", Value::from(*max))]),
        ),
        K::PatternMismatch { pattern } => (
            "string_pattern_mismatch",
            format!("String should match pattern '{pattern}'"),
            ctx([("pattern", Value::String(pattern.clone()))]),
        ),
        K::InvalidFormat { format, reason } => {
            let (ty, lead) = match format.as_str() {
                "date-time" => (
                    "datetime_from_date_parsing",
                    "Input should be a valid datetime or date",
                ),
                "date" => (
                    "date_from_datetime_parsing",
                    "Input should be a valid date or datetime",
                ),
                "uri" => ("url_parsing", "Input should be a valid URL"),
                _ => ("uuid_parsing", "Input should be a valid UUID"),
            };
            (
                ty,
                format!("{lead}, {reason}"),
                ctx([("error", Value::String(reason.clone()))]),
            )
        }
        K::LessThanMin { min, exclusive } => bound(*exclusive, "greater_than", "gt", min),
        K::GreaterThanMax { max, exclusive } => bound(*exclusive, "less_than", "lt", max),
        K::NotMultipleOf { multiple_of } => (
            "multiple_of",
            format!("Input should be a multiple of {}", fmt_number(multiple_of)),
            ctx([("multiple_of", Value::Number(multiple_of.clone()))]),
        ),
        K::TooFewItems { min, actual } => {
            length("too_short", "List", "least", "min_length", *min, *actual)
        }
        K::TooManyItems { max, actual } => {
            length("too_long", "List", "most", "max_length", *max, *actual)
        }
        K::TooFewProperties { min, actual } => length(
            "too_short",
            "Dictionary",
            "least",
            "min_length",
            *min,
            *actual,
        ),
        K::TooManyProperties { max, actual } => length(
            "too_long",
            "Dictionary",
            "most",
            "max_length",
            *max,
            *actual,
        ),
        K::UnknownField { .. } => plain("extra_forbidden", "Extra inputs are not permitted"),
        K::UnionTagMissing { discriminator, .. } => {
            let d = format!("'{discriminator}'");
            (
                "union_tag_not_found",
                format!("Unable to extract tag using discriminator {d}"),
                ctx([("discriminator", Value::String(d))]),
            )
        }
        K::UnionTagInvalid {
            discriminator,
            tag,
            expected,
        } => {
            let d = format!("'{discriminator}'");
            let tag = py_str(tag);
            let tags: Vec<String> = expected
                .iter()
                .map(|t| py_repr(&Value::String(t.clone())))
                .collect();
            let tags = tags.join(", ");
            (
                "union_tag_invalid",
                format!(
                    "Input tag '{tag}' found using {d} does not match any of the expected tags: {tags}"
                ),
                ctx([
                    ("discriminator", Value::String(d)),
                    ("tag", Value::String(tag)),
                    ("expected_tags", Value::String(tags)),
                ]),
            )
        }
        // No pydantic counterpart: a value error carrying the human message.
        K::DuplicateItem { .. }
        | K::AmbiguousOneOf { .. }
        | K::NotAllowed
        | K::TooDeep { .. }
        | K::Schema(_) => {
            let error = v.message();
            (
                "value_error",
                format!("Value error, {error}"),
                ctx([("error", Value::String(error))]),
            )
        }
    }
}

fn wrong_type(expected: &Expected, input: &Value) -> (&'static str, String, Ctx) {
    let (ty, msg) = match expected {
        Expected::Integer => match input {
            Value::Number(n) if n.is_f64() => (
                "int_from_float",
                "Input should be a valid integer, got a number with a fractional part",
            ),
            _ => ("int_type", "Input should be a valid integer"),
        },
        Expected::Number => ("float_type", "Input should be a valid number"),
        Expected::Boolean => ("bool_type", "Input should be a valid boolean"),
        Expected::String => ("string_type", "Input should be a valid string"),
        Expected::Uuid => (
            "uuid_type",
            "UUID input should be a string, bytes or UUID object",
        ),
        Expected::DateTime => ("datetime_type", "Input should be a valid datetime"),
        Expected::Date => ("date_type", "Input should be a valid date"),
        Expected::Url => ("url_type", "URL input should be a string or URL"),
        Expected::Array => ("list_type", "Input should be a valid list"),
        Expected::Object => ("dict_type", "Input should be a valid dictionary"),
        Expected::Model => (
            "model_attributes_type",
            "Input should be a valid dictionary or object to extract fields from",
        ),
        Expected::Null => ("none_required", "Input should be None"),
        Expected::Either(all) => {
            let first = all.iter().find(|e| **e != Expected::Null).or(all.first());
            return match first {
                Some(e) => wrong_type(e, input),
                None => ("none_required", "Input should be None".to_owned(), None),
            };
        }
    };
    (ty, msg.to_owned(), None)
}

fn bound(
    exclusive: bool,
    strict_ty: &'static str,
    strict_key: &str,
    n: &Number,
) -> (&'static str, String, Ctx) {
    let (ty, key, words) = match (exclusive, strict_ty) {
        (true, _) => (
            strict_ty,
            strict_key,
            if strict_key == "gt" {
                "greater than"
            } else {
                "less than"
            },
        ),
        (false, "greater_than") => ("greater_than_equal", "ge", "greater than or equal to"),
        (false, _) => ("less_than_equal", "le", "less than or equal to"),
    };
    (
        ty,
        format!("Input should be {words} {}", fmt_number(n)),
        ctx([(key, Value::Number(n.clone()))]),
    )
}

fn length(
    ty: &'static str,
    field_type: &str,
    least_most: &str,
    key: &str,
    limit: u64,
    actual: usize,
) -> (&'static str, String, Ctx) {
    (
        ty,
        format!(
            "{field_type} should have at {least_most} {limit} item{} after validation, not {actual}",
            plural(limit)
        ),
        ctx([
            ("field_type", Value::from(field_type)),
            (key, Value::from(limit)),
            ("actual_length", Value::from(actual)),
        ]),
    )
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// pydantic's `expected` for enums and literals: `'a', 'b' or 'c'`.
fn expected_repr(values: &[Value]) -> String {
    let mut reprs: Vec<String> = values.iter().map(py_repr).collect();
    match reprs.pop() {
        None => String::new(),
        Some(last) if reprs.is_empty() => last,
        Some(last) => format!("{} or {last}", reprs.join(", ")),
    }
}

/// Python's `repr()` of a JSON value: `'text'`, `1`, `1.5`, `True`, `None`,
/// `[..]`, `{..}`.
pub(crate) fn py_repr(v: &Value) -> String {
    let mut out = String::new();
    write_repr(v, &mut out, 32);
    out
}

/// Python's `str()` of a JSON value: strings bare, everything else as `repr()`.
pub(crate) fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => py_repr(other),
    }
}

fn write_repr(v: &Value, out: &mut String, budget: usize) {
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.is_finite() && f.fract() == 0.0 && f.abs() < 1e16 => {
                out.push_str(&format!("{f:.1}"));
            }
            _ => out.push_str(&n.to_string()),
        },
        Value::String(s) => out.push_str(&py_str_repr(s)),
        Value::Array(_) | Value::Object(_) if budget == 0 => out.push_str("..."),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(item, out, budget - 1);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&py_str_repr(k));
                out.push_str(": ");
                write_repr(item, out, budget - 1);
            }
            out.push('}');
        }
    }
}

/// Python's `repr()` of a `str`: single quotes unless the text has a single
/// quote and no double quote; backslash escapes for quotes, `\\`, `\n`,
/// `\r`, `\t` and other control characters.
fn py_str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detail(kind: ViolationKind, input: Value) -> Value {
        let v = Violation {
            path: vec![PathSeg::key("f")],
            kind,
            input,
        };
        to_error_detail(&v, &[PathSeg::key("body")])
    }

    #[test]
    fn python_reprs() {
        assert_eq!(py_repr(&json!("a")), "'a'");
        assert_eq!(py_repr(&json!("it's")), "\"it's\"");
        assert_eq!(py_repr(&json!("a'\"b")), "'a\\'\"b'");
        assert_eq!(py_repr(&json!(1.0)), "1.0");
        assert_eq!(py_repr(&json!(2)), "2");
        assert_eq!(
            py_repr(&json!([true, null, {"k": "v"}])),
            "[True, None, {'k': 'v'}]"
        );
        assert_eq!(py_str(&json!(false)), "False");
        assert_eq!(
            expected_repr(&[json!("a"), json!("b"), json!("c")]),
            "'a', 'b' or 'c'"
        );
        assert_eq!(expected_repr(&[json!("node_name")]), "'node_name'");
    }

    #[test]
    fn numeric_bounds_keep_the_schema_number_in_ctx() {
        let d = detail(
            ViolationKind::GreaterThanMax {
                max: Number::from_f64(1.0).unwrap_or_else(|| Number::from(1)),
                exclusive: false,
            },
            json!(1.5),
        );
        assert_eq!(d["type"], "less_than_equal");
        assert_eq!(d["msg"], "Input should be less than or equal to 1");
        assert_eq!(d["ctx"], json!({"le": 1.0}));
        let d = detail(
            ViolationKind::LessThanMin {
                min: Number::from(0),
                exclusive: true,
            },
            json!(0),
        );
        assert_eq!(d["type"], "greater_than");
        assert_eq!(d["msg"], "Input should be greater than 0");
        assert_eq!(d["ctx"], json!({"gt": 0}));
    }

    #[test]
    fn lengths_types_and_literals() {
        let d = detail(ViolationKind::StringTooShort { min: 1 }, json!(""));
        assert_eq!(d["msg"], "String should have at least 1 character");
        let d = detail(ViolationKind::StringTooLong { max: 255 }, json!("x"));
        assert_eq!(d["msg"], "String should have at most 255 characters");
        assert_eq!(d["ctx"], json!({"max_length": 255}));
        let d = detail(ViolationKind::TooFewItems { min: 2, actual: 1 }, json!([1]));
        assert_eq!(
            d["msg"],
            "List should have at least 2 items after validation, not 1"
        );
        assert_eq!(
            d["ctx"],
            json!({"field_type": "List", "min_length": 2, "actual_length": 1})
        );
        let d = detail(
            ViolationKind::TooManyItems { max: 1, actual: 3 },
            json!([1, 2, 3]),
        );
        assert_eq!(
            d["msg"],
            "List should have at most 1 item after validation, not 3"
        );
        let d = detail(
            ViolationKind::WrongType {
                expected: Expected::Integer,
            },
            json!(1.5),
        );
        assert_eq!(d["type"], "int_from_float");
        let d = detail(
            ViolationKind::WrongType {
                expected: Expected::Integer,
            },
            json!("1"),
        );
        assert_eq!(d["type"], "int_type");
        let d = detail(
            ViolationKind::NotConst {
                expected: json!("node_name"),
            },
            json!("x"),
        );
        assert_eq!(d["type"], "literal_error");
        assert_eq!(d["msg"], "Input should be 'node_name'");
        assert_eq!(d["ctx"], json!({"expected": "'node_name'"}));
        let d = detail(ViolationKind::Missing { field: "f".into() }, json!({}));
        assert_eq!(
            d,
            json!({"type": "missing", "loc": ["body", "f"], "msg": "Field required", "input": {}})
        );
    }

    #[test]
    fn fastapi_details() {
        assert_eq!(
            missing_body(),
            json!({"type": "missing", "loc": ["body"], "msg": "Field required", "input": null})
        );
        let (status, body) = body_error_response(&BodyError::Syntax {
            msg: "Expecting value",
            pos: 6,
            line: 1,
            column: 7,
        });
        assert_eq!(status, 422);
        assert_eq!(
            body,
            json!({"detail": [{"type": "json_invalid", "loc": ["body", 6], "msg": "JSON decode error", "input": {}, "ctx": {"error": "Expecting value"}}]})
        );
        let (status, _) = body_error_response(&BodyError::NotUtf8 { valid_up_to: 0 });
        assert_eq!(status, 400);
    }
}
