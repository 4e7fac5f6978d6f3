//! Checks that need no recursion: JSON types, `enum`/`const` equality,
//! string keywords (lengths, `pattern`, `format`) and numeric bounds. Each
//! returns the first failing keyword, in pydantic's order, or `None`.

use std::cmp::Ordering;
use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

use super::format;
use super::violation::{Expected, ViolationKind};
use super::{MAX_DEPTH, Schemas};

/// Whether `value` has the JSON type named by a `type` entry. `integer`
/// accepts numbers without a fractional part (`1.0` too); `number` accepts
/// integers. Unknown type names accept nothing.
pub(super) fn type_name_matches(name: &str, value: &Value) -> bool {
    match (name, value) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("number", Value::Number(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_)) => true,
        ("integer", Value::Number(n)) => is_integral(n),
        _ => false,
    }
}

/// Whether a `type` keyword (a name or an array of names) accepts `value`.
/// A malformed `type` accepts everything.
pub(super) fn type_matches(ty: &Value, value: &Value) -> bool {
    match ty {
        Value::String(name) => type_name_matches(name, value),
        Value::Array(names) => names
            .iter()
            .any(|n| n.as_str().is_some_and(|n| type_name_matches(n, value))),
        _ => true,
    }
}

pub(super) fn is_integral(n: &Number) -> bool {
    n.is_i64()
        || n.is_u64()
        || n.as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

/// What a failed `type` keyword wanted, refined by `format` and by whether
/// the object has declared properties.
pub(super) fn expected_for(map: &Map<String, Value>, ty: &Value) -> Expected {
    let one = |name: &str| match name {
        "null" => Expected::Null,
        "boolean" => Expected::Boolean,
        "integer" => Expected::Integer,
        "number" => Expected::Number,
        "array" => Expected::Array,
        "object" if map.contains_key("properties") || map.contains_key("required") => {
            Expected::Model
        }
        "object" => Expected::Object,
        _ => match map
            .get("format")
            .and_then(Value::as_str)
            .and_then(format::Format::parse)
        {
            Some(format::Format::Uuid) => Expected::Uuid,
            Some(format::Format::DateTime) => Expected::DateTime,
            Some(format::Format::Date) => Expected::Date,
            Some(format::Format::Uri) => Expected::Url,
            None => Expected::String,
        },
    };
    match ty {
        Value::Array(names) => {
            let mut all: Vec<Expected> = names.iter().filter_map(Value::as_str).map(one).collect();
            if all.len() == 1 {
                all.pop().unwrap_or(Expected::Null)
            } else {
                Expected::Either(all)
            }
        }
        Value::String(name) => one(name),
        _ => Expected::Null,
    }
}

/// JSON equality with numbers compared by value (`1 == 1.0`), as `enum`,
/// `const` and `uniqueItems` require.
pub(super) fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => cmp_numbers(x, y) == Some(Ordering::Equal),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// Compares two JSON numbers exactly when both are integers, as floats
/// otherwise.
pub(super) fn cmp_numbers(a: &Number, b: &Number) -> Option<Ordering> {
    let int = |n: &Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    match (int(a), int(b)) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        _ => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

/// A non-negative integer keyword (`minLength`, `maxItems`, ...); integral
/// floats such as `1.0` count.
pub(super) fn keyword_u64(map: &Map<String, Value>, key: &str) -> Option<u64> {
    let n = map.get(key)?.as_number()?;
    n.as_u64().or_else(|| {
        let f = n.as_f64()?;
        // Saturating float-to-int conversion: large bounds clamp, no panic.
        (f.is_finite() && f >= 0.0 && f.fract() == 0.0).then_some(f as u64)
    })
}

/// String keywords in pydantic's order: `minLength`, `maxLength`, `pattern`,
/// `format`. Only the first failure is reported (pydantic stops there too).
pub(super) fn check_string(
    schemas: &Schemas,
    map: &Map<String, Value>,
    s: &str,
) -> Option<ViolationKind> {
    let min = keyword_u64(map, "minLength");
    let max = keyword_u64(map, "maxLength");
    if min.is_some() || max.is_some() {
        let len = s.chars().count() as u64;
        if let Some(min) = min.filter(|m| len < *m) {
            return Some(ViolationKind::StringTooShort { min });
        }
        if let Some(max) = max.filter(|m| len > *m) {
            return Some(ViolationKind::StringTooLong { max });
        }
    }
    if let Some(pattern) = map.get("pattern").and_then(Value::as_str) {
        match schemas.regex(pattern).as_ref() {
            Ok(re) if re.is_match(s) => {}
            Ok(_) => {
                return Some(ViolationKind::PatternMismatch {
                    pattern: pattern.to_owned(),
                });
            }
            Err(problem) => return Some(ViolationKind::Schema(problem.clone())),
        }
    }
    let name = map.get("format").and_then(Value::as_str)?;
    let lax = schemas.dialect() == super::Dialect::Pydantic;
    let reason = format::Format::parse(name)?.check(s, lax)?;
    Some(ViolationKind::InvalidFormat {
        format: name.to_owned(),
        reason,
    })
}

/// Numeric keywords in pydantic's order: `multipleOf`, upper bound, lower
/// bound. Exclusive bounds may be numbers (2020-12) or booleans modifying
/// `maximum`/`minimum` (draft 4, OpenAPI 3.0).
pub(super) fn check_number(map: &Map<String, Value>, n: &Number) -> Option<ViolationKind> {
    let num = |k: &str| map.get(k).and_then(Value::as_number);
    let flag = |k: &str| map.get(k).and_then(Value::as_bool) == Some(true);
    if let Some(m) = num("multipleOf")
        && !is_multiple(n, m)
    {
        return Some(ViolationKind::NotMultipleOf {
            multiple_of: m.clone(),
        });
    }
    let upper = [
        (num("maximum"), flag("exclusiveMaximum")),
        (num("exclusiveMaximum"), true),
    ];
    for (bound, exclusive) in upper {
        let Some(max) = bound else { continue };
        let ord = cmp_numbers(n, max);
        if ord == Some(Ordering::Greater) || (exclusive && ord == Some(Ordering::Equal)) {
            return Some(ViolationKind::GreaterThanMax {
                max: max.clone(),
                exclusive,
            });
        }
    }
    let lower = [
        (num("minimum"), flag("exclusiveMinimum")),
        (num("exclusiveMinimum"), true),
    ];
    for (bound, exclusive) in lower {
        let Some(min) = bound else { continue };
        let ord = cmp_numbers(n, min);
        if ord == Some(Ordering::Less) || (exclusive && ord == Some(Ordering::Equal)) {
            return Some(ViolationKind::LessThanMin {
                min: min.clone(),
                exclusive,
            });
        }
    }
    None
}

fn is_multiple(n: &Number, m: &Number) -> bool {
    if let (Some(a), Some(b)) = (n.as_i64(), m.as_i64()) {
        return b == 0 || a.checked_rem(b).is_none_or(|r| r == 0);
    }
    match (n.as_f64(), m.as_f64()) {
        (Some(a), Some(b)) if b != 0.0 => {
            let q = a / b;
            !q.is_finite() || (q - q.round()).abs() <= 1e-9 * q.abs().max(1.0)
        }
        _ => true,
    }
}

/// A canonical text of a value for `uniqueItems`: object keys sorted,
/// numbers by value. Containers nested deeper than [`MAX_DEPTH`] are cut off.
pub(super) fn canonical(v: &Value) -> String {
    let mut out = String::new();
    write_canonical(v, &mut out, MAX_DEPTH);
    out
}

fn write_canonical(v: &Value, out: &mut String, budget: usize) {
    match v {
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15 => {
                let _ = write!(out, "{}", f as i64);
            }
            _ => {
                let _ = write!(out, "{n}");
            }
        },
        Value::Array(items) if budget > 0 => {
            out.push('[');
            for item in items {
                write_canonical(item, out, budget - 1);
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(map) if budget > 0 => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for k in keys {
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                if let Some(item) = map.get(k) {
                    write_canonical(item, out, budget - 1);
                }
                out.push(',');
            }
            out.push('}');
        }
        Value::Array(_) | Value::Object(_) => out.push('…'),
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn num(v: Value) -> Number {
        match v {
            Value::Number(n) => n,
            _ => Number::from(0),
        }
    }

    #[test]
    fn integer_accepts_integral_floats_and_number_accepts_integers() {
        assert!(type_name_matches("integer", &json!(1.0)));
        assert!(type_name_matches("integer", &json!(-3)));
        assert!(!type_name_matches("integer", &json!(1.5)));
        assert!(type_name_matches("number", &json!(7)));
        assert!(type_matches(&json!(["string", "null"]), &Value::Null));
        assert!(!type_matches(&json!(["string", "null"]), &json!(1)));
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(json_eq(&json!(1), &json!(1.0)));
        assert!(json_eq(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
        assert!(!json_eq(&json!("1"), &json!(1)));
        assert_eq!(
            cmp_numbers(&num(json!(u64::MAX)), &num(json!(-1))),
            Some(Ordering::Greater)
        );
        assert_eq!(
            canonical(&json!({"b": 1.0, "a": [2]})),
            canonical(&json!({"a": [2], "b": 1}))
        );
    }

    #[test]
    fn numeric_bounds_in_both_spellings() {
        let inclusive = json!({"minimum": 0.0, "maximum": 1.0});
        let m = inclusive.as_object().cloned().unwrap_or_default();
        assert_eq!(check_number(&m, &num(json!(1))), None);
        assert!(matches!(
            check_number(&m, &num(json!(1.5))),
            Some(ViolationKind::GreaterThanMax {
                exclusive: false,
                ..
            })
        ));
        let draft4 = json!({"minimum": 0, "exclusiveMinimum": true});
        let m = draft4.as_object().cloned().unwrap_or_default();
        assert!(matches!(
            check_number(&m, &num(json!(0))),
            Some(ViolationKind::LessThanMin {
                exclusive: true,
                ..
            })
        ));
        let modern = json!({"exclusiveMaximum": 10, "multipleOf": 0.5});
        let m = modern.as_object().cloned().unwrap_or_default();
        assert!(matches!(
            check_number(&m, &num(json!(10))),
            Some(ViolationKind::GreaterThanMax {
                exclusive: true,
                ..
            })
        ));
        assert!(matches!(
            check_number(&m, &num(json!(0.3))),
            Some(ViolationKind::NotMultipleOf { .. })
        ));
        assert_eq!(check_number(&m, &num(json!(9.5))), None);
    }
}
