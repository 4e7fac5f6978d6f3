//! Request parameters (path, query, header, cookie) arrive as strings;
//! FastAPI coerces them to the declared type the way pydantic's lax mode
//! reads strings (`"10"` is an integer, `"yes"` a boolean) and then validates
//! them. [`Schemas::check_param`] does both; [`uuid_param`] is the common
//! case of a `{project_id}`-style path segment.
//!
//! The violations' paths start with the parameter's name; render them with
//! the source as prefix: `pydantic::http_validation_error(&v, &[ParamSource::Path.seg()])`.

use serde_json::{Number, Value};

use super::format::uuid_error;
use super::scalar::type_name_matches;
use super::violation::{Expected, PathSeg, Violation, ViolationKind};
use super::{MAX_HOPS, Schemas};

/// Where a request parameter comes from: the first element of its `loc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamSource {
    /// A path segment.
    Path,
    /// The query string.
    Query,
    /// A request header.
    Header,
    /// A cookie.
    Cookie,
}

impl ParamSource {
    /// FastAPI's name for it: `path`, `query`, `header` or `cookie`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Path => "path",
            Self::Query => "query",
            Self::Header => "header",
            Self::Cookie => "cookie",
        }
    }

    /// The `loc` prefix for [`super::pydantic`] rendering.
    pub fn seg(self) -> PathSeg {
        PathSeg::key(self.as_str())
    }
}

/// Parses a path or query parameter as a UUID (any version, any of the
/// hyphenated, simple, braced or URN spellings), or reports pydantic's
/// `uuid_parsing` violation at `[name]`.
#[allow(
    clippy::result_large_err,
    reason = "a cold error path; callers collect violations by value"
)]
pub fn uuid_param(name: &str, raw: &str) -> Result<uuid::Uuid, Violation> {
    uuid::Uuid::try_parse(raw).map_err(|_| Violation {
        path: vec![PathSeg::key(name)],
        kind: ViolationKind::InvalidFormat {
            format: "uuid".to_owned(),
            reason: uuid_error(raw).unwrap_or_else(|| "failed to parse a UUID".to_owned()),
        },
        input: Value::String(raw.to_owned()),
    })
}

/// The scalar type a string parameter is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    String,
    Integer,
    Number,
    Boolean,
}

impl Schemas {
    /// Coerces and validates one request parameter given as raw strings
    /// (several for a repeated query parameter of array type; one otherwise,
    /// of which only the last counts, as in FastAPI).
    ///
    /// Returns the value to use: the coerced value, or the schema's
    /// `default` (or `None`) when the parameter is absent and not
    /// `required`. An absent required parameter is a
    /// [`ViolationKind::Missing`] with input `null`. Paths start with
    /// `name`; array elements add their index.
    pub fn check_param(
        &self,
        name: &str,
        schema: &Value,
        required: bool,
        raw: &[&str],
    ) -> Result<Option<Value>, Vec<Violation>> {
        let path = vec![PathSeg::key(name)];
        let Some(last) = raw.last() else {
            if required {
                return Err(vec![Violation {
                    path,
                    kind: ViolationKind::Missing {
                        field: name.to_owned(),
                    },
                    input: Value::Null,
                }]);
            }
            return Ok(self
                .follow_refs(schema, 0)
                .and_then(|s| s.get("default"))
                .cloned());
        };
        let mut violations = Vec::new();
        let mut unreadable = Vec::new();
        let value = if let Some(items) = self.array_items(schema, 0) {
            let target = self.target(items, 0);
            let mut out = Vec::with_capacity(raw.len());
            for (i, r) in raw.iter().enumerate() {
                match coerce(r, target) {
                    Ok(v) => out.push(v),
                    Err(expected) => {
                        let p = vec![PathSeg::key(name), PathSeg::Index(i)];
                        violations.push(unparsable(p, expected, r));
                        unreadable.push(i);
                        out.push(Value::String((*r).to_owned()));
                    }
                }
            }
            Value::Array(out)
        } else {
            match coerce(last, self.target(schema, 0)) {
                Ok(v) => v,
                Err(expected) => return Err(vec![unparsable(path, expected, last)]),
            }
        };
        for mut v in self.validate_schema(schema, &value) {
            // An element that could not be read is reported once, as such.
            if let Some(PathSeg::Index(i)) = v.path.first()
                && unreadable.contains(i)
            {
                continue;
            }
            v.path.insert(0, PathSeg::key(name));
            violations.push(v);
        }
        if violations.is_empty() {
            return Ok(Some(value));
        }
        let index = |v: &Violation| match v.path.get(1) {
            Some(PathSeg::Index(i)) => *i,
            _ => 0,
        };
        violations.sort_by_key(index);
        Err(violations)
    }

    /// The item schema when the parameter is an array (possibly nullable).
    fn array_items<'a>(&'a self, schema: &'a Value, hops: usize) -> Option<&'a Value> {
        let s = self.follow_refs(schema, hops)?;
        if s.get("type").and_then(Value::as_str) == Some("array") {
            return Some(s.get("items").unwrap_or(&Value::Bool(true)));
        }
        let branches = s.get("anyOf").or_else(|| s.get("oneOf"))?.as_array()?;
        branches.iter().find_map(|b| self.array_items(b, hops + 1))
    }

    /// What a string should be read as: the first non-string scalar type the
    /// schema admits, unless it admits strings (then it stays a string).
    fn target(&self, schema: &Value, hops: usize) -> Target {
        let mut types = Vec::new();
        self.scalar_types(schema, hops, &mut types);
        if types.is_empty() || types.contains(&Target::String) {
            return Target::String;
        }
        types[0]
    }

    fn scalar_types(&self, schema: &Value, hops: usize, out: &mut Vec<Target>) {
        let Some(s) = self.follow_refs(schema, hops) else {
            return;
        };
        if hops > MAX_HOPS {
            return;
        }
        let literal = s
            .get("const")
            .map(std::slice::from_ref)
            .or_else(|| s.get("enum").and_then(Value::as_array).map(Vec::as_slice));
        if let Some(values) = literal {
            for v in values {
                out.push(match v {
                    Value::Bool(_) => Target::Boolean,
                    Value::Number(n) if n.is_f64() => Target::Number,
                    Value::Number(_) => Target::Integer,
                    _ => Target::String,
                });
            }
            return;
        }
        let names: Vec<&str> = match s.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        for name in names {
            out.push(match name {
                "integer" => Target::Integer,
                "number" => Target::Number,
                "boolean" => Target::Boolean,
                "null" => continue,
                _ => Target::String,
            });
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            for branch in s.get(key).and_then(Value::as_array).into_iter().flatten() {
                self.scalar_types(branch, hops + 1, out);
            }
        }
    }
}

fn unparsable(path: Vec<PathSeg>, expected: Expected, raw: &str) -> Violation {
    Violation {
        path,
        kind: ViolationKind::Unparsable { expected },
        input: Value::String(raw.to_owned()),
    }
}

/// Reads a string as pydantic's lax mode does for the target type.
fn coerce(raw: &str, target: Target) -> Result<Value, Expected> {
    match target {
        Target::String => Ok(Value::String(raw.to_owned())),
        Target::Integer => parse_int(raw).ok_or(Expected::Integer),
        Target::Number => {
            let t = raw.trim();
            let f: f64 = t.parse().map_err(|_| Expected::Number)?;
            if let Some(int) = parse_int(t).filter(|v| type_name_matches("integer", v)) {
                return Ok(int);
            }
            Number::from_f64(f)
                .map(Value::Number)
                .ok_or(Expected::Number)
        }
        Target::Boolean => match raw.to_ascii_lowercase().as_str() {
            "1" | "on" | "t" | "true" | "y" | "yes" => Ok(Value::Bool(true)),
            "0" | "off" | "f" | "false" | "n" | "no" => Ok(Value::Bool(false)),
            _ => Err(Expected::Boolean),
        },
    }
}

/// An integer as pydantic reads one from a string: surrounding whitespace
/// and a trailing `.0` allowed.
fn parse_int(raw: &str) -> Option<Value> {
    let t = raw.trim();
    let t = match t.split_once('.') {
        Some((int, zeros)) if !zeros.is_empty() && zeros.bytes().all(|b| b == b'0') => int,
        _ => t,
    };
    if let Ok(i) = t.parse::<i64>() {
        return Some(Value::from(i));
    }
    t.parse::<u64>().ok().map(Value::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn uuid_param_reports_pydantic_uuid_parsing() {
        assert!(uuid_param("project_id", "6f1c2a4e-8e0b-4c2a-9f5e-1b2c3d4e5f60").is_ok());
        let Err(v) = uuid_param("project_id", "abc") else {
            panic!("abc is no UUID");
        };
        let detail = super::super::pydantic::to_error_detail(&v, &[ParamSource::Path.seg()]);
        assert_eq!(
            detail,
            json!({
                "type": "uuid_parsing",
                "loc": ["path", "project_id"],
                "msg": "Input should be a valid UUID, invalid length: expected length 32 for simple format, found 3",
                "input": "abc",
                "ctx": {"error": "invalid length: expected length 32 for simple format, found 3"},
            })
        );
    }

    #[test]
    fn query_parameters_coerce_like_pydantic() {
        let doc = json!({"components": {"schemas": {
            "Visibility": {"type": "string", "enum": ["user", "project"], "title": "Visibility"},
        }}});
        let s = Schemas::new(doc);
        let int = json!({"type": "integer", "default": 100});
        assert_eq!(
            s.check_param("limit", &int, false, &["25"]),
            Ok(Some(json!(25)))
        );
        assert_eq!(
            s.check_param("limit", &int, false, &[" 7.0 "]),
            Ok(Some(json!(7)))
        );
        assert_eq!(
            s.check_param("limit", &int, false, &[]),
            Ok(Some(json!(100)))
        );
        let err = s
            .check_param("limit", &int, false, &["ten"])
            .err()
            .unwrap_or_default();
        assert_eq!(err.len(), 1);
        assert_eq!(
            err[0].kind,
            ViolationKind::Unparsable {
                expected: Expected::Integer
            }
        );
        let boolean = json!({"type": "boolean", "default": false});
        assert_eq!(
            s.check_param("include_counts", &boolean, false, &["YES"]),
            Ok(Some(json!(true)))
        );
        assert!(
            s.check_param("include_counts", &boolean, false, &["maybe"])
                .is_err()
        );
        let visibility = json!({"$ref": "#/components/schemas/Visibility", "default": "user"});
        assert_eq!(
            s.check_param("visibility", &visibility, false, &["project"]),
            Ok(Some(json!("project")))
        );
        let err = s
            .check_param("visibility", &visibility, false, &["team"])
            .err()
            .unwrap_or_default();
        assert_eq!(err[0].path, vec![PathSeg::key("visibility")]);
        assert!(matches!(err[0].kind, ViolationKind::NotInEnum { .. }));
        let optional_uuid =
            json!({"anyOf": [{"type": "string", "format": "uuid4"}, {"type": "null"}]});
        assert_eq!(
            s.check_param("trends_dashboard_id", &optional_uuid, false, &[]),
            Ok(None)
        );
        let err = s
            .check_param("trends_dashboard_id", &optional_uuid, false, &["x"])
            .err()
            .unwrap_or_default();
        assert!(matches!(err[0].kind, ViolationKind::InvalidFormat { .. }));
        let missing = s
            .check_param("version", &int, true, &[])
            .err()
            .unwrap_or_default();
        assert_eq!(
            missing[0].kind,
            ViolationKind::Missing {
                field: "version".into()
            }
        );
        assert_eq!(missing[0].input, Value::Null);
    }

    #[test]
    fn repeated_query_parameters_fill_arrays() {
        let s = Schemas::new(json!({}));
        let ints = json!({"type": "array", "items": {"type": "integer", "maximum": 5}});
        assert_eq!(
            s.check_param("n", &ints, false, &["1", "2"]),
            Ok(Some(json!([1, 2])))
        );
        let err = s
            .check_param("n", &ints, false, &["x", "9"])
            .err()
            .unwrap_or_default();
        let paths: Vec<_> = err.iter().map(|v| v.path.clone()).collect();
        assert_eq!(
            paths,
            vec![
                vec![PathSeg::key("n"), PathSeg::Index(0)],
                vec![PathSeg::key("n"), PathSeg::Index(1)],
            ]
        );
    }
}
