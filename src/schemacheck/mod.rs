//! A small JSON Schema interpreter that reports every violation of a value,
//! each with its exact path, instead of stopping at the first.
//!
//! It serves two consumers. The sandbox validates request bodies against the
//! service's OpenAPI 3.1 component schemas and answers 422 with pydantic's
//! error body ([`pydantic`]); the manifest loader validates YAML manifests
//! against the JSON Schema (2020-12) that schemars generates from the
//! manifest types and renders [`Violation`]s as `file:line:column`
//! diagnostics (with [`suggest`] for "did you mean").
//!
//! Supported: local `$ref`s (`#/components/schemas/X`, `#/$defs/X`, `~0`/`~1`
//! and percent escapes, recursive schemas), `type` (string or array),
//! `enum`, `const`, string lengths in Unicode scalar values, `pattern`
//! (compiled once, cached), `format` (`uuid`/`uuidN`, `date-time`, `date`,
//! `uri`; others ignored), numeric bounds (inclusive, exclusive in both the
//! 2020-12 and draft-4 spellings, `multipleOf`), `items`/`prefixItems`/
//! `additionalItems`, `minItems`/`maxItems`/`uniqueItems`, `properties`/
//! `required`/`additionalProperties`/`patternProperties`/`propertyNames`/
//! `minProperties`/`maxProperties`, `unevaluatedProperties: false`
//! (approximated: any property declared anywhere in the schema counts as
//! evaluated), `allOf`/`anyOf`/`oneOf`/`not`, OpenAPI `nullable` and
//! `discriminator`, and schemars-style discriminated unions detected from a
//! `const` tag property every branch shares. Annotations (`title`,
//! `description`, `default`, `examples`, ...) are ignored; so are `if`/
//! `then`/`else`, `contains`, `dependent*` and `unevaluatedItems`.
//!
//! Guarantees: no panics on any value; recursion is bounded ([`MAX_DEPTH`]
//! levels of the value, [`MAX_HOPS`] schema hops at one location), so a
//! hostile, deeply nested value yields [`ViolationKind::TooDeep`], never a
//! stack overflow. The order of violations is deterministic (see
//! [`Dialect`]).
//!
//! Request helpers around the body check live in [`params`] (path and query
//! parameters with FastAPI's string coercion) and [`pyjson`] (JSON decoding
//! with Python's error messages and positions).

mod engine;
mod format;
mod human;
mod object;
pub mod params;
pub mod pydantic;
pub mod pyjson;
mod scalar;
mod union;
mod violation;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_limits;
#[cfg(test)]
mod tests_manifest;

use std::borrow::Cow;
use std::collections::HashMap;

use regex::Regex;
use serde_json::Value;

pub(crate) use human::describe;
pub use params::{ParamSource, uuid_param};
pub use violation::{Expected, PathSeg, SchemaError, Violation, ViolationKind};

/// How deep into the validated value the interpreter follows. Deeper values
/// are reported as [`ViolationKind::TooDeep`]. serde_json refuses to parse
/// documents nested deeper than this, so parsed input never reaches it.
pub const MAX_DEPTH: usize = 128;

/// How many schema hops (`$ref`, `allOf`/`anyOf`/`oneOf` branches, `not`)
/// may chain at one location of the value before the schema is declared
/// cyclic ([`SchemaError::RefCycle`]).
pub const MAX_HOPS: usize = 32;

/// Whose conventions decide the order of violations and how plain unions
/// report. Everything else (which values are valid, the violation kinds) is
/// the same in both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// For manifests and other JSON Schema documents (the default):
    /// - object members are checked in the value's key order, then missing
    ///   required properties are reported in schema order;
    /// - a plain union (`anyOf`/`oneOf` without a tag) whose branches all
    ///   fail reports only the branch the value evidently meant, when exactly
    ///   one branch accepts the value's JSON type (and, for objects, has all
    ///   its required properties present), without a tag; otherwise every
    ///   branch's violations, each under a [`PathSeg::Tag`] naming the branch;
    /// - `oneOf` requires exactly one matching branch;
    /// - unions whose object branches all carry a `const` tag property are
    ///   treated as discriminated even without an OpenAPI `discriminator`.
    #[default]
    JsonSchema,
    /// pydantic v2 exactly, for the service's 422 bodies:
    /// - model fields are checked in schema (field definition) order, missing
    ///   ones reported in place, then undeclared keys in the value's order;
    /// - a failing plain union reports every branch under its tag
    ///   (`str`, `list[str]`, a model name, ...);
    /// - `oneOf` is a union like `anyOf`; only an explicit `discriminator`
    ///   makes a union discriminated.
    Pydantic,
}

/// A schema document (a whole OpenAPI description or a standalone JSON
/// Schema), indexed for validation: patterns precompiled, references checked.
/// Cheap to share (`Send + Sync`); validation takes `&self`.
#[derive(Debug)]
pub struct Schemas {
    root: Value,
    dialect: Dialect,
    patterns: HashMap<String, Result<Regex, SchemaError>>,
    problems: Vec<SchemaError>,
}

impl Schemas {
    /// Indexes `root` (an OpenAPI document or a schemars schema) for the
    /// [`Dialect::JsonSchema`] conventions. Never fails: broken references
    /// and patterns are listed by [`Schemas::problems`] and reported as
    /// [`ViolationKind::Schema`] when validation meets them.
    pub fn new(root: Value) -> Self {
        Self::with_dialect(root, Dialect::JsonSchema)
    }

    /// Like [`Schemas::new`], with the given ordering and union conventions.
    pub fn with_dialect(root: Value, dialect: Dialect) -> Self {
        let mut index = Index::default();
        index.walk(&root, &root, 0);
        Self {
            root,
            dialect,
            patterns: index.patterns,
            problems: index.problems,
        }
    }

    /// The conventions in use.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The document as given.
    pub fn root(&self) -> &Value {
        &self.root
    }

    /// Broken references and patterns found when indexing, in document order
    /// (empty for a sound document).
    pub fn problems(&self) -> &[SchemaError] {
        &self.problems
    }

    /// The schema at a pointer (`#/components/schemas/X`, `/components/...`,
    /// `#` or `""` for the root), if there is one.
    pub fn get(&self, schema_pointer: &str) -> Option<&Value> {
        if schema_pointer.starts_with('#') {
            resolve_local(&self.root, schema_pointer).ok()
        } else {
            resolve_local(&self.root, &format!("#{schema_pointer}")).ok()
        }
    }

    /// Validates `value` against the schema at `schema_pointer` (see
    /// [`Schemas::get`]) and returns every violation, in the dialect's order;
    /// empty means valid. A pointer that names nothing yields one
    /// [`SchemaError::UnresolvedRef`] violation.
    pub fn validate(&self, schema_pointer: &str, value: &Value) -> Vec<Violation> {
        match self.get(schema_pointer) {
            Some(schema) => engine::Walker::run(self, schema, value),
            None => vec![Violation {
                path: Vec::new(),
                kind: ViolationKind::Schema(SchemaError::UnresolvedRef {
                    reference: schema_pointer.to_owned(),
                }),
                input: engine::clone_bounded(value, MAX_DEPTH),
            }],
        }
    }

    /// Validates `value` against a schema given inline (e.g. an OpenAPI
    /// parameter's `schema`); its `$ref`s resolve against this document.
    pub fn validate_schema(&self, schema: &Value, value: &Value) -> Vec<Violation> {
        engine::Walker::run(self, schema, value)
    }

    /// Resolves a `$ref` string to its schema and the name it gives that
    /// schema (the last pointer segment, e.g. `ScorerTypes`).
    fn resolve_ref<'s>(&'s self, reference: &'s str) -> Result<(&'s Value, &'s str), SchemaError> {
        resolve_local(&self.root, reference).map(|schema| (schema, ref_name(reference)))
    }

    /// Follows a chain of `$ref`s from `schema` to the schema it ends at, `hops`
    /// having been taken already: `None` when a reference does not resolve or
    /// the chain would take more than [`MAX_HOPS`] in all.
    fn follow_refs<'s>(&'s self, schema: &'s Value, hops: usize) -> Option<&'s Value> {
        let mut current = schema;
        let mut hops = hops;
        while let Some(reference) = current.get("$ref").and_then(Value::as_str) {
            if hops >= MAX_HOPS {
                return None;
            }
            current = self.resolve_ref(reference).ok()?.0;
            hops += 1;
        }
        Some(current)
    }

    /// The compiled regex for a pattern: cached when it occurs in the
    /// document, compiled on the spot otherwise (inline schemas).
    fn regex(&self, pattern: &str) -> Cow<'_, Result<Regex, SchemaError>> {
        match self.patterns.get(pattern) {
            Some(r) => Cow::Borrowed(r),
            None => Cow::Owned(compile(pattern)),
        }
    }
}

/// The closest candidate to a misspelt `field`, for "did you mean": a
/// case-insensitive match first, else the most similar candidate by
/// Jaro-Winkler similarity if it is similar enough (0.8 or more); ties go to
/// the earlier candidate.
pub fn suggest(field: &str, candidates: &[String]) -> Option<String> {
    if let Some(c) = candidates.iter().find(|c| c.eq_ignore_ascii_case(field)) {
        return Some(c.clone());
    }
    let mut best: Option<(f64, &String)> = None;
    for c in candidates {
        let score = strsim::jaro_winkler(field, c);
        if score >= 0.8 && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, c));
        }
    }
    best.map(|(_, c)| c.clone())
}

/// The last segment of a reference, as written.
fn ref_name(reference: &str) -> &str {
    reference.rsplit('/').next().unwrap_or(reference)
}

/// A schema name from the last segment of a reference, unescaped
/// (`%XX`, `~1`, `~0`).
fn display_name(raw: &str) -> String {
    percent_decode(raw).replace("~1", "/").replace("~0", "~")
}

/// The schema a local reference (`#`, `#/components/schemas/X`, with `%XX`
/// escapes) names in `root`; other references are not supported.
fn resolve_local<'a>(root: &'a Value, reference: &str) -> Result<&'a Value, SchemaError> {
    let fragment = match reference.strip_prefix('#') {
        Some(fragment) if fragment.is_empty() || fragment.starts_with('/') => fragment,
        _ => {
            return Err(SchemaError::UnsupportedRef {
                reference: reference.to_owned(),
            });
        }
    };
    let decoded = percent_decode(fragment);
    let found = if decoded.is_empty() {
        Some(root)
    } else {
        root.pointer(&decoded)
    };
    found.ok_or_else(|| SchemaError::UnresolvedRef {
        reference: reference.to_owned(),
    })
}

/// Decodes `%XX` escapes of a URI fragment; malformed escapes stay as written.
fn percent_decode(s: &str) -> Cow<'_, str> {
    if !s.contains('%') {
        return Cow::Borrowed(s);
    }
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes.get(i), bytes.get(i + 1), bytes.get(i + 2)) {
            (Some(b'%'), Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                let v = hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0);
                out.push(u8::try_from(v).unwrap_or(b'?'));
                i += 3;
            }
            (Some(&b), _, _) => {
                out.push(b);
                i += 1;
            }
            (None, _, _) => break,
        }
    }
    match String::from_utf8(out) {
        Ok(s) => Cow::Owned(s),
        Err(_) => Cow::Borrowed(s),
    }
}

/// A pattern compiled, or why it cannot be ([`SchemaError::InvalidPattern`],
/// with the compiler's complaint as its reason: the error is reported as
/// data, serialized with the violations).
fn compile(pattern: &str) -> Result<Regex, SchemaError> {
    Regex::new(pattern).map_err(|e| SchemaError::InvalidPattern {
        pattern: pattern.to_owned(),
        reason: e.to_string(),
    })
}

/// Keys whose values are data, not schemas: the indexer does not look inside.
const DATA_KEYWORDS: [&str; 6] = [
    "default",
    "examples",
    "example",
    "const",
    "enum",
    "x-examples",
];

/// One pass over the document at construction: compiles every pattern,
/// checks every reference.
#[derive(Default)]
struct Index {
    patterns: HashMap<String, Result<Regex, SchemaError>>,
    problems: Vec<SchemaError>,
}

impl Index {
    fn walk(&mut self, root: &Value, v: &Value, depth: usize) {
        if depth > 4 * MAX_DEPTH {
            return;
        }
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    match (k.as_str(), child) {
                        ("pattern", Value::String(p)) => self.add_pattern(p),
                        ("patternProperties", Value::Object(pp)) => {
                            for p in pp.keys() {
                                self.add_pattern(p);
                            }
                        }
                        ("$ref", Value::String(r)) => self.check_ref(root, r),
                        _ => {}
                    }
                    if !DATA_KEYWORDS.contains(&k.as_str()) {
                        self.walk(root, child, depth + 1);
                    }
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.walk(root, item, depth + 1);
                }
            }
            _ => {}
        }
    }

    fn add_pattern(&mut self, p: &str) {
        if self.patterns.contains_key(p) {
            return;
        }
        let compiled = compile(p);
        if let Err(problem) = &compiled {
            self.problems.push(problem.clone());
        }
        self.patterns.insert(p.to_owned(), compiled);
    }

    fn check_ref(&mut self, root: &Value, r: &str) {
        let problem = resolve_local(root, r).err();
        if let Some(p) = problem
            && !self.problems.contains(&p)
        {
            self.problems.push(p);
        }
    }
}
