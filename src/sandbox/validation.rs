//! Request validation as the service does it (FastAPI + pydantic v2): path
//! and query parameters and JSON bodies are checked against the OpenAPI
//! reference, and every fault of a request is reported in one 422 body
//! (path, then query, then body faults), with pydantic's `type`, `loc`,
//! `msg`, `input` and `ctx`.
//!
//! The reference (`reference/service-openapi.json`, embedded) is
//! parsed once, lazily, and patched where the spec wins
//! (`spec_patches`): the `ScorerName` enumeration is the spec's 63 values,
//! and trends sections have the spec's `description` (at most 500
//! characters). The checks themselves are `crate::schemacheck`'s, with its
//! pydantic dialect and renderer.
//!
//! Use a [`Checker`] per request: call its methods for each part, then
//! [`Checker::finish`]; a body that passed is then deserialized into the
//! `crate::api` type with [`deserialize`] (a mismatch between the reference
//! and the wire types is a 422 too, never a 500).

use std::sync::LazyLock;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::reply::{ApiError, redact_detail};
use crate::api::{LocItem, ScorerName, ValidationError};
use crate::schemacheck::pyjson::{BodyError, decode_body};
use crate::schemacheck::{Dialect, ParamSource, PathSeg, Schemas, pydantic, uuid_param};

use crate::api::reference::SERVICE_REFERENCE as REFERENCE;

static SCHEMAS: LazyLock<Schemas> = LazyLock::new(|| {
    let mut doc: Value = serde_json::from_str(REFERENCE).unwrap_or_else(|_| json!({}));
    spec_patches(&mut doc);
    Schemas::with_dialect(doc, Dialect::Pydantic)
});

/// A component schema of the (patched) reference, by name.
pub fn component(name: &str) -> Option<&'static Value> {
    SCHEMAS.get(&format!("#/components/schemas/{name}"))
}

/// Where the spec wins over the reference (see the module docs).
fn spec_patches(doc: &mut Value) {
    let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    if let Some(scorer_name) =
        schemas.get_mut("service_core__schemas__shared__scorers__scorer_name__ScorerName")
    {
        scorer_name["enum"] = json!(ScorerName::documented_values());
    }
    let description = json!({
        "anyOf": [{"type": "string", "maxLength": 500}, {"type": "null"}],
        "title": "Description"
    });
    for name in [
        "SectionCreateRequest",
        "SectionUpdateRequest",
        "SectionResponse",
    ] {
        if let Some(props) = schemas
            .get_mut(name)
            .and_then(|s| s.get_mut("properties"))
            .and_then(Value::as_object_mut)
        {
            props
                .entry("description")
                .or_insert_with(|| description.clone());
        }
    }
}

tokio::task_local! {
    /// Whether the body of the request being handled is JSON by its
    /// `Content-Type` (set by [`with_content_type`]).
    static BODY_IS_JSON: bool;
}

/// Whether a `Content-Type` makes a body JSON, as FastAPI decides it: no
/// header, or `application/json`, or `application/<anything>+json`
/// (parameters such as `charset` ignored, case-insensitive). Anything else
/// (`text/plain`, a form, a malformed value) leaves the body raw.
pub fn is_json_content_type(content_type: Option<&str>) -> bool {
    let Some(value) = content_type else {
        return true;
    };
    let media = value.split(';').next().unwrap_or_default().trim();
    let Some((main, sub)) = media.split_once('/') else {
        return false;
    };
    let sub = sub.trim().to_ascii_lowercase();
    main.trim().eq_ignore_ascii_case("application") && (sub == "json" || sub.ends_with("+json"))
}

/// Runs a request's handling (`handle`) with its `Content-Type` known to
/// [`Checker::body_value`].
pub async fn with_content_type<F: std::future::Future>(
    content_type: Option<&str>,
    handle: F,
) -> F::Output {
    BODY_IS_JSON
        .scope(is_json_content_type(content_type), handle)
        .await
}

/// The most bytes of a request body the sandbox reads (larger is a 413).
pub const BODY_LIMIT: usize = 1024 * 1024;

/// Collects every fault of one request.
#[derive(Debug, Default)]
pub struct Checker {
    details: Vec<Value>,
    bad_request: Option<ApiError>,
}

impl Checker {
    /// A checker with no faults yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn push(&mut self, violations: &[crate::schemacheck::Violation], prefix: &[PathSeg]) {
        self.details.extend(
            violations
                .iter()
                .map(|v| pydantic::to_error_detail(v, prefix)),
        );
    }

    /// A `{name}` path segment that must be a UUID: its canonical
    /// (lowercase, hyphenated) spelling, or a `uuid_parsing` fault at
    /// `["path", name]`.
    pub fn path_uuid(&mut self, name: &str, raw: &str) -> String {
        self.uuid(ParamSource::Path, name, raw).unwrap_or_default()
    }

    /// A UUID parameter's canonical spelling, or a `uuid_parsing` fault at
    /// `[source, name]`.
    fn uuid(&mut self, source: ParamSource, name: &str, raw: &str) -> Option<String> {
        match uuid_param(name, raw) {
            Ok(u) => Some(u.hyphenated().to_string()),
            Err(v) => {
                self.push(&[v], &[source.seg()]);
                None
            }
        }
    }

    /// A path segment checked against an inline schema (e.g. an enum).
    pub fn path_param(&mut self, name: &str, raw: &str, schema: &Value) -> Option<Value> {
        self.param(ParamSource::Path, name, schema, true, &[raw])
    }

    fn param(
        &mut self,
        source: ParamSource,
        name: &str,
        schema: &Value,
        required: bool,
        raw: &[&str],
    ) -> Option<Value> {
        match SCHEMAS.check_param(name, schema, required, raw) {
            Ok(v) => v,
            Err(violations) => {
                self.push(&violations, &[source.seg()]);
                None
            }
        }
    }

    /// A query parameter checked against `schema` (its `default` when
    /// absent).
    pub fn query(&mut self, query: &Query, name: &str, schema: &Value) -> Option<Value> {
        let raw = query.all(name);
        self.param(ParamSource::Query, name, schema, false, &raw)
    }

    /// A required query parameter checked against `schema` (`missing` at
    /// `["query", name]` when absent).
    pub fn query_required(&mut self, query: &Query, name: &str, schema: &Value) -> Option<Value> {
        let raw = query.all(name);
        self.param(ParamSource::Query, name, schema, true, &raw)
    }

    /// An integer query parameter with a default.
    pub fn query_int(&mut self, query: &Query, name: &str, default: i64) -> i64 {
        self.query(query, name, &json!({"type": "integer", "default": default}))
            .and_then(|v| v.as_i64())
            .unwrap_or(default)
    }

    /// The page query parameters: `starting_token` (default 0), then
    /// `limit` (default [`crate::api::DEFAULT_PAGE_LIMIT`]).
    pub fn page(&mut self, query: &Query) -> (i64, i64) {
        let start = self.query_int(query, "starting_token", 0);
        let limit = self.query_int(query, "limit", crate::api::DEFAULT_PAGE_LIMIT);
        (start, limit)
    }

    /// A boolean query parameter with a default.
    pub fn query_bool(&mut self, query: &Query, name: &str, default: bool) -> bool {
        self.query(query, name, &json!({"type": "boolean", "default": default}))
            .and_then(|v| v.as_bool())
            .unwrap_or(default)
    }

    /// An optional UUID query parameter, canonicalized.
    pub fn query_uuid(&mut self, query: &Query, name: &str) -> Option<String> {
        let raw = query.all(name);
        let last = raw.last()?;
        self.uuid(ParamSource::Query, name, last)
    }

    /// A required JSON body validated against a component schema: the
    /// decoded value, or faults (`missing`, `json_invalid`, schema
    /// violations at `["body", ...]`).
    pub fn body(&mut self, bytes: &[u8], schema_name: &str) -> Option<Value> {
        let value = self.body_value(bytes)?;
        self.body_schema(schema_name, &value);
        Some(value)
    }

    /// Decodes a required JSON body without validating it yet. As FastAPI
    /// does, a body whose `Content-Type` is not JSON is not decoded: it is
    /// the raw text, which a model's schema then refuses (422
    /// `model_attributes_type` at `["body"]`); see [`with_content_type`].
    pub fn body_value(&mut self, bytes: &[u8]) -> Option<Value> {
        if bytes.is_empty() {
            self.details.push(pydantic::missing_body());
            return None;
        }
        if !BODY_IS_JSON.try_with(|json| *json).unwrap_or(true) {
            return Some(Value::String(String::from_utf8_lossy(bytes).into_owned()));
        }
        match decode_body(bytes) {
            Ok(v) => Some(v),
            Err(e @ BodyError::NotUtf8 { .. }) => {
                let (_, body) = pydantic::body_error_response(&e);
                let detail = body["detail"].as_str().unwrap_or("bad body").to_owned();
                self.bad_request = Some(ApiError::BadRequest(detail));
                None
            }
            Err(e) => {
                let (_, body) = pydantic::body_error_response(&e);
                if let Some(items) = body["detail"].as_array() {
                    self.details.extend(items.iter().cloned());
                }
                None
            }
        }
    }

    /// Validates a decoded body against a component schema.
    pub fn body_schema(&mut self, schema_name: &str, value: &Value) {
        let violations = SCHEMAS.validate(&format!("#/components/schemas/{schema_name}"), value);
        self.push(&violations, &[PathSeg::key("body")]);
    }

    /// `Ok` when no fault was found; otherwise the 422 (or 400) answer.
    pub fn finish(self) -> Result<(), ApiError> {
        if let Some(e) = self.bad_request {
            return Err(e);
        }
        if self.details.is_empty() {
            Ok(())
        } else {
            Err(ApiError::Validation(
                self.details.into_iter().map(redact_detail).collect(),
            ))
        }
    }
}

/// Deserializes a validated body into a wire type. A failure (the
/// reference accepted what the type cannot hold) is a 422 at `["body"]`.
pub fn deserialize<T: DeserializeOwned>(value: Value) -> Result<T, ApiError> {
    serde_json::from_value(value).map_err(|e| {
        let error = ValidationError::value_error(
            vec![LocItem::Key("body".into())],
            Some(Value::Null),
            &e.to_string(),
        );
        // In pydantic's key order, as the schema checks' faults are written.
        ApiError::Validation(vec![json!({
            "type": error.kind,
            "loc": error.loc,
            "msg": error.msg,
            "input": error.input,
            "ctx": error.ctx,
        })])
    })
}

/// A parsed query string (or form body): every `name=value` pair, decoded,
/// in order.
#[derive(Debug, Clone, Default)]
pub struct Query {
    pairs: Vec<(String, String)>,
}

impl Query {
    /// Parses `a=1&b=x%20y` (`application/x-www-form-urlencoded`: `+` is a
    /// space; malformed escapes are kept as written).
    pub fn parse(raw: Option<&str>) -> Self {
        let pairs = raw
            .unwrap_or("")
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (form_decode(k), form_decode(v))
            })
            .collect();
        Query { pairs }
    }

    /// Every value of `name`, in order.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.pairs
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// The last value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.all(name).last().copied()
    }
}

fn form_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = |b: u8| (b as char).to_digit(16);
                match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                    (Some(h), Some(l)) => {
                        out.push((h * 16 + l) as u8);
                        i += 2;
                    }
                    _ => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_strings_decode_like_forms() {
        let q = Query::parse(Some("a=1&b=x%20y+z&a=2&c&d=%zz&e=%4"));
        assert_eq!(q.all("a"), vec!["1", "2"]);
        assert_eq!(q.get("b"), Some("x y z"));
        assert_eq!(q.get("c"), Some(""));
        assert_eq!(q.get("d"), Some("%zz"));
        assert_eq!(q.get("e"), Some("%4"));
    }

    #[test]
    fn the_reference_is_patched_where_the_spec_wins() {
        let e =
            component("service_core__schemas__shared__scorers__scorer_name__ScorerName").unwrap();
        assert_eq!(e["enum"].as_array().unwrap().len(), 63);
        assert!(
            component("SectionCreateRequest").unwrap()["properties"]["description"].is_object()
        );
        assert!(SCHEMAS.problems().is_empty(), "{:?}", SCHEMAS.problems());
    }

    #[test]
    fn every_fault_is_reported_with_its_location() {
        let mut c = Checker::new();
        let pid = c.path_uuid("project_id", "not-a-uuid");
        assert!(pid.is_empty());
        c.body(
            br#"{"segment_filters":[{"sample_rate":1.5},{"sample_rate":"x"}],"scorers":[{"id":"6f1c2a4e-8e0b-4c2a-9f5e-1b2c3d4e5f60"}]}"#,
            "MetricSettingsRequest",
        );
        let Err(ApiError::Validation(details)) = c.finish() else {
            panic!("expected 422")
        };
        let locs: Vec<String> = details.iter().map(|d| d["loc"].to_string()).collect();
        assert!(
            locs.contains(&r#"["path","project_id"]"#.to_owned()),
            "{locs:?}"
        );
        assert!(
            locs.contains(&r#"["body","segment_filters",0,"sample_rate"]"#.to_owned()),
            "{locs:?}"
        );
        assert!(locs.iter().any(|l| l.contains("scorer_type")), "{locs:?}");
        assert!(details.len() >= 4, "{details:?}");
    }

    #[test]
    fn content_types_are_json_as_fastapi_decides() {
        for json in [
            None,
            Some("application/json"),
            Some("Application/JSON; charset=utf-8"),
            Some("application/vnd.api+json"),
        ] {
            assert!(is_json_content_type(json), "{json:?}");
        }
        for raw in [
            Some("text/plain"),
            Some("application/x-www-form-urlencoded"),
            Some("text/json"),
            Some("json"),
            Some(""),
        ] {
            assert!(!is_json_content_type(raw), "{raw:?}");
        }
    }

    #[tokio::test]
    async fn a_json_body_sent_as_text_is_refused_as_fastapi_does() {
        let body = br#"{"name": "x"}"#;
        let d = with_content_type(Some("text/plain"), async {
            let mut c = Checker::new();
            c.body(body, "SectionCreateRequest");
            c.finish()
        })
        .await;
        let Err(ApiError::Validation(d)) = d else {
            panic!("expected 422")
        };
        assert_eq!(
            d,
            vec![json!({
                "type": "model_attributes_type",
                "loc": ["body"],
                "msg": "Input should be a valid dictionary or object to extract fields from",
                "input": "{\"name\": \"x\"}",
            })]
        );
        let ok = with_content_type(Some("application/json"), async {
            let mut c = Checker::new();
            c.body(body, "SectionCreateRequest");
            c.finish()
        })
        .await;
        assert!(ok.is_ok());
    }

    #[test]
    fn malformed_and_missing_bodies() {
        let mut c = Checker::new();
        assert!(c.body(b"{not json", "MetricSettingsRequest").is_none());
        let Err(ApiError::Validation(d)) = c.finish() else {
            panic!()
        };
        assert_eq!(d[0]["type"], "json_invalid");
        let mut c = Checker::new();
        assert!(c.body(b"", "MetricSettingsRequest").is_none());
        let Err(ApiError::Validation(d)) = c.finish() else {
            panic!()
        };
        assert_eq!(d[0]["type"], "missing");
        assert_eq!(d[0]["loc"], json!(["body"]));
    }
}
